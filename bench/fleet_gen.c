/* bench/fleet's load: N simulated hosts, each inserting one batch per
 * simulated minute, as fast as the cluster takes them (time compressed).
 *
 *   fleet_gen URL SCHEMA HOSTS MINUTES START_TS THREADS < profiles.folded
 *
 * The stacks come from real profiles (bench/fleet_data, folded, root
 * first): a fleet-wide pool of 20,000 stacks of 20-40 frames, each spliced
 * from two real stacks of one program (python3, cc1 or perl) and topped up
 * from a third when short; each host draws 2,400 of them (popular ones
 * shared, its own mix of the three programs) and every minute reports
 * 2,000 of those, 5,880 samples in all (-F 49 on 2 CPUs for 60 s).
 * SCHEMA:
 *   sink    what --sink sends: fleet_batch_encode's rows (a stack as its
 *           hash) and, before them, the frames of the stacks this host has
 *           not sent yet (fleet_seen, as the sender does), gzip; tables
 *           made by `fleet_gen URL create` (fleet_sql_create's statements)
 *   dict    rows hold a 64-bit hash of the stack; URL's table + "_stacks"
 *           holds each stack's frames once (ReplacingMergeTree), and each
 *           host sends a stack's frames only the first time it reports it
 *   (the first release's arrays table, frames as Array(String) in each
 *   row, was measured at commit 1181a25: doc/FLEET.md)
 * Prints "rows inserts seconds raw_bytes wire_bytes dict_rows". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fleet/fleet.h"

#define POOL 20000
#define PER_HOST 2400
#define PER_BATCH 2000
#define SAMPLES 5880
#define MAXF 40

struct stack { int comm; int n; const char *f[MAXF]; uint64_t hash; }; /* root first */
static const char *comms[3] = { "python3", "cc1", "perl" };
static struct stack *real[3];
static int nreal[3];
static struct stack pool[POOL];
static struct fleet_url url;
static const char *schema;
static int hosts, minutes, nthreads;
static uint32_t start_ts;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void load(void)
{
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, stdin) > 0) {
		char *sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		char *save, *tok = strtok_r(line, ";", &save);
		int c = tok && !strcmp(tok, "python3") ? 0 : tok && !strcmp(tok, "cc1") ? 1 : 2;
		struct stack s = { .comm = c };
		while ((tok = strtok_r(NULL, ";", &save)) && s.n < MAXF)
			s.f[s.n++] = strdup(tok);
		if (!s.n)
			continue;
		real[c] = realloc(real[c], (nreal[c] + 1) * sizeof(s));
		real[c][nreal[c]++] = s;
	}
	free(line);
}

static uint64_t hash(const struct stack *s)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < s->n; i++)
		for (const char *p = s->f[i]; ; p++) {
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
			if (!*p)
				break;
		}
	return h ? h : 1;
}

/* POOL distinct spliced stacks of 20-40 frames. */
static void make_pool(void)
{
	uint64_t seed = 88172645463325252ull;
	for (int k = 0; k < POOL;) {
		int c = (int)(rnd(&seed) % 3);
		struct stack *s = &pool[k];
		*s = (struct stack){ .comm = c };
		int want = 20 + (int)(rnd(&seed) % 21);
		while (s->n < want) {
			const struct stack *a = &real[c][rnd(&seed) % (uint64_t)nreal[c]];
			int from = s->n ? (int)(rnd(&seed) % (uint64_t)a->n) : 0;
			for (int i = from; i < a->n && s->n < want; i++)
				s->f[s->n++] = a->f[i];
		}
		s->hash = hash(s);
		bool dup = false;
		for (int j = k - 1; j >= 0 && j > k - 2000 && !dup; j--)
			dup = pool[j].hash == s->hash;
		k += !dup;
	}
}

/* Host H's stacks: PER_HOST pool indices, popular ones (low indices) more
 * often, its programs in its own proportions. */
static void host_pool(int h, int *idx)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(h + 1);
	int mix[3] = { 1 + (int)(rnd(&seed) % 5), 1 + (int)(rnd(&seed) % 5), 1 + (int)(rnd(&seed) % 5) };
	for (int i = 0; i < PER_HOST; i++) {
		int c, j;
		uint64_t r = rnd(&seed) % (uint64_t)(mix[0] + mix[1] + mix[2]);
		c = r < (uint64_t)mix[0] ? 0 : r < (uint64_t)(mix[0] + mix[1]) ? 1 : 2;
		do { /* squared: skewed to the popular end */
			uint64_t u = rnd(&seed) % POOL;
			j = (int)(u * u / POOL);
		} while (pool[j].comm != c);
		idx[i] = j;
	}
}

struct totals { uint64_t rows, inserts, raw, wire, dict; };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct totals all;

/* One host-minute as the sink sends it: the frames of stacks new to this
 * host (SEEN), then the rows. */
static int send_sink(struct fleet_http *http, const char *ins, const char *ins_stacks, int h, int m,
		     const int *idx, const uint64_t *w, struct fleet_seen *seen, struct totals *t)
{
	static const char *events[] = { "cpu-clock" };
	static __thread struct agg_named_stack st[PER_BATCH];
	static __thread const char *frames[PER_BATCH][MAXF];
	char host[32];
	snprintf(host, sizeof(host), "host-%05d", h);
	for (int i = 0; i < PER_BATCH; i++) {
		const struct stack *s = &pool[idx[i]];
		for (int k = 0; k < s->n; k++)
			frames[i][k] = s->f[s->n - 1 - k]; /* leaf first */
		st[i] = (struct agg_named_stack){ .comm = comms[s->comm], .pid = 1000 + (uint32_t)s->comm,
						  .frames = frames[i], .nuframes = (uint32_t)s->n, .count = w[i] };
	}
	struct fleet_rows_meta meta = { .ts = start_ts + 60u * (uint32_t)m, .duration_ms = 60000,
					.host = host, .mode = "profile", .events = events, .nevents = 1,
					.run = (uint64_t)h + 1, .seq = (uint32_t)m + 1 };
	struct fleet_batch b;
	struct fleet_buf dict = { 0 };
	struct fleet_attempt a = { 0 };
	char err[512], qid[96];
	uint64_t nd = 0;
	int ret = 0;
	if (fleet_batch_encode(&b, &meta, st, PER_BATCH) < 0)
		return -1;
	for (size_t i = 0; i < b.rows; i++) {
		size_t from = i ? b.fend[i - 1] : 0;
		if (!fleet_seen_has(seen, b.hash[i])) {
			fleet_buf_put(&dict, b.frames.data + from, b.fend[i] - from);
			fleet_seen_add(seen, b.hash[i]);
			nd++;
		}
	}
	if (nd) {  /* the frames first: a row's hash is always resolvable */
		ret = fleet_http_insert(http, ins_stacks, NULL, dict.data, dict.len, &a, err, sizeof(err));
		t->raw += dict.len;
		t->wire += a.wire_bytes;
		t->inserts++;
	}
	fleet_batch_query_id(&b, 1, qid, sizeof(qid));
	if (ret == 0)
		ret = fleet_http_insert(http, ins, qid, b.data.data, b.data.len, &a, err, sizeof(err));
	if (ret < 0)
		fprintf(stderr, "fleet_gen: %s\n", err);
	t->rows += PER_BATCH;
	t->inserts++;
	t->raw += b.data.len;
	t->wire += a.wire_bytes;
	t->dict += nd;
	fleet_batch_free(&b);
	fleet_buf_free(&dict);
	return ret;
}

/* One host-minute as hash rows, and the frames of stacks this host had
 * not sent yet (SENT: its bitmap over its pool). */
static int send_dict(struct fleet_http *http, const char *ins, const char *ins_stacks, int h,
		     int m, const int *idx, const int *slot, const uint64_t *w, unsigned char *sent,
		     struct totals *t)
{
	struct fleet_buf rows = { 0 }, dict = { 0 };
	char host[32], err[512];
	uint64_t nd = 0;
	snprintf(host, sizeof(host), "host-%05d", h);
	for (int i = 0; i < PER_BATCH; i++) {
		const struct stack *s = &pool[idx[i]];
		fleet_put_le(&rows, start_ts + 60u * (uint32_t)m, 4);
		fleet_put_str(&rows, host);
		fleet_put_le(&rows, (uint64_t)h + 1, 8);
		fleet_put_le(&rows, (uint64_t)m + 1, 4);
		fleet_put_le(&rows, (uint64_t)i, 4);
		fleet_put_str(&rows, "cpu-clock");
		fleet_put_str(&rows, comms[s->comm]);
		fleet_put_le(&rows, 1000 + (uint64_t)s->comm, 4);
		fleet_put_le(&rows, s->hash, 8);
		fleet_put_le(&rows, w[i], 8);
		if (sent[slot[i]])
			continue;
		sent[slot[i]] = 1;
		nd++;
		fleet_put_le(&dict, s->hash, 8);
		fleet_put_varint(&dict, 0);           /* kernel: none in these profiles */
		fleet_put_varint(&dict, (uint64_t)s->n);
		for (int k = 0; k < s->n; k++)
			fleet_put_str(&dict, s->f[k]);
	}
	struct fleet_attempt a;
	int ret = 0;
	if (nd) {  /* the frames first: a row's hash is always resolvable */
		ret = fleet_http_insert(http, ins_stacks, NULL, dict.data, dict.len, &a, err, sizeof(err));
		t->raw += dict.len;
		t->wire += a.wire_bytes;
		t->inserts++;
	}
	if (ret == 0)
		ret = fleet_http_insert(http, ins, NULL, rows.data, rows.len, &a, err, sizeof(err));
	if (ret < 0)
		fprintf(stderr, "fleet_gen: %s\n", err);
	t->raw += rows.len;
	t->wire += a.wire_bytes;
	t->rows += PER_BATCH;
	t->inserts++;
	t->dict += nd;
	fleet_buf_free(&rows);
	fleet_buf_free(&dict);
	return ret;
}

/* Thread T sends hosts T, T + nthreads, ..., minute by minute. */
static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg, mine = 0;
	struct fleet_http *http;
	struct totals tot = { 0 };
	if (fleet_http_alloc(&url, &http) < 0)
		return NULL;
	char ins[512], ins_stacks[512];
	struct fleet_buf b = { 0 };
	fleet_sql_insert(&url, &b);
	snprintf(ins, sizeof(ins), "%s", b.data);
	fleet_buf_free(&b);
	fleet_sql_insert_stacks(&url, &b);
	snprintf(ins_stacks, sizeof(ins_stacks), "%s", b.data);
	fleet_buf_free(&b);
	if (strcmp(schema, "sink")) {
		snprintf(ins, sizeof(ins), "INSERT INTO `%s`.`%s` (ts, host, run, seq, row, event, comm, "
			 "pid, stack, weight) FORMAT RowBinary", url.db, url.table);
		snprintf(ins_stacks, sizeof(ins_stacks), "INSERT INTO `%s`.`%s_stacks` (stack, kernel, "
			 "`user`) FORMAT RowBinary", url.db, url.table);
	}
	for (int h = t; h < hosts; h += nthreads)
		mine++;
	int (*idx)[PER_HOST] = calloc((size_t)mine, sizeof(*idx));
	unsigned char (*sent)[PER_HOST] = calloc((size_t)mine, sizeof(*sent));
	struct fleet_seen **seen = calloc((size_t)mine, sizeof(*seen));
	for (int k = 0; k < mine; k++)
		fleet_seen_alloc(&seen[k]);
	for (int h = t, k = 0; h < hosts; h += nthreads, k++)
		host_pool(h, idx[k]);
	for (int m = 0; m < minutes; m++)
		for (int h = t, k = 0; h < hosts; h += nthreads, k++) {
			uint64_t seed = (uint64_t)h * 1000003u + (uint64_t)m + 7, w[PER_BATCH];
			int pick[PER_BATCH], slot[PER_BATCH];
			int skip = (int)(rnd(&seed) % PER_HOST); /* a window of 2,000 of its 2,400 */
			for (int i = 0; i < PER_BATCH; i++) {
				slot[i] = (skip + i) % PER_HOST;
				pick[i] = idx[k][slot[i]];
				w[i] = 1;
			}
			for (int i = PER_BATCH; i < SAMPLES; i++) { /* the rest: skewed */
				uint64_t u = rnd(&seed) % PER_BATCH;
				w[u * u / PER_BATCH]++;
			}
			if (!strcmp(schema, "sink"))
				send_sink(http, ins, ins_stacks, h, m, pick, w, seen[k], &tot);
			else
				send_dict(http, ins, ins_stacks, h, m, pick, slot, w, sent[k], &tot);
		}
	for (int k = 0; k < mine; k++)
		fleet_seen_free(seen[k]);
	free(seen);
	free(idx);
	free(sent);
	fleet_http_free(http);
	pthread_mutex_lock(&lock);
	all.rows += tot.rows;
	all.inserts += tot.inserts;
	all.raw += tot.raw;
	all.wire += tot.wire;
	all.dict += tot.dict;
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* URL's tables as the sink makes them. */
static int create(void)
{
	struct fleet_http *http;
	char err[512];
	int ret = fleet_http_alloc(&url, &http);
	for (unsigned i = 0; ret == 0 && i < FLEET_NCREATE; i++) {
		struct fleet_buf b = { 0 };
		fleet_sql_create(&url, i, &b);
		ret = fleet_http_post(http, b.data, NULL, 0, NULL, err, sizeof(err));
		if (ret < 0)
			fprintf(stderr, "fleet_gen: %s\n", err);
		fleet_buf_free(&b);
	}
	fleet_http_free(http);
	return ret < 0;
}

int main(int argc, char **argv)
{
	char err[256];
	bool parsed = argc > 1 && fleet_url_parse(argv[1], getenv(FLEET_PASSWORD_ENV), &url, err, sizeof(err)) == 0;
	if (parsed && argc == 3 && !strcmp(argv[2], "create"))
		return create();
	if (argc != 7 || !parsed) {
		fprintf(stderr, "usage: fleet_gen URL sink|dict HOSTS MINUTES START_TS THREADS < folded\n"
			"       fleet_gen URL create\n");
		return 2;
	}
	schema = argv[2];
	hosts = atoi(argv[3]);
	minutes = atoi(argv[4]);
	start_ts = (uint32_t)strtoul(argv[5], NULL, 10);
	nthreads = atoi(argv[6]);
	load();
	if (!nreal[0] || !nreal[1] || !nreal[2]) {
		fprintf(stderr, "fleet_gen: the profiles need python3, cc1 and perl stacks\n");
		return 1;
	}
	make_pool();
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t th[16];
	for (int t = 0; t < nthreads && t < 16; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < nthreads && t < 16; t++)
		pthread_join(th[t], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%llu %llu %.2f %llu %llu %llu\n", (unsigned long long)all.rows,
	       (unsigned long long)all.inserts, secs, (unsigned long long)all.raw,
	       (unsigned long long)all.wire, (unsigned long long)all.dict);
	return 0;
}
