/* fleet/sink.c: the sender's retries, exactly-once inserts and bounded
 * buffer against a fake transport. No server needed. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fleet/fleet.h"
#include "check.h"

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
	CHECK(fleet_sink_open(&c, &s) == 0, "sink started");
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
	CHECK(fleet_sink_open(&c, &s) == 0, "sink started");
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

int main(void)
{
	test_sink();
	test_exactly_once();
	test_stacks_once();
	CHECK_DONE();
}
