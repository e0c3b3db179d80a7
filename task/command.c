/* The -c / -- command (split by cli/command_split.c): started stopped (blocked on a pipe) so tracing
 * can be armed on its pid before it execs, then released. Its own exec is
 * therefore traced, unlike perf's enable-on-exec. Under sudo the child drops
 * to the invoking user once released, right before exec: the events were
 * opened on its pid while it was still root's. */
#include <grp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli/cli.h"
#include "task/task.h"

/* Resolves argv[0] through PATH now, so the released child only execs. */
static int resolve_path(const char *name, char *buf, size_t len)
{
	if (strchr(name, '/')) {
		snprintf(buf, len, "%s", name);
		return access(buf, X_OK) == 0 ? 0 : -errno;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; p && *p;) {
		const char *colon = strchr(p, ':');
		size_t dl = colon ? (size_t)(colon - p) : strlen(p);
		struct stat st;
		snprintf(buf, len, "%.*s/%s", (int)dl, dl ? p : ".", name);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 0;
		p = colon ? colon + 1 : NULL;
	}
	return -ENOENT;
}

/* In the child: become the invoking user, groups first (setgroups needs
 * root), uid last. Returns 0 or -errno. */
static int drop_root(const struct ft_child *c)
{
	if (setgroups((size_t)c->ngroups, c->groups) < 0 || setgid(c->gid) < 0 ||
	    setuid(c->uid) < 0)
		return -errno;
	/* root must not come back (a saved set-user-ID of 0 would allow it) */
	if (setuid(0) == 0)
		return -EPERM;
	return 0;
}

int ft_child_start(char **argv, bool keep_root, struct ft_child *c)
{
	int go[2], err[2];
	char path[4096];
	int ret = resolve_path(argv[0], path, sizeof(path));
	if (ret < 0) {
		ft_error("cannot run '%s': %s", argv[0],
			ret == -ENOENT ? "command not found" : strerror(-ret));
		return -EINVAL;
	}
	if (!keep_root && (ret = ft_sudo_user(c)) < 0) {
		ft_sudo_user_free(c);
		return ret;
	}
	go[0] = go[1] = err[0] = err[1] = -1;
	pid_t pid = -1;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		ret = -errno;
		for (int i = 0; i < 2; i++) {
			if (go[i] >= 0)
				close(go[i]);
			if (err[i] >= 0)
				close(err[i]);
		}
		ft_sudo_user_free(c);
		return ret;
	}
	if (pid == 0) {
		char b;
		close(go[1]);
		close(err[0]);
		/* back to the default signal state ftstack changed */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &b, 1) != 1)
			_exit(127); /* ftstack gave up before arming */
		int e = c->drop ? -drop_root(c) : 0;
		if (e == 0 && c->drop)
			execve(path, argv, c->envp);
		else if (e == 0)
			execv(path, argv);
		if (e == 0)
			e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = err[0];
	c->running = true;
	c->status = 0;
	return 0;
}

int ft_child_release(struct ft_child *c)
{
	int e = 0;
	if (write(c->go_fd, "g", 1) != 1)
		return -errno;
	close(c->go_fd);
	c->go_fd = -1;
	/* the error pipe closes on a successful exec; otherwise it says why */
	ssize_t n = read(c->err_fd, &e, sizeof(e));
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof(e))
		return -e;
	return 0;
}

bool ft_child_reap(struct ft_child *c)
{
	int st;
	if (!c->running)
		return true;
	pid_t r = waitpid(c->pid, &st, WNOHANG);
	if (r == c->pid) {
		c->running = false;
		c->status = st;
	}
	return !c->running;
}

void ft_child_stop(struct ft_child *c)
{
	ft_sudo_user_free(c);
	if (c->go_fd >= 0) {
		close(c->go_fd); /* never released: it exits without exec */
		c->go_fd = -1;
	}
	if (c->err_fd >= 0) {
		close(c->err_fd);
		c->err_fd = -1;
	}
	if (c->running && c->pid > 0) {
		kill(c->pid, SIGTERM);
		int st;
		if (waitpid(c->pid, &st, 0) == c->pid)
			c->status = st;
		c->running = false;
	}
}
