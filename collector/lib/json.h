/* A small streaming JSON writer on a FILE *.
 *
 * The writer places the commas and colons itself: callers open containers, name keys and write values in
 * document order. Strings are written as valid JSON whatever bytes they hold: quotes and backslashes are
 * escaped, control characters become \u00XX, and bytes that are not valid UTF-8 become U+FFFD (one per
 * maximal invalid subsequence, as Unicode recommends). Nothing here reports errors: check ferror() on the
 * stream when done.
 *
 * Layout: containers nested at most pretty_depth deep put each member on a line of its own, indented two
 * spaces a level; deeper containers stay on one line. pretty_depth 0 writes everything on one line. No
 * whitespace is written after ':' or ',', but after pw_json_key_spaced's ':' (for readers that search the
 * text for '"key": ', as HTA finds a trace's rank).
 */
#ifndef PW_JSON_H
#define PW_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Nesting deeper than this is a caller bug (checked by assert). */
#define PW_JSON_MAX_DEPTH 32

struct pw_json {
	FILE *f;
	int pretty_depth;
	int depth;      /* containers open */
	int after_key;  /* a key was written; its value comes next */
	uint8_t has_members[PW_JSON_MAX_DEPTH + 1]; /* per depth: whether the open container has members */
};

void pw_json_init(struct pw_json *j, FILE *f, int pretty_depth);

void pw_json_begin_object(struct pw_json *j);
void pw_json_end_object(struct pw_json *j);
void pw_json_begin_array(struct pw_json *j);
void pw_json_end_array(struct pw_json *j);

/* A member name inside an object; the next value written is its value. */
void pw_json_key(struct pw_json *j, const char *key);
void pw_json_key_spaced(struct pw_json *j, const char *key);

/* s NULL writes null. */
void pw_json_string(struct pw_json *j, const char *s);
/* len bytes of s, which may hold NUL bytes (written as \u0000); s NULL writes null. */
void pw_json_string_n(struct pw_json *j, const char *s, size_t len);
void pw_json_int(struct pw_json *j, int64_t v);
void pw_json_uint(struct pw_json *j, uint64_t v);
/* Fixed-point with the given number of decimals (0..17); NaN and infinities, which JSON lacks, as null. */
void pw_json_double(struct pw_json *j, double v, int decimals);
void pw_json_bool(struct pw_json *j, int v);
void pw_json_null(struct pw_json *j);

/* Key and value in one call, for the common object member. */
void pw_json_kv_string(struct pw_json *j, const char *key, const char *s);
void pw_json_kv_int(struct pw_json *j, const char *key, int64_t v);
void pw_json_kv_uint(struct pw_json *j, const char *key, uint64_t v);
void pw_json_kv_double(struct pw_json *j, const char *key, double v, int decimals);

/* Length of the well-formed UTF-8 sequence that starts s (n > 0 bytes, s[0] >= 0x80), or 0 with the length
 * of its maximal invalid subpart in *invalid_len (Unicode 15, table 3-7: no overlongs, no surrogates,
 * nothing above U+10FFFF). The writer replaces what is not well formed; the reader refuses it. */
size_t pw_utf8_sequence(const unsigned char *s, size_t n, size_t *invalid_len);

#endif
