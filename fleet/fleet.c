/* The sink and the report source put together from url, sql, rows, http
 * and sink. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/fleet.h"

struct fleet {
	struct fleet_http *http;
	struct fleet_sink *sink;
};

/* The sender's transport: the connection, from the sender thread only. */
static int http_post(void *ctx, const char *query, const void *body, size_t len,
		     char *err, size_t errlen)
{
	return fleet_http_post(ctx, query, body, len, NULL, err, errlen);
}

/* A table made by an ftstack without the cgroup column gets it. Returns 0
 * or the errors of fleet_http_post. */
static int add_cgroup_column(struct fleet_http *h, const struct fleet_url *u, char *err,
			     size_t errlen)
{
	struct fleet_buf sql = { 0 }, answer = { 0 };
	int ret = fleet_sql_cgroup_column(u, false, &sql);
	if (ret == 0)
		ret = fleet_http_post(h, sql.data, NULL, 0, &answer, err, errlen);
	if (ret == 0 && answer.data && atoi(answer.data) == 0) {
		fleet_buf_free(&sql);
		if ((ret = fleet_sql_cgroup_column(u, true, &sql)) == 0)
			ret = fleet_http_post(h, sql.data, NULL, 0, NULL, err, errlen);
	}
	fleet_buf_free(&sql);
	fleet_buf_free(&answer);
	return ret;
}

int fleet_open(const char *url, const char *env_password, size_t buffer_bytes,
	       struct fleet **out, char *err, size_t errlen)
{
	struct fleet_url u;
	struct fleet_buf create = { 0 }, insert = { 0 };
	struct fleet *f = calloc(1, sizeof(*f));
	int ret = f ? fleet_url_parse(url, env_password, &u, err, errlen) : -ENOMEM;
	if (ret == 0 && ((ret = fleet_http_create(&u, &f->http)) < 0 ||
			 (ret = fleet_sql_create(&u, &create)) < 0 ||
			 (ret = fleet_sql_insert(&u, &insert)) < 0))
		snprintf(err, errlen, "out of memory");
	if (ret == 0)
		ret = fleet_http_post(f->http, create.data, NULL, 0, NULL, err, errlen);
	if (ret == 0)
		ret = add_cgroup_column(f->http, &u, err, errlen);
	if (ret == 0) {
		struct fleet_sink_config c = {
			.tr = { .post = http_post, .ctx = f->http },
			.insert = insert.data,
			.buffer_bytes = buffer_bytes,
			.backoff_min_ms = 200,
			.backoff_max_ms = 2000,
			.flush_ms = 10000,
		};
		if ((ret = fleet_sink_start(&c, &f->sink)) < 0)
			snprintf(err, errlen, "cannot start the sender thread: %s", strerror(-ret));
	}
	explicit_bzero(u.password, sizeof(u.password));
	fleet_buf_free(&create);
	fleet_buf_free(&insert);
	if (ret < 0) {
		fleet_close(f, NULL);
		return ret;
	}
	*out = f;
	return 0;
}

int fleet_send(struct fleet *f, const struct fleet_rows_meta *m,
	       const struct agg_named_stack *s, size_t n)
{
	struct fleet_buf b = { 0 };
	uint64_t weight = fleet_rows_encode(&b, m, s, n);
	int ret = fleet_sink_push(f->sink, &b, n, weight);
	fleet_buf_free(&b);
	return ret;
}

void fleet_close(struct fleet *f, struct fleet_sink_stats *out)
{
	if (!f)
		return;
	fleet_sink_close(f->sink, out);
	fleet_http_free(f->http);
	free(f);
}

/* The URL's own filters over Q's. Returns 0 or -EINVAL with err set. */
static int url_filters(const struct fleet_url *u, struct fleet_query *q, char *err, size_t errlen)
{
	time_t now = time(NULL);
	if (u->since[0] && fleet_time_parse(u->since, now, &q->since) < 0) {
		snprintf(err, errlen, "since=%s: not a time (epoch seconds, YYYY-MM-DD[ HH:MM[:SS]], -2h)", u->since);
		return -EINVAL;
	}
	q->has_since |= u->since[0] != '\0';
	if (u->until[0] && fleet_time_parse(u->until, now, &q->until) < 0) {
		snprintf(err, errlen, "until=%s: not a time (epoch seconds, YYYY-MM-DD[ HH:MM[:SS]], -2h)", u->until);
		return -EINVAL;
	}
	if (u->host_pattern[0])
		q->host_pattern = u->host_pattern;
	if (u->event[0])
		q->event = u->event;
	if (u->mode[0])
		q->mode = u->mode;
	return 0;
}

long fleet_report(const char *url, const char *env_password, const struct fleet_query *query,
		  fleet_row_fn fn, void *ctx, char *err, size_t errlen)
{
	struct fleet_url u;
	struct fleet_query q = *query;
	struct fleet_buf sql = { 0 }, answer = { 0 };
	struct fleet_http *h = NULL;
	long ret = fleet_url_parse(url, env_password, &u, err, errlen);
	if (ret == 0)
		ret = url_filters(&u, &q, err, errlen);
	if (ret == 0 && ((ret = fleet_sql_select(&u, &q, &sql)) < 0 ||
			 (ret = fleet_http_create(&u, &h)) < 0))
		snprintf(err, errlen, "out of memory");
	if (ret == 0)
		ret = fleet_http_post(h, sql.data, NULL, 0, &answer, err, errlen);
	if (ret == 0) {
		ret = fleet_rows_decode(answer.data, answer.len, fn, ctx);
		if (ret == -EPROTO)
			snprintf(err, errlen, "the server's answer is not the RowBinary asked for");
		else if (ret < 0)
			snprintf(err, errlen, "%s", strerror((int)-ret));
	}
	explicit_bzero(u.password, sizeof(u.password));
	fleet_http_free(h);
	fleet_buf_free(&sql);
	fleet_buf_free(&answer);
	return ret;
}
