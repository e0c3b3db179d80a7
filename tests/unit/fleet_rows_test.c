/* fleet/: RowBinary both ways (rows.c, stacks.c), a batch's identity
 * (batch.c), and the step after each kind of failure. No server needed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/fleet.h"
#include "check.h"

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

int main(void)
{
	test_encode();
	test_decode();
	test_batch();
	test_next_step();
	CHECK_DONE();
}
