/* A batch's identity and the sender's decision after a failed attempt.
 * (host, run, seq) names a batch, and every row carries it with its index,
 * so that after an insert whose answer was lost the table itself says which
 * rows of it are there: the sender sends only the others, and a batch is
 * written once however the connection broke. Each row's stack goes as its
 * hash; the batch keeps the stacks' TABLE_stacks rows beside, for the
 * sender to write those the run has not written yet. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "fleet/fleet.h"

int fleet_batch_encode(struct fleet_batch *b, const struct fleet_rows_meta *m,
		       const struct agg_named_stack *s, size_t n)
{
	*b = (struct fleet_batch){ .run = m->run, .seq = m->seq, .ts = m->ts, .rows = n };
	b->host = strdup(m->host ? m->host : "");
	b->end = calloc(n ? n : 1, sizeof(*b->end));
	b->weight = calloc(n ? n : 1, sizeof(*b->weight));
	b->hash = calloc(n ? n : 1, sizeof(*b->hash));
	b->fend = calloc(n ? n : 1, sizeof(*b->fend));
	bool all = b->host && b->end && b->weight && b->hash && b->fend;
	if (all) {
		fleet_rows_encode(&b->data, m, s, n, b->end);
		for (size_t i = 0; i < n; i++) {
			b->weight[i] = fleet_rows_weight(m, &s[i]);
			b->hash[i] = fleet_stack_hash(&s[i]);
			fleet_stacks_encode(&b->frames, b->hash[i], &s[i]);
			b->fend[i] = b->frames.len;
		}
	}
	if (!all || b->data.failed || b->frames.failed) {
		fleet_batch_free(b);
		return -ENOMEM;
	}
	return 0;
}

void fleet_batch_free(struct fleet_batch *b)
{
	free(b->host);
	free(b->end);
	free(b->weight);
	free(b->hash);
	free(b->fend);
	fleet_buf_free(&b->data);
	fleet_buf_free(&b->frames);
	*b = (struct fleet_batch){ 0 };
}

void fleet_batch_query_id(const struct fleet_batch *b, unsigned attempt, char *buf, size_t len)
{
	snprintf(buf, len, "ftstack-%016" PRIx64 "-%" PRIu32 "-%u", b->run, b->seq, attempt);
}

uint64_t fleet_run_id(void)
{
	uint64_t id = 0;
	if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
		/* no entropy yet (early boot): time and pid still differ per run */
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		id = ((uint64_t)t.tv_sec << 32) ^ (uint64_t)t.tv_nsec ^ ((uint64_t)getpid() << 16);
	}
	return id ? id : 1;
}

/* Refused, unresolved, reset or timed out before a byte left: the server
 * cannot have it. Anything after a byte left (a reset, a timeout, a 5xx, a
 * proxy's error) may come after the server wrote it. A 4xx is ClickHouse
 * refusing the statement before writing. */
enum fleet_next fleet_next_step(int ret, bool reached)
{
	if (ret == 0)
		return FLEET_DONE;
	if (ret == -EINVAL)
		return FLEET_REJECTED;
	return reached ? FLEET_VERIFY : FLEET_RESEND;
}
