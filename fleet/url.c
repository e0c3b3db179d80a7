/* clickhouse:// URLs: [USER[:PASSWORD]@]HOST[:PORT]/DB[.TABLE][?filters]. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/fleet.h"

bool fleet_is_url(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-");
	return n > 0 && strncmp(s + n, "://", 3) == 0;
}

static int fail(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return -EINVAL;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Copies S[0..n) into OUT, percent-decoded ('+' stays '+'). Returns 0, or
 * -EINVAL for a bad escape, a NUL byte or no room. */
static int decode(const char *s, size_t n, char *out, size_t len)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '%') {
			int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
			int lo = i + 2 < n ? hexval(s[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return -EINVAL;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0 || k + 1 >= len)
			return -EINVAL;
		out[k++] = (char)c;
	}
	out[k] = '\0';
	return 0;
}

/* One "name=value" of the query string. */
static int query_param(const char *p, size_t n, struct fleet_url *u, char *err, size_t errlen)
{
	static const struct { const char *name; size_t off, size; } keys[] = {
		{ "since", offsetof(struct fleet_url, since), sizeof(((struct fleet_url *)0)->since) },
		{ "until", offsetof(struct fleet_url, until), sizeof(((struct fleet_url *)0)->until) },
		{ "host", offsetof(struct fleet_url, host_pattern), sizeof(((struct fleet_url *)0)->host_pattern) },
		{ "event", offsetof(struct fleet_url, event), sizeof(((struct fleet_url *)0)->event) },
		{ "mode", offsetof(struct fleet_url, mode), sizeof(((struct fleet_url *)0)->mode) },
	};
	const char *eq = memchr(p, '=', n);
	if (!eq)
		return fail(err, errlen, "a query parameter needs name=value (since, until, host, event, mode)");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strlen(keys[i].name) != (size_t)(eq - p) || strncmp(p, keys[i].name, (size_t)(eq - p)) != 0)
			continue;
		if (decode(eq + 1, n - (size_t)(eq - p) - 1, (char *)u + keys[i].off, keys[i].size) < 0)
			return fail(err, errlen, "a query parameter's value is malformed or too long");
		return 0;
	}
	snprintf(err, errlen, "unknown query parameter '%.*s' (since, until, host, event, mode)",
		 (int)(eq - p), p);
	return -EINVAL;
}

static int parse_query(const char *q, struct fleet_url *u, char *err, size_t errlen)
{
	while (*q) {
		size_t n = strcspn(q, "&");
		int ret = n ? query_param(q, n, u, err, errlen) : 0;
		if (ret < 0)
			return ret;
		q += n + (q[n] == '&');
	}
	return 0;
}

static int parse_userinfo(const char *s, size_t n, struct fleet_url *u, char *err, size_t errlen)
{
	const char *colon = memchr(s, ':', n);
	size_t un = colon ? (size_t)(colon - s) : n;
	if (decode(s, un, u->user, sizeof(u->user)) < 0 || !u->user[0])
		return fail(err, errlen, "the user name before '@' is empty, malformed or too long");
	if (colon && decode(colon + 1, n - un - 1, u->password, sizeof(u->password)) < 0)
		return fail(err, errlen, "the password is malformed or too long");
	return 0;
}

static int parse_hostport(const char *s, size_t n, struct fleet_url *u, char *err, size_t errlen)
{
	const char *colon = NULL;
	if (n && s[0] == '[') { /* [IPv6] */
		const char *close = memchr(s, ']', n);
		if (!close)
			return fail(err, errlen, "an IPv6 address needs its closing ']'");
		if ((size_t)(close - s) + 1 < n) {
			if (close[1] != ':')
				return fail(err, errlen, "junk after the IPv6 address");
			colon = close + 1;
		}
	} else {
		colon = memchr(s, ':', n);
	}
	size_t hn = colon ? (size_t)(colon - s) : n;
	if (hn == 0)
		return fail(err, errlen, "no host name");
	if (hn >= sizeof(u->host))
		return fail(err, errlen, "the host name is too long");
	memcpy(u->host, s, hn);
	u->host[hn] = '\0';
	if (strcspn(u->host, " \t\n\"'\\%?#/@") != hn)
		return fail(err, errlen, "the host name holds characters no host name has");
	if (!colon)
		return 0;
	char port[8];
	size_t pn = n - hn - 1;
	if (pn == 0 || pn >= sizeof(port) || strspn(colon + 1, "0123456789") < pn)
		return fail(err, errlen, "the port must be a number in 1..65535");
	memcpy(port, colon + 1, pn);
	port[pn] = '\0';
	long p = strtol(port, NULL, 10);
	if (p < 1 || p > 65535)
		return fail(err, errlen, "the port must be a number in 1..65535");
	u->port = (unsigned)p;
	return 0;
}

static bool good_name(const char *s)
{
	return *s && strcspn(s, "`\\\n\t\r\"' ") == strlen(s);
}

static int parse_path(const char *s, size_t n, struct fleet_url *u, char *err, size_t errlen)
{
	char path[260];
	if (decode(s, n, path, sizeof(path)) < 0)
		return fail(err, errlen, "the database/table part is malformed or too long");
	char *dot = strchr(path, '.');
	if (dot)
		*dot = '\0';
	if (strlen(path) >= sizeof(u->db) || (dot && strlen(dot + 1) >= sizeof(u->table)))
		return fail(err, errlen, "the database or table name is too long");
	strcpy(u->db, path);
	u->has_table = dot != NULL;
	strcpy(u->table, dot ? dot + 1 : FLEET_DEFAULT_TABLE);
	if (!good_name(u->db))
		return fail(err, errlen, "no database: the URL ends in /DB or /DB.TABLE");
	if (!good_name(u->table) || strchr(u->table, '.'))
		return fail(err, errlen, "the table name is empty or holds '.', quotes or blanks");
	return 0;
}

int fleet_url_parse(const char *s, const char *env_password, struct fleet_url *u,
		    char *err, size_t errlen)
{
	memset(u, 0, sizeof(*u));
	const char *rest;
	if (strncmp(s, "clickhouse://", 13) == 0) {
		rest = s + 13;
	} else if (strncmp(s, "clickhouses://", 14) == 0) {
		rest = s + 14;
		u->https = true;
	} else if (fleet_is_url(s)) {
		snprintf(err, errlen, "unknown scheme '%.*s://' (clickhouse:// or clickhouses:// for "
			 "https)", (int)(strstr(s, "://") - s), s);
		return -EINVAL;
	} else {
		return fail(err, errlen, "not a URL: clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DB[.TABLE]");
	}
	u->port = u->https ? 8443 : FLEET_DEFAULT_PORT;
	const char *slash = strchr(rest, '/');
	if (!slash)
		return fail(err, errlen, "no database: the URL ends in /DB or /DB.TABLE");
	const char *at = memrchr(rest, '@', (size_t)(slash - rest));
	int ret = 0;
	if (at)
		ret = parse_userinfo(rest, (size_t)(at - rest), u, err, errlen);
	const char *hp = at ? at + 1 : rest;
	if (ret == 0)
		ret = parse_hostport(hp, (size_t)(slash - hp), u, err, errlen);
	const char *q = strchr(slash, '?');
	if (ret == 0)
		ret = parse_path(slash + 1, q ? (size_t)(q - slash - 1) : strlen(slash + 1), u, err, errlen);
	if (ret == 0 && q)
		ret = parse_query(q + 1, u, err, errlen);
	if (ret < 0)
		return ret;
	if (!u->user[0])
		strcpy(u->user, "default");
	if (!u->password[0] && env_password) {
		if (strlen(env_password) >= sizeof(u->password))
			return fail(err, errlen, FLEET_PASSWORD_ENV " is too long");
		strcpy(u->password, env_password);
	}
	return 0;
}

char *fleet_url_show(const struct fleet_url *u, char *buf, size_t len)
{
	snprintf(buf, len, "%s://%s@%s:%u/%s.%s", u->https ? "clickhouses" : "clickhouse",
		 u->user, u->host, u->port, u->db, u->table);
	return buf;
}
