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
};

/* Forks the command blocked before exec. Returns 0, or -EINVAL after saying
 * why on stderr (command not found), or -errno. */
int ft_child_start(char **argv, struct ft_child *c);
/* Lets it exec. Returns 0, or -errno of a failed exec. */
int ft_child_release(struct ft_child *c);
/* Returns true once the child has exited (reaping it without blocking). */
bool ft_child_reap(struct ft_child *c);
/* Ends a child that is still running (SIGTERM) or was never released, and
 * reaps it. Safe to call twice. */
void ft_child_stop(struct ft_child *c);

#endif
