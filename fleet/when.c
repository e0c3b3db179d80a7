/* report's --since and --until: absolute or relative to now. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/fleet.h"

/* "-90s", "-15m", "-2h", "-7d" before NOW. */
static int relative(const char *s, time_t now, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s + 1, &end, 10);
	long long unit = *end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 :
			 *end == 'd' ? 86400 : 0;
	if (errno || end == s + 1 || v < 0 || !unit || end[1] || v > 1000000000LL / unit)
		return -EINVAL;
	*out = (int64_t)now - v * unit;
	return 0;
}

/* "YYYY-MM-DD[( |T)HH:MM[:SS]][Z]": local time, or UTC with Z. */
static int calendar(const char *s, int64_t *out)
{
	struct tm tm = { 0 };
	int n = 0, len = (int)strlen(s);
	if (sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3 || n != 10)
		return -EINVAL;
	if (n < len && (s[n] == ' ' || s[n] == 'T')) {
		int m = 0;
		if (sscanf(s + n + 1, "%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &m) != 2 || m != 5)
			return -EINVAL;
		n += 1 + m;
		if (s[n] == ':') {
			if (sscanf(s + n + 1, "%2d%n", &tm.tm_sec, &m) != 1 || m != 2)
				return -EINVAL;
			n += 3;
		}
	}
	bool utc = s[n] == 'Z';
	if (s[n + utc] || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_year < 1970)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_isdst = -1;
	time_t t = utc ? timegm(&tm) : mktime(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = (int64_t)t;
	return 0;
}

int fleet_time_parse(const char *s, time_t now, int64_t *out)
{
	if (!s || !*s)
		return -EINVAL;
	if (strcmp(s, "now") == 0) {
		*out = (int64_t)now;
		return 0;
	}
	if (s[0] == '-')
		return relative(s, now, out);
	if (strspn(s, "0123456789") == strlen(s) && strlen(s) <= 12) {
		*out = strtoll(s, NULL, 10);
		return 0;
	}
	return calendar(s, out);
}
