/* perfev: the kernel's first per-task event, opened early. The first
 * event bound to a task after a second without one turns on the
 * scheduler's perf hooks (account_event: a static key, then an RCU grace
 * period, 9-15 ms here); a later open that comes while it waits, waits
 * for it. A thread that opens one (and closes it) as soon as a run knows
 * it will trace tasks lets that wait run beside the run's own set-up. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "perfev/perfev.h"

static void *warm(void *arg)
{
	pid_t pid = (pid_t)(intptr_t)arg;
	struct perfev_opts po = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
				  .sample_period = 1, .disabled = true, .exclude_kernel = true };
	int fd = perfev_open(&po, pid, -1, -1);
	if (fd >= 0)
		close(fd);
	return NULL;
}

int perfev_warm_task_events(void)
{
	pthread_t t;
	pthread_attr_t a;
	if (pthread_attr_init(&a) != 0)
		return -ENOMEM;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	int ret = pthread_create(&t, &a, warm, (void *)(intptr_t)getpid());
	pthread_attr_destroy(&a);
	return -ret;
}
