/* The undo log: every change ftstack makes to tracefs is made through here
 * (with libtracefs's calls) and recorded with how to undo it: the objects
 * libtracefs made (instances, dynamic events, enabled events) and the
 * previous content of the files written, so one reverse walk restores the
 * kernel on every exit path (trace-cmd's reset-file list is the model). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tracefs.h> /* libtracefs (pkg-config puts its directory on the path) */
#include "mem/mem.h"
#include "tracefs/tracefs.h"
#include "tracefs/internal.h"

void tfs_log_init(struct tfs_log *log, const char *root)
{
	memset(log, 0, sizeof(*log));
	snprintf(log->root, sizeof(log->root), "%s", root);
}

int tfs_log_add(struct tfs_log *log, const struct tfs_undo *item)
{
	if (MEM_GROW(log->items, log->cap, log->n + 1, 16))
		return -ENOMEM;
	struct tfs_undo *u = &log->items[log->n];
	*u = *item;
	u->file = item->file ? strdup(item->file) : NULL;
	u->undo = strdup(item->undo ? item->undo : "");
	if ((item->file && !u->file) || !u->undo) {
		free(u->file);
		free(u->undo);
		return -ENOMEM;
	}
	log->n++;
	return 0;
}

void tfs_last_error(struct tracefs_instance *inst, char *raw, size_t rawlen, char *err,
		    size_t errlen)
{
	raw[0] = err[0] = '\0';
	char *text = tracefs_error_last(inst);
	if (!text)
		return;
	/* "[  123.456789] trace_kprobe: error: Invalid argument\n
	 *    Command: p:ftstack_1/x nosuchfn\n              ^" */
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

/* The first word of INST's FILE (a file's setting, e.g. "1410" of
 * "1410 (expanded: 1410)"), or "" when unreadable. */
static void first_word(struct tracefs_instance *inst, const char *file, char *buf, size_t len)
{
	char *text = tracefs_instance_file_read(inst, file, NULL);
	size_t n = text ? strcspn(text, " \t\n") : 0;
	snprintf(buf, len, "%.*s", (int)(n < len ? n : 0), text ? text : "");
	free(text);
}

/* Writes VALUE to INST's FILE (appends when APPEND), saying so to --debug. */
static int write_file(struct tracefs_instance *inst, const char *file, const char *value,
		      bool append)
{
	char *path = tracefs_instance_get_file(inst, file);
	tfs_debug(append ? "append" : "write", path ? path : file, value);
	tracefs_put_tracing_file(path);
	errno = 0;
	/* libtracefs writes it in one write(2): tracefs parses each write as
	 * one command; it returns the bytes written */
	int w = append ? tracefs_instance_file_append(inst, file, value) :
			 tracefs_instance_file_write(inst, file, value);
	if (w < 0)
		return tfs_errno(-EIO);
	return (size_t)w == strlen(value) ? 0 : -EIO;
}

static int undo_one(const struct tfs_undo *u);

int tfs_log_write(struct tfs_log *log, struct tracefs_instance *inst, const char *file,
		  const char *value, bool append, enum tfs_undo_kind undo_kind,
		  const char *undo, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	int ret = tfs_use_root(log->root);
	if (ret < 0)
		return ret;
	char prev[128];
	if (!undo) {
		/* the file's previous setting, written back at undo */
		first_word(inst, file, prev, sizeof(prev));
		if (!prev[0])
			return -ENOENT;
		undo = prev;
	}
	/* error_log keeps old entries: only one that appears with this write is ours */
	char before[256] = "", after[256], msg[512];
	if (err && errlen)
		tfs_last_error(inst, before, sizeof(before), msg, sizeof(msg));
	ret = write_file(inst, file, value, append);
	if (ret < 0) {
		if (err && errlen) {
			tfs_last_error(inst, after, sizeof(after), msg, sizeof(msg));
			if (strcmp(before, after) != 0)
				snprintf(err, errlen, "%s", msg);
		}
		return ret;
	}
	struct tfs_undo u = { .kind = undo_kind, .inst = inst, .file = (char *)file,
			      .undo = (char *)undo };
	ret = tfs_log_add(log, &u);
	if (ret < 0)
		undo_one(&u); /* never keep a change the log cannot undo later */
	return ret;
}

/* tracefs_instance_destroy, retried: an instance's buffers can be busy for
 * a moment after its readers close. */
static int destroy_instance(struct tracefs_instance *inst)
{
	char *path = tracefs_instance_get_dir(inst);
	tfs_debug("rmdir", path ? path : tracefs_instance_get_name(inst), NULL);
	tracefs_put_tracing_file(path);
	for (int i = 0; i < 50; i++) {
		errno = 0;
		if (tracefs_instance_destroy(inst) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return tfs_errno(-EIO);
		nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	}
	return -EBUSY;
}

/* tracefs_dynevent_destroy, retried: a killed owner's perf events are
 * released a moment after it dies. */
int tfs_dynevent_destroy(struct tracefs_dynevent *dyn)
{
	char *sys = NULL, *ev = NULL, what[256];
	tracefs_dynevent_info(dyn, &sys, &ev, NULL, NULL, NULL);
	snprintf(what, sizeof(what), "%s/%s", sys ? sys : "", ev ? ev : "");
	free(sys);
	free(ev);
	tfs_debug("remove", what, NULL);
	for (int i = 0; i < 50; i++) {
		errno = 0;
		/* not forced: ftstack disabled its own uses; another user's are theirs */
		if (tracefs_dynevent_destroy(dyn, false) == 0)
			return 0;
		if (errno != EBUSY)
			return tfs_errno(-EIO);
		nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	}
	return -EBUSY;
}

static int undo_one(const struct tfs_undo *u)
{
	switch (u->kind) {
	case TRACEFS_UNDO_WRITE:
	case TRACEFS_UNDO_APPEND:
		return write_file(u->inst, u->file, u->undo, u->kind == TRACEFS_UNDO_APPEND);
	case TRACEFS_UNDO_DISABLE: {
		char *path = tracefs_event_get_file(u->inst, u->file, u->undo, "enable");
		tfs_debug("write", path ? path : u->undo, "0");
		tracefs_put_tracing_file(path);
		errno = 0;
		return tracefs_event_disable(u->inst, u->file, u->undo) == 0 ? 0 :
		       tfs_errno(-ENOENT);
	}
	case TRACEFS_UNDO_INSTANCE:
		return destroy_instance(u->inst);
	case TRACEFS_UNDO_DYNEVENT:
		return tfs_dynevent_destroy(u->dyn);
	}
	return -EINVAL;
}

/* What an item owns, freed once it is undone. */
static void free_item(struct tfs_undo *u)
{
	if (u->kind == TRACEFS_UNDO_INSTANCE)
		tracefs_instance_free(u->inst);
	if (u->kind == TRACEFS_UNDO_DYNEVENT)
		tracefs_dynevent_free(u->dyn);
	free(u->file);
	free(u->undo);
}

int tfs_log_undo(struct tfs_log *log)
{
	int first = 0;
	if (log->n)
		tfs_use_root(log->root);
	while (log->n > 0) {
		struct tfs_undo *u = &log->items[--log->n];
		int ret = undo_one(u);
		if (ret < 0 && !first)
			first = ret;
		free_item(u);
	}
	return first;
}

void tfs_log_free(struct tfs_log *log)
{
	for (size_t i = 0; i < log->n; i++)
		free_item(&log->items[i]);
	free(log->items);
	log->items = NULL;
	log->n = log->cap = 0;
}
