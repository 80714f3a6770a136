/* rank<R>.sqlite, written by `profwrap export sqlite DIR`: every event of a rank in an SQLite database, from
 * the model alone, its timeline built whole (pw_analyze_whole). Where Nsight Systems' export
 * (`nsys export --type sqlite`) holds the same data, the tables and columns are nsys's (StringIds,
 * ThreadNames, TARGET_INFO_GPU, CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME, NVTX_EVENTS,
 * OSRT_API, CUBLAS_EVENTS, CUDNN_EVENTS, ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND), so SQL written for nsys's
 * databases runs on it; profwrap's own figures are in PROFWRAP_* tables. Times are ns since the rank's
 * start; a thread is globalTid = pid << 24 | tid, a process globalPid = pid << 24, as nsys packs them.
 * docs/EXPORT.md is the reference. */
#ifndef PW_REPORT_SQLITE_H
#define PW_REPORT_SQLITE_H

#include <stddef.h>

#include "../model/model.h"

/* Writes r into the database path (made as path.tmp, renamed into place when whole). Returns 0, or -1 with
 * "cannot write PATH: reason" in err. */
int pw_write_rank_sqlite(const struct pw_analysis *a, const struct pw_rank_report *r, const char *path, char *err,
			 size_t errlen);

#endif
