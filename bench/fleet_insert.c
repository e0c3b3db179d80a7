/* bench: the sink's insert of N distinct stacks into ClickHouse, timed
 * from the hand-over (fleet_send) to the sender's last byte acknowledged
 * (fleet_close), as one interval of a run would go. Prints "rows ms".
 *   fleet_insert URL N HOST    stacks of 12 kernel + 12 user frames, each
 *                              with one frame of its own */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "fleet/fleet.h"

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: fleet_insert URL N HOST\n");
		return 2;
	}
	size_t n = strtoul(argv[2], NULL, 10);
	static const char *common[23] = {
		"entry_SYSCALL_64_after_hwframe", "do_syscall_64", "__x64_sys_write", "ksys_write",
		"vfs_write", "new_sync_write", "sock_write_iter", "sock_sendmsg", "tcp_sendmsg",
		"tcp_sendmsg_locked", "tcp_push", "__libc_start_call_main", "main", "run_loop",
		"handle_request", "write_response", "flush_buffer", "send_all", "__libc_write",
		"worker_thread", "process_batch", "encode_reply", "start_thread",
	};
	struct agg_named_stack *st = calloc(n, sizeof(*st));
	const char **frames = calloc(n * 24, sizeof(*frames));
	char *names = calloc(n, 24);
	const char *events[] = { "cpu-clock" };
	if (!st || !frames || !names)
		return 1;
	for (size_t i = 0; i < n; i++) {
		const char **f = frames + i * 24;
		snprintf(names + i * 24, 24, "leaf_%zu", i);
		f[0] = names + i * 24; /* the user leaf: one per stack */
		for (int j = 1; j < 24; j++)
			f[j] = common[(j + i) % 23];
		st[i] = (struct agg_named_stack){ .comm = "bench", .frames = f, .nkframes = 12,
						  .nuframes = 12, .count = 1 + i % 7, .weight = 1 };
	}
	struct fleet *fl;
	char err[512];
	if (fleet_open(argv[1], getenv(FLEET_PASSWORD_ENV), 256u << 20, &fl, err, sizeof(err)) < 0) {
		fprintf(stderr, "fleet_insert: %s\n", err);
		return 1;
	}
	struct fleet_rows_meta m = { .ts = (uint32_t)time(NULL), .duration_ms = 10000,
				     .host = argv[3], .mode = "profile", .events = events, .nevents = 1 };
	double t0 = now_ms();
	fleet_send(fl, &m, st, n);
	struct fleet_sink_stats s;
	fleet_close(fl, &s);
	double t1 = now_ms();
	printf("%llu %.0f\n", (unsigned long long)s.rows_sent, t1 - t0);
	free(st);
	free(frames);
	free(names);
	return s.rows_sent == n ? 0 : 1;
}
