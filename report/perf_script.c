/* report: `perf script` output, read as FlameGraph's stackcollapse-perf.pl
 * reads it.
 *
 * A sample is a header line (perf_header.c), then one line per frame,
 * "ADDR SYM+OFF (DSO)", leaf first, then a blank line. Frame lines may be
 * indented or not; ones that follow a blank line without a header are
 * ignored (counted in orphans). A header without frame lines is a stack of
 * its comm alone; a header that ends in a frame (a recording without -g)
 * is a one-frame stack. Names follow stackcollapse-perf: "[unknown]" (or an
 * empty symbol) in a known file is "[BASENAME]", an inline chain
 * "a->b->c" is the frames a, b_[i], c_[i], ';' becomes ':', argument lists
 * and quotes are dropped. A frame is a kernel frame when its address is in
 * the kernel half (x86-64's upper half), whatever its file, or when its
 * file is the kernel's (vmlinux, [kernel.kallsyms], a module); kernel frames are only the leading
 * run, so the order of a stack is never changed (the end-of-stack marker
 * ffffffffffffffff stays at the root).
 * Side-band lines ("PERF_RECORD_...", `perf script --show-mmap-events`) are
 * no samples; an MMAP2 line with a build-id (`perf record --buildid-mmap`)
 * makes its file's "[unknown]" frames deferred, "[BASENAME+0xADDR@BUILDID]"
 * (the address perf prints: the ELF address in a shared object, PIE or
 * program; a return address's call, ADDR - 1), which report names where
 * the debug files are (doc/FLEET.md, "Deferred names").
 */
#include "report/internal.h"
#include "mem/mem.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"

#define KERNEL_START 0xffff800000000000ULL
#define NAME_BUF (REPORT_MAX_NAME + 8)

struct ps_sample {
	bool open;      /* a header was read and the sample not yet delivered */
	bool user_seen; /* a user frame came: the frames after it are user frames */
	bool java;      /* comm starts with "java": stackcollapse's Java tidying */
	char comm[256];
	char event[256];
	uint32_t pid;
	uint64_t period;
	struct report_sb k, u;
	struct ps_id *ids; /* the build-ids MMAP2 lines gave, by path */
	size_t nids, capids;
};

struct ps_id {
	char *path;
	char hex[129];
};

/* "... PERF_RECORD_MMAP2 P/T: [0xS(0xL) @ 0xO <BUILDID>]: r-xp PATH": keeps
 * PATH's build-id. Returns 0 or -ENOMEM (a line of another shape: 0). */
static int keep_build_id(struct ps_sample *s, const char *p, size_t n)
{
	const char *lt = memchr(p, '<', n), *end = p + n;
	const char *gt = lt ? memchr(lt, '>', (size_t)(end - lt)) : NULL;
	const char *colon = gt ? memmem(gt, (size_t)(end - gt), "]: ", 3) : NULL;
	const char *sp = colon ? memchr(colon + 3, ' ', (size_t)(end - colon - 3)) : NULL;
	size_t nhex = gt ? (size_t)(gt - lt - 1) : 0;
	if (!sp || nhex < 4 || nhex > 128 || nhex % 2 || sp + 1 >= end || sp[1] != '/')
		return 0;
	for (size_t i = 0; i < s->nids; i++)
		if (strlen(s->ids[i].path) == (size_t)(end - sp - 1) &&
		    memcmp(s->ids[i].path, sp + 1, (size_t)(end - sp - 1)) == 0)
			return 0;
	if (MEM_GROW(s->ids, s->capids, s->nids + 1, 16) < 0)
		return -ENOMEM;
	struct ps_id *id = &s->ids[s->nids];
	if (!(id->path = strndup(sp + 1, (size_t)(end - sp - 1))))
		return -ENOMEM;
	memcpy(id->hex, lt + 1, nhex);
	id->hex[nhex] = '\0';
	s->nids++;
	return 0;
}

static const char *build_id_of(const struct ps_sample *s, const char *dso, size_t nd)
{
	for (size_t i = 0; dso && i < s->nids; i++)
		if (strlen(s->ids[i].path) == nd && memcmp(s->ids[i].path, dso, nd) == 0)
			return s->ids[i].hex;
	return NULL;
}

/* "cpu-clock:ppp" -> "cpu-clock": drops a trailing group of modifier letters. */
static size_t strip_modifiers(const char *p, size_t n)
{
	const char *colon = memrchr(p, ':', n);

	if (!colon || colon == p)
		return n;
	size_t c = (size_t)(colon - p);
	if (c + 1 == n)
		return n;
	for (size_t i = c + 1; i < n; i++)
		if (!strchr("ukhpPGHISDWeb", p[i]))
			return n;
	return memchr(p, ':', c) ? n : c; /* "sched:sched_switch" keeps its ':' */
}

static bool ends(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);

	return n >= k && memcmp(p + n - k, s, k) == 0;
}

/* User-space pseudo-files perf names in brackets. */
static bool user_bracket(const char *d, size_t n)
{
	static const char *const user[] = { "[vdso", "[vsyscall", "[heap", "[stack",
					    "[uprobes", "[anon", "[unknown", "[jit" };
	for (size_t i = 0; i < sizeof(user) / sizeof(*user); i++)
		if (report_starts(d, n, user[i]))
			return true;
	return false;
}

/* A kernel address is a kernel frame whatever perf calls its file (a
 * versioned /usr/lib/debug/boot/vmlinux-5.4.14-..., a bpf_prog_... image);
 * [vsyscall] sits up there too but runs in user mode. */
static bool kernel_frame(uint64_t addr, const char *dso, size_t nd)
{
	bool unknown = !dso || (nd == 9 && memcmp(dso, "[unknown]", 9) == 0);

	if (addr >= KERNEL_START && addr != UINT64_MAX && (unknown || !user_bracket(dso, nd)))
		return true;
	if (unknown)
		return false;
	if (ends(dso, nd, "vmlinux") || ends(dso, nd, ".ko") || ends(dso, nd, ".ko.xz") ||
	    ends(dso, nd, ".ko.zst") || ends(dso, nd, ".ko.gz"))
		return true;
	return nd >= 2 && dso[0] == '[' && !user_bracket(dso, nd); /* kallsyms, modules */
}

/* stackcollapse-perf's tidy_generic (and tidy_java): ';' -> ':', drop
 * everything from the first '(' that does not open "(anonymous namespace)"
 * unless the name is a Go method "pkg.(*T).M", drop quotes. */
static size_t tidy(char *s, size_t n, bool java)
{
	bool go = false;
	for (size_t i = 0; i + 1 < n && !go; i++)
		if (s[i] == '.' && s[i + 1] == '(')
			go = memmem(s + i + 2, n - i - 2, ").", 2) != NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (!go && s[i] == '(' &&
		    !report_starts(s + i, n - i, "(anonymous namespace)"))
			break;
		if (s[i] == '"' || s[i] == '\'')
			continue;
		s[o++] = s[i] == ';' ? ':' : s[i];
	}
	if (java && o > 1 && s[0] == 'L' && memchr(s, '/', o)) {
		memmove(s, s + 1, o - 1);
		o--;
	}
	return o;
}

/* One piece of an inline chain, named into buf; returns its length. */
static size_t piece_name(char *buf, const char *p, size_t n, const char *dso, size_t nd,
			 bool inlined, bool java)
{
	if (n == 0 || (n == 9 && memcmp(p, "[unknown]", 9) == 0)) {
		if (dso && !(nd == 9 && memcmp(dso, "[unknown]", 9) == 0)) {
			const char *slash = memrchr(dso, '/', nd);
			if (slash) {
				nd -= (size_t)(slash + 1 - dso);
				dso = slash + 1;
			}
			p = dso;
			n = nd;
		} else {
			p = "unknown";
			n = 7;
		}
		if (n > REPORT_MAX_NAME)
			n = REPORT_MAX_NAME;
		buf[0] = '[';
		memcpy(buf + 1, p, n);
		buf[n + 1] = ']';
		n += 2;
	} else {
		if (n > REPORT_MAX_NAME)
			n = REPORT_MAX_NAME;
		memcpy(buf, p, n);
	}
	n = tidy(buf, n, java);
	if (inlined && !memmem(buf, n, "_[i]", 4)) {
		memcpy(buf + n, "_[i]", 4);
		n += 4;
	}
	return n;
}

/* Adds the frames of one chain "a->b->c" (root to leaf) leaf first. */
static int add_chain(struct ps_sample *s, struct report_sb *sb, const char *p, size_t n,
		     const char *dso, size_t nd, struct report_stats *st)
{
	char buf[NAME_BUF];
	const char *end = p + n;

	while (true) {
		const char *arrow = NULL;
		for (const char *q = end; q - p >= 2 && !arrow; q--)
			if (q[-2] == '-' && q[-1] == '>')
				arrow = q - 2;
		const char *piece = arrow ? arrow + 2 : p;
		size_t len = piece_name(buf, piece, (size_t)(end - piece), dso, nd,
					arrow != NULL, s->java);
		int ret = report_sb_add(sb, buf, len, st);
		if (ret || !arrow)
			return ret;
		end = arrow;
	}
}

/* "ADDR SYM+OFF (DSO)", "ADDR SYM", "ADDR  (DSO)". Returns 1 when the line
 * is no frame, else 0 or -ENOMEM. */
static int parse_frame(struct ps_sample *s, const char *p, size_t n, struct report_stats *st)
{
	uint64_t addr;
	const char *sp = memchr(p, ' ', n);
	size_t t = sp ? (size_t)(sp - p) : n;

	if (!report_parse_hex(p, t, &addr))
		return 1;
	p += t;
	n -= t;
	report_trim(&p, &n);
	const char *dso = NULL;
	size_t nd = 0;
	if (n >= 2 && p[n - 1] == ')') {
		for (size_t i = n - 1; i-- > 0;) {
			if (p[i] == '(' && (i == 0 || p[i - 1] == ' ')) {
				dso = p + i + 1;
				nd = n - i - 2;
				n = i;
				break;
			}
		}
	}
	report_trim(&p, &n);
	/* perf's "+0x1a" offset */
	for (size_t i = n; i-- > 0;) {
		char c = p[i];
		if (c == '+' && i + 2 < n && p[i + 1] == '0' && p[i + 2] == 'x') {
			n = i;
			break;
		}
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == 'x'))
			break;
	}
	if (n > 0 && p[0] == '(')
		return 0; /* stackcollapse-perf skips these (process names) */
	bool kernel = !s->user_seen && kernel_frame(addr, dso, nd);
	const char *id = kernel || !(n == 0 || (n == 9 && memcmp(p, "[unknown]", 9) == 0)) ? NULL :
			 build_id_of(s, dso, nd);
	if (id && addr) { /* deferred: named later by its build-id */
		const char *slash = memrchr(dso, '/', nd);
		size_t nb = slash ? nd - (size_t)(slash + 1 - dso) : nd;
		char buf[NAME_BUF + 160];
		int len = snprintf(buf, sizeof(buf), "[%.*s+0x%" PRIx64 "@%s]",
				   (int)(nb < REPORT_MAX_NAME ? nb : REPORT_MAX_NAME),
				   slash ? slash + 1 : dso, s->u.n ? addr - 1 : addr, id);
		s->user_seen = true;
		return report_sb_add(&s->u, buf, (size_t)len, st);
	}
	s->user_seen |= !kernel;
	return add_chain(s, kernel ? &s->k : &s->u, p, n, dso, nd, st);
}

static int flush(struct report_emitter *em, struct ps_sample *s)
{
	int ret = 0;

	if (s->open && (s->k.n || s->u.n || s->comm[0])) {
		em->period = s->period;
		ret = report_emit(em, &s->k, &s->u, s->comm, s->pid, s->event, 1);
	} else if (s->open) {
		em->st->skipped++;
	}
	report_sb_reset(&s->k);
	report_sb_reset(&s->u);
	s->open = s->user_seen = false;
	s->comm[0] = s->event[0] = '\0';
	s->pid = 0;
	s->period = 0;
	return ret;
}

static int start(struct ps_sample *s, const struct report_perf_header *h, struct report_stats *st)
{
	report_copy(s->comm, sizeof(s->comm), h->comm, h->ncomm);
	s->java = report_starts(h->comm, h->ncomm, "java");
	s->pid = h->pid;
	s->period = h->has_period ? h->period : 0;
	s->event[0] = '\0';
	if (h->event)
		report_copy(s->event, sizeof(s->event), h->event, strip_modifiers(h->event, h->nevent));
	s->open = true;
	if (h->nrest && report_perf_frame_like(h->rest, h->nrest))
		return parse_frame(s, h->rest, h->nrest, st) < 0 ? -ENOMEM : 0;
	return 0;
}

/* A header needs two fields, or a comm and a pid ("-F comm,pid"). */
static bool is_header(const char *p, size_t n, struct report_perf_header *h, int need)
{
	int score = report_perf_header(p, n, h);

	return score >= need || (score == 1 && h->ncomm && h->has_pid);
}

static int on_line(struct report_emitter *em, struct ps_sample *s, const struct report_line *l)
{
	const char *p = l->p;
	size_t n = l->len;
	struct report_perf_header h;

	report_trim(&p, &n);
	if (l->nul) {
		em->st->malformed++;
		return 0;
	}
	if (n == 0)
		return flush(em, s);
	if (memmem(p, n, " PERF_RECORD_", 13)) { /* side-band, not a sample */
		int ret = s->open ? flush(em, s) : 0;
		em->st->skipped++;
		return ret ? ret : keep_build_id(s, p, n);
	}
	if (l->partial) {
		em->st->truncated = 1;
		return 0;
	}
	if (p[0] == '#') {
		em->st->skipped++;
		return 0;
	}
	if (s->open) {
		/* In a sample, a frame unless the line is clearly a header
		 * (samples without callchains follow each other unseparated). */
		int ret = 1;
		if (report_perf_header(p, n, &h) < 2)
			ret = parse_frame(s, p, n, em->st);
		if (ret != 1)
			return ret;
		if (!is_header(p, n, &h, 2)) {
			em->st->skipped++; /* srcline, brstack and such */
			return 0;
		}
		ret = flush(em, s);
		return ret ? ret : start(s, &h, em->st);
	}
	if (is_header(p, n, &h, 2))
		return start(s, &h, em->st);
	if (report_perf_frame_like(p, n))
		em->st->orphans++;
	else
		em->st->malformed++;
	return 0;
}

int report_parse_perf(struct report_in *in, struct report_emitter *em)
{
	struct ps_sample s = { 0 };
	struct report_line l;
	int ret = 0;

	while (!ret && report_in_next(in, &l))
		ret = on_line(em, &s, &l);
	if (!ret)
		ret = flush(em, &s);
	report_sb_free(&s.k);
	report_sb_free(&s.u);
	for (size_t i = 0; i < s.nids; i++)
		free(s.ids[i].path);
	free(s.ids);
	return ret;
}
