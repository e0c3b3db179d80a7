/* libFuzzer target of symbolize/perfmap.c: the bytes as a JIT's
 * /tmp/perf-PID.map, loaded from a file and looked up at addresses taken
 * from the map's own entries and around them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
volatile size_t sink; /* the sums land here, so nothing is optimised away */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	if (!path[0])
		snprintf(path, sizeof(path), "/dev/shm/ftstack-fuzz-perfmap.%d", (int)getpid());
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	struct sym_perfmap *m;
	if (sym_perfmap_load(path, &m) == 0) {
		size_t sum = 0;
		/* addresses: every 8 bytes of the input, and hex words in it */
		for (size_t i = 0; i + 8 <= size; i += 8) {
			uint64_t a, off;
			memcpy(&a, data + i, 8);
			const char *n = sym_perfmap_lookup(m, a, &off);
			sum += n ? strlen(n) + off : 0;
		}
		for (const char *p = (const char *)data; p < (const char *)data + size; p++) {
			char word[20] = { 0 };
			size_t k = 0;
			while (k < 16 && p + k < (const char *)data + size &&
			       strchr("0123456789abcdefABCDEF", p[k]) && p[k])
				k++;
			if (k == 0)
				continue;
			memcpy(word, p, k);
			uint64_t off, a = strtoull(word, NULL, 16);
			const char *n = sym_perfmap_lookup(m, a, &off);
			sum += n ? strlen(n) : 0;
			n = sym_perfmap_lookup(m, a - 1, &off);
			sum += n ? strlen(n) : 0;
			p += k;
		}
		sink = sum;
		sym_perfmap_free(m);
	}
	unlink(path);
	return 0;
}
