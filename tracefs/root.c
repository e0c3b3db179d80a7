/* Finding (or mounting) tracefs, reading its files, the --debug hook. */
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tracefs/tracefs.h"
#include "tracefs/internal.h"

static tfs_debug_fn debug_fn;

void tfs_set_debug(tfs_debug_fn fn)
{
	debug_fn = fn;
}

void tfs_debug(const char *what, const char *path, const char *value)
{
	if (debug_fn)
		debug_fn(what, path, value);
}

int tfs_join(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s/%s", a, b);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool tfs_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_events(const char *dir)
{
	char path[300];
	return dir[0] && tfs_join(path, sizeof(path), dir, "events") == 0 &&
	       tfs_is_dir(path);
}

/* The mount points /proc/mounts lists, best first: tracefs at the default
 * place, tracefs elsewhere, then debugfs's tracing directory (older kernels,
 * or an automount not yet triggered). */
static void scan_mounts(char cand[3][256])
{
	FILE *f = setmntent("/proc/mounts", "r");
	for (struct mntent *m; f && (m = getmntent(f));) {
		if (strcmp(m->mnt_type, "tracefs") == 0) {
			int slot = strcmp(m->mnt_dir, TRACEFS_DEFAULT_ROOT) == 0 ? 0 : 1;
			if (!cand[slot][0])
				snprintf(cand[slot], 256, "%s", m->mnt_dir);
		} else if (strcmp(m->mnt_type, "debugfs") == 0 && !cand[2][0]) {
			snprintf(cand[2], 256, "%s/tracing", m->mnt_dir);
		}
	}
	if (f)
		endmntent(f);
}

int tfs_find_root(char *buf, size_t len)
{
	char cand[5][256] = { "", "", "", TRACEFS_DEFAULT_ROOT, "/sys/kernel/debug/tracing" };
	scan_mounts(cand);
	/* the last two cover an unreadable /proc/mounts */
	for (int i = 0; i < 5; i++) {
		if (has_events(cand[i])) {
			snprintf(buf, len, "%s", cand[i]);
			return strlen(cand[i]) < len ? 0 : -ENAMETOOLONG;
		}
	}
	/* not mounted: mount it where perf and trace-cmd look, and leave it */
	tfs_debug("mount", TRACEFS_DEFAULT_ROOT, "tracefs");
	if (mount("nodev", TRACEFS_DEFAULT_ROOT, "tracefs", 0, NULL) != 0) {
		int e = errno;
		return e == EPERM || e == EACCES ? -EPERM : -ENOENT;
	}
	if (!has_events(TRACEFS_DEFAULT_ROOT))
		return -ENOENT;
	snprintf(buf, len, "%s", TRACEFS_DEFAULT_ROOT);
	return 0;
}

ssize_t tfs_read_file(const char *root, const char *rel, char **out)
{
	char path[512];
	*out = NULL;
	if (tfs_join(path, sizeof(path), root, rel) < 0)
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* tracefs files report size 0, so read until EOF, growing the buffer */
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	ssize_t r = 0;
	int e = 0;
	while (buf) {
		if (n + 1 >= cap) {
			char *nb = cap < (1u << 30) ? realloc(buf, cap * 2) : NULL;
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		/* cppcheck-suppress nullPointerArithmeticRedundantCheck ; the loop runs while buf */
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			e = errno;
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	if (r < 0) {
		free(buf);
		return -e;
	}
	buf[n] = '\0';
	*out = buf;
	return (ssize_t)n;
}
