/* ftstack check and ftstack cleanup. Both return the exit status. */
#include <stdio.h>
#include <string.h>
#include "collector/collector.h"
#include "tracefs/tracefs.h"

int ft_cmd_check(const struct ft_options *o)
{
	(void)o;
	char root[256] = "";
	struct tracefs_check_item items[32];
	if (tracefs_find_root(root, sizeof(root)) < 0)
		root[0] = '\0';
	int n = tracefs_check(root[0] ? root : NULL, "/proc", items, 32);
	int width = 0;
	for (int i = 0; i < n; i++)
		if ((int)strlen(items[i].what) > width)
			width = (int)strlen(items[i].what);
	for (int i = 0; i < n; i++)
		printf("%-*s  %-3s  %s\n", width, items[i].what, items[i].ok ? "yes" : "no",
		       items[i].detail);
	return 0;
}

static void report_removed(void *ctx, const char *what)
{
	(void)ctx;
	printf("removed %s\n", what);
}

int ft_cmd_cleanup(const struct ft_options *o)
{
	(void)o;
	char root[256];
	int ret = tracefs_find_root(root, sizeof(root));
	if (ret < 0) {
		fprintf(stderr, "ftstack: no tracefs: %s\n", strerror(-ret));
		return 1;
	}
	ret = tracefs_cleanup_stale(root, "/proc", report_removed, NULL);
	if (ret < 0) {
		fprintf(stderr, "ftstack: cleanup failed: %s (are you root?)\n", strerror(-ret));
		return 1;
	}
	printf("%d object%s left by dead ftstack runs removed\n", ret, ret == 1 ? "" : "s");
	return 0;
}
