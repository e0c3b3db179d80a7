/* libFuzzer target of report/: every parser and detection on the same
 * bytes. The callback touches every string so a bad pointer shows up. */
#include "output/output.h"
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

/* Every name goes through the formats' cleaning rule too. */
static size_t clean_len(const char *name)
{
	int err = 0;
	char *c = out_clean_name(name, &err);
	size_t n = strlen(c ? c : name);
	free(c);
	return n;
}

static int touch(void *ctx, const struct report_stack *s)
{
	size_t *sum = ctx;

	*sum += strlen(s->comm) + strlen(s->event) + s->pid + s->count + s->period;
	for (uint32_t i = 0; i < s->nk; i++)
		*sum += clean_len(s->kframes[i]);
	for (uint32_t i = 0; i < s->nu; i++)
		*sum += clean_len(s->uframes[i]);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum report_format fmts[] = {
		REPORT_AUTO, REPORT_FTRACE, REPORT_PERF_SCRIPT, REPORT_HIST, REPORT_FOLDED,
	};
	/* An exact-size copy, so reading one byte too far is caught. */
	char *buf = malloc(size ? size : 1);
	size_t sum = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	(void)report_detect(buf, size);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(*fmts); i++) {
		struct report_stats st;
		(void)report_parse(buf, size, fmts[i], touch, &sum, &st);
	}
	free(buf);
	return 0;
}
