/* ftstack report: one parsed or queried stack into the report's named
 * table, with -K/-U and --through applied. Shared by the file parsers
 * (report/'s, called from report_parse.c) and the clickhouse:// source
 * (report_fleet.c). */
#include <inttypes.h>
#include <string.h>
#include "cmd/report_cmd.h"
#include "symbolize/symbolize.h"

static int event_index(struct report_ctx *c, const char *name)
{
	for (int i = 0; i < c->nevents; i++)
		if (strcmp(c->events[i], name) == 0)
			return i;
	if (c->nevents == FT_MAX_EVENTS)
		return c->nevents - 1;
	c->events[c->nevents] = strdup(name);
	return c->events[c->nevents] ? c->nevents++ : 0;
}

/* Keeps -K/-U's half and cuts at --through; false when the stack is dropped. */
static bool shape(struct report_ctx *c, const struct report_stack *s, uint32_t *k0,
		  uint32_t *nk, uint32_t *nu)
{
	const struct ft_options *o = c->o;
	*k0 = 0;
	*nk = o->user_only ? 0 : s->nk;
	*nu = o->kernel_only ? 0 : s->nu;
	if (!o->through)
		return true;
	for (uint32_t i = 0; i < s->nk; i++) {
		if (strcmp(s->kframes[i], o->through) == 0) {
			*k0 = i;
			*nk = o->user_only ? 0 : s->nk - i;
			return true;
		}
	}
	c->through_miss += s->count;
	return false;
}

int ft_report_on_stack(void *arg, const struct report_stack *s)
{
	struct report_ctx *c = arg;
	uint32_t k0, nk, nu;
	if (!shape(c, s, &k0, &nk, &nu))
		return 0;
	for (uint32_t i = 0; i < nk; i++)
		c->frames[i] = s->kframes[k0 + i];
	for (uint32_t i = 0; i < nu; i++) {
		/* a frame its host deferred: named here when a debug file is */
		const char *named = c->namer && s->uframes[i][0] == '[' ?
			sym_namer_name(c->namer, s->uframes[i], !c->o->no_demangle) : NULL;
		c->frames[nk + i] = named ? named : s->uframes[i];
	}
	c->have_comm |= *s->comm != '\0';
	bool comm = out_needs_comm(c->o->format, c->o->per_process);
	int ev = event_index(c, s->event);
	c->ev_samples[ev] += s->count;
	c->ev_periods[ev] += s->period ? s->count : 0;
	struct agg_named_stack ns = {
		.event = (uint32_t)ev,
		.pid = c->o->per_process ? s->pid : 0,
		.comm = comm && *s->comm ? s->comm : NULL, /* folded input has its comm in the frames */
		.frames = c->frames, .nkframes = nk, .nuframes = nu,
		.count = s->count, .weight = s->period ? s->period * s->count : s->count,
	};
	return (c->err = agg_named_add(c->named, &ns));
}

int ft_report_names_open(struct report_ctx *c, struct ft_names *n)
{
	int status = ft_names_open(c->o, n);
	if (status == 0 && sym_namer_alloc(n->debug_dir, n->client, &c->namer) < 0) {
		ft_error("out of memory");
		status = 1;
	}
	return status;
}

void ft_report_names_close(struct report_ctx *c, struct ft_names *n)
{
	uint64_t named, unnamed;
	sym_namer_counts(c->namer, &named, &unnamed);
	if (unnamed)
		ft_warn("deferred frames: %" PRIu64 " named here, %" PRIu64 " not (no debug file "
			"under %s%s)", named, unnamed, n->debug_dir,
			n->client ? " nor from DEBUGINFOD_URLS" : "; DEBUGINFOD_URLS is not set");
	else if (named)
		ft_warn("deferred frames: %" PRIu64 " named here", named);
	sym_namer_free(c->namer);
	c->namer = NULL;
	ft_names_close(n);
}
