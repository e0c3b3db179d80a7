/* tracefs's undo log (tracefs/log.c) and the objects made through it
 * (tracefs/objects.c: instances, probes, enables, filters, triggers, with
 * libtracefs pointed at the tree), each undone newest first, on copies of
 * the fixture tree. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h> /* libtracefs: instance handles, pointing it at a fixture */
#include "tracefs/tracefs.h"
#include "tests/unit/check.h"
#include "tests/unit/tracefs_tree.h"

/* Plays the kernel: a failing write leaves an error_log entry. */
static void failing_debug(const char *what, const char *path, const char *value)
{
	(void)what, (void)path, (void)value;
	put(tmp, "error_log", "[   10.000001] trace_kprobe: error: Old\n  Command: p:a b\n"
	    "[   12.345678] trace_kprobe: error: Invalid argument\n"
	    "  Command: p:ftstack_1/x nosuchfn\n                      ^\n");
}

static void test_log(void)
{
	struct tfs_log log;
	struct tracefs_instance *inst = NULL, *again = NULL;
	char err[200];
	fresh_copy();
	tfs_log_init(&log, tmp);
	tfs_set_debug(record_debug);
	trail[0] = '\0';
	put(tmp, "a", "orig\n");
	put(tmp, "b", "orig\n");
	put(tmp, "c", "7 (expanded: 1410)\n");
	CHECK_EQ_U64(tfs_log_write(&log, NULL, "a", "x", false, TRACEFS_UNDO_WRITE, "0", err,
				   sizeof(err)), 0, "write");
	CHECK_EQ_U64(tfs_log_write(&log, NULL, "b", "y", true, TRACEFS_UNDO_APPEND, "-y", err,
				   sizeof(err)), 0, "append");
	CHECK_EQ_U64(tfs_instance_create(&log, "i1", &inst), 0, "instance");
	CHECK_EQ_U64(tfs_log_write(&log, NULL, "nosuch/file", "z", false, TRACEFS_UNDO_WRITE, "0",
				   err, sizeof(err)), -ENOENT, "failed write");
	CHECK(err[0] == '\0', "no error_log entry: \"%s\"", err);
	CHECK_EQ_U64(log.n, 3, "failures are not recorded");
	CHECK_EQ_U64(tfs_instance_create(&log, "i1", &again), -EEXIST, "instance twice");
	CHECK(again == NULL, "an instance not made is not handed out");
	CHECK_EQ_U64(log.n, 3, "an instance not made is not removed");
	CHECK_STR(slurp(tmp, "a"), "x", "truncated");
	/* libtracefs appends as tracefs wants it (no O_TRUNC, no O_APPEND: the
	 * kernel adds what is written), so a plain file shows the write's bytes
	 * at its start; what was asked is in the trail */
	CHECK_STR(trail, "write a x;append b y;mkdir instances/i1;write nosuch/file z;"
		  "mkdir instances/i1;", "writes asked");
	CHECK_STR(slurp(tmp, "b"), "yrig\n", "appended without truncating");
	CHECK(is_dir(tmp, "instances/i1"), "made");
	CHECK_EQ_U64(tfs_log_write(&log, NULL, "c", "64", false, TRACEFS_UNDO_WRITE, NULL, err,
				   sizeof(err)), 0, "write, its previous setting kept");
	CHECK_EQ_U64(tfs_log_write(&log, NULL, "nosuch", "1", false, TRACEFS_UNDO_WRITE, NULL,
				   err, sizeof(err)), -ENOENT, "no previous setting: not written");

	tfs_set_debug(failing_debug);
	CHECK_EQ_U64(tfs_log_write(&log, NULL, "instances", "p:ftstack_1/x nosuchfn", true,
				   TRACEFS_UNDO_APPEND, "-:ftstack_1/x", err, sizeof(err)),
		     -EISDIR, "kernel refuses");
	CHECK_STR(err, "trace_kprobe: error: Invalid argument (Command: p:ftstack_1/x nosuchfn)",
		  "error_log's newest entry");
	CHECK_EQ_U64(tfs_log_write(&log, NULL, "instances", "p", true, TRACEFS_UNDO_APPEND, "-",
				   err, sizeof(err)), -EISDIR, "refused again");
	CHECK_STR(err, "", "an old entry is not this write's error");

	trail[0] = '\0';
	tfs_set_debug(record_debug);
	CHECK_EQ_U64(tfs_log_undo(&log), 0, "undo");
	CHECK_STR(trail, "write c 7;rmdir instances/i1;append b -y;write a 0;", "newest first");
	CHECK_STR(slurp(tmp, "a"), "0", "restored");
	CHECK_STR(slurp(tmp, "c"), "7", "previous setting restored");
	CHECK(!is_dir(tmp, "instances/i1"), "removed");
	CHECK_EQ_U64(log.n, 0, "emptied");
	CHECK_EQ_U64(tfs_log_undo(&log), 0, "undo twice is a no-op");

	/* one failing item does not stop the rest */
	tfs_log_write(&log, NULL, "a", "1", false, TRACEFS_UNDO_WRITE, "2", NULL, 0);
	tfs_log_write(&log, NULL, "b", "1", false, TRACEFS_UNDO_WRITE, "3", NULL, 0);
	remove(strcat(strcpy(err, tmp), "/b"));
	CHECK_EQ_U64(tfs_log_undo(&log), -ENOENT, "first error returned");
	CHECK_STR(slurp(tmp, "a"), "2", "older item still undone");
	tfs_set_debug(NULL);
	tfs_log_free(&log);
}

static void test_objects(void)
{
	struct tfs_log log;
	struct tracefs_instance *inst = NULL;
	char err[100];
	fresh_copy();
	tfs_log_init(&log, tmp);
	CHECK_EQ_U64(tfs_instance_create(&log, "ftstack_1", &inst), 0, "instance");
	CHECK(inst && strcmp(tracefs_instance_get_name(inst), "ftstack_1") == 0, "its handle");
	CHECK(is_dir(tmp, "instances/ftstack_1"), "instance made");
	CHECK_EQ_U64(tfs_instance_create(&log, "a/b", &inst), -EINVAL, "no '/'");
	CHECK_EQ_U64(tfs_log_undo(&log), 0, "undo");
	CHECK(!is_dir(tmp, "instances/ftstack_1"), "instance removed");

	mkdirs(tmp, "instances/manual/events/sched/sched_switch");
	put(tmp, "instances/manual/events/sched/sched_switch/enable", "0\n");
	put(tmp, "instances/manual/events/sched/sched_switch/trigger", "");
	put(tmp, "instances/manual/events/sched/sched_switch/filter", "none\n");
	struct tracefs_instance *manual = tracefs_instance_alloc(tmp, "manual");
	/* libtracefs 1.6 defines probes through dynamic_events when the mounted
	 * tracefs has it (it looks there, not in the tree set), else through
	 * kprobe_events and uprobe_events */
	put(tmp, "dynamic_events", "");
	bool dyn = tracefs_file_exists(NULL, "dynamic_events");
	const char *kfile = dyn ? "dynamic_events" : "kprobe_events";
	const char *ufile = dyn ? "dynamic_events" : "uprobe_events";
	CHECK_EQ_U64(tfs_dynevent_create(&log, "kprobe_events", "ftstack_1", "x",
					 "p:ftstack_1/x __kmalloc", err, sizeof(err)), 0, "kprobe");
	/* libtracefs writes "PROBE ADDR FORMAT\n", FORMAT empty when there is none */
	CHECK_STR(slurp(tmp, kfile), "p:ftstack_1/x __kmalloc \n", "kprobe defined");
	put(tmp, ufile, "");
	CHECK_EQ_U64(tfs_dynevent_create(&log, "uprobe_events", "ftstack_1", "u",
					 "p:ftstack_1/u /bin/true:0x1010 ra=+0($stack)", err,
					 sizeof(err)), 0, "uprobe with an argument");
	CHECK_STR(slurp(tmp, ufile), "p:ftstack_1/u /bin/true:0x0000000000001010 ra=+0($stack)\n",
		  "uprobe defined");
	/* a USDT semaphore's reference counter: the line as it is, read back */
	static const char ref[] = "p:ftstack_1/r /bin/true:0x1010(0x3040)";
	put(tmp, ufile, dyn ? "p:ftstack_1/r /bin/true:0x0000000000001010(0x3040)\n" : "");
	CHECK_EQ_U64(tfs_dynevent_create(&log, "uprobe_events", "ftstack_1", "r", ref, err,
					 sizeof(err)), 0, "uprobe with a reference counter");
	CHECK_STR(slurp(tmp, "uprobe_events"), "p:ftstack_1/r /bin/true:0x1010(0x3040)\n",
		  "written as it is, to uprobe_events");
	CHECK_EQ_U64(tfs_dynevent_create(&log, "uprobe_events", "ftstack_1", "v",
					 "p:ftstack_1/v /bin/true", err, sizeof(err)), -EINVAL,
		     "uprobe without an offset");
	CHECK_EQ_U64(tfs_event_enable(&log, manual, "sched", "sched_switch"), 0,
		     "enable in an instance");
	CHECK_EQ_U64(tfs_event_filter(&log, manual, "sched", "sched_switch", "prev_pid == 1", err,
				      sizeof(err)), 0, "filter");
	CHECK_EQ_U64(tfs_trigger_add(&log, manual, "sched", "sched_switch",
				     "stacktrace if prev_pid == 1", err, sizeof(err)), 0, "trigger");
	CHECK_EQ_U64(tfs_event_enable(&log, NULL, "kmem", "kmalloc"), 0, "enable top level");
	CHECK_EQ_U64(tfs_event_enable(&log, NULL, "kmem", "nosuch"), -ENOENT, "missing event");
	CHECK_STR(slurp(tmp, "instances/manual/events/sched/sched_switch/enable"), "1", "enabled");
	CHECK_STR(slurp(tmp, "instances/manual/events/sched/sched_switch/filter"), "prev_pid == 1",
		  "filtered");
	CHECK_STR(slurp(tmp, "instances/manual/events/sched/sched_switch/trigger"),
		  "stacktrace if prev_pid == 1", "trigger added");
	CHECK_STR(slurp(tmp, "events/kmem/kmalloc/enable"), "1", "top level enabled");
	put(tmp, kfile, "");
	put(tmp, ufile, "");
	put(tmp, "instances/manual/events/sched/sched_switch/trigger", "");
	trail[0] = '\0';
	tfs_set_debug(record_debug);
	CHECK_EQ_U64(tfs_log_undo(&log), 0, "undo all");
	tfs_set_debug(NULL);
	CHECK_STR(trail, "write events/kmem/kmalloc/enable 0;"
		  "append instances/manual/events/sched/sched_switch/trigger !stacktrace;"
		  "write instances/manual/events/sched/sched_switch/filter 0;"
		  "write instances/manual/events/sched/sched_switch/enable 0;"
		  "remove ftstack_1/r;remove ftstack_1/u;remove ftstack_1/x;", "undone newest first");
	CHECK_STR(slurp(tmp, kfile), "-:ftstack_1/x", "kprobe removed");
	CHECK_STR(slurp(tmp, ufile), dyn ? "-:ftstack_1/x" : "-:ftstack_1/u", "uprobe removed");
	CHECK_STR(slurp(tmp, "instances/manual/events/sched/sched_switch/enable"), "0", "disabled");
	CHECK_STR(slurp(tmp, "instances/manual/events/sched/sched_switch/filter"), "0",
		  "filter cleared");
	CHECK_STR(slurp(tmp, "instances/manual/events/sched/sched_switch/trigger"), "!stacktrace",
		  "trigger removed by its command");
	CHECK_STR(slurp(tmp, "events/kmem/kmalloc/enable"), "0", "top level disabled");
	tracefs_instance_free(manual);
	tfs_log_free(&log);
}

int main(void)
{
	test_log();
	test_objects();
	tree_remove();
	CHECK_DONE();
}
