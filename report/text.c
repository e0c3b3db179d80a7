/* report: line reader, name storage and stack delivery shared by the parsers. */
#include "mem/mem.h"
#include "report/internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool scan_line(const struct report_in *in, struct report_line *l, size_t *next)
{
	if (in->pos >= in->len)
		return false;
	const char *p = in->buf + in->pos;
	size_t rest = in->len - in->pos;
	const char *nl = memchr(p, '\n', rest);
	size_t n = nl ? (size_t)(nl - p) : rest;

	*next = in->pos + n + (nl ? 1 : 0);
	l->p = p;
	l->partial = nl == NULL;
	l->nul = memchr(p, '\0', n) != NULL;
	if (n > 0 && p[n - 1] == '\r')
		n--;
	l->len = n;
	return true;
}

bool report_in_next(struct report_in *in, struct report_line *l)
{
	size_t next;

	if (!scan_line(in, l, &next))
		return false;
	in->pos = next;
	in->st->lines++;
	return true;
}

bool report_in_peek(const struct report_in *in, struct report_line *l)
{
	size_t next;

	return scan_line(in, l, &next);
}

void report_sb_reset(struct report_sb *sb)
{
	sb->len = 0;
	sb->n = 0;
}

void report_sb_free(struct report_sb *sb)
{
	free(sb->buf);
	free(sb->off);
	memset(sb, 0, sizeof(*sb));
}

void report_copy(char *dst, size_t cap, const char *p, size_t n)
{
	if (cap == 0)
		return;
	if (n > cap - 1)
		n = cap - 1;
	/* Control bytes stay: the formats escape them all alike (out_clean_name).
	 * A NUL would cut the string. */
	for (size_t i = 0; i < n; i++)
		dst[i] = p[i] ? p[i] : '?';
	dst[n] = '\0';
}

int report_sb_add(struct report_sb *sb, const char *p, size_t n, struct report_stats *st)
{
	if (sb->n >= REPORT_MAX_FRAMES) {
		st->frames_cut++;
		return 0;
	}
	if (n >= REPORT_MAX_NAME) {
		n = REPORT_MAX_NAME - 1;
		st->frames_cut++;
	}
	if (MEM_GROW(sb->off, sb->ncap, (size_t)sb->n + 1, 16))
		return -ENOMEM;
	if (MEM_GROW(sb->buf, sb->cap, sb->len + n + 1, 16))
		return -ENOMEM;
	report_copy(sb->buf + sb->len, n + 1, p, n);
	sb->off[sb->n++] = (uint32_t)sb->len;
	sb->len += n + 1;
	return 0;
}

const char *report_sb_get(const struct report_sb *sb, uint32_t i)
{
	return sb->buf + sb->off[i];
}

int report_emit(struct report_emitter *em, const struct report_sb *k,
		const struct report_sb *u, const char *comm, uint32_t pid,
		const char *event, uint64_t count)
{
	uint32_t nk = 0, nu = 0, i = 0;

	if (!em->kp && !(em->kp = calloc(REPORT_MAX_FRAMES, sizeof(*em->kp))))
		return -ENOMEM;
	if (!em->up && !(em->up = calloc(REPORT_MAX_FRAMES, sizeof(*em->up))))
		return -ENOMEM;
	/* Machinery only ever sits on the leaf side: stop at the first real frame. */
	for (; k && i < k->n && report_is_machinery(report_sb_get(k, i)); i++)
		em->st->machinery++;
	for (; k && i < k->n; i++) {
		const char *s = report_sb_get(k, i);
		em->kp[nk++] = report_is_hexaddr(s, strlen(s)) ? "[unknown]" : s;
	}
	for (i = 0; u && i < u->n; i++)
		em->up[nu++] = report_sb_get(u, i);

	struct report_stack s = {
		.comm = comm ? comm : "", .pid = pid, .event = event ? event : "",
		.kframes = em->kp, .nk = nk, .uframes = em->up, .nu = nu, .count = count,
		.period = em->period,
	};
	em->period = 0;
	em->st->stacks++;
	em->st->events += count;
	return em->fn(em->ctx, &s);
}

void report_emitter_free(struct report_emitter *em)
{
	free(em->kp);
	free(em->up);
	em->kp = em->up = NULL;
}

void report_trim(const char **p, size_t *n)
{
	while (*n > 0 && (**p == ' ' || **p == '\t')) {
		(*p)++;
		(*n)--;
	}
	while (*n > 0 && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t'))
		(*n)--;
}

bool report_starts(const char *p, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(p, prefix, k) == 0;
}

/* Cuts a trailing " <...>" or " [...]" group when something precedes it. */
static void cut_group(const char *p, size_t *n, char open, char close)
{
	if (*n < 3 || p[*n - 1] != close)
		return;
	for (size_t i = *n - 1; i-- > 1;) {
		if (p[i] == open && p[i - 1] == ' ') {
			*n = i - 1;
			while (*n > 0 && p[*n - 1] == ' ')
				(*n)--;
			return;
		}
	}
}

void report_norm_sym(const char **p, size_t *n)
{
	report_trim(p, n);
	cut_group(*p, n, '<', '>');
	cut_group(*p, n, '[', ']');
	/* "func+0x1a/0x40" or perf's "func+0x1a": the last '+' before "0x". */
	for (size_t i = *n; i-- > 1;) {
		if ((*p)[i] == '+' && i + 2 < *n && (*p)[i + 1] == '0' && (*p)[i + 2] == 'x') {
			*n = i;
			break;
		}
	}
}

bool report_parse_u64(const char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 19)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	*out = v;
	return true;
}

bool report_parse_hex(const char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 16)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (!isxdigit((unsigned char)c))
			return false;
		v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	*out = v;
	return true;
}
