#define _GNU_SOURCE
/* Unit tests for rank<R>.sqlite (collector/report/report_sqlite.c) and the whole timeline it is written from
 * (pw_analyze_whole): each test writes the raw trace of a process into OUT/raw of a private output directory
 * (monotonic clock: ticks are ns, so every time is exact), runs pw_analyze_whole and pw_write_rank_sqlite and
 * reads the database back with SQL as a user of nsys's export would write it. The export's promise is every
 * event, so the first test makes more calls than the trace's timeline keeps and counts them all, with their
 * bytes, files and threads; then the GPU tables (kernels with nsys's three names, copies, memsets, devices, and
 * the join from a kernel to the CUDA call that launched it, wrapped or seen only by CUPTI), the NVTX events,
 * and a database that cannot be written, which must leave nothing behind. Times in the database are ns since
 * the rank's start, threads globalTid = pid << 24 | tid. */
#include <inttypes.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../collector/lib/rawfile.h"
#include "../../collector/model/timeline.h"
#include "../../collector/report/report_sqlite.h"
#include "out_files.h"
#include "out_fixture.h"
#include "raw_writer.h"
#include "gpu_records.h"

#define PID 100
#define TID 100        /* the main thread */
#define START 1000     /* the process's start, ns: the database's time 0 */
#define GTID(tid) ((int64_t)PID << 24 | (tid))
#define NREC(a) (sizeof(a) / sizeof((a)[0]))

/* PyTorch's fill kernel, and what c++filt (and libstdc++'s __cxa_demangle) make of it */
#define MANGLED                                                                                                 \
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_"
#define DEMANGLED                                                                                               \
	"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "                    \
	"at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"

/* ---- raw traces ---- */

/* An NVTX record: arg0 = domain | category << 32, ret per kind (a push's level, a start's or end's id). */
static void put_range(int fd, uint16_t type, uint32_t tid, uint64_t t, uint32_t category, int64_t ret,
		      uint64_t name_ref, uint32_t payload_type, uint64_t payload)
{
	struct pw_rec_range rr;
	memset(&rr, 0, sizeof rr);
	rr.c = mkrec(type, tid, t, t, ret, pw_put_nvtx_scope((struct pw_nvtx_scope){0, category}), name_ref, 0);
	rr.c.h.size8 = sizeof rr / 8;
	rr.payload_type = payload_type;
	rr.payload = payload;
	put_chunk(fd, PW_CHUNK_RECORDS, &rr, sizeof rr, NULL, 0);
}

/* ---- the database ---- */

/* Analyses OUT with every event kept, writes OUT/rank0.sqlite and opens it to read. */
static sqlite3 *export_db(struct fx *fx)
{
	char err[512] = "";
	if (pw_analyze_whole(fx->dir, &fx->an, err, sizeof err) != 0)
		fail_msg("pw_analyze_whole failed: %s", err);
	assert_int_equal(fx->an.nranks, 1);
	assert_int_equal(fx->an.ranks[0].start_ns, START);
	char path[256];
	snprintf(path, sizeof path, "%s/rank0.sqlite", fx->dir);
	if (pw_write_rank_sqlite(&fx->an, &fx->an.ranks[0], path, err, sizeof err) != 0)
		fail_msg("pw_write_rank_sqlite: %s", err);
	char tmp[300];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	assert_int_equal(access(tmp, F_OK), -1);
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		fail_msg("cannot open %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
	return db;
}

/* The one row of one column that sql yields, stepped to; the test fails on an error or another count of rows
 * or columns. Finish with done(). */
static sqlite3_stmt *one_value(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_column_count(st), 1);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		fail_msg("%s: no row (%s)", sql, rc == SQLITE_DONE ? "none" : sqlite3_errmsg(db));
	return st;
}

static void done(sqlite3_stmt *st, const char *sql)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		fail_msg("%s: more than one row", sql);
	sqlite3_finalize(st);
}

/* Asserts that sql yields the integer want. */
static void assert_sql_int(sqlite3 *db, const char *sql, int64_t want)
{
	sqlite3_stmt *st = one_value(db, sql);
	if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
		fail_msg("%s: not an integer (type %d)", sql, sqlite3_column_type(st, 0));
	int64_t got = sqlite3_column_int64(st, 0);
	if (got != want)
		fail_msg("%s: %" PRId64 ", expected %" PRId64, sql, got, want);
	done(st, sql);
}

/* Asserts that sql yields the text want. */
static void assert_sql_text(sqlite3 *db, const char *sql, const char *want)
{
	sqlite3_stmt *st = one_value(db, sql);
	if (sqlite3_column_type(st, 0) != SQLITE_TEXT)
		fail_msg("%s: not text (type %d)", sql, sqlite3_column_type(st, 0));
	const char *got = (const char *)sqlite3_column_text(st, 0);
	if (strcmp(got, want) != 0)
		fail_msg("%s: \"%s\", expected \"%s\"", sql, got, want);
	done(st, sql);
}

/* Asserts that sql yields NULL. */
static void assert_sql_null(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = one_value(db, sql);
	if (sqlite3_column_type(st, 0) != SQLITE_NULL)
		fail_msg("%s: not NULL (type %d)", sql, sqlite3_column_type(st, 0));
	done(st, sql);
}

/* The SQL fmt makes, in buf. */
static const char *sqlf(char buf[1024], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *sqlf(char buf[1024], const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, 1024, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && n < 1024);
	return buf;
}

/* ---- tests ---- */

/* 400,000 reads of one file: more calls than the trace's timeline keeps (pw_analyze keeps at most
 * PW_TL_MAX_CALLS), every one of them in the database with its bytes, descriptor, file, thread and times. */
static void test_every_call_kept(void **state)
{
	struct fx *fx = *state;
	enum { N = 400000, CHUNK = 4096, BYTES = 4096, IO_TID = PID + 1, FD = 3 };
	const uint64_t first = 10000, step = 1000, dur = 500; /* read i: first + i * step, dur ns */
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	put_string(fd, 8, "/data/shard-000.bin");
	struct pw_rec_call open_rec = mkrec(PW_EV_OPEN, IO_TID, 2000, 2100, FD, FD, 8, 0);
	put_records(fd, &open_rec, 1);
	struct pw_rec_call *recs = calloc(CHUNK, sizeof *recs);
	assert_non_null(recs);
	size_t n = 0;
	for (uint64_t i = 0; i < N; i++) {
		uint64_t t0 = first + i * step;
		recs[n++] = mkrec(PW_EV_READ, IO_TID, t0, t0 + dur, BYTES, FD, BYTES, 0);
		if (n == CHUNK) {
			put_records(fd, recs, n);
			n = 0;
		}
	}
	const uint64_t close_t0 = first + N * step;
	recs[n++] = mkrec(PW_EV_CLOSE, IO_TID, close_t0, close_t0 + 50, 0, FD, 0, 0);
	put_records(fd, recs, n);
	free(recs);
	fx_raw_end(fd, close_t0 + 1000);

	/* the trace's timeline: bounded, fewer than the calls made */
	struct pw_analysis bounded;
	char err[512] = "";
	if (pw_analyze(fx->dir, &bounded, err, sizeof err) != 0)
		fail_msg("pw_analyze failed: %s", err);
	assert_int_equal(bounded.nranks, 1);
	assert_non_null(bounded.ranks[0].timeline);
	assert_true(bounded.ranks[0].timeline->ncalls <= PW_TL_MAX_CALLS);
	assert_true(bounded.ranks[0].timeline->ncalls < N + 2);
	pw_analysis_free(&bounded);

	sqlite3 *db = export_db(fx);
	assert_int_equal(fx->an.ranks[0].timeline->ncalls, N + 2);
	char q[1024], q2[1024];
#define READS "nameId IN (SELECT id FROM StringIds WHERE value = 'read')"
	assert_sql_int(db, "SELECT count(*) FROM PROFWRAP_CALLS WHERE " READS, N);
	assert_sql_int(db, "SELECT count(*) FROM OSRT_API WHERE " READS, N);
	assert_sql_int(db, "SELECT count(*) FROM PROFWRAP_CALLS", N + 2);
	assert_sql_int(db, "SELECT sum(bytes) FROM PROFWRAP_CALLS WHERE " READS, (int64_t)N * BYTES);
	assert_sql_int(db, "SELECT count(*) FROM PROFWRAP_CALLS WHERE fd = 3 AND returnValue = 4096 AND " READS, N);
	assert_sql_int(db, "SELECT count(*) FROM PROFWRAP_CALLS WHERE errno IS NULL AND " READS, N);

	/* every read on the opened file, which counts them all */
	assert_sql_int(db, "SELECT count(*) FROM PROFWRAP_FILES", 1);
	const char *file = "(SELECT id FROM PROFWRAP_FILES WHERE path = '/data/shard-000.bin')";
	assert_sql_int(db, sqlf(q, "SELECT count(*) FROM PROFWRAP_CALLS WHERE fileId = %s AND " READS, file), N);
	assert_sql_int(db, "SELECT readBytes FROM PROFWRAP_FILES", (int64_t)N * BYTES);
	assert_sql_int(db, "SELECT reads FROM PROFWRAP_FILES", N);
	assert_sql_int(db, "SELECT opens FROM PROFWRAP_FILES", 1);
	assert_sql_int(db, "SELECT count(*) FROM PROFWRAP_CALLS c JOIN PROFWRAP_FILES f ON f.id = c.fileId"
			   " WHERE f.path = '/data/shard-000.bin' AND f.readBytes = 400000 * 4096 AND c." READS,
		       N);

	/* one thread, as nsys numbers it */
	assert_sql_int(db, "SELECT count(DISTINCT globalTid) FROM PROFWRAP_CALLS", 1);
	assert_sql_int(db, "SELECT globalTid FROM PROFWRAP_CALLS WHERE " READS " LIMIT 1", 1677721701); /* 100<<24|101 */

	/* times since the process's start, each read's exact */
	assert_sql_int(db, "SELECT min(start) FROM PROFWRAP_CALLS WHERE " READS, (int64_t)(first - START));
	assert_sql_int(db, "SELECT max(start) FROM PROFWRAP_CALLS WHERE " READS,
		       (int64_t)(first + (N - 1) * step - START));
	assert_sql_int(db, sqlf(q2, "SELECT count(*) FROM PROFWRAP_CALLS WHERE (start - %" PRIu64 ") %% %" PRIu64
				    " = 0 AND end - start = %" PRIu64 " AND " READS,
				first - START, step, dur),
		       N);
	assert_sql_int(db, "SELECT count(DISTINCT start) FROM PROFWRAP_CALLS WHERE " READS, N);
	assert_sql_int(db, "SELECT start FROM PROFWRAP_CALLS WHERE nameId IN (SELECT id FROM StringIds WHERE"
			   " value = 'open')",
		       2000 - START);
	assert_sql_int(db, sqlf(q, "SELECT fileId = %s FROM PROFWRAP_CALLS WHERE nameId IN (SELECT id FROM"
				   " StringIds WHERE value = 'open')", file),
		       1);
	assert_sql_int(db, "SELECT end FROM PROFWRAP_CALLS WHERE nameId IN (SELECT id FROM StringIds WHERE"
			   " value = 'close')",
		       (int64_t)(close_t0 + 50 - START));
	assert_sql_int(db, "SELECT start FROM PROFWRAP_PROCESSES WHERE globalPid = 100 << 24", 0);
#undef READS
	sqlite3_close(db);
}

/* A kernel launched by a wrapped cudaLaunchKernel (linked through EXTCORR) with a mangled name, a copy, a
 * memset, a described device, and a kernel a library launched through cuLaunchKernel that only CUPTI saw:
 * nsys's tables and the join from a kernel to its launching call. */
static void test_gpu_tables(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	put_string(fd, 8, MANGLED);
	put_string(fd, 16, "NVIDIA H100 80GB HBM3");
	put_string(fd, 24, "sm90_xmma_gemm_f32f32_tn");
	struct pw_rec_api call = launch(TID, 2000, 2500, 7, 8);
	put_api_records(fd, &call, 1);
	struct pw_rec_gpu act[8];
	act[0] = mkact(PW_EV_GPU_DEVICE, CUPTI_TID, 0, 0, 0, 0, 0, 3350000000ull, 16);
	pw_put_device_info(&act[0], (struct pw_device_info){.memory_bytes = 85520809984ull, .sms = 132,
							     .cc_major = 9, .cc_minor = 0});
	act[1] = extcorr(50, 7);
	act[2] = kernel(3000, 5500, 0, 7, 50, 8);
	act[3] = mkact(PW_EV_GPU_MEMCPY, CUPTI_TID, 7000, 9000, 0, 7, 51, 4000,
		       pw_put_act_memcpy((struct pw_act_copy){.dir = PW_COPY_HTOD, .src = PW_ACT_MEM_PINNED,
							      .dst = PW_ACT_MEM_DEVICE}));
	act[4] = mkact(PW_EV_GPU_MEMSET, CUPTI_TID, 10000, 10500, 0, 7, 52, 1000,
		       pw_put_act_memset((struct pw_act_copy){.value = 0xab, .dst = PW_ACT_MEM_DEVICE}));
	act[5] = cupti_api(TID + 1, 12000, 12300, 60, 307, 1);
	act[6] = kernel(13000, 14000, 1, 3, 60, 24);
	act[7] = extcorr(51, 99); /* the copy's external id: no call carries it */
	put_act_records(fd, act, NREC(act));
	fx_raw_end(fd, 20000);

	sqlite3 *db = export_db(fx);
	char q[1024];
	assert_sql_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", 2);

	/* the wrapped launch's kernel: its three names, its geometry and resources, its times */
#define KERNEL_NAME "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.%s WHERE k.correlationId = %d"
	assert_sql_text(db, sqlf(q, "SELECT s.value " KERNEL_NAME, "demangledName", 50), DEMANGLED);
	assert_sql_text(db, sqlf(q, "SELECT s.value " KERNEL_NAME, "mangledName", 50), MANGLED);
	assert_sql_text(db, sqlf(q, "SELECT s.value " KERNEL_NAME, "shortName", 50), "vectorized_elementwise_kernel");
	assert_sql_int(db, "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 50", 3000 - START);
	assert_sql_int(db, "SELECT end - start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 50", 2500);
	assert_sql_int(db, "SELECT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 50", 0);
	assert_sql_int(db, "SELECT streamId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 50", 7);
	assert_sql_int(db, "SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 50",
		       (int64_t)PID << 24);
	assert_sql_int(db, "SELECT gridX * 1000000 + gridY * 1000 + gridZ FROM CUPTI_ACTIVITY_KIND_KERNEL"
			   " WHERE correlationId = 50",
		       128002001);
	assert_sql_int(db, "SELECT blockX * 1000000 + blockY * 1000 + blockZ FROM CUPTI_ACTIVITY_KIND_KERNEL"
			   " WHERE correlationId = 50",
		       256001001);
	assert_sql_int(db, "SELECT registersPerThread FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 50", 32);
	assert_sql_int(db, "SELECT sharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 50", 1024);

	/* the library's kernel: a C name, so no mangled one and the short name is the name */
	assert_sql_text(db, sqlf(q, "SELECT s.value " KERNEL_NAME, "demangledName", 60), "sm90_xmma_gemm_f32f32_tn");
	assert_sql_text(db, sqlf(q, "SELECT s.value " KERNEL_NAME, "shortName", 60), "sm90_xmma_gemm_f32f32_tn");
	assert_sql_null(db, "SELECT mangledName FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 60");
	assert_sql_int(db, "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 60", 13000 - START);
	assert_sql_int(db, "SELECT end - start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 60", 1000);
	assert_sql_int(db, "SELECT deviceId * 100 + streamId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 60",
		       103);
#undef KERNEL_NAME

	/* each kernel's launching call, through nsys's join */
#define LAUNCHER                                                                                                \
	"FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId" \
	" JOIN StringIds s ON s.id = r.nameId"
	assert_sql_int(db, "SELECT count(*) " LAUNCHER, 2);
	assert_sql_text(db, "SELECT s.value " LAUNCHER " WHERE k.correlationId = 50", "cudaLaunchKernel");
	assert_sql_text(db, "SELECT s.value " LAUNCHER " WHERE k.correlationId = 60", "cuLaunchKernel");
	assert_sql_int(db, "SELECT r.globalTid " LAUNCHER " WHERE k.correlationId = 50", GTID(TID));
	assert_sql_int(db, "SELECT r.globalTid " LAUNCHER " WHERE k.correlationId = 60", GTID(TID + 1));
	assert_sql_int(db, "SELECT r.start " LAUNCHER " WHERE k.correlationId = 50", 2000 - START);
	assert_sql_int(db, "SELECT r.end - r.start " LAUNCHER " WHERE k.correlationId = 50", 500);
	assert_sql_int(db, "SELECT r.start " LAUNCHER " WHERE k.correlationId = 60", 12000 - START);
	assert_sql_int(db, "SELECT r.end - r.start " LAUNCHER " WHERE k.correlationId = 60", 300);
#undef LAUNCHER
	assert_sql_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME", 2);
	assert_sql_int(db, "SELECT driver FROM PROFWRAP_CUPTI_API", 1);

	/* the copy and the memset */
	assert_sql_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY", 1);
	assert_sql_int(db, "SELECT copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY", 1);
	assert_sql_text(db, "SELECT e.label FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN ENUM_CUDA_MEMCPY_OPER e"
			    " ON e.id = m.copyKind",
			"[CUDA memcpy Host-to-Device]");
	assert_sql_text(db, "SELECT s.label || '>' || d.label FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN ENUM_CUDA_MEM_KIND s"
			    " ON s.id = m.srcKind JOIN ENUM_CUDA_MEM_KIND d ON d.id = m.dstKind",
			"Pinned>Device");
	assert_sql_int(db, "SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY", 4000);
	assert_sql_int(db, "SELECT start FROM CUPTI_ACTIVITY_KIND_MEMCPY", 7000 - START);
	assert_sql_int(db, "SELECT end - start FROM CUPTI_ACTIVITY_KIND_MEMCPY", 2000);
	assert_sql_int(db, "SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY", 51);
	assert_sql_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET", 1);
	assert_sql_int(db, "SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMSET", 1000);
	assert_sql_int(db, "SELECT value FROM CUPTI_ACTIVITY_KIND_MEMSET", 0xab);
	assert_sql_int(db, "SELECT memKind FROM CUPTI_ACTIVITY_KIND_MEMSET", PW_ACT_MEM_DEVICE);
	assert_sql_int(db, "SELECT start FROM CUPTI_ACTIVITY_KIND_MEMSET", 10000 - START);
	assert_sql_int(db, "SELECT end - start FROM CUPTI_ACTIVITY_KIND_MEMSET", 500);

	/* the device CUPTI described */
	assert_sql_text(db, "SELECT name FROM TARGET_INFO_GPU WHERE id = 0", "NVIDIA H100 80GB HBM3");
	assert_sql_int(db, "SELECT totalMemory FROM TARGET_INFO_GPU WHERE id = 0", 85520809984ll);
	assert_sql_int(db, "SELECT memoryBandwidth FROM TARGET_INFO_GPU WHERE id = 0", 3350000000000ll);
	assert_sql_int(db, "SELECT smCount FROM TARGET_INFO_GPU WHERE id = 0", 132);
	assert_sql_int(db, "SELECT computeMajor * 10 + computeMinor FROM TARGET_INFO_GPU WHERE id = 0", 90);
	sqlite3_close(db);
}

/* A push/pop range, a start/end range and a mark, in nsys's NVTX_EVENTS with its event types. */
static void test_nvtx(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	put_string(fd, 8, "forward");
	put_string(fd, 16, "load batch");
	put_string(fd, 24, "checkpoint");
	put_range(fd, PW_EV_NVTX_PUSH, TID, 2000, 3, 0, 8, 0, 0);
	put_range(fd, PW_EV_NVTX_POP, TID, 2500, 0, 0, 0, 0, 0);
	put_range(fd, PW_EV_NVTX_START, TID, 3000, 0, 41, 16, 1, 12345);
	put_range(fd, PW_EV_NVTX_END, TID + 2, 3400, 0, 41, 0, 0, 0); /* ended by another thread */
	put_range(fd, PW_EV_NVTX_MARK, TID + 1, 3500, 0, 0, 24, 2, (uint64_t)-5);
	fx_raw_end(fd, 20000);

	sqlite3 *db = export_db(fx);
	assert_sql_int(db, "SELECT count(*) FROM NVTX_EVENTS", 3);

	assert_sql_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59", 1);
	assert_sql_text(db, "SELECT text FROM NVTX_EVENTS WHERE eventType = 59", "forward");
	assert_sql_text(db, "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId"
			    " WHERE n.eventType = 59",
			"forward");
	assert_sql_int(db, "SELECT start FROM NVTX_EVENTS WHERE eventType = 59", 2000 - START);
	assert_sql_int(db, "SELECT end FROM NVTX_EVENTS WHERE eventType = 59", 2500 - START);
	assert_sql_int(db, "SELECT globalTid FROM NVTX_EVENTS WHERE eventType = 59", GTID(TID));
	assert_sql_int(db, "SELECT endGlobalTid FROM NVTX_EVENTS WHERE eventType = 59", GTID(TID));
	assert_sql_int(db, "SELECT category FROM NVTX_EVENTS WHERE eventType = 59", 3);
	assert_sql_null(db, "SELECT rangeId FROM NVTX_EVENTS WHERE eventType = 59");

	assert_sql_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 60", 1);
	assert_sql_text(db, "SELECT text FROM NVTX_EVENTS WHERE eventType = 60", "load batch");
	assert_sql_text(db, "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId"
			    " WHERE n.eventType = 60",
			"load batch");
	assert_sql_int(db, "SELECT rangeId FROM NVTX_EVENTS WHERE eventType = 60", 41);
	assert_sql_int(db, "SELECT start FROM NVTX_EVENTS WHERE eventType = 60", 3000 - START);
	assert_sql_int(db, "SELECT end FROM NVTX_EVENTS WHERE eventType = 60", 3400 - START);
	assert_sql_int(db, "SELECT globalTid FROM NVTX_EVENTS WHERE eventType = 60", GTID(TID));
	assert_sql_int(db, "SELECT endGlobalTid FROM NVTX_EVENTS WHERE eventType = 60", GTID(TID + 2));
	assert_sql_int(db, "SELECT uint64Value FROM NVTX_EVENTS WHERE eventType = 60", 12345);

	assert_sql_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34", 1);
	assert_sql_text(db, "SELECT text FROM NVTX_EVENTS WHERE eventType = 34", "checkpoint");
	assert_sql_text(db, "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId"
			    " WHERE n.eventType = 34",
			"checkpoint");
	assert_sql_int(db, "SELECT start FROM NVTX_EVENTS WHERE eventType = 34", 3500 - START);
	assert_sql_null(db, "SELECT end FROM NVTX_EVENTS WHERE eventType = 34");
	assert_sql_int(db, "SELECT globalTid FROM NVTX_EVENTS WHERE eventType = 34", GTID(TID + 1));
	assert_sql_int(db, "SELECT int64Value FROM NVTX_EVENTS WHERE eventType = 34", -5);
	sqlite3_close(db);
}

/* A database that cannot be made (its directory does not exist) or cannot be put in place (a directory has
 * its name): -1, the reason, and no file left, neither the database nor its .tmp. */
static void test_cannot_write(void **state)
{
	struct fx *fx = *state;
	int fd = fx_raw_open(fx, PID, 0, START, "train", 5);
	struct pw_rec_call rd = mkrec(PW_EV_READ, TID, 2000, 2100, 10, 0, 10, 0);
	put_records(fd, &rd, 1);
	fx_raw_end(fd, 3000);
	char err[512] = "";
	if (pw_analyze_whole(fx->dir, &fx->an, err, sizeof err) != 0)
		fail_msg("pw_analyze_whole failed: %s", err);
	assert_int_equal(fx->an.nranks, 1);

	char path[256], tmp[300], want[300];
	snprintf(path, sizeof path, "%s/missing/rank0.sqlite", fx->dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	assert_int_equal(pw_write_rank_sqlite(&fx->an, &fx->an.ranks[0], path, err, sizeof err), -1);
	snprintf(want, sizeof want, "cannot write %s:", path);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("err \"%s\" does not start with \"%s\"", err, want);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(tmp, F_OK), -1);

	/* written whole, then refused its name: the .tmp is removed, the directory left as it was */
	snprintf(path, sizeof path, "%s/rank0.sqlite", fx->dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	assert_int_equal(mkdir(path, 0755), 0);
	err[0] = '\0';
	assert_int_equal(pw_write_rank_sqlite(&fx->an, &fx->an.ranks[0], path, err, sizeof err), -1);
	snprintf(want, sizeof want, "cannot write %s:", path);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("err \"%s\" does not start with \"%s\"", err, want);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(access(tmp, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_call_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvtx, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cannot_write, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
