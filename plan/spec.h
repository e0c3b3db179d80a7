/* EVENT spec parsing, internal to collector/ (tests/unit/spec_test.c). */
#ifndef FTSTACK_SPEC_H
#define FTSTACK_SPEC_H

enum ft_spec_kind { FT_SPEC_TRACEPOINT = 1, FT_SPEC_KFUNC, FT_SPEC_UPROBE, FT_SPEC_USDT };

struct ft_spec {
	enum ft_spec_kind kind;
	char lib[256];      /* tracepoint: subsystem; uprobe/usdt: library or path */
	char provider[128]; /* usdt provider, may be empty */
	char name[256];     /* event, function or probe (may be a glob) */
	char text[512];     /* as the user wrote it */
};

/* Classifies S. DEFLIB is -l LIB (a bare name is then a user function).
 * Returns 0, -EINVAL for a malformed spec (`t:x`, `u:`, `p:`), or
 * -ENAMETOOLONG. */
int ft_spec_parse(const char *s, const char *deflib, struct ft_spec *sp);

#endif
