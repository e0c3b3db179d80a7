/* --call-graph dwarf (libunwind): a sample's copied user stack unwound
 * in a remote address space whose memory is the copy (stack addresses)
 * and the mapped files themselves (code, .eh_frame_hdr, .eh_frame), and
 * whose registers are the sampled ones. A file's unwind table is found
 * through its PT_GNU_EH_FRAME header, read once per file and kept while
 * the file is among the recently used (bounded by count and bytes); each
 * process gets an address space with libunwind's global cache of register
 * rules per ip, dropped when the process's layout changes (an exec, a
 * library mapped over another: sym_procs_image). sym_unwind also keeps
 * each ip's CFA rule when it is a simple one (learnt by probing libunwind,
 * see "rules" below) and walks later samples by the rules alone. */
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
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

/* Exported by libunwind (perf calls it the same way) but left out of its
 * public header: the binary search of an .eh_frame_hdr table read through
 * the address space's accessors. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

#define UNWIND_PROCS 64     /* processes with an address space kept */
/* files kept mapped, least recently used out (symbolize/lru.c): a walk
 * of clang touches libLLVM (110 MB) and libclang-cpp (59 MB), which must
 * both stay */
#define UNWIND_FILES 64
#define UNWIND_FILE_BYTES (256ull << 20)
#define WALK_FILES 8        /* files one walk remembers */
#define MAX_LOADS 16
#define UNWIND_CUT_RANGE (64ULL << 20)
#define SPLICE_LOOK 4       /* chain entries a CFI return address is looked for in */
#define FP_CACHE 4096       /* ips whose repair is known (a power of two) */
#define RULE_CACHE 8192     /* ips whose CFA rule is known (a power of two) */
#define RULE_FRAMES 128     /* frames of one walk whose rules are learnt */
#define RULE_DELTA 64       /* rbp's shift in the second probe */

/* One ELF file, mapped read-only: its PT_LOAD segments and unwind table. */
struct ufile {
	char *path;
	const uint8_t *map;
	size_t size;
	struct { uint64_t vaddr, off, filesz; } load[MAX_LOADS];
	int nload;
	uint64_t lo, hi;              /* vaddr range of the PT_LOADs */
	uint64_t hdr, table, nfde;    /* .eh_frame_hdr vaddr, its table's, entries */
	uint64_t entry;               /* e_entry: where the program (or ld.so) starts */
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
	struct ufile *files[UNWIND_FILES]; /* NULL: an empty slot */
	struct sym_lru_entry lru[UNWIND_FILES];
	uint64_t clock; /* file uses so far: LRU's time */
	/* sym_unwind_splice's repair per ip (per process layout, whose serial
	 * sym_procs_image never gives twice, direct-mapped):
	 * RA_SLOT 0 when the function keeps a frame pointer there (the first
	 * CFI step gave the chain's own next return address: no repair), else
	 * 1 + the stack slot (8 bytes from sp) of the one return address the
	 * chain lacks (a frameless leaf, a function's first instruction): the
	 * CFA rule of a pc is fixed, so that slot is the same every time */
	struct { uint32_t pid, ra_slot; uint64_t image, ip; } top[FP_CACHE];
	/* sym_unwind's rules per ip (per process layout, direct-mapped; the
	 * key is ip * 2 + 1 for a return address, whose row libunwind takes at
	 * ip - 1): CFA = rsp or rbp + CFA_OFF, the return address at CFA +
	 * RA_OFF, rbp at CFA + BP_OFF or unchanged; END where the walk stops */
	struct urule { uint32_t pid; uint8_t kind; bool bp_saved; int32_t cfa_off, ra_off, bp_off;
		       uint64_t image, key; } rules[RULE_CACHE];
	bool no_rules;
	unw_addr_space_t probe_as; /* the probes' own, uncached: walks' caches untouched */
	uint64_t n_ruled, n_full; /* sym_unwind's walks by the rules, and full */
	uint64_t n_learnt;        /* rules learnt by learn_frame */
	/* the frames of sym_unwind's last full walk: rip, rsp, rbp; RET is
	 * the last unw_step's answer */
	struct { uint64_t ip, sp, bp; } fr[RULE_FRAMES + 1];
	uint32_t nfr;
	int last_ret;
	/* the walk in progress; REGS what access_reg gives (a probe's own) */
	const struct sym_ustack *cur;
	const uint64_t *regs;
	struct { uint64_t lo, hi, bias; struct ufile *f; } seen[WALK_FILES];
	unsigned nseen;
	bool cut;
	bool ended; /* the last sym_unwind reached the outermost frame */
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

/* The kept file at PATH, opened on first use; NULL if it cannot be read.
 * Files the walk in progress holds (seen) stay. */
static struct ufile *ufile_get(struct sym_unwinder *u, const char *path)
{
	for (unsigned i = 0; i < UNWIND_FILES; i++)
		if (u->files[i] && strcmp(u->files[i]->path, path) == 0) {
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
		ufile_free(u->files[v]);
		u->files[v] = NULL;
		u->lru[v] = (struct sym_lru_entry){ 0 };
	}
	for (unsigned i = 0; i < UNWIND_FILES; i++)
		if (!u->files[i]) {
			u->files[i] = f;
			u->lru[i] = (struct sym_lru_entry){ .used = ++u->clock, .bytes = f->size };
			return f;
		}
	ufile_free(f); /* every slot pinned: cannot be, a walk pins WALK_FILES */
	return NULL;
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
	/* one the sample did not take (the fp and copy methods take ip, sp,
	 * bp, r10 and r11): a rule that needs it fails its step, and the splice keeps
	 * the frame-pointer chain as it is (as where there is no CFI), rather
	 * than walking on from a made-up 0 */
	const struct sym_ustack *s = u->cur;
	if (s && u->regs == s->regs && s->regs_known && !(s->regs_known & (1u << reg)))
		return -UNW_EBADREG;
	*valp = u->regs[reg];
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

int sym_unwinder_alloc(struct sym_procs *procs, struct sym_unwinder **out)
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
	for (unsigned i = 0; i < UNWIND_FILES; i++)
		ufile_free(u->files[i]);
	if (u->probe_as)
		unw_destroy_addr_space(u->probe_as);
	free(u);
}

/* The address space of the walk's process, its cache kept while its
 * layout stays. */
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

/* proc_as for S's process, set as the walk in progress */
static unw_addr_space_t proc_as_of(struct sym_unwinder *u, const struct sym_ustack *s)
{
	u->cur = s;
	return proc_as(u);
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
/* The bytes from a file's entry point within which its first call is made:
 * _start's call of __libc_start_main (~37 bytes in), ld.so's of _dl_start */
#define ENTRY_CALL_SPAN 64

/* Whether IP (a caller's: its return address less one) is in a program's
 * or the dynamic loader's entry code: the outermost frame, whether the file
 * gives it CFI (glibc's _start marks its return address undefined) or not
 * (Debian's ld.so's _start has none) */
static bool at_entry(struct sym_unwinder *u, uint64_t ip)
{
	uint64_t bias;
	const struct ufile *f = file_at(u, ip, &bias);
	return f && f->entry && ip - bias >= f->entry && ip - bias < f->entry + ENTRY_CALL_SPAN;
}

/* Whether the code at IP (a caller's: its return address less one) has
 * CFI. Asked of the files' tables: on x86-64 unw_get_proc_info answers 0
 * for a frame without any, so that is no test. */
static bool has_cfi(struct sym_unwinder *u, unw_addr_space_t as, uint64_t ip)
{
	unw_proc_info_t pi;
	return unw_get_proc_info_by_ip(as, ip, &pi, u) == 0;
}

static uint32_t walk(struct sym_unwinder *u, const struct sym_ustack *s, const uint64_t *chain,
		     uint32_t nchain, uint64_t *ips, uint32_t max, bool *cut, bool *failed,
		     bool *met, bool *cfi)
{
	*cut = false;
	*failed = true;
	*met = false;
	*cfi = false;
	u->ended = false;
	if (max == 0)
		return 0;
	u->cur = s;
	u->regs = s->regs;
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
	*cfi = has_cfi(u, as, s->regs[16]);
	int ret = 1;
	u->fr[0].ip = s->regs[16], u->fr[0].sp = s->regs[7], u->fr[0].bp = s->regs[6];
	u->nfr = 1;
	while (n < max && (ret = unw_step(&c)) > 0) {
		unw_word_t ip, sp, bp;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
			break;
		if (u->nfr <= RULE_FRAMES && unw_get_reg(&c, UNW_X86_64_RSP, &sp) == 0 &&
		    unw_get_reg(&c, UNW_X86_64_RBP, &bp) == 0) {
			u->fr[u->nfr].ip = ip, u->fr[u->nfr].sp = sp, u->fr[u->nfr].bp = bp;
			u->nfr++;
		}
		if (ip == 0) {
			/* a zero return address ends some stacks, when the CFI
			 * says so: libunwind's guess where there is none (the
			 * rbp chain) may read a zero anywhere */
			u->ended = has_cfi(u, as, ips[n - 1] - (n > 1)) ||
				   at_entry(u, ips[n - 1] - (n > 1));
			break;
		}
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
	/* unw_step's 0 is the stack's end when the frame's CFI says so
	 * (_start's and clone3's mark their return address undefined) or the
	 * frame is an entry point's; in other code without CFI (hand-written
	 * assembly, as GMP's mpn routines, a stripped program's _init) it is
	 * libunwind's rbp guess giving up, and a walk that stopped there is
	 * not whole */
	uint64_t last = ips[n - 1] - (n > 1);
	u->last_ret = ret == 0 && !has_cfi(u, as, last) && !at_entry(u, last) ? -UNW_ENOINFO : ret;
	u->ended |= u->last_ret == 0;
	*cut = u->cut;
	return n;
}

static uint32_t walk_full(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t *ips,
			  uint32_t max, bool *cut)
{
	bool failed, met, cfi;
	u->nfr = 0;
	return walk(u, s, NULL, 0, ips, max, cut, &failed, &met, &cfi);
}

/* ---- sym_unwind's rules per ip: a full walk's frames teach them (each
 * checked by two probes: libunwind steps from the frame's rsp and rbp
 * alone, then with rbp shifted, which tell an rsp-based CFA from an
 * rbp-based one and where the return address and rbp were read); later
 * samples apply them with a few loads from the copy ---- */

enum { RULE_NONE, RULE_SP, RULE_BP, RULE_END, RULE_NOT };

static struct urule *rule_slot(struct sym_unwinder *u, uint32_t pid, uint64_t key)
{
	return &u->rules[(key ^ (key >> 13) ^ pid) & (RULE_CACHE - 1)];
}

/* One step by libunwind from IP, SP and BP alone (every other register 0)
 * in S's copy: 1 with the caller's rip, rsp, rbp in OUT and where rip and
 * rbp were read (*BP_LOC 0: rbp unchanged), 0 at the stack's end, -1 when
 * the step is no simple rule's (no CFI, a signal frame, a failed read). */
static int probe(struct sym_unwinder *u, unw_addr_space_t as, const struct sym_ustack *s,
		 const uint64_t in[3], uint64_t out[3], uint64_t *ra_loc, uint64_t *bp_loc)
{
	uint64_t r[17] = { 0 };
	r[16] = in[0], r[7] = in[1], r[6] = in[2];
	u->cur = s, u->regs = r, u->nseen = 0, u->cut = false;
	unw_cursor_t c;
	unw_save_loc_t l;
	unw_word_t v[3];
	int ret;
	if (!has_cfi(u, as, in[0]) || unw_init_remote(&c, as, u) < 0 ||
	    unw_is_signal_frame(&c) != 0 || (ret = unw_step(&c)) < 0 || u->cut)
		ret = -1;
	else if (ret > 0 && (unw_get_reg(&c, UNW_REG_IP, &v[0]) < 0 ||
			     unw_get_reg(&c, UNW_X86_64_RSP, &v[1]) < 0 ||
			     unw_get_reg(&c, UNW_X86_64_RBP, &v[2]) < 0 ||
			     unw_get_save_loc(&c, UNW_X86_64_RIP, &l) < 0 || l.type != UNW_SLT_MEMORY))
		ret = -1;
	if (ret > 0) {
		out[0] = v[0], out[1] = v[1], out[2] = v[2];
		*ra_loc = l.u.addr;
		*bp_loc = unw_get_save_loc(&c, UNW_X86_64_RBP, &l) == 0 &&
			  l.type == UNW_SLT_MEMORY ? l.u.addr : 0;
	}
	u->regs = s->regs;
	return ret > 0 ? 1 : ret;
}

/* Whether IP is a signal frame's (libunwind looks at its code) */
static bool signal_at(struct sym_unwinder *u, unw_addr_space_t as, const struct sym_ustack *s,
		      uint64_t ip, uint64_t sp)
{
	uint64_t r[17] = { 0 };
	r[16] = ip, r[7] = sp;
	u->cur = s, u->regs = r, u->nseen = 0, u->cut = false;
	unw_cursor_t c;
	bool sig = unw_init_remote(&c, as, u) < 0 || unw_is_signal_frame(&c) != 0;
	u->regs = s->regs;
	return sig;
}

/* The word at ADDR in S's copy; false beyond it */
static bool copy_word(const struct sym_ustack *s, uint64_t addr, uint64_t *w)
{
	uint64_t sp = s->regs[7];
	if (addr < sp || addr - sp > s->size || s->size - (addr - sp) < 8)
		return false;
	memcpy(w, s->stack + (addr - sp), 8);
	return true;
}

/* R applied to a frame's SP and BP in S: the caller's rip, rsp, rbp;
 * false when a word lies beyond the copy. */
static bool rule_apply(const struct urule *r, const struct sym_ustack *s, uint64_t sp,
		       uint64_t bp, uint64_t out[3])
{
	uint64_t cfa = (r->kind == RULE_BP ? bp : sp) + (uint64_t)(int64_t)r->cfa_off;
	out[1] = cfa;
	out[2] = bp;
	return copy_word(s, cfa + (uint64_t)(int64_t)r->ra_off, &out[0]) &&
	       (!r->bp_saved || copy_word(s, cfa + (uint64_t)(int64_t)r->bp_off, &out[2]));
}

/* The rule of frame K of the last full walk of S, from two probes, or
 * RULE_NONE when it cannot be learnt from this sample (a word beyond the
 * copy) */
static struct urule learn_one(struct sym_unwinder *u, unw_addr_space_t as,
			      const struct sym_ustack *s, uint32_t k)
{
	struct urule r = { .kind = RULE_NOT };
	if (k + 1 >= u->nfr && u->last_ret != 0)
		return (struct urule){ .kind = RULE_NONE }; /* no caller seen to check against */
	if (signal_at(u, as, s, u->fr[k].ip, u->fr[k].sp))
		return r;
	uint64_t in[3] = { u->fr[k].ip - (k > 0), u->fr[k].sp, u->fr[k].bp }, o1[3], o2[3], o3[3];
	uint64_t ra1, ra2, ra3, bp1, bp2, bp3;
	int p1 = probe(u, as, s, in, o1, &ra1, &bp1);
	in[2] += RULE_DELTA;
	int p2 = probe(u, as, s, in, o2, &ra2, &bp2);
	/* rsp shifted too: a CFA read from the stack (a signal frame's
	 * expression, dereferencing rsp + N) does not shift with it */
	in[2] -= RULE_DELTA, in[1] += RULE_DELTA;
	int p3 = probe(u, as, s, in, o3, &ra3, &bp3);
	if (p1 == 0 && p2 == 0 && p3 == 0 && k + 1 == u->nfr && u->last_ret == 0)
		return (struct urule){ .kind = RULE_END };
	if (k + 1 >= u->nfr)
		return (struct urule){ .kind = RULE_NONE }; /* no caller seen to check against */
	if (p1 != 1 || p2 != 1 || p3 != 1 || o1[0] != u->fr[k + 1].ip ||
	    o1[1] != u->fr[k + 1].sp || o1[2] != u->fr[k + 1].bp)
		return (struct urule){ .kind = (p1 < 0 || p2 < 0 || p3 < 0) && u->cut ?
					       RULE_NONE : RULE_NOT };
	int64_t sshift = (int64_t)(o3[1] - o1[1]);
	int64_t shift = (int64_t)(o2[1] - o1[1]);
	if ((shift != 0 && shift != RULE_DELTA) || sshift != (shift ? 0 : RULE_DELTA) ||
	    ra3 - o3[1] != ra1 - o1[1] || (bp1 && bp3 - o3[1] != bp1 - o1[1]))
		return r;
	r.kind = shift ? RULE_BP : RULE_SP;
	r.cfa_off = (int32_t)(o1[1] - (shift ? u->fr[k].bp : u->fr[k].sp));
	r.ra_off = (int32_t)(ra1 - o1[1]);
	if (ra2 - o2[1] != ra1 - o1[1])
		return (struct urule){ .kind = RULE_NOT };
	r.bp_saved = bp1 != 0;
	if (r.bp_saved) {
		r.bp_off = (int32_t)(bp1 - o1[1]);
		if (!bp2 || bp2 - o2[1] != bp1 - o1[1])
			return (struct urule){ .kind = RULE_NOT };
	} else if (bp2 || o1[2] != u->fr[k].bp || o2[2] != u->fr[k].bp + RULE_DELTA) {
		return (struct urule){ .kind = RULE_NOT };
	}
	/* the rule must give the walk's own caller, and the probe's */
	uint64_t a[3];
	if (!rule_apply(&r, s, u->fr[k].sp, u->fr[k].bp, a) || a[0] != o1[0] || a[1] != o1[1] ||
	    a[2] != o1[2])
		return (struct urule){ .kind = RULE_NONE };
	return r;
}

/* Learns the rules of the last full walk's frames not known yet, up to
 * the first signal frame (after one, libunwind takes a row at the ip
 * itself, not ip - 1). */
static void learn(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image)
{
	if (!image || u->nfr == 0)
		return;
	if (!u->probe_as && (u->probe_as = unw_create_addr_space(&accessors, 0)))
		unw_set_caching_policy(u->probe_as, UNW_CACHE_NONE);
	unw_addr_space_t as = u->probe_as;
	for (uint32_t k = 0; as && k < u->nfr; k++) {
		if (u->fr[k].ip == 0)
			break;
		uint64_t key = u->fr[k].ip * 2 + (k > 0);
		struct urule *slot = rule_slot(u, s->pid, key);
		if (slot->kind != RULE_NONE && slot->key == key && slot->pid == s->pid &&
		    slot->image == image)
			continue;
		struct urule r = learn_one(u, as, s, k);
		if (r.kind == RULE_NONE)
			continue;
		r.pid = s->pid, r.image = image, r.key = key;
		*slot = r;
		if (r.kind == RULE_NOT && k + 1 < u->nfr)
			break; /* maybe a signal frame: what follows it is not learnt */
	}
}

/* The rule of the frame at return address F[0] (rsp F[1], rbp F[2]) of S,
 * learnt from probes there alone (as learn does from a full walk's frames,
 * whose first probe stands for the walk's step) and kept; NULL when it has
 * no simple rule or a probe needs stack beyond the copy. The probes use the
 * process's cached address space: libunwind keeps each ip's parsed CFI
 * row, not register values, and at -F 49 the uncached probes' parsing was
 * most of the reader's time (ftstack's CPU 390/341/207 ms against
 * 280/171/162 in 6 s runs, interleaved) */
static const struct urule *learn_frame(struct sym_unwinder *u, const struct sym_ustack *s,
				       uint64_t image, const uint64_t f[3])
{
	unw_addr_space_t as = proc_as_of(u, s);
	if (!as)
		return NULL;
	uint64_t in[3] = { f[0] - 1, f[1], f[2] }, o[3], ra, bp;
	int p = probe(u, as, s, in, o, &ra, &bp);
	if (p < 0)
		return NULL;
	u->fr[1].ip = f[0], u->fr[1].sp = f[1], u->fr[1].bp = f[2];
	u->fr[2].ip = o[0], u->fr[2].sp = o[1], u->fr[2].bp = o[2];
	u->nfr = p > 0 ? 3 : 2;
	u->last_ret = p;
	struct urule r = learn_one(u, as, s, 1);
	if (r.kind != RULE_SP && r.kind != RULE_BP && r.kind != RULE_END)
		return NULL;
	uint64_t key = f[0] * 2 + 1;
	struct urule *slot = rule_slot(u, s->pid, key);
	r.pid = s->pid, r.image = image, r.key = key;
	*slot = r;
	u->n_learnt++;
	return slot;
}

/* The sampled frame's one CFI step, from every register taken: a sample's
 * ip is seldom seen twice (a busy interpreter's loop has thousands), so it
 * rarely has a rule, while the return addresses above it do. 1 with the
 * caller's rip, rsp, rbp in F; 0 at the stack's end; -1 when the step
 * fails, needs stack beyond the copy or is a signal frame's (a full walk
 * then says why). */
static int leaf_step(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t f[3])
{
	uint64_t bias;
	unw_cursor_t c;
	unw_word_t v[3];
	u->cur = s, u->regs = s->regs, u->nseen = 0, u->cut = false;
	if (!file_at(u, s->regs[16], &bias))
		return -1;
	unw_addr_space_t as = proc_as(u);
	/* without CFI libunwind guesses: the full walk judges */
	if (!as || !has_cfi(u, as, s->regs[16]) || unw_init_remote(&c, as, u) < 0 ||
	    unw_is_signal_frame(&c) != 0)
		return -1;
	int ret = unw_step(&c);
	if (ret <= 0 || u->cut)
		return ret == 0 && !u->cut ? 0 : -1;
	if (unw_get_reg(&c, UNW_REG_IP, &v[0]) < 0 || unw_get_reg(&c, UNW_X86_64_RSP, &v[1]) < 0 ||
	    unw_get_reg(&c, UNW_X86_64_RBP, &v[2]) < 0)
		return -1;
	f[0] = v[0], f[1] = v[1], f[2] = v[2];
	return 1;
}

/* S unwound by the rules alone (the sampled frame by one CFI step when its
 * ip has no rule): the count, or 0 when an ip above it has none (or not a
 * simple one) or a word lies beyond the copy: then a full walk. */
static uint32_t rules_walk(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image,
			   uint64_t *ips, uint32_t max, bool *cut)
{
	*cut = false;
	u->ended = false;
	uint64_t f[3] = { s->regs[16], s->regs[7], s->regs[6] };
	uint32_t n = 0;
	ips[n++] = f[0];
	while (n < max) {
		uint64_t key = f[0] * 2 + (n > 1);
		const struct urule *r = rule_slot(u, s->pid, key);
		if ((r->key != key || r->pid != s->pid || r->image != image ||
		     r->kind == RULE_NONE || r->kind == RULE_NOT) && n == 1) {
			int st = leaf_step(u, s, f);
			if (st < 0)
				return 0;
			if (st == 0 || f[0] == 0) {
				u->ended = true;
				break;
			}
			ips[n++] = f[0];
			continue;
		}
		if ((r->key != key || r->pid != s->pid || r->image != image ||
		     r->kind == RULE_NONE) && !(r = learn_frame(u, s, image, f)))
			return 0;
		if (r->kind == RULE_NOT)
			return 0;
		if (r->kind == RULE_END) {
			u->ended = true;
			break;
		}
		if (!rule_apply(r, s, f[1], f[2], f)) {
			*cut = true; /* as libunwind's step, which needs the same word */
			break;
		}
		if (f[0] == 0) {
			u->ended = true;
			break;
		}
		ips[n++] = f[0];
	}
	return n;
}

void sym_unwinder_counts(const struct sym_unwinder *u, uint64_t *ruled, uint64_t *full)
{
	*ruled = u->n_ruled;
	*full = u->n_full;
}

uint64_t sym_unwinder_learnt(const struct sym_unwinder *u)
{
	return u->n_learnt;
}

bool sym_unwind_ended(const struct sym_unwinder *u)
{
	return u->ended;
}

void sym_unwinder_rules(struct sym_unwinder *u, bool on)
{
	u->no_rules = !on;
}

uint32_t sym_unwind(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t *ips,
		    uint32_t max, bool *cut)
{
	uint64_t image = u->no_rules ? 0 : sym_procs_image(u->procs, s->pid, s->time);
	uint32_t n = image && max ? rules_walk(u, s, image, ips, max, cut) : 0;
	if (n) {
		u->n_ruled++;
		return n;
	}
	u->n_full++;
	n = walk_full(u, s, ips, max, cut);
	if (image)
		learn(u, s, image);
	return n;
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
