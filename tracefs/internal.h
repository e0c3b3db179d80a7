/* Shared inside tracefs/. */
#ifndef FTSTACK_TRACEFS_INTERNAL_H
#define FTSTACK_TRACEFS_INTERNAL_H

/* Calls the --debug hook, if one is installed. */
void tracefs_debug(const char *what, const char *path, const char *value);

#endif
