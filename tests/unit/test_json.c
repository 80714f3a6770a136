#define _GNU_SOURCE
/* Unit tests for collector/json: exact output text of escaping, UTF-8 repair, separators, layout and
 * number formats. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../collector/lib/json.h"

/* A writer on a memory stream; finish() closes it and checks the text. */
struct capture {
	char *text;
	size_t len;
	FILE *f;
	struct pw_json j;
};

static void start(struct capture *c, int pretty_depth)
{
	c->text = NULL;
	c->len = 0;
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
	pw_json_init(&c->j, c->f, pretty_depth);
}

static void finish(struct capture *c, const char *expected)
{
	assert_int_equal(c->j.depth, 0);
	assert_false(ferror(c->f));
	assert_int_equal(fclose(c->f), 0);
	assert_string_equal(c->text, expected);
	assert_int_equal(c->len, strlen(expected));
	free(c->text);
}

static void check_string(const char *in, size_t len, const char *expected)
{
	struct capture c;
	start(&c, 0);
	pw_json_string_n(&c.j, in, len);
	finish(&c, expected);
}

#define CHECK_STRING(lit, expected) check_string(lit, sizeof lit - 1, expected)

static void test_escapes_quote_and_backslash(void **state)
{
	CHECK_STRING("say \"hi\"", "\"say \\\"hi\\\"\"");
	CHECK_STRING("C:\\dir\\", "\"C:\\\\dir\\\\\"");
	CHECK_STRING("a/b", "\"a/b\"");
	CHECK_STRING("", "\"\"");
}

static void test_escapes_control_chars(void **state)
{
	CHECK_STRING("\x01", "\"\\u0001\"");
	CHECK_STRING("line\nnext\ttab\r", "\"line\\u000anext\\u0009tab\\u000d\"");
	CHECK_STRING("\x1f\x7f", "\"\\u001f\x7f\""); /* DEL is not a control character to JSON */
	CHECK_STRING("a\0b", "\"a\\u0000b\"");
}

static void test_valid_utf8_passes(void **state)
{
	CHECK_STRING("caf\xc3\xa9", "\"caf\xc3\xa9\"");                 /* U+00E9 */
	CHECK_STRING("\xe2\x82\xac", "\"\xe2\x82\xac\"");               /* U+20AC */
	CHECK_STRING("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");       /* U+1F600 */
	CHECK_STRING("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");       /* U+10FFFF */
	CHECK_STRING("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");               /* U+D7FF, just below the surrogates */
}

/* Code points that line-oriented readers take for line ends are escaped, so one JSON value stays one line. */
static void test_line_separators_escaped(void **state)
{
	CHECK_STRING("a\xc2\x85" "b", "\"a\\u0085b\"");                 /* NEL */
	CHECK_STRING("\xc2\x80\xc2\x9f\xc2\xa0", "\"\\u0080\\u009f\xc2\xa0\""); /* C1 only, not U+00A0 */
	CHECK_STRING("\xe2\x80\xa8\xe2\x80\xa9", "\"\\u2028\\u2029\"");
	CHECK_STRING("\xe2\x80\xa7\xe2\x80\xaa", "\"\xe2\x80\xa7\xe2\x80\xaa\"");  /* neighbours pass */
}

#define FFFD "\xef\xbf\xbd"

static void test_invalid_utf8_replaced(void **state)
{
	CHECK_STRING("a\xff" "b", "\"a" FFFD "b\"");
	CHECK_STRING("\x80", "\"" FFFD "\"");                        /* lone continuation byte */
	CHECK_STRING("x\xc3", "\"x" FFFD "\"");                      /* cut at the end */
	CHECK_STRING("\xe2\x82" "z", "\"" FFFD "z\"");               /* cut short: one U+FFFD */
	CHECK_STRING("\xf0\x9f\x98", "\"" FFFD "\"");                /* cut short: one U+FFFD */
	CHECK_STRING("\xc0\xaf", "\"" FFFD FFFD "\"");               /* overlong '/' */
	CHECK_STRING("\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"");      /* overlong, 3 bytes */
	CHECK_STRING("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");      /* UTF-16 surrogate */
	CHECK_STRING("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""); /* above U+10FFFF */
	CHECK_STRING("\xf5\xbf", "\"" FFFD FFFD "\"");
	CHECK_STRING("\xc3\"", "\"" FFFD "\\\"\"");                  /* the quote after it is still escaped */
}

static void test_null_strings(void **state)
{
	struct capture c;
	start(&c, 0);
	pw_json_begin_array(&c.j);
	pw_json_string(&c.j, NULL);
	pw_json_string_n(&c.j, NULL, 5);
	pw_json_string(&c.j, "x");
	pw_json_end_array(&c.j);
	finish(&c, "[null,null,\"x\"]");
}

static void test_commas_in_nested_containers(void **state)
{
	struct capture c;
	start(&c, 0);
	pw_json_begin_array(&c.j);
	pw_json_int(&c.j, 1);
	pw_json_begin_array(&c.j);
	pw_json_end_array(&c.j);
	pw_json_begin_object(&c.j);
	pw_json_end_object(&c.j);
	pw_json_begin_object(&c.j);
	pw_json_key(&c.j, "a");
	pw_json_begin_array(&c.j);
	pw_json_int(&c.j, 1);
	pw_json_int(&c.j, 2);
	pw_json_begin_object(&c.j);
	pw_json_key(&c.j, "b");
	pw_json_null(&c.j);
	pw_json_end_object(&c.j);
	pw_json_end_array(&c.j);
	pw_json_key(&c.j, "c");
	pw_json_begin_object(&c.j);
	pw_json_end_object(&c.j);
	pw_json_kv_string(&c.j, "d", "e");
	pw_json_end_object(&c.j);
	pw_json_bool(&c.j, 1);
	pw_json_bool(&c.j, 0);
	pw_json_end_array(&c.j);
	finish(&c, "[1,[],{},{\"a\":[1,2,{\"b\":null}],\"c\":{},\"d\":\"e\"},true,false]");
}

static void test_keys_are_escaped(void **state)
{
	struct capture c;
	start(&c, 0);
	pw_json_begin_object(&c.j);
	pw_json_kv_int(&c.j, "we\"ird\n", 1);
	pw_json_end_object(&c.j);
	finish(&c, "{\"we\\\"ird\\u000a\":1}");
}

/* HTA finds a trace's rank by the text '"rank": N': the spaced key has that space, the others none. */
static void test_spaced_key(void **state)
{
	struct capture c;
	start(&c, 0);
	pw_json_begin_object(&c.j);
	pw_json_key_spaced(&c.j, "rank");
	pw_json_int(&c.j, 3);
	pw_json_kv_int(&c.j, "world_size", 4);
	pw_json_end_object(&c.j);
	finish(&c, "{\"rank\": 3,\"world_size\":4}");
}

static void test_64_bit_extremes(void **state)
{
	struct capture c;
	start(&c, 0);
	pw_json_begin_object(&c.j);
	pw_json_kv_int(&c.j, "min", INT64_MIN);
	pw_json_kv_int(&c.j, "max", INT64_MAX);
	pw_json_kv_uint(&c.j, "umax", UINT64_MAX);
	pw_json_kv_uint(&c.j, "zero", 0);
	pw_json_kv_int(&c.j, "minus_one", -1);
	pw_json_end_object(&c.j);
	finish(&c, "{\"min\":-9223372036854775808,\"max\":9223372036854775807,\"umax\":18446744073709551615,"
		   "\"zero\":0,\"minus_one\":-1}");
}

static void test_doubles(void **state)
{
	struct capture c;
	start(&c, 0);
	pw_json_begin_array(&c.j);
	pw_json_double(&c.j, 0.5, 4);
	pw_json_double(&c.j, -1.25, 3);
	pw_json_double(&c.j, 2.0 / 3.0, 4);
	pw_json_double(&c.j, 1234567.891, 3);
	pw_json_double(&c.j, 7.0, 0);
	pw_json_double(&c.j, NAN, 2);
	pw_json_double(&c.j, INFINITY, 2);
	pw_json_double(&c.j, -INFINITY, 2);
	pw_json_end_array(&c.j);
	finish(&c, "[0.5000,-1.250,0.6667,1234567.891,7,null,null,null]");
}

/* Members of containers up to pretty_depth go on their own lines; deeper ones stay on one line. */
static void test_pretty_layout(void **state)
{
	struct capture c;
	start(&c, 2);
	pw_json_begin_object(&c.j);
	pw_json_kv_string(&c.j, "format", "x");
	pw_json_key(&c.j, "list");
	pw_json_begin_array(&c.j);
	pw_json_begin_object(&c.j);
	pw_json_kv_int(&c.j, "a", 1);
	pw_json_key(&c.j, "b");
	pw_json_begin_array(&c.j);
	pw_json_int(&c.j, 2);
	pw_json_int(&c.j, 3);
	pw_json_end_array(&c.j);
	pw_json_end_object(&c.j);
	pw_json_begin_object(&c.j);
	pw_json_end_object(&c.j);
	pw_json_end_array(&c.j);
	pw_json_key(&c.j, "empty");
	pw_json_begin_array(&c.j);
	pw_json_end_array(&c.j);
	pw_json_end_object(&c.j);
	finish(&c, "{\n"
		   "  \"format\":\"x\",\n"
		   "  \"list\":[\n"
		   "    {\"a\":1,\"b\":[2,3]},\n"
		   "    {}\n"
		   "  ],\n"
		   "  \"empty\":[]\n"
		   "}");
}

/* A scalar alone is a whole document; the layout only acts inside containers. */
static void test_top_level_scalar(void **state)
{
	struct capture c;
	start(&c, 3);
	pw_json_uint(&c.j, 42);
	finish(&c, "42");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes_quote_and_backslash),
		cmocka_unit_test(test_escapes_control_chars),
		cmocka_unit_test(test_valid_utf8_passes),
		cmocka_unit_test(test_invalid_utf8_replaced),
		cmocka_unit_test(test_line_separators_escaped),
		cmocka_unit_test(test_null_strings),
		cmocka_unit_test(test_commas_in_nested_containers),
		cmocka_unit_test(test_keys_are_escaped),
		cmocka_unit_test(test_spaced_key),
		cmocka_unit_test(test_64_bit_extremes),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_pretty_layout),
		cmocka_unit_test(test_top_level_scalar),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
