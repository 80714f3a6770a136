/* What the report writers (report_text.c, report_json.c, report_trace.c, summary.c) share: opening and
 * closing their output, text tables, human-readable figures, how a process ended, and which events count
 * as calls. */
#ifndef PW_REPORT_FORMAT_H
#define PW_REPORT_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"

#define PW_CELL_MAX 128      /* bytes of one table cell, NUL included; longer text is cut */
#define PW_TABLE_MAX_COLS 12

/* A text table, filled row by row, then printed with each column as wide as its widest cell:
 *     | Action  | Num calls |
 * between rules of '-', without trailing spaces. Initialise ncols, headers and align (holding
 * 'l' or 'r' per column); free with pw_table_free(). */
struct pw_table {
	size_t ncols; /* at most PW_TABLE_MAX_COLS */
	const char *const *headers;
	const char *align;
	char (*cells)[PW_CELL_MAX];
	size_t nrows;
	size_t cap;
};

/* Appends an empty row. Returns 0, or -1 when out of memory. */
int pw_table_add_row(struct pw_table *t);
/* Sets a cell of the last row, made printable. */
__attribute__((format(printf, 3, 4))) void pw_table_set(struct pw_table *t, size_t col, const char *fmt, ...);
void pw_table_print(FILE *f, const struct pw_table *t);
void pw_table_free(struct pw_table *t);

/* Replaces control characters, which would break the layout, and bytes above 0x7f, which would break its
 * alignment, by '?'. */
void pw_make_printable(char *s);

/* Opens path for writing (as path.tmp). Returns the stream, or NULL with "cannot write PATH: reason" in err. */
FILE *pw_report_open(const char *path, char *err, size_t errlen);
/* Closes f and puts it in place as path. Returns 0, or -1 with "cannot write PATH: reason" in err when any
 * write failed (path is then left as it was). */
int pw_report_close(FILE *f, const char *path, char *err, size_t errlen);
/* Closes f and drops what was written. Returns -1 with "cannot write PATH: why" in err. */
int pw_report_abandon(FILE *f, const char *path, const char *why, char *err, size_t errlen);

/* Strings of the model may be missing: print them as "?". */
static inline const char *pw_report_str(const char *s)
{
	return s ? s : "?";
}

/* s cut to width characters behind "...", keeping its start ("python train.py --lr ...", a kernel's name
 * and template); "?" for a missing or empty s. Returns s or buf. */
const char *pw_cut_right(char *buf, size_t len, const char *s, size_t width);
/* The mean duration total_ns / count as pw_format_duration does it, "-" when count is 0. */
void pw_format_mean(char *buf, size_t len, uint64_t total_ns, uint64_t count);

/* ns with a unit (ns, us, ms, s) and 3 significant figures: "812 ns", "1.23 ms", "45.6 s". */
void pw_format_duration(char *buf, size_t len, uint64_t ns);
/* bytes with a decimal unit (B, kB, MB, GB, TB, PB, EB) and 3 significant figures: "512 B", "1.23 MB". */
void pw_format_bytes(char *buf, size_t len, uint64_t bytes);

/* FLOPs with a decimal unit and 3 significant figures: "512 FLOP", "1.23 GFLOP", "45.6 TFLOP". */
void pw_format_flops(char *buf, size_t len, uint64_t flops);
/* v >= 0 with 3 significant figures in fixed notation ("123", "12.3", "0.00123"), at most max_decimals
 * decimals (smaller values round to 0). */
void pw_format_3sig(char *buf, size_t len, double v, int max_decimals);
/* bytes per ns (= GB/s) with 3 significant figures ("12.3", "0.456"), "-" when ns is 0. */
void pw_format_gbps(char *buf, size_t len, double bytes, uint64_t ns);

/* The JSON name of a process's end (enum pw_end_how): "exited", "exec", "vanished", "running", "unknown". */
const char *pw_end_how_name(int how);
/* How a process ended, in words: "exit 0", "killed by SIGKILL", "exec -> /bin/ls", "ended without exit
 * (crashed or killed)", "still running at end". */
void pw_format_end(char *buf, size_t len, const struct pw_proc *p);

/* Whether records of event ev are calls: everything but the PAD filler, PW_K_FDINFO facts and GPU activity
 * records (what the GPU did, not a call). */
int pw_event_is_call(int ev);
/* The call events of r that were called at least once, ordered by total time, longest first (ties by
 * count, then id), into ids (room for PW_EV_COUNT). Returns how many. */
size_t pw_sorted_calls(const struct pw_rank_report *r, int ids[PW_EV_COUNT]);

/* The GPU sections (report_gpu.c), written only when r->gpu is set. Text: returns 0, or -1 when out of
 * memory. JSON: the GPU keys of rank<R>.json, written whether or not there is GPU data (empty then). */
int pw_gpu_write_text(FILE *f, const struct pw_rank_report *r);
struct pw_json;
void pw_gpu_write_json(struct pw_json *j, const struct pw_rank_report *r);

/* The GPU activity sections (report_gpu.c, from gpu_activity.h): GPU utilisation, the largest idle gaps,
 * GPU kernels, GPU copies, GPU time by call, activity recording. Text: written only when the rank has
 * activity records or made GPU calls; returns 0, or -1 when out of memory. JSON: the keys kernels, gpus,
 * gpu_activity, gpu_memcpy, gpu_memset, gpu_gaps, gpu_idle_causes, gpu_time_by_call, written always (empty
 * when there is nothing). */
int pw_act_write_text(FILE *f, const struct pw_rank_report *r);
void pw_act_write_json(struct pw_json *j, const struct pw_rank_report *r);

/* Writes text as lines of at most width characters, broken at spaces (a longer word gets a line of its
 * own): the first line after first, the others after indent. Ends with a newline. */
void pw_print_wrapped(FILE *f, const char *first, const char *indent, const char *text, size_t width);

/* NVTX phases and capture windows (report_ranges.c): the "Captured:" header line through field(), the
 * text sections, the JSON keys ranges, marks, nvtx and capture. */
void pw_capture_header(FILE *f, const struct pw_rank_report *r, void (*field)(FILE *, const char *, const char *));
int pw_ranges_write_text(FILE *f, const struct pw_rank_report *r);
void pw_ranges_write_json(struct pw_json *j, const struct pw_rank_report *r);

#endif
