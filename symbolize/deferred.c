/* Deferred names: a frame the host could not name, written by what
 * identifies it, "[FILE+0xVADDR@BUILDID]" (the file's base name for the
 * reader, the ELF address looked up, the build-id in hex), and named later
 * where the debug files are: a local debug root by build-id, else
 * debuginfod (sym_namer, for ftstack report). doc/FLEET.md says why this
 * text. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "symbolize/symbolize.h"

char *sym_deferred_format(const char *file, uint64_t vaddr, const uint8_t *id, size_t n)
{
	char hex[2 * 64 + 1];
	if (n < 2 || n > 64)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	char *s = NULL;
	return asprintf(&s, "[%s+0x%" PRIx64 "@%s]", file, vaddr, hex) < 0 ? NULL : s;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

const char *sym_deferred_identity(const char *frame)
{
	if (frame[0] != '[')
		return NULL; /* most frames: a name */
	size_t len = strlen(frame);
	if (len < 10 || frame[len - 1] != ']')
		return NULL;
	const char *at = strrchr(frame, '@');
	if (!at || (size_t)(frame + len - 1 - (at + 1)) < 4 || (frame + len - 1 - (at + 1)) % 2 ||
	    frame + len - 1 - (at + 1) > 128)
		return NULL;
	for (const char *c = at + 1; c < frame + len - 1; c++)
		if (hexval(*c) < 0)
			return NULL;
	const char *plus = at;
	while (plus > frame && hexval(plus[-1]) >= 0)
		plus--;
	if (plus == at || plus - frame < 4 || memcmp(plus - 3, "+0x", 3) != 0 || at - plus > 16)
		return NULL;
	return plus - 3;
}

int sym_deferred_parse(const char *frame, struct sym_deferred *out)
{
	const char *ident = sym_deferred_identity(frame);
	if (!ident)
		return -EINVAL;
	const char *at = strrchr(frame, '@'), *end = frame + strlen(frame) - 1;
	size_t flen = (size_t)(ident - frame - 1);
	if (flen >= sizeof(out->file))
		flen = sizeof(out->file) - 1;
	memcpy(out->file, frame + 1, flen);
	out->file[flen] = '\0';
	out->vaddr = strtoull(ident + 3, NULL, 16);
	out->id_len = (size_t)(end - at - 1) / 2;
	for (size_t i = 0; i < out->id_len; i++)
		out->id[i] = (uint8_t)(hexval(at[1 + 2 * i]) << 4 | hexval(at[2 + 2 * i]));
	return 0;
}

/* ---- the namer: one debug file per build-id, opened once ---- */

struct known {
	uint8_t id[64];
	size_t id_len;
	struct sym_elf *elf; /* NULL: none found */
};

struct sym_namer {
	char debug_root[256];
	struct sym_debuginfod *debuginfod;
	struct known *files;
	size_t n, cap;
	char **names; /* every name made, for freeing */
	size_t nnames, capnames;
	uint64_t named, unnamed;
};

int sym_namer_alloc(const char *debug_root, struct sym_debuginfod *d, struct sym_namer **out)
{
	struct sym_namer *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	snprintf(m->debug_root, sizeof(m->debug_root), "%s", debug_root);
	m->debuginfod = d;
	*out = m;
	return 0;
}

void sym_namer_free(struct sym_namer *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		sym_elf_free(m->files[i].elf);
	for (size_t i = 0; i < m->nnames; i++)
		free(m->names[i]);
	free(m->names);
	free(m->files);
	free(m);
}

/* The debug file of D's build-id: DEBUG_ROOT's, else debuginfod's. */
static struct sym_elf *open_debug(struct sym_namer *m, const struct sym_deferred *d)
{
	char path[512], *fetched = NULL;
	struct sym_elf *e = NULL;
	if (sym_build_id_path(m->debug_root, d->id, d->id_len, path, sizeof(path)) == 0 &&
	    sym_elf_load(path, m->debug_root, &e) == 0 && sym_elf_named(e))
		return e;
	sym_elf_free(e);
	e = NULL;
	if (m->debuginfod &&
	    sym_debuginfod_fetch(m->debuginfod, d->id, d->id_len, d->file, &fetched) == 0 &&
	    sym_elf_load(fetched, m->debug_root, &e) < 0)
		e = NULL;
	free(fetched);
	return e;
}

static struct sym_elf *debug_of(struct sym_namer *m, const struct sym_deferred *d)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->files[i].id_len == d->id_len && memcmp(m->files[i].id, d->id, d->id_len) == 0)
			return m->files[i].elf;
	if (MEM_GROW(m->files, m->cap, m->n + 1, 16))
		return NULL;
	struct known *k = &m->files[m->n++];
	*k = (struct known){ .id_len = d->id_len };
	memcpy(k->id, d->id, d->id_len);
	k->elf = open_debug(m, d);
	return k->elf;
}

const char *sym_namer_name(struct sym_namer *m, const char *frame, bool demangle)
{
	struct sym_deferred d;
	if (sym_deferred_parse(frame, &d) < 0)
		return NULL;
	const char *name = sym_elf_lookup(debug_of(m, &d), d.vaddr, NULL);
	if (!name) {
		m->unnamed++;
		return NULL;
	}
	m->named++;
	char *readable = demangle ? sym_demangle(name) : NULL;
	if (!readable)
		return name; /* the debug file's own, kept as long as the namer */
	if (MEM_GROW(m->names, m->capnames, m->nnames + 1, 64)) {
		free(readable);
		return name;
	}
	return m->names[m->nnames++] = readable;
}

void sym_namer_counts(const struct sym_namer *m, uint64_t *named, uint64_t *unnamed)
{
	*named = m ? m->named : 0;
	*unnamed = m ? m->unnamed : 0;
}
