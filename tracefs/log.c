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

void tfs_log_init(struct tfs_log *log, const char *root)
{
	memset(log, 0, sizeof(*log));
	snprintf(log->root, sizeof(log->root), "%s", root);
}

static int record(struct tfs_log *log, enum tfs_undo_kind kind, const char *path,
		  const char *undo)
{
	if (log->n == log->cap) {
		size_t cap = log->cap ? log->cap * 2 : 16;
		struct tfs_undo *n = realloc(log->items, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		log->items = n;
		log->cap = cap;
	}
	struct tfs_undo *u = &log->items[log->n];
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

/* The kernel's last complaint, from error_log, whose entries read
 *	[  123.456789] trace_kprobe: error: Invalid argument
 *	  Command: p:ftstack_1/x nosuchfn
 *	                         ^
 * The last entry's first line (with its time stamp, which tells entries
 * apart) goes to raw; its message to err as
 * "trace_kprobe: error: Invalid argument (Command: p:ftstack_1/x nosuchfn)".
 * Both are empty when there is no entry. */
static void last_error(const char *root, char *raw, size_t rawlen, char *err, size_t errlen)
{
	char *text = NULL;
	raw[0] = err[0] = '\0';
	if (tfs_read_file(root, "error_log", &text) <= 0) {
		free(text);
		return;
	}
	char *msg = NULL, *cmd = NULL;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *t = line + strspn(line, " \t");
		if (line[0] == '[') {
			msg = line;
			cmd = NULL;
		} else if (msg && strncmp(t, "Command:", 8) == 0) {
			cmd = t;
		}
	}
	if (msg) {
		snprintf(raw, rawlen, "%s", msg);
		char *close = strchr(msg, ']');
		if (close)
			msg = close + 1 + strspn(close + 1, " ");
		snprintf(err, errlen, "%s%s%s%s", msg, cmd ? " (" : "", cmd ? cmd : "",
			 cmd ? ")" : "");
	}
	free(text);
}

int tfs_write_path(const char *path, const char *value, bool append)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -errno;
	/* one write(2): tracefs parses each write as one command */
	size_t len = strlen(value);
	ssize_t w = write(fd, value, len);
	int e = errno;
	close(fd);
	if (w < 0)
		return -e;
	return (size_t)w == len ? 0 : -EIO;
}

static int undo_one(const struct tfs_undo *u);

int tfs_log_write(struct tfs_log *log, const char *rel, const char *value, bool append,
		      enum tfs_undo_kind undo_kind, const char *undo, char *err, size_t errlen)
{
	char path[512];
	if (err && errlen)
		err[0] = '\0';
	if (tfs_join(path, sizeof(path), log->root, rel) < 0)
		return -ENAMETOOLONG;
	/* error_log keeps old entries: only one that appears with this write is ours */
	char before[256] = "", after[256], msg[512];
	if (err && errlen)
		last_error(log->root, before, sizeof(before), msg, sizeof(msg));
	tfs_debug(append ? "append" : "write", path, value);
	int ret = tfs_write_path(path, value, append);
	if (ret < 0) {
		if (err && errlen) {
			last_error(log->root, after, sizeof(after), msg, sizeof(msg));
			if (strcmp(before, after) != 0)
				snprintf(err, errlen, "%s", msg);
		}
		return ret;
	}
	ret = record(log, undo_kind, path, undo);
	if (ret < 0) {
		/* never keep a change the log cannot undo later */
		struct tfs_undo u = { undo_kind, path, (char *)(undo ? undo : "") };
		undo_one(&u);
	}
	return ret;
}

int tfs_log_mkdir(struct tfs_log *log, const char *rel)
{
	char path[512];
	if (tfs_join(path, sizeof(path), log->root, rel) < 0)
		return -ENAMETOOLONG;
	tfs_debug("mkdir", path, NULL);
	if (mkdir(path, 0755) != 0)
		return -errno;
	int ret = record(log, TRACEFS_UNDO_RMDIR, path, NULL);
	if (ret < 0)
		rmdir(path);
	return ret;
}

static int undo_one(const struct tfs_undo *u)
{
	switch (u->kind) {
	case TRACEFS_UNDO_WRITE:
	case TRACEFS_UNDO_APPEND: {
		bool append = u->kind == TRACEFS_UNDO_APPEND;
		tfs_debug(append ? "append" : "write", u->path, u->undo);
		return tfs_write_path(u->path, u->undo, append);
	}
	case TRACEFS_UNDO_RMDIR:
		tfs_debug("rmdir", u->path, NULL);
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

int tfs_log_undo(struct tfs_log *log)
{
	int first = 0;
	while (log->n > 0) {
		struct tfs_undo *u = &log->items[--log->n];
		int ret = undo_one(u);
		if (ret < 0 && !first)
			first = ret;
		free(u->path);
		free(u->undo);
	}
	return first;
}

void tfs_log_free(struct tfs_log *log)
{
	for (size_t i = 0; i < log->n; i++) {
		free(log->items[i].path);
		free(log->items[i].undo);
	}
	free(log->items);
	log->items = NULL;
	log->n = log->cap = 0;
}
