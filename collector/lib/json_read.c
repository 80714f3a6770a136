#define _GNU_SOURCE
#include "json_read.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define OPEN_MEMBER 0x80 /* stack flag: the container has had a member */

void pw_jr_init(struct pw_jr *r, const void *buf, size_t len, int max_depth)
{
	r->buf = buf;
	r->len = buf ? len : 0;
	r->pos = 0;
	r->depth = 0;
	r->max_depth = max_depth < 1 ? 1 : max_depth > PW_JR_DEPTH_MAX ? PW_JR_DEPTH_MAX : max_depth;
	r->pending = 1;
	r->err = NULL;
	r->err_off = 0;
}

int pw_jr_fail(struct pw_jr *r, size_t off, const char *msg)
{
	if (!r->err) {
		r->err = msg;
		r->err_off = off;
	}
	return -1;
}

const char *pw_jr_error(const struct pw_jr *r, char *buf, size_t len)
{
	if (r->err)
		snprintf(buf, len, "at byte %zu: %s", r->err_off, r->err);
	else
		snprintf(buf, len, "no error");
	return buf;
}

static void skip_ws(struct pw_jr *r)
{
	while (r->pos < r->len) {
		unsigned char c = r->buf[r->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		r->pos++;
	}
}

/* The next byte after whitespace, or -1 (error set) at the end of the input. */
static int next_byte(struct pw_jr *r)
{
	skip_ws(r);
	if (r->pos >= r->len)
		return pw_jr_fail(r, r->len, "unexpected end of input");
	return r->buf[r->pos];
}

/* Checks that a value is due, and returns its first byte, or -1. */
static int value_start(struct pw_jr *r)
{
	if (r->err)
		return -1;
	if (!r->pending)
		return pw_jr_fail(r, r->pos, "no value is due here (reader misuse)");
	return next_byte(r);
}

/* The pending value has been read. */
static void value_done(struct pw_jr *r)
{
	r->pending = 0;
}

static enum pw_jr_type type_of(int c)
{
	switch (c) {
	case '{':
		return PW_JR_OBJECT;
	case '[':
		return PW_JR_ARRAY;
	case '"':
		return PW_JR_STRING;
	case 't':
	case 'f':
		return PW_JR_BOOL;
	case 'n':
		return PW_JR_NULL;
	default:
		return c == '-' || (c >= '0' && c <= '9') ? PW_JR_NUMBER : PW_JR_NONE;
	}
}

enum pw_jr_type pw_jr_peek(struct pw_jr *r)
{
	if (r->err)
		return PW_JR_ERROR;
	if (!r->pending)
		return PW_JR_NONE;
	int c = next_byte(r);
	if (c < 0)
		return PW_JR_ERROR;
	enum pw_jr_type t = type_of(c);
	if (t == PW_JR_NONE) {
		pw_jr_fail(r, r->pos, "expected a value");
		return PW_JR_ERROR;
	}
	return t;
}

static int enter(struct pw_jr *r, enum pw_jr_type type)
{
	int c = value_start(r);
	if (c < 0)
		return -1;
	if (type_of(c) != type)
		return pw_jr_fail(r, r->pos, type == PW_JR_OBJECT ? "expected an object" : "expected an array");
	if (r->depth >= r->max_depth)
		return pw_jr_fail(r, r->pos, "nested too deeply");
	r->stack[r->depth++] = (unsigned char)type;
	r->pos++;
	r->pending = 0;
	return 0;
}

int pw_jr_enter_object(struct pw_jr *r)
{
	return enter(r, PW_JR_OBJECT);
}

int pw_jr_enter_array(struct pw_jr *r)
{
	return enter(r, PW_JR_ARRAY);
}

/* Appends the n bytes of one character to out (when it fits whole, with room for the NUL; once one does
 * not fit, nothing more is stored, so the text is cut at a character boundary) and counts them in *total. */
static void put_char(char *out, size_t cap, size_t *used, int *full, size_t *total, const unsigned char *c, size_t n)
{
	if (out && !*full) {
		if (*used + n < cap) {
			memcpy(out + *used, c, n);
			*used += n;
		} else {
			*full = 1;
		}
	}
	*total += n;
}

/* Four hex digits at buf[pos..pos+4) into *v; -1 (error set) when they are not there. */
static int hex4(struct pw_jr *r, size_t pos, unsigned *v)
{
	unsigned x = 0;
	for (size_t i = 0; i < 4; i++) {
		if (pos + i >= r->len)
			return pw_jr_fail(r, r->len, "unexpected end of input");
		unsigned char c = r->buf[pos + i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return pw_jr_fail(r, pos + i, "expected 4 hex digits after \\u");
		x = x * 16 + d;
	}
	*v = x;
	return 0;
}

/* Reads the string at pos (its opening quote), decoding it into out as pw_jr_string() says. */
static int read_string(struct pw_jr *r, char *out, size_t cap, size_t *outlen)
{
	size_t used = 0, total = 0;
	int full = 0;
	if (cap == 0)
		out = NULL;
	r->pos++; /* the opening quote */
	for (;;) {
		if (r->pos >= r->len)
			return pw_jr_fail(r, r->len, "unexpected end of input in a string");
		unsigned char c = r->buf[r->pos];
		if (c == '"') {
			r->pos++;
			break;
		}
		if (c < 0x20)
			return pw_jr_fail(r, r->pos, "control character in a string");
		if (c < 0x80 && c != '\\') {
			put_char(out, cap, &used, &full, &total, &c, 1);
			r->pos++;
			continue;
		}
		if (c >= 0x80) {
			size_t invalid;
			size_t n = pw_utf8_sequence(r->buf + r->pos, r->len - r->pos, &invalid);
			if (!n)
				return pw_jr_fail(r, r->pos, "invalid UTF-8 in a string");
			put_char(out, cap, &used, &full, &total, r->buf + r->pos, n);
			r->pos += n;
			continue;
		}
		/* an escape */
		size_t start = r->pos;
		if (r->pos + 1 >= r->len)
			return pw_jr_fail(r, r->len, "unexpected end of input in a string");
		unsigned char e = r->buf[r->pos + 1], ch;
		switch (e) {
		case '"':
		case '\\':
		case '/':
			ch = e;
			break;
		case 'b':
			ch = '\b';
			break;
		case 'f':
			ch = '\f';
			break;
		case 'n':
			ch = '\n';
			break;
		case 'r':
			ch = '\r';
			break;
		case 't':
			ch = '\t';
			break;
		case 'u': {
			unsigned u, lo;
			if (hex4(r, r->pos + 2, &u))
				return -1;
			r->pos += 6;
			uint32_t cp = u;
			if (u >= 0xdc00 && u <= 0xdfff)
				return pw_jr_fail(r, start, "unpaired low surrogate in \\u escape");
			if (u >= 0xd800 && u <= 0xdbff) {
				if (r->pos + 1 >= r->len)
					return pw_jr_fail(r, r->len, "unexpected end of input in a string");
				if (r->buf[r->pos] != '\\' || r->buf[r->pos + 1] != 'u')
					return pw_jr_fail(r, start, "unpaired high surrogate in \\u escape");
				if (hex4(r, r->pos + 2, &lo))
					return -1;
				if (lo < 0xdc00 || lo > 0xdfff)
					return pw_jr_fail(r, start, "unpaired high surrogate in \\u escape");
				r->pos += 6;
				cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			}
			unsigned char b[4];
			size_t n;
			if (cp < 0x80) {
				b[0] = (unsigned char)cp;
				n = 1;
			} else if (cp < 0x800) {
				b[0] = (unsigned char)(0xc0 | cp >> 6);
				b[1] = (unsigned char)(0x80 | (cp & 0x3f));
				n = 2;
			} else if (cp < 0x10000) {
				b[0] = (unsigned char)(0xe0 | cp >> 12);
				b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
				b[2] = (unsigned char)(0x80 | (cp & 0x3f));
				n = 3;
			} else {
				b[0] = (unsigned char)(0xf0 | cp >> 18);
				b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
				b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
				b[3] = (unsigned char)(0x80 | (cp & 0x3f));
				n = 4;
			}
			put_char(out, cap, &used, &full, &total, b, n);
			continue;
		}
		default:
			return pw_jr_fail(r, start, "invalid escape in a string");
		}
		put_char(out, cap, &used, &full, &total, &ch, 1);
		r->pos += 2;
	}
	if (out)
		out[used] = 0;
	if (outlen)
		*outlen = total;
	return 0;
}

/* Leaves the innermost container at its closing byte. */
static void pop(struct pw_jr *r)
{
	r->pos++;
	r->depth--;
	r->pending = 0;
}

/* pw_jr_next_key() without skipping an unread value (the caller made sure there is none). */
static int next_key_raw(struct pw_jr *r, char *key, size_t keycap, size_t *keylen)
{
	if (r->err)
		return -1;
	if (r->depth == 0 || (r->stack[r->depth - 1] & 0x7f) != PW_JR_OBJECT)
		return pw_jr_fail(r, r->pos, "not inside an object (reader misuse)");
	unsigned char *top = &r->stack[r->depth - 1];
	int c = next_byte(r);
	if (c < 0)
		return -1;
	if (c == '}') {
		pop(r);
		return 0;
	}
	if (*top & OPEN_MEMBER) {
		if (c != ',')
			return pw_jr_fail(r, r->pos, "expected ',' or '}' in an object");
		r->pos++;
		if ((c = next_byte(r)) < 0)
			return -1;
		if (c != '"')
			return pw_jr_fail(r, r->pos, "expected a member name");
	} else if (c != '"') {
		return pw_jr_fail(r, r->pos, "expected a member name or '}'");
	}
	if (read_string(r, key, keycap, keylen))
		return -1;
	if ((c = next_byte(r)) < 0)
		return -1;
	if (c != ':')
		return pw_jr_fail(r, r->pos, "expected ':' after a member name");
	r->pos++;
	*top |= OPEN_MEMBER;
	r->pending = 1;
	return 1;
}

static int next_item_raw(struct pw_jr *r)
{
	if (r->err)
		return -1;
	if (r->depth == 0 || (r->stack[r->depth - 1] & 0x7f) != PW_JR_ARRAY)
		return pw_jr_fail(r, r->pos, "not inside an array (reader misuse)");
	unsigned char *top = &r->stack[r->depth - 1];
	int c = next_byte(r);
	if (c < 0)
		return -1;
	if (c == ']') {
		pop(r);
		return 0;
	}
	if (*top & OPEN_MEMBER) {
		if (c != ',')
			return pw_jr_fail(r, r->pos, "expected ',' or ']' in an array");
		r->pos++;
	}
	*top |= OPEN_MEMBER;
	r->pending = 1;
	return 1;
}

/* Scans the number at pos. Returns its length, or 0 (error set); *integer says whether it has neither
 * fraction nor exponent. */
static size_t scan_number(struct pw_jr *r, int *integer)
{
	const unsigned char *b = r->buf;
	size_t i = r->pos, n = r->len;
	*integer = 1;
	if (i < n && b[i] == '-')
		i++;
	if (i >= n)
		return pw_jr_fail(r, n, "unexpected end of input in a number"), 0;
	if (b[i] == '0') {
		i++;
	} else if (b[i] >= '1' && b[i] <= '9') {
		while (i < n && b[i] >= '0' && b[i] <= '9')
			i++;
	} else {
		return pw_jr_fail(r, i, "expected a digit"), 0;
	}
	if (i < n && b[i] == '.') {
		*integer = 0;
		i++;
		if (i >= n || b[i] < '0' || b[i] > '9')
			return pw_jr_fail(r, i < n ? i : n, "expected a digit after '.'"), 0;
		while (i < n && b[i] >= '0' && b[i] <= '9')
			i++;
	}
	if (i < n && (b[i] == 'e' || b[i] == 'E')) {
		*integer = 0;
		i++;
		if (i < n && (b[i] == '+' || b[i] == '-'))
			i++;
		if (i >= n || b[i] < '0' || b[i] > '9')
			return pw_jr_fail(r, i < n ? i : n, "expected a digit in the exponent"), 0;
		while (i < n && b[i] >= '0' && b[i] <= '9')
			i++;
	}
	return i - r->pos;
}

/* Reads the pending number as an integer: its magnitude (at most limit) into *mag, its sign into *neg. */
static int read_integer(struct pw_jr *r, uint64_t limit_pos, uint64_t limit_neg, uint64_t *mag, int *neg)
{
	int c = value_start(r);
	if (c < 0)
		return -1;
	if (type_of(c) != PW_JR_NUMBER)
		return pw_jr_fail(r, r->pos, "expected an integer");
	int integer;
	size_t start = r->pos, n = scan_number(r, &integer);
	if (!n)
		return -1;
	if (!integer)
		return pw_jr_fail(r, start, "expected an integer, found a fraction or an exponent");
	size_t i = start;
	*neg = r->buf[i] == '-';
	if (*neg)
		i++;
	uint64_t limit = *neg ? limit_neg : limit_pos, v = 0;
	for (; i < start + n; i++) {
		unsigned d = (unsigned)(r->buf[i] - '0');
		if (d > limit || v > (limit - d) / 10)
			return pw_jr_fail(r, start, "integer out of range");
		v = v * 10 + d;
	}
	*mag = v;
	r->pos = start + n;
	value_done(r);
	return 0;
}

int pw_jr_u64(struct pw_jr *r, uint64_t *v)
{
	uint64_t mag;
	int neg;
	if (read_integer(r, UINT64_MAX, 0, &mag, &neg))
		return -1;
	*v = mag; /* a negative number got here only as -0 */
	return 0;
}

int pw_jr_i64(struct pw_jr *r, int64_t *v)
{
	uint64_t mag;
	int neg;
	if (read_integer(r, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1, &mag, &neg))
		return -1;
	*v = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
	return 0;
}

int pw_jr_double(struct pw_jr *r, double *v)
{
	int c = value_start(r);
	if (c < 0)
		return -1;
	if (type_of(c) != PW_JR_NUMBER)
		return pw_jr_fail(r, r->pos, "expected a number");
	int integer;
	size_t start = r->pos, n = scan_number(r, &integer);
	if (!n)
		return -1;
	if (n >= PW_JR_NUMBER_MAX)
		return pw_jr_fail(r, start, "number too long");
	/* strtod follows the locale's decimal point, which a program may have changed */
	char text[PW_JR_NUMBER_MAX + 8];
	const char *point = localeconv()->decimal_point;
	size_t plen = point && *point ? strlen(point) : 1, used = 0;
	if (plen > 4)
		plen = 4;
	for (size_t i = 0; i < n; i++) {
		if (r->buf[start + i] == '.' && point && *point) {
			memcpy(text + used, point, plen);
			used += plen;
		} else {
			text[used++] = (char)r->buf[start + i];
		}
	}
	text[used] = 0;
	errno = 0;
	double d = strtod(text, NULL);
	if (errno == ERANGE && isinf(d))
		return pw_jr_fail(r, start, "number out of range");
	*v = d;
	r->pos = start + n;
	value_done(r);
	return 0;
}

int pw_jr_string(struct pw_jr *r, char *buf, size_t cap, size_t *len)
{
	int c = value_start(r);
	if (c < 0)
		return -1;
	if (c != '"')
		return pw_jr_fail(r, r->pos, "expected a string");
	if (read_string(r, buf, cap, len))
		return -1;
	value_done(r);
	return 0;
}

/* Reads the literal word at pos. */
static int literal(struct pw_jr *r, const char *word)
{
	size_t n = strlen(word);
	for (size_t i = 0; i < n; i++) {
		if (r->pos + i >= r->len)
			return pw_jr_fail(r, r->len, "unexpected end of input");
		if (r->buf[r->pos + i] != (unsigned char)word[i])
			return pw_jr_fail(r, r->pos, "invalid literal");
	}
	r->pos += n;
	return 0;
}

int pw_jr_bool(struct pw_jr *r, int *v)
{
	int c = value_start(r);
	if (c < 0)
		return -1;
	if (c != 't' && c != 'f')
		return pw_jr_fail(r, r->pos, "expected true or false");
	if (literal(r, c == 't' ? "true" : "false"))
		return -1;
	*v = c == 't';
	value_done(r);
	return 0;
}

int pw_jr_null(struct pw_jr *r)
{
	int c = value_start(r);
	if (c < 0)
		return -1;
	if (c != 'n')
		return pw_jr_fail(r, r->pos, "expected null");
	if (literal(r, "null"))
		return -1;
	value_done(r);
	return 0;
}

/* Steps from inside containers opened since depth base to the next pending value: returns 1 when one is
 * due, 0 when depth is back at base (nothing left to skip), -1 on error. */
static int next_pending(struct pw_jr *r, int base)
{
	while (r->depth > base) {
		int rc = (r->stack[r->depth - 1] & 0x7f) == PW_JR_OBJECT ? next_key_raw(r, NULL, 0, NULL)
									 : next_item_raw(r);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Skips values, descending into containers, until depth is back at base. Iterative: the depth is bounded by
 * the stack, not by the C stack. */
static int skip_to(struct pw_jr *r, int base)
{
	for (;;) {
		if (r->pending) {
			int c = value_start(r);
			if (c < 0)
				return -1;
			int integer;
			switch (type_of(c)) {
			case PW_JR_OBJECT:
			case PW_JR_ARRAY:
				if (enter(r, type_of(c)))
					return -1;
				break;
			case PW_JR_STRING:
				if (read_string(r, NULL, 0, NULL))
					return -1;
				value_done(r);
				break;
			case PW_JR_NUMBER: {
				size_t n = scan_number(r, &integer);
				if (!n)
					return -1;
				r->pos += n;
				value_done(r);
				break;
			}
			case PW_JR_BOOL:
				if (literal(r, c == 't' ? "true" : "false"))
					return -1;
				value_done(r);
				break;
			case PW_JR_NULL:
				if (literal(r, "null"))
					return -1;
				value_done(r);
				break;
			default:
				return pw_jr_fail(r, r->pos, "expected a value");
			}
		}
		int rc = next_pending(r, base);
		if (rc <= 0)
			return rc;
	}
}

int pw_jr_skip(struct pw_jr *r)
{
	if (r->err)
		return -1;
	if (!r->pending)
		return pw_jr_fail(r, r->pos, "no value is due here (reader misuse)");
	return skip_to(r, r->depth);
}

int pw_jr_leave(struct pw_jr *r)
{
	if (r->err)
		return -1;
	if (r->depth == 0)
		return pw_jr_fail(r, r->pos, "not inside a container (reader misuse)");
	return skip_to(r, r->depth - 1);
}

int pw_jr_next_key(struct pw_jr *r, char *key, size_t keycap, size_t *keylen)
{
	if (r->pending && r->depth > 0 && pw_jr_skip(r))
		return -1;
	return next_key_raw(r, key, keycap, keylen);
}

int pw_jr_next_item(struct pw_jr *r)
{
	if (r->pending && r->depth > 0 && pw_jr_skip(r))
		return -1;
	return next_item_raw(r);
}

int pw_jr_end(struct pw_jr *r)
{
	if (r->err)
		return -1;
	if (r->depth || r->pending)
		return pw_jr_fail(r, r->pos, "the document is not finished");
	skip_ws(r);
	if (r->pos != r->len)
		return pw_jr_fail(r, r->pos, "unexpected data after the document");
	return 0;
}
