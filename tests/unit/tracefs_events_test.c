/* tracefs's queries of a tree it only reads (tracefs/events.c, fields.c,
 * functions.c): events matched, suggested and their ids, the fields of
 * their formats, all on the fixture tree in place; and the function
 * tracer's lists. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tracefs/tracefs.h"
#include "tests/unit/check.h"
#include "tests/unit/tracefs_tree.h"

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
	CHECK_DONE();
}
