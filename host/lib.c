/* A shared library loaded when first needed (dlopen), not at start-up.
 * libcurl and libdebuginfod bring 31 libraries with them (gnutls, krb5,
 * ldap, ssh2, ...) whose loading and relocation cost every run ~6 ms on
 * this project's VM (a main() linked with them: 8.2-9.8 ms against
 * 2.0-2.3 without, perf stat -r 20), though only --sink and debuginfod
 * fetches call them. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include "host/host.h"

int host_lib_load(const char *soname, const struct host_lib_sym *syms, size_t n, char *err,
		  size_t errlen)
{
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();
		snprintf(err, errlen, "%s", why ? why : soname);
		return -ENOENT;
	}
	for (size_t i = 0; i < n; i++) {
		if (!dlsym(lib, syms[i].name)) {
			snprintf(err, errlen, "%s: no %s", soname, syms[i].name);
			dlclose(lib);
			return -ENOENT;
		}
	}
	for (size_t i = 0; i < n; i++)
		*syms[i].fn = dlsym(lib, syms[i].name);
	return 0; /* kept loaded for the process's life */
}
