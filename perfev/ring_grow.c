/* perfev: rings grown while their events run. The events of a CPU write
 * into a ring owned by a dummy event (SET_OUTPUT); a bigger ring for a
 * new dummy is allocated by helper processes (ring_many.c: the kernel
 * allocates it under the mapping process's mmap lock, which a reader's
 * page faults would wait on), mapped here, and, once the caller reads it
 * too, the events are pointed at it. The kernel waits for an RCU grace
 * period in each SET_OUTPUT that takes an event off a ring (6-30 ms
 * here), so the moves run in threads of their own at once, and all of it
 * in one thread while the caller goes on reading the old rings. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "perfev/perfev.h"

/* One mover: the events I = K, K + STEP, ... of G. */
struct mover {
	const struct perfev_ring_grow *g;
	size_t k, step;
	pthread_t thread;
	bool running;
	int err;
};

static void *move_some(void *arg)
{
	struct mover *mv = arg;
	const struct perfev_ring_grow *g = mv->g;
	for (size_t i = mv->k; i < g->nfds; i += mv->step) {
		int ret = perfev_set_output(g->fds[i], g->owners[g->to[i]]);
		if (ret < 0 && !mv->err)
			mv->err = ret;
	}
	return NULL;
}

/* Moves every event of G to its new ring, in up to PERFEV_GROW_MOVERS
 * threads at once (a mover no thread could start runs here). Returns 0
 * or the first -errno (those moved stay moved). */
static int move_all(const struct perfev_ring_grow *g)
{
	struct mover mv[PERFEV_GROW_MOVERS];
	size_t step = g->nfds < PERFEV_GROW_MOVERS ? g->nfds : PERFEV_GROW_MOVERS;
	for (size_t k = 0; k < step; k++) {
		mv[k] = (struct mover){ .g = g, .k = k, .step = step };
		mv[k].running = k > 0 && pthread_create(&mv[k].thread, NULL, move_some, &mv[k]) == 0;
	}
	int err = 0;
	for (size_t k = 0; k < step; k++) {
		if (mv[k].running)
			pthread_join(mv[k].thread, NULL);
		else
			move_some(&mv[k]);
		if (mv[k].err && !err)
			err = mv[k].err;
	}
	return err;
}

static void set_state(struct perfev_ring_grow *g, int state)
{
	pthread_mutex_lock(&g->lock);
	g->state = state;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

static void *grow(void *arg)
{
	struct perfev_ring_grow *g = arg;
	struct perfev_ring_maps m;
	/* every ring a helper's: none allocated under this process's lock */
	int ret = perfev_ring_maps_start(&m, g->rings, g->owners, g->n, g->data_bytes, g->n + 1);
	if (ret < 0)
		perfev_ring_maps_release(&m);
	else
		ret = perfev_ring_maps_finish(&m);
	if (ret < 0) {
		g->err = ret;
		set_state(g, PERFEV_GROW_FAILED);
		return NULL;
	}
	set_state(g, PERFEV_GROW_MAPPED);
	pthread_mutex_lock(&g->lock);
	while (!g->go && !g->cancel)
		pthread_cond_wait(&g->cond, &g->lock);
	bool go = g->go && !g->cancel;
	pthread_mutex_unlock(&g->lock);
	g->err = go ? move_all(g) : -ECANCELED;
	set_state(g, g->err ? PERFEV_GROW_FAILED : PERFEV_GROW_DONE);
	return NULL;
}

int perfev_ring_grow_start(struct perfev_ring_grow *g, struct perfev_ring *rings, const int *owners,
			   size_t n, size_t data_bytes, const int *fds, const size_t *to, size_t nfds)
{
	memset(g, 0, sizeof(*g));
	g->rings = rings;
	g->owners = owners;
	g->n = n;
	g->data_bytes = data_bytes;
	g->fds = fds;
	g->to = to;
	g->nfds = nfds;
	g->state = PERFEV_GROW_MAPPING;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	int ret = pthread_create(&g->thread, NULL, grow, g);
	if (ret) {
		pthread_cond_destroy(&g->cond);
		pthread_mutex_destroy(&g->lock);
		return -ret;
	}
	g->started = true;
	return 0;
}

int perfev_ring_grow_state(struct perfev_ring_grow *g)
{
	pthread_mutex_lock(&g->lock);
	int s = g->state;
	pthread_mutex_unlock(&g->lock);
	return s;
}

void perfev_ring_grow_move(struct perfev_ring_grow *g)
{
	pthread_mutex_lock(&g->lock);
	g->go = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

int perfev_ring_grow_join(struct perfev_ring_grow *g)
{
	if (!g->started)
		return 0;
	pthread_mutex_lock(&g->lock);
	g->cancel = true; /* not moved yet: never */
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->thread, NULL);
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	g->started = false;
	return g->state == PERFEV_GROW_DONE ? 0 : g->err;
}
