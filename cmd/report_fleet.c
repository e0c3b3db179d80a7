/* ftstack report clickhouse://HOST[:PORT]/DB.TABLE: ClickHouse groups the
 * fleet's rows by stack (fleet_report) and each grouped row joins the same
 * pipeline as a parsed file's stacks, so every format, -m/-t/-x, -K/-U,
 * --through, -P and --diff apply. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cmd/report_cmd.h"
#include "fleet/fleet.h"

struct fleet_ctx {
	struct report_ctx *c;
	const char *kf[REPORT_MAX_FRAMES];
	const char *uf[REPORT_MAX_FRAMES];
	uint64_t stacks, weight;
};

/* A stored row (frames root first) as a parsed stack (leaf first). Frames
 * past REPORT_MAX_FRAMES are the root-most: the leaf end is kept. */
static int on_row(void *arg, const struct fleet_row *r)
{
	struct fleet_ctx *f = arg;
	uint32_t nk = r->nk < REPORT_MAX_FRAMES ? r->nk : REPORT_MAX_FRAMES;
	uint32_t nu = r->nu < REPORT_MAX_FRAMES ? r->nu : REPORT_MAX_FRAMES;
	for (uint32_t i = 0; i < nk; i++)
		f->kf[i] = r->kernel[r->nk - 1 - i];
	for (uint32_t i = 0; i < nu; i++)
		f->uf[i] = r->user[r->nu - 1 - i];
	struct report_stack s = {
		.comm = r->comm, .pid = r->pid, .event = r->event,
		.kframes = f->kf, .nk = nk, .uframes = f->uf, .nu = nu, .count = r->weight,
	};
	f->stacks++;
	f->weight += r->weight;
	return ft_report_on_stack(f->c, &s);
}

int ft_report_clickhouse(struct report_ctx *c, const char *url)
{
	const struct ft_options *o = c->o;
	struct fleet_query q = {
		.host_pattern = o->host_pattern, .event = o->event_filter, .mode = o->mode_filter,
		.by_comm = out_needs_comm(o->format, o->per_process) || o->diff,
		.by_pid = o->per_process,
	};
	time_t now = time(NULL);
	if (o->since) {
		fleet_time_parse(o->since, now, &q.since); /* checked by the option parser */
		q.has_since = true;
	}
	if (o->until)
		fleet_time_parse(o->until, now, &q.until);
	struct fleet_ctx *f = calloc(1, sizeof(*f));
	char err[512], shown[600];
	if (!f) {
		ft_error("out of memory");
		return 1;
	}
	f->c = c;
	long ret = fleet_report(url, getenv(FLEET_PASSWORD_ENV), &q, on_row, f, err, sizeof(err));
	struct fleet_url u;
	bool parsed = fleet_url_parse(url, NULL, &u, shown, sizeof(shown)) == 0;
	if (parsed)
		fleet_url_show(&u, shown, sizeof(shown));
	explicit_bzero(u.password, sizeof(u.password));
	if (ret < 0) {
		ft_error("%s: %s", parsed ? shown : "report", c->err ? "out of memory" : err);
		free(f);
		return ret == -EINVAL || ret == -EACCES || ret == -ECONNREFUSED ||
		       ret == -EHOSTUNREACH ? 2 : 1;
	}
	ft_warn("%s: %" PRIu64 " distinct stacks, weight %" PRIu64, shown,
		f->stacks, f->weight);
	free(f);
	return 0;
}
