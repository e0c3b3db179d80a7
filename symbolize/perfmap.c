/* sym_perfmap: the symbol maps JIT compilers write for profilers,
 * /tmp/perf-PID.map, one "START SIZE name" line per piece of generated code
 * (hex numbers; the name runs to the end of the line and may hold spaces),
 * appended as code is generated: node --perf-basic-prof, the JVM's
 * perf-map-agent, LuaJIT, .NET with DOTNET_PerfMapEnabled. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

struct pmsym {
	uint64_t addr, size; /* addr first: sym_addr_upper_bound */
	const char *name;
	size_t line;
};

struct sym_perfmap {
	struct pmsym *syms;
	size_t n, cap;
};

/* Start order; at one start the line written last (the newest code) first. */
static int by_addr(const void *a, const void *b)
{
	const struct pmsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->line > y->line ? -1 : x->line < y->line;
}

/* Parses one line into S (the name is a copy). Returns 1, 0 for a line that
 * is not an entry, -ENOMEM. */
static int parse_line(char *line, struct pmsym *s)
{
	char *end;
	line[strcspn(line, "\n")] = '\0';
	s->addr = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return 0;
	char *size = end + 1;
	s->size = strtoull(size, &end, 16);
	if (end == size || *end != ' ' || !end[1] || s->size == 0 || s->addr + s->size < s->addr)
		return 0;
	s->name = strdup(end + 1);
	return s->name ? 1 : -ENOMEM;
}

int sym_perfmap_load(const char *path, struct sym_perfmap **out)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	struct sym_perfmap *m = calloc(1, sizeof(*m));
	char *line = NULL;
	size_t len = 0;
	int ret = m ? 0 : -ENOMEM;
	for (size_t nr = 0; ret == 0 && getline(&line, &len, f) >= 0; nr++) {
		struct pmsym s = { .line = nr };
		int got = parse_line(line, &s);
		if (got <= 0) {
			ret = got;
			continue;
		}
		if (MEM_GROW(m->syms, m->cap, m->n + 1, 256)) {
			free((char *)s.name);
			ret = -ENOMEM;
			break;
		}
		m->syms[m->n++] = s;
	}
	free(line);
	fclose(f);
	if (ret < 0) {
		sym_perfmap_free(m);
		return ret;
	}
	if (m->n) /* an empty map has no array: qsort(NULL, 0) is undefined */
		qsort(m->syms, m->n, sizeof(*m->syms), by_addr);
	*out = m;
	return 0;
}

void sym_perfmap_free(struct sym_perfmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free((char *)m->syms[i].name);
	free(m->syms);
	free(m);
}

const char *sym_perfmap_lookup(const struct sym_perfmap *m, uint64_t addr, uint64_t *off)
{
	size_t i = m ? sym_addr_upper_bound(m->syms, m->n, sizeof(*m->syms), addr) : 0;
	if (i == 0)
		return NULL;
	/* the newest entry at that start sorts first among its equals */
	while (i > 1 && m->syms[i - 2].addr == m->syms[i - 1].addr)
		i--;
	const struct pmsym *s = &m->syms[i - 1];
	if (addr - s->addr >= s->size)
		return NULL;
	if (off)
		*off = addr - s->addr;
	return s->name;
}
