/* Call stacks of a rank: the stacks recorded with calls (PW_REC_STACK) and the CPU samples (PW_K_SAMPLE),
 * symbolised and merged with their Python frames, and aggregated so that the reports scale with distinct
 * stacks, not with events.
 *
 * Per raw file: the modules the process had loaded (PW_K_MODULE), each distinct stack (by its reference,
 * unique within a file) copied once, and per thread the events whose Python frames were pending
 * (PW_STACK_PY_PENDING) until the thread's next PW_K_PYSTACK. At the file's end (every module known, since
 * lanes arrive in any order) each distinct native stack is symbolised once and every (native stack, Python
 * stack) pair is merged into a rank-level stack: native frames innermost first with their inline chains, the
 * profiler's own innermost frames dropped, and, when there are Python frames, the native frames from the
 * interpreter's outwards replaced by them (what py-spy --native shows). Events still pending at the end keep
 * their native frames only. Frames and merged stacks are deduplicated per rank.
 *
 * analysis.c drives it like ranges.c: pw_stacks_file_init() per raw file (lazily), pw_stacks_event() for
 * every module, Python stack and sample record and every counted call with a stack, pw_stacks_file_end() when
 * the file is read, pw_stacks_note_end() with the END chunk's counters, pw_stacks_finish() per rank. The
 * trace writer finds each event's merged stack again with pw_stacks_image() and pw_stacks_lookup(). */
#ifndef PW_CALL_STACKS_H
#define PW_CALL_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../lib/rawfile.h"

struct pw_proc;        /* model.h */
struct pw_rank_report; /* model.h */
struct pw_symbolizer; /* symbolize.h */
struct pw_json;       /* json.h */

#define PW_STACKS_NONE UINT32_MAX

/* A frame of the rank: strings interned in the report (NULL when unknown). */
struct pw_stack_frame {
	const char *function; /* as recorded: C++ names mangled, Python's co_qualname */
	const char *file;
	const char *module;   /* the object's path, "python" for Python frames, "?" when no module covers it */
	uint64_t offset;      /* in the module's file, kept for frames whose function is unknown (else 0) */
	uint32_t line;        /* 0 when unknown */
	uint8_t python;
	uint8_t system;       /* in a system, CUDA or profiler library: never a call site while a user frame exists */
};

/* A merged stack: frames[frame_ids[first .. first + len)], innermost first. */
struct pw_stack_entry {
	uint32_t first, len;
};

/* What the stacks of one call event, or the samples (ev == PW_EV_CPU_SAMPLE), add up to on one stack. */
struct pw_stack_row {
	uint32_t ev;
	uint32_t stack;
	uint64_t count;
	uint64_t total_ns; /* calls: their time; samples: the CPU time they stand for (pw_get_sample) */
};

struct pw_stack_report {
	struct pw_stack_frame *frames;
	size_t nframes, frames_cap;
	uint32_t *frame_ids;
	size_t nframe_ids, frame_ids_cap;
	struct pw_stack_entry *stacks;
	size_t nstacks, stacks_cap;
	struct pw_stack_row *rows; /* sorted by total_ns, longest first, by pw_stacks_finish */
	size_t nrows, rows_cap;
	uint64_t captured;        /* counted calls and samples that carried a stack */
	uint64_t dropped;         /* stacks the preload could not store */
	uint64_t samples;
	uint64_t samples_skipped; /* samples not taken: the thread was inside the profiler */
	uint64_t sample_period_ns; /* the longest period seen (every process samples at the same one) */
	uint64_t sample_cpu_ns;   /* the CPU time the samples stand for */
	uint64_t unreadable;      /* stack references whose bytes were missing or corrupt: ignored */
	void *index;              /* private: strings, frames, stacks, rows and images */
};

struct pw_stacks_file; /* private per-file state */

/* Per-file state for a process whose executable is exe (the main program's module has no path of its own).
 * Returns NULL when out of memory. */
struct pw_stacks_file *pw_stacks_file_init(const char *exe);
/* A module, Python stack or sample record, or a counted (not outside) call whose e->stack_ref is set; other
 * records are ignored. Returns 0 or -1 when out of memory. */
int pw_stacks_event(struct pw_stacks_file *f, const struct pw_raw_event *e);
/* Symbolises the file's stacks with sym and adds its events to *rp (created on first use), under the image
 * p. Frees f (also when r is NULL: nothing is added then). Returns 0 or -1 when out of memory. */
int pw_stacks_file_end(struct pw_stack_report **rp, struct pw_stacks_file *f, struct pw_symbolizer *sym,
		       const struct pw_proc *p);
/* Adds an END chunk's stack counters; *rp is created when one is non-zero. Returns 0 or -1 when out of memory. */
int pw_stacks_note_end(struct pw_stack_report **rp, uint64_t stacks_dropped, uint64_t samples_skipped);
/* Sorts the rows (longest total first). */
void pw_stacks_finish(struct pw_stack_report *r);
void pw_stacks_free(struct pw_stack_report *r);

/* Whether r holds any stack (calls or samples). */
int pw_stacks_any(const struct pw_stack_report *r);

/* ---- lookups for the trace writer ---- */

struct pw_stack_image; /* one process image's stacks */

/* The stacks of image p, NULL when it has none. */
const struct pw_stack_image *pw_stacks_image(const struct pw_stack_report *r, const struct pw_proc *p);
/* The merged stack of the event of thread tid that started at t0_ns and carried stack_ref, in image img: the
 * event's own stack, or with its deferred Python frames when stack_ref has PW_STACK_PY_PENDING. Returns the
 * stack's index, or PW_STACKS_NONE. */
uint32_t pw_stacks_lookup(const struct pw_stack_image *img, uint32_t tid, uint64_t t0_ns, uint64_t stack_ref);

/* The part of path after its last '/' (a module's or a source file's name for display); "?" for NULL. */
const char *pw_stack_basename(const char *path);

#endif
