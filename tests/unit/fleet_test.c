/* fleet/: URLs, SQL quoting, times, and fleet_open/fleet_report against a
 * port nothing listens on. No server needed. RowBinary and batches:
 * fleet_rows_test.c; the sender: fleet_sink_test.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
	test_unreachable();
	CHECK_DONE();
}
