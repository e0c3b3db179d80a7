/* Debug files fetched by build-id through elfutils' libdebuginfod, into its
 * client cache (DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT and the rest are
 * the library's, read from the environment as every client reads them).
 * Under sudo the fetch runs in a child as the invoking user, with that
 * user's environment, so the download and the cache are theirs, never
 * root's files in their home. Progress goes to the caller's callback; a
 * failure other than "no such file" ends the fetching for the rest of the
 * run, and the library's retries are off unless DEBUGINFOD_RETRY_LIMIT
 * says otherwise, so a server that is down or slow costs its timeout once. */
#include <errno.h>
#include <elfutils/debuginfod.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "host/host.h"
#include "symbolize/symbolize.h"

extern char **environ;

/* libdebuginfod, loaded by the first client (host_lib_load says why not
 * at start-up); its types and names from its header */
static struct {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
} lib;
static int lib_state; /* 0 not tried, 1 loaded, -errno */
static char lib_err[256];

/* Loads libdebuginfod once. Returns 0, or -errno with lib_err saying why. */
static int lib_load(void)
{
	const struct host_lib_sym syms[] = {
		{ "debuginfod_begin", (void **)&lib.begin },
		{ "debuginfod_end", (void **)&lib.end },
		{ "debuginfod_set_user_data", (void **)&lib.set_user_data },
		{ "debuginfod_get_user_data", (void **)&lib.get_user_data },
		{ "debuginfod_set_progressfn", (void **)&lib.set_progressfn },
		{ "debuginfod_find_debuginfo", (void **)&lib.find_debuginfo },
	};
	if (lib_state == 0) {
		lib_state = host_lib_load("libdebuginfod.so.1", syms, sizeof(syms) / sizeof(*syms),
					  lib_err, sizeof(lib_err));
		if (lib_state == 0)
			lib_state = 1;
	}
	return lib_state < 0 ? lib_state : 0;
}

const char *sym_debuginfod_load_error(void)
{
	return lib_state < 0 ? lib_err : NULL;
}

struct sym_debuginfod {
	struct sym_debuginfod_user user;
	sym_debuginfod_progress_fn progress;
	void *ctx;
	const char *file;  /* the file being fetched, for the callback */
	int pipe_fd;       /* in the child: where progress goes */
	struct sym_debuginfod_stats stats;
	bool given_up;
};

const char *sym_debuginfod_urls(void)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	return urls && urls[strspn(urls, " \t")] ? urls : NULL;
}

int sym_debuginfod_alloc(const struct sym_debuginfod_user *user, sym_debuginfod_progress_fn fn,
			 void *ctx, struct sym_debuginfod **out)
{
	int ret = lib_load();
	if (ret < 0)
		return ret;
	struct sym_debuginfod *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	if (user)
		d->user = *user;
	d->progress = fn;
	d->ctx = ctx;
	d->pipe_fd = -1;
	*out = d;
	return 0;
}

void sym_debuginfod_free(struct sym_debuginfod *d)
{
	free(d);
}

/* A progress record through the child's pipe: done, total; done < 0 ends
 * the records, total then the fetch's result, the path's bytes after. */
struct rec {
	long long done, total;
};

static int on_progress(debuginfod_client *c, long done, long total)
{
	struct sym_debuginfod *d = lib.get_user_data(c);
	if (d->pipe_fd >= 0) {
		struct rec r = { done < 0 ? 0 : done, total };
		if (write(d->pipe_fd, &r, sizeof(r)) < 0)
			return 0;
	} else if (d->progress) {
		d->progress(d->ctx, d->file, done, total);
	}
	return 0; /* go on */
}

/* The fetch itself, in this process. Returns 0 with *path, or -errno. */
static int find(struct sym_debuginfod *d, const uint8_t *id, size_t n, char **path)
{
	/* a server that does not answer costs DEBUGINFOD_TIMEOUT once: the
	 * library's retries (2 by default) would make it three times. Set for
	 * the fetch only, so no traced command inherits it */
	bool retries = getenv(DEBUGINFOD_RETRY_LIMIT_ENV_VAR) != NULL;
	if (!retries)
		setenv(DEBUGINFOD_RETRY_LIMIT_ENV_VAR, "0", 1);
	debuginfod_client *c = lib.begin();
	int fd = -ENOMEM;
	if (c) {
		lib.set_user_data(c, d);
		lib.set_progressfn(c, on_progress);
		fd = lib.find_debuginfo(c, id, (int)n, path);
		lib.end(c);
	}
	if (!retries)
		unsetenv(DEBUGINFOD_RETRY_LIMIT_ENV_VAR);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static bool write_all(int fd, const void *p, size_t n)
{
	for (const char *c = p; n;) {
		ssize_t w = write(fd, c, n);
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

/* The child: becomes the user, fetches, writes the records and the path. */
static void child(struct sym_debuginfod *d, int fd, const uint8_t *id, size_t n)
{
	char *path = NULL;
	int ret = -EPERM;
	const struct sym_debuginfod_user *u = &d->user;
	if (setgroups((size_t)u->ngroups, u->groups) == 0 && setgid(u->gid) == 0 &&
	    setuid(u->uid) == 0) {
		if (u->envp)
			environ = u->envp;
		d->pipe_fd = fd;
		ret = find(d, id, n, &path);
	}
	struct rec end = { -1, ret };
	if (write_all(fd, &end, sizeof(end)) && ret == 0)
		write_all(fd, path, strlen(path));
	_exit(0);
}

/* Reads the child's records (relaying progress) and its result. */
static int from_child(struct sym_debuginfod *d, int fd, char **path)
{
	struct rec r;
	int ret = -EIO;
	size_t got = 0;
	ssize_t n;
	while ((n = read(fd, (char *)&r + got, sizeof(r) - got)) > 0) {
		if ((got += (size_t)n) < sizeof(r))
			continue;
		got = 0;
		if (r.done >= 0) {
			if (d->progress)
				d->progress(d->ctx, d->file, (long)r.done, (long)r.total);
			continue;
		}
		ret = (int)r.total;
		break;
	}
	char buf[4096];
	size_t len = 0;
	while (ret == 0 && len < sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	if (ret == 0 && !len)
		ret = -EIO;
	if (ret == 0 && !(*path = strdup(buf)))
		ret = -ENOMEM;
	return ret;
}

/* The fetch in a child running as the user. Returns 0 with *path, or -errno. */
static int find_as_user(struct sym_debuginfod *d, const uint8_t *id, size_t n, char **path)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child(d, fds[1], id, n);
	}
	close(fds[1]);
	int ret = pid < 0 ? -errno : from_child(d, fds[0], path);
	close(fds[0]);
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return ret;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int sym_debuginfod_fetch(struct sym_debuginfod *d, const uint8_t *id, size_t n, const char *file,
			 char **path)
{
	if (d->given_up)
		return -ECANCELED;
	if (n == 0 || n > 64)
		return -EINVAL;
	double t0 = now();
	d->file = file;
	int ret = d->user.drop ? find_as_user(d, id, n, path) : find(d, id, n, path);
	d->stats.seconds += now() - t0;
	if (ret == 0) {
		d->stats.fetched++;
		return 0;
	}
	if (ret == -ENOENT)
		d->stats.missing++;
	else {
		d->stats.failed++;
		d->stats.last_error = ret;
		d->given_up = true; /* down or slow: its timeout once, not once a file */
	}
	return ret;
}

void sym_debuginfod_stats(const struct sym_debuginfod *d, struct sym_debuginfod_stats *out)
{
	*out = d ? d->stats : (struct sym_debuginfod_stats){ 0 };
}
