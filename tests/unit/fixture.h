/* Helpers several unit tests share: what the code under test wrote, a fake
 * /proc entry, this process's own mappings, and (after collector/session.h)
 * a collector session on fixtures. Static: each test includes it once. */
#ifndef FTSTACK_TEST_FIXTURE_H
#define FTSTACK_TEST_FIXTURE_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Text of a file written by the code under test (a static buffer);
 * EMPTY_AFTER truncates the file so the next call sees only what follows. */
static inline const char *test_slurp(FILE *f, bool empty_after)
{
	static char buf[8192];
	fflush(f);
	rewind(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	if (empty_after) {
		rewind(f);
		if (ftruncate(fileno(f), 0) < 0)
			buf[0] = '\0';
	}
	return buf;
}

/* Stderr going to a temporary file, between test_stderr_begin (false when
 * it cannot be redirected) and test_stderr_end, which puts it back and
 * returns what was written (test_slurp's buffer). */
struct test_stderr {
	FILE *f;
	int saved;
};

static inline bool test_stderr_begin(struct test_stderr *c)
{
	c->f = tmpfile();
	c->saved = dup(STDERR_FILENO);
	if (!c->f || c->saved < 0) {
		if (c->f)
			fclose(c->f);
		if (c->saved >= 0)
			close(c->saved);
		return false;
	}
	fflush(stderr);
	dup2(fileno(c->f), STDERR_FILENO);
	return true;
}

static inline const char *test_stderr_end(struct test_stderr *c)
{
	fflush(stderr);
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	const char *text = test_slurp(c->f, false);
	fclose(c->f);
	return text;
}

/* DIR/REL holding TEXT, its folders made as needed (a fake /proc or /sys
 * entry under a fixture root). */
static inline void test_put_file(const char *dir, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *c = path + strlen(dir) + 1; (c = strchr(c, '/')); c++) {
		*c = '\0';
		mkdir(path, 0755);
		*c = '/';
	}
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* PROC/PID/ with an empty maps and COMM as its comm. */
static inline void test_fake_proc(const char *proc, int pid, const char *comm)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%d", proc, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/maps", proc, pid);
	FILE *f = fopen(path, "w");
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/%d/comm", proc, pid);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s\n", comm);
		fclose(f);
	}
}

/* Removes what test_fake_proc made, and PROC itself. */
static inline void test_fake_proc_remove(const char *proc, int pid)
{
	char path[256];
	static const char *const files[] = { "maps", "comm" };
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%d/%s", proc, pid, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/%d", proc, pid);
	rmdir(path);
	rmdir(proc);
}

/* The mapping of ADDR in this process: its file, start and file offset.
 * Returns 0, or -1 when no mapping with a file holds it. */
static inline int test_self_mapping(uint64_t addr, char *file, size_t len, uint64_t *start,
				    uint64_t *pgoff)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352];
	int ret = -1;
	while (f && ret && fgets(line, sizeof(line), f)) {
		uint64_t s, e, o;
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &s, &e, &o,
			   &pos) < 3 || addr < s || addr >= e || !pos)
			continue;
		snprintf(file, len, "%s", line + pos);
		file[strcspn(file, "\n")] = '\0';
		*start = s;
		*pgoff = o;
		ret = 0;
	}
	if (f)
		fclose(f);
	return ret;
}

/* ---- collector sessions, for the tests that include collector/session.h
 * first ---- */
#ifdef FTSTACK_SESSION_H
#include <stdlib.h>

/* A session counting kernel stacks of one tracepoint (t:kmem:kmalloc),
 * folded, each stack under its process and thread, named with kernel
 * symbols K and the processes of PROC_ROOT; O gets the options (-i
 * INTERVAL, --max-stacks MAX) and the output goes to a temporary file.
 * Returns 0 or -1. */
static inline int test_session(struct ft_session *s, struct ft_options *o, struct sym_kernel *k,
			       const char *proc_root, double interval, size_t max)
{
	static struct ft_event ev = { .kind = FT_EV_TRACEPOINT, .name = "t:kmem:kmalloc",
				      .label = "kmalloc" };
	memset(o, 0, sizeof(*o));
	o->cmd = FT_COUNT;
	o->format = OUT_FOLDED; /* shows the comm: processes and threads kept apart */
	o->kernel_only = true;
	o->state = -1;
	o->interval = interval;
	o->max_stacks = max;
	ft_session_init(s, o);
	s->plan.events = &ev;
	s->plan.nevents = 1;
	s->kernel.syms = k;
	s->kernel.state = FT_KSYMS_READY; /* given, not loaded on first need */
	s->self = 777;
	ft_session_configure(s, proc_root);
	s->output.file = tmpfile();
	if (!s->output.file || ft_session_alloc(s, proc_root, "/nonexistent") < 0)
		return -1;
	return 0;
}

/* Frees what test_session made; K stays the caller's. */
static inline void test_session_free(struct ft_session *s)
{
	s->kernel.syms = NULL;
	ft_session_free(s);
	if (s->output.file)
		fclose(s->output.file);
}

/* A sample of process PID (its main thread) at T with kernel stack IPS[N]. */
static inline void test_sample(struct ft_session *s, uint32_t pid, const uint64_t *ips,
			       uint32_t n, uint64_t t)
{
	struct perfev_record r = { .kind = PERFEV_SAMPLE, .pid = pid, .tid = pid, .time = t };
	r.sample = (struct perfev_sample){ .pid = pid, .tid = pid, .time = t, .kips = ips,
					   .nkips = n };
	ft_session_record(s, &r, 0);
}

/* What ft_print_result writes on stderr (the summary), its result going
 * to s->output.file (test_slurp's buffer); "" when it fails. */
static inline const char *test_summary(struct ft_session *s)
{
	struct test_stderr c;
	if (!test_stderr_begin(&c))
		return "";
	int ret = ft_print_result(s, s->output.file);
	const char *text = test_stderr_end(&c);
	return ret == 0 ? text : "";
}
#endif

#endif
