/* What the report writers (report_text.c, report_json.c, report_trace.c, summary.c) share: opening and
 * closing their output, text tables, human-readable figures, how a process ended, and which events count
 * as calls. */
#ifndef PW_REPORT_FORMAT_H
#define PW_REPORT_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../lib/units.h"
#include "../model/analysis.h"

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

/* s as HTML text or an attribute's value: &, <, >, " and ' escaped, control characters dropped. */
void pw_html_text(FILE *f, const char *s);

/* Strings of the model may be missing: print them as "?". */
static inline const char *pw_report_str(const char *s)
{
	return s ? s : "?";
}

/* s cut to width characters behind "...", keeping its start ("python train.py --lr ...", a kernel's name
 * and template); "?" for a missing or empty s. Returns s or buf. */
const char *pw_cut_right(char *buf, size_t len, const char *s, size_t width);
/* The JSON name of a process's end (enum pw_end_how): "exited", "exec", "vanished", "running", "unknown". */
const char *pw_end_how_name(int how);
/* How a process ended, in words: "exit 0", "killed by SIGKILL", "exec -> /bin/ls", "ended without exit
 * (crashed or killed)", "still running at end". */
void pw_format_end(char *buf, size_t len, const struct pw_proc *p);

/* Why the report of r is incomplete (some raw traces stop before their process's end), as one sentence for the
 * text's WARNING and the JSON's incomplete_reason; "" when it is whole. out_dir is named in the advice. */
void pw_incomplete_reason(char *buf, size_t len, const struct pw_rank_report *r, const char *out_dir);

/* Whether records of event ev are calls: everything but the PAD filler, PW_K_FDINFO facts and GPU activity
 * records (what the GPU did, not a call). */
int pw_event_is_call(int ev);
/* The call events of r that were called at least once, ordered by total time, longest first (ties by
 * count, then id), into ids (room for PW_EV_COUNT). Returns how many. */
size_t pw_sorted_calls(const struct pw_rank_report *r, int ids[PW_EV_COUNT]);

/* Writes text as lines of at most width characters, broken at spaces (a longer word gets a line of its
 * own): the first line after first, the others after indent. Ends with a newline. */
void pw_print_wrapped(FILE *f, const char *first, const char *indent, const char *text, size_t width);

#endif
