/* The fixture tracefs tree (tests/unit/fixtures/tracefs) for the tracefs
 * tests, read in place or copied to a temp dir where written, and the
 * helpers that read, write and lay out files in it. */
#ifndef FTSTACK_TEST_TRACEFS_TREE_H
#define FTSTACK_TEST_TRACEFS_TREE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIXTURE "tests/unit/fixtures/tracefs"

/* the temp copy's path; "" before the first fresh_copy() */
static char tmp[128];

/* Contents of DIR/REL, "" when unreadable (static buffer). */
static inline const char *slurp(const char *dir, const char *rel)
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

/* Writes TEXT to DIR/REL, created or truncated. */
static inline void put(const char *dir, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* mkdir -p DIR/REL */
static inline void mkdirs(const char *dir, const char *rel)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", dir, rel);
	if (system(cmd) != 0)
		printf("# mkdir -p %s failed\n", rel);
}

/* Whether DIR/REL is a directory. */
static inline bool is_dir(const char *dir, const char *rel)
{
	char path[512];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A fresh copy of the fixture tree in a temp dir, in tmp. */
static inline void fresh_copy(void)
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

/* Removes the last fresh_copy(), if any: for the end of main. */
static inline void tree_remove(void)
{
	if (tmp[0]) {
		char cmd[200];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			printf("# cleanup of %s failed\n", tmp);
	}
}

/* The writes tracefs asks for, relative to tmp, as "WHAT PATH VALUE;" each:
 * record_debug is the tfs_set_debug hook that appends them. */
static char trail[2048];

static inline void record_debug(const char *what, const char *path, const char *value)
{
	const char *rel = strncmp(path, tmp, strlen(tmp)) == 0 ? path + strlen(tmp) + 1 : path;
	size_t l = strlen(trail);
	snprintf(trail + l, sizeof(trail) - l, "%s %s%s%s;", what, rel, value ? " " : "",
		 value ? value : "");
}

#endif
