/* output: the one naming rule every format shares. Names are bytes from
 * arbitrary binaries and comms; an svg must be well-formed XML, a
 * speedscope file valid UTF-8 JSON, pprof strings valid UTF-8, so every
 * format writes the same cleaned name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "output/out_internal.h"

/* Length of the valid UTF-8 sequence at s (1..4) with its code point in
 * *cp, or 0 when invalid; *bad is then the length of the maximal prefix of
 * a sequence (at least 1), which one U+FFFD replaces. */
static size_t utf8_seq(const unsigned char *s, uint32_t *cp, size_t *bad)
{
	unsigned char c = s[0];
	size_t need;
	unsigned char lo = 0x80, hi = 0xbf;

	*bad = 1;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		need = 1;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	uint32_t v = c & (0x3f >> need);
	for (size_t i = 1; i <= need; i++) {
		unsigned char b = s[i]; /* the NUL terminator stops it */
		if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf)) {
			*bad = i;
			return 0;
		}
		v = v << 6 | (b & 0x3f);
	}
	if (v == 0xfffe || v == 0xffff) {
		*bad = need + 1;
		return 0;
	}
	*cp = v;
	return need + 1;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

char *out_clean_name(const char *name, int *err)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t out = 0, n, bad;
	uint32_t cp;
	bool clean = true;

	for (size_t i = 0; s[i]; i += n ? n : bad) {
		n = utf8_seq(s + i, &cp, &bad);
		if (!n) {
			out += 3; /* U+FFFD */
			clean = false;
		} else if (is_control(cp)) {
			out += 4; /* \xNN */
			clean = false;
		} else {
			out += n;
		}
	}
	if (clean)
		return NULL;
	char *buf = malloc(out + 1), *o = buf;
	if (!buf) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; s[i]; i += n ? n : bad) {
		n = utf8_seq(s + i, &cp, &bad);
		if (!n) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
		} else if (is_control(cp)) {
			static const char hex[] = "0123456789abcdef";
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[cp >> 4];
			*o++ = hex[cp & 15];
		} else {
			memcpy(o, s + i, n);
			o += n;
		}
	}
	*o = '\0';
	return buf;
}
