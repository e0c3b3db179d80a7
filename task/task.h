/* task: the tasks a run follows: the traced command (-c / --), run as the
 * user who ran sudo, and the -p processes and -L threads held by pidfd. */
#ifndef FTSTACK_TASK_H
#define FTSTACK_TASK_H

#include <stdbool.h>
#include <sys/types.h>

struct ft_options;

struct ft_child {
	pid_t pid;
	int go_fd;   /* write one byte to let it exec */
	int err_fd;  /* exec's errno comes back here; closes on success */
	bool running;
	int status;  /* wait status once reaped */
	/* under sudo: who the command runs as (command.c's sudo_identity) */
	bool drop;
	uid_t uid;
	gid_t gid;
	gid_t *groups;  /* the user's groups, as initgroups would set them */
	int ngroups;
	char **envp;    /* environ with the user's HOME, USER and LOGNAME */
};

/* Forks the command blocked before exec. Started through sudo (real uid 0,
 * SUDO_UID and SUDO_GID set) and without keep_root, it execs as that user:
 * the user's uid, gid and groups, HOME, USER and LOGNAME from the password
 * database. Returns 0, or -EINVAL after saying why on stderr (command not
 * found, a SUDO_UID that is no user id), or -errno. */
int ft_child_start(char **argv, bool keep_root, struct ft_child *c);
/* Fills c's drop, uid, gid, groups and envp from SUDO_UID/SUDO_GID when the
 * real uid is 0 (sudo_user.c). Returns 0, -EINVAL after saying why on
 * stderr, or -ENOMEM. */
int ft_sudo_user(struct ft_child *c);
void ft_sudo_user_free(struct ft_child *c);
/* Lets it exec. Returns 0, or -errno of a failed exec. */
int ft_child_release(struct ft_child *c);
/* Returns true once the child has exited (reaping it without blocking). */
bool ft_child_reap(struct ft_child *c);
/* Ends a child that is still running (SIGTERM) or was never released, and
 * reaps it, and frees what ft_child_start kept. Safe to call twice. */
void ft_child_stop(struct ft_child *c);

/* targets.c: the processes of -p and threads of -L, held by pidfd */
struct ft_target {
	pid_t id;
	int fd;                  /* its pidfd, -1 where the kernel has none */
	bool thread;             /* -L */
	bool gone;               /* its pidfd fired */
	bool kthread;            /* a kernel thread: it runs no user code */
};
struct ft_targets {
	int n;
	struct ft_target t[512]; /* -p's 256 and -L's 256 */
};

/* ---- targets (targets.c) ---- */
/* Opens a pidfd for every -p process and -L thread of O. Returns 0, or
 * -ESRCH after saying which does not exist. */
int ft_targets_open(struct ft_targets *t, const struct ft_options *o);
/* How many targets are kernel threads. */
int ft_targets_kernel_threads(const struct ft_targets *t);
/* True while some target has not exited. */
bool ft_targets_alive(const struct ft_targets *t);
/* Adds every target's pidfd to EPFD; its cookie is the target. Returns 0 or -errno. */
int ft_targets_watch(struct ft_targets *t, int epfd);
/* True when an epoll COOKIE is one of the targets'. */
bool ft_targets_owns(const struct ft_targets *t, const void *cookie);
/* The target of COOKIE exited: takes it out of EPFD. Returns true when no
 * target runs any more. */
bool ft_targets_exited(struct ft_targets *t, void *cookie, int epfd);
void ft_targets_close(struct ft_targets *t);
#endif
