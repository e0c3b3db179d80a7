/* The files processes map, one entry per path, which mappings refer to by
 * index: the hash index (aggregate/index.c) by path finds an entry, and
 * its ELF file is opened at the first lookup and kept, a failure too
 * ("[vdso]", "//anon", a deleted file). Apart from the histories (procs_history.c) because files are
 * shared by every process and forgotten on their own (forget.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "aggregate/aggregate.h"
#include "mem/mem.h"
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

int sym_files_reindex(struct sym_procs *p)
{
	int ret = agg_index_reset(&p->fidx, (uint32_t)p->nfiles);
	for (size_t i = 0; ret == 0 && i < p->nfiles; i++)
		agg_index_add(&p->fidx, agg_hash_str(p->files[i].path), (uint32_t)i + 1);
	return ret;
}

/* Index of the file entry for PATH, added when new; -ENOMEM. */
long sym_file_index(struct sym_procs *p, const char *path)
{
	struct agg_probe pr;
	uint64_t h = agg_hash_str(path);
	if (agg_index_reserve(&p->fidx) < 0)
		return -ENOMEM;
	for (uint32_t it = agg_index_first(&p->fidx, h, &pr); it; it = agg_index_next(&p->fidx, &pr))
		if (strcmp(p->files[it - 1].path, path) == 0)
			return it - 1;
	char *copy = strdup(path);
	if (!copy || p->nfiles >= UINT32_MAX - 1 ||
	    MEM_GROW(p->files, p->capfiles, p->nfiles + 1, 64) < 0) {
		free(copy);
		return -ENOMEM;
	}
	p->files[p->nfiles] = (struct file){ .path = copy };
	agg_index_put(&p->fidx, &pr, (uint32_t)p->nfiles + 1);
	return (long)p->nfiles++;
}

struct sym_elf *sym_file_elf(struct sym_procs *p, struct file *f)
{
	if (!f->tried) {
		f->tried = true;
		/* "[vdso]", "//anon", "/memfd:x (deleted)": open fails, cached */
		if (f->path[0] != '/' || sym_elf_load(f->path, p->debug_root, &f->elf) < 0)
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
