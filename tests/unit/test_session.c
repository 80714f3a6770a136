#define _GNU_SOURCE
/* Unit tests for common/pw_session: the session base directory, session directory names (one per output
 * directory, whatever spelling of it a process was given), segment names, and the FNV-1a hash. The tests
 * change XDG_RUNTIME_DIR and the working directory; setup and teardown put both back. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../common/pw_session.h"

struct saved {
	char cwd[PATH_MAX];
	char *xdg; /* NULL: was unset */
	char tmpdir[64];
};

static int setup(void **state)
{
	struct saved *s = calloc(1, sizeof *s);
	if (!s || !getcwd(s->cwd, sizeof s->cwd))
		return -1;
	const char *x = getenv("XDG_RUNTIME_DIR");
	s->xdg = x ? strdup(x) : NULL;
	/* a private, known working directory */
	snprintf(s->tmpdir, sizeof s->tmpdir, "/tmp/pw-test-session-XXXXXX");
	if (!mkdtemp(s->tmpdir) || chdir(s->tmpdir) != 0)
		return -1;
	setenv("XDG_RUNTIME_DIR", "/run/user/4321", 1);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct saved *s = *state;
	if (chdir(s->cwd) != 0)
		return -1;
	rmdir(s->tmpdir);
	if (s->xdg)
		setenv("XDG_RUNTIME_DIR", s->xdg, 1);
	else
		unsetenv("XDG_RUNTIME_DIR");
	free(s->xdg);
	free(s);
	return 0;
}

/* Reference FNV-1a, written out separately from the code under test. */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

/* ---- hash ---- */

static void test_hash64_vectors(void **state)
{
	assert_int_equal(pw_hash64("", 0), 0xcbf29ce484222325ull);
	assert_int_equal(pw_hash64("a", 1), 0xaf63dc4c8601ec8cull);
	assert_int_equal(pw_hash64("foobar", 6), 0x85944171f73967e8ull);
	assert_int_equal(pw_hash64("/tmp/out", 8), 0x8d392371b9168120ull);
	/* only len bytes count */
	assert_int_equal(pw_hash64("ab", 1), 0xaf63dc4c8601ec8cull);
	assert_int_equal(pw_hash64("foobar\0xyz", 6), 0x85944171f73967e8ull);
	/* bytes above 0x7f are taken unsigned */
	assert_int_equal(pw_hash64("\xff", 1), fnv1a("\xff"));
	assert_int_equal(pw_hash64("/tmp/\xc3\xa9t\xc3\xa9", 10), fnv1a("/tmp/\xc3\xa9t\xc3\xa9"));
}

/* ---- base ---- */

static void test_base_xdg(void **state)
{
	char buf[256];
	memset(buf, 'z', sizeof buf);
	assert_int_equal(pw_session_base(buf, sizeof buf), 0);
	assert_string_equal(buf, "/run/user/4321/profwrap");
	setenv("XDG_RUNTIME_DIR", "/somewhere/else", 1);
	assert_int_equal(pw_session_base(buf, sizeof buf), 0);
	assert_string_equal(buf, "/somewhere/else/profwrap");
}

static void test_base_fallback(void **state)
{
	char buf[256], want[64];
	snprintf(want, sizeof want, "/tmp/profwrap-%u", (unsigned)getuid());
	unsetenv("XDG_RUNTIME_DIR");
	assert_int_equal(pw_session_base(buf, sizeof buf), 0);
	assert_string_equal(buf, want);
	/* empty or relative values are not a base */
	setenv("XDG_RUNTIME_DIR", "", 1);
	assert_int_equal(pw_session_base(buf, sizeof buf), 0);
	assert_string_equal(buf, want);
	setenv("XDG_RUNTIME_DIR", "run/user/4321", 1);
	assert_int_equal(pw_session_base(buf, sizeof buf), 0);
	assert_string_equal(buf, want);
}

static void test_base_too_small(void **state)
{
	const char *want = "/run/user/4321/profwrap";
	size_t n = strlen(want);
	char buf[64];
	assert_int_equal(pw_session_base(buf, n), -ENAMETOOLONG);
	assert_int_equal(pw_session_base(buf, 1), -ENAMETOOLONG);
	assert_int_equal(pw_session_base(buf, 0), -ENAMETOOLONG);
	assert_int_equal(pw_session_base(buf, n + 1), 0);
	assert_string_equal(buf, want);
}

/* ---- session directory for an output directory ---- */

static void dir_for(const char *out, char *buf, size_t size)
{
	int rc = pw_session_dir_for_output(out, buf, size);
	if (rc != 0)
		fail_msg("pw_session_dir_for_output(\"%s\") = %d", out, rc);
}

/* The name is <base>/o-<16 hex digits of FNV-1a of the absolute path and the host name>. */
/* The session directory's hash: the absolute path, a newline, the host name. */
static uint64_t session_hash(const char *abs)
{
	char buf[PATH_MAX + 300], host[256] = "";
	gethostname(host, sizeof host - 1);
	snprintf(buf, sizeof buf, "%s\n%s", abs, host);
	return fnv1a(buf);
}

static void test_dir_for_output_format(void **state)
{
	struct saved *s = *state;
	char buf[512], want[512], abs[PATH_MAX + 8];
	dir_for("/data/run1/out", buf, sizeof buf);
	snprintf(want, sizeof want, "/run/user/4321/profwrap/o-%016llx", (unsigned long long)session_hash("/data/run1/out"));
	assert_string_equal(buf, want);
	assert_int_equal(strlen(buf), strlen("/run/user/4321/profwrap/o-") + 16);

	/* relative: joined with the working directory */
	snprintf(abs, sizeof abs, "%s/out", s->tmpdir);
	dir_for("out", buf, sizeof buf);
	snprintf(want, sizeof want, "/run/user/4321/profwrap/o-%016llx", (unsigned long long)session_hash(abs));
	assert_string_equal(buf, want);

	const char *p = buf + strlen("/run/user/4321/profwrap/o-");
	for (int i = 0; i < 16; i++)
		assert_true((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'));

	/* a hash with leading zero digits keeps them: every name has the same length */
	char out[64];
	int i = 0;
	do
		snprintf(out, sizeof out, "/data/out%d", i++);
	while (session_hash(out) >> 56 != 0);
	dir_for(out, buf, sizeof buf);
	snprintf(want, sizeof want, "/run/user/4321/profwrap/o-%016llx", (unsigned long long)session_hash(out));
	assert_string_equal(buf, want);
	assert_int_equal(strncmp(buf + strlen("/run/user/4321/profwrap/o-"), "00", 2), 0);
	assert_int_equal(strlen(buf), strlen("/run/user/4321/profwrap/o-") + 16);
}

static void test_dir_for_output_same_dir(void **state)
{
	struct saved *s = *state;
	char a[512], b[512], abs[PATH_MAX + 8];
	dir_for("out", a, sizeof a);
	dir_for("out/", b, sizeof b);
	assert_string_equal(a, b);
	dir_for("out///", b, sizeof b);
	assert_string_equal(a, b);
	snprintf(abs, sizeof abs, "%s/out", s->tmpdir);
	dir_for(abs, b, sizeof b);
	assert_string_equal(a, b);
	snprintf(abs, sizeof abs, "%s/out/", s->tmpdir);
	dir_for(abs, b, sizeof b);
	assert_string_equal(a, b);

	/* the root stays the root */
	dir_for("/", a, sizeof a);
	dir_for("//", b, sizeof b);
	assert_string_equal(a, b);
	char want[512];
	snprintf(want, sizeof want, "/run/user/4321/profwrap/o-%016llx", (unsigned long long)session_hash("/"));
	assert_string_equal(a, want);
}

/* Processes of one job may run in different working directories: each spelling of the same directory,
 * relative to its own cwd, names the same session directory. "/" as the cwd is the edge case (joining must
 * not produce "//tmp/..."). */
static void test_dir_for_output_other_cwd(void **state)
{
	struct saved *s = *state;
	char a[512], b[512], abs[PATH_MAX + 8];
	snprintf(abs, sizeof abs, "%s/out", s->tmpdir);
	dir_for(abs, a, sizeof a);

	assert_int_equal(chdir("/tmp"), 0);
	dir_for(abs + strlen("/tmp/"), b, sizeof b); /* "pw-test-session-XXXXXX/out" */
	assert_string_equal(a, b);

	assert_int_equal(chdir("/"), 0);
	dir_for(abs + 1, b, sizeof b); /* "tmp/pw-test-session-XXXXXX/out" */
	assert_string_equal(a, b);
	assert_int_equal(chdir(s->tmpdir), 0);
}

static void test_dir_for_output_different_dirs(void **state)
{
	const char *outs[] = {"out", "out2", "Out", "/out", "/tmp/out", "/tmp/out2", "ou", "out/sub", "/"};
	enum { N = sizeof outs / sizeof outs[0] };
	char names[N][512];
	for (int i = 0; i < N; i++)
		dir_for(outs[i], names[i], sizeof names[i]);
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++)
			if (strcmp(names[i], names[j]) == 0)
				fail_msg("\"%s\" and \"%s\" share %s", outs[i], outs[j], names[i]);
	/* and a different base gives a different directory for the same output */
	char other[512];
	setenv("XDG_RUNTIME_DIR", "/run/user/9", 1);
	dir_for("out", other, sizeof other);
	assert_string_not_equal(other, names[0]);
	assert_int_equal(strncmp(other, "/run/user/9/profwrap/o-", 23), 0);
}

static void test_dir_for_output_too_long(void **state)
{
	char buf[512];
	dir_for("/data/out", buf, sizeof buf);
	size_t n = strlen(buf);
	char small[512];
	assert_int_equal(pw_session_dir_for_output("/data/out", small, n), -ENAMETOOLONG);
	assert_int_equal(pw_session_dir_for_output("/data/out", small, 10), -ENAMETOOLONG);
	assert_int_equal(pw_session_dir_for_output("/data/out", small, n + 1), 0);
	assert_string_equal(small, buf);

	/* an output path longer than any path */
	size_t big = 5000;
	char *longpath = malloc(big + 1);
	assert_non_null(longpath);
	longpath[0] = '/';
	memset(longpath + 1, 'd', big - 1);
	longpath[big] = 0;
	assert_int_equal(pw_session_dir_for_output(longpath, buf, sizeof buf), -ENAMETOOLONG);
	assert_int_equal(pw_session_dir_for_output(longpath + 1, buf, sizeof buf), -ENAMETOOLONG);

	/* a base longer than the room kept for it */
	char *xdg = malloc(big + 1);
	assert_non_null(xdg);
	memcpy(xdg, longpath, big + 1);
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	assert_int_equal(pw_session_dir_for_output("/data/out", buf, sizeof buf), -ENAMETOOLONG);
	free(xdg);
	free(longpath);
}

/* ---- other names ---- */

static void test_dir_for_cli(void **state)
{
	char buf[256];
	assert_int_equal(pw_session_dir_for_cli(4242, 0xabcdef0123ull, buf, sizeof buf), 0);
	assert_string_equal(buf, "/run/user/4321/profwrap/s-4242-abcdef0123");
	assert_int_equal(pw_session_dir_for_cli(1, 0, buf, sizeof buf), 0);
	assert_string_equal(buf, "/run/user/4321/profwrap/s-1-0");
	size_t n = strlen(buf);
	assert_int_equal(pw_session_dir_for_cli(1, 0, buf, n), -ENAMETOOLONG);
	assert_int_equal(pw_session_dir_for_cli(1, 0, buf, n + 1), 0);
}

static void test_session_path(void **state)
{
	char buf[64];
	assert_int_equal(pw_session_path("/run/user/1/profwrap/s-1-0", "sock", buf, sizeof buf), 0);
	assert_string_equal(buf, "/run/user/1/profwrap/s-1-0/sock");
	assert_int_equal(pw_session_path("/a", "b", buf, 5), 0);
	assert_string_equal(buf, "/a/b");
	assert_int_equal(pw_session_path("/a", "b", buf, 4), -ENAMETOOLONG);
}

static void test_shm_name(void **state)
{
	char buf[PW_SHM_NAME_MAX];
	assert_int_equal(pw_shm_name(1000, 4242, 0xdeadbeefull, buf, sizeof buf), 0);
	assert_string_equal(buf, "/profwrap.1000.4242.deadbeef");
	assert_int_equal(pw_shm_name(0, 1, 0, buf, sizeof buf), 0);
	assert_string_equal(buf, "/profwrap.0.1.0");
	/* the longest: still fits the hello's field, and one leading slash only (shm_open) */
	assert_int_equal(pw_shm_name(INT32_MAX, INT32_MAX, UINT64_MAX, buf, sizeof buf), 0);
	assert_string_equal(buf, "/profwrap.2147483647.2147483647.ffffffffffffffff");
	assert_true(strlen(buf) < PW_SHM_NAME_MAX);
	assert_null(strchr(buf + 1, '/'));
	size_t n = strlen("/profwrap.0.1.0");
	assert_int_equal(pw_shm_name(0, 1, 0, buf, n), -ENAMETOOLONG);
	assert_int_equal(pw_shm_name(0, 1, 0, buf, n + 1), 0);
	assert_string_equal(buf, "/profwrap.0.1.0");
	/* hello carries the name at a fixed size */
	assert_int_equal(sizeof(((struct pw_hello *)0)->shm_name), PW_SHM_NAME_MAX);
	assert_int_equal(sizeof(struct pw_hello), 16 + PW_SHM_NAME_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash64_vectors),
		cmocka_unit_test_setup_teardown(test_base_xdg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_too_small, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_for_output_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_for_output_same_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_for_output_other_cwd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_for_output_different_dirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_for_output_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_for_cli, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shm_name, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
