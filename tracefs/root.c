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

static tracefs_debug_fn debug_fn;

void tracefs_set_debug(tracefs_debug_fn fn)
{
	debug_fn = fn;
}

void tracefs_debug(const char *what, const char *path, const char *value)
{
	if (debug_fn)
		debug_fn(what, path, value);
}

static bool has_events(const char *dir)
{
	char path[300];
	struct stat st;
	snprintf(path, sizeof(path), "%s/events", dir);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int tracefs_find_root(char *buf, size_t len)
{
	FILE *f = setmntent("/proc/mounts", "r");
	struct mntent *m;
	char found[256] = "";
	while (f && (m = getmntent(f))) {
		if (strcmp(m->mnt_type, "tracefs") == 0 && (!found[0] ||
		    strcmp(m->mnt_dir, TRACEFS_DEFAULT_ROOT) == 0))
			snprintf(found, sizeof(found), "%s", m->mnt_dir);
		else if (!found[0] && strcmp(m->mnt_type, "debugfs") == 0)
			snprintf(found, sizeof(found), "%s/tracing", m->mnt_dir);
	}
	if (f)
		endmntent(f);
	if (found[0] && has_events(found)) {
		snprintf(buf, len, "%s", found);
		return 0;
	}
	/* not mounted: mount it where perf and trace-cmd look, and leave it */
	if (mount("nodev", TRACEFS_DEFAULT_ROOT, "tracefs", 0, NULL) != 0) {
		int e = errno;
		return e == EPERM || e == EACCES ? -EPERM : -ENOENT;
	}
	tracefs_debug("mount", TRACEFS_DEFAULT_ROOT, "tracefs");
	snprintf(buf, len, "%s", TRACEFS_DEFAULT_ROOT);
	return 0;
}

ssize_t tracefs_read_file(const char *root, const char *rel, char **out)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	ssize_t r = 0;
	while (buf) {
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb)
				break;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	int e = errno;
	close(fd);
	if (!buf || r < 0 || n + 1 >= cap) {
		free(buf);
		return r < 0 ? -e : -ENOMEM;
	}
	buf[n] = '\0';
	*out = buf;
	return (ssize_t)n;
}
