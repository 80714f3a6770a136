#define _GNU_SOURCE
/* Unit tests for collector/analysis: each test writes the raw traces of a few processes into OUT/raw of a
 * private output directory (monotonic clock: ticks are ns, so every time below is exact), runs pw_analyze and
 * checks the model field by field: call figures, the fd -> path map (open, dup, close, inherited fds), how
 * processes ended (their own END, a parent's wait, session.txt), ranks, drops, the coverage self-check and
 * libraries; then the errors pw_analyze documents and the files pw_write_reports leaves; then processes without
 * a rank (launcher groups per host, or rank 0 when nothing has a rank) and pw_analyze_files's own list. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
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

#include "../../collector/lib/rawfile.h"
#include "../../collector/model/timeline.h"
#include "../../collector/render.h"
#include "../../collector/report/rank_summary.h"
#include "out_fixture.h"
#include "raw_writer.h"

/* ---- writing raw traces ---- */

struct procspec {
	int pid, ppid, rank, world;
	uint64_t start;    /* clock0: ticks = ns */
	const char *argv;  /* argv_len bytes, '\0'-separated */
	size_t argv_len;
	const char *exe, *host;
	uint32_t image;
	uint64_t realtime;
};

/* Creates OUT/raw/name with the header, PROC and a CLOCK chunk; returns the fd to add chunks to. */
static int pwt_open_spec(const struct fx *fx, const char *name, const struct procspec *ps)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", fx->raw, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pw_raw_write_header(fd), 0);
	struct pw_raw_proc p = {0};
	p.pid = ps->pid;
	p.ppid = ps->ppid;
	p.rank = ps->rank;
	p.world_size = ps->world;
	p.clock_kind = PW_CLOCK_MONOTONIC;
	p.domain_mask = 0x1f;
	p.clock0.ticks = ps->start;
	p.clock0.ns = ps->start;
	p.start_realtime_ns = ps->realtime;
	p.image = ps->image;
	put_proc(fd, p, ps->argv, (uint32_t)ps->argv_len, ps->exe, ps->host);
	put_clock(fd, ps->start, ps->start);
	return fd;
}

/* The common case: argv "prog\0arg", exe /bin/prog, host node0, world 2, image 0. */
static int pwt_open(const struct fx *fx, const char *name, int pid, int ppid, int rank, uint64_t start)
{
	struct procspec ps = {pid, ppid, rank, 2, start, "prog\0arg", 8, "/bin/prog", "node0", 0, 0};
	return pwt_open_spec(fx, name, &ps);
}

/* END, then closes the file. */
static void pwt_end_full(int fd, const struct pw_raw_end *e)
{
	put_end(fd, e);
	close(fd);
}

static void pwt_end(int fd, uint32_t how, int32_t status, uint64_t end_ns, uint64_t exec_ref)
{
	struct pw_raw_end e = {0};
	e.how = how;
	e.exit_status = status;
	e.end_ticks = end_ns;
	e.exec_ref = exec_ref;
	pwt_end_full(fd, &e);
}

#define NREC(a) (sizeof(a) / sizeof((a)[0]))

static void write_text(const struct fx *fx, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", fx->raw, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* ---- looking things up in the model ---- */

static void analyze_ok(const struct fx *fx, struct pw_analysis *a)
{
	char err[512] = "";
	if (pw_analyze(fx->dir, a, err, sizeof err) != 0)
		fail_msg("pw_analyze failed: %s", err);
}

static const struct pw_rank_report *rank_of(const struct pw_analysis *a, int rank)
{
	for (size_t i = 0; i < a->nranks; i++)
		if (a->ranks[i].rank == rank)
			return &a->ranks[i];
	fail_msg("no rank %d", rank);
	return NULL;
}

static const struct pw_proc *proc_of(const struct pw_rank_report *r, int pid, uint32_t image)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid && r->procs[i].image == image)
			return &r->procs[i];
	fail_msg("rank %d has no pid %d image %u", r->rank, pid, image);
	return NULL;
}

static const struct pw_file_stat *file_of(const struct pw_rank_report *r, const char *path)
{
	for (size_t i = 0; i < r->nfiles; i++)
		if (strcmp(r->files[i].path, path) == 0)
			return &r->files[i];
	fail_msg("rank %d has no file %s", r->rank, path);
	return NULL;
}

static const struct pw_lib_stat *lib_of(const struct pw_rank_report *r, const char *path)
{
	for (size_t i = 0; i < r->nlibs; i++)
		if (strcmp(r->libs[i].path, path) == 0)
			return &r->libs[i];
	fail_msg("rank %d has no library %s", r->rank, path);
	return NULL;
}

static void assert_call(const struct pw_call_stat *c, uint64_t count, uint64_t total, uint64_t min, uint64_t max,
			uint64_t bytes, uint64_t errors)
{
	assert_int_equal(c->count, count);
	assert_int_equal(c->total_ns, total);
	assert_int_equal(c->min_ns, min);
	assert_int_equal(c->max_ns, max);
	assert_int_equal(c->bytes, bytes);
	assert_int_equal(c->errors, errors);
}

static void assert_file(const struct pw_file_stat *f, uint64_t opens, uint64_t reads, uint64_t read_bytes,
			uint64_t writes, uint64_t write_bytes, uint64_t time_ns)
{
	assert_int_equal(f->opens, opens);
	assert_int_equal(f->reads, reads);
	assert_int_equal(f->read_bytes, read_bytes);
	assert_int_equal(f->writes, writes);
	assert_int_equal(f->write_bytes, write_bytes);
	assert_int_equal(f->time_ns, time_ns);
}

/* ---- calls ---- */

/* Count, time, min, max, bytes (read and write kinds sum arg1) and errors per event, summed over the processes
 * of a rank; events that never happened read all zero. */
static void test_call_figures(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-100.pwt", 100, 1, 0, 1000);
	struct pw_rec_call a[] = {
		mkrec(PW_EV_READ, 100, 2000, 2100, 10, 5, 10, 0),
		mkrec(PW_EV_READ, 100, 3000, 3300, 20, 5, 20, 0),
		mkrec(PW_EV_READ, 101, 4000, 4050, -1, 5, 0, EIO),
		mkrec(PW_EV_WRITE, 100, 5000, 5007, 1000, 1, 1000, 0),
		mkrec(PW_EV_LSEEK, 100, 6000, 6001, 0, 5, 0, 0),
		mkrec(PW_EV_PREAD, 101, 7000, 7010, 5, 5, 5, 0),
		mkrec(PW_EV_OPEN, 100, 7100, 7130, -1, (uint64_t)-1, 0, ENOENT),
	};
	put_records(fd, a, NREC(a));
	pwt_end(fd, PW_END_EXITED, 0, 9000, 0);
	fd = pwt_open(fx, "0-101.pwt", 101, 100, 0, 9500);
	struct pw_rec_call b[] = {
		mkrec(PW_EV_READ, 101, 10000, 10500, 7, 0, 7, 0),
	};
	put_records(fd, b, NREC(b));
	close(fd);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	assert_int_equal(an->nranks, 1);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_call(&r->calls[PW_EV_READ], 4, 100 + 300 + 50 + 500, 50, 500, 37, 1);
	assert_call(&r->calls[PW_EV_WRITE], 1, 7, 7, 7, 1000, 0);
	assert_call(&r->calls[PW_EV_PREAD], 1, 10, 10, 10, 5, 0);
	assert_call(&r->calls[PW_EV_LSEEK], 1, 1, 1, 1, 0, 0);
	assert_call(&r->calls[PW_EV_OPEN], 1, 30, 30, 30, 0, 1);
	assert_call(&r->calls[PW_EV_CLOSE], 0, 0, 0, 0, 0, 0);
	assert_int_equal(r->events, 8);
	assert_int_equal(r->nfiles, 0);
	const struct pw_proc *p = proc_of(r, 100, 0);
	assert_int_equal(p->events, 7);
	assert_int_equal(p->threads, 2);
	assert_int_equal(p->seen_read_bytes, 35);
	assert_int_equal(p->seen_write_bytes, 1000);
	assert_int_equal(p->start_ns, 1000);
	assert_int_equal(p->end_ns, 9000);
	p = proc_of(r, 101, 0);
	assert_int_equal(p->events, 1);
	assert_int_equal(p->threads, 1);
	assert_int_equal(p->end_ns, 10500); /* no END: the last record's end */
	assert_int_equal(r->start_ns, 1000);
	assert_int_equal(r->end_ns, 10500);
	assert_int_equal(r->wall_ns, 9500);
	pw_analysis_free(an);
}

/* ---- files ---- */

/* open binds fd -> path; every call on that fd counts toward the file until close; a failed open makes no
 * file; a second open of the same path (fopen this time) adds to the same file; sleeps are not file time. */
static void test_files_open_read_write_close(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-10.pwt", 10, 1, 0, 1000);
	put_string(fd, 8, "/data/a");
	put_string(fd, 16, "/missing");
	struct pw_rec_call a[] = {
		mkrec(PW_EV_OPEN, 10, 1000, 1100, 3, 3, 8, 0),
		mkrec(PW_EV_READ, 10, 1100, 1150, 200, 3, 200, 0),
		mkrec(PW_EV_WRITE, 10, 1200, 1220, 50, 3, 50, 0),
		mkrec(PW_EV_LSEEK, 10, 1230, 1232, 0, 3, 0, 0),
		mkrec(PW_EV_FSYNC, 10, 1240, 1250, 0, 3, 0, 0),
		mkrec(PW_EV_MMAP, 10, 1260, 1270, 0x7f0000000000ll, 3, 8192, 0),
		mkrec(PW_EV_CLOSE, 10, 1300, 1305, 0, 3, 0, 0),
		mkrec(PW_EV_READ, 10, 1400, 1410, 99, 3, 99, 0), /* fd 3 is closed: no file */
		mkrec(PW_EV_OPENAT, 10, 1420, 1430, -1, (uint64_t)-1, 16, ENOENT),
		mkrec(PW_EV_FOPEN, 10, 1500, 1600, 0x5500000010ll, 4, 8, 0),
		mkrec(PW_EV_FREAD, 10, 1600, 1700, 1, 4, 30, 0),
		mkrec(PW_EV_NANOSLEEP, 10, 1700, 1800, 0, 4, 0, 0),
		mkrec(PW_EV_FCLOSE, 10, 1800, 1801, 0, 4, 0, 0),
	};
	put_records(fd, a, NREC(a));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(r->nfiles, 1);
	assert_file(file_of(r, "/data/a"), 2, 2, 230, 1, 50, 100 + 50 + 20 + 2 + 10 + 10 + 5 + 100 + 100 + 1);
	assert_call(&r->calls[PW_EV_OPENAT], 1, 10, 10, 10, 0, 1);
	assert_int_equal(r->calls[PW_EV_MMAP].bytes, 8192);
	assert_int_equal(r->calls[PW_EV_READ].bytes, 299);
	pw_analysis_free(an);
}

/* The dd case: open("/dev/zero") = 3, dup2(3, 0), close(3), read(0) counts on /dev/zero. FD_INFO names the
 * inherited fds 1 and 2 without being a call or an event. */
/* Records come lane by lane: thread 11's close of fd 5 (the descriptor of /data/old) arrives after thread 10
 * opened /data/new and got 5 again, and before thread 10's reads of it. Times decide which file a read was
 * on, not the order the records arrive in. */
static void test_files_fd_reuse_across_threads(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-10.pwt", 10, 1, 0, 1000);
	put_string(fd, 8, "/data/old");
	put_string(fd, 16, "/data/new");
	struct pw_rec_call a[] = {
		mkrec(PW_EV_OPEN, 11, 1000, 1010, 5, 5, 8, 0),
		mkrec(PW_EV_OPEN, 10, 1100, 1110, 5, 5, 16, 0),
		mkrec(PW_EV_CLOSE, 11, 1050, 1060, 0, 5, 0, 0),
		mkrec(PW_EV_READ, 10, 1200, 1210, 7, 5, 7, 0),
		mkrec(PW_EV_READ, 11, 1020, 1030, 3, 5, 3, 0),
		mkrec(PW_EV_READ, 10, 1300, 1310, 7, 5, 7, 0),
		mkrec(PW_EV_CLOSE, 10, 1400, 1410, 0, 5, 0, 0),
		mkrec(PW_EV_READ, 10, 1500, 1510, 1, 5, 1, 0), /* closed: no file */
	};
	put_records(fd, a, NREC(a));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	const struct pw_file_stat *old = file_of(r, "/data/old"), *new = file_of(r, "/data/new");
	assert_int_equal(old->reads, 1);
	assert_int_equal(old->read_bytes, 3);
	assert_int_equal(new->reads, 2);
	assert_int_equal(new->read_bytes, 14);
	pw_analysis_free(an);
}

static void test_files_dup2_and_inherited(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-20.pwt", 20, 1, 0, 1000);
	put_string(fd, 8, "/dev/zero");
	put_string(fd, 24, "/dev/pts/0");
	struct pw_rec_call a[] = {
		mkrec(PW_EV_FD_INFO, 20, 1000, 1000, 0, 1, 24, 0),
		mkrec(PW_EV_FD_INFO, 20, 1000, 1000, 0, 2, 24, 0),
		mkrec(PW_EV_OPEN, 20, 1100, 1110, 3, 3, 8, 0),
		mkrec(PW_EV_DUP2, 20, 1120, 1121, 0, 0, 3, 0),
		mkrec(PW_EV_CLOSE, 20, 1130, 1131, 0, 3, 0, 0),
		mkrec(PW_EV_READ, 20, 1200, 1210, 512, 0, 512, 0),
		mkrec(PW_EV_READ, 20, 1300, 1320, 512, 0, 512, 0),
		mkrec(PW_EV_WRITE, 20, 1400, 1440, 1024, 1, 1024, 0),
		mkrec(PW_EV_WRITE, 20, 1500, 1505, 30, 2, 30, 0),
		mkrec(PW_EV_READ, 20, 1600, 1601, 7, 3, 7, 0), /* fd 3 was closed */
	};
	put_records(fd, a, NREC(a));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(r->nfiles, 2);
	assert_file(file_of(r, "/dev/zero"), 1, 2, 1024, 0, 0, 10 + 1 + 10 + 20);
	assert_file(file_of(r, "/dev/pts/0"), 0, 0, 0, 2, 1054, 40 + 5);
	assert_call(&r->calls[PW_EV_FD_INFO], 0, 0, 0, 0, 0, 0);
	assert_call(&r->calls[PW_EV_DUP2], 1, 1, 1, 1, 0, 0);
	assert_int_equal(r->events, 8);
	assert_int_equal(proc_of(r, 20, 0)->events, 8);
	pw_analysis_free(an);
}

/* dup from an fd of unknown origin unbinds the target; dup to itself changes nothing; fcntl(F_DUPFD) and dup
 * bind their new fd; a failed dup binds nothing. */
static void test_files_dup_variants(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-30.pwt", 30, 1, 0, 1000);
	put_string(fd, 8, "/a");
	struct pw_rec_call a[] = {
		mkrec(PW_EV_OPEN, 30, 1000, 1001, 3, 3, 8, 0),
		mkrec(PW_EV_DUP2, 30, 1002, 1003, 0, 0, 3, 0),
		mkrec(PW_EV_DUP2, 30, 1004, 1005, 0, 0, 9, 0), /* fd 9: unknown */
		mkrec(PW_EV_READ, 30, 1006, 1007, 100, 0, 100, 0),
		mkrec(PW_EV_FCNTL_DUPFD, 30, 1008, 1009, 10, 10, 3, 0),
		mkrec(PW_EV_READ, 30, 1010, 1011, 5, 10, 5, 0),
		mkrec(PW_EV_DUP2, 30, 1012, 1013, 3, 3, 3, 0),
		mkrec(PW_EV_READ, 30, 1014, 1015, 1, 3, 1, 0),
		mkrec(PW_EV_DUP, 30, 1016, 1017, -1, (uint64_t)-1, 3, EMFILE),
		mkrec(PW_EV_DUP3, 30, 1018, 1019, 11, 11, 3, 0),
		mkrec(PW_EV_READ, 30, 1020, 1021, 2, 11, 2, 0),
		mkrec(PW_EV_READ, 30, 1022, 1023, 1000, (uint64_t)1 << 40, 1000, 0), /* absurd fd */
		mkrec(PW_EV_OPEN, 30, 1024, 1025, 1, (uint64_t)1 << 30, 8, 0),    /* beyond the fd table */
	};
	put_records(fd, a, NREC(a));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(r->nfiles, 1);
	const struct pw_file_stat *f = file_of(r, "/a");
	assert_int_equal(f->reads, 3);
	assert_int_equal(f->read_bytes, 8);
	assert_int_equal(f->opens, 2);
	pw_analysis_free(an);
}

/* An open whose path is unknown (its string was dropped) still gives the fd a new, unknown file: a binding left
 * from before (its close lost) must not collect the new file's reads. */
static void test_open_without_path_unbinds_fd(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-40.pwt", 40, 1, 0, 1000);
	put_string(fd, 8, "/a");
	struct pw_rec_call a[] = {
		mkrec(PW_EV_OPEN, 40, 1000, 1001, 3, 3, 8, 0),
		mkrec(PW_EV_READ, 40, 1002, 1003, 10, 3, 10, 0),
		/* close(3) was lost; open of a path whose string was dropped returns 3 again */
		mkrec(PW_EV_OPEN, 40, 1004, 1005, 3, 3, 0, 0),
		mkrec(PW_EV_READ, 40, 1006, 1007, 20, 3, 20, 0),
	};
	put_records(fd, a, NREC(a));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	const struct pw_file_stat *f = file_of(r, "/a");
	assert_int_equal(f->reads, 1);
	assert_int_equal(f->read_bytes, 10);
	pw_analysis_free(an);
}

/* One open as the preload writes it (struct pw_rec_open), in a chunk of its own. */
static void put_open(int fd, uint16_t type, uint64_t t0, int64_t newfd, uint64_t path, int64_t dirfd, uint64_t cwd)
{
	struct pw_rec_open o = {mkrec(type, 60, t0, t0 + 10, newfd, (uint64_t)newfd, path, 0), dirfd, cwd};
	o.c.h.size8 = sizeof o / 8;
	put_chunk(fd, PW_CHUNK_RECORDS, &o, sizeof o, NULL, 0);
}

/* Files are named by the absolute path an open named: a relative path from the working directory its record
 * carries, or from openat's directory descriptor (opened, or named at start); "." and repeated slashes left
 * out. So two f.txt of two directories are two files, and a/f.txt reached as "./a//f.txt" from the directory
 * above is one. A relative path whose directory is unknown (a descriptor never named, an older writer's
 * open without one) stays as written. */
static void test_files_named_by_absolute_path(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-60.pwt", 60, 1, 0, 1000);
	static const char *const strs[] = {"f.txt", "/w/a", "/w/b", "./a//f.txt", "/w", "/w/c", "g.txt", "/w/d", "h.txt"};
	for (size_t i = 0; i < NREC(strs); i++)
		put_string(fd, 8 * (i + 1), strs[i]);
	put_open(fd, PW_EV_OPEN, 1000, 3, 8, AT_FDCWD, 16);
	struct pw_rec_call a[] = {mkrec(PW_EV_WRITE, 60, 1100, 1110, 100, 3, 100, 0),
				  mkrec(PW_EV_CLOSE, 60, 1200, 1210, 0, 3, 0, 0)};
	put_records(fd, a, NREC(a));
	put_open(fd, PW_EV_CREAT, 1300, 3, 8, AT_FDCWD, 24);
	struct pw_rec_call b[] = {mkrec(PW_EV_WRITE, 60, 1400, 1410, 200, 3, 200, 0)};
	put_records(fd, b, NREC(b));
	put_open(fd, PW_EV_FOPEN, 1500, 4, 32, AT_FDCWD, 40);
	struct pw_rec_call c[] = {mkrec(PW_EV_FREAD, 60, 1600, 1610, 1, 4, 100, 0),
				  mkrec(PW_EV_FD_INFO, 60, 1000, 1000, 0, 7, 64, 0)};
	put_records(fd, c, NREC(c));
	put_open(fd, PW_EV_OPEN, 1700, 5, 48, AT_FDCWD, 0);
	put_open(fd, PW_EV_OPENAT, 1800, 6, 56, 5, 0);
	put_open(fd, PW_EV_OPENAT, 1900, 8, 56, 7, 0);
	put_open(fd, PW_EV_OPENAT, 2000, 10, 72, 9, 0);
	struct pw_rec_call d[] = {mkrec(PW_EV_WRITE, 60, 2100, 2110, 10, 6, 10, 0),
				  mkrec(PW_EV_WRITE, 60, 2200, 2210, 20, 8, 20, 0),
				  mkrec(PW_EV_READ, 60, 2300, 2310, 5, 10, 5, 0),
				  mkrec(PW_EV_OPEN, 60, 2400, 2410, 11, 11, 72, 0)};
	put_records(fd, d, NREC(d));
	pwt_end(fd, PW_END_EXITED, 0, 3000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(r->nfiles, 7);
	assert_file(file_of(r, "/w/a/f.txt"), 2, 1, 100, 1, 100, 10 + 10 + 10 + 10 + 10);
	assert_file(file_of(r, "/w/b/f.txt"), 1, 0, 0, 1, 200, 10 + 10);
	assert_file(file_of(r, "/w/c"), 1, 0, 0, 0, 0, 10);
	assert_file(file_of(r, "/w/c/g.txt"), 1, 0, 0, 1, 10, 10 + 10);
	assert_file(file_of(r, "/w/d"), 0, 0, 0, 0, 0, 0);
	assert_file(file_of(r, "/w/d/g.txt"), 1, 0, 0, 1, 20, 10 + 10);
	assert_file(file_of(r, "h.txt"), 2, 1, 5, 0, 0, 10 + 10 + 10);
	pw_analysis_free(an);
}

/* A thread's lane can reach the file before the lane that holds the descriptor's open: its writes, made
 * after the open, count on the file all the same (test_process_corners saw 26 of 75,335 lost that way). */
static void test_write_before_its_open_in_file(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-60.pwt", 60, 1, 0, 1000);
	put_string(fd, 8, "f.txt");
	put_string(fd, 16, "/w");
	struct pw_rec_call w[] = {mkrec(PW_EV_WRITE, 61, 1100, 1110, 100, 3, 100, 0),
				  mkrec(PW_EV_READ, 61, 1200, 1210, 40, 3, 40, 0)};
	put_records(fd, w, NREC(w));
	put_open(fd, PW_EV_OPEN, 1000, 3, 8, AT_FDCWD, 16);
	struct pw_rec_call late[] = {mkrec(PW_EV_WRITE, 62, 900, 910, 7, 3, 7, 0)}; /* before the open: not it */
	put_records(fd, late, NREC(late));
	pwt_end(fd, PW_END_EXITED, 0, 3000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_file_stat *f = file_of(rank_of(an, 0), "/w/f.txt");
	assert_int_equal(f->writes, 1);
	assert_int_equal(f->write_bytes, 100);
	assert_int_equal(f->reads, 1);
	assert_int_equal(f->read_bytes, 40);
	/* and the trace's slices of them name it: the timeline's calls are bound too */
	const struct pw_rank_report *r = rank_of(an, 0);
	const struct pw_timeline *tl = r->timeline;
	assert_non_null(tl);
	size_t named = 0, unnamed = 0;
	for (size_t i = 0; i < tl->ncalls; i++) {
		const struct pw_tl_call *c = &tl->calls[i];
		if (pw_events[c->type].kind != PW_K_READ && pw_events[c->type].kind != PW_K_WRITE)
			continue;
		if (c->path != PW_TL_NONE && (c->path & PW_TL_FILE) &&
		    strcmp(r->files[c->path & ~PW_TL_FILE].path, "/w/f.txt") == 0)
			named++;
		else
			unnamed++;
	}
	assert_int_equal(named, 2);
	assert_int_equal(unnamed, 1); /* the write before the open */
	pw_analysis_free(an);
}

/* The reading thread's lane can also reach the file before the close that ends the binding its reads were on:
 * a read after the close, on the descriptor reopened to another file, counts on that one (test_fd_paths under
 * ASan saw every read on the first of three files). */
static void test_read_before_its_close_in_file(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-60.pwt", 60, 1, 0, 1000);
	put_string(fd, 8, "f0");
	put_string(fd, 16, "/w");
	put_string(fd, 24, "f1");
	put_open(fd, PW_EV_OPEN, 1000, 3, 8, AT_FDCWD, 16);
	struct pw_rec_call reads[] = {mkrec(PW_EV_READ, 61, 1100, 1110, 100, 3, 100, 0),
				      mkrec(PW_EV_READ, 61, 2100, 2110, 30, 3, 30, 0)};
	put_records(fd, reads, NREC(reads));
	struct pw_rec_call close0 = mkrec(PW_EV_CLOSE, 60, 2000, 2005, 0, 3, 0, 0);
	put_records(fd, &close0, 1);
	put_open(fd, PW_EV_OPEN, 2050, 3, 24, AT_FDCWD, 16);
	pwt_end(fd, PW_END_EXITED, 0, 3000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_file_stat *f0 = file_of(rank_of(an, 0), "/w/f0"), *f1 = file_of(rank_of(an, 0), "/w/f1");
	assert_int_equal(f0->reads, 1);
	assert_int_equal(f0->read_bytes, 100);
	assert_int_equal(f1->reads, 1);
	assert_int_equal(f1->read_bytes, 30);
	pw_analysis_free(an);
}

/* Stat-family and access calls name files as opens do: a relative path from the working directory the record
 * carries or from the directory descriptor; an empty path (AT_EMPTY_PATH) is the descriptor's own file. Only
 * calls that succeeded count. */
static void test_stats_named_by_absolute_path(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-60.pwt", 60, 1, 0, 1000);
	static const char *const strs[] = {"f.txt", "/w/a", "/w/b", "/w", "a/f.txt", ""};
	for (size_t i = 0; i < NREC(strs); i++)
		put_string(fd, 8 * (i + 1), strs[i]);
	put_open(fd, PW_EV_STAT, 1000, 0, 8, AT_FDCWD, 16);
	put_open(fd, PW_EV_ACCESS, 1100, 0, 8, AT_FDCWD, 16);
	put_open(fd, PW_EV_STAT, 1200, 0, 8, AT_FDCWD, 24);
	put_open(fd, PW_EV_OPEN, 1300, 3, 32, AT_FDCWD, 0);
	put_open(fd, PW_EV_FSTATAT, 1400, 0, 40, 3, 0);
	put_open(fd, PW_EV_FSTATAT, 1500, 0, 48, 3, 0);
	struct pw_rec_open failed = {mkrec(PW_EV_STAT, 60, 1600, 1610, -1, AT_FDCWD, 8, 0), AT_FDCWD, 24};
	failed.c.h.size8 = sizeof failed / 8;
	failed.c.h.err = ENOENT;
	put_chunk(fd, PW_CHUNK_RECORDS, &failed, sizeof failed, NULL, 0);
	pwt_end(fd, PW_END_EXITED, 0, 3000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(file_of(r, "/w/a/f.txt")->stats, 3);
	assert_int_equal(file_of(r, "/w/b/f.txt")->stats, 1);
	assert_int_equal(file_of(r, "/w")->stats, 1);
	for (size_t i = 0; i < r->nfiles; i++)
		assert_true(r->files[i].path[0] == '/');
	pw_analysis_free(an);
}

/* fds are per process: an fd bound in one process means nothing in another of the same rank. */
static void test_fd_map_per_process(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-50.pwt", 50, 1, 0, 1000);
	put_string(fd, 8, "/a");
	struct pw_rec_call a[] = {mkrec(PW_EV_OPEN, 50, 1000, 1001, 3, 3, 8, 0)};
	put_records(fd, a, NREC(a));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);
	fd = pwt_open(fx, "0-51.pwt", 51, 1, 0, 1500);
	struct pw_rec_call b[] = {mkrec(PW_EV_READ, 51, 1600, 1601, 9, 3, 9, 0)};
	put_records(fd, b, NREC(b));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_file(file_of(r, "/a"), 1, 0, 0, 0, 0, 1);
	assert_int_equal(r->calls[PW_EV_READ].bytes, 9);
	pw_analysis_free(an);
}

/* ---- processes ---- */

/* How each process ended: its END (exited with a code, exec'd with a path, vanished, still running), no END at
 * all (how 0), and a parent's waitpid that tells the signal or exit code, applied to the pid's last image. */
static void test_process_endings(void **state)
{
	struct fx *fx = *state;
	assert_true(WIFSIGNALED(9) && WTERMSIG(9) == SIGKILL); /* the waitpid status of a SIGKILLed child */
	int fd = pwt_open(fx, "0-200.pwt", 200, 1, 0, 1000);
	struct pw_rec_call a[] = {
		mkrec(PW_EV_FORK, 200, 1100, 1200, 203, 203, 0, 0),
		mkrec(PW_EV_WAITPID, 200, 5000, 6000, 203, 203, 9, 0),
		mkrec(PW_EV_WAITPID, 200, 6000, 6100, 204, 204, 7 << 8, 0),
		mkrec(PW_EV_WAITPID, 200, 6100, 6200, 201, 201, SIGTERM, 0),
		mkrec(PW_EV_WAITPID, 200, 6200, 6300, 0, 0, 9, 0),                    /* WNOHANG: none */
		mkrec(PW_EV_WAIT, 200, 6300, 6400, -1, (uint64_t)-1, 9, ECHILD), /* none */
	};
	put_records(fd, a, NREC(a));
	pwt_end(fd, PW_END_EXITED, 3, 7000, 0);

	fd = pwt_open(fx, "0-201.pwt", 201, 200, 0, 2000);
	put_string(fd, 8, "/bin/ls");
	pwt_end(fd, PW_END_EXECED, 0, 2500, 8);
	struct procspec ps1 = {201, 200, 0, 2, 2600, "ls\0-l", 5, "/bin/ls", "node0", 1, 0};
	fd = pwt_open_spec(fx, "0-201.1.pwt", &ps1);
	struct pw_rec_call b[] = {mkrec(PW_EV_WRITE, 201, 2700, 2900, 5, 1, 5, 0)};
	put_records(fd, b, NREC(b));
	pwt_end(fd, PW_END_VANISHED, 0, 0, 0);

	fd = pwt_open(fx, "0-202.pwt", 202, 200, 0, 3000);
	struct pw_rec_call c[] = {
		mkrec(PW_EV_READ, 202, 3000, 3500, 1, 0, 1, 0),
		mkrec(PW_EV_WAITPID, 202, 3500, 3600, 200, 200, 5 << 8, 0), /* 200's own END says 3 */
	};
	put_records(fd, c, NREC(c));
	close(fd); /* no END */

	fd = pwt_open(fx, "0-203.pwt", 203, 200, 0, 3100);
	pwt_end(fd, PW_END_VANISHED, 0, 0, 0);
	fd = pwt_open(fx, "0-204.pwt", 204, 200, 0, 3200);
	pwt_end(fd, PW_END_VANISHED, 0, 0, 0);
	fd = pwt_open(fx, "0-205.pwt", 205, 200, 0, 3300);
	pwt_end(fd, PW_END_RUNNING, 0, 0, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(r->nprocs, 7);
	/* sorted by start */
	static const int order[] = {200, 201, 201, 202, 203, 204, 205};
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(r->procs[i].pid, order[i]);
	assert_int_equal(r->procs[1].image, 0);
	assert_int_equal(r->procs[2].image, 1);

	const struct pw_proc *p = proc_of(r, 200, 0);
	assert_int_equal(p->how, PW_END_EXITED);
	assert_int_equal(p->exit_code, 3);
	assert_int_equal(p->signal, 0);
	assert_int_equal(p->end_ns, 7000);
	assert_null(p->exec_path);

	p = proc_of(r, 201, 0);
	assert_int_equal(p->how, PW_END_EXECED);
	assert_non_null(p->exec_path);
	assert_string_equal(p->exec_path, "/bin/ls");
	assert_int_equal(p->exit_code, -1);
	assert_int_equal(p->signal, 0); /* the wait names the last image */
	assert_int_equal(p->end_ns, 2500);
	assert_string_equal(p->argv, "prog arg");

	p = proc_of(r, 201, 1);
	assert_int_equal(p->how, PW_END_VANISHED);
	assert_int_equal(p->signal, SIGTERM);
	assert_int_equal(p->exit_code, -1);
	assert_int_equal(p->end_ns, 2900);
	assert_string_equal(p->argv, "ls -l");
	assert_string_equal(p->exe, "/bin/ls");
	assert_int_equal(p->ppid, 200);

	p = proc_of(r, 202, 0);
	assert_int_equal(p->how, 0);
	assert_int_equal(p->exit_code, -1);
	assert_int_equal(p->signal, 0);
	assert_int_equal(p->end_ns, 3600);

	p = proc_of(r, 203, 0);
	assert_int_equal(p->how, PW_END_VANISHED);
	assert_int_equal(p->signal, 9);
	assert_int_equal(p->exit_code, -1);
	assert_int_equal(p->end_ns, 3100); /* no records, no end time: its start */

	p = proc_of(r, 204, 0);
	assert_int_equal(p->how, PW_END_VANISHED);
	assert_int_equal(p->signal, 0);
	assert_int_equal(p->exit_code, 7);

	p = proc_of(r, 205, 0);
	assert_int_equal(p->how, PW_END_RUNNING);
	assert_int_equal(p->exit_code, -1);
	assert_int_equal(p->signal, 0);

	assert_int_equal(r->start_ns, 1000);
	assert_int_equal(r->end_ns, 7000);
	assert_int_equal(r->wall_ns, 6000);
	pw_analysis_free(an);
}

/* pids are unique per host only: ranks 0 and 1 on different hosts both have a pid 300. The SIGKILL that
 * pid 299 on node B saw when it reaped its child 300 belongs to node B's pid 300, not to node A's, which
 * exited 0 on its own. */
static void test_wait_applies_to_child_on_same_host(void **state)
{
	struct fx *fx = *state;
	struct procspec a0 = {300, 1, 0, 2, 1000, "a", 1, "/a", "nodeA", 0, 0};
	int fd = pwt_open_spec(fx, "0-300.pwt", &a0);
	pwt_end(fd, PW_END_EXITED, 0, 5000, 0);
	struct procspec b0 = {299, 1, 1, 2, 900, "b", 1, "/b", "nodeB", 0, 0};
	fd = pwt_open_spec(fx, "1-299.pwt", &b0);
	struct pw_rec_call w[] = {mkrec(PW_EV_WAITPID, 299, 3000, 4000, 300, 300, 9, 0)};
	put_records(fd, w, NREC(w));
	pwt_end(fd, PW_END_EXITED, 0, 5000, 0);
	struct procspec b1 = {300, 299, 1, 2, 1100, "c", 1, "/c", "nodeB", 0, 0};
	fd = pwt_open_spec(fx, "1-300.pwt", &b1);
	pwt_end(fd, PW_END_VANISHED, 0, 0, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_proc *p = proc_of(rank_of(an, 1), 300, 0);
	assert_int_equal(p->signal, 9);
	p = proc_of(rank_of(an, 0), 300, 0);
	assert_int_equal(p->signal, 0);
	assert_int_equal(p->exit_code, 0);
	pw_analysis_free(an);
}

/* session.txt: the CLI's command, target pid and its wait status (killed by SIGINT here) set the target's
 * signal and the command of the target's rank; other ranks keep their first process's argv. */
static void test_session_target_signal(void **state)
{
	struct fx *fx = *state;
	write_text(fx, "session.txt", "command=mpirun -n 2 ./train --lr 0.1\ntarget_pid=400\ntarget_status=2\n");
	struct procspec t = {400, 1, 0, 2, 1000, "mpirun\0-n\0" "2", 11, "/usr/bin/mpirun", "n0", 0, 0};
	int fd = pwt_open_spec(fx, "0-400.pwt", &t);
	pwt_end(fd, PW_END_VANISHED, 0, 0, 0);
	fd = pwt_open(fx, "0-401.pwt", 401, 400, 0, 2000);
	pwt_end(fd, PW_END_EXITED, 0, 3000, 0);
	struct procspec r1 = {500, 1, 1, 2, 1500, "./train\0--lr\0" "0.1", 16, "/w/train", "n1", 0, 0};
	fd = pwt_open_spec(fx, "1-500.pwt", &r1);
	pwt_end(fd, PW_END_EXITED, 0, 3000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	assert_non_null(an->command);
	assert_string_equal(an->command, "mpirun -n 2 ./train --lr 0.1");
	assert_int_equal(an->target_pid, 400);
	assert_int_equal(an->target_status, 2);
	const struct pw_rank_report *r = rank_of(an, 0);
	const struct pw_proc *p = proc_of(r, 400, 0);
	assert_int_equal(p->signal, SIGINT);
	assert_int_equal(p->exit_code, -1);
	assert_int_equal(proc_of(r, 401, 0)->exit_code, 0);
	assert_string_equal(r->command, "mpirun -n 2 ./train --lr 0.1");
	assert_string_equal(rank_of(an, 1)->command, "./train --lr 0.1");
	pw_analysis_free(an);
}

/* A target that exited: its exit code comes from target_status when its own record has none, and its own
 * record wins when it has one. */
static void test_session_target_exit_code(void **state)
{
	struct fx *fx = *state;
	write_text(fx, "session.txt", "target_status=1280\ntarget_pid=410\n");
	int fd = pwt_open(fx, "0-410.pwt", 410, 1, 0, 1000);
	pwt_end(fd, PW_END_VANISHED, 0, 0, 0);
	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	assert_null(an->command);
	assert_int_equal(an->target_pid, 410);
	assert_int_equal(an->target_status, 1280);
	const struct pw_proc *p = proc_of(rank_of(an, 0), 410, 0);
	assert_int_equal(p->exit_code, 5);
	assert_int_equal(p->signal, 0);
	assert_string_equal(rank_of(an, 0)->command, "prog arg");
	pw_analysis_free(an);

	write_text(fx, "session.txt", "target_pid=410\ntarget_status=1280\n");
	fd = pwt_open(fx, "0-410.pwt", 410, 1, 0, 1000);
	pwt_end(fd, PW_END_EXITED, 3, 2000, 0);
	analyze_ok(fx, an);
	p = proc_of(rank_of(an, 0), 410, 0);
	assert_int_equal(p->exit_code, 3);
	pw_analysis_free(an);
}

/* A session file that is a FIFO is passed over, not opened to wait for a writer that never comes (the alarm
 * turns a hang into a failure); a regular one beside it is read. */
static void test_session_fifo(void **state)
{
	struct fx *fx = *state;
	char path[256];
	snprintf(path, sizeof path, "%s/session-0-h-9.txt", fx->raw);
	assert_int_equal(mkfifo(path, 0600), 0);
	write_text(fx, "session.txt", "target_pid=410\ntarget_status=1280\n");
	int fd = pwt_open(fx, "0-410.pwt", 410, 1, 0, 1000);
	pwt_end(fd, PW_END_VANISHED, 0, 0, 0);
	struct pw_analysis *an = &fx->an;
	alarm(10);
	analyze_ok(fx, an);
	alarm(0);
	assert_int_equal(an->target_pid, 410);
	assert_int_equal(proc_of(rank_of(an, 0), 410, 0)->exit_code, 5);
}

/* Without session.txt: no command, target_status -1, and the rank's command is its first process's argv with
 * the separators turned into spaces. */
static void test_no_session(void **state)
{
	struct fx *fx = *state;
	struct procspec ps = {600, 1, 0, 1, 1000, "python\0train.py\0--epochs=2", 26, "/usr/bin/python3", "n0", 0, 0};
	int fd = pwt_open_spec(fx, "0-600.pwt", &ps);
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);
	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	assert_null(an->command);
	assert_int_equal(an->target_pid, 0);
	assert_int_equal(an->target_status, -1);
	assert_string_equal(rank_of(an, 0)->command, "python train.py --epochs=2");
	assert_string_equal(rank_of(an, 0)->procs[0].argv, "python train.py --epochs=2");
	assert_string_equal(an->out_dir, fx->dir);
	pw_analysis_free(an);
}

/* ---- ranks ---- */

/* Processes land in the rank their PROC names, whatever the file is called; ranks come out sorted; a rank's
 * start is its earliest process's, with that process's realtime; wall = last end - first start. */
static void test_ranks(void **state)
{
	struct fx *fx = *state;
	struct procspec a = {10, 1, 1, 4, 1000, "a", 1, "/a", "hostB", 0, 10000};
	int fd = pwt_open_spec(fx, "a.pwt", &a);
	pwt_end(fd, PW_END_EXITED, 0, 5000, 0);
	struct procspec b = {20, 1, 0, 2, 1500, "b", 1, "/b", "hostA", 0, 15000};
	fd = pwt_open_spec(fx, "b.pwt", &b);
	pwt_end(fd, PW_END_EXITED, 0, 2500, 0);
	struct procspec c = {11, 1, 1, 4, 500, "c", 1, "/c", "hostB", 0, 5000};
	fd = pwt_open_spec(fx, "c.pwt", &c);
	struct pw_rec_call rc[] = {mkrec(PW_EV_WRITE, 11, 600, 7000, 1, 1, 1, 0)};
	put_records(fd, rc, NREC(rc));
	close(fd);
	struct procspec d = {30, 1, 3, 0, 100, "d", 1, "/d", "", 0, 100};
	fd = pwt_open_spec(fx, "d.pwt", &d);
	close(fd);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	assert_int_equal(an->nranks, 3);
	assert_int_equal(an->ranks[0].rank, 0);
	assert_int_equal(an->ranks[1].rank, 1);
	assert_int_equal(an->ranks[2].rank, 3);

	const struct pw_rank_report *r = &an->ranks[0];
	assert_int_equal(r->nprocs, 1);
	assert_int_equal(r->procs[0].pid, 20);
	assert_int_equal(r->procs[0].rank, 0);
	assert_int_equal(r->world_size, 2);
	assert_string_equal(r->host, "hostA");
	assert_int_equal(r->wall_ns, 1000);

	r = &an->ranks[1];
	assert_int_equal(r->nprocs, 2);
	assert_int_equal(r->procs[0].pid, 11);
	assert_int_equal(r->procs[1].pid, 10);
	assert_int_equal(r->world_size, 4);
	assert_string_equal(r->host, "hostB");
	assert_int_equal(r->start_ns, 500);
	assert_int_equal(r->start_realtime_ns, 5000);
	assert_int_equal(r->end_ns, 7000);
	assert_int_equal(r->wall_ns, 6500);
	assert_string_equal(r->command, "c");

	r = &an->ranks[2];
	assert_int_equal(r->nprocs, 1);
	assert_int_equal(r->world_size, 1); /* 0 in the file: at least 1 */
	assert_null(r->host);
	assert_int_equal(r->start_ns, 100);
	assert_int_equal(r->end_ns, 100);
	assert_int_equal(r->wall_ns, 0);
	pw_analysis_free(an);
}

/* ---- drops and skips ---- */

/* LOST chunks are cumulative per lane: lane 0 says 5 then 12, lane 2 says 3 (then a stale 1): 15 dropped. A
 * second process adds its own. */
static void test_dropped_cumulative(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-70.pwt", 70, 1, 0, 1000);
	put_lost(fd, 0, 5);
	put_lost(fd, 2, 3);
	put_lost(fd, 0, 12);
	put_lost(fd, 2, 1);
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);
	fd = pwt_open(fx, "0-71.pwt", 71, 1, 0, 1100);
	put_lost(fd, 0, 4);
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(proc_of(r, 70, 0)->dropped, 15);
	assert_int_equal(proc_of(r, 71, 0)->dropped, 4);
	assert_int_equal(r->dropped, 19);
	pw_analysis_free(an);
}

/* Records the reader refused and the END's bad_records add up in skipped; arena_dropped in strings_dropped;
 * threads counts distinct tids. */
static void test_skipped_and_strings_dropped(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-80.pwt", 80, 1, 0, 1000);
	struct pw_rec_call a[] = {
		mkrec(PW_EV_READ, 80, 1000, 1001, 1, 0, 1, 0),
		mkrec(999, 80, 1000, 1001, 1, 0, 1, 0),
		mkrec(PW_EV_READ, 81, 1000, 1001, 1, 0, 1, 0),
		mkrec(PW_EV_READ, 80, 1000, 1001, 1, 0, 1, 0),
		mkrec(PW_EV_READ, 82, 1000, 1001, 1, 0, 1, 0),
	};
	put_records(fd, a, NREC(a));
	struct pw_raw_end e = {.how = PW_END_EXITED, .end_ticks = 2000, .arena_dropped = 6, .bad_records = 2,
				 .shm_refused = 5};
	pwt_end_full(fd, &e);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	const struct pw_proc *p = proc_of(r, 80, 0);
	assert_int_equal(p->skipped, 3);
	assert_int_equal(p->events, 4);
	assert_int_equal(p->threads, 3);
	assert_int_equal(r->skipped, 3);
	assert_int_equal(r->strings_dropped, 6);
	assert_int_equal(r->shm_refused, 5);
	pw_analysis_free(an);
}

/* ---- coverage ---- */

/* seen/kernel over the processes whose END carries the kernel's counters: pid 60 saw 800 of 1600 bytes; pid 61
 * has no counters and does not count. In rank 1 the kernel's counters at the second image's exit span both
 * images, and so do the bytes seen. A rank with no counters has coverage 1. */
static void test_coverage(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-60.pwt", 60, 1, 0, 1000);
	struct pw_rec_call a[] = {
		mkrec(PW_EV_READ, 60, 1100, 1200, 300, 0, 300, 0),
		mkrec(PW_EV_FREAD, 60, 1200, 1300, 1, 0, 200, 0),
		mkrec(PW_EV_WRITE, 60, 1300, 1400, 300, 1, 300, 0),
	};
	put_records(fd, a, NREC(a));
	struct pw_raw_end e = {.how = PW_END_EXITED, .end_ticks = 2000, .io_rchar = 1000, .io_wchar = 600,
				 .io_valid = 1};
	pwt_end_full(fd, &e);
	fd = pwt_open(fx, "0-61.pwt", 61, 1, 0, 1000);
	struct pw_rec_call b[] = {mkrec(PW_EV_READ, 61, 1100, 1200, 999, 0, 999, 0)};
	put_records(fd, b, NREC(b));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	fd = pwt_open(fx, "1-70.pwt", 70, 1, 1, 1000);
	struct pw_rec_call c[] = {mkrec(PW_EV_READ, 70, 1100, 1200, 100, 0, 100, 0)};
	put_records(fd, c, NREC(c));
	pwt_end(fd, PW_END_EXECED, 0, 1500, 0);
	struct procspec img1 = {70, 1, 1, 2, 1600, "x", 1, "/x", "n", 1, 0};
	fd = pwt_open_spec(fx, "1-70.1.pwt", &img1);
	struct pw_rec_call d[] = {mkrec(PW_EV_WRITE, 70, 1700, 1800, 300, 1, 300, 0)};
	put_records(fd, d, NREC(d));
	struct pw_raw_end e2 = {.how = PW_END_EXITED, .end_ticks = 2000, .io_rchar = 500, .io_wchar = 300,
				 .io_valid = 1};
	pwt_end_full(fd, &e2);

	fd = pwt_open(fx, "2-90.pwt", 90, 1, 2, 1000);
	struct pw_rec_call f[] = {mkrec(PW_EV_READ, 90, 1100, 1200, 5, 0, 5, 0)};
	put_records(fd, f, NREC(f));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(r->kernel_bytes, 1600);
	assert_int_equal(r->seen_bytes, 800);
	assert_true(r->coverage == 0.5);
	const struct pw_proc *p = proc_of(r, 60, 0);
	assert_int_equal(p->io_valid, 1);
	assert_int_equal(p->io_rchar, 1000);
	assert_int_equal(p->io_wchar, 600);
	assert_int_equal(proc_of(r, 61, 0)->io_valid, 0);

	r = rank_of(an, 1);
	assert_int_equal(r->kernel_bytes, 800);
	assert_int_equal(r->seen_bytes, 400);
	assert_true(r->coverage == 0.5);

	r = rank_of(an, 2);
	assert_int_equal(r->kernel_bytes, 0);
	assert_true(r->coverage == 1.0);
	pw_analysis_free(an);
}

/* The window of each image: from the end of its set-up (io_start) to its exit or exec, less what profwrap and
 * the loader moved in it (io_own, io_loader), plus what libc flushed after the counters were read
 * (io_unflushed); the exec and the loader before each window are left out (left_out); stdio's read-ahead
 * never taken counts as seen (io_unread), and a reaped child's bytes come off its parent's. Pid 40:
 * image 0 (100..450, 50 its own) and image 1 (900..2600, 10 its own, 40 unflushed, 60 unread), reaped
 * pid 41 (700 at its end, 50 before its window). In rank 1, pid 50 reaped a child killed before it
 * reported: neither can be checked. */
static void test_coverage_window(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-40.pwt", 40, 1, 0, 1000);
	struct pw_rec_call a[] = {mkrec(PW_EV_READ, 40, 1100, 1200, 250, 0, 250, 0)};
	put_records(fd, a, NREC(a));
	struct pw_raw_end e0 = {.how = PW_END_EXECED, .end_ticks = 1500, .io_rchar = 400, .io_wchar = 50,
				 .io_valid = 1, .io_start_rchar = 100, .io_start_valid = 1, .io_own = 20,
				 .io_loader = 30};
	pwt_end_full(fd, &e0);
	struct procspec img1 = {40, 1, 0, 2, 1600, "x", 1, "/x", "node0", 1, 0};
	fd = pwt_open_spec(fx, "0-40.1.pwt", &img1);
	struct pw_rec_call b[] = {
		mkrec(PW_EV_WRITE, 40, 1700, 1800, 900, 1, 900, 0),
		mkrec(PW_EV_WAITPID, 40, 1800, 1900, 41, 41, 0, 0),
	};
	put_records(fd, b, NREC(b));
	struct pw_raw_end e1 = {.how = PW_END_EXITED, .end_ticks = 2000, .io_rchar = 1900, .io_wchar = 700,
				 .io_valid = 1, .io_start_rchar = 800, .io_start_wchar = 100, .io_start_valid = 1,
				 .io_own = 10, .io_unflushed = 40, .io_unread = 60};
	pwt_end_full(fd, &e1);
	fd = pwt_open(fx, "0-41.pwt", 41, 40, 0, 1650);
	struct pw_rec_call c[] = {mkrec(PW_EV_READ, 41, 1660, 1670, 640, 0, 640, 0)};
	put_records(fd, c, NREC(c));
	struct pw_raw_end e2 = {.how = PW_END_EXITED, .end_ticks = 1700, .io_rchar = 500, .io_wchar = 200,
				 .io_valid = 1, .io_start_rchar = 50, .io_start_valid = 1};
	pwt_end_full(fd, &e2);

	fd = pwt_open(fx, "1-50.pwt", 50, 1, 1, 1000);
	struct pw_rec_call d[] = {mkrec(PW_EV_WAITPID, 50, 1100, 1200, 51, 51, SIGKILL, 0)};
	put_records(fd, d, NREC(d));
	struct pw_raw_end e3 = {.how = PW_END_EXITED, .end_ticks = 2000, .io_rchar = 5000, .io_wchar = 10,
				 .io_valid = 1, .io_start_rchar = 100, .io_start_valid = 1};
	pwt_end_full(fd, &e3);
	fd = pwt_open(fx, "1-51.pwt", 51, 50, 1, 1010);
	pwt_end(fd, PW_END_VANISHED, 0, 0, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	/* pid 40: (450 - 100 - 50) + (2600 - 900 - 10 + 40) - 700; pid 41: 700 - 50 */
	assert_int_equal(r->kernel_bytes, 300 + 1730 - 700 + 650);
	assert_int_equal(r->seen_bytes, 250 + 900 + 60 + 640);
	/* pid 40: 50 + 10 in its windows, 100 + (900 - 450) before them; pid 41: 50 before its window */
	assert_int_equal(r->io_left_out, 60 + 550 + 50);
	assert_int_equal(r->io_checked, 2);
	assert_int_equal(r->io_unchecked, 0);

	r = rank_of(an, 1);
	assert_int_equal(r->kernel_bytes, 0);
	assert_int_equal(r->io_checked, 0);
	assert_int_equal(r->io_unchecked, 2);
	assert_int_equal(r->io_unchecked_pid, 50);
	pw_analysis_free(an);
}

/* ---- libraries ---- */

/* dlopen records group by path: loads, total load time, failures (ret 0); a NULL path is the main program. */
static void test_libraries(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-90.pwt", 90, 1, 0, 1000);
	put_string(fd, 8, "/usr/lib/libA.so");
	put_string(fd, 32, "/usr/lib/libB.so");
	struct pw_rec_call a[] = {
		mkrec(PW_EV_DLOPEN, 90, 1000, 1100, 0x7f0000001000ll, 0, 8, 0),
		mkrec(PW_EV_DLOPEN, 90, 1200, 1500, 0x7f0000001000ll, 0, 8, 0),
		mkrec(PW_EV_DLOPEN, 90, 1600, 1650, 0, 0, 32, 0),
		mkrec(PW_EV_DLOPEN, 90, 1700, 1701, 0x7f0000002000ll, 0, 0, 0),
		mkrec(PW_EV_DLCLOSE, 90, 1800, 1810, 0, 0, 0, 0),
	};
	put_records(fd, a, NREC(a));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);
	/* the same library in another process of the rank */
	fd = pwt_open(fx, "0-91.pwt", 91, 90, 0, 1000);
	put_string(fd, 16, "/usr/lib/libA.so");
	struct pw_rec_call b[] = {mkrec(PW_EV_DLOPEN, 91, 1000, 1010, 0x7f0000001000ll, 0, 16, 0)};
	put_records(fd, b, NREC(b));
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(r->nlibs, 3);
	const struct pw_lib_stat *l = lib_of(r, "/usr/lib/libA.so");
	assert_int_equal(l->loads, 3);
	assert_int_equal(l->load_ns, 100 + 300 + 10);
	assert_int_equal(l->failures, 0);
	l = lib_of(r, "/usr/lib/libB.so");
	assert_int_equal(l->loads, 1);
	assert_int_equal(l->load_ns, 50);
	assert_int_equal(l->failures, 1);
	l = lib_of(r, "(main program)");
	assert_int_equal(l->loads, 1);
	assert_int_equal(l->failures, 0);
	assert_call(&r->calls[PW_EV_DLOPEN], 5, 461, 1, 300, 0, 0);
	assert_int_equal(r->calls[PW_EV_DLCLOSE].count, 1);
	assert_int_equal(r->nfiles, 0);
	pw_analysis_free(an);
}

/* ---- damaged input and errors ---- */

/* Runs pw_analyze with stderr captured into buf. */
static int analyze_capturing(const struct fx *fx, struct pw_analysis *a, char *err, size_t errlen, char *buf,
			     size_t buflen)
{
	char path[128];
	snprintf(path, sizeof path, "%s/stderr.txt", fx->dir);
	fflush(stderr);
	int saved = dup(2);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	int rc = pw_analyze(fx->dir, a, err, errlen);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, buflen - 1, f);
	buf[n] = 0;
	fclose(f);
	unlink(path);
	return rc;
}

/* Unreadable files among good ones (garbage, empty, a header alone, a directory named .pwt) are reported on
 * stderr and skipped; files not named .pwt are ignored. */
static void test_garbage_among_good(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "0-1.pwt", 1, 0, 0, 1000);
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);
	fd = pwt_open(fx, "1-5.pwt", 5, 0, 1, 1000);
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);
	write_text(fx, "0-2.pwt", "this is not a trace, this is not a trace, this is not a trace\n");
	write_text(fx, "0-3.pwt", "");
	char path[256];
	snprintf(path, sizeof path, "%s/0-4.pwt", fx->raw);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pw_raw_write_header(fd), 0);
	close(fd);
	snprintf(path, sizeof path, "%s/sub.pwt", fx->raw);
	assert_int_equal(mkdir(path, 0755), 0);
	write_text(fx, "notes.txt", "not read");
	write_text(fx, ".pwt", "not read either");

	struct pw_analysis *an = &fx->an;
	char err[512] = "", log[8192];
	assert_int_equal(analyze_capturing(fx, an, err, sizeof err, log, sizeof log), 0);
	assert_int_equal(an->nranks, 2);
	assert_int_equal(rank_of(an, 0)->nprocs, 1);
	assert_int_equal(rank_of(an, 1)->nprocs, 1);
	assert_non_null(strstr(log, "0-2.pwt"));
	assert_non_null(strstr(log, "0-3.pwt"));
	assert_non_null(strstr(log, "0-4.pwt"));
	assert_non_null(strstr(log, "sub.pwt"));
	assert_null(strstr(log, "0-1.pwt"));
	assert_null(strstr(log, "notes.txt"));
	pw_analysis_free(an);
}

/* A directory without raw/: -1, naming the directory. */
static void test_error_no_raw_dir(void **state)
{
	struct fx *fx = *state;
	assert_int_equal(rmdir(fx->raw), 0);
	struct pw_analysis *an = &fx->an;
	char err[512] = "";
	assert_int_equal(pw_analyze(fx->dir, an, err, sizeof err), -1);
	if (!strstr(err, fx->dir))
		fail_msg("error does not name the directory: %s", err);
	assert_int_equal(an->nranks, 0);
	assert_null(an->ranks);
	pw_analysis_free(an);
}

/* raw/ with no .pwt file, then with only unreadable ones: -1 each time. */
static void test_error_no_traces(void **state)
{
	struct fx *fx = *state;
	struct pw_analysis *an = &fx->an;
	char err[512] = "";
	assert_int_equal(pw_analyze(fx->dir, an, err, sizeof err), -1);
	assert_non_null(strstr(err, "no raw traces"));
	assert_non_null(strstr(err, fx->raw));
	pw_analysis_free(an);

	write_text(fx, "notes.txt", "x");
	write_text(fx, "session.txt", "target_pid=1\n");
	err[0] = 0;
	assert_int_equal(pw_analyze(fx->dir, an, err, sizeof err), -1);
	assert_non_null(strstr(err, "no raw traces"));
	pw_analysis_free(an);

	write_text(fx, "0-1.pwt", "garbage garbage garbage garbage");
	err[0] = 0;
	char log[4096];
	assert_int_equal(analyze_capturing(fx, an, err, sizeof err, log, sizeof log), -1);
	assert_non_null(strstr(err, "no readable raw trace"));
	assert_non_null(strstr(log, "0-1.pwt"));
	assert_int_equal(an->nranks, 0);
	pw_analysis_free(an);
}

/* ---- reports ---- */

/* A small JSON checker: the whole text is one valid JSON value. */
struct jp {
	const char *s;
	size_t i, n;
	int depth;
};

static void j_ws(struct jp *p)
{
	while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]) && p->s[p->i])
		p->i++;
}

static int j_value(struct jp *p);

static int j_string(struct jp *p)
{
	if (p->i >= p->n || p->s[p->i] != '"')
		return 0;
	for (p->i++; p->i < p->n; p->i++) {
		unsigned char c = (unsigned char)p->s[p->i];
		if (c == '"') {
			p->i++;
			return 1;
		}
		if (c < 0x20)
			return 0;
		if (c == '\\') {
			if (++p->i >= p->n || !strchr("\"\\/bfnrtu", p->s[p->i]) || !p->s[p->i])
				return 0;
			if (p->s[p->i] == 'u') {
				for (int k = 0; k < 4; k++)
					if (++p->i >= p->n || !strchr("0123456789abcdefABCDEF", p->s[p->i]) || !p->s[p->i])
						return 0;
			}
		}
	}
	return 0;
}

static int j_digits(struct jp *p)
{
	size_t start = p->i;
	while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
		p->i++;
	return p->i > start;
}

static int j_number(struct jp *p)
{
	if (p->i < p->n && p->s[p->i] == '-')
		p->i++;
	if (p->i < p->n && p->s[p->i] == '0')
		p->i++;
	else if (!j_digits(p))
		return 0;
	if (p->i < p->n && p->s[p->i] == '.') {
		p->i++;
		if (!j_digits(p))
			return 0;
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		if (!j_digits(p))
			return 0;
	}
	return 1;
}

static int j_container(struct jp *p, char open, char close)
{
	if (++p->depth > 64)
		return 0;
	p->i++; /* open */
	(void)open;
	j_ws(p);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		p->depth--;
		return 1;
	}
	for (;;) {
		j_ws(p);
		if (close == '}') {
			if (!j_string(p))
				return 0;
			j_ws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				return 0;
			p->i++;
			j_ws(p);
		}
		if (!j_value(p))
			return 0;
		j_ws(p);
		if (p->i >= p->n)
			return 0;
		if (p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->s[p->i] != close)
			return 0;
		p->i++;
		p->depth--;
		return 1;
	}
}

static int j_value(struct jp *p)
{
	if (p->i >= p->n)
		return 0;
	switch (p->s[p->i]) {
	case '{':
		return j_container(p, '{', '}');
	case '[':
		return j_container(p, '[', ']');
	case '"':
		return j_string(p);
	case 't':
		return p->n - p->i >= 4 && memcmp(p->s + p->i, "true", 4) == 0 ? (p->i += 4, 1) : 0;
	case 'f':
		return p->n - p->i >= 5 && memcmp(p->s + p->i, "false", 5) == 0 ? (p->i += 5, 1) : 0;
	case 'n':
		return p->n - p->i >= 4 && memcmp(p->s + p->i, "null", 4) == 0 ? (p->i += 4, 1) : 0;
	default:
		return j_number(p);
	}
}

/* Returns the offset of the first error, or -1 when text is one valid JSON value. */
static long json_error_at(const char *text, size_t n)
{
	struct jp p = {text, 0, n, 0};
	j_ws(&p);
	if (!j_value(&p))
		return (long)p.i;
	j_ws(&p);
	return p.i == n ? -1 : (long)p.i;
}

/* The text of OUT/name (NUL-terminated; caller frees); fails if missing or empty. */
static char *slurp_out(const struct fx *fx, const char *name, size_t *len)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", fx->dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("%s was not written: %s", path, strerror(errno));
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	buf[n] = 0;
	if (n == 0)
		fail_msg("%s is empty", path);
	*len = n;
	return buf;
}

static void assert_json_file(const struct fx *fx, const char *name)
{
	size_t n;
	char *t = slurp_out(fx, name, &n);
	long at = json_error_at(t, n);
	if (at >= 0)
		fail_msg("%s is not valid JSON at offset %ld: \"%.40s\"", name, at, t + at);
	free(t);
}

/* Builds two ranks with files, libraries and an exec'd process. */
static void build_two_ranks(const struct fx *fx)
{
	int fd = pwt_open(fx, "0-1000.pwt", 1000, 1, 0, 1000);
	put_string(fd, 8, "/dev/zero");
	put_string(fd, 16, "/dev/pts/0");
	put_string(fd, 24, "/usr/lib/lib\"quoted\".so");
	put_string(fd, 40, "/bin/next");
	struct pw_rec_call a[] = {
		mkrec(PW_EV_FD_INFO, 1000, 1000, 1000, 0, 1, 16, 0),
		mkrec(PW_EV_OPEN, 1000, 1100, 1110, 3, 3, 8, 0),
		mkrec(PW_EV_DUP2, 1000, 1120, 1121, 0, 0, 3, 0),
		mkrec(PW_EV_CLOSE, 1000, 1130, 1131, 0, 3, 0, 0),
		mkrec(PW_EV_READ, 1000, 1200, 1210, 512, 0, 512, 0),
		mkrec(PW_EV_WRITE, 1000, 1300, 1340, 512, 1, 512, 0),
		mkrec(PW_EV_DLOPEN, 1001, 1400, 1500, 0x7f0000001000ll, 0, 24, 0),
		mkrec(PW_EV_NANOSLEEP, 1001, 1500, 1900, 0, 0, 0, 0),
	};
	put_records(fd, a, NREC(a));
	put_lost(fd, 0, 2);
	pwt_end(fd, PW_END_EXECED, 0, 2000, 40);
	struct procspec img = {1000, 1, 0, 2, 2100, "next", 4, "/bin/next", "node0", 1, 0};
	fd = pwt_open_spec(fx, "0-1000.1.pwt", &img);
	struct pw_raw_end e = {.how = PW_END_EXITED, .end_ticks = 3000, .io_rchar = 600, .io_wchar = 600,
				 .io_valid = 1};
	pwt_end_full(fd, &e);
	fd = pwt_open(fx, "1-2000.pwt", 2000, 1, 1, 1500);
	struct pw_rec_call b[] = {mkrec(PW_EV_WRITE, 2000, 1600, 1700, 10, 1, 10, 0)};
	put_records(fd, b, NREC(b));
	pwt_end(fd, PW_END_VANISHED, 0, 0, 0);
}

/* pw_write_reports leaves rank<R>.txt/.json/.trace.json per rank and summary.txt/.json, the JSON ones valid,
 * rank<R>.json naming its format and rank. */
static void test_write_reports(void **state)
{
	struct fx *fx = *state;
	build_two_ranks(fx);
	write_text(fx, "session.txt", "command=./run \"x\"\ntarget_pid=1000\ntarget_status=0\n");
	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	char err[512] = "";
	if (pw_write_reports(an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);

	static const char *const json[] = {"rank0.json", "rank0.trace.json", "rank1.json", "rank1.trace.json",
					   "summary.json"};
	for (size_t i = 0; i < sizeof json / sizeof json[0]; i++)
		assert_json_file(fx, json[i]);
	size_t n;
	char *t = slurp_out(fx, "rank0.json", &n);
	assert_non_null(strstr(t, "\"format\":\"profwrap-report\""));
	assert_non_null(strstr(t, "\"rank\":0,"));
	assert_null(strstr(t, "\"rank\":1,"));
	assert_non_null(strstr(t, "/dev/zero"));
	free(t);
	t = slurp_out(fx, "rank1.json", &n);
	assert_non_null(strstr(t, "\"format\":\"profwrap-report\""));
	assert_non_null(strstr(t, "\"rank\":1,"));
	assert_null(strstr(t, "\"rank\":0,"));
	free(t);
	t = slurp_out(fx, "rank0.txt", &n);
	assert_non_null(strstr(t, "/dev/zero"));
	free(t);
	free(slurp_out(fx, "rank1.txt", &n));
	t = slurp_out(fx, "summary.txt", &n);
	free(t);
	t = slurp_out(fx, "summary.json", &n);
	assert_non_null(strstr(t, "\"rank\":0"));
	assert_non_null(strstr(t, "\"rank\":1"));
	free(t);
	pw_analysis_free(an);
}

/* A process on the TSC clock, 2 ticks a ns (its two clock pairs): OUT/raw/<rank>-<pid>.pwt opened after its
 * PROC and CLOCK chunks. */
static int pwt_open_tsc(const struct fx *fx, int pid, uint64_t start_ticks, uint64_t start_ns)
{
	char path[256];
	snprintf(path, sizeof path, "%s/0-%d.pwt", fx->raw, pid);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pw_raw_write_header(fd), 0);
	struct pw_raw_proc p = {0};
	p.pid = pid;
	p.ppid = 1;
	p.world_size = 1;
	p.clock_kind = PW_CLOCK_TSC;
	p.domain_mask = 0x1f;
	p.clock0 = (struct pw_clock_pair){start_ticks, start_ns};
	put_proc(fd, p, "train", 5, "/bin/train", "node0");
	put_clock(fd, start_ticks + 2000000, start_ns + 1000000);
	return fd;
}

/* What profwrap cost the rank (model.h's pw_own_cost): each image's records (every kind) times the cost of one
 * it measured, in its own ticks ((5760 - 640) ticks over 64 calls at 2 ticks a ns: 40 ns); an image without
 * the measurement counts its records at 0; the stacks and their ticks from each END; CUPTI's overhead records.
 * Then the header line of rank0.txt, rank0.json's profwrap_cost and the summary's figure. */
static void test_own_cost(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open_tsc(fx, 100, 2000, 1000);
	struct pw_rec_call a[] = {
		mkrec(PW_EV_RECORD_COST, 100, 2000, 2400, 64, 5760, 640, 0),
		mkrec(PW_EV_READ, 100, 3000, 3100, 8, 0, 8, 0),
		mkrec(PW_EV_READ, 100, 4000, 4100, 8, 0, 8, 0),
		mkrec(PW_EV_READ, 100, 5000, 5100, 8, 0, 8, 0),
	};
	put_records(fd, a, NREC(a));
	struct pw_rec_gpu ov = mkact(PW_EV_GPU_OVERHEAD, 100, 5000, 7500, -1, 0, 0, 1, 1);
	put_act_records(fd, &ov, 1);
	struct pw_raw_end e = {.how = PW_END_EXITED, .end_ticks = 2002000, .stacks = 4, .stack_ticks = 10000};
	pwt_end_full(fd, &e);
	struct procspec child = {101, 100, 0, 1, 2000, "prog", 4, "/bin/prog", "node0", 0, 0};
	fd = pwt_open_spec(fx, "0-101.pwt", &child); /* monotonic, and no measurement */
	struct pw_rec_call b[] = {mkrec(PW_EV_WRITE, 101, 3000, 3100, 1, 1, 1, 0),
				  mkrec(PW_EV_WRITE, 101, 3200, 3300, 1, 1, 1, 0)};
	put_records(fd, b, NREC(b));
	e = (struct pw_raw_end){.how = PW_END_EXITED, .end_ticks = 500000, .stacks = 1, .stack_ticks = 700};
	pwt_end_full(fd, &e);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(r->wall_ns, 1000000);
	const struct pw_own_cost *o = &r->own_cost;
	assert_int_equal(o->records, 7);
	assert_int_equal(o->records_measured, 5);
	assert_int_equal(o->records_ns, 200);
	assert_int_equal(o->stacks, 5);
	assert_int_equal(o->stacks_ns, 5000 + 700);
	assert_int_equal(o->cupti_ns, 2500);
	assert_int_equal(o->total_ns, 200 + 5700 + 2500);
	assert_true(o->wall_share > 0.00839999 && o->wall_share < 0.00840001);
	assert_int_equal(proc_of(r, 100, 0)->records, 5);
	assert_int_equal(proc_of(r, 101, 0)->records, 2);
	assert_int_equal(r->calls[PW_EV_RECORD_COST].count, 0); /* not a call */

	char err[512] = "";
	if (pw_write_reports(an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
	size_t n;
	char *t = slurp_out(fx, "rank0.txt", &n);
	const char *line = "\nprofwrap's own cost: 8.40 us (0.840 % of wall): 7 records x 40.0 ns (2 unmeasured, counted "
			   "as 0), 5 stacks (5.70 us), CUPTI overhead 2.50 us\n\n";
	if (!strstr(t, line))
		fail_msg("rank0.txt lacks the line%s:\n%s", line, t);
	free(t);
	t = slurp_out(fx, "rank0.json", &n);
	static const char *const keys[] = {"\"total_ns\":8400", "\"records\":7", "\"records_measured\":5",
					   "\"record_ns\":40.00", "\"records_ns\":200", "\"stacks\":5",
					   "\"stacks_ns\":5700", "\"cupti_overhead_ns\":2500",
					   "\"wall_share\":0.008400", "\"profwrap_cost_ns\":8400"};
	const char *obj = strstr(t, "\"profwrap_cost\":{");
	assert_non_null(obj);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!strstr(i + 1 < sizeof keys / sizeof keys[0] ? obj : t, keys[i]))
			fail_msg("rank0.json lacks %s", keys[i]);
	free(t);
	pw_analysis_free(an);
}

/* A report that cannot be written: -1 with the path in the reason. */
static void test_write_reports_error(void **state)
{
	struct fx *fx = *state;
	build_two_ranks(fx);
	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	char path[256];
	snprintf(path, sizeof path, "%s/rank1.json", fx->dir);
	assert_int_equal(mkdir(path, 0755), 0); /* a directory where the file should go */
	char err[512] = "";
	assert_int_equal(pw_write_reports(an, err, sizeof err), -1);
	if (!strstr(err, "rank1.json"))
		fail_msg("error does not name the file: %s", err);
	pw_analysis_free(an);
}

/* ---- processes without a rank (launchers) ---- */

static void analyze_files_ok(const struct fx *fx, char *const *names, size_t n, struct pw_analysis *a)
{
	char err[512] = "";
	if (pw_analyze_files(fx->dir, names, n, a, err, sizeof err) != 0)
		fail_msg("pw_analyze_files failed: %s", err);
}

static const struct pw_rank_report *launcher_of(const struct pw_analysis *a, const char *host)
{
	for (size_t i = 0; i < a->nranks; i++)
		if (a->ranks[i].rank == PW_RANK_LAUNCHER && a->ranks[i].host && strcmp(a->ranks[i].host, host) == 0)
			return &a->ranks[i];
	fail_msg("no launcher group for host %s", host);
	return NULL;
}

static void assert_file_base(const struct pw_rank_report *r, const char *want)
{
	char buf[128];
	memset(buf, 'z', sizeof buf);
	pw_rank_file_base(r, buf, sizeof buf);
	assert_string_equal(buf, want);
}

static int out_exists(const struct fx *fx, const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", fx->dir, name);
	return access(path, F_OK) == 0;
}

/* mpirun (no rank, world 1) and two ranks it started (world 2), all on node0: the ranks come first, in order,
 * then the launcher group (rank PW_RANK_LAUNCHER, host node0) with mpirun and its child before the exec; a
 * rankless process is never mixed into a rank, whatever order the files are read in; the launcher's report
 * files are launcher-node0.*. */
static void test_launcher_apart(void **state)
{
	struct fx *fx = *state;
	/* read in name order: the launcher first, then rank 1, then rank 0 */
	struct procspec mpirun = {100, 1, -1, 1, 1000, "mpirun\0-n\0" "2\0prog", 16, "/usr/bin/orterun", "node0", 0, 0};
	int fd = pwt_open_spec(fx, "a-launcher-node0-100.pwt", &mpirun);
	put_string(fd, 8, "/etc/hosts");
	struct pw_rec_call lr[] = {mkrec(PW_EV_OPEN, 100, 1100, 1110, 3, 3, 8, 0),
				   mkrec(PW_EV_READ, 100, 1200, 1210, 77, 3, 77, 0)};
	put_records(fd, lr, NREC(lr));
	pwt_end(fd, PW_END_EXITED, 0, 9000, 0);
	struct procspec child = {101, 100, -1, 1, 1500, "mpirun\0-n\0" "2\0prog", 16, "/usr/bin/orterun", "node0", 0, 0};
	fd = pwt_open_spec(fx, "b-launcher-node0-101.pwt", &child);
	pwt_end(fd, PW_END_EXECED, 0, 1600, 0);
	struct procspec r1 = {102, 100, 1, 2, 1700, "prog", 4, "/bin/prog", "node0", 0, 0};
	fd = pwt_open_spec(fx, "c-1-node0-102.pwt", &r1);
	struct pw_rec_call rr[] = {mkrec(PW_EV_WRITE, 102, 1800, 1900, 5, 1, 5, 0)};
	put_records(fd, rr, NREC(rr));
	pwt_end(fd, PW_END_EXITED, 0, 8000, 0);
	struct procspec r0 = {101, 100, 0, 2, 1650, "prog", 4, "/bin/prog", "node0", 1, 0};
	fd = pwt_open_spec(fx, "d-0-node0-101.1.pwt", &r0);
	pwt_end(fd, PW_END_EXITED, 0, 8500, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	assert_int_equal(an->nranks, 3);
	assert_int_equal(an->ranks[0].rank, 0);
	assert_int_equal(an->ranks[1].rank, 1);
	assert_int_equal(an->ranks[2].rank, PW_RANK_LAUNCHER);

	const struct pw_rank_report *r = &an->ranks[0];
	assert_int_equal(r->nprocs, 1);
	assert_int_equal(r->procs[0].pid, 101);
	assert_int_equal(r->procs[0].image, 1);
	assert_int_equal(r->world_size, 2);
	r = &an->ranks[1];
	assert_int_equal(r->nprocs, 1);
	assert_int_equal(r->procs[0].pid, 102);
	assert_call(&r->calls[PW_EV_WRITE], 1, 100, 100, 100, 5, 0);
	assert_int_equal(r->calls[PW_EV_READ].count, 0);

	const struct pw_rank_report *l = &an->ranks[2];
	assert_ptr_equal(l, launcher_of(an, "node0"));
	assert_string_equal(l->host, "node0");
	assert_int_equal(l->nprocs, 2);
	for (size_t i = 0; i < l->nprocs; i++) {
		assert_int_equal(l->procs[i].rank, PW_RANK_LAUNCHER);
		assert_true(l->procs[i].pid == 100 || l->procs[i].pid == 101);
		assert_int_equal(l->procs[i].image, 0);
	}
	assert_call(&l->calls[PW_EV_READ], 1, 10, 10, 10, 77, 0);
	assert_int_equal(l->calls[PW_EV_WRITE].count, 0);
	assert_file(file_of(l, "/etc/hosts"), 1, 1, 77, 0, 0, 20);
	assert_string_equal(l->command, "mpirun -n 2 prog");

	assert_file_base(&an->ranks[0], "rank0");
	assert_file_base(&an->ranks[1], "rank1");
	assert_file_base(l, "launcher-node0");

	char err[512] = "";
	if (pw_write_reports(an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
	static const char *const files[] = {"rank0.json", "rank0.txt", "rank0.trace.json", "rank1.json", "rank1.txt",
					    "rank1.trace.json", "launcher-node0.json", "launcher-node0.txt",
					    "launcher-node0.trace.json"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		if (!out_exists(fx, files[i]))
			fail_msg("%s was not written", files[i]);
	assert_false(out_exists(fx, "rank-1.json"));
	assert_json_file(fx, "launcher-node0.json");
	size_t n;
	char *t = slurp_out(fx, "launcher-node0.json", &n);
	assert_non_null(strstr(t, "\"rank\":-1,"));
	assert_non_null(strstr(t, "/etc/hosts"));
	assert_null(strstr(t, "\"rank\":0,"));
	free(t);
	t = slurp_out(fx, "rank0.json", &n);
	assert_null(strstr(t, "/etc/hosts"));
	assert_null(strstr(t, "orterun"));
	free(t);
	/* ranks 0 and 1 of 2: the summary, with the launcher apart from the ranks */
	assert_json_file(fx, "summary.json");
	t = slurp_out(fx, "summary.json", &n);
	assert_non_null(strstr(t, "launcher-node0.json"));
	assert_null(strstr(t, "\"rank\":-1"));
	free(t);
	pw_analysis_free(an);
}

/* A rank the merge does not believe (PW_MERGE_MAX_WORLD or more: a damaged trace, or a RANK of ten digits) has
 * its reports, and no summary is attempted: pw_write_reports returns 0 (it returned -1, "no rank<R>.json
 * report", when the merge skipped the only rank file; found by the report fuzz target). */
static void test_rank_beyond_merge(void **state)
{
	struct fx *fx = *state;
	int fd = pwt_open(fx, "1234567890-7.pwt", 7, 1, 1234567890, 1000);
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);
	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	assert_int_equal(an->nranks, 1);
	assert_int_equal(an->ranks[0].rank, 1234567890);
	char err[512] = "";
	if (pw_write_reports(an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
	assert_true(out_exists(fx, "rank1234567890.json"));
	assert_true(out_exists(fx, "rank1234567890.txt"));
	assert_false(out_exists(fx, "summary.json"));
}

/* The base name of a launcher group's files: "launcher-" and the host, with anything but letters, digits, '.',
 * '-' and '_' replaced by '_', at most 64 characters of it, "unknown" without a host; never past the buffer. */
static void test_launcher_file_base(void **state)
{
	struct pw_rank_report r;
	memset(&r, 0, sizeof r);
	r.rank = 7;
	assert_file_base(&r, "rank7");
	r.rank = 0;
	r.host = "node/0";
	assert_file_base(&r, "rank0"); /* a rank's name has no host */
	r.rank = PW_RANK_LAUNCHER;
	r.host = "node-1.example_net";
	assert_file_base(&r, "launcher-node-1.example_net");
	r.host = "../x/y z*\xc3\xa9";
	assert_file_base(&r, "launcher-.._x_y_z___");
	r.host = "";
	assert_file_base(&r, "launcher-unknown");
	r.host = NULL;
	assert_file_base(&r, "launcher-unknown");
	char longhost[200], want[128];
	memset(longhost, 'h', sizeof longhost - 1);
	longhost[sizeof longhost - 1] = 0;
	r.host = longhost;
	snprintf(want, sizeof want, "launcher-%.64s", longhost);
	assert_file_base(&r, want);
	/* a small buffer: truncated and terminated, nothing written past it */
	char small[16];
	memset(small, 'z', sizeof small);
	r.host = "abcdefghijklmnop";
	pw_rank_file_base(&r, small, 12);
	assert_string_equal(small, "launcher-ab");
	assert_int_equal(small[12], 'z');
	memset(small, 'z', sizeof small);
	pw_rank_file_base(&r, small, 5);
	assert_string_equal(small, "laun");
	assert_int_equal(small[5], 'z');
}

/* Nothing has a rank (a plain `profwrap CMD`): the processes are rank 0, as before ranks were told apart, and
 * their files rank0.*; but rankless processes that say they belong to a job of several ranks (world > 1,
 * srun's SLURM_NTASKS) stay a launcher group: rank 0 is another node's. */
static void test_only_rankless_is_rank0(void **state)
{
	struct fx *fx = *state;
	struct procspec a = {200, 1, -1, 1, 1000, "sh\0-c\0x", 8, "/bin/sh", "node0", 0, 0};
	int fd = pwt_open_spec(fx, "launcher-node0-200.pwt", &a);
	pwt_end(fd, PW_END_EXITED, 0, 3000, 0);
	struct procspec b = {201, 200, -1, 1, 1500, "cat", 3, "/bin/cat", "node0", 0, 0};
	fd = pwt_open_spec(fx, "launcher-node0-201.pwt", &b);
	pwt_end(fd, PW_END_EXITED, 0, 2000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	assert_int_equal(an->nranks, 1);
	const struct pw_rank_report *r = &an->ranks[0];
	assert_int_equal(r->rank, 0);
	assert_int_equal(r->nprocs, 2);
	assert_int_equal(r->procs[0].rank, 0);
	assert_int_equal(r->procs[1].rank, 0);
	assert_string_equal(r->host, "node0");
	assert_int_equal(r->wall_ns, 2000);
	assert_file_base(r, "rank0");
	pw_analysis_free(an);

	/* the same processes in a job of 4 ranks (none of them seen here) */
	char path[256];
	snprintf(path, sizeof path, "%s/launcher-node0-200.pwt", fx->raw);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof path, "%s/launcher-node0-201.pwt", fx->raw);
	assert_int_equal(unlink(path), 0);
	struct procspec c = {300, 1, -1, 4, 1000, "srun", 4, "/usr/bin/srun", "node3", 0, 0};
	fd = pwt_open_spec(fx, "launcher-node3-300.pwt", &c);
	pwt_end(fd, PW_END_EXITED, 0, 3000, 0);
	analyze_ok(fx, an);
	assert_int_equal(an->nranks, 1);
	assert_int_equal(an->ranks[0].rank, PW_RANK_LAUNCHER);
	assert_string_equal(an->ranks[0].host, "node3");
	assert_int_equal(an->ranks[0].procs[0].rank, PW_RANK_LAUNCHER);
	assert_file_base(&an->ranks[0], "launcher-node3");
	pw_analysis_free(an);
}

/* Rankless processes on two hosts (a launcher per node) with a ranked one: one launcher group per host, each
 * with its own processes, after the ranks and in host order. */
/* The figures ranks are compared by: the main thread's blocked time counts each moment once (the polls inside
 * an MPI_Allreduce are the Allreduce's), other threads' waits are not the main thread's, and a parent that
 * waits for its child all along (a wrapper shell) is not the rank's main process. */
static void test_main_thread_blocked_once(void **state)
{
	struct fx *fx = *state;
	struct procspec sh = {19, 1, 0, 1, 900, "sh", 3, "/bin/sh", "n1", 0, 0};
	int fd = pwt_open_spec(fx, "0-n1-19.pwt", &sh);
	struct pw_rec_call w[] = {mkrec(PW_EV_WAITPID, 19, 950, 11500, 20, 20, 0, 0)};
	put_records(fd, w, NREC(w));
	pwt_end(fd, PW_END_EXITED, 0, 11600, 0);
	struct procspec app = {20, 19, 0, 1, 1000, "app", 4, "/bin/app", "n1", 0, 0};
	fd = pwt_open_spec(fx, "0-n1-20.pwt", &app);
	struct pw_rec_call r[] = {
		/* in the order the calls ended: two polls, then the Allreduce they were part of */
		mkrec(PW_EV_POLL, 20, 2000, 2500, 0, 0, 0, 0),
		mkrec(PW_EV_POLL, 20, 2600, 3000, 0, 0, 0, 0),
		mkrec(PW_EV_MPI_ALLREDUCE, 20, 1900, 3500, 0, 64, 1, 0),
		mkrec(PW_EV_NANOSLEEP, 20, 4000, 5000, 0, 0, 0, 0),
		/* another thread's sleep is not the main thread's */
		mkrec(PW_EV_NANOSLEEP, 21, 1000, 9000, 0, 0, 0, 0),
	};
	put_records(fd, r, NREC(r));
	pwt_end(fd, PW_END_EXITED, 0, 11000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_proc *p = proc_of(rank_of(an, 0), 20, 0);
	assert_int_equal(p->main_mpi_ns, 1600);
	assert_int_equal(p->main_wait_ns, 1000);
	assert_int_equal(p->main_child_wait_ns, 0);
	assert_int_equal(proc_of(rank_of(an, 0), 19, 0)->main_child_wait_ns, 10550);
	struct pw_rank_figures f;
	pw_rank_figures(rank_of(an, 0), &f);
	assert_int_equal(f.busy_ns, 10000 - 1600 - 1000);
	assert_int_equal(f.wait_ns, 1000);
	assert_int_equal(f.collective_ns, 1600);
	char err[512] = "";
	if (pw_write_reports(an, err, sizeof err) != 0)
		fail_msg("pw_write_reports: %s", err);
	size_t len;
	char *t = slurp_out(fx, "rank0.txt", &len);
	assert_non_null(strstr(t, "Activity:     main thread busy 7.40 us, collectives 1.60 us, waits 1.00 us\n"));
	free(t);
	pw_analysis_free(an);
}

/* A process across its exec chain: a wrapper (sh, image 0) reads a child's output from a pipe until it ends
 * (`$(cmd)`), waits for it and execs the program (image 1), whose main thread sleeps and reads a pipe inside an
 * MPI call. The rank's busy time and waits are the pid's, from the wrapper's start to the program's end, less
 * each blocked moment once; a later image of the pid after an exit is another process (a reused pid). A child
 * that exec'd before its first read (a spawned worker) starts up from its fork to that read. */
static void test_exec_chain_figures(void **state)
{
	struct fx *fx = *state;
	struct procspec sh = {30, 1, 0, 1, 1000, "sh\0run.sh", 9, "/bin/sh", "n1", 0, 0};
	int fd = pwt_open_spec(fx, "0-n1-30.pwt", &sh);
	struct pw_rec_call w[] = {
		mkrec(PW_EV_PIPE, 30, 1100, 1100, 0, pw_put_channel_fds(3, 4), pw_put_channel_inos(70, 70), 0),
		mkrec(PW_EV_READ, 30, 1300, 1800, 8, 3, 8, 0),
		mkrec(PW_EV_WAITPID, 30, 1800, 1900, 31, 31, 0, 0),
	};
	put_records(fd, w, NREC(w));
	pwt_end(fd, PW_END_EXECED, 0, 2000, 0);
	struct procspec app = {30, 1, 0, 1, 2100, "app", 3, "/bin/app", "n1", 1, 0};
	fd = pwt_open_spec(fx, "0-n1-30.1.pwt", &app);
	struct pw_rec_call a[] = {
		mkrec(PW_EV_PIPE, 30, 2200, 2200, 0, pw_put_channel_fds(5, 6), pw_put_channel_inos(71, 71), 0),
		mkrec(PW_EV_NANOSLEEP, 30, 3000, 4000, 0, 0, 0, 0),
		mkrec(PW_EV_NANOSLEEP, 32, 3000, 9000, 0, 0, 0, 0), /* not the main thread */
		/* in the order the calls ended: MPI's read of its pipe, then the Allreduce it was part of */
		mkrec(PW_EV_READ, 30, 5200, 5300, 4, 5, 4, 0),
		mkrec(PW_EV_MPI_ALLREDUCE, 30, 5000, 6000, 0, 64, 1, 0),
	};
	put_records(fd, a, NREC(a));
	pwt_end(fd, PW_END_EXITED, 0, 10000, 0);
	struct procspec again = {30, 1, 0, 1, 12000, "other", 5, "/bin/other", "n1", 2, 0};
	fd = pwt_open_spec(fx, "0-n1-30.2.pwt", &again);
	pwt_end(fd, PW_END_EXITED, 0, 13000, 0);
	struct procspec fork = {31, 30, 0, 1, 1200, "sh\0run.sh", 9, "/bin/sh", "n1", 0, 0};
	fd = pwt_open_spec(fx, "0-n1-31.pwt", &fork);
	pwt_end(fd, PW_END_EXECED, 0, 1300, 0);
	struct procspec worker = {31, 30, 0, 1, 1350, "worker", 6, "/bin/worker", "n1", 1, 0};
	fd = pwt_open_spec(fx, "0-n1-31.1.pwt", &worker);
	put_string(fd, 8, "/data/x");
	struct pw_rec_call wr[] = {mkrec(PW_EV_OPEN, 31, 1400, 1410, 3, 3, 8, 0),
				   mkrec(PW_EV_READ, 31, 1500, 1510, 64, 3, 64, 0)};
	put_records(fd, wr, NREC(wr));
	pwt_end(fd, PW_END_EXITED, 0, 1800, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	const struct pw_rank_report *r = rank_of(an, 0);
	assert_int_equal(r->nprocs, 5);
	const struct pw_proc *sh0 = proc_of(r, 30, 0), *app1 = proc_of(r, 30, 1), *other = proc_of(r, 30, 2);
	assert_ptr_equal(pw_next_image(r, sh0), app1);
	assert_null(pw_next_image(r, app1));
	assert_null(pw_next_image(r, other));
	assert_false(sh0->replaced_one);
	assert_true(app1->replaced_one);
	assert_false(other->replaced_one);

	struct pw_process m;
	assert_int_equal(pw_rank_main_process(r, &m), 0);
	assert_ptr_equal(m.first, sh0);
	assert_ptr_equal(m.last, app1);
	assert_int_equal(m.pid, 30);
	assert_int_equal(m.start_ns, 1000);
	assert_int_equal(m.end_ns, 10000);
	assert_int_equal(m.main_child_wait_ns, 100);
	assert_int_equal(m.main_stream_ns, 500);
	assert_int_equal(m.main_wait_ns, 1000);
	assert_int_equal(m.main_mpi_ns, 1000);
	struct pw_rank_figures f;
	pw_rank_figures(r, &f);
	assert_int_equal(f.busy_ns, 9000 - 500 - 100 - 1000 - 1000);
	assert_int_equal(f.wait_ns, 1000);
	assert_int_equal(f.stream_ns, 500 + 100);

	struct pw_process c;
	pw_process_of(r, proc_of(r, 31, 0), &c);
	assert_ptr_equal(c.last, proc_of(r, 31, 1));
	assert_int_equal(c.start_ns, 1200);
	assert_int_equal(c.end_ns, 1800);
	assert_int_equal(c.first_read_ns, 1500);
	assert_int_equal(c.seen_read_bytes, 64);
	pw_analysis_free(an);
}

static void test_launchers_two_hosts(void **state)
{
	struct fx *fx = *state;
	struct procspec b1 = {10, 1, -1, 1, 1000, "agent", 5, "/bin/agent", "nodeB", 0, 0};
	int fd = pwt_open_spec(fx, "launcher-nodeB-10.pwt", &b1);
	struct pw_rec_call w[] = {mkrec(PW_EV_WRITE, 10, 1100, 1130, 3, 1, 3, 0)};
	put_records(fd, w, NREC(w));
	pwt_end(fd, PW_END_EXITED, 0, 5000, 0);
	struct procspec a1 = {10, 1, -1, 1, 1200, "agent", 5, "/bin/agent", "nodeA", 0, 0}; /* same pid, other host */
	fd = pwt_open_spec(fx, "launcher-nodeA-10.pwt", &a1);
	pwt_end(fd, PW_END_EXITED, 0, 6000, 0);
	struct procspec b2 = {11, 10, -1, 1, 1300, "agent", 5, "/bin/agent", "nodeB", 0, 0};
	fd = pwt_open_spec(fx, "launcher-nodeB-11.pwt", &b2);
	pwt_end(fd, PW_END_EXECED, 0, 1400, 0);
	struct procspec r2 = {11, 10, 2, 4, 1450, "worker", 6, "/bin/worker", "nodeB", 1, 0};
	fd = pwt_open_spec(fx, "2-nodeB-11.1.pwt", &r2);
	pwt_end(fd, PW_END_EXITED, 0, 4000, 0);

	struct pw_analysis *an = &fx->an;
	analyze_ok(fx, an);
	assert_int_equal(an->nranks, 3);
	assert_int_equal(an->ranks[0].rank, 2);
	assert_int_equal(an->ranks[0].nprocs, 1);
	assert_string_equal(an->ranks[0].host, "nodeB");
	assert_int_equal(an->ranks[1].rank, PW_RANK_LAUNCHER);
	assert_string_equal(an->ranks[1].host, "nodeA");
	assert_int_equal(an->ranks[2].rank, PW_RANK_LAUNCHER);
	assert_string_equal(an->ranks[2].host, "nodeB");

	const struct pw_rank_report *a = launcher_of(an, "nodeA"), *b = launcher_of(an, "nodeB");
	assert_int_equal(a->nprocs, 1);
	assert_int_equal(a->procs[0].pid, 10);
	assert_int_equal(a->calls[PW_EV_WRITE].count, 0);
	assert_int_equal(b->nprocs, 2);
	assert_int_equal(b->calls[PW_EV_WRITE].count, 1);
	assert_int_equal(b->calls[PW_EV_WRITE].bytes, 3);
	assert_file_base(a, "launcher-nodeA");
	assert_file_base(b, "launcher-nodeB");

	/* the reports of what was seen; no summary while ranks 0, 1 and 3 of the 4 have none (1, saying which) */
	char err[512] = "";
	int wr = pw_write_reports(an, err, sizeof err);
	if (wr != 1)
		fail_msg("pw_write_reports = %d (%s), expected 1", wr, err);
	if (!strstr(err, "0-1, 3 of 4"))
		fail_msg("pw_write_reports does not say which ranks are missing: \"%s\"", err);
	assert_true(out_exists(fx, "rank2.json"));
	assert_true(out_exists(fx, "launcher-nodeA.json"));
	assert_true(out_exists(fx, "launcher-nodeB.json"));
	assert_false(out_exists(fx, "rank0.json"));
	assert_false(out_exists(fx, "summary.json"));
	pw_analysis_free(an);
}

/* pw_analyze_files reads the files named, in any order, and no other file of OUT/raw (another collector's);
 * the caller's list is left as it was. A named file that is missing is skipped with a message; none readable
 * is an error. */
static void test_analyze_files_only_named(void **state)
{
	struct fx *fx = *state;
	static const char *const names[] = {"0-n0-10.pwt", "1-n0-11.pwt", "2-n1-12.pwt", "launcher-n1-13.pwt"};
	for (int i = 0; i < 4; i++) {
		struct procspec ps = {10 + i, 1, i < 3 ? i : -1, 3, 1000 + 100 * (uint64_t)i, "p", 1, "/p", i < 2 ? "n0" : "n1",
				      0, 0};
		int fd = pwt_open_spec(fx, names[i], &ps);
		pwt_end(fd, PW_END_EXITED, 0, 5000, 0);
	}
	char *mine[] = {"1-n0-11.pwt", "0-n0-10.pwt"};
	struct pw_analysis *an = &fx->an;
	analyze_files_ok(fx, mine, 2, an);
	assert_string_equal(mine[0], "1-n0-11.pwt");
	assert_string_equal(mine[1], "0-n0-10.pwt");
	assert_int_equal(an->nranks, 2);
	assert_int_equal(an->ranks[0].rank, 0);
	assert_int_equal(an->ranks[0].procs[0].pid, 10);
	assert_int_equal(an->ranks[1].rank, 1);
	assert_int_equal(an->ranks[1].procs[0].pid, 11);
	assert_string_equal(an->out_dir, fx->dir);
	pw_analysis_free(an);

	/* the other collector's: rank 2 and the launcher of n1 */
	char *theirs[] = {"launcher-n1-13.pwt", "2-n1-12.pwt"};
	analyze_files_ok(fx, theirs, 2, an);
	assert_int_equal(an->nranks, 2);
	assert_int_equal(an->ranks[0].rank, 2);
	assert_int_equal(an->ranks[1].rank, PW_RANK_LAUNCHER);
	assert_string_equal(an->ranks[1].host, "n1");
	pw_analysis_free(an);

	/* and pw_analyze, all of them */
	analyze_ok(fx, an);
	assert_int_equal(an->nranks, 4);
	pw_analysis_free(an);

	/* a named file that is not there: skipped; only such files: an error */
	char *gone[] = {"2-n1-12.pwt", "9-n9-99.pwt"};
	char buf[4096] = "", err[512] = "";
	int stderr_copy = dup(2);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	dup2(pfd[1], 2);
	int rc = pw_analyze_files(fx->dir, gone, 2, an, err, sizeof err);
	dup2(stderr_copy, 2);
	close(stderr_copy);
	close(pfd[1]);
	ssize_t got = read(pfd[0], buf, sizeof buf - 1);
	close(pfd[0]);
	buf[got > 0 ? got : 0] = 0;
	assert_int_equal(rc, 0);
	assert_int_equal(an->nranks, 1);
	assert_int_equal(an->ranks[0].rank, 2);
	if (!strstr(buf, "9-n9-99.pwt"))
		fail_msg("the missing file is not named on stderr: \"%s\"", buf);
	pw_analysis_free(an);
	char *none[] = {"9-n9-99.pwt"};
	stderr_copy = dup(2);
	int devnull = open("/dev/null", O_WRONLY);
	dup2(devnull, 2);
	rc = pw_analyze_files(fx->dir, none, 1, an, err, sizeof err);
	dup2(stderr_copy, 2);
	close(stderr_copy);
	close(devnull);
	assert_int_equal(rc, -1);
	assert_true(err[0] != 0);
	pw_analysis_free(an);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_call_figures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_cost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_open_read_write_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_fd_reuse_across_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_dup2_and_inherited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_dup_variants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_without_path_unbinds_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_named_by_absolute_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_before_its_open_in_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_before_its_close_in_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_named_by_absolute_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fd_map_per_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_endings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_applies_to_child_on_same_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_target_signal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_target_exit_code, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ranks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped_cumulative, setup, teardown),
		cmocka_unit_test_setup_teardown(test_skipped_and_strings_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_coverage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_coverage_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_libraries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_among_good, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_no_raw_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_no_traces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_reports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_reports_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launcher_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rank_beyond_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launcher_file_base, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_rankless_is_rank0, setup, teardown),
		cmocka_unit_test_setup_teardown(test_main_thread_blocked_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_chain_figures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launchers_two_hosts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_analyze_files_only_named, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
