/* Shared inside tracefs/. */
#ifndef FTSTACK_TRACEFS_INTERNAL_H
#define FTSTACK_TRACEFS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Calls the --debug hook, if one is installed. */
void tfs_debug(const char *what, const char *path, const char *value);

/* Writes VALUE to PATH in one write(2) (stdio's "a" mode is refused by
 * tracefs). Returns 0 or -errno. */
int tfs_write_path(const char *path, const char *value, bool append);

/* Joins "A/B" into buf. Returns 0, or -ENAMETOOLONG when it does not fit. */
int tfs_join(char *buf, size_t len, const char *a, const char *b);

/* Whether PATH is a directory (tracefs and old file systems may report
 * DT_UNKNOWN in readdir, so callers fall back to this). */
bool tfs_is_dir(const char *path);

#endif
