/* Fuzz target: the JSON pull reader (collector/lib/json_read.c), which reads the rank reports other collectors
 * wrote into a shared output directory.
 *
 * Input: a document. The walk through it (read or skip each value, the buffer size for each string, leave a
 * container early, the depth limit) is chosen by a generator seeded from the input, so one input is one walk.
 *
 * Checked: the reader never looks outside the buffer (ASan: the buffer is a copy of exactly the input); its
 * offset stays within the input; an error is sticky (every later call fails) and has an offset within the
 * input; decoded strings are NUL-terminated where they fit, valid UTF-8, and never longer than the buffer; a
 * walk that ends without error has read one whole document. */
#define _GNU_SOURCE
#include "fuzz.h"

#include "../../collector/lib/json_read.h"

#define MAX_STEPS 200000

static uint64_t rng_state;

static uint32_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

/* Whether b[0..n) is UTF-8 (NUL bytes allowed: \u0000 decodes to one). */
static int utf8_ok(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = b[i];
		size_t k;
		uint32_t cp, min;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			k = 1, cp = c & 0x1f, min = 0x80;
		else if ((c & 0xf0) == 0xe0)
			k = 2, cp = c & 0x0f, min = 0x800;
		else if ((c & 0xf8) == 0xf0)
			k = 3, cp = c & 0x07, min = 0x10000;
		else
			return 0;
		if (n - i <= k)
			return 0;
		for (size_t j = 1; j <= k; j++) {
			if ((b[i + j] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (b[i + j] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += k + 1;
	}
	return 1;
}

/* A decoded string of whole length len in a buffer of cap bytes. */
static void check_decoded(const char *buf, size_t cap, size_t len)
{
	if (!cap)
		return;
	if (len < cap) {
		FUZZ_CHECK(buf[len] == 0);
		FUZZ_CHECK(utf8_ok((const unsigned char *)buf, len));
	} else {
		FUZZ_CHECK(memchr(buf, 0, cap) != NULL); /* cut, and still terminated */
	}
}

static void check_state(const struct pw_jr *r)
{
	FUZZ_CHECK(pw_jr_offset(r) <= r->len);
	FUZZ_CHECK(r->depth >= 0 && r->depth <= r->max_depth);
	if (r->err)
		FUZZ_CHECK(r->err_off <= r->len);
}

/* Reads the pending value of type t, chosen from what it is. Returns 0 or -1. */
static int read_value(struct pw_jr *r, enum pw_jr_type t)
{
	char buf[16];
	size_t len = 0, cap = rnd() % (sizeof buf + 1);
	uint64_t u;
	int64_t i;
	double d;
	int b;
	switch (t) {
	case PW_JR_STRING:
		if (pw_jr_string(r, cap ? buf : NULL, cap, &len) < 0)
			return -1;
		check_decoded(buf, cap, len);
		return 0;
	case PW_JR_NUMBER:
		switch (rnd() % 3) {
		case 0:
			return pw_jr_u64(r, &u);
		case 1:
			return pw_jr_i64(r, &i);
		default:
			return pw_jr_double(r, &d);
		}
	case PW_JR_BOOL:
		return pw_jr_bool(r, &b);
	case PW_JR_NULL:
		return pw_jr_null(r);
	default:
		return pw_jr_skip(r);
	}
}

/* Walks the document: containers entered (or skipped), values read (or skipped). */
static void walk(struct pw_jr *r)
{
	unsigned char kind[PW_JR_DEPTH_MAX + 1];
	int depth = 0;
	for (int step = 0; step < MAX_STEPS; step++) {
		/* a value is pending */
		enum pw_jr_type t = pw_jr_peek(r);
		check_state(r);
		if (t == PW_JR_ERROR || t == PW_JR_NONE)
			return;
		int rc = -1;
		if (rnd() % 8 == 0)
			rc = pw_jr_skip(r);
		else if (t == PW_JR_OBJECT && (rc = pw_jr_enter_object(r)) == 0)
			kind[depth++] = '{';
		else if (t == PW_JR_ARRAY && (rc = pw_jr_enter_array(r)) == 0)
			kind[depth++] = '[';
		else if (t != PW_JR_OBJECT && t != PW_JR_ARRAY)
			rc = read_value(r, t);
		if (rc < 0)
			return;
		FUZZ_CHECK(r->depth == depth);
		/* to the next pending value, leaving the containers that end */
		while (depth > 0) {
			if (rnd() % 32 == 0) {
				if (pw_jr_leave(r) < 0)
					return;
				depth--;
				continue;
			}
			if (kind[depth - 1] == '{') {
				char key[12];
				size_t keylen = 0, keycap = rnd() % (sizeof key + 1);
				rc = pw_jr_next_key(r, keycap ? key : NULL, keycap, &keylen);
				if (rc == 1)
					check_decoded(key, keycap, keylen);
			} else {
				rc = pw_jr_next_item(r);
			}
			if (rc < 0)
				return;
			if (rc == 1)
				break;
			depth--;
		}
		check_state(r);
		FUZZ_CHECK(r->depth == depth);
		if (depth == 0) {
			FUZZ_CHECK(pw_jr_peek(r) == PW_JR_NONE); /* the document's value is read */
			pw_jr_end(r);
			return;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_copy(data, size);
	rng_state = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < size; i++)
		rng_state = (rng_state ^ data[i]) * 0x100000001b3ull;
	rng_state |= 1;
	struct pw_jr *r = malloc(sizeof *r);
	FUZZ_CHECK(r != NULL);
	pw_jr_init(r, buf, size, 1 + (int)(rnd() % 80));
	walk(r);
	check_state(r);
	if (r->err) {
		/* sticky: whatever comes next fails, and the first error stays */
		size_t off = r->err_off;
		const char *msg = r->err;
		uint64_t u;
		FUZZ_CHECK(pw_jr_skip(r) < 0 && pw_jr_u64(r, &u) < 0 && pw_jr_next_item(r) < 0 && pw_jr_end(r) < 0);
		FUZZ_CHECK(pw_jr_peek(r) == PW_JR_ERROR);
		FUZZ_CHECK(r->err_off == off && r->err == msg);
		char why[128];
		FUZZ_CHECK(strncmp(pw_jr_error(r, why, sizeof why), "at byte ", 8) == 0);
	}
	free(r);
	free(buf);
	return 0;
}
