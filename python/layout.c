/* CPython's struct layouts, per version. 3.11 and 3.12 publish none in the
 * process: their offsets are built in here, taken from the versions'
 * internal headers (pycore_frame.h, pycore_pystate.h, cpython/pystate.h,
 * cpython/code.h; Debian's 3.11.2 and pyenv's 3.11.7 agree) with offsetof.
 * 3.13 publishes _Py_DebugOffsets at the start of _PyRuntime, and its
 * layout is read from there. */
#include <errno.h>
#include <string.h>
#include "python/internal.h"

static const struct py_layout py311 = {
	.minor = 11, .rt_interp_head = 40, .is_next = 0, .is_threads_head = 16,
	.ts_next = 8, .ts_native_tid = 160, .ts_root_cframe = 336,
	.cf_current = 8, .cf_previous = 16,
	.fr_code = 32, .fr_previous = 48, .fr_owner = 69, .fr_is_entry = 68, .fr_size = 72,
	.ob_type = 8, .co_filename = 112, .co_name = 120, .co_qualname = 128,
	.co_firstlineno = 72, .co_size = 136, .co_code = 184,
	.str_length = 16, .str_state = 32, .str_ascii = 48, .str_compact = 72,
};

static const struct py_layout py312 = {
	.minor = 12, .rt_interp_head = 40, .is_next = 0, .is_threads_head = 72,
	.ts_next = 8, .ts_native_tid = 144, .ts_root_cframe = 272,
	.cf_current = 0, .cf_previous = 8,
	.fr_code = 0, .fr_previous = 8, .fr_owner = 70, .fr_size = 72, .owner_cstack = 3,
	.ob_type = 8, .co_filename = 112, .co_name = 120, .co_qualname = 128,
	.co_firstlineno = 68, .co_size = 136, .co_code = 192,
	.str_length = 16, .str_state = 32, .str_ascii = 40, .str_compact = 56,
};

const struct py_layout *py_layout_of(unsigned minor)
{
	return minor == 11 ? &py311 : minor == 12 ? &py312 : NULL;
}

/* _Py_DebugOffsets as 64-bit words (3.13's pycore_runtime.h): the index of
 * each field the reader takes */
enum {
	DO_VERSION = 1, DO_RT_INTERP_HEAD = 5, DO_IS_NEXT = 8, DO_IS_THREADS_HEAD = 9,
	DO_TS_NEXT = 21, DO_TS_CURRENT_FRAME = 23, DO_TS_NATIVE_TID = 25,
	DO_FR_SIZE = 28, DO_FR_PREVIOUS = 29, DO_FR_EXECUTABLE = 30, DO_FR_OWNER = 33,
	DO_CO_SIZE = 34, DO_CO_FILENAME = 35, DO_CO_NAME = 36, DO_CO_QUALNAME = 37,
	DO_CO_FIRSTLINENO = 39, DO_CO_CODE = 43, DO_OB_TYPE = 45,
	DO_STR_STATE = 68, DO_STR_LENGTH = 69, DO_STR_ASCII_SIZE = 70,
};

/* Whether every offset taken fits the struct it is in (a word read from a
 * process is not trusted to). */
static bool sane(const uint64_t *w)
{
	static const int fields[] = { DO_RT_INTERP_HEAD, DO_IS_NEXT, DO_IS_THREADS_HEAD,
				      DO_TS_NEXT, DO_TS_CURRENT_FRAME, DO_TS_NATIVE_TID,
				      DO_FR_PREVIOUS, DO_FR_EXECUTABLE, DO_FR_OWNER,
				      DO_CO_FILENAME, DO_CO_NAME, DO_CO_QUALNAME,
				      DO_CO_FIRSTLINENO, DO_CO_CODE, DO_OB_TYPE, DO_STR_STATE,
				      DO_STR_LENGTH, DO_STR_ASCII_SIZE };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (w[fields[i]] > 65536)
			return false;
	return w[DO_FR_SIZE] >= w[DO_FR_OWNER] + 1 && w[DO_CO_SIZE] >= w[DO_CO_QUALNAME] + 8;
}

int py_layout_debug(const uint64_t *w, size_t n, struct py_layout *out)
{
	if (n >= PY_DEBUG_WORDS && memcmp(&w[0], "xdebugpy", 8) != 0)
		return -EAGAIN;
	if (n < PY_DEBUG_WORDS || (w[DO_VERSION] >> 16) != 0x030d || !sane(w))
		return -ENOTSUP;
	*out = (struct py_layout){
		.minor = 13, .rt_interp_head = (uint32_t)w[DO_RT_INTERP_HEAD],
		.is_next = (uint32_t)w[DO_IS_NEXT], .is_threads_head = (uint32_t)w[DO_IS_THREADS_HEAD],
		.ts_next = (uint32_t)w[DO_TS_NEXT], .ts_native_tid = (uint32_t)w[DO_TS_NATIVE_TID],
		.ts_current_frame = (uint32_t)w[DO_TS_CURRENT_FRAME],
		.fr_code = (uint32_t)w[DO_FR_EXECUTABLE], .fr_previous = (uint32_t)w[DO_FR_PREVIOUS],
		.fr_owner = (uint32_t)w[DO_FR_OWNER], .fr_size = (uint32_t)w[DO_FR_OWNER] + 1,
		.owner_cstack = 3, .entry_frame = true,
		.ob_type = (uint32_t)w[DO_OB_TYPE], .co_filename = (uint32_t)w[DO_CO_FILENAME],
		.co_name = (uint32_t)w[DO_CO_NAME], .co_qualname = (uint32_t)w[DO_CO_QUALNAME],
		.co_firstlineno = (uint32_t)w[DO_CO_FIRSTLINENO],
		.co_code = (uint32_t)w[DO_CO_CODE],
		.co_size = (uint32_t)w[DO_CO_QUALNAME] + 8,
		.str_length = (uint32_t)w[DO_STR_LENGTH], .str_state = (uint32_t)w[DO_STR_STATE],
		.str_ascii = (uint32_t)w[DO_STR_ASCII_SIZE],
		/* PyCompactUnicodeObject: utf8_length and utf8 after the ASCII header */
		.str_compact = (uint32_t)w[DO_STR_ASCII_SIZE] + 16,
	};
	if (out->co_size < out->co_firstlineno + 4)
		out->co_size = out->co_firstlineno + 4;
	if (out->co_size < out->co_filename + 8)
		out->co_size = out->co_filename + 8;
	if (out->co_size < out->co_name + 8)
		out->co_size = out->co_name + 8;
	if (out->fr_size < out->fr_previous + 8)
		out->fr_size = out->fr_previous + 8;
	if (out->fr_size < out->fr_code + 8)
		out->fr_size = out->fr_code + 8;
	return 0;
}
