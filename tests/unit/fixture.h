/* Helpers several unit tests share: what the code under test wrote, a fake
 * /proc entry, this process's own mappings. Static: each test includes it
 * once. */
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

#endif
