/* A small, strict pull reader of JSON (RFC 8259) over a memory buffer, for reading parts of the reports
 * back (merge.c reads the "summary" object of each rank<R>.json and stops there).
 *
 * The caller walks the document: pw_jr_enter_object() then pw_jr_next_key() until it returns 0, reading or
 * skipping each member's value; pw_jr_enter_array() then pw_jr_next_item() likewise. A value the caller
 * does not read is skipped by the next pw_jr_next_key()/pw_jr_next_item(). The reader may be dropped at any
 * point: nothing after what was read is looked at.
 *
 * Safety (the reader takes untrusted files): every access is checked against the buffer's end (the buffer
 * needs no NUL terminator), nesting is limited (max_depth, at most PW_JR_DEPTH_MAX), nothing recurses and
 * nothing allocates: strings are decoded into the caller's buffers and cut at a character boundary when they
 * do not fit. Input must be UTF-8 without control characters in strings; \uXXXX escapes (surrogate pairs
 * included) decode to UTF-8, \u0000 to a NUL byte. Integers are read exactly as uint64_t or int64_t.
 *
 * Errors are sticky: the first one records a message and the byte offset where it was found (the buffer's
 * length for input that ends too soon); every call after it fails. Functions return -1 on error. */
#ifndef PW_JSON_READ_H
#define PW_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#define PW_JR_DEPTH_MAX 256 /* the largest max_depth */
#define PW_JR_NUMBER_MAX 128 /* longest number text pw_jr_double() takes */

enum pw_jr_type {
	PW_JR_ERROR = -1,
	PW_JR_NONE = 0, /* no value pending (inside a container before next_key/next_item, or after the document) */
	PW_JR_OBJECT,
	PW_JR_ARRAY,
	PW_JR_STRING,
	PW_JR_NUMBER,
	PW_JR_BOOL,
	PW_JR_NULL,
};

struct pw_jr {
	const unsigned char *buf;
	size_t len;
	size_t pos;
	int depth;     /* containers open */
	int max_depth;
	int pending;   /* a value is due at pos (the document's, or a member's or item's after next_*) */
	const char *err; /* NULL until an error */
	size_t err_off;
	/* per open container: PW_JR_OBJECT or PW_JR_ARRAY, | 0x80 once a member was read */
	unsigned char stack[PW_JR_DEPTH_MAX];
};

/* Starts reading the document in buf[0..len). max_depth (clamped to 1..PW_JR_DEPTH_MAX) is the number of
 * containers that may be open at once. */
void pw_jr_init(struct pw_jr *r, const void *buf, size_t len, int max_depth);

/* The type of the pending value, without reading it: PW_JR_NONE when no value is pending, PW_JR_ERROR
 * (and the error set) when the input holds no value there. */
enum pw_jr_type pw_jr_peek(struct pw_jr *r);

/* Reads '{' (or '[') of the pending value. Returns 0 or -1 (another type, too deep). */
int pw_jr_enter_object(struct pw_jr *r);
int pw_jr_enter_array(struct pw_jr *r);

/* Inside an object: skips an unread value, then reads the next member's name and ':'. Returns 1 with the
 * name in key (decoded and NUL-terminated, cut to keycap-1 bytes; *keylen, when not NULL, gets its whole
 * decoded length, so keylen >= keycap means it was cut), 0 at the closing '}' (the object is then left), or
 * -1. key may be NULL (keycap 0) to step over the name. Calling it outside an object is an error. */
int pw_jr_next_key(struct pw_jr *r, char *key, size_t keycap, size_t *keylen);
/* Inside an array: skips an unread value, then returns 1 when another item follows (pending), 0 at the
 * closing ']' (the array is then left), or -1. */
int pw_jr_next_item(struct pw_jr *r);
/* Skips whatever is left of the innermost open container and leaves it. Returns 0 or -1. */
int pw_jr_leave(struct pw_jr *r);

/* Reads the pending value, which must be of the type named. Returns 0 or -1. */
/* A string decoded into buf as pw_jr_next_key() does (buf NULL, cap 0: only checked). */
int pw_jr_string(struct pw_jr *r, char *buf, size_t cap, size_t *len);
/* An integer without fraction or exponent, in range: "18446744073709551615", "-9223372036854775808". */
int pw_jr_u64(struct pw_jr *r, uint64_t *v);
int pw_jr_i64(struct pw_jr *r, int64_t *v);
/* Any number (at most PW_JR_NUMBER_MAX characters), rounded to the nearest double; out of range is an
 * error. */
int pw_jr_double(struct pw_jr *r, double *v);
int pw_jr_bool(struct pw_jr *r, int *v);
int pw_jr_null(struct pw_jr *r);
/* Skips the pending value, whole containers included (checked as strictly as if it were read). */
int pw_jr_skip(struct pw_jr *r);

/* After the document's value: checks that only whitespace follows. Returns 0 or -1. */
int pw_jr_end(struct pw_jr *r);

/* The byte offset the reader has reached. */
static inline size_t pw_jr_offset(const struct pw_jr *r)
{
	return r->pos;
}

/* Sets the error (when none is set yet) at offset off; returns -1. For callers that find the document
 * well-formed but not what they expect. */
int pw_jr_fail(struct pw_jr *r, size_t off, const char *msg);

/* "at byte N: what" for the error into buf; "no error" when none. Returns buf. */
const char *pw_jr_error(const struct pw_jr *r, char *buf, size_t len);

#endif
