#define _GNU_SOURCE
/* Unit tests for collector/json_read: values, escapes, 64-bit integers, strict grammar, skipping, the depth
 * limit, and input cut at every offset of a sample document (an error with an offset, never a read past the
 * end: every document is copied into a buffer of exactly its length, so ASan (make SAN=1) sees any). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../collector/lib/json_read.h"

/* A reader over a heap copy of len bytes of text, without a terminator. */
struct doc {
	char *buf;
	struct pw_jr r;
};

static void open_doc_n(struct doc *d, const char *text, size_t len, int depth)
{
	d->buf = malloc(len ? len : 1);
	assert_non_null(d->buf);
	memcpy(d->buf, text, len);
	pw_jr_init(&d->r, d->buf, len, depth);
}

static void open_doc(struct doc *d, const char *text)
{
	open_doc_n(d, text, strlen(text), 32);
}

static void close_doc(struct doc *d)
{
	free(d->buf);
}

/* Expects the reader's error at offset off with a message containing what. */
static void expect_error(const struct pw_jr *r, size_t off, const char *what)
{
	char msg[256];
	assert_non_null(r->err);
	if (r->err_off != off || !strstr(r->err, what))
		fail_msg("expected an error at %zu containing '%s', got %s", off, what,
			 pw_jr_error(r, msg, sizeof msg));
}

static void test_values(void **state)
{
	struct doc d;
	open_doc(&d, " {\"a\": 1, \"b\" : -2 ,\"c\":\"x\",\"d\":true,\"e\":false,\"f\":null,\"g\":[1.5, -0.25e2, 3E+1],"
		     "\"h\":{}, \"i\":[]}\n\t\r ");
	struct pw_jr *r = &d.r;
	char key[16];
	uint64_t u;
	int64_t i;
	double x;
	int b;
	assert_int_equal(pw_jr_peek(r), PW_JR_OBJECT);
	assert_int_equal(pw_jr_enter_object(r), 0);
	assert_int_equal(pw_jr_peek(r), PW_JR_NONE);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_string_equal(key, "a");
	assert_int_equal(pw_jr_peek(r), PW_JR_NUMBER);
	assert_int_equal(pw_jr_u64(r, &u), 0);
	assert_int_equal(u, 1);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_string_equal(key, "b");
	assert_int_equal(pw_jr_i64(r, &i), 0);
	assert_int_equal(i, -2);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_int_equal(pw_jr_peek(r), PW_JR_STRING);
	assert_int_equal(pw_jr_string(r, key, sizeof key, NULL), 0);
	assert_string_equal(key, "x");
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_int_equal(pw_jr_peek(r), PW_JR_BOOL);
	assert_int_equal(pw_jr_bool(r, &b), 0);
	assert_int_equal(b, 1);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_int_equal(pw_jr_bool(r, &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_int_equal(pw_jr_peek(r), PW_JR_NULL);
	assert_int_equal(pw_jr_null(r), 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_string_equal(key, "g");
	assert_int_equal(pw_jr_peek(r), PW_JR_ARRAY);
	assert_int_equal(pw_jr_enter_array(r), 0);
	double want[] = {1.5, -25.0, 30.0};
	for (int k = 0; k < 3; k++) {
		assert_int_equal(pw_jr_next_item(r), 1);
		assert_int_equal(pw_jr_double(r, &x), 0);
		assert_true(x == want[k]);
	}
	assert_int_equal(pw_jr_next_item(r), 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_string_equal(key, "h");
	assert_int_equal(pw_jr_enter_object(r), 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_string_equal(key, "i");
	assert_int_equal(pw_jr_enter_array(r), 0);
	assert_int_equal(pw_jr_next_item(r), 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 0);
	assert_int_equal(r->depth, 0);
	assert_int_equal(pw_jr_peek(r), PW_JR_NONE);
	assert_int_equal(pw_jr_end(r), 0);
	assert_null(r->err);
	close_doc(&d);
}

static void test_top_level_scalars(void **state)
{
	struct doc d;
	uint64_t u;
	char s[8];
	open_doc(&d, "42");
	assert_int_equal(pw_jr_u64(&d.r, &u), 0);
	assert_int_equal(u, 42);
	assert_int_equal(pw_jr_end(&d.r), 0);
	close_doc(&d);
	open_doc(&d, "\"ab\"  ");
	assert_int_equal(pw_jr_string(&d.r, s, sizeof s, NULL), 0);
	assert_string_equal(s, "ab");
	assert_int_equal(pw_jr_end(&d.r), 0);
	close_doc(&d);
	/* a second value after the document */
	open_doc(&d, "1 2");
	assert_int_equal(pw_jr_u64(&d.r, &u), 0);
	assert_int_equal(pw_jr_u64(&d.r, &u), -1);
	close_doc(&d);
	open_doc(&d, "1 2");
	assert_int_equal(pw_jr_u64(&d.r, &u), 0);
	assert_int_equal(pw_jr_end(&d.r), -1);
	expect_error(&d.r, 2, "after the document");
	close_doc(&d);
}

/* Decodes the JSON string literal lit; checks its decoded bytes. */
static void check_decoded(const char *lit, const char *want, size_t want_len)
{
	struct doc d;
	char buf[64];
	size_t len = 0;
	open_doc(&d, lit);
	if (pw_jr_string(&d.r, buf, sizeof buf, &len) != 0) {
		char msg[256];
		fail_msg("%s: %s", lit, pw_jr_error(&d.r, msg, sizeof msg));
	}
	assert_int_equal(len, want_len);
	assert_memory_equal(buf, want, want_len);
	assert_int_equal(buf[want_len], 0);
	assert_int_equal(pw_jr_end(&d.r), 0);
	close_doc(&d);
}

#define CHECK_DECODED(lit, want) check_decoded(lit, want, sizeof want - 1)

static void test_escapes(void **state)
{
	CHECK_DECODED("\"plain\"", "plain");
	CHECK_DECODED("\"\"", "");
	CHECK_DECODED("\"q\\\"b\\\\s\\/\"", "q\"b\\s/");
	CHECK_DECODED("\"\\b\\f\\n\\r\\t\"", "\b\f\n\r\t");
	CHECK_DECODED("\"\\u0041\\u00e9\\u20AC\"", "A\xc3\xa9\xe2\x82\xac");
	CHECK_DECODED("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80");      /* U+1F600 from a surrogate pair */
	CHECK_DECODED("\"\\uDBFF\\uDFFF\"", "\xf4\x8f\xbf\xbf");      /* U+10FFFF */
	CHECK_DECODED("\"a\\u0000b\"", "a\0b");                       /* NUL kept, length says so */
	CHECK_DECODED("\"caf\xc3\xa9 \xf0\x9f\x98\x80\"", "caf\xc3\xa9 \xf0\x9f\x98\x80"); /* raw UTF-8 */
	CHECK_DECODED("\"\x7f\"", "\x7f");
}

/* Reads lit as a string value: it must fail at off with a message containing what. */
static void check_bad_string(const char *lit, size_t off, const char *what)
{
	struct doc d;
	char buf[64];
	open_doc(&d, lit);
	assert_int_equal(pw_jr_string(&d.r, buf, sizeof buf, NULL), -1);
	expect_error(&d.r, off, what);
	/* sticky: everything fails after it */
	assert_int_equal(pw_jr_peek(&d.r), PW_JR_ERROR);
	assert_int_equal(pw_jr_skip(&d.r), -1);
	assert_int_equal(pw_jr_end(&d.r), -1);
	close_doc(&d);
}

static void test_bad_strings(void **state)
{
	check_bad_string("\"ab", 3, "end of input");
	check_bad_string("\"a\\", 3, "end of input");
	check_bad_string("\"a\nb\"", 2, "control character");
	check_bad_string("\"\\x\"", 1, "invalid escape");
	check_bad_string("\"\\u12g4\"", 5, "hex digits");
	check_bad_string("\"\\u12", 5, "end of input");
	check_bad_string("\"\\ude00\"", 1, "unpaired low surrogate");
	check_bad_string("\"\\ud83dx\"", 1, "unpaired high surrogate");
	check_bad_string("\"\\ud83d\\u0041\"", 1, "unpaired high surrogate");
	check_bad_string("\"\\ud83d", 7, "end of input");
	check_bad_string("\"\xc3\"", 1, "invalid UTF-8");         /* cut sequence */
	check_bad_string("\"\xc0\xaf\"", 1, "invalid UTF-8");     /* overlong */
	check_bad_string("\"\xed\xa0\x80\"", 1, "invalid UTF-8"); /* a surrogate in UTF-8 */
	check_bad_string("\"\xf4\x90\x80\x80\"", 1, "invalid UTF-8"); /* above U+10FFFF */
	check_bad_string("\"ok\xff\"", 3, "invalid UTF-8");
	check_bad_string("'single'", 0, "expected a string");
}

static void test_strings_cut_at_character(void **state)
{
	struct doc d;
	char buf[5];
	size_t len;
	/* "ab" then U+20AC (3 bytes): only "ab" fits in 4 bytes + NUL */
	open_doc(&d, "[\"ab\xe2\x82\xac" "cd\", \"abcdefgh\"]");
	assert_int_equal(pw_jr_enter_array(&d.r), 0);
	assert_int_equal(pw_jr_next_item(&d.r), 1);
	assert_int_equal(pw_jr_string(&d.r, buf, sizeof buf, &len), 0);
	assert_string_equal(buf, "ab");
	assert_int_equal(len, 7);
	assert_int_equal(pw_jr_next_item(&d.r), 1);
	assert_int_equal(pw_jr_string(&d.r, buf, sizeof buf, &len), 0);
	assert_string_equal(buf, "abcd");
	assert_int_equal(len, 8);
	assert_int_equal(pw_jr_next_item(&d.r), 0);
	assert_int_equal(pw_jr_end(&d.r), 0);
	close_doc(&d);
	/* a key longer than the buffer: cut, its whole length told */
	open_doc(&d, "{\"summary_and_more\":1}");
	assert_int_equal(pw_jr_enter_object(&d.r), 0);
	assert_int_equal(pw_jr_next_key(&d.r, buf, sizeof buf, &len), 1);
	assert_string_equal(buf, "summ");
	assert_int_equal(len, 16);
	assert_int_equal(pw_jr_next_key(&d.r, NULL, 0, NULL), 0);
	close_doc(&d);
}

static void test_big_integers(void **state)
{
	struct doc d;
	uint64_t u;
	int64_t i;
	double x;
	open_doc(&d, "[18446744073709551615, 1795000000123456789, 9007199254740993, 0, -0,"
		     " 9223372036854775807, -9223372036854775808, 1795000000123456789]");
	struct pw_jr *r = &d.r;
	assert_int_equal(pw_jr_enter_array(r), 0);
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_u64(r, &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_u64(r, &u), 0);
	assert_true(u == 1795000000123456789ull); /* above 2^53: a double would lose it */
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_u64(r, &u), 0);
	assert_true(u == 9007199254740993ull); /* 2^53 + 1 */
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_u64(r, &u), 0);
	assert_true(u == 0);
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_u64(r, &u), 0);
	assert_true(u == 0);
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_i64(r, &i), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_i64(r, &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_double(r, &x), 0);
	assert_true(x == 1795000000123456789.0);
	assert_int_equal(pw_jr_next_item(r), 0);
	close_doc(&d);

	static const struct {
		const char *text;
		int as_signed;
		const char *what;
	} bad[] = {
		{"18446744073709551616", 0, "out of range"},
		{"99999999999999999999", 0, "out of range"},
		{"-1", 0, "out of range"},
		{"9223372036854775808", 1, "out of range"},
		{"-9223372036854775809", 1, "out of range"},
		{"1.0", 0, "fraction"},
		{"1e3", 1, "exponent"},
		{"\"1\"", 0, "expected an integer"},
		{"true", 1, "expected an integer"},
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		open_doc(&d, bad[k].text);
		int rc = bad[k].as_signed ? pw_jr_i64(&d.r, &i) : pw_jr_u64(&d.r, &u);
		assert_int_equal(rc, -1);
		expect_error(&d.r, 0, bad[k].what);
		close_doc(&d);
	}
}

static void test_doubles(void **state)
{
	static const struct {
		const char *text;
		double v;
	} good[] = {{"0", 0.0},	   {"-0.5", -0.5},  {"1e-3", 1e-3},
		    {"2.5E+2", 250.0}, {"1e-400", 0.0}, {"123456789", 123456789.0}};
	for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
		struct doc d;
		double x;
		open_doc(&d, good[k].text);
		assert_int_equal(pw_jr_double(&d.r, &x), 0);
		assert_true(x == good[k].v);
		assert_int_equal(pw_jr_end(&d.r), 0);
		close_doc(&d);
	}
	struct doc d;
	double x;
	open_doc(&d, "1e400");
	assert_int_equal(pw_jr_double(&d.r, &x), -1);
	expect_error(&d.r, 0, "out of range");
	close_doc(&d);
	char longnum[300];
	memset(longnum, '1', sizeof longnum - 1);
	longnum[sizeof longnum - 1] = 0;
	open_doc(&d, longnum);
	assert_int_equal(pw_jr_double(&d.r, &x), -1);
	expect_error(&d.r, 0, "too long");
	close_doc(&d);
	/* but it can be skipped */
	open_doc(&d, longnum);
	assert_int_equal(pw_jr_skip(&d.r), 0);
	assert_int_equal(pw_jr_end(&d.r), 0);
	close_doc(&d);
}

/* Skipping the whole document must fail at off with what; "" for a document that must pass. */
static void check_grammar(const char *text, size_t off, const char *what)
{
	struct doc d;
	open_doc(&d, text);
	int rc = pw_jr_skip(&d.r);
	if (rc == 0)
		rc = pw_jr_end(&d.r);
	if (!*what) {
		char msg[256];
		if (rc)
			fail_msg("'%s': %s", text, pw_jr_error(&d.r, msg, sizeof msg));
	} else {
		if (rc == 0)
			fail_msg("'%s' was accepted", text);
		expect_error(&d.r, off, what);
	}
	close_doc(&d);
}

static void test_grammar(void **state)
{
	check_grammar("{\"a\":[1,{\"b\":null}],\"c\":\"d\"}", 0, "");
	check_grammar("[]", 0, "");
	check_grammar("", 0, "end of input");
	check_grammar("   ", 3, "end of input");
	check_grammar("[1,]", 3, "expected a value");
	check_grammar("[1 2]", 3, "expected ',' or ']'");
	check_grammar("{\"a\":1,}", 7, "expected a member name");
	check_grammar("{\"a\" 1}", 5, "expected ':'");
	check_grammar("{\"a\":1 \"b\":2}", 7, "expected ',' or '}'");
	check_grammar("{1:2}", 1, "member name or '}'");
	check_grammar("{'a':2}", 1, "member name or '}'");
	check_grammar("[01]", 2, "expected ',' or ']'");
	check_grammar("01", 1, "after the document");
	check_grammar("-", 1, "end of input in a number");
	check_grammar("-a", 1, "expected a digit");
	check_grammar("1.", 2, "after '.'");
	check_grammar("1.e5", 2, "after '.'");
	check_grammar("1e", 2, "exponent");
	check_grammar("1e+", 3, "exponent");
	check_grammar("+1", 0, "expected a value");
	check_grammar("NaN", 0, "expected a value");
	check_grammar("tru", 3, "end of input");
	check_grammar("trUe", 0, "invalid literal");
	check_grammar("nul", 3, "end of input");
	check_grammar("[1]]", 3, "after the document");
	check_grammar("{\"a\":1]", 6, "expected ',' or '}'");
	check_grammar("[1}", 2, "expected ',' or ']'");
}

static void test_skip_and_leave(void **state)
{
	struct doc d;
	char key[16];
	uint64_t u;
	open_doc(&d, "{\"calls\":[{\"x\":[1,2,{\"y\":\"\\u00e9]}\"}]},\"z\"],"
		     "\"summary\":{\"n\":7,\"more\":{\"deep\":[[]]},"
		     "\"m\":8},\"after\":1}");
	struct pw_jr *r = &d.r;
	assert_int_equal(pw_jr_enter_object(r), 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_string_equal(key, "calls");
	assert_int_equal(pw_jr_skip(r), 0); /* a string holding brackets does not confuse it */
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_string_equal(key, "summary");
	assert_int_equal(pw_jr_enter_object(r), 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_int_equal(pw_jr_u64(r, &u), 0);
	assert_int_equal(u, 7);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_string_equal(key, "more");
	/* not read: the next call steps over it */
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_string_equal(key, "m");
	assert_int_equal(pw_jr_u64(r, &u), 0);
	assert_int_equal(u, 8);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 0);
	assert_int_equal(r->depth, 1);
	/* leave the top-level object with what is left in it */
	assert_int_equal(pw_jr_leave(r), 0);
	assert_int_equal(r->depth, 0);
	assert_int_equal(pw_jr_end(r), 0);
	close_doc(&d);

	/* leave from inside nested containers, with a value pending */
	open_doc(&d, "[[1,[2,3]],4]");
	r = &d.r;
	assert_int_equal(pw_jr_enter_array(r), 0);
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_enter_array(r), 0);
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_leave(r), 0);
	assert_int_equal(r->depth, 1);
	assert_int_equal(pw_jr_next_item(r), 1);
	assert_int_equal(pw_jr_u64(r, &u), 0);
	assert_int_equal(u, 4);
	assert_int_equal(pw_jr_next_item(r), 0);
	assert_int_equal(pw_jr_end(r), 0);
	close_doc(&d);

	/* stops at the summary: what follows it is never looked at, broken or not */
	open_doc(&d, "{\"summary\":{\"n\":1},\"calls\":[1,2,@@@");
	r = &d.r;
	assert_int_equal(pw_jr_enter_object(r), 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_int_equal(pw_jr_enter_object(r), 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 1);
	assert_int_equal(pw_jr_u64(r, &u), 0);
	assert_int_equal(pw_jr_next_key(r, key, sizeof key, NULL), 0);
	assert_null(r->err);
	assert_int_equal(pw_jr_offset(r), 18);
	close_doc(&d);
}

static void test_misuse(void **state)
{
	struct doc d;
	char key[8];
	uint64_t u;
	open_doc(&d, "[1]");
	assert_int_equal(pw_jr_enter_array(&d.r), 0);
	assert_int_equal(pw_jr_next_key(&d.r, key, sizeof key, NULL), -1);
	expect_error(&d.r, 1, "not inside an object");
	close_doc(&d);
	open_doc(&d, "{\"a\":1}");
	assert_int_equal(pw_jr_enter_object(&d.r), 0);
	assert_int_equal(pw_jr_u64(&d.r, &u), -1); /* a value before its key */
	expect_error(&d.r, 1, "no value is due");
	close_doc(&d);
	open_doc(&d, "{\"a\":1}");
	assert_int_equal(pw_jr_enter_array(&d.r), -1);
	expect_error(&d.r, 0, "expected an array");
	close_doc(&d);
	open_doc(&d, "[]");
	assert_int_equal(pw_jr_leave(&d.r), -1);
	close_doc(&d);
	/* a caller's own error is kept as the first */
	open_doc(&d, "[]");
	assert_int_equal(pw_jr_fail(&d.r, 1, "mine"), -1);
	assert_int_equal(pw_jr_fail(&d.r, 0, "later"), -1);
	expect_error(&d.r, 1, "mine");
	assert_int_equal(pw_jr_enter_array(&d.r), -1);
	close_doc(&d);
	/* no buffer at all */
	struct pw_jr r;
	pw_jr_init(&r, NULL, 10, 8);
	assert_int_equal(pw_jr_peek(&r), PW_JR_ERROR);
	expect_error(&r, 0, "end of input");
}

static void test_depth_limit(void **state)
{
	enum { N = 100000 };
	char *text = malloc(2 * N);
	assert_non_null(text);
	for (size_t k = 0; k < N; k++) {
		text[k] = '[';
		text[2 * N - 1 - k] = ']';
	}
	for (int limit = 1; limit <= 10; limit++) {
		/* limit containers deep: fine; one more: an error at the one too many */
		struct doc d;
		open_doc_n(&d, text + N - (size_t)limit, 2 * (size_t)limit, limit);
		assert_int_equal(pw_jr_skip(&d.r), 0);
		assert_int_equal(pw_jr_end(&d.r), 0);
		close_doc(&d);
		open_doc_n(&d, text + N - (size_t)limit - 1, 2 * (size_t)limit + 2, limit);
		assert_int_equal(pw_jr_skip(&d.r), -1);
		expect_error(&d.r, (size_t)limit, "nested too deeply");
		close_doc(&d);
	}
	/* 100000 deep against the largest limit: an error, not a stack overflow */
	struct doc d;
	open_doc_n(&d, text, 2 * N, 1 << 30);
	assert_int_equal(d.r.max_depth, PW_JR_DEPTH_MAX);
	assert_int_equal(pw_jr_skip(&d.r), -1);
	expect_error(&d.r, PW_JR_DEPTH_MAX, "nested too deeply");
	close_doc(&d);
	/* objects count too */
	open_doc(&d, "{\"a\":{\"b\":{\"c\":1}}}");
	pw_jr_init(&d.r, d.buf, strlen("{\"a\":{\"b\":{\"c\":1}}}"), 2);
	assert_int_equal(pw_jr_skip(&d.r), -1);
	expect_error(&d.r, 10, "nested too deeply");
	close_doc(&d);
	free(text);
}

/* A summary-like document read the way merge.c reads it: typed values where it knows the key. */
static const char sample[] =
	"{\"format\":\"profwrap-report\",\"version\":2,\n"
	" \"summary\":{\"rank\":-1,\"host\":\"n\\u00f6de1\",\"start_realtime_ns\":1795000000123456789,\n"
	"  \"ok\":true,\"no\":false,\"nothing\":null,\"ratio\":-1.5e-3,\n"
	"  \"phases\":[{\"name\":\"fwd \\ud83d\\ude00\",\"ns\":123}],\n"
	"  \"collectives\":[{\"domain\":\"mpi\",\"entries_ns\":[0,10,200],\"truncated\":false}]},\n"
	" \"calls\":[{\"a\":[[]],\"b\":{}}]}\n";

/* Reads any document with the typed calls. Returns 0 or -1. */
static int walk_typed(struct pw_jr *r)
{
	/* an explicit stack of open container types: no recursion in the test either */
	for (;;) {
		enum pw_jr_type t = pw_jr_peek(r);
		char buf[16];
		uint64_t u;
		int64_t i;
		double x;
		int b, rc = 0;
		switch (t) {
		case PW_JR_ERROR:
			return -1;
		case PW_JR_OBJECT:
			rc = pw_jr_enter_object(r);
			break;
		case PW_JR_ARRAY:
			rc = pw_jr_enter_array(r);
			break;
		case PW_JR_STRING:
			rc = pw_jr_string(r, buf, sizeof buf, NULL);
			break;
		case PW_JR_NUMBER: {
			/* peek() left the offset at the number: an integer is read as one, anything else as double */
			int neg = 0, frac = 0;
			for (size_t at = pw_jr_offset(r);
			     at < r->len && r->buf[at] && strchr("0123456789-+.eE", r->buf[at]); at++) {
				neg |= r->buf[at] == '-';
				frac |= r->buf[at] == '.' || r->buf[at] == 'e' || r->buf[at] == 'E';
			}
			rc = frac ? pw_jr_double(r, &x) : neg ? pw_jr_i64(r, &i) : pw_jr_u64(r, &u);
			break;
		}
		case PW_JR_BOOL:
			rc = pw_jr_bool(r, &b);
			break;
		case PW_JR_NULL:
			rc = pw_jr_null(r);
			break;
		case PW_JR_NONE:
			break;
		}
		if (rc)
			return -1;
		/* the next value due, leaving finished containers */
		for (;;) {
			if (r->depth == 0)
				return 0;
			rc = (r->stack[r->depth - 1] & 0x7f) == PW_JR_OBJECT ? pw_jr_next_key(r, buf, sizeof buf, NULL)
									       : pw_jr_next_item(r);
			if (rc < 0)
				return -1;
			if (rc > 0)
				break;
		}
	}
}

static void test_truncated_everywhere(void **state)
{
	size_t len = sizeof sample - 1;
	struct doc d;
	/* whole: both ways read it */
	open_doc_n(&d, sample, len, 16);
	assert_int_equal(walk_typed(&d.r), 0);
	assert_int_equal(pw_jr_end(&d.r), 0);
	close_doc(&d);
	open_doc_n(&d, sample, len, 16);
	assert_int_equal(pw_jr_skip(&d.r), 0);
	assert_int_equal(pw_jr_end(&d.r), 0);
	close_doc(&d);
	size_t body = len;
	while (body > 0 && sample[body - 1] == '\n')
		body--; /* a cut in the whitespace after the document leaves it whole */
	for (size_t n = 0; n < body; n++) {
		for (int typed = 0; typed < 2; typed++) {
			open_doc_n(&d, sample, n, 16);
			int rc = typed ? walk_typed(&d.r) : pw_jr_skip(&d.r);
			if (rc == 0)
				rc = pw_jr_end(&d.r);
			if (rc == 0)
				fail_msg("cut at %zu: accepted", n);
			assert_non_null(d.r.err);
			assert_true(d.r.err_off <= n);
			/* found where the input ends, or said to be an early end */
			if (d.r.err_off != n && !strstr(d.r.err, "end") && !strstr(d.r.err, "not finished"))
				fail_msg("cut at %zu: %s at %zu", n, d.r.err, d.r.err_off);
			close_doc(&d);
		}
	}
}

/* Every byte of the sample replaced by every byte value: no crash, a result either way. */
static void test_one_byte_changed(void **state)
{
	size_t len = sizeof sample - 1;
	char *copy = malloc(len);
	assert_non_null(copy);
	size_t accepted = 0, refused = 0;
	for (size_t i = 0; i < len; i++) {
		for (int v = 0; v < 256; v += 7) {
			memcpy(copy, sample, len);
			copy[i] = (char)v;
			struct pw_jr r;
			pw_jr_init(&r, copy, len, 16);
			int rc = walk_typed(&r);
			if (rc == 0)
				rc = pw_jr_end(&r);
			if (rc == 0) {
				accepted++;
			} else {
				refused++;
				assert_true(r.err_off <= len);
			}
		}
	}
	assert_true(accepted > 0 && refused > 0);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_top_level_scalars),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_bad_strings),
		cmocka_unit_test(test_strings_cut_at_character),
		cmocka_unit_test(test_big_integers),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_grammar),
		cmocka_unit_test(test_skip_and_leave),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_one_byte_changed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
