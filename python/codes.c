/* Code objects and their names. A code object lives as long as its
 * function (most as long as the process), so each is named once, when
 * first seen, and kept by address; each later sight checks that it is
 * still that object (its type is PyCode_Type, its name, file and first
 * line the same pointers and number), else it is named again as new. Its
 * synthetic address is PY_TAG | its index here, so names outlive the
 * process, and stacks of one function merge. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "python/internal.h"

#define PY_NAME_MAX 255     /* characters of a name or file read */

/* UTF-8 of code point C into OUT (room for 4): its length */
static size_t utf8(uint32_t c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6), out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12), out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (c >> 18 & 7)), out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f)), out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* The text of the str object at ADDR into OUT (room for LEN, at least 5):
 * its first PY_NAME_MAX characters in UTF-8. Returns 0 or -errno (not a
 * compact str). */
static int read_str(struct py_reader *r, const struct py_proc *p, uint64_t addr, char *out,
		    size_t len)
{
	const struct py_layout *l = &p->lay;
	uint8_t hdr[128], data[4 * PY_NAME_MAX];
	if (!addr || l->str_compact > sizeof(hdr) || py_proc_read(r, p, addr, hdr, l->str_compact) < 0)
		return -EFAULT;
	uint64_t length;
	uint32_t state;
	memcpy(&length, hdr + l->str_length, 8);
	memcpy(&state, hdr + l->str_state, 4);
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	size_t nch = length < PY_NAME_MAX ? (size_t)length : PY_NAME_MAX;
	uint64_t at = addr + (ascii ? l->str_ascii : l->str_compact);
	if (nch && py_proc_read(r, p, at, data, nch * kind) < 0)
		return -EFAULT;
	size_t o = 0;
	for (size_t i = 0; i < nch && o + 5 <= len; i++) {
		uint32_t c = kind == 1 ? data[i] : kind == 2 ? (uint32_t)(data[2 * i] | data[2 * i + 1] << 8) :
			     (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 |
			     (uint32_t)data[4 * i + 2] << 16 | (uint32_t)data[4 * i + 3] << 24;
		o += utf8(c > 0x10ffff ? 0xfffd : c, out + o);
	}
	out[o] = '\0';
	return 0;
}

/* The frame's name: "qualname (file.py:firstline)", the file's last part
 * alone (its parent's too for a package's __init__.py); ';' (folded's
 * frame separator) made ':'. NULL when out of memory. */
static char *frame_text(const char *qualname, const char *file, int32_t line)
{
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (strcmp(base, "__init__.py") == 0 && base > file + 1) {
		const char *parent = base - 2;
		while (parent > file && parent[-1] != '/')
			parent--;
		base = parent;
	}
	char *t = NULL;
	if (asprintf(&t, "%s (%s:%d)", qualname, base, (int)line) < 0)
		return NULL;
	for (char *c = t; *c; c++)
		if (*c == ';')
			*c = ':';
	return t;
}

/* A new entry for the code object C (read at ADDR) in P: its index, or 0 */
static uint32_t code_add(struct py_reader *r, const struct py_proc *p, struct py_code *c,
			 const struct agg_probe *probe)
{
	char qual[4 * PY_NAME_MAX + 5], file[4 * PY_NAME_MAX + 5];
	if (read_str(r, p, c->qualname, qual, sizeof(qual)) < 0 &&
	    read_str(r, p, c->name, qual, sizeof(qual)) < 0)
		return 0;
	if (read_str(r, p, c->filename, file, sizeof(file)) < 0)
		snprintf(file, sizeof(file), "?");
	if (MEM_GROW(r->codes, r->codes_cap, (size_t)r->ncodes + 1, 256) < 0 ||
	    !(c->text = frame_text(qual, file, c->firstlineno)))
		return 0;
	if (r->ncodes == 0)
		r->ncodes = 1; /* index 0: the index's empty item */
	r->codes[r->ncodes] = *c;
	agg_index_put(&r->code_index, probe, r->ncodes);
	return r->ncodes++;
}

uint64_t py_code_frame(struct py_reader *r, struct py_proc *p, uint64_t addr, enum py_fail *why)
{
	const struct py_layout *l = &p->lay;
	uint8_t obj[256];
	uint64_t type;
	*why = PY_FAIL_CODE;
	r->last_code_lo = r->last_code_hi = 0;
	if (!addr || l->co_size > sizeof(obj)) {
		return 0;
	}
	if (py_proc_read(r, p, addr, obj, l->co_size) < 0) {
		*why = PY_FAIL_READ;
		return 0;
	}
	memcpy(&type, obj + l->ob_type, 8);
	if (type != p->bin->code_type + p->bias)
		return 0;
	uint64_t units;
	memcpy(&units, obj + 16, 8); /* ob_size */
	r->last_code_lo = l->co_code ? addr + l->co_code : 0;
	r->last_code_hi = l->co_code && units < (1u << 24) ? r->last_code_lo + 2 * units : 0;
	struct py_code c = { .pid = p->pid, .addr = addr };
	memcpy(&c.name, obj + l->co_name, 8);
	memcpy(&c.filename, obj + l->co_filename, 8);
	memcpy(&c.qualname, obj + l->co_qualname, 8);
	memcpy(&c.firstlineno, obj + l->co_firstlineno, 4);
	uint64_t h = agg_hash_finish(agg_hash_mix(agg_hash_mix(0, p->pid), addr));
	struct agg_probe probe;
	if (agg_index_reserve(&r->code_index) < 0)
		return 0;
	for (uint32_t it = agg_index_first(&r->code_index, h, &probe); it;
	     it = agg_index_next(&r->code_index, &probe)) {
		const struct py_code *k = &r->codes[it];
		if (k->pid == c.pid && k->addr == addr && k->name == c.name &&
		    k->filename == c.filename && k->qualname == c.qualname &&
		    k->firstlineno == c.firstlineno)
			return PY_TAG | it;
	}
	uint32_t i = code_add(r, p, &c, &probe);
	return i ? PY_TAG | i : 0;
}

void py_code_bytecode(const struct py_reader *r, uint64_t *lo, uint64_t *hi)
{
	*lo = r->last_code_lo;
	*hi = r->last_code_hi;
}

bool py_frame_is(uint64_t addr)
{
	return (addr & PY_TAG_MASK) == PY_TAG;
}

const char *py_frame_name(const struct py_reader *r, uint64_t addr)
{
	uint64_t i = addr & ~PY_TAG_MASK;
	return r && py_frame_is(addr) && i && i < r->ncodes ? r->codes[i].text : NULL;
}

void py_codes_free(struct py_reader *r)
{
	for (uint32_t i = 1; i < r->ncodes; i++)
		free(r->codes[i].text);
	free(r->codes);
	agg_index_clear(&r->code_index);
}
