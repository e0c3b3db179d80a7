/* output: -o FILE, written atomically. The result goes to an unnamed file
 * (O_TMPFILE) in FILE's folder; once complete it is fsynced, given a name
 * (.BASE.ftstack-PID.tmp) and renamed over FILE, and the folder fsynced. A
 * run killed at any point leaves FILE as it was and no temporary behind
 * (the unnamed file dies with the process); only a kill in the microseconds
 * between naming and rename, or a file system without O_TMPFILE (then the
 * named file is written directly), can leave .BASE.ftstack-PID.tmp, which
 * the next run writing FILE removes once PID is gone. A symlink at FILE is
 * refused unless forced: root writing through a user's symlink would
 * overwrite its target (/etc/passwd). A FILE that exists and is no regular
 * file (/dev/null, a FIFO) is written in place: it cannot be replaced. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "output/output.h"

struct out_file {
	FILE *f;
	int dirfd;
	bool unnamed;          /* O_TMPFILE: no name until commit */
	bool in_place;         /* not a regular file: written where it is */
	char base[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];
};

/* Splits PATH into its folder (opened O_PATH-free: O_DIRECTORY) and base. */
static int open_dir(const char *path, struct out_file *of)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char dir[PATH_MAX];
	if (!*base || strlen(base) > NAME_MAX - 32 || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0)
		return -EISDIR;
	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	strcpy(of->base, base);
	of->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return of->dirfd < 0 ? -errno : 0;
}

/* Removes .BASE.ftstack-PID.tmp files whose PID no longer runs. */
static void remove_stale(struct out_file *of)
{
	int fd = openat(of->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char prefix[NAME_MAX + 16];
	struct dirent *e;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t pl = (size_t)snprintf(prefix, sizeof(prefix), ".%s.ftstack-", of->base);
	while ((e = readdir(d))) {
		char *end;
		if (strncmp(e->d_name, prefix, pl) != 0)
			continue;
		long pid = strtol(e->d_name + pl, &end, 10);
		if (pid <= 0 || strcmp(end, ".tmp") != 0 || pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			unlinkat(of->dirfd, e->d_name, 0);
	}
	closedir(d);
}

/* The new file: unnamed if the file system can, else named. */
static int create_tmp(struct out_file *of, const struct stat *old)
{
	snprintf(of->tmp, sizeof(of->tmp), ".%s.ftstack-%d.tmp", of->base, (int)getpid());
	remove_stale(of);
	int fd = openat(of->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	of->unnamed = fd >= 0;
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
		fd = openat(of->dirfd, of->tmp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW |
			    O_CLOEXEC, 0666);
	if (fd < 0) {
		int e = errno;
		of->tmp[0] = '\0'; /* not ours to remove */
		return -e;
	}
	/* FILE keeps its mode and, when root replaces it, its owner */
	if (old && (fchmod(fd, old->st_mode & 07777) < 0 ||
		    (geteuid() == 0 && fchown(fd, old->st_uid, old->st_gid) < 0))) {
		int e = errno;
		close(fd);
		if (!of->unnamed)
			unlinkat(of->dirfd, of->tmp, 0);
		return -e;
	}
	if (!(of->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		if (!of->unnamed)
			unlinkat(of->dirfd, of->tmp, 0);
		return -e;
	}
	return 0;
}

/* FILE when it is a symlink and --force: what it points to. */
static int resolve(const char *path, bool force, char *buf, size_t len, const char **target)
{
	struct stat st;
	*target = path;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISLNK(st.st_mode))
		return 0;
	if (!force)
		return -ELOOP;
	if (len < PATH_MAX)
		return -ENAMETOOLONG;
	if (!realpath(path, buf))
		return -errno; /* a dangling symlink: ENOENT */
	*target = buf;
	return 0;
}

int out_file_open(const char *path, bool force, struct out_file **out, FILE **f)
{
	char real[PATH_MAX];
	const char *target;
	struct stat st;
	int ret = resolve(path, force, real, sizeof(real), &target);
	struct out_file *of = calloc(1, sizeof(*of));
	if (ret < 0 || !of) {
		free(of);
		return ret < 0 ? ret : -ENOMEM;
	}
	of->dirfd = -1;
	bool exists = stat(target, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
	} else if (exists && !S_ISREG(st.st_mode)) {
		int fd = open(target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		of->in_place = true;
		if (fd < 0 || !(of->f = fdopen(fd, "w"))) {
			ret = -errno;
			if (fd >= 0)
				close(fd);
		}
	} else if (exists && faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) < 0) {
		ret = -errno; /* what it could not write before, it does not replace */
	} else if ((ret = open_dir(target, of)) == 0) {
		ret = create_tmp(of, exists ? &st : NULL);
	}
	if (ret < 0) {
		out_file_abort(of);
		return ret;
	}
	*out = of;
	*f = of->f;
	return 0;
}

int out_file_commit(struct out_file *of)
{
	int ret = 0;
	if (fflush(of->f) != 0 || (!of->in_place && fsync(fileno(of->f)) < 0))
		ret = -errno;
	if (ret == 0 && of->unnamed) {
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(of->f));
		if (linkat(AT_FDCWD, proc, of->dirfd, of->tmp, AT_SYMLINK_FOLLOW) < 0 &&
		    linkat(fileno(of->f), "", of->dirfd, of->tmp, AT_EMPTY_PATH) < 0)
			ret = -errno;
		else
			of->unnamed = false; /* named now: abort must unlink it */
	}
	if (ret == 0 && !of->in_place) {
		if (renameat(of->dirfd, of->tmp, of->dirfd, of->base) < 0)
			ret = -errno;
		else if (fsync(of->dirfd) < 0)
			ret = -errno;
		else
			of->tmp[0] = '\0'; /* renamed: nothing to remove */
	}
	out_file_abort(of);
	return ret;
}

void out_file_abort(struct out_file *of)
{
	if (!of)
		return;
	if (of->f)
		fclose(of->f);
	if (!of->in_place && !of->unnamed && of->tmp[0] && of->dirfd >= 0)
		unlinkat(of->dirfd, of->tmp, 0);
	if (of->dirfd >= 0)
		close(of->dirfd);
	free(of);
}
