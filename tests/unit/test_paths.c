#define _GNU_SOURCE
/* Unit tests for collector/lib/paths: the absolute path a program named, worked out lexically. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../collector/lib/paths.h"

/* dir (NULL: unknown) and path as C strings; "" expected: no answer. */
static void expect(const char *dir, int physical, const char *path, const char *want)
{
	char out[64];
	size_t n = pw_path_resolve(dir, dir ? strlen(dir) : 0, physical, path, strlen(path), out, sizeof out);
	if (!*want) {
		if (n)
			fail_msg("%s + %s: expected no answer, got %s", dir, path, out);
		return;
	}
	if (n != strlen(want) || strcmp(out, want) != 0)
		fail_msg("%s + %s: expected %s, got %s (%zu)", dir, path, want, n ? out : "nothing", n);
}

/* A relative path is taken from its directory; an absolute one ignores it. */
static void test_relative_and_absolute(void **state)
{
	expect("/w", 1, "a/f.txt", "/w/a/f.txt");
	expect("/w/b", 1, "f.txt", "/w/b/f.txt");
	expect("/", 1, "f", "/f");
	expect("/w", 1, "/data/x", "/data/x");
	expect(NULL, 0, "/data/x", "/data/x");
	expect("/w", 0, "x", "/w/x");
}

/* Two ways of writing one name give one name: ".", repeated and trailing slashes. */
static void test_dots_and_slashes(void **state)
{
	expect("/w", 1, "./a//f.txt", "/w/a/f.txt");
	expect("/w/", 1, "a/./", "/w/a");
	expect("/w", 1, ".", "/w");
	expect("/w", 1, "", "/w");
	expect(NULL, 0, "//data///x/.", "/data/x");
	expect(NULL, 0, "/", "/");
}

/* ".." climbs out of a directory the kernel named, and out of the root; after a component of the path as
 * written, or of a directory that may hold symlinks, it stays. */
static void test_dotdot(void **state)
{
	expect("/w/a", 1, "../b/f.txt", "/w/b/f.txt");
	expect("/w/a", 1, "../../../f", "/f");
	expect(NULL, 0, "/../f", "/f");
	expect("/w", 1, "a/../f", "/w/a/../f");
	expect("/w/a", 0, "../f", "/w/a/../f");
	expect(NULL, 0, "/x/../f", "/x/../f");
	expect("/w/a", 1, "../x/../../f", "/w/x/../../f");
}

/* No answer for a relative path without a directory, or one that is not absolute; nor when it does not fit. */
static void test_no_answer(void **state)
{
	expect(NULL, 0, "f", "");
	expect("", 1, "f", "");
	expect("pipe:[12]", 0, "f", "");
	expect("/w", 1, "0123456789/0123456789/0123456789/0123456789/0123456789/0123456789", "");
	char out[8];
	assert_int_equal(pw_path_resolve(NULL, 0, 0, "/abcdef", 7, out, sizeof out), 7);
	assert_int_equal(pw_path_resolve(NULL, 0, 0, "/abcdefg", 8, out, sizeof out), 0);
	assert_int_equal(pw_path_resolve(NULL, 0, 0, "/a", 2, out, 1), 0);
}

/* A NUL inside the bytes (a damaged raw trace) ends the path. */
static void test_nul_ends_path(void **state)
{
	char out[32];
	assert_int_equal(pw_path_resolve("/w", 2, 1, "f\0g", 3, out, sizeof out), 4);
	assert_string_equal(out, "/w/f");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relative_and_absolute),
		cmocka_unit_test(test_dots_and_slashes),
		cmocka_unit_test(test_dotdot),
		cmocka_unit_test(test_no_answer),
		cmocka_unit_test(test_nul_ends_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
