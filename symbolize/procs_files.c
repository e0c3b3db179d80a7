/* The files processes map, one entry per path, which mappings refer to by
 * index: a hash by path finds an entry, and its ELF file is opened at the
 * first lookup and kept, a failure too ("[vdso]", "//anon", a deleted
 * file). Apart from the histories (procs_history.c) because files are
 * shared by every process and forgotten on their own (forget.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h ^ (h >> 31);
}

static void fhash_insert(uint32_t *fhash, size_t cap, const struct file *files, uint32_t idx)
{
	size_t mask = cap - 1, i = path_hash(files[idx].path) & mask;
	while (fhash[i])
		i = (i + 1) & mask;
	fhash[i] = idx + 1;
}

int sym_files_rehash(struct sym_procs *p, size_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h && cap > p->fhcap)
		return -ENOMEM;
	if (!h) { /* shrinking without memory: the old slots, refilled */
		h = p->fhash;
		cap = p->fhcap;
		memset(h, 0, cap * sizeof(*h));
	} else {
		free(p->fhash);
	}
	for (size_t i = 0; i < p->nfiles; i++)
		fhash_insert(h, cap, p->files, (uint32_t)i);
	p->fhash = h;
	p->fhcap = cap;
	return 0;
}

/* Index of the file entry for PATH, added when new; -ENOMEM. */
long sym_file_index(struct sym_procs *p, const char *path)
{
	for (size_t i = p->fhcap ? path_hash(path) & (p->fhcap - 1) : 0; p->fhcap && p->fhash[i];
	     i = (i + 1) & (p->fhcap - 1))
		if (strcmp(p->files[p->fhash[i] - 1].path, path) == 0)
			return p->fhash[i] - 1;
	if ((p->nfiles + 1) * 2 > p->fhcap &&
	    sym_files_rehash(p, p->fhcap ? p->fhcap * 2 : 128) < 0)
		return -ENOMEM;
	char *copy = strdup(path);
	if (!copy || p->nfiles >= UINT32_MAX || MEM_GROW(p->files, p->capfiles, p->nfiles + 1, 64) < 0) {
		free(copy);
		return -ENOMEM;
	}
	p->files[p->nfiles] = (struct file){ .path = copy };
	fhash_insert(p->fhash, p->fhcap, p->files, (uint32_t)p->nfiles);
	return (long)p->nfiles++;
}

struct sym_elf *sym_file_elf(struct sym_procs *p, struct file *f)
{
	if (!f->tried) {
		f->tried = true;
		/* "[vdso]", "//anon", "/memfd:x (deleted)": open fails, cached */
		if (f->path[0] != '/' || sym_elf_open(f->path, p->debug_root, &f->elf) < 0)
			f->elf = NULL;
	}
	return f->elf;
}

void sym_procs_set_debuginfod(struct sym_procs *p, struct sym_debuginfod *d)
{
	p->debuginfod = d;
}

struct sym_elf *sym_file_named(struct sym_procs *p, struct file *f)
{
	struct sym_elf *e = sym_file_elf(p, f);
	size_t n;
	const uint8_t *id = sym_elf_build_id(e, &n);
	char *debug = NULL;
	if (!e || f->fetched || !p->debuginfod || sym_elf_named(e) || !id)
		return e;
	f->fetched = true;
	const char *base = strrchr(f->path, '/');
	if (sym_debuginfod_fetch(p->debuginfod, id, n, base ? base + 1 : f->path, &debug) == 0)
		sym_elf_add_debug(e, debug); /* a file without a .symtab: names stay as they were */
	free(debug);
	return e;
}
