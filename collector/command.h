/* The traced command (-c / --), internal to collector/. */
#ifndef FTSTACK_COMMAND_H
#define FTSTACK_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

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

#endif
