/* sym_unwind's rules per ip: a full walk's frames teach them (each
 * checked by probes: libunwind steps from the frame's rsp and rbp alone,
 * then with rbp shifted, then rsp, which tell an rsp-based CFA from an
 * rbp-based one and where the return address and rbp were read); later
 * samples apply them with a few loads from the copy, and a walk by the
 * rules alone needs libunwind for the sampled frame's one step at most.
 * Apart from the full walk (unwind.c) because it is a second unwinder of
 * its own, with its own cache and its own way to fail (a rule not learnt
 * sends the sample to the full walk). */
#include "symbolize/unwind_internal.h"

#define RULE_DELTA 64       /* rbp's shift in the second probe */

/* RULE_FP: code without CFI, walked by a frame-pointer step (unwind_fp.c) */
enum { RULE_NONE, RULE_SP, RULE_BP, RULE_END, RULE_NOT, RULE_FP };

/* The rule kept for KEY of process PID, or NULL */
static struct urule *rule_find(struct sym_unwinder *u, uint32_t pid, uint64_t key)
{
	struct urule *set = &u->rules[agg_cache_set(key, pid, RULE_CACHE)];
	for (unsigned w = 0; w < AGG_CACHE_WAYS; w++)
		if (set[w].kind != RULE_NONE && set[w].key == key && set[w].pid == pid)
			return &set[w];
	return NULL;
}

/* Keeps R (in place of the rule of its key, or the set's oldest); returns
 * where it is kept */
static struct urule *rule_put(struct sym_unwinder *u, const struct urule *r)
{
	struct urule *slot = rule_find(u, r->pid, r->key);
	if (!slot)
		slot = agg_cache_front(&u->rules[agg_cache_set(r->key, r->pid, RULE_CACHE)],
					  sizeof(*slot));
	*slot = *r;
	return slot;
}

/* KEY's ip (ip * 2 + 1 for a return address, looked up at ip - 1) by its
 * file in the process of the walk in progress (u->cur, u->seen): the
 * file's device, inode and time, and KEY's offset in it, into K (its kind
 * and offsets left 0); false in no file (JIT code). */
static bool file_key(struct sym_unwinder *u, uint64_t key, struct frule *k)
{
	uint64_t bias;
	const struct ufile *f = sym_uw_file_at(u, key / 2 - (key & 1), &bias);
	if (!f || (!f->ino && !f->borrowed))
		return false;
	*k = (struct frule){ .dev = f->dev, .ino = f->ino, .stamp = f->stamp,
			     .off = key - 2 * bias };
	return true;
}

/* The rule kept for K's file and offset, NULL when none; *SET its set */
static struct frule *file_rule_find(struct sym_unwinder *u, const struct frule *k,
				    struct frule **set)
{
	*set = &u->file_rules[agg_cache_set(k->off, (uint32_t)(k->ino * 31 + k->dev), RULE_CACHE)];
	for (unsigned w = 0; w < AGG_CACHE_WAYS; w++) {
		struct frule *f = &(*set)[w];
		if (f->kind != RULE_NONE && f->off == k->off && f->ino == k->ino &&
		    f->dev == k->dev && f->stamp == k->stamp)
			return f;
	}
	return NULL;
}

/* Keeps R, just learnt, by its file too */
static void file_rule_keep(struct sym_unwinder *u, const struct urule *r)
{
	struct frule k, *set;
	if (!file_key(u, r->key, &k))
		return;
	struct frule *slot = file_rule_find(u, &k, &set);
	if (!slot)
		slot = agg_cache_front(set, sizeof(*set));
	k.kind = r->kind, k.bp_saved = r->bp_saved;
	k.cfa_off = r->cfa_off, k.ra_off = r->ra_off, k.bp_off = r->bp_off;
	*slot = k;
}

/* The rule of KEY in S's process of layout IMAGE: its own, or one learnt
 * in another process from the same file, kept for this one from now on;
 * NULL when none. */
static const struct urule *rule_get(struct sym_unwinder *u, const struct sym_ustack *s,
				    uint64_t image, uint64_t key)
{
	const struct urule *r = rule_find(u, s->pid, key);
	if (r && r->image == image)
		return r;
	struct frule k, *set;
	u->cur = s;
	const struct frule *f = file_key(u, key, &k) ? file_rule_find(u, &k, &set) : NULL;
	if (!f)
		return NULL;
	struct urule n = { .pid = s->pid, .image = image, .key = key, .kind = f->kind,
			   .bp_saved = f->bp_saved, .cfa_off = f->cfa_off, .ra_off = f->ra_off,
			   .bp_off = f->bp_off };
	u->n_shared++;
	return rule_put(u, &n);
}

/* One step by libunwind from IP, SP and BP alone (every other register 0)
 * in S's copy: 1 with the caller's rip, rsp, rbp in OUT and where rip and
 * rbp were read (*BP_LOC 0: rbp unchanged), 0 at the stack's end, -1 when
 * the step is no simple rule's (no CFI, a signal frame, a failed read). */
static int probe(struct sym_unwinder *u, unw_addr_space_t as, const struct sym_ustack *s,
		 const uint64_t in[3], uint64_t out[3], uint64_t *ra_loc, uint64_t *bp_loc)
{
	uint64_t r[17] = { 0 };
	r[16] = in[0], r[7] = in[1], r[6] = in[2];
	u->cur = s, u->regs = r, u->nseen = 0, u->cut = false;
	unw_cursor_t c;
	unw_save_loc_t l;
	unw_word_t v[3];
	int ret;
	if (!sym_uw_has_cfi(u, as, in[0]) || unw_init_remote(&c, as, u) < 0 ||
	    unw_is_signal_frame(&c) != 0 || (ret = unw_step(&c)) < 0 || u->cut)
		ret = -1;
	else if (ret > 0 && (unw_get_reg(&c, UNW_REG_IP, &v[0]) < 0 ||
			     unw_get_reg(&c, UNW_X86_64_RSP, &v[1]) < 0 ||
			     unw_get_reg(&c, UNW_X86_64_RBP, &v[2]) < 0 ||
			     unw_get_save_loc(&c, UNW_X86_64_RIP, &l) < 0 || l.type != UNW_SLT_MEMORY))
		ret = -1;
	if (ret > 0) {
		out[0] = v[0], out[1] = v[1], out[2] = v[2];
		*ra_loc = l.u.addr;
		*bp_loc = unw_get_save_loc(&c, UNW_X86_64_RBP, &l) == 0 &&
			  l.type == UNW_SLT_MEMORY ? l.u.addr : 0;
	}
	u->regs = s->regs;
	return ret > 0 ? 1 : ret;
}

/* Whether IP is a signal frame's (libunwind looks at its code) */
static bool signal_at(struct sym_unwinder *u, unw_addr_space_t as, const struct sym_ustack *s,
		      uint64_t ip, uint64_t sp)
{
	uint64_t r[17] = { 0 };
	r[16] = ip, r[7] = sp;
	u->cur = s, u->regs = r, u->nseen = 0, u->cut = false;
	unw_cursor_t c;
	bool sig = unw_init_remote(&c, as, u) < 0 || unw_is_signal_frame(&c) != 0;
	u->regs = s->regs;
	return sig;
}

/* The CFA R gives a frame at SP and BP */
static uint64_t rule_cfa(const struct urule *r, uint64_t sp, uint64_t bp)
{
	return (r->kind == RULE_BP ? bp : sp) + (uint64_t)(int64_t)r->cfa_off;
}

/* R applied to a frame's SP and BP in S: the caller's rip, rsp, rbp;
 * false when a word lies beyond the copy. */
static bool rule_apply(const struct urule *r, const struct sym_ustack *s, uint64_t sp,
		       uint64_t bp, uint64_t out[3])
{
	uint64_t cfa = rule_cfa(r, sp, bp);
	out[1] = cfa;
	out[2] = bp;
	return sym_uw_copy_word(s, cfa + (uint64_t)(int64_t)r->ra_off, &out[0]) &&
	       (!r->bp_saved || sym_uw_copy_word(s, cfa + (uint64_t)(int64_t)r->bp_off, &out[2]));
}

/* Logs the walk's read of the word at ADDR in S, NEED: how its frames
 * depend on it whatever comes next. Returns its index in the log. */
static uint32_t log_read(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t addr,
			 uint8_t need)
{
	uint32_t i = u->nread++;
	if (i < READ_MAX) {
		u->read_off[i] = (uint32_t)(addr - s->regs[7]);
		u->read_need[i] = need;
	}
	return i;
}

/* What the walk's step by R from frame F reads of S, logged for
 * sym_unwind_walked_by_rules: the return address as it is; a saved rbp
 * only once a CFA is taken from it, and then only its distance from rsp */
static void log_step(struct sym_unwinder *u, const struct urule *r, const struct sym_ustack *s,
		     const uint64_t f[3])
{
	uint64_t cfa = rule_cfa(r, f[1], f[2]);
	if (r->kind == RULE_BP && u->bp_src == BP_SAMPLED)
		u->need_rbp = true;
	else if (r->kind == RULE_BP && u->bp_src < READ_MAX)
		u->read_need[u->bp_src] = NEED_LESS_SP;
	log_read(u, s, cfa + (uint64_t)(int64_t)r->ra_off, NEED_WORD);
	if (r->bp_saved)
		u->bp_src = log_read(u, s, cfa + (uint64_t)(int64_t)r->bp_off, NEED_NOT);
}

/* learn_one's LAST_RET for a frame whose caller no walk has seen: the
 * first probe stands for the walk's step */
#define LEARN_ALONE (-1000)

/* learn_one's work, its probes reading the filler beyond the copy */
static struct urule learn_probed(struct sym_unwinder *u, unw_addr_space_t as,
				 const struct sym_ustack *s, const struct uframe *fr, uint32_t nfr,
				 int last_ret, uint32_t k)
{
	struct urule r = { .kind = RULE_NOT };
	uint64_t at = fr[k].ip - (k > 0);
	u->filled = false;
	if (!sym_uw_has_cfi(u, as, at))
		return (struct urule){ .kind = sym_uw_at_entry(u, at) ? RULE_END : RULE_FP };
	if (k + 1 >= nfr && last_ret != 0 && last_ret != LEARN_ALONE)
		return (struct urule){ .kind = RULE_NONE }; /* no caller seen to check against */
	if (signal_at(u, as, s, fr[k].ip, fr[k].sp))
		return r;
	uint64_t in[3] = { fr[k].ip - (k > 0), fr[k].sp, fr[k].bp }, o1[3], o2[3], o3[3];
	uint64_t ra1, ra2, ra3, bp1, bp2, bp3;
	int p1 = probe(u, as, s, in, o1, &ra1, &bp1);
	bool beyond = u->filled; /* the step itself, not a shifted probe, read beyond the copy */
	in[2] += RULE_DELTA;
	int p2 = probe(u, as, s, in, o2, &ra2, &bp2);
	/* rsp shifted too: a CFA read from the stack (a signal frame's
	 * expression, dereferencing rsp + N) does not shift with it */
	in[2] -= RULE_DELTA, in[1] += RULE_DELTA;
	int p3 = probe(u, as, s, in, o3, &ra3, &bp3);
	u->filled = beyond;
	bool alone = last_ret == LEARN_ALONE;
	if (p1 == 0 && p2 == 0 && p3 == 0 && k + 1 == nfr && (last_ret == 0 || alone))
		return (struct urule){ .kind = RULE_END };
	if (k + 1 >= nfr && !alone)
		return (struct urule){ .kind = RULE_NONE }; /* no caller seen to check against */
	const uint64_t *next = alone ? o1 : (const uint64_t[3]){ fr[k + 1].ip, fr[k + 1].sp,
								fr[k + 1].bp };
	if (p1 != 1 || p2 != 1 || p3 != 1 || o1[0] != next[0] || o1[1] != next[1] ||
	    o1[2] != next[2])
		return r;
	int64_t sshift = (int64_t)(o3[1] - o1[1]);
	int64_t shift = (int64_t)(o2[1] - o1[1]);
	if ((shift != 0 && shift != RULE_DELTA) || sshift != (shift ? 0 : RULE_DELTA) ||
	    ra3 - o3[1] != ra1 - o1[1] || (bp1 && bp3 - o3[1] != bp1 - o1[1]))
		return r;
	r.kind = shift ? RULE_BP : RULE_SP;
	r.cfa_off = (int32_t)(o1[1] - (shift ? fr[k].bp : fr[k].sp));
	r.ra_off = (int32_t)(ra1 - o1[1]);
	if (ra2 - o2[1] != ra1 - o1[1])
		return (struct urule){ .kind = RULE_NOT };
	r.bp_saved = bp1 != 0;
	if (r.bp_saved) {
		r.bp_off = (int32_t)(bp1 - o1[1]);
		if (!bp2 || bp2 - o2[1] != bp1 - o1[1])
			return (struct urule){ .kind = RULE_NOT };
	} else if (bp2 || o1[2] != fr[k].bp || o2[2] != fr[k].bp + RULE_DELTA) {
		return (struct urule){ .kind = RULE_NOT };
	}
	/* the rule must give the walk's own caller, and the probe's; the
	 * caller's rsp alone where its words lie beyond the copy (the probes
	 * read the filler there) */
	uint64_t a[3];
	if (!rule_apply(&r, s, fr[k].sp, fr[k].bp, a))
		return a[1] == o1[1] ? r : (struct urule){ .kind = RULE_NONE };
	if (a[0] != o1[0] || a[1] != o1[1] || a[2] != o1[2])
		return (struct urule){ .kind = RULE_NONE };
	return r;
}

/* The rule of frame K of a walk of S (its frames FR, NFR of them, the
 * last step's answer LAST_RET, or LEARN_ALONE), from three probes, or
 * RULE_NONE when it cannot be learnt from this sample (no caller seen to
 * check against).
 * The probes read a filler beyond the copy (fill_beyond): a frame near the
 * copy's end, whose shifted probes crossed it, was kept as no simple
 * rule's, and each later walk through it was made again without rules */
static struct urule learn_one(struct sym_unwinder *u, unw_addr_space_t as,
			      const struct sym_ustack *s, const struct uframe *fr, uint32_t nfr,
			      int last_ret, uint32_t k)
{
	u->fill_beyond = true;
	struct urule r = learn_probed(u, as, s, fr, nfr, last_ret, k);
	u->fill_beyond = false;
	return r;
}

/* Learns the rules of the last full walk's frames not known yet, up to
 * the first signal frame (after one, libunwind takes a row at the ip
 * itself, not ip - 1). */
void sym_uw_learn(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image)
{
	if (!image || u->nfr == 0)
		return;
	if (!u->probe_as && (u->probe_as = unw_create_addr_space(&sym_uw_accessors, 0)))
		unw_set_caching_policy(u->probe_as, UNW_CACHE_NONE);
	unw_addr_space_t as = u->probe_as;
	for (uint32_t k = 0; as && k < u->nfr; k++) {
		if (u->fr[k].ip == 0)
			break;
		uint64_t key = u->fr[k].ip * 2 + (k > 0);
		if (rule_get(u, s, image, key))
			continue;
		struct urule r = learn_one(u, as, s, u->fr, u->nfr, u->last_ret, k);
		if (r.kind == RULE_NONE)
			continue;
		r.pid = s->pid, r.image = image, r.key = key;
		rule_put(u, &r);
		file_rule_keep(u, &r);
		if (r.kind == RULE_NOT && k + 1 < u->nfr)
			break; /* maybe a signal frame: what follows it is not learnt */
	}
}

/* The rule of the frame at return address F[0] (rsp F[1], rbp F[2]) of S,
 * learnt from probes there alone (as learn does from a full walk's frames,
 * whose first probe stands for the walk's step) and kept; NULL when it has
 * no simple rule, *BEYOND then when its step reads beyond the copy. A rule
 * whose words lie beyond the copy is learnt all the same (fill_beyond):
 * samples cut at the copy's end often end at the same frames, which were
 * probed again at each (7,530 of 9,233 learn_frame calls, the libunwind
 * steps' lock two thirds of the 41,000 sigprocmask calls of count on the
 * pyenv shim's python, 2026-11-28). The probes use the
 * process's cached address space: libunwind keeps each ip's parsed CFI
 * row, not register values, and at -F 49 the uncached probes' parsing was
 * most of the reader's time (ftstack's CPU 390/341/207 ms against
 * 280/171/162 in 6 s runs, interleaved) */
static const struct urule *learn_frame(struct sym_unwinder *u, const struct sym_ustack *s,
				       uint64_t image, const uint64_t f[3], bool *beyond)
{
	*beyond = false;
	unw_addr_space_t as = sym_uw_proc_as_of(u, s);
	if (!as)
		return NULL;
	/* frame 1 (frame 0 unread) */
	struct uframe fr[2] = { { 0 }, { f[0], f[1], f[2] } };
	struct urule r = learn_one(u, as, s, fr, 2, LEARN_ALONE, 1);
	*beyond = u->filled;
	if (r.kind != RULE_SP && r.kind != RULE_BP && r.kind != RULE_END && r.kind != RULE_FP)
		return NULL;
	r.pid = s->pid, r.image = image, r.key = f[0] * 2 + 1;
	u->n_learnt++;
	file_rule_keep(u, &r);
	return rule_put(u, &r);
}

int sym_uw_rule_step(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image,
		     uint64_t f[3], uint32_t n, bool learn)
{
	const struct urule *r = rule_get(u, s, image, f[0] * 2 + (n > 1));
	if (!r && learn && n > 1) {
		bool cut = u->cut, beyond; /* the walk's, which the probes use for theirs */
		u->learn_tries++;
		r = learn_frame(u, s, image, f, &beyond);
		u->cut = cut;
		if (!r && beyond)
			return -1; /* its step needs a word beyond the copy */
	}
	if (!r || r->image != image ||
	    (r->kind != RULE_SP && r->kind != RULE_BP && r->kind != RULE_END))
		return SYM_UW_NO_RULE;
	if (r->kind == RULE_END)
		return 0;
	uint64_t o[3];
	log_step(u, r, s, f);
	if (!rule_apply(r, s, f[1], f[2], o))
		return -1;
	f[0] = o[0], f[1] = o[1], f[2] = o[2];
	return f[0] ? 1 : 0;
}

/* The sampled frame's one CFI step, from every register taken: a sample's
 * ip is seldom seen twice (a busy interpreter's loop has thousands), so it
 * rarely has a rule, while the return addresses above it do (code without
 * CFI, JIT code: a frame-pointer step). 1 with the
 * caller's rip, rsp, rbp in F; 0 at the stack's end; -1 when the step
 * fails, needs stack beyond the copy or is a signal frame's (a full walk
 * then says why). */
static int leaf_step(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t f[3])
{
	unw_cursor_t c;
	unw_word_t v[3];
	u->cur = s, u->regs = s->regs, u->nseen = 0, u->cut = false;
	unw_addr_space_t as = sym_uw_proc_as(u);
	if (as && !sym_uw_has_cfi(u, as, s->regs[16])) /* JIT code */
		return sym_procs_exec_at(u->procs, s->pid, s->time, f[0]) &&
		       sym_uw_fp_step(u, as, s, f) > 0 && !u->cut ? 1 : -1;
	if (!as || unw_init_remote(&c, as, u) < 0 || unw_is_signal_frame(&c) != 0)
		return -1;
	int ret = unw_step(&c);
	if (ret <= 0 || u->cut)
		return ret == 0 && !u->cut ? 0 : -1;
	if (unw_get_reg(&c, UNW_REG_IP, &v[0]) < 0 || unw_get_reg(&c, UNW_X86_64_RSP, &v[1]) < 0 ||
	    unw_get_reg(&c, UNW_X86_64_RBP, &v[2]) < 0)
		return -1;
	f[0] = v[0], f[1] = v[1], f[2] = v[2];
	return 1;
}

/* S unwound by the rules alone (the sampled frame by one CFI step when its
 * ip has no rule): the count, or 0 when an ip above it has none (or not a
 * simple one) or a word lies beyond the copy: then a full walk. */
uint32_t sym_uw_rules_walk(struct sym_unwinder *u, const struct sym_ustack *s, uint64_t image,
			   uint64_t *ips, uint32_t max, bool *cut)
{
	*cut = false;
	u->ended = false;
	u->anon_ip = 0;
	u->by_rule = NULL;
	u->cur = s, u->nseen = 0; /* the files seen are this process's (rule_get) */
	uint64_t f[3] = { s->regs[16], s->regs[7], s->regs[6] };
	uint32_t n = 0;
	sym_uw_keep_sp(u, n, f[1]);
	ips[n++] = f[0];
	while (n < max) {
		uint64_t key = f[0] * 2 + (n > 1);
		const struct urule *r = rule_get(u, s, image, key);
		if ((!r || r->kind == RULE_NOT) && n == 1) {
			int st = leaf_step(u, s, f);
			if (st < 0)
				return 0;
			if (st > 0 && f[0] && sym_uw_leaf_again(u, s, image, f))
				sym_uw_learn(u, s, image); /* its rule, from u->fr */
			if (st == 0 || f[0] == 0) {
				u->ended = true;
				break;
			}
			sym_uw_keep_sp(u, n, f[1]);
			ips[n++] = f[0];
			continue;
		}
		bool beyond;
		if ((!r || r->image != image) && !(r = learn_frame(u, s, image, f, &beyond)))
			return 0;
		if (r->kind == RULE_NOT)
			return 0;
		if (r->kind == RULE_END) {
			u->ended = true;
			break;
		}
		if (r->kind == RULE_FP) {
			u->cut = false;
			if (sym_uw_fp_step(u, sym_uw_proc_as_of(u, s), s, f) < 0) {
				*cut = u->cut; /* as the full walk, which stops there too */
				break;
			}
			sym_uw_keep_sp(u, n, f[1]);
			ips[n++] = f[0];
			continue;
		}
		if (!rule_apply(r, s, f[1], f[2], f)) {
			*cut = true; /* as libunwind's step, which needs the same word */
			break;
		}
		if (f[0] == 0) {
			u->ended = true;
			break;
		}
		sym_uw_keep_sp(u, n, f[1]);
		ips[n++] = f[0];
	}
	return n;
}
