/* "What to fix first": a short list of findings about a rank, each the share of the rank's wall time it
 * concerns, one sentence of evidence with the figures, and one concrete piece of advice; ranked by share,
 * largest first. The ids and thresholds are a contract: workloads and integration tests are written against
 * them.
 *
 *   id                rule (shares are of the rank's wall time)
 *   input_bound       idle of "input" gaps (gpu_activity.h, enum pw_gap_class) >= PW_FIND_IDLE_SHARE
 *   sync_bound        idle of "sync" gaps >= PW_FIND_IDLE_SHARE
 *   launch_bound      idle of "launch" gaps >= PW_FIND_IDLE_SHARE and the median kernel is shorter than
 *                     PW_FIND_LAUNCH_MEDIAN_NS
 *   cpu_bound         idle of "cpu" gaps >= PW_FIND_IDLE_SHARE
 *   pageable_memcpy   GPU time of copies with a pageable side >= PW_FIND_PAGEABLE_SHARE
 *   small_memcpy      at least PW_FIND_SMALL_COPY_CALLS successful copy calls of fewer than 64 KiB, and the
 *                     larger of their CPU time and their copies' GPU time >= PW_FIND_SMALL_COPY_SHARE
 *   collective_bound  GPU time of the kernels of NCCL calls (or, not linked to a call, named nccl*) >=
 *                     PW_FIND_COLLECTIVE_SHARE
 *   startup_bound     the time from the rank's start to its first step (the first range to start, else the
 *                     first GPU library call) >= PW_FIND_STARTUP_SHARE and >= PW_FIND_STARTUP_MIN_NS; the
 *                     evidence counts the loads, opens and stats before it
 *   checkpoint_bound  time in calls on the checkpoint files written (by name: *checkpoint*, *ckpt*, .pt,
 *                     .pth, .ckpt, .safetensors, .bin, .h5, .npz, .pkl) >= PW_FIND_CHECKPOINT_SHARE; the
 *                     evidence counts saves (opens in which a file was written, model.h), not files
 *   input_bound       (without GPU activity records) the rank's main process's main thread blocked (waits and
 *                     polls, calls on pipes and sockets) >= PW_FIND_HOST_INPUT_SHARE while the child
 *                     processes its program started read >= PW_FIND_HOST_INPUT_BYTES, more than it read
 *                     itself
 *   worker_startup    the children that the main process's program started and that read files (loader
 *                     workers) start in >= PW_FIND_WORKER_ROUNDS rounds (a round: the workers that start before
 *                     the first of them reads), and the shortest start-up (start to first file read, across
 *                     the worker's exec) of each round, summed, >= PW_FIND_WORKER_STARTUP_SHARE
 *
 * The main process is a process across its exec chain (model.h, struct pw_process); its program is its last
 * image, and the children a wrapper started before exec'ing it (a pyenv shim's lookups) are not its workers.
 *
 * Without GPU activity records (pw_act_recorded()), the GPU rules but small_memcpy are not evaluated.
 */
#ifndef PW_FINDINGS_H
#define PW_FINDINGS_H

#include <stddef.h>

#include "model.h"

#define PW_FIND_IDLE_SHARE 0.05
#define PW_FIND_LAUNCH_MEDIAN_NS 50000u
#define PW_FIND_PAGEABLE_SHARE 0.02
#define PW_FIND_SMALL_COPY_CALLS 100u
#define PW_FIND_SMALL_COPY_SHARE 0.05
#define PW_FIND_COLLECTIVE_SHARE 0.20
#define PW_FIND_STARTUP_SHARE 0.25
#define PW_FIND_STARTUP_MIN_NS 200000000u
#define PW_FIND_CHECKPOINT_SHARE 0.05
#define PW_FIND_HOST_INPUT_SHARE 0.20
#define PW_FIND_HOST_INPUT_BYTES (1u << 20)
#define PW_FIND_WORKER_ROUNDS 3u
#define PW_FIND_WORKER_STARTUP_SHARE 0.05

struct pw_finding {
	const char *id; /* one of the ids above (static) */
	double share;   /* of the rank's wall time, 0..1 */
	char *evidence; /* one sentence with the figures */
	const char *advice; /* one sentence (static) */
};

/* Evaluates the rules on a finished rank (r->act finished) into r->findings, r->nfindings. Returns 0, or -1
 * when out of memory (the findings are then those made so far). */
int pw_findings_build(struct pw_rank_report *r);
void pw_findings_free(struct pw_finding *f, size_t n);

#endif
