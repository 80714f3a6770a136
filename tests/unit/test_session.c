#define _GNU_SOURCE
/* Unit tests for common/pw_session: the session base directory, session directory names (one per output
 * directory and host, whatever spelling of it a process was given), segment names and their nonces, the
 * FNV-1a hash, the output directory patterns (%h %p %r %q{VAR} %%), files created without following links,
 * the output directories, and the settings read from the environment. The tests
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
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../common/pw_record.h"
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
	assert_string_equal(buf, "/run/user/4321/profwrap/s-4242-000000abcdef0123");
	assert_int_equal(pw_session_dir_for_cli(1, 0, buf, sizeof buf), 0);
	assert_string_equal(buf, "/run/user/4321/profwrap/s-1-0000000000000000");
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
	assert_string_equal(buf, "/profwrap.1000.4242.00000000deadbeef");
	assert_int_equal(pw_shm_name(0, 1, 0, buf, sizeof buf), 0);
	assert_string_equal(buf, "/profwrap.0.1.0000000000000000");
	/* the longest: still fits the hello's field, and one leading slash only (shm_open) */
	assert_int_equal(pw_shm_name(INT32_MAX, INT32_MAX, UINT64_MAX, buf, sizeof buf), 0);
	assert_string_equal(buf, "/profwrap.2147483647.2147483647.ffffffffffffffff");
	assert_true(strlen(buf) < PW_SHM_NAME_MAX);
	assert_null(strchr(buf + 1, '/'));
	size_t n = strlen("/profwrap.0.1.0000000000000000");
	assert_int_equal(pw_shm_name(0, 1, 0, buf, n), -ENAMETOOLONG);
	assert_int_equal(pw_shm_name(0, 1, 0, buf, n + 1), 0);
	assert_string_equal(buf, "/profwrap.0.1.0000000000000000");
	/* hello carries the name at a fixed size */
	assert_int_equal(sizeof(((struct pw_hello *)0)->shm_name), PW_SHM_NAME_MAX);
	assert_int_equal(sizeof(struct pw_hello), 16 + PW_SHM_NAME_MAX);
}

static void test_shm_name_is_of(void **state)
{
	char buf[PW_SHM_NAME_MAX];
	pw_shm_name(1000, 4242, 0x0123456789abcdefull, buf, sizeof buf);
	assert_true(pw_shm_name_is_of(buf, 1000, 4242));
	assert_false(pw_shm_name_is_of(buf, 1000, 424));
	assert_false(pw_shm_name_is_of(buf, 1000, 42420));
	assert_false(pw_shm_name_is_of(buf, 0, 4242));
	assert_false(pw_shm_name_is_of(buf, 100, 4242));
	assert_true(pw_shm_name_is_of("/profwrap.0.1.ffffffffffffffff", 0, 1));
	/* another process's name, a nonce of the wrong length or case, a path, the old unpadded form */
	assert_false(pw_shm_name_is_of("/profwrap.0.2.ffffffffffffffff", 0, 1));
	assert_false(pw_shm_name_is_of("/profwrap.0.1.fffffffffffffff", 0, 1));
	assert_false(pw_shm_name_is_of("/profwrap.0.1.ffffffffffffffff0", 0, 1));
	assert_false(pw_shm_name_is_of("/profwrap.0.1.FFFFFFFFFFFFFFFF", 0, 1));
	assert_false(pw_shm_name_is_of("/profwrap.0.1.ffffffffffffff/f", 0, 1));
	assert_false(pw_shm_name_is_of("/profwrap.0.1.0", 0, 1));
	assert_false(pw_shm_name_is_of("", 0, 1));
}

/* ---- nonces ---- */

/* 256 draws: all different, and every bit both set and clear in some of them. A clock-derived value fails
 * this (its high bits hardly change), and so does a counter. */
static void test_random_u64(void **state)
{
	uint64_t v[256], ones = 0, zeros = 0;
	for (int i = 0; i < 256; i++) {
		v[i] = pw_random_u64();
		ones |= v[i];
		zeros |= ~v[i];
		for (int j = 0; j < i; j++)
			assert_true(v[i] != v[j]);
	}
	assert_int_equal(ones, UINT64_MAX);
	assert_int_equal(zeros, UINT64_MAX);
	/* a fork child draws anew, not its parent's next value */
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		uint64_t c = pw_random_u64();
		_exit(write(pfd[1], &c, sizeof c) == (ssize_t)sizeof c ? 0 : 1);
	}
	uint64_t child = 0, mine = pw_random_u64();
	assert_int_equal(read(pfd[0], &child, sizeof child), sizeof child);
	waitpid(pid, NULL, 0);
	close(pfd[0]);
	close(pfd[1]);
	assert_true(child != mine);
}

/* ---- files and directories ---- */

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void test_create_file(void **state)
{
	struct stat st;
	FILE *f = fopen("victim", "w");
	assert_non_null(f);
	fputs("keep", f);
	fclose(f);
	/* a link planted at the name: replaced, what it points to untouched */
	assert_int_equal(symlink("victim", "new.tmp"), 0);
	int fd = pw_create_file("new.tmp");
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "report", 6), 6);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	assert_string_equal(slurp("victim"), "keep");
	assert_string_equal(slurp("new.tmp"), "report");
	assert_int_equal(lstat("new.tmp", &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_true(fcntl(fd = pw_create_file("new.tmp"), F_GETFD) & FD_CLOEXEC);
	close(fd);
	/* a file of an earlier run: replaced by an empty one, even under a permissive umask */
	mode_t old = umask(0);
	assert_string_equal(slurp("new.tmp"), "");
	assert_int_equal(write(fd = pw_create_file("victim"), "x", 1), 1);
	close(fd);
	umask(old);
	assert_string_equal(slurp("victim"), "x");
	assert_int_equal(stat("victim", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* a dangling link, and one to a directory */
	assert_int_equal(symlink("nowhere/at/all", "dangling"), 0);
	assert_true((fd = pw_create_file("dangling")) >= 0);
	close(fd);
	assert_int_equal(lstat("dangling", &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* what cannot be removed, or a directory that is missing: -1 and the reason */
	assert_int_equal(mkdir("adir", 0700), 0);
	assert_int_equal(pw_create_file("adir"), -1);
	assert_int_equal(errno, EISDIR);
	assert_int_equal(pw_create_file("missing/x"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(pw_create_file("victim/x"), -1);
	assert_int_equal(errno, ENOTDIR);
	unlink("victim");
	unlink("new.tmp");
	unlink("dangling");
	rmdir("adir");
}

static void test_output_dirs(void **state)
{
	char why[512];
	struct stat st;
	mode_t old = umask(0);
	/* made 0700, both */
	assert_int_equal(pw_output_dirs("out", why, sizeof why), 0);
	assert_int_equal(stat("out", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat("out/raw", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* again: fine */
	assert_int_equal(pw_output_dirs("out", why, sizeof why), 0);
	/* a directory that exists keeps its mode; a link to one may be the output directory */
	assert_int_equal(mkdir("shared", 0755), 0);
	assert_int_equal(symlink("shared", "link"), 0);
	assert_int_equal(pw_output_dirs("link", why, sizeof why), 0);
	assert_int_equal(stat("shared", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat("shared/raw", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	umask(old);
	/* raw as a link (to a directory or a file) or a file: refused, and nothing written through it */
	assert_int_equal(mkdir("elsewhere", 0700), 0);
	assert_int_equal(mkdir("o2", 0700), 0);
	assert_int_equal(symlink("../elsewhere", "o2/raw"), 0);
	assert_int_equal(pw_output_dirs("o2", why, sizeof why), -1);
	assert_string_equal(why, "o2/raw is not a directory (a symbolic link); remove it");
	assert_int_equal(unlink("o2/raw"), 0);
	FILE *f = fopen("o2/raw", "w");
	fclose(f);
	assert_int_equal(pw_output_dirs("o2", why, sizeof why), -1);
	assert_string_equal(why, "o2/raw is not a directory (a file); remove it");
	/* the output itself a file, under a file, missing parents */
	assert_int_equal(pw_output_dirs("o2/raw", why, sizeof why), -1);
	assert_string_equal(why, "output o2/raw is not a directory");
	assert_int_equal(pw_output_dirs("o2/raw/x", why, sizeof why), -1);
	assert_string_equal(why, "cannot create output directory o2/raw/x: Not a directory");
	assert_int_equal(pw_output_dirs("no/such", why, sizeof why), -1);
	assert_string_equal(why, "cannot create output directory no/such: No such file or directory");
	unlink("o2/raw");
	rmdir("o2");
	rmdir("elsewhere");
	rmdir("out/raw");
	rmdir("out");
	rmdir("shared/raw");
	rmdir("shared");
	unlink("link");
}

/* ---- settings ---- */

static void parse_ok(enum pw_setting s, const char *v, uint64_t want)
{
	char why[400] = "";
	uint64_t got = 0x5a5a;
	if (pw_setting_parse(s, v, &got, why, sizeof why) != 0)
		fail_msg("%s='%s' refused: %s", pw_setting_env(s), v, why);
	if (got != want)
		fail_msg("%s='%s' = %llu, not %llu", pw_setting_env(s), v, (unsigned long long)got,
			 (unsigned long long)want);
}

static void parse_bad(enum pw_setting s, const char *v, const char *want_why)
{
	char why[400] = "";
	uint64_t got = 0x5a5a;
	if (pw_setting_parse(s, v, &got, why, sizeof why) != -1)
		fail_msg("%s='%s' taken as %llu", pw_setting_env(s), v, (unsigned long long)got);
	assert_string_equal(why, want_why);
}

static void test_setting_sizes(void **state)
{
	parse_ok(PW_SET_RING_SIZE, "4096", 4096);
	parse_ok(PW_SET_RING_SIZE, "64K", 65536);
	parse_ok(PW_SET_RING_SIZE, "8m", 8u << 20);
	parse_ok(PW_SET_RING_SIZE, "1G", 1u << 30);
	parse_ok(PW_SET_RING_SIZE, "1073741824", 1u << 30);
	static const char *const bad_ring[] = {"-1",  "0",  "-4096", "4095", "4097", "2G",	"99999999999999999999",
					       "abc", "",   "12K",   "4x",   "1T",   " 4096", "4096 ", "+4096",
					       "0x1000", "4K4", "18446744073709551616", "17179869184G"};
	for (size_t i = 0; i < sizeof bad_ring / sizeof bad_ring[0]; i++) {
		char want[200];
		snprintf(want, sizeof want, "'%s' is not a power of two from 4K to 1G (bytes; K, M, G suffixes)",
			 bad_ring[i]);
		parse_bad(PW_SET_RING_SIZE, bad_ring[i], want);
	}
	parse_ok(PW_SET_ARENA_SIZE, "4096", 4096);
	parse_ok(PW_SET_ARENA_SIZE, "12345678", 12345678);
	parse_ok(PW_SET_ARENA_SIZE, "4G", 4ull << 30);
	parse_bad(PW_SET_ARENA_SIZE, "4097M", "'4097M' is not a whole number from 4K to 4G (bytes; K, M, G suffixes)");
	parse_bad(PW_SET_ARENA_SIZE, "1", "'1' is not a whole number from 4K to 4G (bytes; K, M, G suffixes)");
	parse_ok(PW_SET_CUPTI_BUFFER_SIZE, "8K", 8192);
	parse_bad(PW_SET_CUPTI_BUFFER_SIZE, "0", "'0' is not a whole number from 4K to 1G (bytes; K, M, G suffixes)");
}

static void test_setting_numbers(void **state)
{
	parse_ok(PW_SET_LANES, "1", 1);
	parse_ok(PW_SET_LANES, "1023", 1023);
	parse_ok(PW_SET_LANES, "007", 7);
	parse_bad(PW_SET_LANES, "0", "'0' is not a whole number from 1 to 1023");
	parse_bad(PW_SET_LANES, "1024", "'1024' is not a whole number from 1 to 1023");
	parse_bad(PW_SET_LANES, "-1", "'-1' is not a whole number from 1 to 1023");
	parse_bad(PW_SET_LANES, "4294967297", "'4294967297' is not a whole number from 1 to 1023");
	parse_bad(PW_SET_LANES, "16K", "'16K' is not a whole number from 1 to 1023");
	parse_ok(PW_SET_CUPTI_BUFFERS, "4096", 4096);
	parse_bad(PW_SET_CUPTI_BUFFERS, "4097", "'4097' is not a whole number from 1 to 4096");
	parse_ok(PW_SET_CUPTI_FLUSH_MS, "3600000", 3600000);
	parse_bad(PW_SET_CUPTI_FLUSH_MS, "0", "'0' is not a whole number from 1 to 3600000");
	parse_ok(PW_SET_RANK, "0", 0);
	parse_ok(PW_SET_RANK, "2147483647", 2147483647);
	parse_bad(PW_SET_RANK, "2147483648", "'2147483648' is not a whole number from 0 to 2147483647");
	parse_bad(PW_SET_RANK, "-1", "'-1' is not a whole number from 0 to 2147483647");
	parse_bad(PW_SET_WORLD_SIZE, "0", "'0' is not a whole number from 1 to 2147483647");
	parse_ok(PW_SET_QUIET, "1", 1);
	parse_ok(PW_SET_FOLLOW_FORK, "0", 0);
	parse_bad(PW_SET_QUIET, "yes", "'yes' is neither 0 nor 1");
	parse_bad(PW_SET_FOLLOW_FORK, "2", "'2' is neither 0 nor 1");
	parse_ok(PW_SET_CLOCK, "tsc", PW_CLOCK_SETTING_TSC);
	parse_ok(PW_SET_CLOCK, "monotonic", PW_CLOCK_SETTING_MONOTONIC);
	parse_bad(PW_SET_CLOCK, "TSC", "'TSC' is neither tsc nor monotonic");
	/* what a message quotes stays one line and short */
	parse_bad(PW_SET_LANES, "1\n2", "'1?2' is not a whole number from 1 to 1023");
	parse_bad(PW_SET_LANES, "0123456789012345678901234567890123456789012345678901234567890123456789",
		  "'012345678901234567890123456789012345678901234567...' is not a whole number from 1 to 1023");
}

static void test_setting_trace(void **state)
{
	uint64_t all = (1u << PW_DOM_COUNT) - 1;
	parse_ok(PW_SET_TRACE, "all", all);
	parse_ok(PW_SET_TRACE, "io", 1u << pw_domain_from_name("io", 2));
	parse_ok(PW_SET_TRACE, "io,wait", (1u << pw_domain_from_name("io", 2)) | (1u << pw_domain_from_name("wait", 4)));
	parse_ok(PW_SET_TRACE, "io,all", all);
	char known[300] = "(known: all";
	for (int d = 0; d < PW_DOM_COUNT; d++)
		snprintf(known + strlen(known), sizeof known - strlen(known), ", %s", pw_domain_names[d]);
	strcat(known, ")");
	char want[512];
	snprintf(want, sizeof want, "'io,bogus' holds the unknown domain 'bogus' %s", known);
	parse_bad(PW_SET_TRACE, "io,bogus", want);
	snprintf(want, sizeof want, "'IO' holds the unknown domain 'IO' %s", known);
	parse_bad(PW_SET_TRACE, "IO", want);
	static const char *const empty[] = {"", ",", "io,", ",io", "io,,wait"};
	for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
		snprintf(want, sizeof want, "'%s' holds an empty domain name %s", empty[i], known);
		parse_bad(PW_SET_TRACE, empty[i], want);
	}
}

/* A fake environment for pw_settings_from_env. */
static const char *fake_env_vars[16][2];

static char *fake_env(const char *name)
{
	for (size_t i = 0; i < 16 && fake_env_vars[i][0]; i++)
		if (strcmp(fake_env_vars[i][0], name) == 0)
			return (char *)fake_env_vars[i][1];
	return NULL;
}

static void test_settings_from_env(void **state)
{
	struct pw_settings st;
	char why[400] = "";
	memset(fake_env_vars, 0, sizeof fake_env_vars);
	/* nothing set: the defaults */
	assert_int_equal(pw_settings_from_env(&st, fake_env, 0, why, sizeof why), 0);
	assert_int_equal(st.value[PW_SET_RING_SIZE], 2u << 20);
	assert_int_equal(st.value[PW_SET_LANES], 128);
	assert_int_equal(st.value[PW_SET_ARENA_SIZE], 16u << 20);
	assert_int_equal(st.value[PW_SET_CUPTI_BUFFER_SIZE], 2u << 20);
	assert_int_equal(st.value[PW_SET_CUPTI_BUFFERS], 128);
	assert_int_equal(st.value[PW_SET_CUPTI_FLUSH_MS], 1000);
	assert_int_equal(st.value[PW_SET_TRACE], (1u << PW_DOM_COUNT) - 1);
	assert_int_equal(st.value[PW_SET_FOLLOW_FORK], 1);
	assert_int_equal(st.value[PW_SET_QUIET], 0);
	assert_int_equal(st.value[PW_SET_CLOCK], PW_CLOCK_SETTING_AUTO);
	assert_string_equal(why, "");
	/* good values taken, empty ones are unset, bad ones refused (the first described) with their default */
	const char *vars[][2] = {{"PROFWRAP_LANES", "-1"},	   {"PROFWRAP_RING_SIZE", "64K"},
				 {"PROFWRAP_ARENA_SIZE", ""},	   {"PROFWRAP_TRACE", "io,nope"},
				 {"PROFWRAP_CLOCK", "monotonic"}, {"PROFWRAP_QUIET", "1"},
				 {"PROFWRAP_WORLD_SIZE", "0"},	   {NULL, NULL}};
	memcpy(fake_env_vars, vars, sizeof vars);
	assert_int_equal(pw_settings_from_env(&st, fake_env, 0, why, sizeof why), 3);
	assert_string_equal(why, "PROFWRAP_LANES='-1' is not a whole number from 1 to 1023");
	assert_int_equal(st.value[PW_SET_LANES], 128);
	assert_int_equal(st.value[PW_SET_RING_SIZE], 65536);
	assert_int_equal(st.value[PW_SET_ARENA_SIZE], 16u << 20);
	assert_int_equal(st.value[PW_SET_TRACE], (1u << PW_DOM_COUNT) - 1);
	assert_int_equal(st.value[PW_SET_CLOCK], PW_CLOCK_SETTING_MONOTONIC);
	assert_int_equal(st.value[PW_SET_QUIET], 1);
	/* skipped: what the caller sets itself is neither read nor refused */
	strcpy(why, "");
	unsigned skip = 1u << PW_SET_LANES | 1u << PW_SET_TRACE | 1u << PW_SET_RING_SIZE;
	assert_int_equal(pw_settings_from_env(&st, fake_env, skip, why, sizeof why), 1);
	assert_string_equal(why, "PROFWRAP_WORLD_SIZE='0' is not a whole number from 1 to 2147483647");
	assert_int_equal(st.value[PW_SET_RING_SIZE], 2u << 20);
	assert_int_equal(st.value[PW_SET_CLOCK], PW_CLOCK_SETTING_MONOTONIC);
	memset(fake_env_vars, 0, sizeof fake_env_vars);
}

/* ---- output directory patterns ---- */

/* The variables the %r and %q{} tests change, saved by expand_setup and put back by expand_teardown. */
static const char *const expand_vars[] = {"PROFWRAP_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
					  "SLURM_PROCID", "LOCAL_RANK", "PW_T_VAR", "PW_T_UNSET", "PW_T_LONG"};
#define N_EXPAND_VARS (sizeof expand_vars / sizeof expand_vars[0])

struct expand_saved {
	struct saved *base; /* setup's */
	char *vals[N_EXPAND_VARS]; /* NULL: was unset */
};

static int expand_setup(void **state)
{
	if (setup(state))
		return -1;
	struct expand_saved *e = calloc(1, sizeof *e);
	if (!e)
		return -1;
	e->base = *state;
	for (size_t i = 0; i < N_EXPAND_VARS; i++) {
		const char *v = getenv(expand_vars[i]);
		e->vals[i] = v ? strdup(v) : NULL;
		unsetenv(expand_vars[i]); /* every test starts with none of them */
	}
	*state = e;
	return 0;
}

static int expand_teardown(void **state)
{
	struct expand_saved *e = *state;
	for (size_t i = 0; i < N_EXPAND_VARS; i++) {
		if (e->vals[i])
			setenv(expand_vars[i], e->vals[i], 1);
		else
			unsetenv(expand_vars[i]);
		free(e->vals[i]);
	}
	*state = e->base;
	free(e);
	return teardown(state);
}

/* Expands pat into a 4096-byte buffer and checks the result. */
static void expand_is(const char *pat, const char *want)
{
	char buf[4096], why[512] = "";
	memset(buf, 'z', sizeof buf);
	int rc = pw_expand_output(pat, buf, sizeof buf, why, sizeof why);
	if (rc != 0)
		fail_msg("pw_expand_output(\"%s\") = %d (%s), expected \"%s\"", pat, rc, why, want);
	if (strcmp(buf, want) != 0)
		fail_msg("pw_expand_output(\"%s\") = \"%s\", expected \"%s\"", pat, buf, want);
}

/* Expects pat to be refused with a one-line reason that holds each of the NULL-terminated words. */
static void expand_fails(const char *pat, size_t size, ...)
{
	char buf[4096], why[512];
	memset(why, 0, sizeof why);
	assert_true(size <= sizeof buf);
	int rc = pw_expand_output(pat, buf, size, why, sizeof why);
	if (rc != -1)
		fail_msg("pw_expand_output(\"%s\", size %zu) = %d (\"%.*s\"), expected -1", pat, size, rc,
			 (int)(rc == 0 ? strnlen(buf, size) : 0), buf);
	if (!why[0] || strchr(why, '\n'))
		fail_msg("pw_expand_output(\"%s\"): the reason is not one line: \"%s\"", pat, why);
	va_list ap;
	va_start(ap, size);
	for (const char *w; (w = va_arg(ap, const char *));)
		if (!strstr(why, w))
			fail_msg("pw_expand_output(\"%s\"): the reason \"%s\" does not say \"%s\"", pat, why, w);
	va_end(ap);
}

/* Without a %, the pattern is the path; %% is one '%' (and what follows it is not a sequence). */
static void test_expand_plain(void **state)
{
	expand_is("", "");
	expand_is("out", "out");
	expand_is("/data/run 1/out-x", "/data/run 1/out-x");
	expand_is("%%", "%");
	expand_is("a%%b", "a%b");
	expand_is("100%%", "100%");
	expand_is("%%h%%p%%r%%q{X}", "%h%p%r%q{X}");
	expand_is("%%%%", "%%");
	/* a result that fits exactly (with its NUL) */
	char buf[8], why[128];
	assert_int_equal(pw_expand_output("abcdefg", buf, sizeof buf, why, sizeof why), 0);
	assert_string_equal(buf, "abcdefg");
	assert_int_equal(pw_expand_output("ab%%", buf, 4, why, sizeof why), 0);
	assert_string_equal(buf, "ab%");
}

/* %h the host name, %p the pid, %q{NAME} the variable's value (empty when unset), in any combination. */
static void test_expand_sequences(void **state)
{
	char host[256] = "", want[4096];
	assert_int_equal(gethostname(host, sizeof host - 1), 0);
	assert_true(host[0] != 0);
	expand_is("%h", host);
	snprintf(want, sizeof want, "/out/%s/x", host);
	expand_is("/out/%h/x", want);

	snprintf(want, sizeof want, "%d", (int)getpid());
	expand_is("%p", want);
	snprintf(want, sizeof want, "p%dp%d", (int)getpid(), (int)getpid());
	expand_is("p%pp%p", want);

	setenv("PW_T_VAR", "job42", 1);
	expand_is("%q{PW_T_VAR}", "job42");
	expand_is("out-%q{PW_T_VAR}-%q{PW_T_VAR}", "out-job42-job42");
	/* the value is taken as it is: no second expansion */
	setenv("PW_T_VAR", "a%hb%z", 1);
	expand_is("[%q{PW_T_VAR}]", "[a%hb%z]");
	setenv("PW_T_VAR", "", 1);
	expand_is("x%q{PW_T_VAR}y", "xy");
	/* unset: empty */
	expand_is("%q{PW_T_UNSET}", "");
	expand_is("a%q{PW_T_UNSET}b", "ab");
	/* a } after the sequence is the path's */
	setenv("PW_T_VAR", "v", 1);
	expand_is("%q{PW_T_VAR}}", "v}");

	snprintf(want, sizeof want, "/o/%s-v-%d-%%-end", host, (int)getpid());
	expand_is("/o/%h-%q{PW_T_VAR}%q{PW_T_UNSET}-%p-%%-end", want);
}

/* %r: the rank from the launcher's variables, the first that holds a number; 0 when none does. */
static void test_expand_rank(void **state)
{
	expand_is("r%r", "r0");
	setenv("LOCAL_RANK", "3", 1); /* not a rank */
	expand_is("r%r", "r0");
	setenv("RANK", "7", 1);
	expand_is("r%r", "r7");
	expand_is("%r-%r", "7-7");
	setenv("PROFWRAP_RANK", "12", 1);
	expand_is("r%r", "r12");
	setenv("PROFWRAP_RANK", "garbage", 1);
	expand_is("r%r", "r7");
	unsetenv("PROFWRAP_RANK");
	unsetenv("RANK");
	setenv("OMPI_COMM_WORLD_RANK", "2", 1);
	expand_is("out-%r", "out-2");
	unsetenv("OMPI_COMM_WORLD_RANK");
	setenv("SLURM_PROCID", "1023", 1);
	expand_is("out-%r", "out-1023");
	setenv("SLURM_PROCID", "-1", 1);
	expand_is("out-%r", "out-0");
}

/* Refused with a reason: an unknown sequence (named), a % at the end, %q without {, an unclosed %q{, an
 * empty or too long name, a result longer than the buffer. */
static void test_expand_errors(void **state)
{
	expand_fails("x%z", 4096, "%z", "x%z", NULL);
	expand_fails("%Z", 4096, "%Z", NULL);
	expand_fails("%H", 4096, "%H", NULL);
	expand_fails("a/%h/%y/b", 4096, "%y", NULL);
	expand_fails("x%", 4096, "x%", NULL);
	expand_fails("%q", 4096, "%q", NULL);
	expand_fails("%qX", 4096, "%q", NULL);
	expand_fails("%q(PW_T_VAR)", 4096, "%q", NULL);
	expand_fails("%q{PW_T_VAR", 4096, "%q{", NULL);
	expand_fails("%q{", 4096, "%q{", NULL);
	expand_fails("a%q{}b", 4096, "%q{", NULL);
	/* a name longer than any variable's the expansion keeps room for */
	char pat[600];
	snprintf(pat, sizeof pat, "%%q{");
	memset(pat + 3, 'N', 500);
	snprintf(pat + 503, sizeof pat - 503, "}");
	expand_fails(pat, 4096, "%q{", NULL);
	/* an error after good sequences is still an error */
	expand_fails("%h-%p-%%-%r-%w", 4096, "%w", NULL);

	/* too long: the literal text, a sequence's value, a variable's value */
	expand_fails("abcdefgh", 8, "too long", NULL);
	expand_fails("abcdefg%%", 8, "too long", NULL);
	char host[256] = "";
	assert_int_equal(gethostname(host, sizeof host - 1), 0);
	expand_fails("%h", strlen(host), "too long", NULL);
	setenv("PW_T_LONG", "0123456789", 1);
	expand_fails("%q{PW_T_LONG}", 10, "too long", NULL);
	expand_fails("dir/%q{PW_T_LONG}", 14, "too long", NULL);
	char buf[16], why[128];
	assert_int_equal(pw_expand_output("dir/%q{PW_T_LONG}", buf, 15, why, sizeof why), 0);
	assert_string_equal(buf, "dir/0123456789");
	/* a reason buffer of one byte still works (truncated, NUL-terminated) */
	char tiny[1] = {'x'};
	assert_int_equal(pw_expand_output("x%z", buf, sizeof buf, tiny, sizeof tiny), -1);
	assert_int_equal(tiny[0], 0);
}

/* The host name counts: two hosts (UTS namespaces, as a test simulates nodes) writing into one output
 * directory get two session directories, each the hash of the path and its own host; %h gives each its own
 * name. Needs CAP_SYS_ADMIN for unshare(CLONE_NEWUTS): skipped without it. */
struct in_host {
	int rc;        /* 0: ok; -1: unshare or sethostname failed (errno in err) */
	int err;
	char dir[512]; /* pw_session_dir_for_output("/data/shared-out") */
	char expanded[512]; /* pw_expand_output("out-%h") */
};

static struct in_host as_host(const char *host)
{
	struct in_host res;
	memset(&res, 0, sizeof res);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char why[256];
		close(pfd[0]);
		if (unshare(CLONE_NEWUTS) != 0 || sethostname(host, strlen(host)) != 0) {
			res.rc = -1;
			res.err = errno;
		} else if (pw_session_dir_for_output("/data/shared-out", res.dir, sizeof res.dir) != 0 ||
			   pw_expand_output("out-%h", res.expanded, sizeof res.expanded, why, sizeof why) != 0) {
			res.rc = -2;
		}
		ssize_t w = write(pfd[1], &res, sizeof res);
		_exit(w == (ssize_t)sizeof res ? 0 : 1);
	}
	close(pfd[1]);
	ssize_t got = read(pfd[0], &res, sizeof res);
	close(pfd[0]);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(got, (ssize_t)sizeof res);
	return res;
}

static void test_dir_for_output_per_host(void **state)
{
	struct in_host a = as_host("nodeA"), b = as_host("nodeB");
	if (a.rc == -1) {
		print_message("unshare(CLONE_NEWUTS): %s: not root, the per-host part is skipped\n", strerror(a.err));
		skip();
	}
	assert_int_equal(a.rc, 0);
	assert_int_equal(b.rc, 0);
	char want[512];
	snprintf(want, sizeof want, "/run/user/4321/profwrap/o-%016llx", (unsigned long long)fnv1a("/data/shared-out\nnodeA"));
	assert_string_equal(a.dir, want);
	snprintf(want, sizeof want, "/run/user/4321/profwrap/o-%016llx", (unsigned long long)fnv1a("/data/shared-out\nnodeB"));
	assert_string_equal(b.dir, want);
	assert_string_not_equal(a.dir, b.dir);
	assert_string_equal(a.expanded, "out-nodeA");
	assert_string_equal(b.expanded, "out-nodeB");
	/* and neither is this host's */
	char here[512];
	dir_for("/data/shared-out", here, sizeof here);
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	if (strcmp(host, "nodeA") != 0)
		assert_string_not_equal(here, a.dir);
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
		cmocka_unit_test(test_shm_name_is_of),
		cmocka_unit_test(test_random_u64),
		cmocka_unit_test_setup_teardown(test_create_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_dirs, setup, teardown),
		cmocka_unit_test(test_setting_sizes),
		cmocka_unit_test(test_setting_numbers),
		cmocka_unit_test(test_setting_trace),
		cmocka_unit_test(test_settings_from_env),
		cmocka_unit_test_setup_teardown(test_dir_for_output_per_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expand_plain, expand_setup, expand_teardown),
		cmocka_unit_test_setup_teardown(test_expand_sequences, expand_setup, expand_teardown),
		cmocka_unit_test_setup_teardown(test_expand_rank, expand_setup, expand_teardown),
		cmocka_unit_test_setup_teardown(test_expand_errors, expand_setup, expand_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
