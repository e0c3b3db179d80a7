/* Event formats: the fields of ROOT/events/SYSTEM/NAME/format, lines like
 *	field:unsigned long call_site;	offset:8;	size:8;	signed:0;
 *	field:__data_loc char[] name;	offset:12;	size:4;	signed:0;
 *	field:char comm[16];	offset:8;	size:16;	signed:0;
 * The field's name is the last identifier of the declaration once a trailing
 * array suffix ("[16]") is dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tracefs/tracefs.h"

static bool ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* Reads "KEY:<unsigned>" from LINE into *v. */
static bool get_u32(const char *line, const char *key, uint32_t *v)
{
	const char *p = strstr(line, key);
	char *end;
	if (!p)
		return false;
	p += strlen(key);
	unsigned long x = strtoul(p, &end, 10);
	if (end == p || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

/* Parses one format line into F. Returns false for lines that are no field. */
static bool parse_field(char *line, struct tfs_field *f)
{
	char *decl = strstr(line, "field:"), *semi;
	uint32_t sign = 0;
	if (!decl || !(semi = strchr(decl, ';')))
		return false;
	decl += strlen("field:");
	/* the numbers come after the declaration (whose type may hold "signed") */
	if (!get_u32(semi, "offset:", &f->offset) || !get_u32(semi, "size:", &f->size))
		return false;
	f->is_signed = get_u32(semi, "signed:", &sign) && sign != 0;
	char *end = semi;
	while (end > decl && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end > decl && end[-1] == ']') {
		while (end > decl && end[-1] != '[')
			end--;
		if (end > decl)
			end--;
		while (end > decl && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
	}
	char *id = end;
	while (id > decl && ident_char(id[-1]))
		id--;
	size_t n = (size_t)(end - id);
	if (n == 0 || n >= sizeof(f->name))
		return false;
	memcpy(f->name, id, n);
	f->name[n] = '\0';
	return true;
}

int tfs_event_fields(const char *root, const char *system, const char *name,
			 struct tfs_field **out)
{
	char rel[400], *text = NULL;
	int r = snprintf(rel, sizeof(rel), "events/%s/%s/format", system, name);
	*out = NULL;
	if (r < 0 || (size_t)r >= sizeof(rel))
		return -ENAMETOOLONG;
	ssize_t len = tfs_read_file(root, rel, &text);
	if (len < 0)
		return (int)len;
	int n = 0, cap = 0;
	struct tfs_field *fs = NULL, f;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		memset(&f, 0, sizeof(f));
		if (!parse_field(line, &f))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct tfs_field *nf = realloc(fs, (size_t)cap * sizeof(*nf));
			if (!nf) {
				free(fs);
				free(text);
				return -ENOMEM;
			}
			fs = nf;
		}
		fs[n++] = f;
	}
	free(text);
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
	struct tfs_field *fields = NULL;
	int n = tfs_event_fields(root, system, name, &fields);
	const struct tfs_field *f = n > 0 ? tfs_field_find(fields, n, field) : NULL;
	int off = f && f->size == 8 ? (int)f->offset : -ENOENT;
	free(fields);
	return off;
}
