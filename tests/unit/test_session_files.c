#define _GNU_SOURCE
/* Unit tests for collector/lib/session_files (the session files of OUT/raw: their names, their lock while the
 * run lives, a rewrite in place, the session directories they name) and pw_raw_name_group of
 * collector/lib/file_names (the report a raw trace's name puts it in). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../collector/lib/file_names.h"
#include "../../collector/lib/session_files.h"

struct tmp {
	char dir[64];
};

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof *t);
	if (!t)
		return -1;
	snprintf(t->dir, sizeof t->dir, "/tmp/pw-test-session-files-XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

static char *slurp(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = 0;
	return buf;
}

/* Whether another process sees the file held (a lock of this process's own does not conflict with itself). */
static int held_elsewhere(const char *dir, const char *name)
{
	pid_t pid = fork();
	if (pid == 0) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY);
		_exit(pw_session_file_held(dfd, name));
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_names(void **state)
{
	(void)state;
	assert_true(pw_is_session_file("session.txt"));
	assert_true(pw_is_session_file("session-0-host-12.txt"));
	assert_true(pw_is_session_file("session-o-0123456789abcdef.txt"));
	assert_false(pw_is_session_file("session-.txt"));
	assert_false(pw_is_session_file("session.txt.tmp"));
	assert_false(pw_is_session_file("0-host-12.pwt"));
	assert_false(pw_is_session_file("sessions.txt"));
}

/* Held while the descriptor (or a copy a child inherited) is open; a rewrite replaces the contents, shorter
 * or longer, and keeps the lock. */
static void test_lock_and_rewrite(void **state)
{
	struct tmp *t = *state;
	char path[128];
	snprintf(path, sizeof path, "%s/session.txt", t->dir);
	int fd = pw_session_file_create(path, "command=a long first text\nsession_dir=/s\n");
	assert_true(fd >= 0);
	assert_int_equal(held_elsewhere(t->dir, "session.txt"), 1);
	assert_int_equal(pw_session_file_rewrite(fd, "session_dir=/s\n"), 0);
	assert_string_equal(slurp(path), "session_dir=/s\n");
	assert_int_equal(pw_session_file_rewrite(fd, "session_dir=/s\ntarget_status=0\n"), 0);
	assert_string_equal(slurp(path), "session_dir=/s\ntarget_status=0\n");
	assert_int_equal(held_elsewhere(t->dir, "session.txt"), 1);
	int copy = dup(fd);
	close(fd);
	assert_int_equal(held_elsewhere(t->dir, "session.txt"), 1); /* the copy keeps it */
	close(copy);
	assert_int_equal(held_elsewhere(t->dir, "session.txt"), 0);
	assert_int_equal(held_elsewhere(t->dir, "no-such-session.txt"), 0);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every session file's session_dir=, whatever line it is on; other files, and session files without one,
 * name none. */
static void test_session_dirs(void **state)
{
	struct tmp *t = *state;
	static const char *const files[][2] = {
		{"session.txt", "command=x\nsession_dir=/run/s-1-aa\ncli_pid=1\n"},
		{"session-o-00ff.txt", "session_dir=/run/o-00ff\ncollector_pid=2\n"},
		{"session-3-h-4.txt", "command=y\ntarget_pid=4\n"},
		{"0-h-5.pwt", "session_dir=/run/not-a-session-file\n"},
	};
	char path[160];
	char **none = pw_session_dirs(t->dir);
	assert_non_null(none);
	assert_null(none[0]);
	pw_session_dirs_free(none);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", t->dir, files[i][0]);
		int fd = pw_session_file_create(path, files[i][1]);
		assert_true(fd >= 0);
		close(fd);
	}
	char **dirs = pw_session_dirs(t->dir);
	assert_non_null(dirs);
	size_t n = 0;
	while (dirs[n])
		n++;
	assert_int_equal(n, 2);
	qsort(dirs, n, sizeof *dirs, cmp_str);
	assert_string_equal(dirs[0], "/run/o-00ff");
	assert_string_equal(dirs[1], "/run/s-1-aa");
	pw_session_dirs_free(dirs);
}

static void test_raw_name_group(void **state)
{
	(void)state;
	assert_int_equal(pw_raw_name_group("0-node-1-123.pwt"), 2);
	assert_int_equal(pw_raw_name_group("12-node-1-123.4.pwt"), 3);
	assert_int_equal(pw_raw_name_group("launcher-node-1-123.pwt"), strlen("launcher-node-1-"));
	assert_int_equal(pw_raw_name_group("launcher-node-1-123.2.pwt"), strlen("launcher-node-1-"));
	assert_int_equal(pw_raw_name_group("launcher-123.pwt"), 0); /* no host: never written */
	assert_int_equal(pw_raw_name_group("session.txt"), 0);
	assert_int_equal(pw_raw_name_group("x-1-2.pwt"), 0);
	assert_int_equal(pw_raw_name_group("-1-2.pwt"), 0);
	assert_int_equal(pw_raw_name_group(".pwt"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_lock_and_rewrite, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_dirs, setup, teardown),
		cmocka_unit_test(test_raw_name_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
