/* host/lib.c: a library and its symbols loaded at once, or nothing set and
 * the reason said: a missing library, or one without a symbol asked for. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "host/host.h"
#include "tests/unit/check.h"

int main(void)
{
	pid_t (*get_pid)(void) = NULL;
	size_t (*str_len)(const char *) = NULL;
	char err[256] = "";
	const struct host_lib_sym libc_syms[] = {
		{ "getpid", (void **)&get_pid },
		{ "strlen", (void **)&str_len },
	};
	CHECK(host_lib_load("libc.so.6", libc_syms, 2, err, sizeof(err)) == 0 && get_pid &&
	      str_len && get_pid() == getpid() && str_len("four") == 4,
	      "libc.so.6: getpid and strlen, each the real one (%s)", err);

	get_pid = NULL;
	str_len = NULL;
	const struct host_lib_sym some_missing[] = {
		{ "getpid", (void **)&get_pid },
		{ "ftstack_no_such_function", (void **)&str_len },
	};
	CHECK(host_lib_load("libc.so.6", some_missing, 2, err, sizeof(err)) == -ENOENT &&
	      !get_pid && !str_len && strstr(err, "ftstack_no_such_function"),
	      "a symbol missing: -ENOENT, nothing set, the symbol named (%s)", err);

	CHECK(host_lib_load("libftstack-missing.so.9", libc_syms, 2, err, sizeof(err)) == -ENOENT &&
	      strstr(err, "libftstack-missing.so.9"),
	      "a library missing: -ENOENT, named (%s)", err);
	return check_failures != 0;
}
