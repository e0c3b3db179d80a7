/* tracefs on the live kernel, as root only (tracefs/root.c, check.c):
 * the tree found, `ftstack check`'s items, no instance left behind, a
 * live event's format. Not root: one TAP skip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tracefs/tracefs.h"
#include "tests/unit/check.h"

static void test_live(void)
{
	if (geteuid() != 0) {
		SKIP("not root", "live tracefs test");
		return;
	}
	char root[256], path[400];
	CHECK_EQ_U64(tfs_find_root(root, sizeof(root)), 0, "live tracefs found");
	struct tfs_check_item items[32];
	int n = tfs_check(root, items, 32);
	CHECK_EQ_U64(n, 10, "check items (tracefs's; the host's are the check command's)");
	CHECK(n > 1 && strcmp(items[0].what, "tracefs") == 0 && items[0].ok, "tracefs: %s",
	      items[0].detail);
	CHECK(n > 1 && strcmp(items[1].what, "tracepoints") == 0 && items[1].ok, "tracepoints: %s",
	      items[1].detail);
	for (int i = 0; i < n; i++)
		printf("# %-28s %-3s %s\n", items[i].what, items[i].ok ? "yes" : "no", items[i].detail);
	CHECK_EQ_U64(tfs_check(root, items, 3), 3, "max respected");
	snprintf(path, sizeof(path), "%s/instances/ftstack_%d", root, (int)getpid());
	CHECK(access(path, F_OK) != 0, "no instance left behind");
	struct tfs_field *f = NULL;
	int nf = tfs_event_fields(root, "sched", "sched_switch", &f);
	CHECK(tfs_field_find(f, nf, "prev_pid") != NULL, "live sched_switch has prev_pid");
	free(f);
}

int main(void)
{
	test_live();
	CHECK_DONE();
}
