/* sym_demangle: C++ names (the Itanium ABI, and Rust's legacy scheme that
 * borrows it) as people read them, through the C++ runtime's demangler, as
 * perf and bcc print them. */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "host/host.h"
#include "symbolize/symbolize.h"

/* libstdc++'s __cxa_demangle (C linkage), loaded at the first mangled
 * name: linked, libstdc++ and the libraries it brings (libm, libgcc_s)
 * cost each run's start 1.8 ms and 54 page faults on this project's VM (an
 * empty main() with and without -lstdc++, perf stat -r 10: 5.1 against
 * 3.3 ms), and most runs print no C++ name. */
static char *(*cxa_demangle)(const char *mangled, char *buf, size_t *len, int *status);
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;
static char cxa_err[256]; /* why it could not be loaded ("": loaded, or not tried) */

/* On failure host_lib_load sets nothing but cxa_err: names stay as they are */
static void cxa_load(void)
{
	const struct host_lib_sym syms[] = { { "__cxa_demangle", (void **)&cxa_demangle } };
	host_lib_load("libstdc++.so.6", syms, 1, cxa_err, sizeof(cxa_err));
}

const char *sym_demangle_load_error(void)
{
	return cxa_err[0] ? cxa_err : NULL;
}

/* Rust's legacy names end in "::h" and 16 hex digits, a hash of the crate
 * that perf leaves out too. */
static void drop_rust_hash(char *s)
{
	size_t n = strlen(s);
	if (n < 19 || memcmp(s + n - 19, "::h", 3) != 0)
		return;
	for (size_t i = n - 16; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return;
	s[n - 19] = '\0';
}

char *sym_demangle(const char *name)
{
	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	pthread_once(&cxa_once, cxa_load);
	if (!cxa_demangle)
		return NULL;
	int status = -1;
	char *d = cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	drop_rust_hash(d);
	/* cppcheck-suppress returnDanglingLifetime ; d is malloc'd by the demangler, status only its answer */
	return d;
}
