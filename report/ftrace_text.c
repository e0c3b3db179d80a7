/* report: the kernel's trace / trace_pipe text.
 *
 * An entry line is "comm-pid [cpu] flags timestamp: text" (flags absent with
 * irq-info off, "(tgid)" after the pid with record-tgid, the whole context
 * absent with context-info off). Text "<stack trace>" or "<user stack
 * trace>" opens a block of " => frame" lines; any other text is an event
 * line ("sys_getppid()", "kmalloc_probe: (...)", "__kmalloc <-caller").
 *
 * Entries of one task on one CPU come in order, but the kernel writes a
 * stacktrace trigger's kernel stack after the event's user stack for
 * syscalls and before it for kprobes, so blocks are gathered per (cpu, pid)
 * into a group: an event line, at most one kernel and one user block. A
 * group is delivered when it holds both blocks, when a second block of a
 * kind arrives, when the next event line of the same task on that CPU
 * arrives, or at the end of the input.
 */
#include "report/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FT_GROUPS 64   /* tasks with a pending group; the oldest is flushed beyond */
#define FT_TEXT 256    /* bytes kept of a comm or event name */
#define FT_CTX_SCAN 128 /* bytes of a line searched for the "[cpu]" field */

struct ft_group {
	bool used, has_k, has_u;
	int cpu;
	uint32_t pid;
	uint64_t seq;
	char comm[FT_TEXT];
	char event[FT_TEXT];
	struct report_sb k, u;
};

struct ft_ctx {
	bool ok;        /* a context was parsed */
	int cpu;
	uint32_t pid;
	const char *comm;
	size_t ncomm;
	const char *text; /* what follows the timestamp */
	size_t ntext;
};

struct ft_state {
	struct ft_group g[FT_GROUPS];
	uint64_t seq;
	struct report_emitter *em;
	struct report_stats *st;
};

/* "[ddd]" at p[i]: returns the cpu, or -1. */
static int cpu_at(const char *p, size_t n, size_t i, size_t *end)
{
	uint64_t v;
	size_t j = i + 1;

	while (j < n && j - i <= 6 && p[j] >= '0' && p[j] <= '9')
		j++;
	if (j >= n || p[j] != ']' || !report_parse_u64(p + i + 1, j - i - 1, &v))
		return -1;
	*end = j + 1;
	return (int)v;
}

/* "comm-pid" or "comm-pid (tgid)" before the cpu field. */
static bool comm_pid(const char *p, size_t n, struct ft_ctx *c)
{
	report_trim(&p, &n);
	if (n > 0 && p[n - 1] == ')') {
		const char *open = memrchr(p, '(', n);
		if (!open)
			return false;
		n = (size_t)(open - p);
		report_trim(&p, &n);
	}
	size_t d = n;
	while (d > 0 && p[d - 1] >= '0' && p[d - 1] <= '9')
		d--;
	uint64_t pid;
	if (d == n || d < 2 || p[d - 1] != '-' || !report_parse_u64(p + d, n - d, &pid) ||
	    pid > UINT32_MAX)
		return false;
	c->pid = (uint32_t)pid;
	c->comm = p;
	c->ncomm = d - 1;
	return true;
}

static bool is_timestamp(const char *p, size_t n)
{
	if (n < 2 || p[n - 1] != ':')
		return false;
	for (size_t i = 0; i + 1 < n; i++)
		if ((p[i] < '0' || p[i] > '9') && p[i] != '.')
			return false;
	return true;
}

/* After "[cpu]": optional flags, then "timestamp:"; sets the text. */
static bool after_cpu(const char *p, size_t n, struct ft_ctx *c)
{
	for (int tok = 0; tok < 2; tok++) {
		report_trim(&p, &n);
		const char *sp = memchr(p, ' ', n);
		size_t t = sp ? (size_t)(sp - p) : n;
		if (is_timestamp(p, t)) {
			c->text = p + t;
			c->ntext = n - t;
			report_trim(&c->text, &c->ntext);
			return true;
		}
		p += t;
		n -= t;
	}
	return false;
}

static void parse_ctx(const char *p, size_t n, struct ft_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->cpu = -1;
	/* The cpu field follows a comm of at most 16 bytes, the pid and maybe a
	 * tgid: looking further would only make long lines quadratic. */
	for (size_t i = 1; i < n && i < FT_CTX_SCAN; i++) {
		size_t end;
		if (p[i] != '[' || p[i - 1] != ' ')
			continue;
		int cpu = cpu_at(p, n, i, &end);
		if (cpu < 0 || !comm_pid(p, i, c) || !after_cpu(p + end, n - end, c))
			continue;
		c->cpu = cpu;
		c->ok = true;
		return;
	}
	c->text = p;
	c->ntext = n;
	report_trim(&c->text, &c->ntext);
}

static bool is_funcgraph(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && p[i] >= '0' && p[i] <= '9')
		i++;
	if (i > 0 && i < n && p[i] == ')')
		return true;
	return (n > 0 && p[0] == '|') || report_starts(p, n, "-----");
}

static int flush(struct ft_state *s, struct ft_group *g)
{
	int ret = 0;

	if (g->has_k || g->has_u)
		ret = report_emit(s->em, g->has_k ? &g->k : NULL, g->has_u ? &g->u : NULL,
				  g->comm, g->pid, g->event, 1);
	g->has_k = g->has_u = false;
	report_sb_reset(&g->k);
	report_sb_reset(&g->u);
	return ret;
}

/* The group of this task on this CPU, made (flushing the oldest) if absent. */
static int group_for(struct ft_state *s, const struct ft_ctx *c, struct ft_group **out)
{
	struct ft_group *free_g = NULL, *old = NULL;

	for (int i = 0; i < FT_GROUPS; i++) {
		struct ft_group *g = &s->g[i];
		if (g->used && g->cpu == c->cpu && g->pid == c->pid) {
			g->seq = ++s->seq;
			*out = g;
			return 0;
		}
		if (!g->used && !free_g)
			free_g = g;
		if (g->used && (!old || g->seq < old->seq))
			old = g;
	}
	if (!free_g) {
		int ret = flush(s, old);
		if (ret)
			return ret;
		free_g = old;
	}
	free_g->used = true;
	free_g->cpu = c->cpu;
	free_g->pid = c->pid;
	free_g->seq = ++s->seq;
	free_g->event[0] = '\0';
	report_copy(free_g->comm, sizeof(free_g->comm), c->comm, c->ncomm);
	*out = free_g;
	return 0;
}

static int add_frame(struct ft_state *s, struct report_sb *sb, bool user, const char *p, size_t n)
{
	report_trim(&p, &n);
	if (user && (n == 0 || p[0] == '<' || (n == 2 && p[0] == '?' && p[1] == '?')))
		return report_sb_add(sb, "[unknown]", 9, s->st);
	if (user && memmem(p, n, "[+0x", 4)) {
		/* userobj "path[+0xoff]", maybe followed by " <addr>" (sym-addr) */
		const char *close = memchr(p, ']', n);
		return report_sb_add(sb, p, close ? (size_t)(close - p) + 1 : n, s->st);
	}
	report_norm_sym(&p, &n);
	if (n == 0) {
		s->st->malformed++;
		return 0;
	}
	if (n == 1 && p[0] == '0')
		return report_sb_add(sb, "[unknown]", 9, s->st);
	return report_sb_add(sb, p, n, s->st);
}

/* Reads the " => " lines after a block header into sb. */
static int read_block(struct ft_state *s, struct report_in *in, struct report_sb *sb, bool user)
{
	struct report_line l;
	bool any = false;

	while (report_in_peek(in, &l)) {
		const char *p = l.p;
		size_t n = l.len;
		report_trim(&p, &n);
		if (!report_starts(p, n, "=>"))
			break;
		report_in_next(in, &l);
		any = true;
		if (l.nul) {
			s->st->malformed++; /* a damaged frame: skip it, keep the block */
			continue;
		}
		if (l.partial) {
			s->st->truncated = 1; /* the last frame may be cut short */
			break;
		}
		int ret = add_frame(s, sb, user, p + 2, n - 2);
		if (ret)
			return ret;
	}
	if (!any && in->pos >= in->len)
		s->st->truncated = 1;
	return 0;
}

static int on_block(struct ft_state *s, struct report_in *in, const struct ft_ctx *c, bool user)
{
	struct ft_group *g;
	int ret = group_for(s, c, &g);

	if (ret)
		return ret;
	if ((user ? g->has_u : g->has_k) && (ret = flush(s, g)))
		return ret;
	ret = read_block(s, in, user ? &g->u : &g->k, user);
	if (ret)
		return ret;
	if (user)
		g->has_u = true;
	else
		g->has_k = true;
	return g->has_k && g->has_u ? flush(s, g) : 0;
}

static int on_event(struct ft_state *s, const struct ft_ctx *c)
{
	struct ft_group *g;
	int ret = group_for(s, c, &g);

	if (ret || (ret = flush(s, g)))
		return ret;
	size_t n = 0;
	while (n < c->ntext && c->text[n] != ':' && c->text[n] != '(' && c->text[n] != ' ' &&
	       c->text[n] != '+')
		n++;
	report_copy(g->event, sizeof(g->event), c->text, n);
	report_copy(g->comm, sizeof(g->comm), c->comm, c->ncomm);
	return 0;
}

static int on_line(struct ft_state *s, struct report_in *in, const struct report_line *l)
{
	const char *p = l->p;
	size_t n = l->len;
	struct ft_ctx c;

	report_trim(&p, &n);
	if (l->nul) {
		s->st->malformed++;
		return 0;
	}
	if (n == 0 || p[0] == '#' || is_funcgraph(p, n)) {
		s->st->skipped++;
		return 0;
	}
	if (report_starts(p, n, "=>")) {
		s->st->malformed++; /* a frame outside any block */
		return 0;
	}
	parse_ctx(p, n, &c);
	bool kblock = report_starts(c.text, c.ntext, "<stack trace>");
	bool ublock = report_starts(c.text, c.ntext, "<user stack trace>");
	if (kblock || ublock) {
		if (l->partial) {
			s->st->truncated = 1;
			return 0;
		}
		return on_block(s, in, &c, ublock);
	}
	s->st->skipped++;
	return l->partial ? 0 : on_event(s, &c);
}

/* Flushes what is left, oldest group first, so stacks keep input order. */
static int flush_all(struct ft_state *s)
{
	for (;;) {
		struct ft_group *old = NULL;
		for (int i = 0; i < FT_GROUPS; i++)
			if (s->g[i].used && (!old || s->g[i].seq < old->seq))
				old = &s->g[i];
		if (!old)
			return 0;
		old->used = false;
		int ret = flush(s, old);
		if (ret)
			return ret;
	}
}

int report_parse_ftrace(struct report_in *in, struct report_emitter *em)
{
	struct ft_state *s = calloc(1, sizeof(*s));
	struct report_line l;
	int ret = 0;

	if (!s)
		return -ENOMEM;
	s->em = em;
	s->st = in->st;
	while (!ret && report_in_next(in, &l))
		ret = on_line(s, in, &l);
	if (!ret)
		ret = flush_all(s);
	for (int i = 0; i < FT_GROUPS; i++) {
		report_sb_free(&s->g[i].k);
		report_sb_free(&s->g[i].u);
	}
	free(s);
	return ret;
}
