/* -x patterns: plain fnmatch, so '*' also crosses "::" in C++ names. */
#include "aggregate/aggregate.h"

#include <fnmatch.h>

bool agg_glob_match(const char *pat, const char *name)
{
	if (!pat || !name)
		return false;
	return fnmatch(pat, name, 0) == 0;
}
