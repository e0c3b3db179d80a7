/* --call-graph dwarf (libunwind): a sample's copied user stack unwound
 * in a remote address space whose memory is the copy (stack addresses)
 * and the mapped files themselves (code, .eh_frame_hdr, .eh_frame), and
 * whose registers are the sampled ones. A file's unwind table is found
 * through its PT_GNU_EH_FRAME header, read once per file and kept; each
 * process gets an address space with libunwind's global cache of register
 * rules per ip, dropped when the process exec's. */
#define UNW_REMOTE_ONLY
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/symbolize.h"

/* Exported by libunwind (perf calls it the same way) but left out of its
 * public header: the binary search of an .eh_frame_hdr table read through
 * the address space's accessors. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

#define UNWIND_PROCS 64     /* processes with an address space kept */
#define UNWIND_FILES 256    /* files with their tables kept */
#define WALK_FILES 8        /* files one walk remembers */
#define MAX_LOADS 16
#define UNWIND_CUT_RANGE (64ULL << 20)
#define SPLICE_LOOK 4       /* chain entries a CFI return address is looked for in */
#define FP_CACHE 4096       /* ips whose repair is known (a power of two) */

/* One ELF file, mapped read-only: its PT_LOAD segments and unwind table. */
struct ufile {
	char *path;
	const uint8_t *map;
	size_t size;
	struct { uint64_t vaddr, off, filesz; } load[MAX_LOADS];
	int nload;
	uint64_t lo, hi;              /* vaddr range of the PT_LOADs */
	uint64_t hdr, table, nfde;    /* .eh_frame_hdr vaddr, its table's, entries */
};

struct uproc {
	uint32_t pid;
	uint64_t image;
	unw_addr_space_t as;
};

struct sym_unwinder {
	struct sym_procs *procs;
	struct uproc procs_cache[UNWIND_PROCS];
	unsigned next_proc;
	struct ufile *files[UNWIND_FILES];
	unsigned nfiles, next_file;
	/* sym_unwind_splice's repair per ip (per process image, direct-mapped):
	 * RA_SLOT 0 when the function keeps a frame pointer there (the first
	 * CFI step gave the chain's own next return address: no repair), else
	 * 1 + the stack slot (8 bytes from sp) of the one return address the
	 * chain lacks (a frameless leaf, a function's first instruction): the
	 * CFA rule of a pc is fixed, so that slot is the same every time */
	struct { uint32_t pid, ra_slot; uint64_t image, ip; } top[FP_CACHE];
	/* the walk in progress */
	const struct sym_ustack *cur;
	struct { uint64_t lo, hi, bias; struct ufile *f; } seen[WALK_FILES];
	unsigned nseen;
	bool cut;
};

static void ufile_free(struct ufile *f)
{
	if (!f)
		return;
	if (f->map)
		munmap((void *)f->map, f->size);
	free(f->path);
	free(f);
}

/* The eh_frame_hdr's table, when it has the usual encodings (a sorted
 * table of 4-byte offsets from the header), as the linker writes it. */
static void read_eh_frame_hdr(struct ufile *f, const uint8_t *h, size_t len)
{
	if (len < 12 || h[0] != 1 || h[2] != (DW_EH_PE_udata4) ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return;
	size_t ptr_size = (h[1] & 0x0f) == DW_EH_PE_sdata4 || (h[1] & 0x0f) == DW_EH_PE_udata4 ? 4 :
			  (h[1] & 0x0f) == DW_EH_PE_sdata8 || (h[1] & 0x0f) == DW_EH_PE_udata8 ? 8 : 0;
	if (!ptr_size || len < 4 + ptr_size + 4)
		return;
	uint32_t n;
	memcpy(&n, h + 4 + ptr_size, sizeof(n));
	if ((uint64_t)n * 8 > len - (4 + ptr_size + 4))
		return;
	f->nfde = n;
	f->table = f->hdr + 4 + ptr_size + 4;
}

static struct ufile *ufile_open(const char *path)
{
	struct ufile *f = calloc(1, sizeof(*f));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	Elf *e = NULL;
	if (!f || fd < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		goto fail;
	f->size = (size_t)st.st_size;
	f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		goto fail;
	}
	size_t nph;
	if (!(f->path = strdup(path)) || !(e = elf_memory((char *)f->map, f->size)) ||
	    elf_getphdrnum(e, &nph) < 0)
		goto fail;
	f->lo = UINT64_MAX;
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
		f->hdr = eh.p_vaddr;
		read_eh_frame_hdr(f, f->map + eh.p_offset, eh.p_filesz);
	}
	elf_end(e);
	close(fd);
	return f;
fail:
	elf_end(e);
	if (fd >= 0)
		close(fd);
	ufile_free(f);
	return NULL;
}

/* The kept file at PATH, opened on first use; NULL if it cannot be read. */
static struct ufile *ufile_get(struct sym_unwinder *u, const char *path)
{
	for (unsigned i = 0; i < u->nfiles; i++)
		if (u->files[i] && strcmp(u->files[i]->path, path) == 0)
			return u->files[i];
	struct ufile *f = ufile_open(path);
	if (!f)
		return NULL;
	unsigned slot = u->nfiles < UNWIND_FILES ? u->nfiles++ : u->next_file++ % UNWIND_FILES;
	ufile_free(u->files[slot]);
	u->files[slot] = f;
	return f;
}

/* The file mapped at ADDR in the walk's process, and its load bias. */
static struct ufile *file_at(struct sym_unwinder *u, uint64_t addr, uint64_t *bias)
{
	for (unsigned i = 0; i < u->nseen; i++)
		if (addr >= u->seen[i].lo && addr < u->seen[i].hi) {
			*bias = u->seen[i].bias;
			return u->seen[i].f;
		}
	const char *path;
	const struct sym_ustack *s = u->cur;
	if (sym_procs_module(u->procs, s->pid, s->time, addr, &path, bias) < 0)
		return NULL;
	struct ufile *f = ufile_get(u, path);
	if (f && f->lo < f->hi && u->nseen < WALK_FILES)
		u->seen[u->nseen++] = (typeof(u->seen[0])){ f->lo + *bias, f->hi + *bias, *bias, f };
	return f;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct sym_unwinder *u = arg;
	uint64_t bias;
	struct ufile *f = file_at(u, ip, &bias);
	if (!f || !f->nfde)
		return -UNW_ENOINFO;
	unw_dyn_info_t di = {
		.format = UNW_INFO_FORMAT_REMOTE_TABLE,
		.start_ip = f->lo + bias, .end_ip = f->hi + bias,
		.u.rti = { .segbase = f->hdr + bias, .table_data = f->table + bias,
			   .table_len = f->nfde * 8 / sizeof(unw_word_t) },
	};
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as, (void)pi, (void)arg; /* libunwind frees what its table search made */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	(void)as, (void)dilap, (void)arg;
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
		      void *arg)
{
	(void)as;
	struct sym_unwinder *u = arg;
	const struct sym_ustack *s = u->cur;
	uint64_t sp = s->regs[7], bias;
	if (write)
		return -UNW_EINVAL;
	if (addr >= sp && addr - sp <= s->size && s->size - (addr - sp) >= sizeof(*valp)) {
		memcpy(valp, s->stack + (addr - sp), sizeof(*valp));
		return 0;
	}
	struct ufile *f = addr >= sp && addr - sp < UNWIND_CUT_RANGE ? NULL : file_at(u, addr, &bias);
	for (int i = 0; f && i < f->nload; i++) {
		uint64_t v = addr - bias;
		if (v >= f->load[i].vaddr && v - f->load[i].vaddr <= f->load[i].filesz &&
		    f->load[i].filesz - (v - f->load[i].vaddr) >= sizeof(*valp)) {
			memcpy(valp, f->map + f->load[i].off + (v - f->load[i].vaddr), sizeof(*valp));
			return 0;
		}
	}
	if (addr >= sp && addr - sp < UNWIND_CUT_RANGE)
		u->cut = true; /* a stack word the copy did not reach */
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write,
		      void *arg)
{
	(void)as;
	struct sym_unwinder *u = arg;
	/* libunwind's x86-64 numbering is DWARF's: rax..r15, then rip */
	if (write || reg < 0 || reg > UNW_X86_64_RIP)
		return -UNW_EBADREG;
	*valp = u->cur->regs[reg];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	(void)as, (void)reg, (void)val, (void)write, (void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as, (void)c, (void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	(void)as, (void)addr, (void)buf, (void)len, (void)off, (void)arg;
	return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

int sym_unwinder_create(struct sym_procs *procs, struct sym_unwinder **out)
{
	struct sym_unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	u->procs = procs;
	*out = u;
	return 0;
}

void sym_unwinder_free(struct sym_unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < UNWIND_PROCS; i++)
		if (u->procs_cache[i].as)
			unw_destroy_addr_space(u->procs_cache[i].as);
	for (unsigned i = 0; i < u->nfiles; i++)
		ufile_free(u->files[i]);
	free(u);
}

/* The address space of the walk's process, its cache kept until an exec. */
static unw_addr_space_t proc_as(struct sym_unwinder *u)
{
	const struct sym_ustack *s = u->cur;
	uint64_t image = sym_procs_image(u->procs, s->pid, s->time);
	struct uproc *slot = NULL;
	for (int i = 0; i < UNWIND_PROCS && !slot; i++)
		if (u->procs_cache[i].as && u->procs_cache[i].pid == s->pid)
			slot = &u->procs_cache[i];
	if (slot && slot->image != image)
		unw_flush_cache(slot->as, 0, 0);
	if (!slot) {
		slot = &u->procs_cache[u->next_proc++ % UNWIND_PROCS];
		if (slot->as)
			unw_flush_cache(slot->as, 0, 0);
		else if ((slot->as = unw_create_addr_space(&accessors, 0)))
			unw_set_caching_policy(slot->as, UNW_CACHE_GLOBAL);
	}
	slot->pid = s->pid;
	slot->image = image;
	return slot->as;
}

/* The index in CHAIN[1..SPLICE_LOOK] of return address IP, or 0. */
static uint32_t chain_at(const uint64_t *chain, uint32_t nchain, uint64_t ip)
{
	for (uint32_t j = 1; j < nchain && j <= SPLICE_LOOK; j++)
		if (chain[j] == ip)
			return j;
	return 0;
}

/* The walk of sym_unwind and sym_unwind_splice: CFI steps from the sampled
 * registers, until CHAIN (if any) is met (*MET). Returns the count; *FAILED
 * when not even the first step could be made; *CFI when the ip's function
 * has CFI (else libunwind's first step followed rbp). */
static uint32_t walk(struct sym_unwinder *u, const struct sym_ustack *s, const uint64_t *chain,
		     uint32_t nchain, uint64_t *ips, uint32_t max, bool *cut, bool *failed,
		     bool *met, bool *cfi)
{
	*cut = false;
	*failed = true;
	*met = false;
	*cfi = false;
	if (max == 0)
		return 0;
	u->cur = s;
	u->nseen = 0;
	u->cut = false;
	uint32_t n = 0;
	ips[n++] = s->regs[16];
	uint64_t bias;
	if (!file_at(u, s->regs[16], &bias))
		return n; /* the ip is in no ELF file */
	unw_addr_space_t as = proc_as(u);
	unw_cursor_t c;
	if (!as || unw_init_remote(&c, as, u) < 0)
		return n;
	unw_proc_info_t pi;
	*cfi = unw_get_proc_info(&c, &pi) == 0;
	int ret;
	while (n < max && (ret = unw_step(&c)) > 0) {
		unw_word_t ip;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		*failed = false;
		ips[n++] = ip;
		uint32_t j = chain ? chain_at(chain, nchain, ip) : 0;
		if (j) { /* the frame-pointer chain holds the rest */
			*met = true;
			for (j++; j < nchain && n < max; j++)
				ips[n++] = chain[j];
			return n;
		}
	}
	*cut = u->cut;
	return n;
}

uint32_t sym_unwind(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t *ips,
		    uint32_t max, bool *cut)
{
	bool failed, met, cfi;
	return walk(u, s, NULL, 0, ips, max, cut, &failed, &met, &cfi);
}

uint32_t sym_unwind_splice(struct sym_unwinder *u, const struct sym_ustack *s,
			   const uint64_t *chain, uint32_t nchain, uint64_t *ips, uint32_t max,
			   bool *cut)
{
	bool failed, met, cfi;
	uint64_t ip = s->regs[16], image = sym_procs_image(u->procs, s->pid, s->time);
	unsigned slot = (unsigned)((ip ^ (ip >> 12) ^ s->pid) & (FP_CACHE - 1));
	typeof(u->top[0]) *t = &u->top[slot];
	if (nchain > 1 && max > 1 && t->ip == ip && t->pid == s->pid && t->image == image &&
	    (uint64_t)t->ra_slot * 8 <= s->size) {
		*cut = false;
		uint32_t n = 0;
		ips[n++] = ip;
		if (t->ra_slot) /* the caller the chain lacks, where it always is */
			memcpy(&ips[n++], s->stack + (t->ra_slot - 1) * 8, sizeof(*ips));
		for (uint32_t j = 1; j < nchain && n < max; j++)
			ips[n++] = chain[j];
		return n;
	}
	uint32_t n = walk(u, s, chain, nchain, ips, max, cut, &failed, &met, &cfi);
	if ((failed && !*cut) || (*cut && !met && nchain > n)) {
		/* no CFI to repair with, or the copy ended before the walk met
		 * the chain (then still cut): the chain as it is */
		n = nchain < max ? nchain : max;
		memcpy(ips, chain, n * sizeof(*ips));
	} else if (!met || !cfi || !image) {
		/* nothing learnt: only a step by the ip's own CFI says its rule */
	} else if (n >= 2 && nchain > 1 && ips[1] == chain[1]) {
		*t = (typeof(*t)){ .pid = s->pid, .image = image, .ip = ip, .ra_slot = 0 };
	} else if (n >= 3 && nchain > 1 && ips[2] == chain[1]) {
		/* one frame inserted: the first stack slot holding its return
		 * address (the CFI step read it from CFA - 8, at or above sp) */
		for (uint32_t i = 0; i < 64 && (uint64_t)(i + 1) * 8 <= s->size; i++) {
			uint64_t w;
			memcpy(&w, s->stack + (uint64_t)i * 8, sizeof(w));
			if (w == ips[1]) {
				*t = (typeof(*t)){ .pid = s->pid, .image = image, .ip = ip,
						   .ra_slot = i + 1 };
				break;
			}
		}
	}
	return n;
}
