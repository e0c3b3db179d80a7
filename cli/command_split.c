/* -c 'CMD ARGS': the command string split into an argv, or given to
 * /bin/sh -c when it uses shell syntax. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"

static bool needs_shell(const char *s)
{
	return strpbrk(s, "|&;<>()$`*?[]{}~#\n\\") != NULL;
}

int ft_command_split(const char *s, char ***out)
{
	size_t len = strlen(s), n = 0;
	char **argv = calloc(len / 2 + 3, sizeof(*argv));
	char *buf = malloc(len + 1), *w = buf;
	if (!argv || !buf) {
		free(argv);
		free(buf);
		return -ENOMEM;
	}
	if (needs_shell(s)) {
		argv[0] = "/bin/sh";
		argv[1] = "-c";
		argv[2] = strcpy(buf, s);
		*out = argv;
		return 0;
	}
	for (const char *p = s; *p;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		argv[n++] = w;
		while (*p && *p != ' ' && *p != '\t') {
			if (*p == '\'' || *p == '"') {
				char q = *p++;
				while (*p && *p != q)
					*w++ = *p++;
				if (*p != q)
					goto bad;
				p++;
			} else {
				*w++ = *p++;
			}
		}
		*w++ = '\0';
	}
	if (n == 0)
		goto bad;
	*out = argv;
	return 0;
bad:
	free(argv);
	free(buf);
	return -EINVAL;
}
