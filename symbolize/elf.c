/* ELF function symbols: .symtab and .dynsym of the file (merged, aliases
 * deduplicated), of its separate debuginfo (build-id or .gnu_debuglink
 * under debug_root) when the file has no .symtab, and of MiniDebugInfo
 * (.gnu_debugdata, an xz-compressed ELF holding a .symtab). Sorted by
 * address; PT_LOAD segments kept for file offset -> vaddr. Names live in
 * mem/'s arena: a big library has tens of thousands. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mem/mem.h"
#include "symbolize/symbolize.h"
#include "symbolize/internal.h"

#define MAX_SEGS 32
#define MINI_MAX_OUT (256u << 20) /* decompressed MiniDebugInfo bound */

struct esym {
	uint64_t addr, size; /* addr first: sym_addr_upper_bound */
	const char *name;
};

struct seg {
	uint64_t off, vaddr, filesz;
};

struct sym_elf {
	struct esym *syms;
	size_t n, cap;
	struct mem_arena names;
	struct seg segs[MAX_SEGS];
	int nsegs;
	bool dyn;
	bool named;     /* symbols beyond .dynsym: a .symtab, its own or a debug file's */
	uint64_t entry; /* e_entry; 0 in a shared library */
	uint8_t build_id[64];
	uint8_t build_id_len;
};

static int add_sym(struct sym_elf *e, const char *name, uint64_t addr, uint64_t size)
{
	if (MEM_GROW(e->syms, e->cap, e->n + 1, 256))
		return -ENOMEM;
	const char *copy = mem_arena_strdup(&e->names, name);
	if (!copy)
		return -ENOMEM;
	e->syms[e->n++] = (struct esym){ addr, size, copy };
	return 0;
}

static bool is_func(const GElf_Sym *s)
{
	int t = GELF_ST_TYPE(s->st_info);
	return (t == STT_FUNC || t == STT_GNU_IFUNC) && s->st_value && s->st_shndx != SHN_UNDEF;
}

/* Adds the function symbols of one symbol table section. */
static int read_table(struct sym_elf *e, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !sh->sh_entsize || sh->sh_type == SHT_NOBITS)
		return 0;
	size_t n = d->d_size / sh->sh_entsize;
	for (size_t i = 0; i < n && i <= INT32_MAX; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s) || !is_func(&s))
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		int ret = add_sym(e, name, s.st_value, s.st_size);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Adds the function symbols of every SYMTAB/DYNSYM section; *has_symtab
 * says whether a (non-empty) .symtab was there, i.e. it is not stripped. */
static int read_symbols(struct sym_elf *e, Elf *elf, bool *has_symtab)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		size_t before = e->n;
		int ret = read_table(e, elf, scn, &sh);
		if (ret < 0)
			return ret;
		if (sh.sh_type == SHT_SYMTAB && e->n > before)
			*has_symtab = true;
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
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

/* Decompresses an xz stream into a malloc'd buffer; NULL when it is not
 * one (or too big). */
static uint8_t *unxz(const uint8_t *in, size_t len, size_t *outlen)
{
	lzma_stream s = LZMA_STREAM_INIT;
	size_t cap = 0, first = len * 4 + 4096;
	uint8_t *out = NULL;
	lzma_ret r = LZMA_OK;
	if (lzma_stream_decoder(&s, 512u << 20, 0) != LZMA_OK)
		return NULL;
	s.next_in = in;
	s.avail_in = len;
	while (r == LZMA_OK) {
		if ((cap ? cap * 2 : first) > MINI_MAX_OUT || MEM_GROW(out, cap, s.total_out + 1, first))
			break;
		s.next_out = out + s.total_out;
		s.avail_out = cap - s.total_out;
		r = lzma_code(&s, LZMA_FINISH);
	}
	*outlen = s.total_out;
	lzma_end(&s);
	if (r != LZMA_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

/* MiniDebugInfo: .gnu_debugdata holds an xz-compressed ELF with a .symtab. */
static int read_minidebug(struct sym_elf *e, Elf *elf, bool *has_symtab)
{
	Elf_Scn *scn = section(elf, ".gnu_debugdata");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	size_t len;
	if (!d || !d->d_buf || !d->d_size)
		return 0;
	uint8_t *img = unxz(d->d_buf, d->d_size, &len);
	if (!img)
		return 0; /* undecodable: the file's own symbols stay */
	Elf *mini = elf_memory((char *)img, len);
	int ret = 0;
	if (mini && elf_kind(mini) == ELF_K_ELF)
		ret = read_symbols(e, mini, has_symtab);
	if (mini)
		elf_end(mini);
	free(img);
	return ret;
}

int sym_open_elf(const char *path, int *fd, Elf **elf)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
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

/* The NT_GNU_BUILD_ID note's bytes into E (none: build_id_len 0). */
static void read_build_id(struct sym_elf *e, Elf *elf)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || nh.n_descsz < 2 ||
			    nh.n_descsz > sizeof(e->build_id) ||
			    memcmp((const char *)d->d_buf + noff, "GNU", 4) != 0)
				continue;
			memcpy(e->build_id, (const uint8_t *)d->d_buf + doff, nh.n_descsz);
			e->build_id_len = (uint8_t)nh.n_descsz;
			return;
		}
	}
}

int sym_build_id_path(const char *debug_root, const uint8_t *id, size_t n, char *buf, size_t len)
{
	if (n < 2)
		return -ENOENT;
	int w = snprintf(buf, len, "%s/.build-id/%02x/", debug_root, id[0]);
	for (size_t i = 1; i < n && w > 0 && (size_t)w < len; i++)
		w += snprintf(buf + w, len - (size_t)w, "%02x", id[i]);
	if (w <= 0 || (size_t)w + sizeof(".debug") > len)
		return -ENAMETOOLONG;
	memcpy(buf + w, ".debug", sizeof(".debug"));
	return 0;
}

/* Reads the symbols of debuginfo file CAND; true when it had a .symtab. */
static int try_debug_file(struct sym_elf *e, const char *cand, const char *path, bool *found)
{
	int fd;
	Elf *dbg;
	if (strcmp(cand, path) == 0 || sym_open_elf(cand, &fd, &dbg) < 0)
		return 0;
	int ret = read_symbols(e, dbg, found);
	elf_end(dbg);
	close(fd);
	return ret;
}

/* Separate debuginfo: by build-id, then the .gnu_debuglink name beside the
 * file, in its .debug/ and under DEBUG_ROOT + its directory. */
static int read_debuginfo(struct sym_elf *e, Elf *elf, const char *path, const char *debug_root,
			  bool *found)
{
	char cand[4096];
	int ret = 0;
	if (sym_build_id_path(debug_root, e->build_id, e->build_id_len, cand, sizeof(cand)) == 0)
		ret = try_debug_file(e, cand, path, found);
	Elf_Scn *scn = section(elf, ".gnu_debuglink");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	if (ret < 0 || *found || !d || !d->d_buf || d->d_size < 2 ||
	    !memchr(d->d_buf, '\0', d->d_size) || strchr(d->d_buf, '/'))
		return ret;
	const char *link = d->d_buf, *slash = strrchr(path, '/');
	int dl = slash ? (int)(slash - path) : 0;
	const char *fmt[] = { "%s%.*s/%s", "%s%.*s/.debug/%s", "%s%.*s/%s" };
	for (int i = 0; i < 3 && ret == 0 && !*found; i++) {
		const char *root = i == 2 ? debug_root : "";
		if (snprintf(cand, sizeof(cand), fmt[i], root, dl, path, link) < (int)sizeof(cand))
			ret = try_debug_file(e, cand, path, found);
	}
	return ret;
}

static int esym_cmp(const void *a, const void *b)
{
	const struct esym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* aliases: the sized one with the fewest leading underscores names it,
	 * but for the vDSO's own names (__vdso_clock_gettime, as perf names
	 * them): their weak aliases are the C library's function names, and
	 * "clock_gettime;clock_gettime" would hide which is which */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	bool vx = strncmp(x->name, "__vdso_", 7) == 0, vy = strncmp(y->name, "__vdso_", 7) == 0;
	if (vx != vy)
		return vx ? -1 : 1;
	size_t ux = strspn(x->name, "_"), uy = strspn(y->name, "_");
	if (ux != uy)
		return ux < uy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sorts and drops repeats (.symtab and .dynsym list most functions twice). */
static void sort_dedup(struct sym_elf *e)
{
	size_t w = 0;
	if (!e->n)
		return;
	qsort(e->syms, e->n, sizeof(*e->syms), esym_cmp);
	for (size_t i = 0; i < e->n; i++) {
		bool seen = false;
		for (size_t j = w; j > 0 && e->syms[j - 1].addr == e->syms[i].addr && !seen; j--)
			seen = strcmp(e->syms[j - 1].name, e->syms[i].name) == 0;
		if (!seen)
			e->syms[w++] = e->syms[i];
	}
	e->n = w;
}

static void read_segments(struct sym_elf *e, Elf *elf)
{
	size_t n;
	GElf_Ehdr eh;
	if (gelf_getehdr(elf, &eh)) {
		e->dyn = eh.e_type == ET_DYN;
		e->entry = eh.e_entry;
	}
	if (elf_getphdrnum(elf, &n) != 0)
		return;
	for (size_t i = 0; i < n && i <= INT32_MAX && e->nsegs < MAX_SEGS; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			e->segs[e->nsegs++] = (struct seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
}

/* Names the entry code "_start" where no symbol does (a stripped program,
 * Debian's ld.so), up to SYM_ENTRY_SPAN bytes or the next symbol: the
 * frame the unwinder takes as the outermost then has the name every
 * other program's outermost frame has. After sort_dedup. */
static int name_entry(struct sym_elf *e)
{
	if (!e->entry || sym_elf_lookup(e, e->entry, NULL))
		return 0;
	size_t next = sym_addr_upper_bound(e->syms, e->n, sizeof(*e->syms), e->entry);
	uint64_t span = SYM_ENTRY_SPAN;
	if (next < e->n && e->syms[next].addr - e->entry < span)
		span = e->syms[next].addr - e->entry;
	int ret = add_sym(e, "_start", e->entry, span);
	if (ret == 0) { /* into its place: the table is sorted already */
		struct esym start = e->syms[e->n - 1];
		memmove(&e->syms[next + 1], &e->syms[next], (e->n - 1 - next) * sizeof(*e->syms));
		e->syms[next] = start;
	}
	return ret;
}

/* ELF's symbols, segments and build-id, then (PATH set) its debuginfo
 * and MiniDebugInfo where it has no .symtab, sorted: 0 and *OUT, or
 * -errno. */
static int load_elf(Elf *elf, const char *path, const char *debug_root, struct sym_elf **out)
{
	bool has_symtab = false;
	struct sym_elf *e = calloc(1, sizeof(*e));
	int ret = e ? read_symbols(e, elf, &has_symtab) : -ENOMEM;
	if (ret == 0) {
		read_segments(e, elf);
		read_build_id(e, elf);
	}
	if (ret == 0 && !has_symtab && path)
		ret = read_debuginfo(e, elf, path, debug_root ? debug_root : "/usr/lib/debug",
				     &has_symtab);
	if (ret == 0 && !has_symtab && path)
		ret = read_minidebug(e, elf, &has_symtab);
	if (ret < 0) {
		sym_elf_free(e);
		return ret;
	}
	e->named = has_symtab;
	sort_dedup(e);
	ret = name_entry(e);
	if (ret < 0) {
		sym_elf_free(e);
		return ret;
	}
	*out = e;
	return 0;
}

int sym_elf_load(const char *path, const char *debug_root, struct sym_elf **out)
{
	int fd;
	Elf *elf;
	int ret = sym_open_elf(path, &fd, &elf);
	if (ret < 0)
		return ret;
	ret = load_elf(elf, path, debug_root, out);
	elf_end(elf);
	close(fd);
	return ret;
}

int sym_elf_dynsym(Elf *e, const char *name, uint64_t *value)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && i <= INT32_MAX; i++) {
			GElf_Sym sym;
			const char *n;
			if (gelf_getsym(d, (int)i, &sym) && (n = elf_strptr(e, sh.sh_link, sym.st_name)) &&
			    strcmp(n, name) == 0) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int sym_elf_load_image(const uint8_t *img, size_t len, struct sym_elf **out)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	/* read only, as unwind_files.c's read-only mappings of files: libelf
	 * writes into an image only to convert a foreign byte order */
	Elf *elf = elf_memory((char *)img, len);
	if (!elf)
		return -ENOMEM;
	int ret = elf_kind(elf) == ELF_K_ELF ? load_elf(elf, NULL, NULL, out) : -ENOEXEC;
	elf_end(elf);
	return ret;
}

void sym_elf_free(struct sym_elf *e)
{
	if (!e)
		return;
	mem_arena_free(&e->names);
	free(e->syms);
	free(e);
}

int sym_elf_offset_to_vaddr(const struct sym_elf *e, uint64_t off, uint64_t *vaddr)
{
	for (int i = 0; e && i < e->nsegs; i++) {
		if (off >= e->segs[i].off && off - e->segs[i].off < e->segs[i].filesz) {
			*vaddr = off - e->segs[i].off + e->segs[i].vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const char *sym_elf_lookup(const struct sym_elf *e, uint64_t vaddr, uint64_t *off)
{
	size_t lo = e ? sym_addr_upper_bound(e->syms, e->n, sizeof(*e->syms), vaddr) : 0;
	if (lo == 0)
		return NULL;
	while (lo > 1 && e->syms[lo - 2].addr == e->syms[lo - 1].addr)
		lo--; /* the preferred alias sorts first */
	const struct esym *s = &e->syms[lo - 1];
	/* sized: must be inside; size 0 (asm): up to the next symbol */
	if (s->size && vaddr - s->addr >= s->size)
		return NULL;
	if (off)
		*off = vaddr - s->addr;
	return s->name;
}

int sym_elf_foreach(const struct sym_elf *e,
		    int (*fn)(void *ctx, const char *name, uint64_t vaddr, uint64_t size), void *ctx)
{
	for (size_t i = 0; e && i < e->n; i++) {
		int ret = fn(ctx, e->syms[i].name, e->syms[i].addr, e->syms[i].size);
		if (ret)
			return ret;
	}
	return 0;
}

bool sym_elf_is_dyn(const struct sym_elf *e)
{
	return e && e->dyn;
}

const uint8_t *sym_elf_build_id(const struct sym_elf *e, size_t *n)
{
	*n = e ? e->build_id_len : 0;
	return *n ? e->build_id : NULL;
}

bool sym_elf_named(const struct sym_elf *e)
{
	return e && e->named;
}

int sym_elf_add_debug(struct sym_elf *e, const char *debug_path)
{
	bool found = false;
	int ret = try_debug_file(e, debug_path, "", &found);
	if (ret == 0 && !found)
		ret = -ENOENT; /* not a debug file with a .symtab */
	e->named |= found;
	sort_dedup(e); /* what was added, sorted in (and _start kept once) */
	int named = name_entry(e);
	return ret < 0 ? ret : named;
}
