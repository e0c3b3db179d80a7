/* The sender thread: the collector queues one batch per interval and goes
 * back to its rings; this thread inserts batches in order, retries a failed
 * one with doubling delays, and keeps at most buffer_bytes of unsent data,
 * dropping the oldest (counted) when an outage outlasts it. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fleet/fleet.h"

struct batch {
	struct batch *next;
	char *data;
	size_t len;
	uint64_t rows, weight;
};

struct fleet_sink {
	struct fleet_sink_config cfg;
	char *insert;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct batch *head, *tail;  /* head is the one being sent */
	bool sending;               /* head is in the transport: not to be dropped */
	size_t bytes;               /* queued, head included */
	bool closing;
	struct timespec deadline;   /* closing: give up after it */
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

/* Unlinks and frees the head. Locked. */
static void pop(struct fleet_sink *s)
{
	struct batch *b = s->head;
	s->head = b->next;
	if (!s->head)
		s->tail = NULL;
	s->bytes -= b->len;
	free(b->data);
	free(b);
}

/* Sends the head; the lock is dropped during the transfer. Returns the
 * transport's result. Locked on entry and exit. */
static int send_head(struct fleet_sink *s, char *err, size_t errlen)
{
	struct batch *b = s->head;
	s->sending = true;
	pthread_mutex_unlock(&s->lock);
	int ret = s->cfg.tr.post(s->cfg.tr.ctx, s->insert, b->data, b->len, err, errlen);
	pthread_mutex_lock(&s->lock);
	s->sending = false;
	return ret;
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
		int ret = send_head(s, err, sizeof(err));
		struct batch *b = s->head;
		if (ret == 0 || ret == -EINVAL) {
			if (ret == 0) {
				s->st.rows_sent += b->rows;
				s->st.weight_sent += b->weight;
				s->st.inserts++;
			} else {   /* the server refuses this insert: retrying will not help */
				s->st.rows_rejected += b->rows;
				s->st.weight_rejected += b->weight;
				memcpy(s->st.last_error, err, sizeof(err));
			}
			pop(s);
			delay = 0;
			continue;
		}
		s->st.retries++;
		memcpy(s->st.last_error, err, sizeof(err));
		delay = delay ? delay * 2 : s->cfg.backoff_min_ms;
		if (delay > s->cfg.backoff_max_ms)
			delay = s->cfg.backoff_max_ms;
		struct timespec until = after_ms(delay);
		if (s->closing)
			until = earlier(until, s->deadline);
		/* close() wakes this early only to set the deadline */
		while (!passed(&until) &&
		       pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT)
			if (s->closing)
				until = earlier(until, s->deadline);
	}
	for (struct batch *b = s->head; b; b = b->next) {
		s->st.rows_pending += b->rows;
		s->st.weight_pending += b->weight;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int fleet_sink_start(const struct fleet_sink_config *c, struct fleet_sink **out)
{
	struct fleet_sink *s = calloc(1, sizeof(*s));
	if (!s || !(s->insert = strdup(c->insert))) {
		free(s);
		return -ENOMEM;
	}
	s->cfg = *c;
	s->cfg.insert = s->insert;
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
		free(s->insert);
		free(s);
		return -ret;
	}
	*out = s;
	return 0;
}

/* Drops queued batches, oldest first, never the one being sent, until
 * NEED more bytes fit. Returns true when they do. Locked. */
static bool make_room(struct fleet_sink *s, size_t need)
{
	struct batch **pp = s->sending && s->head ? &s->head->next : &s->head;
	while (s->bytes + need > s->cfg.buffer_bytes && *pp) {
		struct batch *b = *pp;
		*pp = b->next;
		if (s->tail == b)
			s->tail = s->head && s->head != b ? s->head : NULL;
		s->bytes -= b->len;
		s->st.rows_dropped_full += b->rows;
		s->st.weight_dropped_full += b->weight;
		free(b->data);
		free(b);
	}
	/* the tail may have moved: find it again */
	s->tail = s->head;
	while (s->tail && s->tail->next)
		s->tail = s->tail->next;
	return s->bytes + need <= s->cfg.buffer_bytes;
}

int fleet_sink_push(struct fleet_sink *s, struct fleet_buf *buf, uint64_t rows, uint64_t weight)
{
	if (buf->failed)
		return -ENOMEM;
	if (!rows) {
		fleet_buf_free(buf);
		return 0;
	}
	struct batch *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->data = buf->data;
	b->len = buf->len;
	b->rows = rows;
	b->weight = weight;
	*buf = (struct fleet_buf){ 0 };
	pthread_mutex_lock(&s->lock);
	if (!make_room(s, b->len)) {
		s->st.rows_dropped_full += b->rows;
		s->st.weight_dropped_full += b->weight;
		free(b->data);
		free(b);
	} else {
		if (s->tail)
			s->tail->next = b;
		else
			s->head = b;
		s->tail = b;
		s->bytes += b->len;
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
	free(s->insert);
	free(s);
}
