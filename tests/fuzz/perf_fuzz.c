/* libFuzzer target of perfev/decode.c: a ring's bytes, record after record,
 * decoded as each sample type ftstack asks for. Byte 0 picks the sample
 * type; the rest is the ring. Every pointer the decoder hands out is read in
 * full, so one that points past the record shows up under ASan. */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "perfev/perfev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
volatile uint64_t sink; /* the sums land here, so nothing is optimised away */

static uint64_t touch(const struct perfev_record *r)
{
	uint64_t sum = r->pid + r->tid + r->time + r->cpu;
	const struct perfev_sample *s = &r->sample;
	switch (r->kind) {
	case PERFEV_SAMPLE:
		for (uint32_t i = 0; i < s->nkips; i++)
			sum += s->kips[i];
		for (uint32_t i = 0; i < s->nuips; i++)
			sum += s->uips[i];
		for (uint32_t i = 0; s->raw && i < s->raw_size; i++)
			sum += ((const uint8_t *)s->raw)[i];
		for (uint64_t i = 0; s->ustack && i < s->ustack_size; i++)
			sum += s->ustack[i];
		for (int i = 0; s->uregs && i < __builtin_popcountll(perfev_user_regs_mask()); i++)
			sum += s->uregs[i];
		break;
	case PERFEV_MMAP2:
		sum += strlen(r->mmap2.filename);
		break;
	case PERFEV_COMM:
		sum += strlen(r->comm.comm);
		break;
	default:
		break;
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint64_t types[] = {
		PERFEV_SAMPLE_TYPE,
		PERFEV_SAMPLE_TYPE | PERF_SAMPLE_RAW,
		PERFEV_SAMPLE_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		PERFEV_SAMPLE_TYPE | PERF_SAMPLE_PERIOD,
	};
	if (size < 1)
		return 0;
	uint64_t type = types[data[0] % 4];
	uint64_t regs = type & PERF_SAMPLE_REGS_USER ? perfev_user_regs_mask() : 0;
	data++;
	size--;
	uint64_t sum = 0;
	for (size_t off = 0; off + 8 <= size;) {
		uint16_t len;
		memcpy(&len, data + off + 6, 2);
		if (len < 8 || off + len > size)
			len = (uint16_t)(size - off > 0xffff ? 0xffff : size - off);
		/* an exact-size, 8-byte aligned copy, as ring records are */
		uint64_t *rec = malloc(len ? len : 1);
		struct perfev_record r;
		if (!rec)
			return 0;
		memcpy(rec, data + off, len);
		if (perfev_decode(rec, len, type, regs, &r) == 0)
			sum += touch(&r);
		free(rec);
		off += len;
	}
	sink = sum;
	return 0;
}
