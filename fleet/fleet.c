/* The sink and the report source put together from url, sql, rows, http
 * and sink. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fleet/fleet.h"

struct fleet {
	struct fleet_http *http;
	struct fleet_sink *sink;
	struct fleet_url url;       /* password wiped */
	char *insert;               /* the INSERT statements: the minute rows, */
	char *insert_stacks;        /*   TABLE_stacks */
	uint64_t run;
	uint32_t seq;
};

/* The sender's transport: the connection, from the sender thread only. */
static int http_insert(void *ctx, const char *query_id, const void *body, size_t len,
		       struct fleet_attempt *a, char *err, size_t errlen)
{
	struct fleet *f = ctx;
	return fleet_http_insert(f->http, f->insert, query_id, body, len, a, err, errlen);
}

static int http_insert_stacks(void *ctx, const void *body, size_t len, struct fleet_attempt *a,
			      char *err, size_t errlen)
{
	struct fleet *f = ctx;
	return fleet_http_insert(f->http, f->insert_stacks, NULL, body, len, a, err, errlen);
}

/* Returns 1 while QUERY_ID runs on the server, 0 once it does not, or
 * fleet_http_post's errors. */
static int running(struct fleet *f, const char *query_id, char *err, size_t errlen)
{
	struct fleet_buf sql = { 0 }, answer = { 0 };
	int ret = fleet_sql_running(query_id, &sql);
	if (ret == 0)
		ret = fleet_http_post(f->http, sql.data, NULL, 0, &answer, err, errlen);
	if (ret == 0)
		ret = answer.data && atoi(answer.data) > 0;
	fleet_buf_free(&sql);
	fleet_buf_free(&answer);
	return ret;
}

/* Which rows of B the table holds, once B's last attempt has ended there
 * (an insert still running could write after the look). Waits 5 s at most
 * for that, then -EAGAIN: the sender looks again after its delay. */
static int http_landed(void *ctx, const struct fleet_batch *b, const char *query_id,
		       bool *present, char *err, size_t errlen)
{
	struct fleet *f = ctx;
	struct fleet_buf sql = { 0 }, answer = { 0 };
	int ret;
	for (int i = 0; (ret = running(f, query_id, err, errlen)) == 1 && i < 50; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 100000000L }, NULL);
	if (ret == 1) {
		snprintf(err, errlen, "the insert %s still runs on the server", query_id);
		return -EAGAIN;
	}
	if (ret == 0 && (ret = fleet_sql_landed(&f->url, b, &sql)) == 0)
		ret = fleet_http_post(f->http, sql.data, NULL, 0, &answer, err, errlen);
	if (ret == 0 && answer.len % 4) {
		snprintf(err, errlen, "the server's answer is not the RowBinary asked for");
		ret = -EPROTO;
	}
	for (size_t i = 0; ret == 0 && i < answer.len; i += 4) {
		const unsigned char *p = (const unsigned char *)answer.data + i;
		uint32_t row = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
		if (row < b->rows)
			present[row] = true;
	}
	fleet_buf_free(&sql);
	fleet_buf_free(&answer);
	return ret;
}

/* Runs SQL (made by MAKE) and appends its answer to OUT (may be NULL).
 * Returns 0 or the errors of fleet_http_post. */
static int run_sql(struct fleet *f, int made, struct fleet_buf *sql, struct fleet_buf *out,
		   char *err, size_t errlen)
{
	int ret = made;
	if (ret < 0)
		snprintf(err, errlen, "out of memory");
	else
		ret = fleet_http_post(f->http, sql->data, NULL, 0, out, err, errlen);
	fleet_buf_free(sql);
	return ret;
}

/* Whether the TabSeparated LINES hold the line LINE. */
static bool has_line(const struct fleet_buf *lines, const char *line)
{
	struct fleet_buf all = { 0 };   /* "\n" + lines: every line between newlines */
	char want[300];
	snprintf(want, sizeof(want), "\n%s\n", line);
	fleet_buf_str(&all, "\n");
	fleet_buf_str(&all, lines->data ? lines->data : "");
	bool have = all.data && strstr(all.data, want);
	fleet_buf_free(&all);
	return have;
}

/* Adds the columns an older ftstack's table lacks (18.16 has no ADD COLUMN
 * IF NOT EXISTS, so system.columns says which). Returns 0 or the errors of
 * fleet_http_post. */
static int add_missing_columns(struct fleet *f, const struct fleet_buf *names, char *err,
			       size_t errlen)
{
	struct fleet_buf sql = { 0 };
	int ret = 0;
	for (size_t i = 0; ret == 0 && i < fleet_ncolumns; i++)
		if (!has_line(names, fleet_columns[i].bare))
			ret = run_sql(f, fleet_sql_add_column(&f->url, i, &sql), &sql, NULL, err, errlen);
	return ret;
}

/* Makes the tables: TABLE, TABLE_stacks, TABLE_hourly and the view, unless
 * TABLE is a Distributed table (its shards' tables have the view; a view
 * here would count each row twice), whose TABLE_stacks and TABLE_hourly
 * must then be Distributed tables too. Refuses an older ftstack's table
 * (frames as arrays in each row): doc/FLEET.md says how to migrate it.
 * Returns 0, -EINVAL, or the errors of fleet_http_post. */
static int make_tables(struct fleet *f, char *err, size_t errlen)
{
	struct fleet_buf sql = { 0 }, names = { 0 }, tables = { 0 };
	char line[300];
	const char *t = f->url.table;
	int ret = run_sql(f, fleet_sql_columns(&f->url, &sql), &sql, &names, err, errlen);
	if (ret == 0 && has_line(&names, "kernel")) {
		snprintf(err, errlen, "%s.%s is an older ftstack's table (frames as arrays in each row): "
			 "migrate it as doc/FLEET.md (\"Older tables\") says", f->url.db, t);
		ret = -EINVAL;
	}
	if (ret == 0)
		ret = run_sql(f, fleet_sql_tables(&f->url, &sql), &sql, &tables, err, errlen);
	snprintf(line, sizeof(line), "%s\tDistributed", t);
	bool distributed = ret == 0 && has_line(&tables, line);
	for (int i = 0; distributed && ret == 0 && i < 2; i++) {
		snprintf(line, sizeof(line), "%s%s\tDistributed", t, i ? "_hourly" : "_stacks");
		if (!has_line(&tables, line)) {
			snprintf(err, errlen, "%s.%s is a Distributed table, and so must %s.%s%s be "
				 "(doc/FLEET.md, \"Shards\")", f->url.db, t, f->url.db, t,
				 i ? "_hourly" : "_stacks");
			ret = -EINVAL;
		}
	}
	for (unsigned i = 0; !distributed && ret == 0 && i < FLEET_NCREATE; i++)
		ret = run_sql(f, fleet_sql_create(&f->url, i, &sql), &sql, NULL, err, errlen);
	fleet_buf_free(&names);   /* what the table has now */
	if (ret == 0)
		ret = run_sql(f, fleet_sql_columns(&f->url, &sql), &sql, &names, err, errlen);
	if (ret == 0)
		ret = add_missing_columns(f, &names, err, errlen);
	fleet_buf_free(&names);
	fleet_buf_free(&tables);
	return ret;
}


/* The message of a connection or statement that could not be set up. */
static void setup_error(int ret, char *err, size_t errlen)
{
	if (ret == -ELIBACC)
		snprintf(err, errlen, "%s (Debian's libcurl4 has it)", fleet_http_load_error());
	else
		snprintf(err, errlen, "out of memory");
}

int fleet_open(const char *url, const char *env_password, size_t buffer_bytes,
	       struct fleet **out, char *err, size_t errlen)
{
	struct fleet_buf insert = { 0 }, stacks = { 0 };
	struct fleet *f = calloc(1, sizeof(*f));
	int ret = f ? fleet_url_parse(url, env_password, &f->url, err, errlen) : -ENOMEM;
	if (ret == 0 && ((ret = fleet_http_alloc(&f->url, &f->http)) < 0 ||
			 (ret = fleet_sql_insert(&f->url, &insert)) < 0 ||
			 (ret = fleet_sql_insert_stacks(&f->url, &stacks)) < 0))
		setup_error(ret, err, errlen);
	if (f)
		explicit_bzero(f->url.password, sizeof(f->url.password)); /* the connection has it */
	if (ret == 0)
		ret = make_tables(f, err, errlen);
	if (ret == 0) {
		f->insert = insert.data;
		f->insert_stacks = stacks.data;
		insert = stacks = (struct fleet_buf){ 0 };
		f->run = fleet_run_id();
		struct fleet_sink_config c = {
			.tr = { .insert = http_insert, .landed = http_landed,
				.insert_stacks = http_insert_stacks, .ctx = f },
			.buffer_bytes = buffer_bytes,
			.backoff_min_ms = 200,
			.backoff_max_ms = 2000,
			.flush_ms = 10000,
		};
		if ((ret = fleet_sink_open(&c, &f->sink)) < 0)
			snprintf(err, errlen, "cannot start the sender thread: %s", strerror(-ret));
	}
	fleet_buf_free(&insert);
	fleet_buf_free(&stacks);
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
	struct fleet_rows_meta mine = *m;
	struct fleet_batch b;
	mine.run = f->run;
	mine.seq = ++f->seq;
	int ret = fleet_batch_encode(&b, &mine, s, n);
	if (ret == 0 && (ret = fleet_sink_push(f->sink, &b)) < 0)
		fleet_batch_free(&b);
	return ret;
}

void fleet_close(struct fleet *f, struct fleet_sink_stats *out)
{
	if (!f)
		return;
	fleet_sink_close(f->sink, out);
	fleet_http_free(f->http);
	free(f->insert);
	free(f->insert_stacks);
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
			 (ret = fleet_http_alloc(&u, &h)) < 0))
		setup_error((int)ret, err, errlen);
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
