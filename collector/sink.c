/* --sink: the run's stacks into ClickHouse through fleet/. Each -i interval
 * (or the whole run) is named with its comm, handed to fleet's sender thread
 * as one batch, and the loop goes back to its rings; the network is never
 * waited on here, except for fleet's bounded flush at the very end. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collector/session.h"
#include "fleet/fleet.h"

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

int ft_sink_open(struct ft_sink_state *k, const struct ft_options *o)
{
	char err[512];
	if (!o->sink)
		return 0;
	if (o->host_name)
		snprintf(k->host, sizeof(k->host), "%s", o->host_name);
	else if (gethostname(k->host, sizeof(k->host) - 1) < 0)
		strcpy(k->host, "unknown");
	struct fleet_url u;
	char shown[600];
	if (fleet_url_parse(o->sink, NULL, &u, err, sizeof(err)) == 0)
		ft_debug("sink: %s, host %s, buffer %zu bytes", fleet_url_show(&u, shown, sizeof(shown)),
			 k->host, o->sink_buffer);
	explicit_bzero(u.password, sizeof(u.password));
	int ret = fleet_open(o->sink, getenv(FLEET_PASSWORD_ENV), o->sink_buffer, &k->fleet, err,
			     sizeof(err));
	if (ret < 0) {
		ft_error("--sink %s: %s%s",
			fleet_url_parse(o->sink, NULL, &u, shown, sizeof(shown)) == 0 ?
			fleet_url_show(&u, shown, sizeof(shown)) : "URL", err,
			ret == -EACCES ? " (check the user and password, or " FLEET_PASSWORD_ENV ")" :
			ret == -ECONNREFUSED || ret == -EHOSTUNREACH || ret == -ETIMEDOUT ?
			" (is clickhouse-server running there? its HTTP port is 8123 by default)" : "");
		explicit_bzero(u.password, sizeof(u.password));
		return -EINVAL;
	}
	k->since = now_ms();
	return 0;
}

static const char *mode_name(enum ft_cmd cmd)
{
	return cmd == FT_PROFILE ? "profile" : cmd == FT_OFFCPU ? "offcpu" : "count";
}

void ft_sink_interval(struct ft_session *s)
{
	if (!s->sink.fleet)
		return;
	ft_session_kernel_wait(s); /* samples may wait for the kernel's symbols */
	struct agg_named *named = NULL;
	const char **names = calloc(s->plan.nevents + 1, sizeof(*names));
	int ret = names ? agg_named_alloc(&named) : -ENOMEM;
	if (ret == 0) { /* the fleet's rows: what the host cannot name, by build-id */
		sym_cache_use_deferred(s->output.symcache, true);
		ret = ft_build_named(s, named, true);
		sym_cache_use_deferred(s->output.symcache, s->opt->build_ids);
	}
	if (ret == 0) {
		for (int i = 0; i < s->plan.nevents; i++)
			names[i] = s->plan.events[i].name;
		const struct agg_named_stack *stacks;
		size_t n = agg_named_finish(named, NULL, &stacks, NULL);
		uint64_t now = now_ms();
		struct fleet_rows_meta m = {
			.ts = (uint32_t)time(NULL),
			.duration_ms = (uint32_t)(now - s->sink.since),
			.host = s->sink.host,
			.mode = mode_name(s->opt->cmd),
			.events = names,
			.nevents = (uint32_t)s->plan.nevents,
			.by_weight = s->opt->cmd == FT_OFFCPU,
			.cgroup = s->cgroup.open ? s->cgroup.path : NULL,
		};
		s->sink.since = now;
		ret = fleet_send(s->sink.fleet, &m, stacks, n);
	}
	if (ret < 0)
		s->sink.lost = true;
	agg_named_free(named);
	free(names);
}

void ft_sink_close(struct ft_sink_state *k, const struct ft_options *o)
{
	if (!k->fleet)
		return;
	struct fleet_sink_stats st;
	fleet_close(k->fleet, &st);
	k->fleet = NULL;
	char line[1024];
	size_t n = 0;
#define ADD(...) (n += (size_t)snprintf(line + n, n < sizeof(line) ? sizeof(line) - n : 0, __VA_ARGS__))
	ADD("sink: %" PRIu64 " rows sent in %" PRIu64 " inserts, %" PRIu64 " pending at exit, %"
	    PRIu64 " dropped", st.rows_sent, st.inserts, st.rows_pending,
	    st.rows_dropped_full + st.rows_rejected);
	if (st.rows_dropped_full)
		ADD("; %" PRIu64 " rows (weight %" PRIu64 ") dropped: --sink-buffer of %zu bytes full "
		    "while the server was unreachable", st.rows_dropped_full, st.weight_dropped_full,
		    o->sink_buffer);
	if (st.rows_rejected)
		ADD("; %" PRIu64 " rows (weight %" PRIu64 ") rejected by the server",
		    st.rows_rejected, st.weight_rejected);
	if (st.rows_pending)
		ADD("; %" PRIu64 " rows (weight %" PRIu64 ") still unsent after 10 s",
		    st.rows_pending, st.weight_pending);
	if (st.rows_unsure)
		ADD(" (%" PRIu64 " of them in an insert whose answer never came: they may be in "
		    "the table)", st.rows_unsure);
	if (k->lost)
		ADD("; out of memory building a batch");
	if ((st.retries || st.rows_rejected) && st.last_error[0])
		ADD(" (%" PRIu64 " retries; last error: %s)", st.retries, st.last_error);
	if (st.verified)
		ADD("; %" PRIu64 " inserts without an answer looked up in the table, %" PRIu64
		    " of their rows were there and not sent again", st.verified, st.rows_found);
#undef ADD
	ft_debug("sink: %" PRIu64 " bytes of rows sent as %" PRIu64 " bytes of gzip", st.bytes_raw,
		 st.bytes_wire);
	ft_warn("%s", line);
}
