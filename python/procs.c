/* Which processes run a CPython the reader knows: the interpreter binary
 * (a python program or a libpython) among the files a process maps, its
 * symbols (_PyRuntime, PyCode_Type, Py_Version, _PyEval_EvalFrameDefault,
 * all in .dynsym, so a stripped binary has them), its version read from
 * the process (Py_Version), and its thread states by native thread id. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "aggregate/aggregate.h"
#include "mem/mem.h"
#include "python/internal.h"
#include "symbolize/symbolize.h"

#define PY_INTERPS 16       /* interpreters looked through for a thread */
#define PY_TSTATES 4096     /* thread states per interpreter, at most */

int py_read_process(void *ctx, uint32_t pid, const struct py_span *spans, unsigned n)
{
	(void)ctx;
	struct iovec local[1 + PY_PREFETCH_SPANS], remote[1 + PY_PREFETCH_SPANS];
	if (n == 0 || n > 1 + PY_PREFETCH_SPANS)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		local[i] = (struct iovec){ spans[i].buf, spans[i].len };
		remote[i] = (struct iovec){ (void *)(uintptr_t)spans[i].addr, spans[i].len };
	}
	ssize_t got = process_vm_readv((pid_t)pid, local, n, remote, n, 0);
	if (got < 0)
		return -errno;
	unsigned whole = 0;
	for (size_t left = (size_t)got; whole < n && left >= spans[whole].len; whole++)
		left -= spans[whole].len;
	return whole ? (int)whole : -EFAULT;
}

int py_proc_read(struct py_reader *r, const struct py_proc *p, uint64_t addr, void *buf,
		 size_t len)
{
	typeof(r->pre) *q = &r->pre;
	if (q->head < q->nhave && q->have[q->head].addr == addr && q->have[q->head].len == len) {
		memcpy(buf, q->have[q->head++].bytes, len);
		return 0;
	}
	struct py_span sp[1 + PY_PREFETCH_SPANS] = { { addr, buf, len } };
	unsigned n = 1;
	/* a span the same as this read's is read again after it: the check
	 * that a frame is still live, made before and after its reads */
	for (unsigned i = 0; i < q->nwant; i++, n++)
		sp[n] = (struct py_span){ q->want[i].addr, q->have[i].bytes, q->want[i].len };
	q->nwant = q->head = q->nhave = 0;
	r->cnt.reads++;
	int got = r->read(r->read_ctx, p->pid, sp, n);
	for (int i = 1; i < got; i++)
		q->have[q->nhave].addr = sp[i].addr, q->have[q->nhave++].len = sp[i].len;
	return got > 0 ? 0 : got < 0 ? got : -EFAULT;
}

void py_proc_prefetch(struct py_reader *r, uint64_t addr, size_t len)
{
	typeof(r->pre) *q = &r->pre;
	for (unsigned i = q->head; i < q->nhave; i++)
		if (q->have[i].addr == addr && q->have[i].len == len)
			return; /* read ahead already, not taken yet */
	if (q->nwant < PY_PREFETCH_SPANS && len <= PY_PREFETCH_MAX)
		q->want[q->nwant++] = (typeof(q->want[0])){ addr, len };
}

void py_proc_prefetch_drop(struct py_reader *r)
{
	r->pre.nwant = r->pre.head = r->pre.nhave = 0;
}

/* The symbols of interest in the ELF file FD's .dynsym (and .symtab) into B.
 * Returns 0 when _PyRuntime and _PyEval_EvalFrameDefault are there. */
static int read_symbols(int fd, struct py_binary *b)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t nph = 0;
	if (e && elf_getphdrnum(e, &nph) == 0)
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
				b->text_off = ph.p_offset, b->text_vaddr = ph.p_vaddr;
				break;
			}
		}
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
			    !(name = elf_strptr(e, sh.sh_link, s.st_name)))
				continue;
			if (strcmp(name, "_PyRuntime") == 0)
				b->runtime = s.st_value;
			else if (strcmp(name, "PyCode_Type") == 0)
				b->code_type = s.st_value;
			else if (strcmp(name, "Py_Version") == 0)
				b->version = s.st_value;
			else if (strcmp(name, "_PyEval_EvalFrameDefault") == 0 && s.st_size)
				b->eval_lo = s.st_value, b->eval_hi = s.st_value + s.st_size;
		}
	}
	if (e)
		elf_end(e);
	return b->runtime && b->eval_lo && b->code_type ? 0 : -ENOENT;
}

/* A new binary entry for PATH in R; NULL when out of memory. */
static struct py_binary *binary_add(struct py_reader *r, const char *path)
{
	struct py_binary *b = calloc(1, sizeof(*b));
	if (!b || !(b->path = strdup(path)) || MEM_GROW(r->bins, r->bins_cap, r->nbins + 1, 8) < 0) {
		if (b)
			free(b->path);
		free(b);
		return NULL;
	}
	r->bins[r->nbins++] = b;
	return b;
}

int py_reader_binary(struct py_reader *r, const char *path, const struct py_symbols *sy)
{
	struct py_binary *b = binary_add(r, path);
	if (!b)
		return -ENOMEM;
	b->runtime = sy->runtime, b->code_type = sy->code_type, b->version = sy->version;
	b->eval_lo = sy->eval_lo, b->eval_hi = sy->eval_hi;
	b->text_off = sy->text_off, b->text_vaddr = sy->text_vaddr;
	return 0;
}

/* The binary at PATH, read once: NULL when it is no CPython (or no memory). */
static struct py_binary *binary_get(struct py_reader *r, const char *path)
{
	for (size_t i = 0; i < r->nbins; i++)
		if (strcmp(r->bins[i]->path, path) == 0)
			return r->bins[i]->runtime ? r->bins[i] : NULL;
	struct py_binary *b = binary_add(r, path);
	if (!b)
		return NULL;
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read_symbols(fd, b) < 0)
		b->runtime = 0; /* remembered as not one */
	if (fd >= 0)
		close(fd);
	return b->runtime ? b : NULL;
}

/* Whether the file at PATH may be an interpreter binary: "python3.11",
 * "libpython3.12.so.1.0" (the symbols decide) */
static bool python_named(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0;
}

/* Notes version text WHAT as one not read (said once, py_reader_unsupported). */
static void note_unsupported(struct py_reader *r, const char *what)
{
	for (size_t i = 0; i < r->nunsupported; i++)
		if (strcmp(r->unsupported[i], what) == 0)
			return;
	char *dup = strdup(what);
	if (!dup || MEM_GROW(r->unsupported, r->unsupported_cap, r->nunsupported + 1, 4) < 0 ||
	    MEM_GROW(r->said, r->said_cap, r->nunsupported + 1, 4) < 0) {
		free(dup);
		return;
	}
	r->said[r->nunsupported] = false;
	r->unsupported[r->nunsupported++] = dup;
}

/* P's layout from its binary's version: 0, -ENOTSUP (noted), or another
 * -errno when its memory cannot tell yet */
static int find_layout(struct py_reader *r, struct py_proc *p)
{
	uint64_t v = 0;
	char what[320];
	if (p->bin->version && py_proc_read(r, p, p->bin->version + p->bias, &v, sizeof(v)) < 0)
		return -EIO;
	unsigned minor = (unsigned)(v >> 16) & 0xff;
	const struct py_layout *l = (v >> 24) == 3 ? py_layout_of(minor) : NULL;
	if (l) {
		p->lay = *l;
		return 0;
	}
	uint64_t w[PY_DEBUG_WORDS];
	if ((v >> 24) == 3 && minor >= 13) {
		/* -EAGAIN, no cookie: a loader that has not mapped the data
		 * segment yet (read between its mappings): looked at again */
		int ret = py_proc_read(r, p, p->bin->runtime + p->bias, w, sizeof(w));
		if (ret == 0)
			ret = py_layout_debug(w, PY_DEBUG_WORDS, &p->lay);
		if (ret != -ENOTSUP)
			return ret;
	}
	if (v)
		snprintf(what, sizeof(what), "%u.%u (%s)", (unsigned)(v >> 24), minor, p->bin->path);
	else
		snprintf(what, sizeof(what), "before 3.11 (%s)", p->bin->path);
	note_unsupported(r, what);
	return -ENOTSUP;
}

/* a process whose libpython's memory did not tell its version yet is
 * looked at again this long after, then twice as long after each time,
 * up to a second (sample time) */
#define PY_AGAIN_FIRST_NS 10000000ull
#define PY_AGAIN_MAX_NS 1000000000ull

/* P's interpreter, from the files it maps now: PY_YES, PY_NOT or
 * PY_UNSUPPORTED into p->kind; WAIT: the wait before the last look that
 * found memory not telling yet (0: none). */
static void find_interpreter(struct py_reader *r, struct py_proc *p, uint64_t time,
			     uint64_t wait)
{
	char path[256], line[4352];
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/maps", r->proc_root, p->pid);
	FILE *f = fopen(path, "re");
	p->kind = PY_NOT;
	while (f && fgets(line, sizeof(line), f)) {
		uint64_t lo, hi, pgoff;
		char perm[8];
		int off = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &lo, &hi,
			   perm, &pgoff, &off) < 4 || !off || perm[2] != 'x')
			continue;
		char *file = line + off;
		file[strcspn(file, "\n")] = '\0';
		if (file[0] != '/' || !python_named(file) || !(p->bin = binary_get(r, file)))
			continue;
		/* the text mapping's first byte is the file's PGOFF, at vaddr
		 * text_vaddr + (PGOFF - text_off) */
		p->bias = lo - (p->bin->text_vaddr + pgoff - p->bin->text_off);
		int ret = find_layout(r, p);
		/* memory that cannot tell yet: no CPython for now, looked at
		 * again once the process maps more, or after AGAIN_WAIT */
		p->kind = ret == 0 ? PY_YES : ret == -ENOTSUP ? PY_UNSUPPORTED : PY_NOT;
		if (p->kind == PY_NOT) {
			p->again_wait = !wait ? PY_AGAIN_FIRST_NS
				      : wait < PY_AGAIN_MAX_NS / 2 ? 2 * wait : PY_AGAIN_MAX_NS;
			p->again_at = time + p->again_wait;
		}
		break;
	}
	if (f)
		fclose(f);
}

struct py_proc *py_proc_get(struct py_reader *r, uint32_t pid, uint64_t time)
{
	size_t mappings;
	uint64_t image = sym_procs_image_mappings(r->procs, pid, time, &mappings);
	struct py_proc *set = &r->procs_cache[agg_cache_set(pid, 0, PY_PROCS)], *p = NULL;
	for (unsigned w = 0; w < AGG_CACHE_WAYS && !p; w++)
		if (set[w].pid == pid && set[w].kind != PY_UNKNOWN)
			p = &set[w];
	/* a process found to run no CPython may be one whose loader has not
	 * mapped libpython yet (pyenv's builds link it): looked at again once
	 * it maps more; one whose libpython's memory could not tell yet, also
	 * after a while (no later mapping may come) */
	if (p && p->image == image &&
	    (p->kind != PY_NOT || (p->mappings == mappings && (!p->again_at || time < p->again_at))))
		return p;
	uint64_t wait = p && p->image == image && p->mappings == mappings ? p->again_wait : 0;
	if (!p) /* the set's oldest out: processes that share a set stay */
		p = agg_cache_front(set, sizeof(*set));
	*p = (struct py_proc){ .pid = pid, .image = image, .mappings = mappings };
	find_interpreter(r, p, time, wait);
	return p;
}

/* TID's thread state, looked through P's interpreters: 0 when none. */
static uint64_t tstate_find(struct py_reader *r, struct py_proc *p, uint32_t tid)
{
	const struct py_layout *l = &p->lay;
	uint64_t interp = 0;
	if (py_proc_read(r, p, p->bin->runtime + p->bias + l->rt_interp_head, &interp, 8) < 0)
		return 0;
	for (int i = 0; interp && i < PY_INTERPS; i++) {
		uint64_t ts = 0, next = 0;
		if (py_proc_read(r, p, interp + l->is_threads_head, &ts, 8) < 0)
			return 0;
		for (int j = 0; ts && j < PY_TSTATES; j++) {
			uint64_t native = 0;
			if (py_proc_read(r, p, ts + l->ts_native_tid, &native, 8) < 0 ||
			    py_proc_read(r, p, ts + l->ts_next, &next, 8) < 0)
				return 0;
			if (native == tid)
				return ts;
			ts = next;
		}
		if (py_proc_read(r, p, interp + l->is_next, &interp, 8) < 0)
			return 0;
	}
	return 0;
}

struct py_thread *py_proc_thread(struct py_proc *p, uint32_t tid)
{
	for (unsigned i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

uint64_t py_proc_tstate(struct py_reader *r, struct py_proc *p, uint32_t tid, bool fresh)
{
	struct py_thread *t = py_proc_thread(p, tid);
	if (t && !fresh)
		return t->tstate;
	uint64_t ts = tstate_find(r, p, tid);
	if (!t) {
		if (!ts)
			return 0;
		if (p->nthreads < PY_THREADS) {
			t = &p->threads[p->nthreads++];
		} else {
			t = &p->threads[p->next_thread];
			p->next_thread = (p->next_thread + 1) % PY_THREADS;
		}
	}
	*t = (struct py_thread){ .tid = tid, .tstate = ts };
	return ts;
}
