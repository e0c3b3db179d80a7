/* EVENT specs: bcc stackcount's forms and bpftrace's long forms (doc/DESIGN.md
 * section 1), classified here; the plan resolves them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "plan/spec.h"

static int set(char *dst, size_t len, const char *s, size_t n)
{
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* Splits S at ':' into at most 4 parts; returns the count. */
static int split(const char *s, const char *parts[4], size_t lens[4])
{
	int n = 0;
	const char *p = s;
	for (;;) {
		const char *c = strchr(p, ':');
		if (n == 3 || !c) {
			parts[n] = p;
			lens[n++] = strlen(p);
			return n;
		}
		parts[n] = p;
		lens[n++] = (size_t)(c - p);
		p = c + 1;
	}
}

static int fill(struct ft_spec *sp, enum ft_spec_kind kind, const char *lib, size_t llen,
		const char *prov, size_t plen, const char *name, size_t nlen)
{
	sp->kind = kind;
	if (set(sp->lib, sizeof(sp->lib), lib, llen) < 0 ||
	    set(sp->provider, sizeof(sp->provider), prov, plen) < 0 ||
	    set(sp->name, sizeof(sp->name), name, nlen) < 0)
		return -ENAMETOOLONG;
	return nlen ? 0 : -EINVAL;
}

int ft_spec_parse(const char *s, const char *deflib, struct ft_spec *sp)
{
	const char *p[4];
	size_t l[4];
	memset(sp, 0, sizeof(*sp));
	snprintf(sp->text, sizeof(sp->text), "%s", s);
	if (!*s)
		return -EINVAL;
	int n = split(s, p, l);
	if (n == 1) /* func, or -l LIB func */
		return deflib ? fill(sp, FT_SPEC_UPROBE, deflib, strlen(deflib), "", 0, p[0], l[0])
			      : fill(sp, FT_SPEC_KFUNC, "", 0, "", 0, p[0], l[0]);
#define IS(i, w) (l[i] == strlen(w) && strncmp(p[i], w, l[i]) == 0)
	if (IS(0, "t") || IS(0, "tracepoint")) {
		if (n != 3 || !l[1] || !l[2])
			return -EINVAL;
		return fill(sp, FT_SPEC_TRACEPOINT, p[1], l[1], "", 0, p[2], l[2]);
	}
	if (IS(0, "kprobe")) {
		if (n != 2)
			return -EINVAL;
		return fill(sp, FT_SPEC_KFUNC, "", 0, "", 0, p[1], l[1]);
	}
	if (IS(0, "p")) {
		if (n == 3 && l[1] == 0) /* p::func */
			return fill(sp, FT_SPEC_KFUNC, "", 0, "", 0, p[2], l[2]);
		if (n == 3) /* p:LIB:func */
			return fill(sp, FT_SPEC_UPROBE, p[1], l[1], "", 0, p[2], l[2]);
		return -EINVAL;
	}
	if (IS(0, "uprobe")) {
		if (n != 3 || !l[1])
			return -EINVAL;
		return fill(sp, FT_SPEC_UPROBE, p[1], l[1], "", 0, p[2], l[2]);
	}
	if (IS(0, "u") || IS(0, "usdt")) {
		if (n == 3 && l[1]) /* u:LIB:probe (a uprobe when LIB has no such probe) */
			return fill(sp, FT_SPEC_USDT, p[1], l[1], "", 0, p[2], l[2]);
		if (n == 4 && l[1]) /* u:LIB:provider:probe */
			return fill(sp, FT_SPEC_USDT, p[1], l[1], p[2], l[2], p[3], l[3]);
		return -EINVAL;
	}
#undef IS
	if (n == 2 && l[0]) /* LIB:func, as bcc's c:malloc */
		return fill(sp, FT_SPEC_UPROBE, p[0], l[0], "", 0, p[1], l[1]);
	return -EINVAL;
}
