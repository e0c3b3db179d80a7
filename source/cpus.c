/* The CPUs a run reads: the online ones, as sysfs lists them, less those
 * -C left out. Both sources open one buffer per such CPU. */
#include <unistd.h>
#include "host/host.h"
#include "source/source.h"

int ft_online_cpus(const struct ft_options *o, bool *online, int max)
{
	int top = host_online_cpus("/sys", online, max);
	if (top < 0) { /* no sysfs: the CPUs the C library counts */
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		for (int c = 0; c < n && c < max; c++)
			online[c] = true;
	}
	top = 0;
	for (int c = 0; c < max; c++) {
		if (online[c] && o->cpus_set && !o->cpus[c])
			online[c] = false;
		if (online[c])
			top = c + 1;
	}
	return top;
}
