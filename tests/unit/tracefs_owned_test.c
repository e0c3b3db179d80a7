/* tracefs's objects owned by a run (tracefs/owned.c): their names, and the
 * cleanup of dead runs' instances, probes and triggers, on a copy of the
 * fixture tree and a fake /proc. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tracefs.h> /* libtracefs: which probe file the mounted tracefs has */
#include "tracefs/tracefs.h"
#include "tests/unit/check.h"
#include "tests/unit/tracefs_tree.h"

static void test_owned_name(void)
{
	char name[32];
	tfs_owned_name(1234, name, sizeof(name));
	CHECK_STR(name, "ftstack_1234", "owned name");
}

static char reports[1024];

static void on_removed(void *ctx, const char *what)
{
	(*(int *)ctx)++;
	size_t l = strlen(reports);
	snprintf(reports + l, sizeof(reports) - l, "%s;", what);
}

static void test_cleanup(void)
{
	char proc[200];
	int calls = 0;
	fresh_copy();
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	mkdirs(proc, "4242");
	mkdirs(proc, "5151");
	put(proc, "4242/comm", "ftstack\n");
	put(proc, "5151/comm", "bash\n");
	static const char *const insts[] = { "ftstack_999999", "ftstack_4242", "ftstack_5151",
		"ftstack_x", "myftstack_1", "ftstack_0123", "ftstack_12a" };
	for (int i = 0; i < 7; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "instances/%s", insts[i]);
		mkdirs(tmp, rel);
	}
	/* as the kernel lists them: dynamic_events has both files' probes
	 * (libtracefs reads the one it defines probes through) */
	static const char kprobes[] = "p:ftstack_999999/ev1 __kmalloc\nr:ftstack_4242/ev2 kfree\n"
		"p:myftstack_1/x foo\np:kprobes/mine bar\nr16:ftstack_x/y baz\n";
	static const char uprobes[] = "p:ftstack_999999/u1 /bin/true:0x0000000000001010\n";
	put(tmp, "kprobe_events", kprobes);
	put(tmp, "uprobe_events", uprobes);
	char all[512];
	snprintf(all, sizeof(all), "%s%s", kprobes, uprobes);
	put(tmp, "dynamic_events", all);
	mkdirs(tmp, "events/ftstack_999999/ev1");
	mkdirs(tmp, "events/ftstack_999999/u1");
	mkdirs(tmp, "events/ftstack_5151/lone");
	mkdirs(tmp, "events/ftstack_4242/ev2");
	put(tmp, "events/ftstack_999999/ev1/enable", "1\n");
	put(tmp, "events/ftstack_999999/ev1/trigger", "stacktrace:unlimited\n"
	    "hist:keys=common_pid:vals=hitcount:sort=hitcount:size=2048 [active]\n");
	put(tmp, "events/ftstack_999999/u1/enable", "0\n");
	put(tmp, "events/ftstack_4242/ev2/enable", "1\n");
	put(tmp, "events/sched/sched_switch/trigger", "stacktrace:unlimited\n");

	bool dyn = tracefs_file_exists(NULL, "dynamic_events");
	reports[0] = trail[0] = '\0';
	tfs_set_debug(record_debug);
	int n = tfs_cleanup_stale(tmp, proc, on_removed, &calls);
	tfs_set_debug(NULL);
	CHECK_EQ_U64(n, 5, "removed");
	CHECK_EQ_U64(calls, 5, "reported");
	CHECK(strstr(reports, "instance ftstack_999999;") && strstr(reports, "instance ftstack_5151;"),
	      "instances reported: %s", reports);
	CHECK(strstr(reports, dyn ? "dynamic_events ftstack_999999/ev1;" :
		     "kprobe_events ftstack_999999/ev1;") &&
	      strstr(reports, dyn ? "dynamic_events ftstack_999999/u1;" :
		     "uprobe_events ftstack_999999/u1;") &&
	      strstr(reports, "dynamic_events ftstack_5151/lone;"), "events reported: %s", reports);
	CHECK(!is_dir(tmp, "instances/ftstack_999999"), "no such pid: removed");
	CHECK(!is_dir(tmp, "instances/ftstack_5151"), "pid is not ftstack: removed");
	CHECK(is_dir(tmp, "instances/ftstack_4242"), "live ftstack kept");
	for (int i = 3; i < 7; i++)
		CHECK(is_dir(tmp, "instances") && (strcat(strcpy(proc, "instances/"), insts[i]),
		      is_dir(tmp, proc)), "%s untouched", insts[i]);
	CHECK(strstr(trail, "remove ftstack_999999/ev1;") && strstr(trail, "remove ftstack_999999/u1;") &&
	      strstr(trail, "append dynamic_events -:ftstack_5151/lone\n;") &&
	      !strstr(trail, "ftstack_4242/") && !strstr(trail, "myftstack") &&
	      !strstr(trail, "kprobes/") && !strstr(trail, "ftstack_x"),
	      "only stale groups removed: %s", trail);
	CHECK_STR(slurp(tmp, "events/ftstack_999999/ev1/enable"), "0", "disabled first");
	CHECK_STR(slurp(tmp, "events/ftstack_999999/u1/enable"), "0\n", "disabled one left alone");
	CHECK(strstr(trail, "append events/ftstack_999999/ev1/trigger !stacktrace:unlimited;"
		     "append events/ftstack_999999/ev1/trigger "
		     "!hist:keys=common_pid:vals=hitcount:sort=hitcount:size=2048;") != NULL,
	      "triggers removed without their [active]");
	CHECK_STR(slurp(tmp, "events/ftstack_4242/ev2/enable"), "1\n", "live run's event kept");
	CHECK_STR(slurp(tmp, "events/sched/sched_switch/trigger"), "stacktrace:unlimited\n",
		  "the user's trigger untouched");

	/* a proc without the owner's pid: its objects are stale */
	fresh_copy();
	mkdirs(tmp, "instances/ftstack_4242");
	CHECK_EQ_U64(tfs_cleanup_stale(tmp, "/nonexistent", on_removed, &calls), 1,
		     "a missing proc means dead owners");
}

int main(void)
{
	test_owned_name();
	test_cleanup();
	tree_remove();
	CHECK_DONE();
}
