/* fleet/: URLs, SQL quoting, RowBinary both ways, and the sender's retry
 * and bounded buffer against a fake transport. No server needed. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "fleet/fleet.h"
#include "check.h"

static void test_urls(void)
{
	struct fleet_url u;
	char err[256], show[512];
	CHECK(fleet_url_parse("clickhouse://h/db", NULL, &u, err, sizeof(err)) == 0, "minimal URL");
	CHECK_STR(u.host, "h", "host");
	CHECK_EQ_U64(u.port, 8123, "default port");
	CHECK_STR(u.db, "db", "database");
	CHECK_STR(u.table, "ftstack_stacks", "default table");
	CHECK_STR(u.user, "default", "default user");
	CHECK(!u.has_table && !u.https && !u.password[0], "no table, http, no password");

	CHECK(fleet_url_parse("clickhouse://bob:p%40ss%3Aw@10.0.0.1:9123/prof.stacks", "envpw", &u,
			      err, sizeof(err)) == 0, "full URL");
	CHECK_STR(u.user, "bob", "user");
	CHECK_STR(u.password, "p@ss:w", "percent-decoded password");
	CHECK_EQ_U64(u.port, 9123, "port");
	CHECK_STR(u.table, "stacks", "table");
	CHECK_STR(fleet_url_show(&u, show, sizeof(show)), "clickhouse://bob@10.0.0.1:9123/prof.stacks",
		  "shown without the password");

	CHECK(fleet_url_parse("clickhouse://bob@h/db", "envpw", &u, err, sizeof(err)) == 0 &&
	      strcmp(u.password, "envpw") == 0, "password from the environment");
	CHECK(fleet_url_parse("clickhouses://[::1]/db.t", NULL, &u, err, sizeof(err)) == 0 &&
	      u.https && u.port == 8443 && strcmp(u.host, "[::1]") == 0, "https, IPv6 literal");
	CHECK(fleet_url_parse("clickhouse://h/db.t?since=-2h&host=web%2A&mode=profile", NULL, &u,
			      err, sizeof(err)) == 0 && strcmp(u.since, "-2h") == 0 &&
	      strcmp(u.host_pattern, "web*") == 0 && strcmp(u.mode, "profile") == 0, "query filters");

	static const struct { const char *url, *why; } bad[] = {
		{ "http://h/db", "unknown scheme 'http://'" },
		{ "clickhouse://h", "no database" },
		{ "clickhouse:///db", "no host name" },
		{ "clickhouse://h:0/db", "the port must be" },
		{ "clickhouse://h:99999/db", "the port must be" },
		{ "clickhouse://h:x/db", "the port must be" },
		{ "clickhouse://h/", "no database" },
		{ "clickhouse://h/db.", "the table name" },
		{ "clickhouse://h/d`b", "no database" },
		{ "clickhouse://h/db?x=1", "unknown query parameter 'x'" },
		{ "clickhouse://a%zz@h/db", "the user name" },
		{ "h:8123/db", "not a URL" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		int ret = fleet_url_parse(bad[i].url, NULL, &u, err, sizeof(err));
		CHECK(ret == -EINVAL && strstr(err, bad[i].why), "%s refused: %s", bad[i].url, err);
	}
	CHECK(fleet_is_url("clickhouse://x") && fleet_is_url("ftp://x") && !fleet_is_url("/tmp/a://b") &&
	      !fleet_is_url("out.folded"), "what looks like a URL");
}

static void test_sql(void)
{
	struct fleet_buf b = { 0 };
	fleet_sql_string(&b, "a'b\\c\td\ne\xff\x01z");
	CHECK_STR(b.data, "'a\\'b\\\\c\\x09d\\x0Ae\\xFF\\x01z'", "string literal escapes");
	fleet_buf_free(&b);
	fleet_sql_ident(&b, "we`ird");
	CHECK_STR(b.data, "`we\\`ird`", "identifier escapes");
	fleet_buf_free(&b);
	fleet_sql_like(&b, "web-*_1?%\\");
	CHECK_STR(b.data, "'web-%\\\\_1_\\\\%\\\\\\\\'", "glob to LIKE");
	fleet_buf_free(&b);

	struct fleet_url u;
	char err[128];
	fleet_url_parse("clickhouse://h/db.t", NULL, &u, err, sizeof(err));
	CHECK(fleet_sql_create(&u, 0, &b) == 0 && strstr(b.data, "CREATE TABLE IF NOT EXISTS `db`.`t` (") &&
	      strstr(b.data, "stack UInt64, weight UInt64,") &&
	      strstr(b.data, "PARTITION BY toDate(ts) ORDER BY (host, event, ts)"), "create: %s", b.data);
	fleet_buf_free(&b);
	CHECK(fleet_sql_create(&u, 1, &b) == 0, "create the stacks");
	CHECK_STR(b.data, "CREATE TABLE IF NOT EXISTS `db`.`t_stacks` (stack UInt64, kernel Array(String), "
		  "`user` Array(String)) ENGINE = ReplacingMergeTree ORDER BY stack", "the stacks, once by hash");
	fleet_buf_free(&b);
	CHECK(fleet_sql_create(&u, 2, &b) == 0, "create the hours");
	CHECK_STR(b.data, "CREATE TABLE IF NOT EXISTS `db`.`t_hourly` (hour DateTime, host String, mode String, "
		  "event String, comm String, pid UInt32, stack UInt64, weight UInt64) ENGINE = "
		  "SummingMergeTree(weight) PARTITION BY toDate(hour) ORDER BY (host, event, hour, mode, comm, "
		  "pid, stack)", "the hourly rollup: the hourly columns of fleet_columns");
	fleet_buf_free(&b);
	CHECK(fleet_sql_create(&u, 3, &b) == 0, "create the view");
	CHECK_STR(b.data, "CREATE MATERIALIZED VIEW IF NOT EXISTS `db`.`t_hourly_mv` TO `db`.`t_hourly` AS "
		  "SELECT toStartOfHour(ts) AS hour, host, mode, event, comm, pid, stack, weight FROM `db`.`t`",
		  "the view that fills the hours");
	fleet_buf_free(&b);
	CHECK(fleet_sql_create(&u, FLEET_NCREATE, &b) == -EINVAL, "four statements");
	CHECK(fleet_sql_tables(&u, &b) == 0, "tables");
	CHECK_STR(b.data, "SELECT name, engine FROM system.tables WHERE database = 'db' AND name IN "
		  "('t', 't_stacks', 't_hourly') FORMAT TabSeparated", "which tables there are");
	fleet_buf_free(&b);
	CHECK(fleet_sql_insert_stacks(&u, &b) == 0, "insert stacks");
	CHECK_STR(b.data, "INSERT INTO `db`.`t_stacks` (stack, kernel, `user`) FORMAT RowBinary", "insert stacks");
	fleet_buf_free(&b);
	CHECK(fleet_sql_insert(&u, &b) == 0 && strstr(b.data, "INSERT INTO `db`.`t` (ts,") &&
	      strstr(b.data, "weight, run, seq, row, cgroup) FORMAT RowBinary"), "insert: %s", b.data);
	fleet_buf_free(&b);
	CHECK(fleet_sql_create(&u, 0, &b) == 0 && strstr(b.data, "row UInt32, cgroup String)"),
	      "create: the cgroup column last");
	fleet_buf_free(&b);
	CHECK(fleet_sql_add_column(&u, 12, &b) == 0, "migration: cgroup");
	CHECK_STR(b.data, "ALTER TABLE `db`.`t` ADD COLUMN cgroup String",
		  "an older table gets cgroup (18.16: no IF NOT EXISTS, so looked up first)");
	fleet_buf_free(&b);
	CHECK(fleet_sql_add_column(&u, 9, &b) == 0, "migration");
	CHECK_STR(b.data, "ALTER TABLE `db`.`t` ADD COLUMN run UInt64", "an older table gets run");
	fleet_buf_free(&b);
	CHECK(fleet_sql_add_column(&u, fleet_ncolumns, &b) == -EINVAL, "no column past the last");
	CHECK(fleet_sql_columns(&u, &b) == 0, "columns");
	CHECK_STR(b.data, "SELECT name FROM system.columns WHERE database = 'db' AND table = 't' "
		  "FORMAT TabSeparated", "which columns the table has");
	fleet_buf_free(&b);
	CHECK(fleet_sql_running("ftstack-1-2-3", &b) == 0, "running");
	CHECK_STR(b.data, "SELECT count() FROM system.processes WHERE query_id = 'ftstack-1-2-3' "
		  "FORMAT TabSeparated", "whether an attempt still runs");
	fleet_buf_free(&b);
	char text[3000];
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = "frame;"[i % 6];
	struct fleet_buf z = { 0 };
	fleet_buf_str(&z, "x");
	CHECK(fleet_gzip(text, sizeof(text), &z) == 0 && z.len > 11 && z.len < 200 &&
	      (unsigned char)z.data[1] == 0x1f && (unsigned char)z.data[2] == 0x8b, "gzip: %zu bytes", z.len);
	char back[4000];
	z_stream zs = { .next_in = (Bytef *)z.data + 1, .avail_in = (uInt)z.len - 1,
			.next_out = (Bytef *)back, .avail_out = sizeof(back) };
	CHECK(inflateInit2(&zs, 15 + 16) == Z_OK && inflate(&zs, Z_FINISH) == Z_STREAM_END &&
	      zs.total_out == sizeof(text) && memcmp(back, text, sizeof(text)) == 0,
	      "gzip: appended, and inflates back to the same bytes");
	inflateEnd(&zs);
	fleet_buf_free(&z);
	struct fleet_query q = { .has_since = true, .since = 100, .until = 200, .host_pattern = "h'1",
				 .event = "t:*", .mode = "count", .by_comm = true };
	CHECK(fleet_sql_select(&u, &q, &b) == 0, "select");
	CHECK_STR(b.data, "SELECT event, c, p, kernel, `user`, w FROM (SELECT event, "
		  "comm AS c, toUInt32(0) AS p, stack, sum(weight) AS w FROM `db`.`t` WHERE 1 AND "
		  "ts >= toDateTime(100) AND ts < toDateTime(200) AND host = 'h\\'1' AND event LIKE 't:%' "
		  "AND mode = 'count' GROUP BY event, c, p, stack) ANY LEFT JOIN (SELECT stack, kernel, "
		  "`user` FROM `db`.`t_stacks`) USING stack FORMAT RowBinary",
		  "a range not of whole hours: the minute rows");
	fleet_buf_free(&b);
	q = (struct fleet_query){ .has_since = true, .since = 7200, .until = 10800, .by_pid = true };
	CHECK(fleet_sql_select(&u, &q, &b) == 0 && strstr(b.data, "(SELECT event, '' AS c, pid AS p, "
	      "stack, sum(weight) AS w FROM `db`.`t_hourly` WHERE 1 AND hour >= toDateTime(7200) AND "
	      "hour < toDateTime(10800) GROUP BY"), "whole hours: the hourly rows: %s", b.data);
	fleet_buf_free(&b);
	q = (struct fleet_query){ 0 };
	CHECK(fleet_sql_select(&u, &q, &b) == 0 && strstr(b.data, "FROM `db`.`t_hourly` WHERE 1 GROUP BY"),
	      "no range: the hourly rows: %s", b.data);
	fleet_buf_free(&b);
}

static void test_time(void)
{
	int64_t t;
	CHECK(fleet_time_parse("1700000000", 5, &t) == 0 && t == 1700000000, "epoch seconds");
	CHECK(fleet_time_parse("-2h", 10000, &t) == 0 && t == 10000 - 7200, "relative hours");
	CHECK(fleet_time_parse("-90s", 1000, &t) == 0 && t == 910, "relative seconds");
	CHECK(fleet_time_parse("now", 42, &t) == 0 && t == 42, "now");
	CHECK(fleet_time_parse("2023-11-14T22:13:20Z", 0, &t) == 0 && t == 1700000000, "ISO UTC");
	CHECK(fleet_time_parse("2023-11-14 22:13Z", 0, &t) == 0 && t == 1699999980, "no seconds");
	CHECK(fleet_time_parse("2023-11-14Z", 0, &t) == 0 && t == 1699920000, "a date");
	const char *bad[] = { "", "yesterday", "-2x", "2023-13-01", "2023-11-14 25:00", "12:00", "-h" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(fleet_time_parse(bad[i], 0, &t) == -EINVAL, "'%s' refused", bad[i]);
}

/* ---- RowBinary ---- */

static const uint8_t insert_row[] = {
	0x10, 0x27, 0, 0,          /* ts 10000 */
	0xe8, 0x03, 0, 0,          /* duration 1000 */
	1, 'h', 5, 'c', 'o', 'u', 'n', 't', 1, 'E', 1, 'c',
	7, 0, 0, 0,                /* pid */
	/* the stack: FNV-1a 64 of the counts (2, 1 as 4-byte LE) and each
	 * leaf-first frame with its NUL, computed apart (python) */
	0xc9, 0x33, 0xa6, 0x07, 0x59, 0x1e, 0x08, 0xa3,
	9, 0, 0, 0, 0, 0, 0, 0,    /* weight: the count */
	2, 1, 0, 0, 0, 0, 0, 0,    /* run 0x102 */
	3, 0, 0, 0,                /* seq 3 */
	0, 0, 0, 0,                /* row 0 */
	0,                         /* cgroup: none */
};

static void test_encode(void)
{
	const char *frames[] = { "k0", "k1", "u\xff" };
	const char *events[] = { "E" };
	struct agg_named_stack s = { .event = 0, .pid = 7, .comm = "c", .frames = frames,
				     .nkframes = 2, .nuframes = 1, .count = 9, .weight = 900 };
	struct fleet_rows_meta m = { .ts = 10000, .duration_ms = 1000, .host = "h", .mode = "count",
				     .events = events, .nevents = 1, .run = 0x102, .seq = 3 };
	struct fleet_buf b = { 0 };
	size_t end = 0;
	CHECK_EQ_U64(fleet_rows_encode(&b, &m, &s, 1, &end), 9, "weight of the batch");
	CHECK_EQ_U64(end, sizeof(insert_row), "the row's end");
	CHECK(b.len == sizeof(insert_row) && memcmp(b.data, insert_row, b.len) == 0,
	      "one row, RowBinary, frames root first (%zu bytes)", b.len);
	fleet_buf_free(&b);
	m.by_weight = true;
	CHECK_EQ_U64(fleet_rows_encode(&b, &m, &s, 1, NULL), 900, "offcpu: the weight column is the weight");
	fleet_buf_free(&b);
	/* the cgroup column: the stack's (--per-cgroup), else the run's (--cgroup) */
	m.cgroup = "/run";
	fleet_rows_encode(&b, &m, &s, 1, NULL);
	CHECK(b.len == sizeof(insert_row) + 4 && !memcmp(b.data + b.len - 5, "\x04/run", 5),
	      "cgroup column: the run's --cgroup path last");
	fleet_buf_free(&b);
	s.cgroup = "/a/b";
	fleet_rows_encode(&b, &m, &s, 1, NULL);
	CHECK(b.len == sizeof(insert_row) + 4 && !memcmp(b.data + b.len - 5, "\x04/a/b", 5),
	      "cgroup column: the stack's own path");
	fleet_buf_free(&b);
	static const uint8_t stack_row[] = { 0xc9, 0x33, 0xa6, 0x07, 0x59, 0x1e, 0x08, 0xa3,
					     2, 2, 'k', '1', 2, 'k', '0', 1, 2, 'u', 0xff };
	fleet_stacks_encode(&b, fleet_stack_hash(&s), &s);
	CHECK(b.len == sizeof(stack_row) && memcmp(b.data, stack_row, b.len) == 0,
	      "its row of the stacks: the hash, kernel and user frames root first");
	fleet_buf_free(&b);
	const char *other[] = { "k", "0k1", "u\xff" };
	struct agg_named_stack moved = { .frames = frames, .nkframes = 1, .nuframes = 2 };
	struct agg_named_stack cut = { .frames = other, .nkframes = 2, .nuframes = 1 };
	CHECK(fleet_stack_hash(&moved) != fleet_stack_hash(&s) && fleet_stack_hash(&cut) != fleet_stack_hash(&s),
	      "a frame moved from kernel to user, or the same bytes cut elsewhere: another hash");
	struct fleet_seen *seen;
	bool all = fleet_seen_alloc(&seen) == 0;
	for (uint64_t h = 1; all && h <= 5000; h++) /* past a few growths */
		all = fleet_seen_add(seen, h * 0x9e3779b97f4a7c15ull) == 0;
	for (uint64_t h = 1; all && h <= 5000; h++)
		all = fleet_seen_has(seen, h * 0x9e3779b97f4a7c15ull) &&
		      !fleet_seen_has(seen, h * 0x9e3779b97f4a7c15ull + 1);
	CHECK(all, "the set of stacks sent holds what was added, and nothing else");
	fleet_seen_free(seen);
}

/* A batch's identity: every row carries (run, seq) and its own index, the
 * row ends split the data exactly, and each attempt has its own query id. */
static void test_batch(void)
{
	const char *frames[] = { "k0", "u0" };
	const char *events[] = { "E" };
	struct agg_named_stack st[3];
	for (int i = 0; i < 3; i++)
		st[i] = (struct agg_named_stack){ .comm = "c", .frames = frames, .nkframes = 1,
						  .nuframes = 1, .count = (uint64_t)(i + 1) };
	struct fleet_rows_meta m = { .ts = 20000, .host = "web-1", .mode = "count", .events = events,
				     .nevents = 1, .run = 0xabcdef0123456789ull, .seq = 7 };
	struct fleet_batch b;
	CHECK(fleet_batch_encode(&b, &m, st, 3) == 0 && b.rows == 3 && b.seq == 7 &&
	      b.run == m.run && b.ts == 20000 && strcmp(b.host, "web-1") == 0, "a batch of 3 rows");
	bool ids_ok = b.end[2] == b.data.len;
	for (size_t i = 0; i < 3; i++) {
		/* ... then the cgroup column, '' here: one byte */
		const unsigned char *tail = (const unsigned char *)b.data.data + b.end[i] - 17;
		uint64_t run = 0;
		for (int k = 7; k >= 0; k--)
			run = run << 8 | tail[k];
		ids_ok &= run == m.run && tail[8] == 7 && tail[12] == i && tail[16] == 0 &&
			  b.weight[i] == i + 1;
	}
	CHECK(ids_ok, "each row ends with run, seq 7, its index and the cgroup, at end[i]");
	char id1[96], id2[96];
	fleet_batch_query_id(&b, 1, id1, sizeof(id1));
	fleet_batch_query_id(&b, 2, id2, sizeof(id2));
	CHECK_STR(id1, "ftstack-abcdef0123456789-7-1", "the first attempt's query id");
	CHECK(strcmp(id1, id2) != 0, "each attempt has its own query id");
	struct fleet_url u;
	char err[128];
	struct fleet_buf q = { 0 };
	fleet_url_parse("clickhouse://h/db.t", NULL, &u, err, sizeof(err));
	CHECK(fleet_sql_landed(&u, &b, &q) == 0, "the look's SQL");
	CHECK_STR(q.data, "SELECT row FROM `db`.`t` WHERE ts = toDateTime(20000) AND host = 'web-1' "
		  "AND run = 12379813738877118345 AND seq = 7 FORMAT RowBinary", "the look's SQL");
	fleet_buf_free(&q);
	fleet_batch_free(&b);
	CHECK(fleet_run_id() != fleet_run_id() && fleet_run_id() != 0, "run ids differ");
}

/* What the sender does after each kind of failure: only what cannot have
 * reached the server is sent again as is; what may have is looked up. */
static void test_next_step(void)
{
	static const struct { const char *what; int ret; bool reached; enum fleet_next next; } c[] = {
		{ "written", 0, true, FLEET_DONE },
		{ "connection refused", -ECONNREFUSED, false, FLEET_RESEND },
		{ "no such host", -EHOSTUNREACH, false, FLEET_RESEND },
		{ "reset before the request was sent", -EIO, false, FLEET_RESEND },
		{ "connect timed out", -ETIMEDOUT, false, FLEET_RESEND },
		{ "reset after the request was sent", -EIO, true, FLEET_VERIFY },
		{ "timed out waiting for the answer", -ETIMEDOUT, true, FLEET_VERIFY },
		{ "4xx: the statement refused", -EINVAL, true, FLEET_REJECTED },
		{ "5xx: maybe after writing", -EIO, true, FLEET_VERIFY },
		{ "wrong password (18.16: 500)", -EACCES, true, FLEET_VERIFY },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		CHECK(fleet_next_step(c[i].ret, c[i].reached) == c[i].next, "after %s: step %d",
		      c[i].what, (int)c[i].next);
}

struct seen {
	int rows;
	char text[512];
};

static int on_row(void *arg, const struct fleet_row *r)
{
	struct seen *s = arg;
	size_t n = strlen(s->text);
	n += (size_t)snprintf(s->text + n, sizeof(s->text) - n, "%s|%s|%u|", r->event, r->comm, r->pid);
	for (uint32_t i = 0; i < r->nk; i++)
		n += (size_t)snprintf(s->text + n, sizeof(s->text) - n, "%s;", r->kernel[i]);
	n += (size_t)snprintf(s->text + n, sizeof(s->text) - n, "|");
	for (uint32_t i = 0; i < r->nu; i++)
		n += (size_t)snprintf(s->text + n, sizeof(s->text) - n, "%s;", r->user[i]);
	snprintf(s->text + n, sizeof(s->text) - n, "|%llu\n", (unsigned long long)r->weight);
	s->rows++;
	return 0;
}

static void test_decode(void)
{
	static const uint8_t answer[] = {
		1, 'E', 2, 'c', '\t', 3, 0, 0, 0, 2, 1, 'a', 3, 'b', '\n', 'c', 0, 5, 0, 0, 0, 0, 0, 0, 0,
		1, 'F', 0, 0, 0, 0, 0, 0, 1, 2, '\'', 0xfe, 0x2c, 0x01, 0, 0, 0, 0, 0, 0,
	};
	struct seen s = { 0 };
	CHECK(fleet_rows_decode((const char *)answer, sizeof(answer), on_row, &s) == 2, "two rows");
	CHECK_STR(s.text, "E|c\t|3|a;b\nc;||5\nF||0||'\xfe;|300\n", "bytes as sent");
	for (size_t cut = 1; cut < sizeof(answer); cut++) {
		if (cut == 25)
			continue; /* a whole first row */
		memset(&s, 0, sizeof(s));
		if (fleet_rows_decode((const char *)answer, cut, on_row, &s) != -EPROTO) {
			CHECK(0, "an answer cut at %zu is refused", cut);
			return;
		}
	}
	CHECK(1, "every truncated answer is refused");
	static const uint8_t nul[] = { 2, 'a', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	CHECK(fleet_rows_decode((const char *)nul, sizeof(nul), on_row, &s) == -EPROTO, "a NUL in a name is refused");
}

/* ---- the sender against a fake transport ---- */

struct fake {
	pthread_mutex_t lock;
	int fail;          /* the next FAIL inserts fail with -ECONNREFUSED */
	int reject;        /* the next REJECT inserts fail with -EINVAL */
	int lose;          /* the next LOSE inserts are written, and the answer lost */
	int half;          /* the next HALF inserts write half their rows, and break */
	int look_fail;     /* the next LOOK_FAIL looks fail */
	int posts, looks;
	int stacks_fail;   /* the next STACKS_FAIL stack inserts fail (reset after the body) */
	int stacks_posts;
	size_t stacks_bytes; /* stack rows written */
	bool hold;         /* inserts wait while set: a batch stays in flight */
	pthread_cond_t cond;
	size_t bytes;      /* delivered */
	char got[1024];    /* delivered bodies, concatenated (rows of one byte in lookups) */
	char last_id[96];
};

static void deliver(struct fake *f, const void *body, size_t len)
{
	if (f->bytes + len < sizeof(f->got)) {
		memcpy(f->got + f->bytes, body, len);
		f->bytes += len;
	}
}

static int fake_insert(void *ctx, const char *query_id, const void *body, size_t len,
		       struct fleet_attempt *a, char *err, size_t errlen)
{
	struct fake *f = ctx;
	int ret = 0;
	pthread_mutex_lock(&f->lock);
	f->posts++;
	snprintf(f->last_id, sizeof(f->last_id), "%s", query_id);
	pthread_cond_broadcast(&f->cond);
	while (f->hold)
		pthread_cond_wait(&f->cond, &f->lock);
	a->reached = true;
	a->wire_bytes = len / 2;
	if (f->fail > 0) {
		f->fail--;
		snprintf(err, errlen, "cannot reach h:1: refused");
		a->reached = false;
		ret = -ECONNREFUSED;
	} else if (f->reject > 0) {
		f->reject--;
		snprintf(err, errlen, "HTTP 400: bad");
		ret = -EINVAL;
	} else if (f->lose > 0) {
		f->lose--;
		deliver(f, body, len);
		snprintf(err, errlen, "cannot reach h:1: reset");
		ret = -EIO;
	} else if (f->half > 0) {
		f->half--;
		deliver(f, body, len / 2);
		snprintf(err, errlen, "cannot reach h:1: reset");
		ret = -EIO;
	} else {
		deliver(f, body, len);
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

static int fake_insert_stacks(void *ctx, const void *body, size_t len, struct fleet_attempt *a,
			      char *err, size_t errlen)
{
	struct fake *f = ctx;
	int ret = 0;
	(void)body;
	pthread_mutex_lock(&f->lock);
	f->stacks_posts++;
	a->reached = true;
	a->wire_bytes = len;
	if (f->stacks_fail > 0) {
		f->stacks_fail--;
		snprintf(err, errlen, "cannot reach h:1: reset");
		ret = -EIO;
	} else {
		f->stacks_bytes += len;
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

/* The table holds row i when its one byte was delivered. */
static int fake_landed(void *ctx, const struct fleet_batch *b, const char *query_id,
		       bool *present, char *err, size_t errlen)
{
	struct fake *f = ctx;
	int ret = 0;
	pthread_mutex_lock(&f->lock);
	f->looks++;
	if (strcmp(query_id, f->last_id) != 0) {
		ret = -EINVAL; /* looked for another attempt than the last one */
	} else if (f->look_fail > 0) {
		f->look_fail--;
		snprintf(err, errlen, "cannot reach h:1: refused");
		ret = -ECONNREFUSED;
	} else {
		for (size_t i = 0; i < b->rows; i++)
			present[i] = memchr(f->got, b->data.data[i ? b->end[i - 1] : 0], f->bytes) != NULL;
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

/* A batch of TEXT split into ROWS rows of equal length (the last takes the
 * rest), each of weight 10. */
static void push(struct fleet_sink *s, const char *text, uint64_t rows)
{
	struct fleet_batch b = { .rows = rows, .run = 1, .seq = 1 };
	size_t len = strlen(text);
	fleet_buf_str(&b.data, text);
	b.host = strdup("h");
	b.end = calloc(rows + 1, sizeof(*b.end));
	b.weight = calloc(rows + 1, sizeof(*b.weight));
	for (size_t i = 0; i < rows; i++) {
		b.end[i] = i + 1 == rows ? len : len * (i + 1) / rows;
		b.weight[i] = 10;
	}
	fleet_sink_push(s, &b);
}

static struct fleet_sink *start(struct fake *f, size_t buffer, unsigned flush_ms)
{
	struct fleet_sink_config c = { .tr = { fake_insert, fake_landed, fake_insert_stacks, f },
				       .buffer_bytes = buffer, .backoff_min_ms = 5,
				       .backoff_max_ms = 20, .flush_ms = flush_ms };
	struct fleet_sink *s = NULL;
	CHECK(fleet_sink_start(&c, &s) == 0, "sink started");
	return s;
}

static void fake_reset(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
}

/* An insert whose answer is lost is looked up, not sent again; one that
 * wrote some rows has only the others sent; a look that fails is retried. */
static void test_exactly_once(void)
{
	struct fake f;
	struct fleet_sink_stats st;
	fake_reset(&f);
	f.lose = 1;
	struct fleet_sink *s = start(&f, 1024, 2000);
	push(s, "abcd", 4);
	push(s, "ef", 2);
	fleet_sink_close(s, &st);
	CHECK_STR(f.got, "abcdef", "answer lost: written once");
	CHECK(st.rows_sent == 6 && st.weight_sent == 60 && st.inserts == 2 && st.verified == 1 &&
	      st.rows_found == 4 && f.posts == 2, "answer lost: 6 rows sent, 4 found by 1 look, %d inserts",
	      f.posts);

	fake_reset(&f);
	f.half = 1;
	f.look_fail = 2;
	s = start(&f, 1024, 2000);
	push(s, "abcd", 4);
	fleet_sink_close(s, &st);
	CHECK_STR(f.got, "abcd", "half written: the other half sent after the look");
	CHECK(st.rows_sent == 4 && st.rows_found == 2 && st.verified == 1 && f.looks == 3 &&
	      st.retries == 3, "half written: 2 found, 3 looks (2 failed), %llu retries",
	      (unsigned long long)st.retries);
	CHECK(st.bytes_raw == 6 && st.bytes_wire == 3, "bytes: 4 + 2 sent, half on the wire");

	/* a batch that may have landed is never dropped for room: the count of
	 * what is missing stays exact */
	fake_reset(&f);
	f.lose = 1;
	f.look_fail = 1000000;
	s = start(&f, 4, 30);
	push(s, "abcd", 4);
	for (int ms = 0; ms < 10000; ms++) { /* two failed steps: the insert, a look */
		usleep(1000);
		fleet_sink_stats(s, &st);
		if (st.retries >= 2)
			break;
	}
	push(s, "ef", 2);           /* no room: dropped itself */
	fleet_sink_close(s, &st);
	CHECK(st.rows_dropped_full == 2 && st.rows_pending == 4 && st.rows_unsure == 4,
	      "the unsure batch kept: %llu dropped, %llu pending, %llu unsure",
	      (unsigned long long)st.rows_dropped_full, (unsigned long long)st.rows_pending,
	      (unsigned long long)st.rows_unsure);
}

static void test_sink(void)
{
	struct fake f = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
			  .fail = 3 };
	struct fleet_sink_stats st;
	struct fleet_sink *s = start(&f, 1024, 2000);
	push(s, "aaaa", 1);
	push(s, "bb", 2);
	fleet_sink_close(s, &st);
	CHECK_STR(f.got, "aaaabb", "delivered in order after three refusals");
	CHECK(st.rows_sent == 3 && st.weight_sent == 30 && st.inserts == 2 && st.retries == 3 &&
	      !st.rows_pending && !st.rows_dropped_full, "sent 3 rows in 2 inserts, 3 retries");
	CHECK(strstr(st.last_error, "refused") != NULL, "the last error is kept: %s", st.last_error);

	/* a server that stays away: 8 bytes of buffer hold two 4-byte batches;
	 * the first is in flight (never dropped), the oldest queued go */
	fake_reset(&f);
	f.fail = 1000000;
	f.hold = true;
	s = start(&f, 8, 50);
	push(s, "1111", 1);
	pthread_mutex_lock(&f.lock);
	while (!f.posts)
		pthread_cond_wait(&f.cond, &f.lock);
	pthread_mutex_unlock(&f.lock);
	push(s, "2222", 2);
	push(s, "3333", 4);      /* 2222 dropped: 1111 is in flight */
	push(s, "555555555", 8); /* 3333 dropped, and still too big: itself dropped */
	pthread_mutex_lock(&f.lock);
	f.hold = false;
	pthread_cond_broadcast(&f.cond);
	pthread_mutex_unlock(&f.lock);
	fleet_sink_close(s, &st);
	CHECK(st.rows_dropped_full == 14 && st.weight_dropped_full == 140, "dropped: %llu rows",
	      (unsigned long long)st.rows_dropped_full);
	CHECK(st.rows_pending == 1 && st.weight_pending == 10 && st.rows_sent == 0,
	      "pending at exit: %llu rows", (unsigned long long)st.rows_pending);

	/* while the sender waits to retry, its batch is the oldest: dropped first */
	fake_reset(&f);
	f.fail = 1000000;
	struct fleet_sink_config c = { .tr = { fake_insert, fake_landed, fake_insert_stacks, &f },
				       .buffer_bytes = 8, .backoff_min_ms = 60000,
				       .backoff_max_ms = 60000, .flush_ms = 0 };
	CHECK(fleet_sink_start(&c, &s) == 0, "sink started");
	push(s, "1111", 1);
	do {
		usleep(1000);
		fleet_sink_stats(s, &st);
	} while (!st.retries);
	push(s, "2222", 2);
	push(s, "3333", 4);
	fleet_sink_close(s, &st);
	CHECK(st.rows_dropped_full == 1 && st.rows_pending == 6, "oldest dropped: %llu, pending %llu",
	      (unsigned long long)st.rows_dropped_full, (unsigned long long)st.rows_pending);

	/* a refused insert is not retried, and the next goes */
	fake_reset(&f);
	f.reject = 1;
	s = start(&f, 1024, 1000);
	push(s, "xx", 1);
	push(s, "yy", 2);
	push(s, "", 0);
	fleet_sink_close(s, &st);
	CHECK(st.rows_rejected == 1 && st.rows_sent == 2 && f.posts == 2 && strcmp(f.got, "yy") == 0,
	      "rejected 1, sent 2, %d posts", f.posts);
}

/* Stacks stored once: a batch's new stacks go before its rows (a failed
 * stack insert is sent again, its rows wait), and a stack the run wrote is
 * not written again. */
static void test_stacks_once(void)
{
	const char *fa[] = { "a" }, *fb[] = { "b" }, *events[] = { "E" };
	struct agg_named_stack st[2] = {
		{ .comm = "c", .frames = fa, .nuframes = 1, .count = 1 },
		{ .comm = "c", .frames = fb, .nuframes = 1, .count = 2 },
	};
	struct fleet_rows_meta m = { .ts = 1, .host = "h", .mode = "count", .events = events, .nevents = 1 };
	struct fleet_batch b1, b2, b3;
	struct fake f;
	struct fleet_sink_stats st_;
	fake_reset(&f);
	f.stacks_fail = 2;
	struct fleet_sink *s = start(&f, 1 << 20, 2000);
	fleet_batch_encode(&b1, &m, st, 1);       /* a */
	fleet_batch_encode(&b2, &m, st, 2);       /* a, b */
	fleet_batch_encode(&b3, &m, st + 1, 1);   /* b */
	size_t one = b1.frames.len, two = b2.frames.len;
	CHECK(b1.hash && b2.hash[0] == b1.hash[0] && b2.hash[1] == b3.hash[0] && b1.hash[0] != b3.hash[0],
	      "a stack's hash is the same in every batch");
	fleet_sink_push(s, &b1);
	fleet_sink_push(s, &b2);
	fleet_sink_push(s, &b3);
	fleet_sink_close(s, &st_);
	CHECK(f.stacks_posts == 4 && f.posts == 3 && f.stacks_bytes == two && st_.stacks_sent == 2 &&
	      st_.rows_sent == 4 && st_.retries == 2,
	      "a written once (after 2 failures), b once: %d stack inserts, %zu bytes of %zu + %zu, %d row inserts",
	      f.stacks_posts, f.stacks_bytes, one, two - one, f.posts);
}

static int never(void *ctx, const struct fleet_row *r)
{
	(void)ctx;
	(void)r;
	return -EIO;
}

/* fleet_open and fleet_report against a loopback port nothing listens on
 * (1: privileged, unused here): refused at once, said with the address and
 * never the password. */
static void test_unreachable(void)
{
	struct fleet *f = NULL;
	char err[512] = "";
	int ret = fleet_open("clickhouse://u:pw0rd@127.0.0.1:1/db", NULL, 1 << 20, &f, err, sizeof(err));
	CHECK(ret == -ECONNREFUSED && !f, "open: connection refused (%d)", ret);
	CHECK(strstr(err, "cannot reach 127.0.0.1:1") && !strstr(err, "pw0rd"), "open: %s", err);
	CHECK(fleet_open("clickhouse://127.0.0.1:1", NULL, 1, &f, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "no database"), "open: a bad URL: %s", err);
	struct fleet_query q = { 0 };
	long n = fleet_report("clickhouse://u:pw0rd@127.0.0.1:1/db.t", "x", &q, never, NULL, err, sizeof(err));
	CHECK(n == -ECONNREFUSED && strstr(err, "cannot reach") && !strstr(err, "pw0rd"), "report: %s", err);
	n = fleet_report("clickhouse://127.0.0.1:1/db.t?since=soon", NULL, &q, never, NULL, err, sizeof(err));
	CHECK(n == -EINVAL && strstr(err, "since=soon: not a time"), "report: a bad since: %s", err);
}

int main(void)
{
	test_urls();
	test_sql();
	test_time();
	test_encode();
	test_decode();
	test_batch();
	test_next_step();
	test_sink();
	test_exactly_once();
	test_stacks_once();
	test_unreachable();
	CHECK_DONE();
}
