/* A tiny test harness: each CHECK prints one TAP-style line that tests/run
 * counts ("ok - ...", "not ok - ..." or "ok - ... # SKIP why"); main returns the failure count. */
#ifndef FTSTACK_TEST_CHECK_H
#define FTSTACK_TEST_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;

#define CHECK(cond, ...) do { \
	if (cond) { printf("ok - "); } \
	else { printf("not ok - %s:%d: ", __FILE__, __LINE__); check_failures++; } \
	printf(__VA_ARGS__); printf("\n"); \
} while (0)

/* SKIP(reason, ...): a check that cannot run here, as TAP's
 * "ok - NAME # SKIP REASON"; tests/run counts it as skipped, not passed */
#define SKIP(reason, ...) do { \
	printf("ok - "); printf(__VA_ARGS__); printf(" # SKIP %s\n", reason); \
} while (0)

#define CHECK_EQ_U64(a, b, what) do { \
	uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b); \
	CHECK(a_ == b_, "%s: %" PRIu64 " == %" PRIu64, what, a_, b_); \
} while (0)

#define CHECK_STR(a, b, what) do { \
	const char *a_ = (a), *b_ = (b); \
	CHECK(a_ && b_ && strcmp(a_, b_) == 0, "%s: \"%s\" == \"%s\"", what, \
	      a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
} while (0)

#define CHECK_DONE() return check_failures ? 1 : 0

/* Reads a fixture file of at most 1 MB into *OUT (malloc'd, freed by the
 * caller). Returns its length, 0 when it cannot be read. */
static inline size_t check_read_fixture(const char *name, uint8_t **out)
{
	FILE *f = fopen(name, "rb");
	size_t cap = 1 << 20, n = 0;
	*out = malloc(cap);
	if (f && *out)
		n = fread(*out, 1, cap, f);
	if (f)
		fclose(f);
	return n;
}

#endif
