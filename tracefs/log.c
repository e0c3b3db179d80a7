/* The undo log: every change ftstack makes to tracefs is made through here
 * and recorded with how to undo it, so one reverse walk restores the kernel
 * on every exit path (trace-cmd's reset-file list is the model). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tracefs/tracefs.h"
#include "tracefs/internal.h"

void tracefs_log_init(struct tracefs_log *log, const char *root)
{
	memset(log, 0, sizeof(*log));
	snprintf(log->root, sizeof(log->root), "%s", root);
}

static int record(struct tracefs_log *log, enum tracefs_undo_kind kind, const char *path,
		  const char *undo)
{
	if (log->n == log->cap) {
		size_t cap = log->cap ? log->cap * 2 : 16;
		struct tracefs_undo *n = realloc(log->items, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		log->items = n;
		log->cap = cap;
	}
	struct tracefs_undo *u = &log->items[log->n];
	u->kind = kind;
	u->path = strdup(path);
	u->undo = strdup(undo ? undo : "");
	if (!u->path || !u->undo) {
		free(u->path);
		free(u->undo);
		return -ENOMEM;
	}
	log->n++;
	return 0;
}

/* The kernel's last complaint about a tracefs write, from error_log. */
static void last_error(const char *root, char *err, size_t len)
{
	char *text = NULL;
	if (!err || !len || tracefs_read_file(root, "error_log", &text) <= 0) {
		free(text);
		return;
	}
	char *end = text + strlen(text);
	while (end > text && end[-1] == '\n')
		*--end = '\0';
	/* the last entry is a "[time] kind: message" line then a command line */
	char *p = end, *msg = NULL;
	for (int lines = 0; p > text && lines < 3; p--)
		if (p[-1] == '\n' && ++lines && strchr(p, ':') && !msg && p[0] == '[')
			msg = p;
	if (!msg && text[0] == '[')
		msg = text;
	if (msg) {
		msg[strcspn(msg, "\n")] = '\0';
		snprintf(err, len, "%s", msg);
	}
	free(text);
}

int tracefs_write_path(const char *path, const char *value, bool append)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -errno;
	size_t len = strlen(value);
	ssize_t w = write(fd, value, len);
	int e = errno;
	close(fd);
	if (w < 0)
		return -e;
	return (size_t)w == len ? 0 : -EIO;
}

int tracefs_log_write(struct tracefs_log *log, const char *rel, const char *value, bool append,
		      enum tracefs_undo_kind undo_kind, const char *undo, char *err, size_t errlen)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", log->root, rel);
	tracefs_debug(append ? "append" : "write", path, value);
	int ret = tracefs_write_path(path, value, append);
	if (ret < 0) {
		last_error(log->root, err, errlen);
		return ret;
	}
	return record(log, undo_kind, path, undo);
}

int tracefs_log_mkdir(struct tracefs_log *log, const char *rel)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", log->root, rel);
	tracefs_debug("mkdir", path, NULL);
	if (mkdir(path, 0755) != 0)
		return -errno;
	return record(log, TRACEFS_UNDO_RMDIR, path, NULL);
}

static int undo_one(const struct tracefs_undo *u)
{
	switch (u->kind) {
	case TRACEFS_UNDO_WRITE:
	case TRACEFS_UNDO_APPEND:
		tracefs_debug(u->kind == TRACEFS_UNDO_WRITE ? "restore" : "append", u->path, u->undo);
		return tracefs_write_path(u->path, u->undo, u->kind == TRACEFS_UNDO_APPEND);
	case TRACEFS_UNDO_RMDIR:
		tracefs_debug("rmdir", u->path, NULL);
		/* an instance's buffers can be busy for a moment after its readers close */
		for (int i = 0; i < 50; i++) {
			if (rmdir(u->path) == 0 || errno == ENOENT)
				return 0;
			if (errno != EBUSY)
				return -errno;
			nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
		}
		return -EBUSY;
	}
	return -EINVAL;
}

int tracefs_log_undo(struct tracefs_log *log)
{
	int first = 0;
	while (log->n > 0) {
		struct tracefs_undo *u = &log->items[--log->n];
		int ret = undo_one(u);
		if (ret < 0 && !first)
			first = ret;
		free(u->path);
		free(u->undo);
	}
	return first;
}

void tracefs_log_free(struct tracefs_log *log)
{
	for (size_t i = 0; i < log->n; i++) {
		free(log->items[i].path);
		free(log->items[i].undo);
	}
	free(log->items);
	log->items = NULL;
	log->n = log->cap = 0;
}

int tracefs_dynevent_add(struct tracefs_log *log, const char *file, const char *group,
			 const char *event, const char *definition, char *err, size_t errlen)
{
	char undo[256];
	snprintf(undo, sizeof(undo), "-:%s/%s\n", group, event);
	return tracefs_log_write(log, file, definition, true, TRACEFS_UNDO_APPEND, undo, err,
				 errlen);
}
