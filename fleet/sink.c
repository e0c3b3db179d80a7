/* The sender thread: the collector queues one batch per interval and goes
 * back to its rings; this thread inserts batches in order, retries a failed
 * one with doubling delays, and keeps at most buffer_bytes of unsent data,
 * dropping the oldest (counted) when an outage outlasts it. An attempt that
 * may have reached the server (fleet_next_step) is not sent again blindly:
 * the next step asks the table which of its rows are there, and sends the
 * rest. Before a batch's rows go, the frames of its stacks not written
 * yet in this run go to TABLE_stacks (fleet_seen remembers which), so a
 * row's stack always resolves; writing a stack twice is harmless, so that
 * insert is simply retried. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fleet/fleet.h"

struct batch {
	struct batch *next;
	struct fleet_batch b;
	bool *done;                 /* rows known written */
	size_t rows_left;
	uint64_t weight_left;
	bool unsure;                /* the last attempt may have landed: look first */
	unsigned attempts;
};

struct fleet_sink {
	struct fleet_sink_config cfg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct batch *head, *tail;  /* head is the one being sent */
	bool sending;               /* head is in the transport: not to be dropped */
	size_t bytes;               /* queued, head included */
	bool closing;
	struct timespec deadline;   /* closing: give up after it */
	struct fleet_seen *seen;    /* stacks written to TABLE_stacks (sender thread only) */
	struct fleet_sink_stats st;
};

static struct timespec after_ms(unsigned ms)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

static bool passed(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static struct timespec earlier(struct timespec a, struct timespec b)
{
	return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec) ? a : b;
}

/* What a batch holds of the buffer: its rows and its stacks' frames. */
static size_t batch_bytes(const struct batch *q)
{
	return q->b.data.len + q->b.frames.len;
}

static void batch_free(struct batch *q)
{
	fleet_batch_free(&q->b);
	free(q->done);
	free(q);
}

/* Unlinks and frees the head. Locked. */
static void pop(struct fleet_sink *s)
{
	struct batch *q = s->head;
	s->head = q->next;
	if (!s->head)
		s->tail = NULL;
	s->bytes -= batch_bytes(q);
	batch_free(q);
}

/* The rows of Q not known written: the batch's own data when that is all of
 * them, else their concatenation in TMP. Returns 0 or -ENOMEM. */
static int rows_left(const struct batch *q, struct fleet_buf *tmp, const char **body, size_t *len)
{
	if (q->rows_left == q->b.rows) {
		*body = q->b.data.data;
		*len = q->b.data.len;
		return 0;
	}
	for (size_t i = 0; i < q->b.rows; i++) {
		size_t from = i ? q->b.end[i - 1] : 0;
		if (!q->done[i])
			fleet_buf_put(tmp, q->b.data.data + from, q->b.end[i] - from);
	}
	*body = tmp->data;
	*len = tmp->len;
	return tmp->failed ? -ENOMEM : 0;
}

/* Counts Q's rows found in the table as written. Locked. */
static void mark_found(struct fleet_sink *s, struct batch *q, const bool *present)
{
	for (size_t i = 0; i < q->b.rows; i++) {
		if (!present[i] || q->done[i])
			continue;
		q->done[i] = true;
		q->rows_left--;
		q->weight_left -= q->b.weight[i];
		s->st.rows_found++;
		s->st.rows_sent++;
		s->st.weight_sent += q->b.weight[i];
	}
}

/* Asks the table which rows of the head its last attempt wrote; the lock
 * is dropped meanwhile. Returns the transport's result. Locked. */
static int look(struct fleet_sink *s, char *err, size_t errlen)
{
	struct batch *q = s->head;
	char qid[96];
	bool *present = calloc(q->b.rows ? q->b.rows : 1, sizeof(*present));
	if (!present) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	fleet_batch_query_id(&q->b, q->attempts, qid, sizeof(qid));
	s->sending = true;
	pthread_mutex_unlock(&s->lock);
	int ret = s->cfg.tr.landed(s->cfg.tr.ctx, &q->b, qid, present, err, errlen);
	pthread_mutex_lock(&s->lock);
	s->sending = false;
	if (ret == 0) {
		s->st.verified++;
		mark_found(s, q, present);
		q->unsure = false;
	}
	free(present);
	return ret;
}

/* Writes the frames of the head's unwritten rows' stacks that this run
 * has not written yet; the lock is dropped during the transfer. Returns 0,
 * or the transport's error (nothing to look up: sent again as it is).
 * Locked. */
static int write_stacks(struct fleet_sink *s, char *err, size_t errlen)
{
	struct batch *q = s->head;
	struct fleet_buf body = { 0 };
	struct fleet_attempt a = { 0 };
	size_t n = 0;
	for (size_t i = 0; q->b.hash && i < q->b.rows; i++) {
		size_t from = i ? q->b.fend[i - 1] : 0;
		if (!q->done[i] && !fleet_seen_has(s->seen, q->b.hash[i])) {
			fleet_buf_put(&body, q->b.frames.data + from, q->b.fend[i] - from);
			n++;
		}
	}
	if (!n || body.failed) {
		fleet_buf_free(&body);
		if (n)
			snprintf(err, errlen, "out of memory");
		return n ? -ENOMEM : 0;
	}
	s->sending = true;
	pthread_mutex_unlock(&s->lock);
	int ret = s->cfg.tr.insert_stacks(s->cfg.tr.ctx, body.data, body.len, &a, err, errlen);
	for (size_t i = 0; ret == 0 && i < q->b.rows; i++)
		if (!q->done[i])
			ret = fleet_seen_add(s->seen, q->b.hash[i]);
	pthread_mutex_lock(&s->lock);
	s->sending = false;
	if (a.reached) {
		s->st.bytes_raw += body.len;
		s->st.bytes_wire += a.wire_bytes;
	}
	if (ret == 0)
		s->st.stacks_sent += n;
	else if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	fleet_buf_free(&body);
	return ret;
}

/* Inserts the head's rows not known written, after their stacks; the lock
 * is dropped during the transfers. Returns what to do next. Locked. */
static enum fleet_next attempt(struct fleet_sink *s, char *err, size_t errlen)
{
	struct batch *q = s->head;
	struct fleet_buf tmp = { 0 };
	struct fleet_attempt a = { 0 };
	const char *body;
	size_t len;
	char qid[96];
	int ret = write_stacks(s, err, errlen);
	if (ret < 0) /* no row was sent: a refused TABLE_stacks (4xx) drops the batch too */
		return ret == -EINVAL ? FLEET_REJECTED : FLEET_RESEND;
	ret = rows_left(q, &tmp, &body, &len);
	if (ret < 0) {
		fleet_buf_free(&tmp);
		snprintf(err, errlen, "out of memory");
		return FLEET_RESEND;
	}
	fleet_batch_query_id(&q->b, ++q->attempts, qid, sizeof(qid));
	s->sending = true;
	pthread_mutex_unlock(&s->lock);
	ret = s->cfg.tr.insert(s->cfg.tr.ctx, qid, body, len, &a, err, errlen);
	pthread_mutex_lock(&s->lock);
	s->sending = false;
	fleet_buf_free(&tmp);
	if (a.reached) {
		s->st.bytes_raw += len;
		s->st.bytes_wire += a.wire_bytes;
	}
	return fleet_next_step(ret, a.reached);
}

/* After a failed step: counts it and waits the next delay (close() only
 * shortens it). Locked. */
static void back_off(struct fleet_sink *s, unsigned *delay, const char *err)
{
	s->st.retries++;
	snprintf(s->st.last_error, sizeof(s->st.last_error), "%s", err);
	*delay = *delay ? *delay * 2 : s->cfg.backoff_min_ms;
	if (*delay > s->cfg.backoff_max_ms)
		*delay = s->cfg.backoff_max_ms;
	struct timespec until = after_ms(*delay);
	if (s->closing)
		until = earlier(until, s->deadline);
	while (!passed(&until) &&
	       pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT)
		if (s->closing)
			until = earlier(until, s->deadline);
}

/* The head is settled: written (all its rows are in the table) or
 * rejected. Locked. */
static void settle(struct fleet_sink *s, bool written, const char *err)
{
	struct batch *q = s->head;
	if (written) {
		s->st.rows_sent += q->rows_left;
		s->st.weight_sent += q->weight_left;
		s->st.inserts++;
	} else {   /* the server refuses this insert: retrying will not help */
		s->st.rows_rejected += q->rows_left;
		s->st.weight_rejected += q->weight_left;
		snprintf(s->st.last_error, sizeof(s->st.last_error), "%s", err);
	}
	pop(s);
}

static void *run(void *arg)
{
	struct fleet_sink *s = arg;
	unsigned delay = 0;
	char err[sizeof(s->st.last_error)];
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->head && !s->closing)
			pthread_cond_wait(&s->wake, &s->lock);
		if (!s->head || (s->closing && passed(&s->deadline)))
			break;
		err[0] = '\0';
		if (s->head->unsure) {
			if (look(s, err, sizeof(err)) < 0) {
				back_off(s, &delay, err);
			} else if (!s->head->rows_left) {
				settle(s, true, err); /* the lost answer's insert had written it all */
				delay = 0;
			}
			continue;
		}
		enum fleet_next next = attempt(s, err, sizeof(err));
		if (next == FLEET_DONE || next == FLEET_REJECTED) {
			settle(s, next == FLEET_DONE, err);
			delay = 0;
			continue;
		}
		s->head->unsure = next == FLEET_VERIFY;
		back_off(s, &delay, err);
	}
	for (struct batch *q = s->head; q; q = q->next) {
		s->st.rows_pending += q->rows_left;
		s->st.weight_pending += q->weight_left;
		if (q->unsure)
			s->st.rows_unsure += q->rows_left;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int fleet_sink_open(const struct fleet_sink_config *c, struct fleet_sink **out)
{
	struct fleet_sink *s = calloc(1, sizeof(*s));
	if (!s || fleet_seen_alloc(&s->seen) < 0) {
		free(s);
		return -ENOMEM;
	}
	s->cfg = *c;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	int ret = pthread_create(&s->thread, NULL, run, s);
	if (ret) {
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		fleet_seen_free(s->seen);
		free(s);
		return -ret;
	}
	*out = s;
	return 0;
}

/* The head stays while it is in the transport, or once an attempt of it
 * may have landed: dropping it then would leave the count of what is
 * missing wrong. */
static bool head_kept(const struct fleet_sink *s)
{
	const struct batch *h = s->head;
	return h && (s->sending || h->unsure || h->rows_left < h->b.rows);
}

/* Drops queued batches, oldest first, never a kept head, until NEED more
 * bytes fit. Returns true when they do. Locked. */
static bool make_room(struct fleet_sink *s, size_t need)
{
	struct batch **pp = head_kept(s) ? &s->head->next : &s->head;
	while (s->bytes + need > s->cfg.buffer_bytes && *pp) {
		struct batch *q = *pp;
		*pp = q->next;
		s->bytes -= batch_bytes(q);
		s->st.rows_dropped_full += q->rows_left;
		s->st.weight_dropped_full += q->weight_left;
		batch_free(q);
	}
	/* the tail may have moved: find it again */
	s->tail = s->head;
	while (s->tail && s->tail->next)
		s->tail = s->tail->next;
	return s->bytes + need <= s->cfg.buffer_bytes;
}

int fleet_sink_push(struct fleet_sink *s, struct fleet_batch *in)
{
	if (!in->rows) {
		fleet_batch_free(in);
		return 0;
	}
	struct batch *q = calloc(1, sizeof(*q));
	bool *done = calloc(in->rows, sizeof(*done));
	if (!q || !done) {
		free(q);
		free(done);
		return -ENOMEM;
	}
	q->b = *in;
	*in = (struct fleet_batch){ 0 };
	q->done = done;
	q->rows_left = q->b.rows;
	for (size_t i = 0; i < q->b.rows; i++)
		q->weight_left += q->b.weight[i];
	pthread_mutex_lock(&s->lock);
	if (!make_room(s, batch_bytes(q))) {
		s->st.rows_dropped_full += q->rows_left;
		s->st.weight_dropped_full += q->weight_left;
		batch_free(q);
	} else {
		if (s->tail)
			s->tail->next = q;
		else
			s->head = q;
		s->tail = q;
		s->bytes += batch_bytes(q);
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void fleet_sink_stats(struct fleet_sink *s, struct fleet_sink_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	pthread_mutex_unlock(&s->lock);
}

void fleet_sink_close(struct fleet_sink *s, struct fleet_sink_stats *out)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->closing = true;
	s->deadline = after_ms(s->cfg.flush_ms);
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	if (out)
		*out = s->st;
	while (s->head)
		pop(s);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	fleet_seen_free(s->seen);
	free(s);
}
