#define _GNU_SOURCE
/* Unit tests for collector/rawfile: files written with pw_raw_write_header/pw_raw_write_chunk into a private
 * directory and read back with pw_raw_read through a visitor that copies what it is handed. Covers the round
 * trip of every chunk and record field, the tick -> ns conversion, every kind of damage the reader documents,
 * and a seeded mutation run that checks every pointer the reader hands out lies inside the file. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../collector/lib/rawfile.h"
#include "raw_writer.h"

/* ---- a private directory and one file path in it ---- */

struct tmp {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof *t);
	if (!t)
		return -1;
	snprintf(t->dir, sizeof t->dir, "/tmp/pw-test-rawfile-XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	snprintf(t->path, sizeof t->path, "%s/0-4242.pwt", t->dir);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;
	unlink(t->path);
	rmdir(t->dir);
	free(t);
	return 0;
}

/* ---- writing ---- */

static int create(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	return fd;
}

/* Bytes exactly as given: for damage the writer would never produce. */
static void put_raw(int fd, const void *p, size_t len)
{
	assert_int_equal(write(fd, p, len), (ssize_t)len);
}

static void put_header(int fd)
{
	assert_int_equal(pw_raw_write_header(fd), 0);
}

static struct pw_raw_proc mkproc(int pid, enum pw_clock_kind kind, uint64_t ticks0, uint64_t ns0)
{
	struct pw_raw_proc p = {0};
	p.pid = pid;
	p.ppid = 1;
	p.rank = 0;
	p.world_size = 1;
	p.clock_kind = kind;
	p.domain_mask = 0x1f;
	p.clock0.ticks = ticks0;
	p.clock0.ns = ns0;
	return p;
}

static void put_simple_proc(int fd, int pid)
{
	put_proc(fd, mkproc(pid, PW_CLOCK_MONOTONIC, 1000, 1000), "prog", 4, "/bin/prog", "host");
}

static off_t here(int fd)
{
	return lseek(fd, 0, SEEK_CUR);
}

/* ---- reading: a visitor that copies everything it is handed ---- */

#define MAX_EV 64
#define MAX_STR 256

struct got_event {
	struct pw_rec_call rec;
	uint64_t t0_ns, t1_ns;
	int has_str;
	char str[MAX_STR];
	uint32_t str_len;
	int64_t dirfd;
	char cwd[MAX_STR]; /* "(none)" when the reader gave none */
};

struct got {
	int procs;
	struct pw_raw_proc proc;
	char argv[MAX_STR], exe[MAX_STR], host[MAX_STR];
	uint64_t start_ns;
	int nev;
	struct got_event ev[MAX_EV];
	int nlost;
	uint32_t lane[16];
	uint64_t lost_total[16];
	int ends;
	struct pw_raw_end end;
	uint64_t end_ns;
	int has_exec;
	char exec_path[MAX_STR];
	char order[128]; /* P(roc) E(vent) L(ost) X (end), in delivery order */
	size_t norder;
};

static void note(struct got *g, char c)
{
	if (g->norder + 1 < sizeof g->order)
		g->order[g->norder++] = c;
}

static void copy_bounded(char *dst, const char *src, uint32_t len)
{
	size_t n = len < MAX_STR - 1 ? len : MAX_STR - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

static void got_proc(void *ctx, const struct pw_raw_proc_view *p)
{
	struct got *g = ctx;
	g->procs++;
	note(g, 'P');
	/* read through the pointer the reader hands out, as the analysis does */
	g->proc.pid = p->proc->pid;
	memcpy(&g->proc, p->proc, sizeof g->proc);
	copy_bounded(g->argv, p->argv, p->proc->argv_len);
	copy_bounded(g->exe, p->exe, p->proc->exe_len);
	copy_bounded(g->host, p->host, p->proc->host_len);
	g->start_ns = p->start_ns;
}

static void got_event(void *ctx, const struct pw_raw_event *e)
{
	struct got *g = ctx;
	note(g, 'E');
	if (g->nev++ >= MAX_EV)
		return; /* counted, not kept */
	struct got_event *o = &g->ev[g->nev - 1];
	memcpy(&o->rec, e->rec, sizeof o->rec);
	o->t0_ns = e->t0_ns;
	o->t1_ns = e->t1_ns;
	o->has_str = e->str != NULL;
	o->str_len = e->str_len;
	if (e->str)
		copy_bounded(o->str, e->str, e->str_len);
	o->dirfd = e->dirfd;
	if (e->cwd)
		copy_bounded(o->cwd, e->cwd, e->cwd_len);
	else
		strcpy(o->cwd, "(none)");
}

static void got_lost(void *ctx, uint32_t lane, uint64_t total)
{
	struct got *g = ctx;
	note(g, 'L');
	if (g->nlost++ >= 16)
		return;
	g->lane[g->nlost - 1] = lane;
	g->lost_total[g->nlost - 1] = total;
}

static void got_end(void *ctx, const struct pw_raw_end *end, uint64_t end_ns, const char *exec_path)
{
	struct got *g = ctx;
	note(g, 'X');
	g->ends++;
	g->end = *end;
	g->end_ns = end_ns;
	g->has_exec = exec_path != NULL;
	if (exec_path)
		copy_bounded(g->exec_path, exec_path, (uint32_t)strlen(exec_path));
}

static const struct pw_raw_visitor visitor = {.proc = got_proc, .event = got_event, .lost = got_lost, .end = got_end};

/* Reads path into a fresh *g; returns pw_raw_read's result. */
static int read_into(const char *path, struct got *g, uint64_t *skipped, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	*skipped = 0;
	err[0] = 0;
	return pw_raw_read(path, &visitor, g, skipped, err, errlen);
}

/* ---- isolation: hostile input is read in a child process, so that a crash or a sanitizer abort fails that
 * test alone instead of ending the run. The child reports through shared memory and its exit status; it must
 * not use cmocka's asserts. ---- */

struct shared {
	char msg[512]; /* what the child was doing, or why it failed */
	int rc;
	uint64_t skipped;
	char err[512];
	struct got g;
};

static struct shared *shared_new(void)
{
	struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(sh != MAP_FAILED);
	memset(sh, 0, sizeof *sh);
	return sh;
}

static void shared_free(struct shared *sh)
{
	munmap(sh, sizeof *sh);
}

/* Runs fn(arg, sh) in a child; fails the test if the child did not exit 0. */
static void run_isolated(void (*fn)(void *arg, struct shared *sh), void *arg, struct shared *sh)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fn(arg, sh);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fail_msg("child killed by signal %d while: %s", WTERMSIG(st), sh->msg);
	if (WEXITSTATUS(st) != 0)
		fail_msg("child exited %d while: %s", WEXITSTATUS(st), sh->msg);
}

/* The child's half of a plain read: pw_raw_read into sh->g. arg is the path. */
static void read_in_child(void *arg, struct shared *sh)
{
	const char *path = arg;
	snprintf(sh->msg, sizeof sh->msg, "reading %s", path);
	sh->rc = read_into(path, &sh->g, &sh->skipped, sh->err, sizeof sh->err);
}

static void assert_rec_equal(const struct pw_rec_call *a, const struct pw_rec_call *b)
{
	assert_int_equal(a->h.type, b->h.type);
	assert_int_equal(a->h.size8, b->h.size8);
	assert_int_equal(a->h.err, b->h.err);
	assert_int_equal(a->h.tid, b->h.tid);
	assert_int_equal(a->t0, b->t0);
	assert_int_equal(a->t1, b->t1);
	assert_int_equal(a->ret, b->ret);
	assert_int_equal(a->arg0, b->arg0);
	assert_int_equal(a->arg1, b->arg1);
}

/* ---- round trip ---- */

/* Every chunk type and every field comes back as written, in file order; strings resolve only for the kinds
 * that carry one (read and write have arg1 values that happen to be defined refs, and must not resolve). */
static void test_roundtrip_all_fields(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	static const char argv[] = "python\0train.py\0--epochs=2"; /* 26 bytes, two separators */
	struct pw_raw_proc p = mkproc(4242, PW_CLOCK_MONOTONIC, 1000000, 1000000);
	p.ppid = 4200;
	p.rank = 3;
	p.world_size = 8;
	p.domain_mask = 0x15;
	p.start_realtime_ns = 1700000000123456789ull;
	p.image = 2;
	put_proc(fd, p, argv, sizeof argv - 1, "/usr/bin/python3", "node17");
	put_clock(fd, 1000000, 1000000);
	put_string(fd, 8, "/data/train.bin");
	put_string(fd, 24, "/usr/lib/libfoo.so");
	put_string(fd, 48, "/dev/pts/0");
	put_string(fd, 64, "/bin/true");
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_OPEN, 101, 1000100, 1000200, 3, 3, 8, 0),
		mkrec(PW_EV_READ, 101, 1000300, 1000450, 24, 3, 24, 0),
		mkrec(PW_EV_WRITE, 102, 1000500, 1000510, 8, 1, 8, 0),
		mkrec(PW_EV_CLOSE, 101, 1000600, 1000601, 0, 3, 0, 0),
		mkrec(PW_EV_FD_INFO, 101, 1000000, 1000000, 0, 1, 48, 0),
		mkrec(PW_EV_DLOPEN, 101, 1000700, 1009700, 0x55aa00001000ll, 0, 24, 0),
		mkrec(PW_EV_OPENAT, 103, 1010000, 1010005, -1, (uint64_t)-1, 8, ENOENT),
	};
	put_records(fd, recs, 7);
	put_lost(fd, 1, 7);
	put_clock(fd, 2000000, 2000000);
	struct pw_raw_end e = {.how = PW_END_EXECED, .end_ticks = 1500000, .exec_ref = 64, .io_rchar = 123,
				 .io_wchar = 456, .io_valid = 1, .arena_dropped = 2, .guard_skipped = 3,
				 .bad_records = 4, .stacks_dropped = 5, .samples_skipped = 6, .shm_refused = 7};
	put_end(fd, &e);
	close(fd);

	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(err, "");
	assert_int_equal(skipped, 0);
	assert_string_equal(g.order, "PEEEEEEELX");

	assert_int_equal(g.procs, 1);
	assert_int_equal(g.proc.pid, 4242);
	assert_int_equal(g.proc.ppid, 4200);
	assert_int_equal(g.proc.rank, 3);
	assert_int_equal(g.proc.world_size, 8);
	assert_int_equal(g.proc.clock_kind, PW_CLOCK_MONOTONIC);
	assert_int_equal(g.proc.domain_mask, 0x15);
	assert_int_equal(g.proc.clock0.ticks, 1000000);
	assert_int_equal(g.proc.clock0.ns, 1000000);
	assert_int_equal(g.proc.start_realtime_ns, 1700000000123456789ull);
	assert_int_equal(g.proc.argv_len, 26);
	assert_int_equal(g.proc.exe_len, 16);
	assert_int_equal(g.proc.host_len, 6);
	assert_int_equal(g.proc.image, 2);
	assert_memory_equal(g.argv, argv, 26);
	assert_string_equal(g.exe, "/usr/bin/python3");
	assert_string_equal(g.host, "node17");
	assert_int_equal(g.start_ns, 1000000);

	assert_int_equal(g.nev, 7);
	for (int i = 0; i < 7; i++) {
		assert_rec_equal(&g.ev[i].rec, &recs[i]);
		/* monotonic: ticks are ns */
		assert_int_equal(g.ev[i].t0_ns, recs[i].t0);
		assert_int_equal(g.ev[i].t1_ns, recs[i].t1);
	}
	assert_true(g.ev[0].has_str);
	assert_int_equal(g.ev[0].str_len, 15);
	assert_string_equal(g.ev[0].str, "/data/train.bin");
	assert_false(g.ev[1].has_str); /* read: arg1 = 24 is a byte count, not the ref 24 */
	assert_int_equal(g.ev[1].str_len, 0);
	assert_false(g.ev[2].has_str); /* write: arg1 = 8 likewise */
	assert_false(g.ev[3].has_str);
	assert_true(g.ev[4].has_str);
	assert_string_equal(g.ev[4].str, "/dev/pts/0");
	assert_int_equal(g.ev[4].str_len, 10);
	assert_true(g.ev[5].has_str);
	assert_string_equal(g.ev[5].str, "/usr/lib/libfoo.so");
	assert_true(g.ev[6].has_str); /* a failed open still names its path */
	assert_string_equal(g.ev[6].str, "/data/train.bin");

	assert_int_equal(g.nlost, 1);
	assert_int_equal(g.lane[0], 1);
	assert_int_equal(g.lost_total[0], 7);

	assert_int_equal(g.ends, 1);
	assert_int_equal(g.end.how, PW_END_EXECED);
	assert_int_equal(g.end.exit_status, 0);
	assert_int_equal(g.end.end_ticks, 1500000);
	assert_int_equal(g.end.exec_ref, 64);
	assert_int_equal(g.end.io_rchar, 123);
	assert_int_equal(g.end.io_wchar, 456);
	assert_int_equal(g.end.io_valid, 1);
	assert_int_equal(g.end.arena_dropped, 2);
	assert_int_equal(g.end.guard_skipped, 3);
	assert_int_equal(g.end.stacks_dropped, 5);
	assert_int_equal(g.end.samples_skipped, 6);
	assert_int_equal(g.end.shm_refused, 7);
	assert_int_equal(g.end.bad_records, 4);
	assert_int_equal(g.end_ns, 1500000);
	assert_true(g.has_exec);
	assert_string_equal(g.exec_path, "/bin/true");
}

/* An END written before shm_refused existed (its payload ends there) still reads, with shm_refused 0. */
static void test_end_without_shm_refused(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_proc(fd, mkproc(7, PW_CLOCK_TSC, 1000, 5000), "a", 1, "/a", "h");
	struct pw_raw_end e = {.how = PW_END_EXITED, .exit_status = 4, .guard_skipped = 9, .shm_refused = 77};
	put_chunk(fd, PW_CHUNK_END, &e, offsetof(struct pw_raw_end, shm_refused), NULL, 0);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(g.order, "PX");
	assert_int_equal(g.end.exit_status, 4);
	assert_int_equal(g.end.guard_skipped, 9);
	assert_int_equal(g.end.shm_refused, 0);
}

/* An END of an exited process: exit status comes back, no exec path, and end_ticks 0 means "no time" (0, not
 * tick 0 on the clock line, which is 4500 ns here). */
static void test_roundtrip_end_exited(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_proc(fd, mkproc(7, PW_CLOCK_TSC, 1000, 5000), "a", 1, "/a", "h");
	put_clock(fd, 3000, 6000);
	struct pw_raw_end e = {.how = PW_END_EXITED, .exit_status = 3};
	put_end(fd, &e);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(g.order, "PX");
	assert_int_equal(g.end.how, PW_END_EXITED);
	assert_int_equal(g.end.exit_status, 3);
	assert_int_equal(g.end_ns, 0);
	assert_false(g.has_exec);
}

/* Of the call kinds, those with a string in arg1 are exactly open, fd-info, dlopen, (failed) exec and fork
 * (the path a vfork child exec'd, a spawn's program). */
static void test_kind_has_string(void **state)
{
	for (int k = PW_K_PLAIN; k <= PW_K_DUP; k++) {
		int want = k == PW_K_OPEN || k == PW_K_FDINFO || k == PW_K_DLOPEN || k == PW_K_EXEC || k == PW_K_FORK;
		if (!!pw_kind_has_string((enum pw_event_kind)k) != want)
			fail_msg("kind %d: pw_kind_has_string gives %d, want %d", k, pw_kind_has_string(k), want);
	}
}

/* An open hands over its directory descriptor and working directory, stacked or not; an older writer's open
 * (a call's size: the bytes after it, stacked, are its stack) and any other record AT_FDCWD and none. */
static void test_open_base(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	put_string(fd, 8, "f.txt");
	put_string(fd, 24, "/w/b");
	put_string(fd, 40, "/stack");
	struct pw_rec_open o[2] = {{mkrec(PW_EV_OPEN, 1, 1100, 1200, 3, 3, 8, 0), AT_FDCWD, 24},
				   {mkrec(PW_EV_OPENAT, 1, 1300, 1400, 4, 4, 8, 0), 3, 0}};
	for (int i = 0; i < 2; i++)
		o[i].c.h.size8 = sizeof o[i] / 8;
	struct {
		struct pw_rec_open o;
		uint64_t stack;
	} so = {{mkrec(PW_EV_OPENAT | PW_REC_STACK, 1, 1500, 1600, 5, 5, 8, 0), 4, 0}, 40};
	so.o.c.h.size8 = sizeof so / 8;
	struct {
		struct pw_rec_call c;
		uint64_t stack;
	} old = {mkrec(PW_EV_OPENAT | PW_REC_STACK, 1, 1700, 1800, 6, 6, 8, 0), 24};
	old.c.h.size8 = sizeof old / 8;
	struct pw_rec_call plain[2] = {mkrec(PW_EV_OPEN, 1, 1900, 2000, 7, 7, 8, 0),
				       mkrec(PW_EV_READ, 1, 2100, 2200, 1, 7, 1, 0)};
	put_chunk(fd, PW_CHUNK_RECORDS, o, sizeof o, &so, sizeof so);
	put_chunk(fd, PW_CHUNK_RECORDS, &old, sizeof old, plain, sizeof plain);
	close(fd);
	struct got g;
	uint64_t skipped = 0;
	char err[512] = "";
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_int_equal(g.nev, 6);
	static const int64_t dirfd[] = {AT_FDCWD, 3, 4, AT_FDCWD, AT_FDCWD, AT_FDCWD};
	static const char *const cwd[] = {"/w/b", "(none)", "(none)", "(none)", "(none)", "(none)"};
	for (int i = 0; i < 6; i++) {
		assert_int_equal(g.ev[i].dirfd, dirfd[i]);
		assert_string_equal(g.ev[i].cwd, cwd[i]);
	}
	assert_int_equal(skipped, 0);
}

/* The visitor may leave callbacks NULL. */
static void test_null_callbacks(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 7);
	put_string(fd, 8, "/x");
	struct pw_rec_call r = mkrec(PW_EV_OPEN, 1, 1100, 1200, 3, 3, 8, 0);
	put_records(fd, &r, 1);
	put_lost(fd, 0, 1);
	struct pw_raw_end e = {.how = PW_END_EXITED, .end_ticks = 1300};
	put_end(fd, &e);
	close(fd);
	static const struct pw_raw_visitor none = {0};
	uint64_t skipped = 0;
	char err[256] = "";
	assert_int_equal(pw_raw_read(t->path, &none, NULL, &skipped, err, sizeof err), 0);
	assert_int_equal(skipped, 0);
}

/* ---- clock conversion ---- */

/* TSC: pairs (1000 -> 5000) and (3000 -> 6000) give 0.5 ns per tick through (1000, 5000), before the first
 * pair and past the last one too. */
static void test_clock_tsc_two_pairs(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_proc(fd, mkproc(9, PW_CLOCK_TSC, 1000, 5000), "a", 1, "/a", "h");
	put_clock(fd, 1000, 5000);
	put_clock(fd, 3000, 6000);
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_READ, 1, 1000, 3000, 0, 0, 0, 0),
		mkrec(PW_EV_READ, 1, 1500, 2000, 0, 0, 0, 0),
		mkrec(PW_EV_READ, 1, 600, 5000, 0, 0, 0, 0),
	};
	put_records(fd, recs, 3);
	struct pw_raw_end e = {.how = PW_END_EXITED, .end_ticks = 4000};
	put_end(fd, &e);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_int_equal(g.start_ns, 5000);
	assert_int_equal(g.nev, 3);
	assert_int_equal(g.ev[0].t0_ns, 5000);
	assert_int_equal(g.ev[0].t1_ns, 6000);
	assert_int_equal(g.ev[1].t0_ns, 5250);
	assert_int_equal(g.ev[1].t1_ns, 5500);
	assert_int_equal(g.ev[2].t0_ns, 4800); /* 400 ticks before the origin */
	assert_int_equal(g.ev[2].t1_ns, 7000); /* extrapolated */
	assert_int_equal(g.end_ns, 6500);
	/* the record keeps its ticks */
	assert_int_equal(g.ev[1].rec.t0, 1500);
}

/* The line goes through the earliest and the latest pair of the whole file, whatever their order and wherever
 * they are: clock0 in between and off the line, a middle pair off the line, the latest pair after the
 * records. */
static void test_clock_tsc_earliest_and_latest(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_proc(fd, mkproc(9, PW_CLOCK_TSC, 2000, 5600), "a", 1, "/a", "h");
	put_clock(fd, 2500, 9999);
	put_clock(fd, 1000, 5000);
	struct pw_rec_call r = mkrec(PW_EV_WRITE, 1, 2000, 2400, 0, 0, 0, 0);
	put_records(fd, &r, 1);
	put_clock(fd, 3000, 6000);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_int_equal(g.start_ns, 5500); /* clock0's ticks on the fitted line, not its own ns */
	assert_int_equal(g.nev, 1);
	assert_int_equal(g.ev[0].t0_ns, 5500);
	assert_int_equal(g.ev[0].t1_ns, 5700);
}

/* A TSC file with no pair but clock0 falls back to rate 1 through clock0. */
static void test_clock_tsc_single_pair(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_proc(fd, mkproc(9, PW_CLOCK_TSC, 1000, 5000), "a", 1, "/a", "h");
	struct pw_rec_call r = mkrec(PW_EV_WRITE, 1, 1000, 1250, 0, 0, 0, 0);
	put_records(fd, &r, 1);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_int_equal(g.start_ns, 5000);
	assert_int_equal(g.ev[0].t0_ns, 5000);
	assert_int_equal(g.ev[0].t1_ns, 5250);
}

/* Monotonic: ticks are ns, rate 1 with the origin at clock0, whatever other pairs say. */
static void test_clock_monotonic_identity(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_proc(fd, mkproc(9, PW_CLOCK_MONOTONIC, 7000, 7000), "a", 1, "/a", "h");
	put_clock(fd, 5000, 5000);
	put_clock(fd, 900000, 900000);
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_READ, 1, 7000, 8123, 0, 0, 0, 0),
		mkrec(PW_EV_READ, 1, 6000, 123456789, 0, 0, 0, 0),
	};
	put_records(fd, recs, 2);
	struct pw_raw_end e = {.how = PW_END_EXITED, .end_ticks = 123456790};
	put_end(fd, &e);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_int_equal(g.start_ns, 7000);
	assert_int_equal(g.ev[0].t0_ns, 7000);
	assert_int_equal(g.ev[0].t1_ns, 8123);
	assert_int_equal(g.ev[1].t0_ns, 6000);
	assert_int_equal(g.ev[1].t1_ns, 123456789);
	assert_int_equal(g.end_ns, 123456790);
}

/* Hostile clock values (clock0 and record times near the top of the range) are read without undefined
 * behaviour: the sanitizer build aborts on a signed overflow in the conversion. The values themselves are
 * meaningless; only that the records are delivered is checked. */
static void test_clock_hostile_values(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_proc(fd, mkproc(9, PW_CLOCK_MONOTONIC, 1ull << 62, 1ull << 62), "a", 1, "/a", "h");
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_READ, 1, 0xA000000000000000ull, 0xA000000000000000ull, 0, 0, 0, 0),
		mkrec(PW_EV_READ, 1, 0, UINT64_MAX, 0, 0, 0, 0),
	};
	put_records(fd, recs, 2);
	close(fd);
	struct shared *sh = shared_new();
	run_isolated(read_in_child, t->path, sh);
	assert_int_equal(sh->rc, 0);
	assert_int_equal(sh->g.nev, 2);
	assert_int_equal(sh->skipped, 0);
	shared_free(sh);
}

/* ---- hostile input ---- */

static void write_bytes_file(const char *path, const void *p, size_t len)
{
	int fd = create(path);
	if (len)
		put_raw(fd, p, len);
	close(fd);
}

/* A failed read: -1, the one-line reason "<path>: <what>", and the visitor never called. */
static void expect_error(const char *path, const char *what)
{
	struct got g;
	uint64_t skipped;
	char err[512], want[512];
	assert_int_equal(read_into(path, &g, &skipped, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: %s", path, what);
	assert_string_equal(err, want);
	assert_int_equal(g.norder, 0);
	assert_int_equal(skipped, 0);
}

/* A damaged file that was read: err is the one line "<path>: <what>" (what formatted from fmt). */
static void expect_damage(const char *path, const char *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void expect_damage(const char *path, const char *err, const char *fmt, ...)
{
	char what[400], want[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(want, sizeof want, "%s: %s", path, what);
	assert_string_equal(err, want);
}

static void test_missing_file(void **state)
{
	struct tmp *t = *state;
	expect_error(t->path, "No such file or directory: skipped");
}

static void test_empty_and_short_file(void **state)
{
	struct tmp *t = *state;
	write_bytes_file(t->path, "", 0);
	expect_error(t->path, "empty file: skipped");
	write_bytes_file(t->path, PW_RAW_MAGIC "\1\0\0\0\20\0", 14); /* a header cut 2 bytes short */
	expect_error(t->path, "cut short at offset 14, inside the 16-byte file header: skipped");
}

static void test_bad_magic(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	struct pw_raw_file_header h = {"PWRAX\0\0\n", PW_RAW_VERSION, sizeof h};
	put_raw(fd, &h, sizeof h);
	put_simple_proc(fd, 1);
	close(fd);
	expect_error(t->path, "not a profwrap raw trace (bad magic at offset 0): skipped");
}

/* A newer or older format is refused whole: its chunks may mean other things. */
static void test_other_versions(void **state)
{
	struct tmp *t = *state;
	uint32_t versions[] = {PW_RAW_VERSION + 1, 9, UINT32_MAX, PW_RAW_VERSION - 1, 0};
	const char *want[] = {"format version 3 is newer than this profwrap (2): skipped",
			      "format version 9 is newer than this profwrap (2): skipped",
			      "format version 4294967295 is newer than this profwrap (2): skipped",
			      "format version 1 is older than this profwrap reads (2): skipped",
			      "format version 0 is older than this profwrap reads (2): skipped"};
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
		int fd = create(t->path);
		struct pw_raw_file_header h = {PW_RAW_MAGIC, versions[i], sizeof h};
		put_raw(fd, &h, sizeof h);
		put_simple_proc(fd, 1);
		close(fd);
		expect_error(t->path, want[i]);
	}
}

static void test_header_size_bad(void **state)
{
	struct tmp *t = *state;
	uint32_t sizes[] = {0, 8, 15, 4096, UINT32_MAX};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		int fd = create(t->path);
		struct pw_raw_file_header h = {PW_RAW_MAGIC, PW_RAW_VERSION, sizes[i]};
		put_raw(fd, &h, sizeof h);
		put_simple_proc(fd, 1);
		close(fd);
		char want[64];
		snprintf(want, sizeof want, "bad header size %u at offset 12: skipped", sizes[i]);
		expect_error(t->path, want);
	}
}

/* A longer header (a newer writer's extra fields, kept 8-aligned) is stepped over. */
static void test_header_size_longer(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	struct pw_raw_file_header h = {PW_RAW_MAGIC, PW_RAW_VERSION, sizeof h + 8};
	put_raw(fd, &h, sizeof h);
	put_raw(fd, "extra123", 8);
	put_simple_proc(fd, 77);
	struct pw_rec_call r = mkrec(PW_EV_READ, 1, 1100, 1200, 5, 0, 5, 0);
	put_records(fd, &r, 1);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(g.order, "PE");
	assert_int_equal(g.proc.pid, 77);
	assert_int_equal(g.ev[0].rec.arg1, 5);
}

/* A header_size that is not a multiple of 8 puts every chunk off alignment. The reader must still not hand
 * out misaligned structs (the sanitizer build checks the visitor's p->proc->pid): the process is delivered,
 * and the record is either delivered or counted as skipped, never lost silently. */
static void test_header_size_unaligned(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	struct pw_raw_file_header h = {PW_RAW_MAGIC, PW_RAW_VERSION, sizeof h + 4};
	put_raw(fd, &h, sizeof h);
	put_raw(fd, "xxxx", 4);
	put_simple_proc(fd, 78);
	off_t at = here(fd);
	struct pw_rec_call r = mkrec(PW_EV_READ, 1, 1100, 1200, 5, 0, 5, 0);
	put_records(fd, &r, 1);
	close(fd);
	struct shared *sh = shared_new();
	run_isolated(read_in_child, t->path, sh);
	assert_int_equal(sh->rc, 0);
	assert_int_equal(sh->g.procs, 1);
	assert_int_equal(sh->g.proc.pid, 78);
	assert_string_equal(sh->g.exe, "/bin/prog");
	assert_int_equal(sh->g.nev, 0);
	assert_int_equal(sh->skipped, 1);
	expect_damage(t->path, sh->err, "record at offset %lld is not valid (type %u, 48 bytes, not 8-byte aligned): skipped",
		      (long long)at + 8, PW_EV_READ);
	shared_free(sh);
}

static void test_no_proc_chunk(void **state)
{
	struct tmp *t = *state;
	/* header only */
	int fd = create(t->path);
	put_header(fd);
	close(fd);
	expect_error(t->path, "cut short at offset 16, before the process description: skipped");
	/* a STRING chunk first */
	fd = create(t->path);
	put_header(fd);
	put_string(fd, 8, "/x");
	put_simple_proc(fd, 1);
	close(fd);
	expect_error(t->path, "no process description at offset 16 (a chunk of type 2): skipped");
	/* a PROC chunk too short for its struct */
	fd = create(t->path);
	put_header(fd);
	struct pw_raw_proc p = mkproc(1, PW_CLOCK_MONOTONIC, 1, 1);
	put_chunk(fd, PW_CHUNK_PROC, &p, sizeof p - 8, NULL, 0);
	close(fd);
	expect_error(t->path, "the process description at offset 16 is too short (56 bytes): skipped");
	/* a PROC chunk whose length runs past the end of the file */
	fd = create(t->path);
	put_header(fd);
	struct pw_raw_chunk c = {PW_CHUNK_PROC, 4096};
	put_raw(fd, &c, sizeof c);
	put_raw(fd, &p, sizeof p);
	close(fd);
	expect_error(t->path, "the process description at offset 16 overruns the file (cut short): skipped");
}

/* The argv/exe/host lengths must fit in the PROC chunk, also when their sum wraps 32 bits. */
static void test_proc_strings_overrun(void **state)
{
	struct tmp *t = *state;
	uint32_t lens[][3] = {{1000, 0, 0}, {4, 9, 6}, {0xffffffffu, 0xffffffffu, 2}, {0x80000000u, 0x80000000u, 0}};
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		int fd = create(t->path);
		put_header(fd);
		struct pw_raw_proc p = mkproc(1, PW_CLOCK_MONOTONIC, 1, 1);
		p.argv_len = lens[i][0];
		p.exe_len = lens[i][1];
		p.host_len = lens[i][2];
		put_chunk(fd, PW_CHUNK_PROC, &p, sizeof p, "progexe-host-abcde", 18); /* {4,9,6} needs 19 */
		close(fd);
		expect_error(t->path, "the process description at offset 16 overruns its chunk: skipped");
	}
}

/* A chunk whose length runs past the end of the file is a truncated tail: no error, everything before it
 * delivered. Also a file that ends inside a chunk header. */
static void test_truncated_tail(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_READ, 1, 1100, 1200, 1, 0, 1, 0),
		mkrec(PW_EV_WRITE, 1, 1300, 1400, 2, 1, 2, 0),
	};
	put_records(fd, recs, 2);
	put_lost(fd, 0, 3);
	off_t at = here(fd);
	struct pw_raw_chunk c = {PW_CHUNK_RECORDS, 4096};
	put_raw(fd, &c, sizeof c);
	put_raw(fd, recs, sizeof recs); /* 96 of the 4096 bytes promised */
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(g.order, "PEEL");
	assert_int_equal(g.ev[1].rec.arg1, 2);
	assert_int_equal(skipped, 0);
	expect_damage(t->path, err, "chunk at offset %lld overruns the file (cut short): read up to there", (long long)at);

	/* cut inside the next chunk's header */
	fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	put_records(fd, recs, 2);
	at = here(fd);
	put_raw(fd, &c, 5);
	close(fd);
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(g.order, "PEE");
	expect_damage(t->path, err, "chunk at offset %lld overruns the file (cut short): read up to there", (long long)at);
	/* the END chunk itself cut short */
	fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	put_records(fd, recs, 1);
	at = here(fd);
	struct pw_raw_chunk ce = {PW_CHUNK_END, sizeof(struct pw_raw_end)};
	struct pw_raw_end e = {.how = PW_END_EXITED, .end_ticks = 1};
	put_raw(fd, &ce, sizeof ce);
	put_raw(fd, &e, sizeof e - 1);
	close(fd);
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(g.order, "PE");
	expect_damage(t->path, err, "chunk at offset %lld overruns the file (cut short): read up to there", (long long)at);
	/* cut at a chunk boundary: nothing is damaged (the collector may have been stopped there) */
	fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	put_records(fd, recs, 1);
	close(fd);
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(g.order, "PE");
	assert_string_equal(err, "");
}

/* A file padded with zeros after its last whole chunk (a crash can leave gigabytes of them, here 1 GiB, sparse):
 * read up to the zeros, with one line that says where they start and how many there are; a chunk after them
 * is not read. */
static void test_zero_tail(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_READ, 1, 1100, 1200, 1, 0, 1, 0),
		mkrec(PW_EV_WRITE, 1, 1300, 1400, 2, 1, 2, 0),
	};
	put_records(fd, recs, 2);
	off_t at = here(fd);
	off_t zeros = 1ll << 30;
	assert_int_equal(ftruncate(fd, at + zeros), 0);
	assert_true(lseek(fd, 0, SEEK_END) == at + zeros);
	struct pw_raw_end e = {.how = PW_END_EXITED};
	put_end(fd, &e);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(g.order, "PEE");
	assert_int_equal(skipped, 0);
	expect_damage(t->path, err, "zeros from offset %lld to the end (%lld bytes, as a crash can leave a file): read up "
		      "to there", (long long)at, (long long)(zeros + 8 + (long long)sizeof e));
}

/* A record with size8 0 cannot be stepped over: the rest of its chunk is dropped, counted once; the next
 * chunk is read. */
static void test_record_size_zero(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_READ, 1, 1100, 1200, 1, 0, 1, 0),
		mkrec(PW_EV_READ, 1, 1300, 1400, 2, 0, 2, 0),
		mkrec(PW_EV_READ, 1, 1500, 1600, 3, 0, 3, 0),
	};
	recs[1].h.size8 = 0;
	off_t at = here(fd);
	put_records(fd, recs, 3);
	struct pw_rec_call more = mkrec(PW_EV_WRITE, 1, 1700, 1800, 4, 1, 4, 0);
	put_records(fd, &more, 1);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_int_equal(skipped, 1);
	assert_int_equal(g.nev, 2);
	assert_int_equal(g.ev[0].rec.arg1, 1);
	assert_int_equal(g.ev[1].rec.arg1, 4);
	expect_damage(t->path, err, "record at offset %lld has a bad size (0 bytes): the rest of its chunk skipped",
		      (long long)at + 8 + 48);
}

/* A record whose size runs past its chunk is skipped and counted; the next chunk is read. */
static void test_record_size_past_chunk(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_READ, 1, 1100, 1200, 1, 0, 1, 0),
		mkrec(PW_EV_READ, 1, 1300, 1400, 2, 0, 2, 0),
	};
	recs[1].h.size8 = 7; /* 56 bytes, 48 left in the chunk */
	off_t at = here(fd);
	put_records(fd, recs, 2);
	recs[1].h.size8 = 255;
	put_records(fd, &recs[1], 1);
	struct pw_rec_call more = mkrec(PW_EV_WRITE, 1, 1700, 1800, 4, 1, 4, 0);
	put_records(fd, &more, 1);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_int_equal(skipped, 2);
	assert_int_equal(g.nev, 2);
	assert_int_equal(g.ev[0].rec.arg1, 1);
	assert_int_equal(g.ev[1].rec.arg1, 4);
	expect_damage(t->path, err,
		      "record at offset %lld has a bad size (56 bytes): the rest of its chunk skipped (and 1 more damaged "
		      "record or chunk)", (long long)at + 8 + 48);
}

/* Unknown types (past the table, PAD) and records too small for a call are stepped over by their size and
 * counted; a record longer than a call (a newer writer) is delivered and stepped over by its size. */
static void test_record_unknown_types(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	uint64_t buf[64];
	memset(buf, 0, sizeof buf);
	size_t w = 0; /* in 8-byte words */
	struct pw_rec_call r;
	r = mkrec(PW_EV_READ, 1, 1100, 1200, 1, 0, 1, 0);
	memcpy(&buf[w], &r, sizeof r), w += 6;
	r = mkrec(999, 1, 1100, 1200, 0, 0, 0, 0);
	memcpy(&buf[w], &r, sizeof r), w += 6;
	r = mkrec(PW_EV_COUNT, 1, 1100, 1200, 0, 0, 0, 0);
	memcpy(&buf[w], &r, sizeof r), w += 6;
	r = mkrec(PW_EV_PAD, 1, 1100, 1200, 0, 0, 0, 0);
	memcpy(&buf[w], &r, sizeof r), w += 6;
	r = mkrec(PW_EV_WRITE, 1, 1100, 1200, 0, 0, 0, 0);
	r.h.size8 = 2; /* 16 bytes: a header and t0 only */
	memcpy(&buf[w], &r, 16), w += 2;
	r = mkrec(PW_EV_WRITE, 1, 1300, 1400, 2, 1, 2, 0);
	r.h.size8 = 8; /* 64 bytes: 16 bytes this reader does not know */
	memcpy(&buf[w], &r, sizeof r), w += 8;
	r = mkrec(PW_EV_READ, 1, 1500, 1600, 3, 0, 3, 0);
	memcpy(&buf[w], &r, sizeof r), w += 6;
	off_t at = here(fd);
	put_chunk(fd, PW_CHUNK_RECORDS, buf, w * 8, NULL, 0);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_int_equal(skipped, 4);
	assert_int_equal(g.nev, 3);
	assert_int_equal(g.ev[0].rec.arg1, 1);
	assert_int_equal(g.ev[1].rec.h.type, PW_EV_WRITE);
	assert_int_equal(g.ev[1].rec.h.size8, 8);
	assert_int_equal(g.ev[1].rec.arg1, 2);
	assert_int_equal(g.ev[2].rec.arg1, 3);
	expect_damage(t->path, err, "record at offset %lld is not valid (type 999, 48 bytes): skipped (and 3 more damaged "
		      "records or chunks)", (long long)at + 8 + 48);
}

/* A STRING chunk whose len runs past the chunk defines nothing; later chunks are read. */
static void test_string_len_overrun(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	struct pw_raw_string s = {8, 100, 0};
	off_t at = here(fd);
	put_chunk(fd, PW_CHUNK_STRING, &s, sizeof s, "/abcd", 5);
	put_chunk(fd, PW_CHUNK_STRING, &s, 8, NULL, 0); /* shorter than its own header */
	put_string(fd, 16, "/ok");
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_OPEN, 1, 1100, 1200, 3, 3, 8, 0),
		mkrec(PW_EV_OPEN, 1, 1300, 1400, 4, 4, 16, 0),
	};
	put_records(fd, recs, 2);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_int_equal(g.nev, 2);
	assert_false(g.ev[0].has_str);
	assert_int_equal(g.ev[0].str_len, 0);
	assert_true(g.ev[1].has_str);
	assert_string_equal(g.ev[1].str, "/ok");
	assert_int_equal(skipped, 0);
	expect_damage(t->path, err, "STRING chunk at offset %lld: its string overruns the chunk: skipped (and 1 more "
		      "damaged record or chunk)", (long long)at);
}

/* A ref that was never defined, or 0, resolves to NULL; so does an END's exec_ref. */
static void test_string_undefined_ref(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	put_string(fd, 8, "/defined");
	struct pw_rec_call recs[] = {
		mkrec(PW_EV_OPEN, 1, 1100, 1200, 3, 3, 40, 0),
		mkrec(PW_EV_DLOPEN, 1, 1300, 1400, 1, 0, 0, 0),
		mkrec(PW_EV_EXECVE, 1, 1500, 1600, -1, 0, 9, ENOENT),
	};
	put_records(fd, recs, 3);
	struct pw_raw_end e = {.how = PW_END_EXECED, .end_ticks = 1700, .exec_ref = 72};
	put_end(fd, &e);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_int_equal(g.nev, 3);
	for (int i = 0; i < 3; i++) {
		assert_false(g.ev[i].has_str);
		assert_int_equal(g.ev[i].str_len, 0);
	}
	assert_int_equal(g.ends, 1);
	assert_false(g.has_exec);
}

/* Many strings (the table grows) all resolve, and a ref defined twice takes its last definition. */
struct many {
	int n, bad;
};

static void many_event(void *ctx, const struct pw_raw_event *e)
{
	struct many *m = ctx;
	int i = (int)(e->rec->arg1 / 8);
	char want[32];
	if (i == 1)
		snprintf(want, sizeof want, "/redefined");
	else
		snprintf(want, sizeof want, "/f/%d", i);
	m->n++;
	if (!e->str || e->str_len != strlen(want) || memcmp(e->str, want, e->str_len) != 0)
		m->bad++;
}

static void test_many_strings(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5);
	enum { N = 1000 };
	char s[32];
	for (int i = 1; i <= N; i++) {
		snprintf(s, sizeof s, "/f/%d", i);
		put_string(fd, (uint64_t)i * 8, s);
	}
	put_string(fd, 8, "/redefined");
	static struct pw_rec_call recs[N];
	for (int i = 0; i < N; i++)
		recs[i] = mkrec(PW_EV_OPEN, 1, 1100, 1200, 3, 3, (uint64_t)(i + 1) * 8, 0);
	put_records(fd, recs, N);
	close(fd);
	struct many m = {0, 0};
	static const struct pw_raw_visitor mv = {.event = many_event};
	uint64_t skipped = 0;
	char err[512] = "";
	assert_int_equal(pw_raw_read(t->path, &mv, &m, &skipped, err, sizeof err), 0);
	assert_int_equal(m.n, N);
	assert_int_equal(m.bad, 0);
	assert_int_equal(skipped, 0);
}

/* Chunk lengths that are not a multiple of 8 are followed by zero padding the reader steps over; an unknown
 * chunk type is skipped whole; LOST and END chunks too short for their struct are ignored. */
static void test_odd_chunk_lengths(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_proc(fd, mkproc(5, PW_CLOCK_MONOTONIC, 1000, 1000), "abc", 3, "/e", "h"); /* 64 + 6 bytes */
	put_string(fd, 8, "/abc");                                                   /* 16 + 4 */
	put_chunk(fd, 99, "12345", 5, NULL, 0);
	off_t at = here(fd);
	put_chunk(fd, PW_CHUNK_LOST, "\1\0\0\0", 4, NULL, 0);
	struct pw_raw_end e = {.how = PW_END_EXITED, .exit_status = 1, .end_ticks = 2};
	put_chunk(fd, PW_CHUNK_END, &e, 12, NULL, 0);
	struct pw_rec_call r = mkrec(PW_EV_OPEN, 1, 1100, 1200, 3, 3, 8, 0);
	put_records(fd, &r, 1);
	close(fd);
	struct stat st;
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(st.st_size % 8, 0);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(g.order, "PE");
	assert_string_equal(g.argv, "abc");
	assert_string_equal(g.exe, "/e");
	assert_string_equal(g.host, "h");
	assert_string_equal(g.ev[0].str, "/abc");
	expect_damage(t->path, err, "LOST chunk at offset %lld is too short (4 bytes): skipped (and 1 more damaged record "
		      "or chunk)", (long long)at);
}

/* ---- the dump's view: every whole chunk with its offset, the clock pairs, the strings, record offsets ---- */

struct seen {
	char log[1024]; /* one entry per callback, in delivery order */
	size_t len;
};

static void seen_add(struct seen *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void seen_add(struct seen *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(s->log + s->len, sizeof s->log - s->len, fmt, ap);
	va_end(ap);
	if (n > 0 && s->len + (size_t)n < sizeof s->log)
		s->len += (size_t)n;
}

static void seen_chunk(void *ctx, size_t offset, uint32_t type, uint32_t len)
{
	seen_add(ctx, "C%u@%zu+%u ", type, offset, len);
}

static void seen_clock(void *ctx, const struct pw_clock_pair *p)
{
	seen_add(ctx, "clock %llu %llu ", (unsigned long long)p->ticks, (unsigned long long)p->ns);
}

static void seen_string(void *ctx, uint64_t ref, const char *str, uint32_t len)
{
	seen_add(ctx, "str %llu %.*s ", (unsigned long long)ref, (int)len, str);
}

static void seen_event(void *ctx, const struct pw_raw_event *e)
{
	seen_add(ctx, "rec %u@%zu ", e->rec->h.type, e->offset);
}

static void seen_lost(void *ctx, uint32_t lane, uint64_t total)
{
	seen_add(ctx, "lost %u %llu ", lane, (unsigned long long)total);
}

/* The chunk callback comes before each whole chunk's contents (a damaged or unknown chunk included, the cut
 * tail not); a record's offset counts from the start of the file, as the damage messages do. */
static void test_chunk_clock_string_callbacks(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_proc(fd, mkproc(5, PW_CLOCK_MONOTONIC, 1000, 1000), "abc", 3, "/e", "h"); /* @16, 64 + 6 bytes */
	put_clock(fd, 1000, 1000);                                                   /* @96 */
	put_string(fd, 8, "/abc");                                                   /* @120, 16 + 4 */
	put_chunk(fd, 99, "12345", 5, NULL, 0);                                      /* @152 */
	put_chunk(fd, PW_CHUNK_LOST, "\1\0\0\0", 4, NULL, 0);                        /* @168: too short */
	struct pw_rec_call r[2] = {mkrec(PW_EV_OPEN, 1, 1100, 1200, 3, 3, 8, 0),
				   mkrec(PW_EV_CLOSE, 1, 1300, 1400, 0, 3, 0, 0)};
	put_records(fd, r, 2); /* @184, records @192 and @240 */
	put_lost(fd, 2, 9);    /* @288 */
	put_clock(fd, 2000, 2000); /* @312 */
	put_chunk(fd, PW_CHUNK_LOST, "\1\0\0\0", 4, NULL, 0); /* @336, then cut inside it */
	assert_int_equal(ftruncate(fd, 342), 0);
	close(fd);
	static const struct pw_raw_visitor v = {.event = seen_event, .lost = seen_lost, .chunk = seen_chunk,
						.clock = seen_clock, .string = seen_string};
	struct seen s = {.len = 0};
	uint64_t skipped = 0;
	char err[512];
	assert_int_equal(pw_raw_read(t->path, &v, &s, &skipped, err, sizeof err), 0);
	assert_string_equal(s.log, "C1@16+70 C4@96+16 clock 1000 1000 C2@120+20 str 8 /abc C99@152+5 C5@168+4 "
				   "C3@184+96 rec 1@192 rec 4@240 C5@288+16 lost 2 9 C4@312+16 clock 2000 2000 ");
	expect_damage(t->path, err, "LOST chunk at offset 168 is too short (4 bytes): skipped; chunk at offset 336 "
		      "overruns the file (cut short): read up to there");
}

/* A writer that did not pad: the reader, stepping by the padded length, lands inside the next chunk and treats
 * what it finds as a damaged tail. No crash, no error, nothing invented. */
static void test_missing_padding(void **state)
{
	struct tmp *t = *state;
	int fd = create(t->path);
	put_header(fd);
	put_simple_proc(fd, 5); /* 64 + 4 + 9 + 4 = 81 bytes, padded */
	struct pw_raw_chunk c = {PW_CHUNK_STRING, sizeof(struct pw_raw_string) + 3};
	struct pw_raw_string s = {8, 3, 0};
	off_t at = here(fd);
	put_raw(fd, &c, sizeof c);
	put_raw(fd, &s, sizeof s);
	put_raw(fd, "abc", 3); /* no padding */
	assert_int_equal(here(fd) % 8, 3);
	struct pw_rec_call r = mkrec(PW_EV_READ, 0x11, 1100, 1200, 3, 3, 8, 0);
	put_records(fd, &r, 1);
	close(fd);
	struct got g;
	uint64_t skipped;
	char err[512];
	assert_int_equal(read_into(t->path, &g, &skipped, err, sizeof err), 0);
	assert_string_equal(g.order, "P");
	expect_damage(t->path, err, "chunk at offset %lld overruns the file (cut short): read up to there",
		      (long long)at + 8 + 24);
}

/* ---- seeded mutations ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* The visitor of the mutation run (it runs in a child: failures are reported with fz_fail). Every pointer the
 * reader hands out must lie inside the file as mapped; the mapping's start is found from the argv pointer,
 * which sits right after the PROC struct at header_size + 8 (the struct itself is handed out as an aligned
 * copy). */
struct fuzz_ctx {
	struct shared *sh;
	int iter;
	const uint8_t *file; /* the mutated bytes, as written */
	size_t size;
	const char *base;
	uint64_t sum;
	int procs, events, losts, ends;
};

static void fz_fail(struct fuzz_ctx *f, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void fz_fail(struct fuzz_ctx *f, const char *fmt, ...)
{
	int n = snprintf(f->sh->msg, sizeof f->sh->msg, "iteration %d: ", f->iter);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->sh->msg + n, sizeof f->sh->msg - (size_t)n, fmt, ap);
	va_end(ap);
	_exit(1);
}

#define FZ_CHECK(f, cond) \
	do { \
		if (!(cond)) \
			fz_fail((f), "check failed: %s (line %d)", #cond, __LINE__); \
	} while (0)

static void in_file(struct fuzz_ctx *f, const void *p, uint64_t len, const char *what)
{
	const char *c = p;
	if (!f->base || c < f->base || len > f->size || (size_t)(c - f->base) > f->size - len)
		fz_fail(f, "%s: %llu bytes at %p outside the file [%p, +%zu)", what, (unsigned long long)len, p,
			(const void *)f->base, f->size);
}

static void fz_proc(void *ctx, const struct pw_raw_proc_view *p)
{
	struct fuzz_ctx *f = ctx;
	uint32_t hsize;
	memcpy(&hsize, f->file + 12, sizeof hsize);
	f->base = p->argv - hsize - sizeof(struct pw_raw_chunk) - sizeof(struct pw_raw_proc);
	f->procs++;
	struct pw_raw_proc pr;
	memcpy(&pr, p->proc, sizeof pr);
	in_file(f, p->argv, pr.argv_len, "argv");
	in_file(f, p->exe, pr.exe_len, "exe");
	in_file(f, p->host, pr.host_len, "host");
	for (uint32_t i = 0; i < pr.argv_len; i++)
		f->sum += (unsigned char)p->argv[i];
	for (uint32_t i = 0; i < pr.exe_len; i++)
		f->sum += (unsigned char)p->exe[i];
	for (uint32_t i = 0; i < pr.host_len; i++)
		f->sum += (unsigned char)p->host[i];
	f->sum += p->start_ns;
}

static void fz_event(void *ctx, const struct pw_raw_event *e)
{
	struct fuzz_ctx *f = ctx;
	f->events++;
	struct pw_rec_hdr h;
	/* a record with flags (outside the window, a stack, nested) comes as the reader's copy, without them */
	int copy = e->outside || e->nested || e->stack_ref || e->stack;
	if (!copy)
		in_file(f, e->rec, sizeof h, "record header");
	memcpy(&h, e->rec, sizeof h);
	if (!copy)
		in_file(f, e->rec, (uint64_t)h.size8 * 8, "record");
	FZ_CHECK(f, (uint64_t)h.size8 * 8 >= sizeof(struct pw_rec_call));
	FZ_CHECK(f, h.type != PW_EV_PAD && h.type < PW_EV_COUNT);
	FZ_CHECK(f, ((uintptr_t)e->rec & 7) == 0);
	if (e->str) {
		FZ_CHECK(f, pw_kind_has_string(pw_events[h.type].kind));
		in_file(f, e->str, e->str_len, "string");
		for (uint32_t i = 0; i < e->str_len; i++)
			f->sum += (unsigned char)e->str[i];
	}
	if (e->cwd) {
		FZ_CHECK(f, pw_events[h.type].kind == PW_K_OPEN);
		in_file(f, e->cwd, e->cwd_len, "working directory");
		for (uint32_t i = 0; i < e->cwd_len; i++)
			f->sum += (unsigned char)e->cwd[i];
	}
	f->sum += e->t0_ns + e->t1_ns + e->rec->arg0 + (uint64_t)e->dirfd;
}

static void fz_lost(void *ctx, uint32_t lane, uint64_t total)
{
	struct fuzz_ctx *f = ctx;
	f->losts++;
	f->sum += lane + total;
}

static void fz_end(void *ctx, const struct pw_raw_end *end, uint64_t end_ns, const char *exec_path)
{
	struct fuzz_ctx *f = ctx;
	f->ends++;
	f->sum += end->how + end_ns;
	if (exec_path)
		FZ_CHECK(f, strlen(exec_path) < 4096);
}

static const struct pw_raw_visitor fuzz_visitor = {.proc = fz_proc, .event = fz_event, .lost = fz_lost, .end = fz_end};

/* A valid file of exactly 4096 bytes (an unknown filler chunk at the end) so that a read past its end falls
 * off the mapping. Returns the offsets where its PROC body and each RECORDS body end, and their counts. */
struct layout {
	size_t content_end; /* before the filler */
	size_t proc_end;
	size_t rec_end[4];
	int rec_n[4];
	int nrec;
	size_t lost_end[4];
	int nlost;
	size_t end_end;
};

static void build_fuzz_base(const char *path, struct layout *L)
{
	memset(L, 0, sizeof *L);
	int fd = create(path);
	put_header(fd);
	static const char argv[] = "prog\0-v\0input.dat";
	struct pw_raw_proc p = mkproc(321, PW_CLOCK_TSC, 100000, 2000000);
	put_proc(fd, p, argv, sizeof argv - 1, "/usr/local/bin/prog", "host-a");
	L->proc_end = 16 + 8 + sizeof p + (sizeof argv - 1) + 19 + 6; /* unpadded: padding may be cut */
	put_clock(fd, 100000, 2000000);
	put_string(fd, 8, "/data/input.dat");
	put_string(fd, 32, "/usr/lib/libz.so");
	struct pw_rec_call a[] = {
		mkrec(PW_EV_FD_INFO, 1, 100000, 100000, 0, 1, 56, 0),
		mkrec(PW_EV_OPEN, 1, 100100, 100200, 3, 3, 8, 0),
		mkrec(PW_EV_READ, 1, 100300, 100400, 4096, 3, 4096, 0),
		mkrec(PW_EV_DLOPEN, 2, 100500, 100900, 0x7f0000001000ll, 0, 32, 0),
		mkrec(PW_EV_CLOSE, 1, 101000, 101001, 0, 3, 0, 0),
	};
	put_records(fd, a, 5);
	L->rec_end[L->nrec] = (size_t)here(fd);
	L->rec_n[L->nrec++] = 5;
	put_lost(fd, 0, 4);
	L->lost_end[L->nlost++] = (size_t)here(fd);
	put_string(fd, 56, "/dev/pts/3");
	put_string(fd, 72, "/bin/sh");
	struct pw_rec_call b[] = {
		mkrec(PW_EV_WRITE, 1, 102000, 102100, 10, 1, 10, 0),
		mkrec(PW_EV_WAITPID, 1, 102200, 109000, 999, 999, 9, 0),
		mkrec(PW_EV_EXECVE, 1, 109100, 109200, -1, 0, 72, ENOENT),
	};
	put_records(fd, b, 3);
	L->rec_end[L->nrec] = (size_t)here(fd);
	L->rec_n[L->nrec++] = 3;
	put_clock(fd, 200000, 2050000);
	put_lost(fd, 1, 2);
	L->lost_end[L->nlost++] = (size_t)here(fd);
	struct pw_raw_end e = {.how = PW_END_EXECED, .end_ticks = 110000, .exec_ref = 72, .io_rchar = 100,
				 .io_wchar = 200, .io_valid = 1};
	put_end(fd, &e);
	L->end_end = (size_t)here(fd);
	L->content_end = (size_t)here(fd);
	static const char zeros[4096];
	size_t fill = 4096 - L->content_end - sizeof(struct pw_raw_chunk);
	put_chunk(fd, 77, zeros, fill, NULL, 0);
	assert_int_equal(here(fd), 4096);
	close(fd);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	uint8_t *b = malloc((size_t)st.st_size);
	assert_non_null(b);
	assert_int_equal(read(fd, b, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

/* A directory or a FIFO named like a trace is refused at once: the FIFO, which has no writer, must not hang
 * the reader (it is read in a child under an alarm). */
static void read_fifo_in_child(void *arg, struct shared *sh)
{
	alarm(10);
	read_in_child(arg, sh);
}

static void test_not_regular(void **state)
{
	struct tmp *t = *state;
	assert_int_equal(mkdir(t->path, 0700), 0);
	expect_error(t->path, "a directory: skipped");
	assert_int_equal(rmdir(t->path), 0);
	assert_int_equal(mkfifo(t->path, 0600), 0);
	struct shared *sh = shared_new();
	run_isolated(read_fifo_in_child, t->path, sh);
	char want[256];
	snprintf(want, sizeof want, "%s: not a regular file: skipped", t->path);
	assert_int_equal(sh->rc, -1);
	assert_string_equal(sh->err, want);
	assert_int_equal(sh->g.norder, 0);
	shared_free(sh);
}

/* pw_raw_read_mem reads a buffer as pw_raw_read reads the file, names the buffer in its messages, and skips
 * records that the buffer's alignment puts off 8 bytes (they are handed out in place). */
static void test_read_mem(void **state)
{
	struct tmp *t = *state;
	struct layout L;
	build_fuzz_base(t->path, &L);
	size_t size;
	uint8_t *file = slurp(t->path, &size);
	struct got *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
	assert_non_null(a);
	assert_non_null(b);
	uint64_t skipped = 0;
	char err[512];
	assert_int_equal(read_into(t->path, a, &skipped, err, sizeof err), 0);
	assert_string_equal(err, "");
	assert_int_equal(pw_raw_read_mem("mem.pwt", file, size, &visitor, b, &skipped, err, sizeof err), 0);
	assert_string_equal(err, "");
	assert_int_equal(skipped, 0);
	assert_string_equal(b->order, "PEEEEELEEELX");
	assert_string_equal(b->order, a->order);
	assert_memory_equal(&b->proc, &a->proc, sizeof a->proc);
	assert_string_equal(b->exe, "/usr/local/bin/prog");
	assert_int_equal(b->nev, 8);
	for (int i = 0; i < b->nev; i++) {
		assert_rec_equal(&b->ev[i].rec, &a->ev[i].rec);
		assert_int_equal(b->ev[i].t0_ns, a->ev[i].t0_ns);
		assert_string_equal(b->ev[i].str, a->ev[i].str);
	}
	assert_string_equal(b->ev[1].str, "/data/input.dat");
	assert_memory_equal(&b->end, &a->end, sizeof a->end);

	/* cut inside the second RECORDS chunk */
	memset(b, 0, sizeof *b);
	assert_int_equal(pw_raw_read_mem("mem.pwt", file, L.rec_end[1] - 8, &visitor, b, &skipped, err, sizeof err), 0);
	assert_string_equal(b->order, "PEEEEEL");
	char want[256];
	snprintf(want, sizeof want, "mem.pwt: chunk at offset %zu overruns the file (cut short): read up to there",
		 L.rec_end[1] - 8 - 3 * sizeof(struct pw_rec_call));
	assert_string_equal(err, want);

	/* the same bytes at an odd address: the process is delivered, no record */
	uint8_t *odd = malloc(size + 1);
	assert_non_null(odd);
	memcpy(odd + 1, file, size);
	memset(b, 0, sizeof *b);
	skipped = 0;
	assert_int_equal(pw_raw_read_mem("odd.pwt", odd + 1, size, &visitor, b, &skipped, err, sizeof err), 0);
	assert_string_equal(b->order, "PLLX");
	assert_int_equal(skipped, 8);
	snprintf(want, sizeof want, "odd.pwt: record at offset %zu is not valid (type %u, 48 bytes, not 8-byte aligned): "
		 "skipped (and 7 more damaged records or chunks)", L.rec_end[0] - 5 * sizeof(struct pw_rec_call),
		 PW_EV_FD_INFO);
	assert_string_equal(err, want);
	free(odd);
	free(file);
	free(a);
	free(b);
}

/* What the mutation run needs and what it reports back. */
struct mutation_run {
	const char *path;
	const uint8_t *orig;
	size_t size;
	const struct layout *L;
	int errors, cuts_checked, boundary_cuts, done;
};

/* The child's half of test_mutations. */
static void mutate_in_child(void *arg, struct shared *sh)
{
	struct mutation_run *m = arg;
	const struct layout *L = m->L;
	struct mutation_run *out = (struct mutation_run *)(void *)sh->err; /* counters back through shared memory */
	memset(out, 0, sizeof *out);
	uint8_t *buf = malloc(m->size);
	if (!buf)
		_exit(2);
	rng_state = 0x9e3779b97f4a7c15ull;
	for (int iter = 0; iter < 2000; iter++) {
		memcpy(buf, m->orig, m->size);
		size_t len = m->size;
		int mode = (int)(rnd() % 3); /* 0 change bytes, 1 cut, 2 both */
		if (mode != 1) {
			int flips = 1 + (int)(rnd() % 8);
			for (int i = 0; i < flips; i++) {
				size_t at = rnd() % 10 ? rnd() % L->content_end : rnd() % m->size;
				buf[at] ^= (uint8_t)(rnd() % 255 + 1);
			}
		}
		if (mode != 0)
			len = rnd() % 4 ? rnd() % (L->content_end + 1) : rnd() % m->size;
		int fd = open(m->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
			_exit(2);
		close(fd);
		struct fuzz_ctx f = {sh, iter, buf, len, NULL, 0, 0, 0, 0, 0};
		snprintf(sh->msg, sizeof sh->msg, "iteration %d (mode %d, length %zu): reading", iter, mode, len);
		uint64_t skipped = 0;
		char err[512] = "";
		int rc = pw_raw_read(m->path, &fuzz_visitor, &f, &skipped, err, sizeof err);
		FZ_CHECK(&f, rc == 0 || rc == -1);
		if (rc == -1) {
			out->errors++;
			FZ_CHECK(&f, strstr(err, m->path) != NULL);
			FZ_CHECK(&f, f.procs + f.events + f.losts + f.ends == 0);
		} else {
			FZ_CHECK(&f, f.procs == 1);
			FZ_CHECK(&f, f.ends <= 1);
		}
		if (mode == 1) {
			/* only cut: exactly the whole chunks before the cut */
			int want_ev = 0, want_lost = 0;
			for (int i = 0; i < L->nrec; i++)
				if (L->rec_end[i] <= len)
					want_ev += L->rec_n[i];
			for (int i = 0; i < L->nlost; i++)
				if (L->lost_end[i] <= len)
					want_lost++;
			if (len < L->proc_end) {
				FZ_CHECK(&f, rc == -1);
			} else {
				out->cuts_checked++;
				FZ_CHECK(&f, rc == 0);
				FZ_CHECK(&f, f.events == want_ev);
				FZ_CHECK(&f, f.losts == want_lost);
				FZ_CHECK(&f, f.ends == (L->end_end <= len));
				FZ_CHECK(&f, skipped == 0);
				/* nothing or the cut named: "<path>: chunk at offset N overruns the file (cut short): ..." */
				char want[600];
				unsigned long long at;
				int n = snprintf(want, sizeof want, "%s: chunk at offset %%llu overruns the file (cut short): read "
					 "up to there%%n", m->path);
				int used = -1;
				FZ_CHECK(&f, n > 0 && (size_t)n < sizeof want);
				FZ_CHECK(&f, !err[0] || (sscanf(err, want, &at, &used) == 1 && used == (int)strlen(err) &&
							at < len && at % 8 == 0));
				if (!err[0])
					out->boundary_cuts++;
			}
		}
	}
	out->done = 1;
	free(buf);
}

/* 2000 damaged copies of a valid file (fixed seed): random bytes changed, cut at a random offset, or both.
 * Each read must return 0 or -1 with a reason naming the file, and hand out only pointers into the file;
 * a copy that was only cut must deliver exactly the whole chunks before the cut. Run in a child, so that a
 * crash or a sanitizer abort names its iteration. */
static void test_mutations(void **state)
{
	struct tmp *t = *state;
	struct layout L;
	build_fuzz_base(t->path, &L);
	size_t size;
	uint8_t *orig = slurp(t->path, &size);
	assert_int_equal(size, 4096);
	/* the untouched file reads whole */
	struct shared *sh = shared_new();
	struct fuzz_ctx f = {sh, -1, orig, size, NULL, 0, 0, 0, 0, 0};
	uint64_t skipped = 0;
	char err[512] = "";
	assert_int_equal(pw_raw_read(t->path, &fuzz_visitor, &f, &skipped, err, sizeof err), 0);
	assert_int_equal(f.procs, 1);
	assert_int_equal(f.events, 8);
	assert_int_equal(f.losts, 2);
	assert_int_equal(f.ends, 1);
	assert_int_equal(skipped, 0);

	struct mutation_run m = {t->path, orig, size, &L, 0, 0, 0, 0};
	_Static_assert(sizeof m <= sizeof sh->err, "counters fit");
	run_isolated(mutate_in_child, &m, sh);
	const struct mutation_run *out = (const struct mutation_run *)(const void *)sh->err;
	assert_int_equal(out->done, 1);
	/* the run exercised both outcomes */
	assert_true(out->errors > 0);
	assert_true(out->cuts_checked > 100);
	assert_true(out->boundary_cuts > 0 && out->boundary_cuts < out->cuts_checked);
	shared_free(sh);
	free(orig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip_all_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_without_shm_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_end_exited, setup, teardown),
		cmocka_unit_test(test_kind_has_string),
		cmocka_unit_test_setup_teardown(test_open_base, setup, teardown),
		cmocka_unit_test_setup_teardown(test_null_callbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clock_tsc_two_pairs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clock_tsc_earliest_and_latest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clock_tsc_single_pair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clock_monotonic_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clock_hostile_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_and_short_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_magic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_size_bad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_size_longer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_size_unaligned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_proc_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_strings_overrun, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_size_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_size_past_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_unknown_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_string_len_overrun, setup, teardown),
		cmocka_unit_test_setup_teardown(test_string_undefined_ref, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_odd_chunk_lengths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunk_clock_string_callbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_padding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_mem, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mutations, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
