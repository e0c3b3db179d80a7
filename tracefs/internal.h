/* Shared inside tracefs/. */
#ifndef FTSTACK_TRACEFS_INTERNAL_H
#define FTSTACK_TRACEFS_INTERNAL_H

#include <stdbool.h>

/* Calls the --debug hook, if one is installed. */
void tracefs_debug(const char *what, const char *path, const char *value);

/* Writes VALUE to PATH in one write(2) (stdio's "a" mode is refused by
 * tracefs). Returns 0 or -errno. */
int tracefs_write_path(const char *path, const char *value, bool append);

#endif
