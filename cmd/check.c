/* ftstack check and ftstack cleanup. Both return the exit status. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cmd/cmd.h"
#include "collector/session.h"
#include "perfev/perfev.h"
#include "tracefs/tracefs.h"

/* What a sample's user stack costs here, each way as the runs take it: fp
 * (the kernel's frame-pointer walk plus a FT_FIX_SIZE_DEFAULT-byte copy)
 * against copy (a FT_COPY_SIZE_DEFAULT-byte copy alone): where the kernel's
 * reads of user memory are slow (some VMs) copy is much the cheaper.
 * perfev_ustack_cost times them into C (the same measurement chooses the
 * user-stack method). Returns 0, or -errno when it can't. */
static int check_user_stacks(const char *root, struct perfev_ustack_cost *cost,
			     struct tfs_check_item *it)
{
	uint32_t tp;
	int ret = tfs_event_id(root, "raw_syscalls", "sys_enter", &tp);
	if (ret == 0)
		ret = perfev_ustack_cost((int)tp, FT_FIX_SIZE_DEFAULT, FT_COPY_SIZE_DEFAULT, cost);
	if (ret < 0)
		return ret;
	const struct perfev_ustack_cost c = *cost;
	char fp[32], copy[32];
	it->what = "user stacks";
	it->ok = true;
	snprintf(it->detail, sizeof(it->detail),
		 "the kernel's walk + a %d-byte copy (fp) %s%s, a %d-byte copy (copy) %s: %s",
		 FT_FIX_SIZE_DEFAULT, perfev_cost_text(fp, sizeof(fp), c.fp_measured, c.fp_ns),
		 c.fp_measured ? " a sample" : "", FT_COPY_SIZE_DEFAULT,
		 perfev_cost_text(copy, sizeof(copy), c.copy_measured, c.copy_ns),
		 c.verdict == PERFEV_USTACK_COPY ? "copy is the cheaper here" :
		 c.verdict == PERFEV_USTACK_FP ? "fp is the cheaper here" :
		 "they differ too little to measure here");
	return 0;
}

int ft_cmd_check(const struct ft_options *o)
{
	(void)o;
	char root[256] = "";
	struct tfs_check_item items[32];
	if (tfs_find_root(root, sizeof(root)) < 0)
		root[0] = '\0';
	int n = tfs_check(root[0] ? root : NULL, "/proc", items, 30);
	struct perfev_ustack_cost cost;
	if (n >= 0 && root[0] && check_user_stacks(root, &cost, &items[n]) == 0 &&
	    ft_ustack_check(&cost, &items[++n]) == 0)
		n++;
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
	fprintf(ctx, "removed %s\n", what);
}

int ft_cleanup_run(const char *tracefs, const char *proc_root, FILE *out)
{
	int ret = tfs_cleanup_stale(tracefs, proc_root, report_removed, out);
	if (ret < 0) {
		ft_error("cleanup failed: %s (are you root?)", strerror(-ret));
		return 1;
	}
	fprintf(out, "%d object%s left by dead ftstack runs removed\n", ret, ret == 1 ? "" : "s");
	return 0;
}

int ft_cmd_cleanup(const struct ft_options *o)
{
	(void)o;
	char root[256];
	int ret = tfs_find_root(root, sizeof(root));
	if (ret < 0) {
		ft_error("no tracefs: %s", strerror(-ret));
		return 1;
	}
	return ft_cleanup_run(root, "/proc", stdout);
}
