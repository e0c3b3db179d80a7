/* Test workload: a process that runs native code first and maps CPython
 * later, as a program embedding it does (or pyenv's python, whose loader
 * maps libpython after the exec).
 *   late_python LIBPYTHON SPIN_MS SECONDS
 * Spins SPIN_MS in native code, then dlopens LIBPYTHON and runs hot(), a
 * Python loop, for SECONDS. A profiler that judged the process "no
 * Python" from its first samples, and kept that judgment, names no
 * Python frame of hot(). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: late_python LIBPYTHON SPIN_MS SECONDS\n");
		return 2;
	}
	volatile unsigned long spins = 0;
	for (double end = now() + atof(argv[2]) / 1000; now() < end;)
		spins++;
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	void (*init)(int) = lib ? (void (*)(int))dlsym(lib, "Py_InitializeEx") : NULL;
	int (*run)(const char *, void *) =
		lib ? (int (*)(const char *, void *))dlsym(lib, "PyRun_SimpleStringFlags") : NULL;
	if (!init || !run) {
		fprintf(stderr, "late_python: %s\n", dlerror());
		return 1;
	}
	init(0);
	char script[256];
	snprintf(script, sizeof(script),
		 "import time\n"
		 "def hot(secs):\n"
		 "    end = time.monotonic() + secs\n"
		 "    while time.monotonic() < end:\n"
		 "        sum(range(100))\n"
		 "hot(%s)\n", argv[3]);
	return run(script, NULL) == 0 ? 0 : 1;
}
