/* sym_demangle: C++ names (the Itanium ABI, and Rust's legacy scheme that
 * borrows it) as people read them, through the C++ runtime's demangler, as
 * perf and bcc print them. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/symbolize.h"

/* libstdc++'s (and libc++abi's), C linkage. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

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
	int status = -1;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	drop_rust_hash(d);
	return d;
}
