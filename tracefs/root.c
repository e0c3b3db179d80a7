/* Finding tracefs (libtracefs's tracefs_tracing_dir: /proc/mounts, else it
 * mounts it), pointing libtracefs at a root, reading files, the --debug hook
 * and the library's own warning hook. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <tracefs.h> /* libtracefs (pkg-config puts its directory on the path) */
#include "mem/mem.h"
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

/* Modules never print, and libtracefs (and the libtraceevent it drives)
 * would, at their default log level, on the errors ftstack reports itself
 * from the calls' returns. Their log level is set to none before the first
 * call, rather than overriding their weak printer (tracefs_warning): ftstack
 * defines no symbol a library it links exports. */
static void quiet_libraries(void)
{
	static bool done;
	if (!done) {
		tracefs_set_loglevel(TEP_LOG_NONE);
		done = true;
	}
}

int tfs_errno(int fallback)
{
	return errno > 0 ? -errno : fallback;
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
	return dir && dir[0] && tfs_join(path, sizeof(path), dir, "events") == 0 &&
	       tfs_is_dir(path);
}

static char used_root[256];

int tfs_use_root(const char *root)
{
	quiet_libraries();
	if (strcmp(used_root, root) == 0)
		return 0;
	/* the library keeps its own copy; it takes a non-const pointer */
	char copy[256];
	snprintf(copy, sizeof(copy), "%s", root);
	if (tracefs_set_tracing_dir(copy) < 0)
		return -ENOMEM;
	snprintf(used_root, sizeof(used_root), "%s", root);
	return 0;
}

int tfs_find_root(char *buf, size_t len)
{
	/* asked once a run: libtracefs looks again each time its last answer
	 * has no events folder ftstack may enter (tracefs is root's) and drops
	 * that answer's memory (a leak ASan names) */
	static int refused;
	if (refused)
		return refused;
	/* not mounted: libtracefs mounts it at /sys/kernel/tracing (and leaves
	 * it mounted, as perf and trace-cmd do) */
	quiet_libraries();
	errno = 0;
	const char *dir = tracefs_tracing_dir();
	int e = errno;
	if (!has_events(dir))
		return refused = e == EPERM || e == EACCES ? -EPERM : -ENOENT;
	int n = snprintf(buf, len, "%s", dir);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return tfs_use_root(buf);
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
		if (n + 1 >= cap && (cap >= (1u << 30) || MEM_GROW(buf, cap, n + 2, 4096))) {
			free(buf);
			buf = NULL;
			break;
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
