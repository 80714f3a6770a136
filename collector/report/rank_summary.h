/* The figures of one rank that ranks are compared by: rank<R>.json's "summary", which the cross-rank summary
 * (merge.h) reads back. */
#ifndef PW_RANK_SUMMARY_H
#define PW_RANK_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/json.h"
#include "../model/analysis.h"

struct pw_rank_figures {
	uint64_t wall_ns;
	uint64_t gpu_busy_ns;   /* the union of GPU activity, per device, summed over devices */
	uint64_t kernel_ns;     /* compute kernels' GPU time (NCCL's excluded) */
	uint64_t collective_ns; /* MPI collective calls, and NCCL's kernels (or its calls, without GPU activity) */
	uint64_t io_ns;         /* calls of the io and stdio domains */
	uint64_t wait_ns;       /* the main process's main thread in waits and GPU synchronisation (not inside MPI) */
	uint64_t busy_ns;       /* the main process's life minus its main thread's blocked time (model.h) */
};

void pw_rank_figures(const struct pw_rank_report *r, struct pw_rank_figures *f);

/* The three calls with the most time, "io.read 1.20 s, ..." ("-" when none). */
void pw_rank_top_calls(char *buf, size_t len, const struct pw_rank_report *r);

/* Writes the "summary" object (its key already written): the figures, the NVTX phases' time and the entry
 * times of the world collectives as offsets from start_realtime_ns. */
void pw_write_rank_summary_json(struct pw_json *j, const struct pw_analysis *a, const struct pw_rank_report *r);

#endif
