/* The SQL ftstack sends: every value quoted here, in the one form both
 * ClickHouse 18.16 (Debian 12) and current releases read. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "fleet/fleet.h"

void fleet_buf_free(struct fleet_buf *b)
{
	free(b->data);
	*b = (struct fleet_buf){ 0 };
}

void fleet_buf_put(struct fleet_buf *b, const void *p, size_t n)
{
	if (b->failed)
		return;
	if (MEM_GROW(b->data, b->cap, b->len + n + 1, 256)) {
		b->failed = true;
		return;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0'; /* SQL text stays a C string */
}

void fleet_buf_str(struct fleet_buf *b, const char *s)
{
	fleet_buf_put(b, s, strlen(s));
}

/* Appends S escaped for a quoted literal whose quote is Q. */
static void escape(struct fleet_buf *b, const char *s, char q)
{
	char hex[5];
	fleet_buf_put(b, &q, 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\' || *p == (unsigned char)q) {
			fleet_buf_put(b, "\\", 1);
			fleet_buf_put(b, p, 1);
		} else if (*p < 0x20 || *p >= 0x7f) {
			/* control bytes and every non-ASCII byte, valid UTF-8 or not */
			snprintf(hex, sizeof(hex), "\\x%02X", *p);
			fleet_buf_put(b, hex, 4);
		} else {
			fleet_buf_put(b, p, 1);
		}
	}
	fleet_buf_put(b, &q, 1);
}

void fleet_sql_string(struct fleet_buf *b, const char *s)
{
	escape(b, s, '\'');
}

void fleet_sql_ident(struct fleet_buf *b, const char *name)
{
	escape(b, name, '`');
}

void fleet_sql_like(struct fleet_buf *b, const char *glob)
{
	struct fleet_buf pat = { 0 };
	for (const char *p = glob; *p; p++) {
		if (*p == '*')
			fleet_buf_put(&pat, "%", 1);
		else if (*p == '?')
			fleet_buf_put(&pat, "_", 1);
		else if (*p == '%' || *p == '_' || *p == '\\') {
			fleet_buf_put(&pat, "\\", 1); /* LIKE's own escape, then the literal's */
			fleet_buf_put(&pat, p, 1);
		} else
			fleet_buf_put(&pat, p, 1);
	}
	if (pat.failed)
		b->failed = true;
	fleet_sql_string(b, pat.data ? pat.data : "");
	fleet_buf_free(&pat);
}

/* DB.TABLE with SUFFIX ("", "_stacks", "_hourly", "_hourly_mv"). */
static void table_name_of(struct fleet_buf *b, const struct fleet_url *u, const char *suffix)
{
	char name[sizeof(u->table) + 16];
	snprintf(name, sizeof(name), "%s%s", u->table, suffix);
	fleet_sql_ident(b, u->db);
	fleet_buf_str(b, ".");
	fleet_sql_ident(b, name);
}

static void table_name(struct fleet_buf *b, const struct fleet_url *u)
{
	table_name_of(b, u, "");
}

/* The minute rows. run, seq and row (a batch's identity and the row's
 * place in it) came with exactly-once delivery; stack (a fleet_stack_hash,
 * the frames in TABLE_stacks) replaced the first release's kernel and user
 * arrays. The columns marked hourly are TABLE_hourly's keys too. */
const struct fleet_column fleet_columns[] = {
	{ "ts", "ts", "DateTime", false },
	{ "duration_ms", "duration_ms", "UInt32", false },
	{ "host", "host", "String", true },
	{ "mode", "mode", "String", true },
	{ "event", "event", "String", true },
	{ "comm", "comm", "String", true },
	{ "pid", "pid", "UInt32", true },
	{ "stack", "stack", "UInt64", true },
	{ "weight", "weight", "UInt64", false },
	{ "run", "run", "UInt64", false },
	{ "seq", "seq", "UInt32", false },
	{ "row", "row", "UInt32", false },
	{ "cgroup", "cgroup", "String", false }, /* the minute rows only (for now) */
};
const size_t fleet_ncolumns = sizeof(fleet_columns) / sizeof(fleet_columns[0]);

/* "a T, b U" (with types) or "a, b"; only the hourly keys when HOURLY. */
static void column_list(struct fleet_buf *b, bool types, bool hourly)
{
	bool first = true;
	for (size_t i = 0; i < fleet_ncolumns; i++) {
		if (hourly && !fleet_columns[i].hourly)
			continue;
		fleet_buf_str(b, first ? "" : ", ");
		first = false;
		fleet_buf_str(b, fleet_columns[i].name);
		if (types) {
			fleet_buf_str(b, " ");
			fleet_buf_str(b, fleet_columns[i].type);
		}
	}
}

/* The hourly keys other than host and event, which lead the sort key. */
static void hourly_rest(struct fleet_buf *b)
{
	for (size_t i = 0; i < fleet_ncolumns; i++) {
		const char *n = fleet_columns[i].bare;
		if (fleet_columns[i].hourly && strcmp(n, "host") && strcmp(n, "event")) {
			fleet_buf_str(b, ", ");
			fleet_buf_str(b, fleet_columns[i].name);
		}
	}
}

/* Minute and hourly rows partitioned by day and ordered for the queries
 * report runs (one host's or event's rows over a time range); the
 * PARTITION BY / ORDER BY clauses are the custom-partitioning syntax both
 * 18.16 and current releases take. A stack written twice (by two hosts, or
 * again after a lost answer) collapses in TABLE_stacks at its merges, and
 * reads the same before. */
int fleet_sql_create(const struct fleet_url *u, unsigned i, struct fleet_buf *b)
{
	if (i >= FLEET_NCREATE)
		return -EINVAL;
	fleet_buf_str(b, i == 3 ? "CREATE MATERIALIZED VIEW IF NOT EXISTS " : "CREATE TABLE IF NOT EXISTS ");
	table_name_of(b, u, (const char *[]){ "", "_stacks", "_hourly", "_hourly_mv" }[i]);
	if (i == 0) {
		fleet_buf_str(b, " (");
		column_list(b, true, false);
		fleet_buf_str(b, ") ENGINE = MergeTree PARTITION BY toDate(ts) ORDER BY (host, event, ts)");
	} else if (i == 1) {
		fleet_buf_str(b, " (stack UInt64, kernel Array(String), `user` Array(String)) "
			      "ENGINE = ReplacingMergeTree ORDER BY stack");
	} else if (i == 2) {
		fleet_buf_str(b, " (hour DateTime, ");
		column_list(b, true, true);
		fleet_buf_str(b, ", weight UInt64) ENGINE = SummingMergeTree(weight) "
			      "PARTITION BY toDate(hour) ORDER BY (host, event, hour");
		hourly_rest(b);
		fleet_buf_str(b, ")");
	} else {
		fleet_buf_str(b, " TO ");
		table_name_of(b, u, "_hourly");
		fleet_buf_str(b, " AS SELECT toStartOfHour(ts) AS hour, ");
		column_list(b, false, true);
		fleet_buf_str(b, ", weight FROM ");
		table_name(b, u);
	}
	return b->failed ? -ENOMEM : 0;
}

int fleet_sql_tables(const struct fleet_url *u, struct fleet_buf *b)
{
	char name[sizeof(u->table) + 16];
	fleet_buf_str(b, "SELECT name, engine FROM system.tables WHERE database = ");
	fleet_sql_string(b, u->db);
	fleet_buf_str(b, " AND name IN (");
	fleet_sql_string(b, u->table);
	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%s%s", u->table, i ? "_hourly" : "_stacks");
		fleet_buf_str(b, ", ");
		fleet_sql_string(b, name);
	}
	fleet_buf_str(b, ") FORMAT TabSeparated");
	return b->failed ? -ENOMEM : 0;
}

int fleet_sql_insert(const struct fleet_url *u, struct fleet_buf *b)
{
	fleet_buf_str(b, "INSERT INTO ");
	table_name(b, u);
	fleet_buf_str(b, " (");
	column_list(b, false, false);
	fleet_buf_str(b, ") FORMAT RowBinary");
	return b->failed ? -ENOMEM : 0;
}

int fleet_sql_insert_stacks(const struct fleet_url *u, struct fleet_buf *b)
{
	fleet_buf_str(b, "INSERT INTO ");
	table_name_of(b, u, "_stacks");
	fleet_buf_str(b, " (stack, kernel, `user`) FORMAT RowBinary");
	return b->failed ? -ENOMEM : 0;
}

int fleet_sql_columns(const struct fleet_url *u, struct fleet_buf *b)
{
	fleet_buf_str(b, "SELECT name FROM system.columns WHERE database = ");
	fleet_sql_string(b, u->db);
	fleet_buf_str(b, " AND table = ");
	fleet_sql_string(b, u->table);
	fleet_buf_str(b, " FORMAT TabSeparated");
	return b->failed ? -ENOMEM : 0;
}

int fleet_sql_add_column(const struct fleet_url *u, size_t i, struct fleet_buf *b)
{
	if (i >= fleet_ncolumns)
		return -EINVAL;
	fleet_buf_str(b, "ALTER TABLE ");
	table_name(b, u);
	fleet_buf_str(b, " ADD COLUMN ");
	fleet_buf_str(b, fleet_columns[i].name);
	fleet_buf_str(b, " ");
	fleet_buf_str(b, fleet_columns[i].type);
	return b->failed ? -ENOMEM : 0;
}

int fleet_sql_landed(const struct fleet_url *u, const struct fleet_batch *b, struct fleet_buf *out)
{
	char num[128];
	fleet_buf_str(out, "SELECT row FROM ");
	table_name(out, u);
	snprintf(num, sizeof(num), " WHERE ts = toDateTime(%" PRIu32 ") AND host = ", b->ts);
	fleet_buf_str(out, num);
	fleet_sql_string(out, b->host);
	snprintf(num, sizeof(num), " AND run = %" PRIu64 " AND seq = %" PRIu32 " FORMAT RowBinary",
		 b->run, b->seq);
	fleet_buf_str(out, num);
	return out->failed ? -ENOMEM : 0;
}

int fleet_sql_running(const char *query_id, struct fleet_buf *out)
{
	fleet_buf_str(out, "SELECT count() FROM system.processes WHERE query_id = ");
	fleet_sql_string(out, query_id);
	fleet_buf_str(out, " FORMAT TabSeparated");
	return out->failed ? -ENOMEM : 0;
}

/* COLUMN = 'NAME', or COLUMN LIKE 'PATTERN' for a glob. A name is compared
 * as bytes: LIKE goes through RE2, which refuses invalid UTF-8. */
static void match(struct fleet_buf *b, const char *column, const char *glob)
{
	fleet_buf_str(b, " AND ");
	fleet_buf_str(b, column);
	if (strpbrk(glob, "*?")) {
		fleet_buf_str(b, " LIKE ");
		fleet_sql_like(b, glob);
	} else {
		fleet_buf_str(b, " = ");
		fleet_sql_string(b, glob);
	}
}

/* Whole hours (or open ends): TABLE_hourly holds the range exactly. */
static bool whole_hours(const struct fleet_query *q)
{
	return (!q->has_since || q->since % 3600 == 0) && (!q->until || q->until % 3600 == 0);
}

/* The inner SELECT: the range's weight summed per stack. */
static void per_stack(struct fleet_buf *b, const struct fleet_url *u, const struct fleet_query *q)
{
	char num[64];
	const char *t = whole_hours(q) ? "hour" : "ts";
	fleet_buf_str(b, q->by_comm ? "SELECT event, comm AS c, " : "SELECT event, '' AS c, ");
	fleet_buf_str(b, q->by_pid ? "pid AS p, " : "toUInt32(0) AS p, ");
	fleet_buf_str(b, "stack, sum(weight) AS w FROM ");
	table_name_of(b, u, whole_hours(q) ? "_hourly" : "");
	fleet_buf_str(b, " WHERE 1");
	if (q->has_since) {
		snprintf(num, sizeof(num), " AND %s >= toDateTime(%" PRId64 ")", t, q->since);
		fleet_buf_str(b, num);
	}
	if (q->until) {
		snprintf(num, sizeof(num), " AND %s < toDateTime(%" PRId64 ")", t, q->until);
		fleet_buf_str(b, num);
	}
	if (q->host_pattern)
		match(b, "host", q->host_pattern);
	if (q->event)
		match(b, "event", q->event);
	if (q->mode) {
		fleet_buf_str(b, " AND mode = ");
		fleet_sql_string(b, q->mode);
	}
	fleet_buf_str(b, " GROUP BY event, c, p, stack");
}

/* One row per stack hash, not grouped again by the frames in SQL (that
 * costs more than the rest of the query, bench/fleet): a stack migrated
 * from an older table may come twice under two hashes (doc/FLEET.md), and
 * the report's aggregate adds the two. ANY LEFT JOIN is the form 18.16
 * reads too. */
int fleet_sql_select(const struct fleet_url *u, const struct fleet_query *q, struct fleet_buf *b)
{
	fleet_buf_str(b, "SELECT event, c, p, kernel, `user`, w FROM (");
	per_stack(b, u, q);
	fleet_buf_str(b, ") ANY LEFT JOIN (SELECT stack, kernel, `user` FROM ");
	table_name_of(b, u, "_stacks");
	fleet_buf_str(b, ") USING stack FORMAT RowBinary");
	return b->failed ? -ENOMEM : 0;
}
