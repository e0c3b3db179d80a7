/* The ELF files the unwinder reads code and unwind tables from: each
 * mapped read-only once, with its PT_LOAD segments and the table its
 * PT_GNU_EH_FRAME header points to, and kept while it is among the
 * recently used (bounded by count and bytes, symbolize/lru.c); and which
 * of them is mapped at an address of the walk's process. Apart from the
 * address space (unwind_space.c) because it is the unwinder's one cache
 * of memory that can grow large, with bounds of its own. */
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/unwind_internal.h"

#define UNWIND_FILE_BYTES (256ull << 20)

void sym_uw_file_free(struct ufile *f)
{
	if (!f)
		return;
	if (f->map && !f->borrowed)
		munmap((void *)f->map, f->size);
	free(f->path);
	free(f);
}

/* The one reader of .eh_frame_hdr: here, where the unwinder takes its
 * table; fp_elf.c samples the same table's function starts. */
long sym_eh_frame_hdr_count(const uint8_t *h, size_t len)
{
	/* version 1; eh_frame_ptr pc-relative, 4 bytes; the count 4 bytes; the
	 * table's pairs 4-byte offsets from the header */
	if (len < SYM_EH_TABLE_OFF || h[0] != 1 || h[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) ||
	    h[2] != DW_EH_PE_udata4 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -ENOENT;
	uint32_t n;
	memcpy(&n, h + 8, sizeof(n));
	return n && (uint64_t)n * 8 <= len - SYM_EH_TABLE_OFF ? (long)n : -ENOENT;
}

const uint8_t *sym_uw_file_bytes(const struct ufile *f, uint64_t v, size_t len)
{
	for (int i = 0; i < f->nload; i++)
		if (v >= f->load[i].vaddr && v - f->load[i].vaddr <= f->load[i].filesz &&
		    f->load[i].filesz - (v - f->load[i].vaddr) >= len)
			return f->map + f->load[i].off + (v - f->load[i].vaddr);
	return NULL;
}

/* CPython's perf trampoline template in F, a libpython or python (E its
 * ELF): sets f->tramp_ra when .dynsym names _Py_trampoline_func_start and
 * its code is "sub $N,%rsp; call *%rcx" (CPython 3.12 and 3.13 on x86-64:
 * N = 8), the frame each trampoline copied from it has. */
static void find_trampoline(struct ufile *f, Elf *e)
{
	const char *base = strrchr(f->path, '/');
	base = base ? base + 1 : f->path;
	if (strncmp(base, "libpython", 9) != 0 && strncmp(base, "python", 6) != 0)
		return;
	uint64_t v;
	if (sym_elf_dynsym(e, "_Py_trampoline_func_start", &v) < 0)
		return;
	static const uint8_t sub[3] = { 0x48, 0x83, 0xec }, call[2] = { 0xff, 0xd1 };
	const uint8_t *c = sym_uw_file_bytes(f, v, 6);
	if (c && memcmp(c, sub, 3) == 0 && memcmp(c + 4, call, 2) == 0 && c[3] < 0x80)
		f->tramp_ra = c[3];
}

/* PATH's bytes into F: the file mapped, or the vDSO's image, ftstack's own
 * (vdso.c: borrowed, never unmapped). Returns the file's fd (-1 for the
 * vDSO), or -2. */
static int ufile_map(struct ufile *f, const char *path)
{
	if (sym_vdso_is(path)) {
		f->borrowed = true;
		return sym_vdso_image(&f->map, &f->size) == 0 && f->size >= sizeof(Elf64_Ehdr) ?
		       -1 : -2;
	}
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -2;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(Elf64_Ehdr)) {
		f->size = (size_t)st.st_size;
		f->ino = (uint64_t)st.st_ino;
		f->dev = (uint64_t)st.st_dev;
		f->stamp = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
		m = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	if (m == MAP_FAILED) {
		close(fd);
		return -2;
	}
	f->map = m;
	return fd;
}

static struct ufile *ufile_open(const char *path)
{
	struct ufile *f = calloc(1, sizeof(*f));
	int fd = f ? ufile_map(f, path) : -2;
	Elf *e = NULL;
	if (fd == -2)
		goto fail;
	size_t nph;
	if (!(f->path = strdup(path)) || !(e = elf_memory((char *)f->map, f->size)) ||
	    elf_getphdrnum(e, &nph) < 0)
		goto fail;
	f->lo = UINT64_MAX;
	GElf_Ehdr eh_hdr;
	if (gelf_getehdr(e, &eh_hdr))
		f->entry = eh_hdr.e_entry;
	GElf_Phdr eh = { 0 };
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph))
			continue;
		if (ph.p_type == PT_GNU_EH_FRAME)
			eh = ph;
		if (ph.p_type != PT_LOAD || f->nload == MAX_LOADS || ph.p_offset > f->size ||
		    ph.p_filesz > f->size - ph.p_offset)
			continue;
		f->load[f->nload].vaddr = ph.p_vaddr;
		f->load[f->nload].off = ph.p_offset;
		f->load[f->nload++].filesz = ph.p_filesz;
		if (ph.p_vaddr < f->lo)
			f->lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > f->hi)
			f->hi = ph.p_vaddr + ph.p_memsz;
	}
	if (eh.p_type == PT_GNU_EH_FRAME && eh.p_offset <= f->size &&
	    eh.p_filesz <= f->size - eh.p_offset) {
		long n = sym_eh_frame_hdr_count(f->map + eh.p_offset, eh.p_filesz);
		f->hdr = eh.p_vaddr;
		f->nfde = n > 0 ? (uint64_t)n : 0;
		f->table = n > 0 ? f->hdr + SYM_EH_TABLE_OFF : 0;
	}
	find_trampoline(f, e);
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return f;
fail:
	elf_end(e);
	if (fd >= 0)
		close(fd);
	sym_uw_file_free(f);
	return NULL;
}

/* The kept file at PATH (with inode INO, unless 0), opened on first use;
 * NULL if it cannot be read. Files the walk in progress holds (seen) stay. */
static struct ufile *ufile_get(struct sym_unwinder *u, const char *path, uint64_t ino)
{
	for (unsigned i = 0; i < UNWIND_FILES; i++)
		if (u->files[i] && strcmp(u->files[i]->path, path) == 0 &&
		    (!ino || u->files[i]->ino == ino)) {
			u->lru[i].used = ++u->clock;
			return u->files[i];
		}
	struct ufile *f = ufile_open(path);
	if (!f)
		return NULL;
	for (unsigned i = 0; i < UNWIND_FILES; i++) {
		u->lru[i].pinned = false;
		for (unsigned j = 0; j < u->nseen && u->files[i]; j++)
			u->lru[i].pinned |= u->seen[j].f == u->files[i];
	}
	const struct sym_lru_bound bound = { UNWIND_FILES, UNWIND_FILE_BYTES };
	long v;
	while ((v = sym_lru_victim(u->lru, UNWIND_FILES, &bound, f->size)) >= 0) {
		sym_uw_file_free(u->files[v]);
		u->files[v] = NULL;
		u->lru[v] = (struct sym_lru_entry){ 0 };
	}
	for (unsigned i = 0; i < UNWIND_FILES; i++)
		if (!u->files[i]) {
			u->files[i] = f;
			u->lru[i] = (struct sym_lru_entry){ .used = ++u->clock, .bytes = f->size };
			return f;
		}
	sym_uw_file_free(f); /* every slot pinned: cannot be, a walk pins WALK_FILES */
	return NULL;
}

struct ufile *sym_uw_file_seen(const struct sym_unwinder *u, uint64_t addr, uint64_t *bias)
{
	for (unsigned i = 0; i < u->nseen; i++)
		if (addr >= u->seen[i].lo && addr < u->seen[i].hi) {
			*bias = u->seen[i].bias;
			return u->seen[i].f;
		}
	return NULL;
}

/* The file mapped at ADDR in the walk's process, and its load bias. */
struct ufile *sym_uw_file_at(struct sym_unwinder *u, uint64_t addr, uint64_t *bias)
{
	struct ufile *seen = sym_uw_file_seen(u, addr, bias);
	if (seen)
		return seen;
	const char *path;
	const struct sym_ustack *s = u->cur;
	uint64_t ino;
	if (sym_procs_module_read_path(u->procs, s->pid, s->time, addr, &path, bias, &ino) < 0)
		return NULL;
	struct ufile *f = ufile_get(u, path, ino);
	if (f && f->lo < f->hi && u->nseen < WALK_FILES)
		u->seen[u->nseen++] = (typeof(u->seen[0])){ f->lo + *bias, f->hi + *bias, *bias, f };
	return f;
}

bool sym_uw_at_entry(struct sym_unwinder *u, uint64_t ip)
{
	uint64_t bias;
	const struct ufile *f = sym_uw_file_at(u, ip, &bias);
	return f && f->entry && ip - bias >= f->entry && ip - bias < f->entry + SYM_ENTRY_SPAN;
}
