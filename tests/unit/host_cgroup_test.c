/* host/cgroup.c: the cgroup2 mount from mountinfo, --cgroup's path in both
 * spellings, folder ids, the walk that names existing cgroups, the names. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "host/host.h"
#include "tests/unit/check.h"

static char tmp[] = "/tmp/ftstack-cgroup-test.XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_mount(void)
{
	char dir[PATH_MAX], buf[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/proc", tmp);
	mkdir(dir, 0755);
	snprintf(buf, sizeof(buf), "%s/self", dir);
	mkdir(buf, 0755);
	snprintf(buf, sizeof(buf), "%s/self/mountinfo", dir);
	write_file(buf, "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
			"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
			"41 31 0:38 / /sys/fs/cgroup/uni\\040fied rw,relatime shared:9 - cgroup2 cgroup2 rw\n");
	CHECK(host_cgroup2_mount(dir, buf, sizeof(buf)) == 0, "cgroup2 mount found");
	CHECK_STR(buf, "/sys/fs/cgroup/uni fied", "the cgroup2 line's mount point, unescaped, "
		  "past an optional field");
	snprintf(buf, sizeof(buf), "%s/self/mountinfo", dir);
	write_file(buf, "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n");
	CHECK_EQ_U64(host_cgroup2_mount(dir, buf, sizeof(buf)), -ENOENT, "v1 only: -ENOENT");
}

static int collect(void *ctx, uint64_t id, const char *path)
{
	char *out = ctx;
	(void)id;
	strcat(out, path);
	strcat(out, "|");
	return 0;
}

static void test_resolve_walk(void)
{
	char mnt[PATH_MAX], d[PATH_MAX], abs[PATH_MAX], rel[PATH_MAX];
	snprintf(mnt, sizeof(mnt), "%s/cg", tmp);
	/* the tree cg/a/b */
	for (int depth = 0; depth < 3; depth++) {
		snprintf(d, sizeof(d), "%s%s", mnt, depth == 0 ? "" : depth == 1 ? "/a" : "/a/b");
		mkdir(d, 0755);
	}
	const char *as[] = { "a/b", "/a/b", "a/b/", d };
	for (size_t i = 0; i < 4; i++) {
		CHECK(host_cgroup_resolve(mnt, as[i], abs, sizeof(abs), rel, sizeof(rel)) == 0 &&
		      !strcmp(abs, d) && !strcmp(rel, "/a/b"), "--cgroup %s: %s, /a/b", as[i], abs);
	}
	CHECK(host_cgroup_resolve(mnt, "/", abs, sizeof(abs), rel, sizeof(rel)) == 0 &&
	      !strcmp(abs, mnt) && !strcmp(rel, "/"), "--cgroup /: the root");
	CHECK_EQ_U64(host_cgroup_resolve(mnt, "nope", abs, sizeof(abs), rel, sizeof(rel)), -ENOENT,
		     "no such cgroup: -ENOENT");
	CHECK_EQ_U64(host_cgroup_resolve(mnt, "a/../../x", abs, sizeof(abs), rel, sizeof(rel)),
		     -ENOENT, "a path out of the mount: -ENOENT");
	char seen[256] = "";
	CHECK(host_cgroup_walk(mnt, collect, seen) == 0, "walk");
	CHECK_STR(seen, "/|/a|/a/b|", "walk: the root, then each folder with its path");
	uint64_t i1 = 0, i2 = 0;
	CHECK(host_cgroup_id(mnt, &i1) == 0 && host_cgroup_id(d, &i2) == 0 && i1 != i2,
	      "two folders, two ids");
	rmdir(d);
	snprintf(d, sizeof(d), "%s/a", mnt);
	rmdir(d);
	rmdir(mnt);
}

/* On the real cgroup2, the handle is the kernfs id, what PERF_SAMPLE_CGROUP
 * carries; on 64-bit it is the inode number too */
static void test_live_id(void)
{
	char mnt[PATH_MAX];
	struct stat st;
	uint64_t id = 0;
	if (host_cgroup2_mount("/proc", mnt, sizeof(mnt)) < 0 || stat(mnt, &st) < 0) {
		CHECK(1, "cgroup2 id # SKIP no cgroup2 mounted here");
		return;
	}
	CHECK(host_cgroup_id(mnt, &id) == 0 && id == (uint64_t)st.st_ino,
	      "cgroup2 root's id %llu is its kernfs id (inode %llu)", (unsigned long long)id,
	      (unsigned long long)st.st_ino);
}

static void test_names(void)
{
	struct host_cgroup_names m = { 0 };
	CHECK(host_cgroup_names_find(&m, 1) == NULL, "empty: nothing named");
	for (uint64_t i = 1; i <= 100; i++) {
		char p[32];
		snprintf(p, sizeof(p), "/g%llu", (unsigned long long)i);
		host_cgroup_names_add(&m, i, p);
	}
	CHECK_STR(host_cgroup_names_find(&m, 77), "/g77", "77 of 100 named");
	CHECK(host_cgroup_names_add(&m, 77, "/again") == 0, "a new name for 77");
	CHECK_STR(host_cgroup_names_find(&m, 77), "/again", "the later name wins");
	CHECK(m.n == 100 && host_cgroup_names_find(&m, 101) == NULL, "still 100, 101 unknown");
	host_cgroup_names_free(&m);
	CHECK(m.n == 0 && m.v == NULL, "freed");
}

int main(void)
{
	if (!mkdtemp(tmp))
		return 1;
	test_mount();
	test_resolve_walk();
	test_live_id();
	test_names();
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		return 1;
	CHECK_DONE();
}
