/* tracefs: events, formats, suggestions, the undo log, the objects made
 * through it (with libtracefs, pointed at the tree) and cleanup of dead
 * runs, all on a fixture tree (tests/unit/fixtures/tracefs, copied to a temp
 * dir where written) and a fake /proc; then, as root only, `ftstack check`
 * on the live kernel. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <tracefs.h> /* libtracefs: instance handles, pointing it at a fixture */
#include "tracefs/tracefs.h"
#include "tests/unit/check.h"

#define FIXTURE "tests/unit/fixtures/tracefs"

static char tmp[128];

/* Contents of DIR/REL, "" when unreadable (static buffer). */
static const char *slurp(const char *dir, const char *rel)
{
	static char buf[8192];
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

static void put(const char *dir, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void mkdirs(const char *dir, const char *rel)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", dir, rel);
	if (system(cmd) != 0)
		printf("# mkdir -p %s failed\n", rel);
}

static bool is_dir(const char *dir, const char *rel)
{
	char path[512];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A fresh copy of the fixture tree in a temp dir, in tmp. */
static void fresh_copy(void)
{
	char cmd[400];
	if (tmp[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			printf("# rm failed\n");
	}
	snprintf(tmp, sizeof(tmp), "/tmp/ftstack-tracefs-test.XXXXXX");
	if (!mkdtemp(tmp)) {
		printf("# mkdtemp failed\n");
		exit(1);
	}
	snprintf(cmd, sizeof(cmd), "cp -r %s/. '%s'", FIXTURE, tmp);
	if (system(cmd) != 0)
		printf("# cp failed\n");
}

static void test_match(void)
{
	struct tfs_event *ev = NULL;
	int n = tfs_events_match(FIXTURE, "*", "*", false, &ev);
	static const char *const all[] = {
		"ftrace:kernel_stack", "ftrace:user_stack", "kmem:kfree", "kmem:kmalloc",
		"sched:sched_process_exec", "sched:sched_switch", "sched:sched_wakeup",
		"sched:sched_waking", "syscalls:sys_enter_openat", "syscalls:sys_exit_openat",
	};
	CHECK_EQ_U64(n, 10, "all events (kmem:broken has no numeric id)");
	for (int i = 0; i < n && i < 10; i++) {
		char full[200];
		snprintf(full, sizeof(full), "%s:%s", ev[i].system, ev[i].name);
		CHECK_STR(full, all[i], "sorted by system then name");
	}
	CHECK_EQ_U64(n >= 6 ? ev[5].id : 0, 316, "sched_switch id");
	free(ev);

	n = tfs_events_match(FIXTURE, "sched", "sched_wak*", false, &ev);
	CHECK(n == 2 && strcmp(ev[0].name, "sched_wakeup") == 0 &&
	      strcmp(ev[1].name, "sched_waking") == 0 && ev[1].id == 319, "glob sched_wak*: %d", n);
	free(ev);
	n = tfs_events_match(FIXTURE, "s*", "*openat", false, &ev);
	CHECK(n == 2 && strcmp(ev[0].name, "sys_enter_openat") == 0, "glob s*:*openat: %d", n);
	free(ev);
	n = tfs_events_match(FIXTURE, "sched", "sched_wak(eup|ing)", true, &ev);
	CHECK_EQ_U64(n, 2, "regex alternation");
	free(ev);
	n = tfs_events_match(FIXTURE, "sched", "wak", true, &ev);
	CHECK_EQ_U64(n, 0, "regexes are anchored");
	CHECK(ev == NULL, "no array for no match");
	free(ev);
	n = tfs_events_match(FIXTURE, "k.*|f.*", "k.*", true, &ev);
	CHECK(n == 3 && strcmp(ev[0].name, "kernel_stack") == 0 && strcmp(ev[1].name, "kfree") == 0 &&
	      strcmp(ev[2].name, "kmalloc") == 0, "regex on both parts: %d", n);
	free(ev);
	CHECK_EQ_U64(tfs_events_match(FIXTURE, "(", "*", true, &ev), -EINVAL, "bad regex");
	CHECK_EQ_U64(tfs_events_match(FIXTURE, "*", "a[", true, &ev), -EINVAL, "bad regex 2");
	CHECK_EQ_U64(tfs_events_match("/nonexistent", "*", "*", false, &ev), -ENOENT,
		     "missing root");

	uint32_t id = 0;
	CHECK(tfs_event_id(FIXTURE, "kmem", "kmalloc", &id) == 0 && id == 480, "id %u", id);
	CHECK_EQ_U64(tfs_event_id(FIXTURE, "kmem", "broken", &id), -EINVAL, "bogus id");
	CHECK_EQ_U64(tfs_event_id(FIXTURE, "kmem", "nosuch", &id), -ENOENT, "missing id");
}

static void test_suggest(void)
{
	char buf[256];
	int n = tfs_events_suggest(FIXTURE, "sched", "sched_swtch", 3, buf, sizeof(buf));
	CHECK_EQ_U64(n, 3, "three suggestions");
	CHECK_STR(buf, "sched:sched_switch, sched:sched_wakeup, sched:sched_waking", "nearest first");
	n = tfs_events_suggest(FIXTURE, "mm", "kmalloc", 1, buf, sizeof(buf));
	CHECK(n == 1 && strcmp(buf, "kmem:kmalloc") == 0, "wrong system: %s", buf);
	n = tfs_events_suggest(FIXTURE, "sched", "sched_wak", 2, buf, sizeof(buf));
	CHECK(n == 2 && strcmp(buf, "sched:sched_wakeup, sched:sched_waking") == 0,
	      "ties alphabetical: %s", buf);
	n = tfs_events_suggest(FIXTURE, "kmem", "kfre", 3, buf, sizeof(buf));
	CHECK(n == 1 && strcmp(buf, "kmem:kfree") == 0, "only plausible names: %s", buf);
	n = tfs_events_suggest(FIXTURE, "sched", "zzzzzzzzzzzz", 3, buf, sizeof(buf));
	CHECK(n == 0 && buf[0] == '\0', "nothing plausible: %d", n);
	n = tfs_events_suggest(FIXTURE, "sched", "sched_swtch", 3, buf, 30);
	CHECK(n == 1 && strcmp(buf, "sched:sched_switch") == 0, "whole names only: %s", buf);
}

static void test_fields(void)
{
	struct tfs_field *f = NULL;
	int n = tfs_event_fields(FIXTURE, "kmem", "kmalloc", &f);
	CHECK_EQ_U64(n, 12, "kmalloc fields");
	const struct tfs_field *x = tfs_field_find(f, n, "call_site");
	CHECK(x && x->offset == 8 && x->size == 8 && !x->is_signed, "call_site 8/8 unsigned");
	x = tfs_field_find(f, n, "common_pid");
	CHECK(x && x->offset == 4 && x->size == 4 && x->is_signed, "common_pid signed");
	x = tfs_field_find(f, n, "name");
	CHECK(x && x->offset == 52 && x->size == 4, "__data_loc char[] name");
	x = tfs_field_find(f, n, "ips");
	CHECK(x && x->offset == 56 && x->size == 64, "array u64 ips[8]");
	x = tfs_field_find(f, n, "ptr");
	CHECK(x && x->offset == 16, "const void * ptr");
	CHECK(tfs_field_find(f, n, "char") == NULL, "no type names as fields");
	CHECK(tfs_field_find(f, n, "nosuch") == NULL, "missing field");
	free(f);
	n = tfs_event_fields(FIXTURE, "sched", "sched_switch", &f);
	x = tfs_field_find(f, n, "prev_comm");
	CHECK(x && x->offset == 8 && x->size == 16, "char prev_comm[16]");
	x = tfs_field_find(f, n, "next_pid");
	CHECK(x && x->offset == 56 && x->is_signed, "next_pid");
	free(f);
	CHECK_EQ_U64(tfs_event_fields(FIXTURE, "kmem", "kfree", &f), -ENOENT, "no format");
}

static char trail[2048];

static void record_debug(const char *what, const char *path, const char *value)
{
	const char *rel = strncmp(path, tmp, strlen(tmp)) == 0 ? path + strlen(tmp) + 1 : path;
	size_t l = strlen(trail);
	snprintf(trail + l, sizeof(trail) - l, "%s %s%s%s;", what, rel, value ? " " : "",
		 value ? value : "");
}

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
	CHECK_EQ_U64(tfs_dynevent_add(&log, "kprobe_events", "ftstack_1", "x",
				      "p:ftstack_1/x __kmalloc", err, sizeof(err)), 0, "kprobe");
	/* libtracefs writes "PROBE ADDR FORMAT\n", FORMAT empty when there is none */
	CHECK_STR(slurp(tmp, kfile), "p:ftstack_1/x __kmalloc \n", "kprobe defined");
	put(tmp, ufile, "");
	CHECK_EQ_U64(tfs_dynevent_add(&log, "uprobe_events", "ftstack_1", "u",
				      "p:ftstack_1/u /bin/true:0x1010 ra=+0($stack)", err,
				      sizeof(err)), 0, "uprobe with an argument");
	CHECK_STR(slurp(tmp, ufile), "p:ftstack_1/u /bin/true:0x0000000000001010 ra=+0($stack)\n",
		  "uprobe defined");
	/* a USDT semaphore's reference counter: the line as it is, read back */
	static const char ref[] = "p:ftstack_1/r /bin/true:0x1010(0x3040)";
	put(tmp, ufile, dyn ? "p:ftstack_1/r /bin/true:0x0000000000001010(0x3040)\n" : "");
	CHECK_EQ_U64(tfs_dynevent_add(&log, "uprobe_events", "ftstack_1", "r", ref, err,
				      sizeof(err)), 0, "uprobe with a reference counter");
	CHECK_STR(slurp(tmp, "uprobe_events"), "p:ftstack_1/r /bin/true:0x1010(0x3040)\n",
		  "written as it is, to uprobe_events");
	CHECK_EQ_U64(tfs_dynevent_add(&log, "uprobe_events", "ftstack_1", "v",
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

/* trace_pipe_raw read a sub-buffer at a time through libtracefs's tracefs_cpu
 * (a plain file here: its pages, then end of file) */
static void test_cpu(void)
{
	char cmd[600];
	fresh_copy();
	mkdirs(tmp, "instances/ftstack_1/per_cpu/cpu1");
	snprintf(cmd, sizeof(cmd), "cp tests/unit/fixtures/ftrace_raw/cpu1.raw "
		 "'%s/instances/ftstack_1/per_cpu/cpu1/trace_pipe_raw'", tmp);
	if (system(cmd) != 0)
		printf("# cp failed\n");
	tracefs_set_tracing_dir(tmp);
	struct tracefs_instance *inst = tracefs_instance_alloc(tmp, "ftstack_1");
	struct tracefs_cpu *c = NULL;
	static uint8_t page[4096];
	int fd = tfs_cpu_open(inst, 1, sizeof(page), &c);
	CHECK(fd >= 0 && c, "opened: %d", fd);
	uint64_t total = 0;
	int pages = 0;
	for (ssize_t n; c && (n = tfs_cpu_read(c, page)) > 0 && pages < 100; pages++)
		total += (uint64_t)n;
	struct stat st;
	snprintf(cmd, sizeof(cmd), "%s/instances/ftstack_1/per_cpu/cpu1/trace_pipe_raw", tmp);
	CHECK(stat(cmd, &st) == 0 && total == (uint64_t)st.st_size && pages == (int)(st.st_size / 4096),
	      "read whole sub-buffers to the end: %d pages, %" PRIu64 " bytes", pages, total);
	if (c)
		tfs_cpu_close(c);
	struct tracefs_cpu *none = NULL;
	CHECK_EQ_U64(tfs_cpu_open(inst, 7, sizeof(page), &none), (uint64_t)-ENOENT, "no such CPU");
	CHECK(none == NULL, "no reader for it");
	tracefs_instance_free(inst);
}

static void test_live(void)
{
	if (geteuid() != 0) {
		SKIP("not root", "live tracefs test");
		return;
	}
	char root[256], path[400];
	tracefs_set_tracing_dir(NULL); /* the fixture trees' turn is over */
	CHECK_EQ_U64(tfs_find_root(root, sizeof(root)), 0, "live tracefs found");
	struct tfs_check_item items[32];
	int n = tfs_check(root, "/proc", items, 32);
	CHECK_EQ_U64(n, 16, "check items");
	CHECK(n > 1 && strcmp(items[0].what, "tracefs") == 0 && items[0].ok, "tracefs: %s",
	      items[0].detail);
	CHECK(n > 1 && strcmp(items[1].what, "tracepoints") == 0 && items[1].ok, "tracepoints: %s",
	      items[1].detail);
	for (int i = 0; i < n; i++)
		printf("# %-28s %-3s %s\n", items[i].what, items[i].ok ? "yes" : "no", items[i].detail);
	CHECK_EQ_U64(tfs_check(root, "/proc", items, 3), 3, "max respected");
	snprintf(path, sizeof(path), "%s/instances/ftstack_%d", root, (int)getpid());
	CHECK(access(path, F_OK) != 0, "no instance left behind");
	struct tfs_field *f = NULL;
	int nf = tfs_event_fields(root, "sched", "sched_switch", &f);
	CHECK(tfs_field_find(f, nf, "prev_pid") != NULL, "live sched_switch has prev_pid");
	free(f);
}

/* The function tracer's lists, as 6.1 prints them: one name per address
 * (__do_sys_getppid, not its alias __x64_sys_getppid), module suffixes. */
static void test_functions(void)
{
	const char *avail = "vfs_read\n__do_sys_getppid\next4_iget [ext4]\nvfs_readv\n";
	CHECK(tfs_functions_listed(avail, "vfs_read"), "first line");
	CHECK(tfs_functions_listed(avail, "vfs_readv"), "last line");
	CHECK(tfs_functions_listed(avail, "ext4_iget"), "a module's function");
	CHECK(tfs_functions_listed(avail, "__do_sys_getppid"), "the listed alias");
	CHECK(!tfs_functions_listed(avail, "__x64_sys_getppid"), "the other alias is not listed");
	CHECK(!tfs_functions_listed(avail, "sys_getppid"), "a name's tail is not the name");
	CHECK(!tfs_functions_listed(avail, "vfs_rea"), "a name's head is not the name");
	CHECK(!tfs_functions_listed(avail, ""), "empty name");
	CHECK(!tfs_functions_listed(NULL, "vfs_read"), "no list");
	CHECK_EQ_U64(tfs_functions_count("#### all functions enabled ####\n"), (uint64_t)-1,
		     "an empty filter traces every function");
	CHECK_EQ_U64(tfs_functions_count("__do_sys_getppid\n__do_sys_getpid\n"), 2, "two functions");
	CHECK_EQ_U64(tfs_functions_count("vfs_read"), 1, "no newline at the end");
	CHECK_EQ_U64(tfs_functions_count(""), 0, "nothing read");
}

int main(void)
{
	test_functions();
	test_match();
	test_suggest();
	test_fields();
	test_log();
	test_objects();
	test_cleanup();
	test_cpu();
	test_live();
	if (tmp[0]) {
		char cmd[200];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			printf("# cleanup of %s failed\n", tmp);
	}
	CHECK_DONE();
}
