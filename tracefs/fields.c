/* Event formats through libtraceevent: the one event's format file is
 * parsed by tep_parse_format into a handle of its own (not every event of
 * the system, as tracefs_local_events would: ftstack needs a field or two
 * of a few events, and start-up time counts), and its fields, offsets and
 * type id come from the parsed event. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h> /* libtraceevent (pkg-config puts its directory on the path) */
#include "tracefs/tracefs.h"

/* Parses ROOT/events/SYSTEM/NAME/format into a new handle (*tep, which the
 * caller frees with tep_free). Returns the event, or NULL with *err set. */
static struct tep_event *load_event(const char *root, const char *system, const char *name,
				    struct tep_handle **tep, int *err)
{
	char rel[400], *text = NULL;
	struct tep_event *ev = NULL;
	*tep = NULL;
	int n = snprintf(rel, sizeof(rel), "events/%s/%s/format", system, name);
	if (n < 0 || (size_t)n >= sizeof(rel)) {
		*err = -ENAMETOOLONG;
		return NULL;
	}
	ssize_t len = tfs_read_file(root, rel, &text);
	if (len < 0) {
		*err = (int)len;
		return NULL;
	}
	*tep = tep_alloc();
	*err = !*tep ? -ENOMEM :
	       tep_parse_format(*tep, &ev, text, (unsigned long)len, system) != 0 || !ev ? -EINVAL : 0;
	free(text);
	return *err ? NULL : ev;
}

static void copy_field(const struct tep_format_field *f, struct tfs_field *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", f->name);
	out->offset = (uint32_t)f->offset;
	out->size = (uint32_t)f->size;
	out->is_signed = f->flags & TEP_FIELD_IS_SIGNED;
}

int tfs_event_fields(const char *root, const char *system, const char *name,
		     struct tfs_field **out)
{
	struct tep_handle *tep;
	int err;
	*out = NULL;
	struct tep_event *ev = load_event(root, system, name, &tep, &err);
	struct tep_format_field **common = ev ? tep_event_common_fields(ev) : NULL;
	struct tep_format_field **fields = ev ? tep_event_fields(ev) : NULL;
	int n = 0, nc = 0, nf = 0;
	while (common && common[nc])
		nc++;
	while (fields && fields[nf])
		nf++;
	struct tfs_field *fs = ev ? calloc((size_t)(nc + nf) + 1, sizeof(*fs)) : NULL;
	if (ev && (!fs || (!common && !fields)))
		err = -ENOMEM;
	for (int i = 0; fs && i < nc; i++)
		copy_field(common[i], &fs[n++]);
	for (int i = 0; fs && i < nf; i++)
		copy_field(fields[i], &fs[n++]);
	free(common);
	free(fields);
	if (tep)
		tep_free(tep);
	if (err) {
		free(fs);
		return err;
	}
	*out = fs;
	return n;
}

const struct tfs_field *tfs_field_find(const struct tfs_field *fields, int n,
				       const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(fields[i].name, name) == 0)
			return &fields[i];
	return NULL;
}

int tfs_event_u64_offset(const char *root, const char *system, const char *name,
			 const char *field)
{
	struct tep_handle *tep;
	int err;
	struct tep_event *ev = load_event(root, system, name, &tep, &err);
	const struct tep_format_field *f = ev ? tep_find_field(ev, field) : NULL;
	int off = f && f->size == 8 ? f->offset : -ENOENT;
	if (tep)
		tep_free(tep);
	return off;
}

int tfs_event_type_id(const char *root, const char *system, const char *name)
{
	struct tep_handle *tep;
	int err;
	struct tep_event *ev = load_event(root, system, name, &tep, &err);
	int id = ev ? ev->id : err;
	if (tep)
		tep_free(tep);
	return id >= 0 && id <= 65535 ? id : id < 0 ? id : -EINVAL;
}
