/* report: folded lines, "root;...;leaf COUNT", FlameGraph's grammar.
 *
 * Every ';'-separated field is taken as a frame: a leading comm (as ftstack
 * and bcc write it) cannot be told from a root frame, so it stays a frame.
 * Kernel or user: a lone "-" field separates user frames (before it, root
 * side) from kernel frames (after it, leaf side); frames ending in "_[k]"
 * on the leaf side are kernel frames (see fill). A line with neither marker
 * has no way to tell: all its frames are user frames, in order. Frame order
 * is never changed. Repeated stacks are delivered once per line; the caller
 * sums them. Blanks inside the stack are the frames' own, kept byte for byte:
 * stackcollapse cuts a C++ name at '(', so "std::function<int " ends in one,
 * and only the one blank before COUNT separates (flamegraph.pl's reading).
 */
#include "report/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct folded {
	struct report_sb k, u;
	const char *f[REPORT_MAX_FRAMES];
	size_t nf[REPORT_MAX_FRAMES];
};

static bool annotated(const char *p, size_t n)
{
	return n > 4 && memcmp(p + n - 4, "_[k]", 4) == 0;
}

/* Splits [p, p+n) at ';' into f->f / f->nf; returns the field count. */
static uint32_t split(struct folded *f, const char *p, size_t n, struct report_stats *st)
{
	uint32_t nf = 0;

	while (n > 0) {
		const char *semi = memchr(p, ';', n);
		size_t k = semi ? (size_t)(semi - p) : n;
		if (nf < REPORT_MAX_FRAMES) {
			f->f[nf] = p;
			f->nf[nf++] = k;
		} else {
			st->frames_cut++;
		}
		if (!semi)
			break;
		p += k + 1;
		n -= k + 1;
	}
	return nf;
}

static bool is_dash(const struct folded *f, uint32_t i)
{
	return f->nf[i] == 1 && f->f[i][0] == '-';
}

/* Adds the fields leaf first. With a "-" field, those after it are kernel
 * frames; else the leaf-side run of "_[k]" frames is, when every "_[k]"
 * frame is in it (suffix stripped, -a writes it back). Otherwise the line
 * cannot be split without reordering it: every field is a user frame, kept
 * verbatim ("_[k]" included), so the line reads back unchanged. */
static int fill(struct folded *f, uint32_t nf, struct report_stats *st)
{
	int64_t dash = -1;
	uint32_t nk = 0, run = 0;

	for (uint32_t i = 0; i < nf; i++) {
		if (is_dash(f, i))
			dash = i;
		nk += annotated(f->f[i], f->nf[i]);
	}
	while (run < nf && annotated(f->f[nf - 1 - run], f->nf[nf - 1 - run]))
		run++;
	uint64_t kfrom = dash >= 0 ? (uint64_t)dash + 1 : nk && run == nk ? nf - run : UINT64_MAX;
	for (uint32_t j = nf; j-- > 0;) {
		const char *p = f->f[j];
		size_t n = f->nf[j];
		if ((int64_t)j == dash)
			continue;
		bool k = j >= kfrom;
		if (k && annotated(p, n))
			n -= 4;
		if (n == 0) {
			st->malformed++;
			continue;
		}
		int ret = report_sb_add(k ? &f->k : &f->u, p, n, st);
		if (ret)
			return ret;
	}
	return 0;
}

static int on_line(struct report_emitter *em, struct folded *f, const struct report_line *l)
{
	const char *p = l->p;
	size_t n = l->len;
	uint64_t count;

	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	if (n == 0 || p[0] == '#') {
		em->st->skipped++;
		return 0;
	}
	const char *sp = memrchr(p, ' ', n);
	if (l->nul || !sp || sp == p ||
	    !report_parse_u64(sp + 1, (size_t)(p + n - sp - 1), &count)) {
		em->st->malformed++;
		return 0;
	}
	size_t nstack = (size_t)(sp - p);
	report_sb_reset(&f->k);
	report_sb_reset(&f->u);
	int ret = fill(f, split(f, p, nstack, em->st), em->st);
	if (ret)
		return ret;
	if (f->k.n == 0 && f->u.n == 0) {
		em->st->malformed++;
		return 0;
	}
	return report_emit(em, &f->k, &f->u, "", 0, "", count);
}

int report_parse_folded(struct report_in *in, struct report_emitter *em)
{
	struct folded *f = calloc(1, sizeof(*f));
	struct report_line l;
	int ret = 0;

	if (!f)
		return -ENOMEM;
	while (!ret && report_in_next(in, &l))
		ret = on_line(em, f, &l);
	report_sb_free(&f->k);
	report_sb_free(&f->u);
	free(f);
	return ret;
}
