/* NVTX ranges as the report's phases, and the capture windows (PW_K_CAPTURE) of a rank.
 *
 * Ranges: push/pop ranges are matched per thread and domain (a pop closes the innermost range of its domain
 * on its thread), start/end ranges by id across the process's threads. Each closed occurrence adds to one
 * row per (domain, name, parent, kind): the rows form a tree, a push's parent being the row of the innermost
 * push open on its thread in its domain (start/end ranges are at the top). Names are kept exactly until one
 * digit-folded group ("step 12" -> "step #", same domain, parent and kind) has more than PW_RANGE_FOLD_AT
 * distinct names: then the group's rows merge into one row named by the folded form, their children into
 * the same children of it, and "folded" counts the occurrences in it. So a message per step costs one row,
 * not one per step.
 * GPU time of a row: the kernels, copies and memsets whose launching call (gpu_activity.c's correlation)
 * fell inside an occurrence on the same thread.
 *
 * Windows: a process records only inside its capture windows when capture control is on; each PW_K_CAPTURE
 * record opens or closes one. Fork children share their parent's window and record its state at their start.
 *
 * analysis.c drives it like gpu_activity.c: pw_ranges_file_init() per raw file, pw_ranges_event() for every
 * range, name and capture record, pw_ranges_gpu_op() for each GPU operation of the file once linked,
 * pw_ranges_file_end() when the file is read, pw_ranges_finish() per rank. */
#ifndef PW_RANGES_H
#define PW_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/rawfile.h"

#define PW_RANGE_FOLD_AT 16       /* distinct names per folded group kept apart */
#define PW_RANGE_MAX_INSTANCES (4u << 20) /* occurrences kept per file for GPU attribution */
#define PW_RANGE_MAX_NAME 1024    /* bytes of a name kept */

enum pw_range_kind { PW_RANGE_PUSH = 0, PW_RANGE_START = 1 };

#define PW_RANGE_TOP UINT32_MAX /* a row's parent when it has none */

struct pw_range_row {
	char *domain; /* "" for the default domain */
	char *name;
	uint32_t parent; /* the row it nests in, PW_RANGE_TOP for none */
	int32_t depth;   /* its parents (0: at the top) */
	uint8_t kind;   /* enum pw_range_kind */
	uint8_t merged; /* folded into row merged_into: not shown */
	uint8_t folds;  /* the row a group folded into */
	uint32_t merged_into;
	uint64_t count, total_ns, min_ns, max_ns, gpu_ns, folded;
};

struct pw_mark_row {
	char *domain;
	char *name;
	uint64_t count;
};

struct pw_capture_window {
	int pid;
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	int reason;                /* enum pw_capture_reason of the record that opened it */
	char *name;                /* the range that opened it, NULL if none */
	int64_t occurrence;        /* -1: none */
};

struct pw_range_report {
	struct pw_range_row *rows;
	size_t nrows, rows_cap;
	struct pw_mark_row *marks;
	size_t nmarks, marks_cap;
	uint64_t closed, unclosed, unmatched_pops, unmatched_ends, folded_names, instances_dropped;
	uint64_t first_ns;  /* the earliest start of a range (0: none), of the row first_row */
	uint32_t first_row;
	struct pw_capture_window *windows;
	size_t nwindows, windows_cap;
	int windowed;         /* some process recorded capture windows (else the whole run was recorded) */
	char *settings;       /* the capture settings in words, NULL when none was recorded */
	char *step_name;      /* --step-range's range name (PW_CAPTURE_STEPS), NULL when none was given */
	uint64_t captured_ns; /* the union of the windows */
	void *index;          /* private: row and group lookup */
};

struct pw_ranges_file; /* private per-file state */

/* Per-file state, NULL on out of memory. */
struct pw_ranges_file *pw_ranges_file_init(int pid, uint64_t start_ns);
/* A record of kind range, mark, NVTX name or capture. Returns 0 or -1 on out of memory. *rp is created on
 * first use. */
int pw_ranges_event(struct pw_range_report **rp, struct pw_ranges_file *f, const struct pw_raw_event *e);
/* A GPU operation of this file, launched by thread tid at launch_ns, that ran for dur_ns. */
void pw_ranges_gpu_op(struct pw_ranges_file *f, uint32_t tid, uint64_t launch_ns, uint64_t dur_ns);
/* Closes what is still open at end_ns (the process's end), attributes GPU time, frees f. Returns 0 or -1. */
int pw_ranges_file_end(struct pw_range_report *r, struct pw_ranges_file *f, uint64_t end_ns);
/* Sorts the windows by start and sums their union. */
void pw_ranges_finish(struct pw_range_report *r);
void pw_ranges_free(struct pw_range_report *r);

/* "cudaProfilerApi", "nvtx", "schedule", "timer", "on-demand", "initial". */
const char *pw_capture_reason_name(int reason);

/* The row of the range that started first (folded into another: that one), NULL when there is none. */
const struct pw_range_row *pw_ranges_first(const struct pw_range_report *r);


/* pw_range_fold (the digit-folded form of a name) is in common/pw_record.h: the preload folds by it too. */

#endif
