/* aggregate: interning, keys, limits, named merging, filters, ordering. */
#include "aggregate/aggregate.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <stdlib.h>

static struct agg_record rec(uint32_t pid, const uint64_t *k, uint32_t nk,
			     const uint64_t *u, uint32_t nu)
{
	return (struct agg_record){ .time = 100, .pid = pid, .tid = pid,
				    .weight = 1, .kstack = k, .nkstack = nk,
				    .ustack = u, .nustack = nu };
}

static const struct agg_entry *find_pid(const struct agg_entry *e, size_t n,
					uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].pid == pid)
			return &e[i];
	return NULL;
}

static void test_interning(void)
{
	struct agg_config cfg = { 0 };
	struct agg_table *t;
	uint64_t a[3] = { 1, 2, 3 }, b[3] = { 1, 2, 3 }, c[2] = { 1, 2 };
	struct agg_record r = rec(7, a, 3, NULL, 0);
	const struct agg_entry *e;
	struct agg_stats st;

	CHECK(agg_table_alloc(&cfg, &t) == 0, "create");
	r.time = 50;
	r.weight = 5;
	CHECK(agg_add(t, &r) == 0, "add a");
	r.kstack = b; /* same contents, other memory */
	r.pid = 8;
	r.time = 20;
	CHECK(agg_add(t, &r) == 0, "add b");
	r.time = 30;
	agg_add(t, &r);
	r.kstack = c;
	r.nkstack = 2;
	agg_add(t, &r);
	agg_table_stats(t, &st);
	CHECK_EQ_U64(st.stacks, 2, "equal arrays interned once");
	CHECK_EQ_U64(st.keys, 2, "keys");
	CHECK_EQ_U64(st.records, 4, "records");
	CHECK_EQ_U64(agg_table_entries(t, &e), 2, "entries");
	CHECK_EQ_U64(e[0].count, 3, "count of a");
	CHECK_EQ_U64(e[0].weight, 15, "weight of a");
	CHECK_EQ_U64(e[0].first_time, 20, "first_time is the smallest");
	CHECK_EQ_U64(e[0].pid, 0, "pid not in key");
	CHECK_EQ_U64(e[0].nkstack, 3, "nkstack");
	CHECK(e[0].kstack != a && e[0].kstack != b &&
	      e[0].kstack[2] == 3, "stack copied");
	CHECK(e[0].ustack == NULL && e[0].nustack == 0, "no user stack");
	CHECK_EQ_U64(e[1].nkstack, 2, "prefix is another stack");
	r.event = 1;
	agg_add(t, &r);
	agg_table_stats(t, &st);
	CHECK_EQ_U64(st.keys, 3, "event is part of the key");
	CHECK_EQ_U64(st.stacks, 2, "same stack under another event");
	agg_table_free(t);
	agg_table_free(NULL);
}

static void test_pid_keys(void)
{
	struct agg_config cfg = { .key_pid = true };
	struct agg_table *t;
	uint64_t k[2] = { 10, 11 }, u[2] = { 0x400000, 0x400100 };
	struct agg_record r1 = rec(1, k, 2, NULL, 0), r2 = rec(2, k, 2, NULL, 0);
	const struct agg_entry *e;
	size_t n;

	agg_table_alloc(&cfg, &t);
	agg_add(t, &r1);
	agg_add(t, &r2);
	agg_add(t, &r2);
	n = agg_table_entries(t, &e);
	CHECK_EQ_U64(n, 2, "key_pid: one key per pid");
	CHECK(find_pid(e, n, 1) && find_pid(e, n, 1)->count == 1, "pid 1 once");
	CHECK(find_pid(e, n, 2) && find_pid(e, n, 2)->count == 2, "pid 2 twice");
	agg_table_free(t);

	cfg.key_pid = false;
	agg_table_alloc(&cfg, &t);
	r1 = rec(1, k, 2, u, 2);
	r2 = rec(2, k, 2, u, 2);
	agg_add(t, &r1);
	agg_add(t, &r2);
	agg_add(t, &r2);
	r1.nustack = 0; /* kernel only: pid dropped from the key */
	r2.nustack = 0;
	agg_add(t, &r1);
	agg_add(t, &r2);
	n = agg_table_entries(t, &e);
	CHECK_EQ_U64(n, 3, "user frames force the pid");
	CHECK(find_pid(e, n, 1) && find_pid(e, n, 1)->count == 1 &&
	      find_pid(e, n, 1)->nustack == 2, "pid 1 user stack");
	CHECK(find_pid(e, n, 2) && find_pid(e, n, 2)->count == 2, "pid 2");
	CHECK(find_pid(e, n, 0) && find_pid(e, n, 0)->count == 2 &&
	      find_pid(e, n, 0)->ustack == NULL, "kernel-only merged, pid 0");
	agg_table_free(t);

	/* key_tid: a process's threads apart (each prints its own comm) */
	cfg = (struct agg_config){ .key_tid = true };
	agg_table_alloc(&cfg, &t);
	r1 = rec(1, k, 2, NULL, 0);
	r1.tid = 1;
	agg_add(t, &r1);
	r1.tid = 7;
	agg_add(t, &r1);
	agg_add(t, &r1);
	n = agg_table_entries(t, &e);
	CHECK_EQ_U64(n, 2, "key_tid: one key per thread");
	CHECK(n == 2 && e[0].pid == 1 && e[1].pid == 1, "key_tid keeps the pid");
	CHECK(n == 2 && e[0].tid + e[1].tid == 8 &&
	      (e[0].tid == 7 ? e[0].count : e[1].count) == 2, "thread 7 twice");
	agg_table_free(t);
	cfg = (struct agg_config){ .key_pid = true };
	agg_table_alloc(&cfg, &t);
	agg_add(t, &r1);
	n = agg_table_entries(t, &e);
	CHECK(n == 1 && e[0].tid == 0, "no key_tid: tid 0");
	agg_table_free(t);
}

static void test_max_stacks_reset_and_last(void)
{
	struct agg_config cfg = { .max_stacks = 2 };
	struct agg_table *t;
	uint64_t s[3] = { 1, 2, 3 };
	struct agg_record r = rec(1, &s[0], 1, NULL, 0);
	const struct agg_entry *e;
	struct agg_stats st;

	agg_table_alloc(&cfg, &t);
	/* agg_add_last: one more into the key the last agg_add counted, its
	 * weight and time taken; none after a drop, a failed add or a reset */
	CHECK(agg_add_last(t, 50, 1) == -ENOENT, "an empty table: no last key");
	CHECK(agg_add(t, &r) == 0, "key 1");
	r.kstack = &s[1];
	CHECK(agg_add(t, &r) == 0, "key 2");
	CHECK(agg_add_last(t, 50, 4) == 0 && agg_add_last(t, 60, 1) == 0, "twice into the last");
	CHECK(agg_table_entries(t, &e) == 2 && e[1].kstack[0] == 2 && e[1].count == 3 &&
	      e[1].weight == 6 && e[1].first_time == 50 && e[0].count == 1,
	      "key 2: 3 records, weight 6, first at 50; key 1 untouched");
	r.kstack = &s[2];
	r.weight = 9;
	CHECK(agg_add(t, &r) == -ENOSPC, "key 3 dropped");
	CHECK(agg_add(t, &r) == -ENOSPC, "key 3 dropped again");
	CHECK(agg_add_last(t, 70, 1) == -ENOENT, "after a drop: no last key");
	r.kstack = &s[0];
	r.weight = 1;
	CHECK(agg_add(t, &r) == 0, "known key still counted when full");
	CHECK(agg_add_last(t, 70, 1) == 0, "a known key counted again: it is the last");
	agg_table_stats(t, &st);
	CHECK_EQ_U64(st.keys, 2, "keys capped");
	CHECK_EQ_U64(st.stacks, 2, "dropped stack not interned");
	CHECK_EQ_U64(st.records, 6, "records: 2 added, 2 again, 1 known, 1 again");
	CHECK_EQ_U64(st.dropped, 2, "dropped");
	CHECK_EQ_U64(st.dropped_weight, 18, "dropped_weight");

	agg_table_reset(t);
	agg_table_stats(t, &st);
	CHECK(st.keys == 0 && st.stacks == 0 && st.records == 0 &&
	      st.dropped == 0 && st.dropped_weight == 0, "reset clears");
	CHECK(agg_add_last(t, 80, 1) == -ENOENT, "after a reset: no last key");
	CHECK_EQ_U64(agg_table_entries(t, &e), 0, "no entries after reset");
	r.kstack = &s[2];
	agg_add(t, &r);
	r.kstack = &s[1];
	agg_add(t, &r);
	r.kstack = &s[0];
	CHECK(agg_add(t, &r) == -ENOSPC, "reset keeps max_stacks");
	CHECK_EQ_U64(agg_table_entries(t, &e), 2, "entries after reset");
	CHECK(e[0].kstack[0] == 3 && e[0].count == 1, "new first entry");
	agg_table_free(t);
}

/* A record that counts for several alike ones (collector's queue while
 * the kernel's symbols load): its records and weight into every count */
static void test_records(void)
{
	struct agg_config cfg = { .max_stacks = 1 };
	struct agg_table *t;
	uint64_t s[2] = { 1, 2 };
	struct agg_record r = rec(1, &s[0], 1, NULL, 0);
	const struct agg_entry *e;
	struct agg_stats st;
	agg_table_alloc(&cfg, &t);
	r.records = 3, r.weight = 6;
	CHECK(agg_add(t, &r) == 0, "a new key from 3 records");
	r.records = 2, r.weight = 4;
	CHECK(agg_add(t, &r) == 0, "2 more (the last key)");
	r.records = 0, r.weight = 1;
	CHECK(agg_add(t, &r) == 0, "and one (records 0: one)");
	CHECK(agg_table_entries(t, &e) == 1 && e[0].count == 6 && e[0].weight == 11,
	      "6 records, weight 11");
	r.kstack = &s[1], r.records = 4, r.weight = 8;
	CHECK(agg_add(t, &r) == -ENOSPC, "4 records of a key past max_stacks");
	agg_table_stats(t, &st);
	CHECK(st.records == 6 && st.dropped == 4 && st.dropped_weight == 8,
	      "stats: 6 counted, 4 dropped, weight 8");
	agg_table_free(t);
}

/* 100k distinct stacks, stack i added (i % 3) + 1 times: forces every
 * table to grow many times; pointers handed out earlier must survive. */
static void test_growth(void)
{
	enum { N = 100000 };
	struct agg_config cfg = { 0 };
	struct agg_table *t;
	uint64_t s[4], deep[AGG_MAX_DEPTH + 88];
	struct agg_record r = rec(1, s, 4, NULL, 0);
	const struct agg_entry *e;
	const uint64_t *first;
	struct agg_stats st;
	size_t n, bad = 0, sum = 0;

	agg_table_alloc(&cfg, &t);
	s[0] = 0;
	s[1] = s[2] = s[3] = 0xffffffff81000000ull;
	agg_add(t, &r);
	agg_table_entries(t, &e);
	first = e[0].kstack;
	for (int rep = 0; rep < 3; rep++)
		for (uint64_t i = 1; i < N; i++) {
			s[0] = i;
			if ((int)(i % 3) >= rep && agg_add(t, &r) != 0)
				bad++;
		}
	CHECK_EQ_U64(bad, 0, "all adds succeeded");
	n = agg_table_entries(t, &e);
	CHECK_EQ_U64(n, N, "distinct keys");
	for (size_t i = 0; i < n; i++) {
		uint64_t want = e[i].kstack[0] == 0 ? 1 : e[i].kstack[0] % 3 + 1;

		sum += e[i].count;
		if (e[i].count != want || e[i].nkstack != 4)
			bad++;
	}
	CHECK_EQ_U64(bad, 0, "every count exact");
	CHECK_EQ_U64(sum, 1 + (N - 1) / 3 * 6 + 0, "total count");
	CHECK(e[0].kstack == first, "stack pointer stable across growth");
	agg_table_stats(t, &st);
	CHECK_EQ_U64(st.stacks, N, "stacks");
	CHECK_EQ_U64(st.records, sum, "records");

	for (size_t i = 0; i < sizeof(deep) / sizeof(deep[0]); i++)
		deep[i] = i;
	r.kstack = deep;
	r.nkstack = sizeof(deep) / sizeof(deep[0]);
	CHECK(agg_add(t, &r) == 0, "deep stack");
	n = agg_table_entries(t, &e);
	CHECK_EQ_U64(e[n - 1].nkstack, AGG_MAX_DEPTH, "depth capped");
	agg_table_free(t);
}

static int named_add(struct agg_named *n, uint32_t pid, const char *comm,
		     const char **frames, uint32_t nk, uint32_t nu,
		     uint64_t count, uint64_t weight)
{
	struct agg_named_stack s = { .pid = pid, .comm = comm, .frames = frames,
				     .nkframes = nk, .nuframes = nu,
				     .count = count, .weight = weight };
	return agg_named_add(n, &s);
}

static void test_named_merge(void)
{
	struct agg_named *n;
	char buf1[2][16] = { "leaf", "root" }, buf2[2][16] = { "leaf", "root" };
	const char *f1[2] = { buf1[0], buf1[1] }, *f2[2] = { buf2[0], buf2[1] };
	const struct agg_named_stack *out;
	struct agg_named_stats st;
	size_t k;

	CHECK(agg_named_alloc(&n) == 0, "named create");
	CHECK(named_add(n, 0, NULL, f1, 2, 0, 3, 30) == 0, "add");
	CHECK(named_add(n, 0, NULL, f2, 2, 0, 4, 40) == 0, "add equal");
	named_add(n, 0, NULL, f1, 1, 1, 1, 1);    /* other kernel/user split */
	named_add(n, 0, "sh", f1, 2, 0, 1, 1);    /* comm in the key */
	named_add(n, 5, NULL, f1, 2, 0, 1, 1);    /* pid in the key */
	strcpy(buf1[0], "changed");               /* names were copied */
	k = agg_named_finish(n, NULL, &out, &st);
	CHECK_EQ_U64(k, 4, "merged stacks");
	CHECK_EQ_U64(st.stacks_before, 4, "stacks_before");
	CHECK_EQ_U64(st.count_before, 10, "count_before");
	CHECK_EQ_U64(st.weight_after, 73, "weight_after");
	CHECK_EQ_U64(out[3].count, 7, "merged count is the largest, last");
	CHECK_EQ_U64(out[3].weight, 70, "merged weight");
	CHECK_STR(out[3].frames[0], "leaf", "frame copied");
	/* ties at count 1: frames equal -> shorter kernel part first, then
	 * comm (NULL first), then pid */
	CHECK(out[0].nkframes == 1, "tie: kernel/user split first");
	CHECK(out[1].comm == NULL && out[1].pid == 5, "tie: pid 5");
	CHECK_STR(out[2].comm, "sh", "tie: comm after NULL comm");
	agg_named_free(n);
	agg_named_free(NULL);
}

/* more frames than the on-stack scratch array of agg_named_add */
static void test_named_long(void)
{
	static char names[300][8];
	const char *fr[300];
	const struct agg_named_stack *out;
	struct agg_named *n;
	size_t k;

	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i % 150);
		fr[i] = names[i];
	}
	agg_named_alloc(&n);
	named_add(n, 0, NULL, fr, 200, 100, 1, 2);
	named_add(n, 0, NULL, fr, 200, 100, 1, 2);
	named_add(n, 0, NULL, fr, 200, 99, 1, 2);
	k = agg_named_finish(n, NULL, &out, NULL);
	CHECK_EQ_U64(k, 2, "long stacks merged");
	CHECK(out[1].count == 2 && out[1].nuframes == 100 &&
	      strcmp(out[1].frames[299], "f149") == 0 &&
	      out[1].frames[0] == out[1].frames[150], "long stack, interned");
	agg_named_free(n);
}

static const char *F[][2] = {
	{ "a_func", "main" }, { "b_func", "main" }, { "c_lock", "main" },
	{ "d_func", "main" }, { "e_func", "start" },
};

/* counts 5 5 9 2 7, weights 50 10 1 80 70 */
static struct agg_named *filled(int reverse)
{
	static const uint64_t c[] = { 5, 5, 9, 2, 7 }, w[] = { 50, 10, 1, 80, 70 };
	struct agg_named *n;

	agg_named_alloc(&n);
	for (int j = 0; j < 5; j++) {
		int i = reverse ? 4 - j : j;

		named_add(n, 0, NULL, F[i], 2, 0, c[i], w[i]);
	}
	return n;
}

static void test_filters(void)
{
	const char *const ex[] = { "*_lock", "nomatch", NULL };
	struct agg_filter f = { .exclude = ex };
	const struct agg_named_stack *out, *out2;
	struct agg_named_stats st;
	struct agg_named *n = filled(0), *n2 = filled(1);
	size_t k, k2, same = 0;

	k = agg_named_finish(n, &f, &out, &st);
	CHECK_EQ_U64(k, 4, "exclude keeps 4");
	CHECK_EQ_U64(st.excluded, 1, "excluded");
	CHECK_EQ_U64(st.count_after, 19, "count_after");
	CHECK_STR(out[0].frames[0], "d_func", "least first");
	CHECK_STR(out[1].frames[0], "a_func", "tie 5/5: a before b");
	CHECK_STR(out[2].frames[0], "b_func", "tie 5/5: b");
	CHECK_STR(out[3].frames[0], "e_func", "most last");
	k2 = agg_named_finish(n2, &f, &out2, NULL);
	for (size_t i = 0; i < k && k == k2; i++)
		same += out[i].frames[0][0] == out2[i].frames[0][0];
	CHECK_EQ_U64(same, 4, "order independent of insertion order");

	f = (struct agg_filter){ .min_count = 5, .top = 2 };
	k = agg_named_finish(n, &f, &out, &st);
	CHECK_EQ_U64(k, 2, "min 5, top 2");
	CHECK_STR(out[0].frames[0], "e_func", "top 2: e (7)");
	CHECK_STR(out[1].frames[0], "c_lock", "top 2: c (9)");
	CHECK_EQ_U64(st.stacks_before, 5, "stacks_before");
	CHECK_EQ_U64(st.stacks_after, 2, "stacks_after");
	CHECK_EQ_U64(st.excluded, 0, "no excludes");
	CHECK_EQ_U64(st.count_after, 16, "count_after top");

	f = (struct agg_filter){ .top = 2 };
	k = agg_named_finish(n, &f, &out, NULL);
	f.top = 3;
	k2 = agg_named_finish(n, &f, &out2, NULL);
	CHECK(k == 2 && k2 == 3 && strcmp(out2[0].frames[0], "b_func") == 0,
	      "top 3 cuts the 5/5 tie deterministically (keeps b)");
	CHECK_STR(out[0].frames[0], "e_func", "earlier output still valid");

	f = (struct agg_filter){ .by_weight = true, .min_count = 10, .top = 3 };
	k = agg_named_finish(n, &f, &out, NULL);
	CHECK_EQ_U64(k, 3, "by weight: min 10 then top 3");
	CHECK_STR(out[0].frames[0], "a_func", "weight 50");
	CHECK_STR(out[1].frames[0], "e_func", "weight 70");
	CHECK_STR(out[2].frames[0], "d_func", "weight 80");

	f = (struct agg_filter){ .min_weight = 50 };
	k = agg_named_finish(n, &f, &out, NULL);
	CHECK(k == 3 && out[0].count == 2 && out[1].count == 5 &&
	      out[2].count == 7, "min_weight, ordered by count");
	agg_named_free(n);
	agg_named_free(n2);
}

static void test_glob(void)
{
	CHECK(agg_glob_match("*lock*", "_raw_spin_lock_irqsave"), "glob *");
	CHECK(agg_glob_match("do_sys_open?", "do_sys_open2"), "glob ?");
	CHECK(!agg_glob_match("do_sys", "do_sys_open"), "glob anchored");
	CHECK(agg_glob_match("[ab]x", "bx"), "glob class");
	CHECK(agg_glob_match("std::*", "std::vector<int>::push_back"), "glob ::");
}

/* --per-cgroup: the same stack of two cgroups is two keys, and one
 * without key_cgroup */
static void test_cgroup_keys(void)
{
	const uint64_t k[] = { 0xffffffff81000000ull, 0xffffffff81000100ull };
	struct agg_config cfg = { .key_cgroup = true };
	struct agg_table *t;
	const struct agg_entry *e;
	for (int keyed = 1; keyed >= 0; keyed--) {
		cfg.key_cgroup = keyed;
		CHECK(agg_table_alloc(&cfg, &t) == 0, "create");
		struct agg_record r = rec(7, k, 2, NULL, 0);
		for (int i = 0; i < 5; i++) {
			r.cgroup = i < 2 ? 11 : 22;
			agg_add(t, &r);
		}
		size_t n = agg_table_entries(t, &e);
		if (keyed)
			CHECK(n == 2 && e[0].cgroup + e[1].cgroup == 33 &&
			      (e[0].cgroup == 11 ? e[0].count : e[1].count) == 2 &&
			      (e[0].cgroup == 22 ? e[0].count : e[1].count) == 3,
			      "key_cgroup: one key a cgroup, 2 and 3");
		else
			CHECK(n == 1 && e[0].cgroup == 0 && e[0].count == 5,
			      "without key_cgroup: one key, no cgroup");
		agg_table_free(t);
	}
	struct agg_named *nm;
	const char *f[1] = { "leaf" };
	const struct agg_named_stack *out;
	CHECK(agg_named_alloc(&nm) == 0, "named create");
	char a1[] = "/a", a2[] = "/a";
	struct agg_named_stack s = { .frames = f, .nkframes = 1, .count = 1, .weight = 1 };
	s.cgroup = a1;
	agg_named_add(nm, &s);
	s.cgroup = a2;                       /* equal path, another buffer: merged */
	agg_named_add(nm, &s);
	s.cgroup = "/b";
	agg_named_add(nm, &s);
	a1[1] = 'z';                         /* the path was copied */
	size_t n = agg_named_finish(nm, NULL, &out, NULL);
	CHECK(n == 2 && out[0].count == 1 && !strcmp(out[0].cgroup, "/b") && out[1].count == 2 &&
	      !strcmp(out[1].cgroup, "/a"), "named: cgroup in the key, path copied");
	agg_named_free(nm);
}

/* The index refilled (agg_index_reset, agg_index_add): sized anew for
 * fewer items, each found again, nothing of before left. */
static void test_index_reset(void)
{
	struct agg_index x = { 0 };
	struct agg_probe p;
	bool ok = true;
	for (uint32_t i = 1; i <= 1000 && ok; i++) {
		ok = agg_index_reserve(&x) == 0 && agg_index_first(&x, agg_hash_mix(0, i), &p) == 0;
		if (ok)
			agg_index_put(&x, &p, i);
	}
	CHECK(ok && x.used == 1000 && x.mask + 1 == 2048, "1000 items: 2048 slots (%u)", x.mask + 1);
	CHECK(agg_index_reset(&x, 40) == 0 && x.used == 0 && x.mask + 1 == 128,
	      "reset for 40: 128 slots, empty (%u)", x.mask + 1);
	for (uint32_t i = 1; i <= 40; i++)
		agg_index_add(&x, agg_hash_mix(0, i * 7), i);
	uint32_t found = 0;
	for (uint32_t i = 1; i <= 40; i++)
		for (uint32_t it = agg_index_first(&x, agg_hash_mix(0, i * 7), &p); it;
		     it = agg_index_next(&x, &p))
			found += it == i;
	CHECK_EQ_U64(found, 40, "every added item found under its hash");
	CHECK(agg_index_first(&x, agg_hash_mix(0, 999), &p) == 0, "an item of before is gone");
	agg_index_clear(&x);
}

/* The count of the entry whose stacks start with kernel K0 and user U0
 * (0: none) under EVENT and PID, or 0 when there is none. */
static uint64_t count_of(struct agg_table *t, uint32_t event, uint32_t pid, uint64_t k0,
			 uint32_t nk, uint64_t u0)
{
	const struct agg_entry *e;
	size_t n = agg_table_entries(t, &e);
	for (size_t i = 0; i < n; i++)
		if (e[i].event == event && e[i].pid == pid && e[i].nkstack == nk &&
		    (nk ? e[i].kstack[0] : 0) == k0 && (e[i].nustack ? e[i].ustack[0] : 0) == u0)
			return e[i].count;
	return 0;
}

/* A record like the last goes to the last key without a hash; anything
 * that makes another key (event, pid, tid, cgroup, a stack's addresses or
 * length, a NULL stack) does not, stacks past AGG_MAX_DEPTH compare as
 * cut, and after a reset the same record counts under a new key. (That the
 * reset forgets the last key shows only where the freed key still matched:
 * a stale index reads memory the reset allocated anew, which no check here
 * can make match.) */
static void test_runs(void)
{
	struct agg_config cfg = { .key_cgroup = true };
	struct agg_table *t;
	static uint64_t k[3] = { 10, 11, 12 }, u[2] = { 0x400000, 0x400100 },
			u2[2] = { 0x400000, 0x400200 }, deep1[600], deep2[600];
	struct agg_record r = rec(1, k, 3, u, 2);
	struct agg_stats st;

	agg_table_alloc(&cfg, &t);
	for (int i = 0; i < 3; i++)
		agg_add(t, &r);
	CHECK_EQ_U64(count_of(t, 0, 1, 10, 3, 0x400000), 3, "a run of 3: one key, 3");
	agg_add(t, &r); /* after the entries were built: they are built again */
	CHECK_EQ_U64(count_of(t, 0, 1, 10, 3, 0x400000), 4, "one more after reading the entries: 4");
	r.ustack = u2;
	agg_add(t, &r);
	r.ustack = u;
	agg_add(t, &r);
	r.pid = r.tid = 2;
	agg_add(t, &r);
	r.pid = 1;
	r.tid = 3; /* no key_tid: the same key as pid 1's */
	agg_add(t, &r);
	r.tid = 1;
	r.event = 1;
	agg_add(t, &r);
	r.event = 0;
	r.cgroup = 5;
	agg_add(t, &r);
	r.cgroup = 0;
	r.nkstack = 2;
	agg_add(t, &r);
	r.nkstack = 3;
	r.kstack = NULL;
	agg_add(t, &r);
	r.kstack = k;
	agg_add(t, &r);
	agg_table_stats(t, &st);
	CHECK_EQ_U64(st.records, 13, "13 records");
	CHECK_EQ_U64(st.keys, 7, "7 keys: user stack, pid, event, cgroup, kernel depth, no kernel stack");
	CHECK_EQ_U64(count_of(t, 0, 1, 10, 3, 0x400000), 7, "pid 1's: 4, then 1 after another user stack, 1 of tid 3, 1 last");
	CHECK_EQ_U64(count_of(t, 0, 2, 10, 3, 0x400000), 1, "pid 2's: 1");
	CHECK_EQ_U64(count_of(t, 1, 1, 10, 3, 0x400000), 1, "event 1's: 1");
	CHECK_EQ_U64(count_of(t, 0, 1, 10, 2, 0x400000), 1, "the kernel stack cut to 2: 1");
	CHECK_EQ_U64(count_of(t, 0, 1, 0, 0, 0x400000), 1, "no kernel stack: 1");

	agg_table_reset(t);
	agg_add(t, &r); /* the last record before the reset again */
	agg_table_stats(t, &st);
	CHECK(st.keys == 1 && count_of(t, 0, 1, 10, 3, 0x400000) == 1,
	      "after a reset, the record last counted again: a key of its own, 1 (%zu keys)",
	      (size_t)st.keys);
	agg_table_reset(t);
	for (int i = 0; i < 600; i++)
		deep1[i] = deep2[i] = 0x1000 + (uint64_t)i;
	deep2[599] = 1; /* past AGG_MAX_DEPTH: not part of the key */
	r = rec(1, deep1, 600, NULL, 0);
	agg_add(t, &r);
	r.kstack = deep2;
	agg_add(t, &r);
	deep2[AGG_MAX_DEPTH - 1] = 2; /* within it: another stack */
	agg_add(t, &r);
	agg_table_stats(t, &st);
	CHECK_EQ_U64(st.keys, 2, "after a reset, 600 frames: equal in the first AGG_MAX_DEPTH is one key");
	const struct agg_entry *e;
	CHECK(agg_table_entries(t, &e) == 2 && e[0].count == 2 && e[1].count == 1,
	      "the two equal in it counted under one key, the third apart");
	agg_table_free(t);
}

/* The caches' sets (cache.c): a set's first slot, inside the cache; keys
 * that differ in low bits, qualified by pids that differ in low bits, as a
 * process's ips and a fork's pids do, spread over the sets (the xor hash
 * before put two such keys in one slot); the front made, the last out */
static void test_cache_sets(void)
{
	enum { N = 4096, SETS = N / AGG_CACHE_WAYS };
	static bool used[SETS];
	bool inside = true;
	unsigned distinct = 0;
	for (uint64_t k = 0; k < SETS; k++) {
		unsigned first = agg_cache_set(0x7f0000001000ull + k * 2, 16347 + (k & 3), N);
		inside &= first < N && first % AGG_CACHE_WAYS == 0;
		if (first < N && !used[first / AGG_CACHE_WAYS])
			used[first / AGG_CACHE_WAYS] = true, distinct++;
	}
	CHECK(inside, "each key's set starts at a multiple of %d inside the cache", AGG_CACHE_WAYS);
	/* thrown at random, 1024 keys meet ~647 of 1024 sets */
	CHECK(distinct > SETS / 2, "%u keys of nearby ips and pids in %u distinct sets", SETS, distinct);
	uint64_t set[AGG_CACHE_WAYS];
	for (unsigned w = 0; w < AGG_CACHE_WAYS; w++)
		set[w] = w + 1;
	uint64_t *front = agg_cache_front(set, sizeof(set[0]));
	bool moved = front == set && set[0] == 1;
	for (unsigned w = 1; w < AGG_CACHE_WAYS; w++)
		moved &= set[w] == w;
	CHECK(moved, "the front made: each slot moved down one, the last one's item out");
}

int main(void)
{
	test_index_reset();
	test_interning();
	test_cgroup_keys();
	test_pid_keys();
	test_max_stacks_reset_and_last();
	test_records();
	test_growth();
	test_named_merge();
	test_named_long();
	test_filters();
	test_glob();
	test_runs();
	test_cache_sets();
	CHECK_DONE();
}
