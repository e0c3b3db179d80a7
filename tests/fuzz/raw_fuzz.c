/* libFuzzer target of tracefs/raw.c: trace_pipe_raw sub-buffers (4096
 * bytes each; the last may be short) decoded and paired with the ids of the
 * captured fixture (getppid 305, kernel_stack 4, user_stack 13) and one
 * function-tracer range. Each sample's stacks are read in full. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tracefs/tracefs.h"

#define SUBBUF 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
volatile uint64_t sink; /* the sums land here, so nothing is optimised away */

static void on_sample(void *ctx, const struct tfs_raw_sample *s)
{
	uint64_t *sum = ctx;
	for (uint32_t i = 0; i < s->nkips; i++)
		*sum += s->kips[i];
	for (uint32_t i = 0; i < s->nuips; i++)
		*sum += s->uips[i];
	*sum += s->tgid + (uint64_t)s->tid + s->arg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t ids[] = { 305, 0 };
	static const int args[] = { 16, -1 };
	static const struct tfs_raw_func funcs[] = { { 0xffffffff81000000ull, 0xffffffff81001000ull, 1 } };
	const struct tfs_raw_types t = { .kernel_stack = 4, .user_stack = 13, .events = ids,
		.nevents = 2, .arg_offsets = args, .function = 1, .function_ip_offset = 8,
		.funcs = funcs, .nfuncs = 1 };
	struct tfs_raw *r;
	uint64_t sum = 0;
	if (tfs_raw_alloc(&t, SUBBUF, true, size & 1, &r) < 0)
		return 0;
	for (size_t off = 0; off < size; off += SUBBUF) {
		size_t len = size - off < SUBBUF ? size - off : SUBBUF;
		uint8_t *page = malloc(len); /* exact size: reading past it is caught */
		if (!page)
			break;
		memcpy(page, data + off, len);
		tfs_raw_feed(r, page, len, on_sample, &sum);
		free(page);
	}
	tfs_raw_flush(r, on_sample, &sum);
	tfs_raw_free(r);
	sink = sum;
	return 0;
}
