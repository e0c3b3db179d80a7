/* ELF function symbols: .symtab and .dynsym of the file, of its separate
 * debuginfo (build-id or .gnu_debuglink under debug_root) when the file is
 * stripped, and of MiniDebugInfo (.gnu_debugdata, an xz-compressed ELF).
 * Sorted by address; PT_LOAD segments kept for file offset → vaddr. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/symbolize.h"

struct esym {
	uint64_t addr, size;
	char *name;
};

struct seg {
	uint64_t off, vaddr, filesz;
};

struct sym_elf {
	struct esym *syms;
	size_t n, cap;
	struct seg segs[16];
	int nsegs;
	bool dyn;
};

static int add_sym(struct sym_elf *e, const char *name, uint64_t addr, uint64_t size)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 256;
		struct esym *n = realloc(e->syms, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		e->syms = n;
		e->cap = cap;
	}
	if (!(e->syms[e->n].name = strdup(name)))
		return -ENOMEM;
	e->syms[e->n].addr = addr;
	e->syms[e->n].size = size;
	e->n++;
	return 0;
}

/* Adds the function symbols of every SYMTAB/DYNSYM section of ELF; returns
 * how many .symtab symbols there were (to know whether it is stripped). */
static int read_symbols(struct sym_elf *e, Elf *elf, int *nsymtab)
{
	*nsymtab = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || s.st_value == 0 ||
			    (GELF_ST_TYPE(s.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			int ret = add_sym(e, name, s.st_value, s.st_size);
			if (ret < 0)
				return ret;
			if (sh.sh_type == SHT_SYMTAB)
				(*nsymtab)++;
		}
	}
	return 0;
}

static Elf_Scn *section(Elf *elf, const char *want)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

/* MiniDebugInfo: .gnu_debugdata holds an xz-compressed ELF with a .symtab. */
static int read_minidebug(struct sym_elf *e, Elf *elf)
{
	Elf_Scn *scn = section(elf, ".gnu_debugdata");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	if (!d || !d->d_size)
		return 0;
	size_t cap = d->d_size * 8 + 4096, inpos = 0, outpos = 0;
	uint64_t memlimit = 256u << 20;
	uint8_t *out = malloc(cap);
	int ret = 0;
	while (out) {
		inpos = outpos = 0;
		lzma_ret r = lzma_stream_buffer_decode(&memlimit, 0, NULL, d->d_buf, &inpos, d->d_size,
						       out, &outpos, cap);
		if (r == LZMA_OK)
			break;
		if (r != LZMA_BUF_ERROR || cap > (64u << 20)) {
			free(out);
			return 0; /* not decodable: symbols from the file itself */
		}
		uint8_t *n = realloc(out, cap *= 4);
		if (!n)
			free(out);
		out = n;
	}
	if (!out)
		return -ENOMEM;
	Elf *mini = elf_memory((char *)out, outpos);
	int nsymtab;
	if (mini) {
		ret = read_symbols(e, mini, &nsymtab);
		elf_end(mini);
	}
	free(out);
	return ret;
}

static int open_elf(const char *path, int *fd, Elf **elf)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		if (*elf)
			elf_end(*elf);
		close(*fd);
		return -ENOEXEC;
	}
	return 0;
}

/* Separate debuginfo: DEBUG_ROOT/.build-id/xx/rest.debug, then the
 * .gnu_debuglink name beside the file, in .debug/, and under DEBUG_ROOT. */
static int read_debuginfo(struct sym_elf *e, Elf *elf, const char *path, const char *debug_root)
{
	char cand[4][4096];
	int nc = 0;
	Elf_Scn *scn;
	Elf_Data *d;
	if ((scn = section(elf, ".note.gnu.build-id")) && (d = elf_getdata(scn, NULL)) &&
	    d->d_size > 16) {
		const uint8_t *id = (const uint8_t *)d->d_buf + 16;
		size_t len = d->d_size - 16;
		int n = snprintf(cand[nc], sizeof(cand[nc]), "%s/.build-id/%02x/", debug_root, id[0]);
		for (size_t i = 1; i < len && n < 4000; i++)
			n += snprintf(cand[nc] + n, sizeof(cand[nc]) - (size_t)n, "%02x", id[i]);
		snprintf(cand[nc] + n, sizeof(cand[nc]) - (size_t)n, ".debug");
		nc++;
	}
	if ((scn = section(elf, ".gnu_debuglink")) && (d = elf_getdata(scn, NULL)) &&
	    d->d_size > 4 && memchr(d->d_buf, '\0', d->d_size)) {
		const char *link = d->d_buf;
		const char *slash = strrchr(path, '/');
		int dl = slash ? (int)(slash - path) : 0;
		snprintf(cand[nc++], sizeof(cand[0]), "%.*s/%s", dl, path, link);
		snprintf(cand[nc++], sizeof(cand[0]), "%.*s/.debug/%s", dl, path, link);
		snprintf(cand[nc++], sizeof(cand[0]), "%s%.*s/%s", debug_root, dl, path, link);
	}
	for (int i = 0; i < nc; i++) {
		int fd;
		Elf *dbg;
		if (strcmp(cand[i], path) == 0 || open_elf(cand[i], &fd, &dbg) < 0)
			continue;
		int nsymtab, ret = read_symbols(e, dbg, &nsymtab);
		elf_end(dbg);
		close(fd);
		if (ret < 0 || nsymtab)
			return ret;
	}
	return 0;
}

static int esym_cmp(const void *a, const void *b)
{
	const struct esym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* aliases: the sized one with the fewest leading underscores names it */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	size_t ux = strspn(x->name, "_"), uy = strspn(y->name, "_");
	if (ux != uy)
		return ux < uy ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void read_segments(struct sym_elf *e, Elf *elf)
{
	size_t n;
	GElf_Ehdr eh;
	if (gelf_getehdr(elf, &eh))
		e->dyn = eh.e_type == ET_DYN;
	if (elf_getphdrnum(elf, &n) != 0)
		return;
	for (size_t i = 0; i < n && e->nsegs < 16; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			e->segs[e->nsegs++] = (struct seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
}

int sym_elf_open(const char *path, const char *debug_root, struct sym_elf **out)
{
	int fd, nsymtab = 0;
	Elf *elf;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	int ret = open_elf(path, &fd, &elf);
	if (ret < 0)
		return ret;
	struct sym_elf *e = calloc(1, sizeof(*e));
	ret = e ? read_symbols(e, elf, &nsymtab) : -ENOMEM;
	if (ret == 0)
		read_segments(e, elf);
	if (ret == 0 && !nsymtab)
		ret = read_debuginfo(e, elf, path, debug_root ? debug_root : "/usr/lib/debug");
	if (ret == 0 && !nsymtab)
		ret = read_minidebug(e, elf);
	elf_end(elf);
	close(fd);
	if (ret < 0) {
		sym_elf_free(e);
		return ret;
	}
	qsort(e->syms, e->n, sizeof(*e->syms), esym_cmp);
	*out = e;
	return 0;
}

void sym_elf_free(struct sym_elf *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++)
		free(e->syms[i].name);
	free(e->syms);
	free(e);
}

int sym_elf_offset_to_vaddr(const struct sym_elf *e, uint64_t off, uint64_t *vaddr)
{
	for (int i = 0; i < e->nsegs; i++) {
		if (off >= e->segs[i].off && off < e->segs[i].off + e->segs[i].filesz) {
			*vaddr = off - e->segs[i].off + e->segs[i].vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const char *sym_elf_lookup(const struct sym_elf *e, uint64_t vaddr, uint64_t *off)
{
	size_t lo = 0, hi = e->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	while (lo > 1 && e->syms[lo - 2].addr == e->syms[lo - 1].addr)
		lo--; /* the preferred alias sorts first */
	const struct esym *s = &e->syms[lo - 1];
	if (s->size && vaddr >= s->addr + s->size)
		return NULL;
	if (!s->size) {
		size_t nx = lo;
		while (nx < e->n && e->syms[nx].addr == s->addr)
			nx++;
		if (nx < e->n && vaddr >= e->syms[nx].addr)
			return NULL;
	}
	if (off)
		*off = vaddr - s->addr;
	return s->name;
}

int sym_elf_foreach(const struct sym_elf *e,
		    int (*fn)(void *ctx, const char *name, uint64_t vaddr, uint64_t size), void *ctx)
{
	for (size_t i = 0; i < e->n; i++) {
		int ret = fn(ctx, e->syms[i].name, e->syms[i].addr, e->syms[i].size);
		if (ret)
			return ret;
	}
	return 0;
}

bool sym_elf_is_dyn(const struct sym_elf *e)
{
	return e->dyn;
}
