/* tracefs's per-CPU reader (tracefs/cpu.c) on a copy of the fixture tree
 * with a captured trace_pipe_raw. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <tracefs.h> /* libtracefs: instance handles, pointing it at a fixture */
#include "tracefs/tracefs.h"
#include "tests/unit/check.h"
#include "tests/unit/tracefs_tree.h"

/* trace_pipe_raw read a sub-buffer at a time through libtracefs's tracefs_cpu
 * (a plain file here: its pages, then end of file) */
static void test_cpu(void)
{
	char cmd[600];
	fresh_copy();
	mkdirs(tmp, "instances/ftstack_1/per_cpu/cpu1");
	snprintf(cmd, sizeof(cmd), "cp tests/unit/fixtures/ftrace_raw/cpu1.raw "
		 "'%s/instances/ftstack_1/per_cpu/cpu1/trace_pipe_raw'", tmp);
	if (system(cmd) != 0)
		printf("# cp failed\n");
	tracefs_set_tracing_dir(tmp);
	struct tracefs_instance *inst = tracefs_instance_alloc(tmp, "ftstack_1");
	struct tracefs_cpu *c = NULL;
	static uint8_t page[4096];
	int fd = tfs_cpu_open(inst, 1, sizeof(page), &c);
	CHECK(fd >= 0 && c, "opened: %d", fd);
	uint64_t total = 0;
	int pages = 0;
	for (ssize_t n; c && (n = tfs_cpu_read(c, page)) > 0 && pages < 100; pages++)
		total += (uint64_t)n;
	struct stat st;
	snprintf(cmd, sizeof(cmd), "%s/instances/ftstack_1/per_cpu/cpu1/trace_pipe_raw", tmp);
	CHECK(stat(cmd, &st) == 0 && total == (uint64_t)st.st_size && pages == (int)(st.st_size / 4096),
	      "read whole sub-buffers to the end: %d pages, %" PRIu64 " bytes", pages, total);
	if (c)
		tfs_cpu_close(c);
	struct tracefs_cpu *none = NULL;
	CHECK_EQ_U64(tfs_cpu_open(inst, 7, sizeof(page), &none), (uint64_t)-ENOENT, "no such CPU");
	CHECK(none == NULL, "no reader for it");
	tracefs_instance_free(inst);
}

int main(void)
{
	test_cpu();
	tree_remove();
	CHECK_DONE();
}
