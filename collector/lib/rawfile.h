/* Raw trace files (OUT/raw/<rank>-<pid>[.<image>].pwt): everything one process image recorded, written
 * by the collector while it drains, read back by the analysis (and by `profwrap report`).
 *
 *   file   := header chunk*
 *   header := "PWRAW\0\0\n" u32 version u32 header_size
 *   chunk  := u32 type, u32 len, len bytes, zero padding to 8
 *
 * The PROC chunk comes first; STRING chunks precede the records that reference them; CLOCK chunks hold
 * calibration pairs; LOST chunks the cumulative drop count of a lane, THREAD_LOST that of a thread; SALVAGE
 * marks where `profwrap salvage` took over from a dead collector; END says how the process ended. A file cut
 * short (the collector killed) is read up to its last whole chunk.
 */
#ifndef PW_RAWFILE_H
#define PW_RAWFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/pw_clock.h"
#include "../../common/pw_record.h"

#define PW_RAW_MAGIC "PWRAW\0\0\n"
#define PW_RAW_VERSION 2u

enum pw_raw_chunk_type {
	PW_CHUNK_PROC = 1,
	PW_CHUNK_STRING = 2,
	PW_CHUNK_RECORDS = 3,
	PW_CHUNK_CLOCK = 4,
	PW_CHUNK_LOST = 5,
	PW_CHUNK_END = 6,
	PW_CHUNK_THREAD_LOST = 7,
	PW_CHUNK_SALVAGE = 8,
};

struct pw_raw_file_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
};

struct pw_raw_chunk {
	uint32_t type;
	uint32_t len;
};

/* PROC payload; argv ('\0'-separated), exe and host bytes follow, in that order. */
struct pw_raw_proc {
	int32_t pid;
	int32_t ppid;
	int32_t rank;
	int32_t world_size;
	uint32_t clock_kind;
	uint32_t domain_mask;
	struct pw_clock_pair clock0;
	uint64_t start_realtime_ns;
	uint32_t argv_len;
	uint32_t exe_len;
	uint32_t host_len;
	uint32_t image; /* 0 for the first image of this pid, n for the image after the n-th exec */
};

/* STRING payload; len bytes of string follow (no NUL). */
struct pw_raw_string {
	uint64_t ref;
	uint32_t len;
	uint32_t reserved;
};

struct pw_raw_lost {
	uint32_t lane;
	uint32_t reserved;
	uint64_t dropped_total; /* cumulative for this lane */
};

/* The drops of one thread (the segment's per-thread table), cumulative; LOST chunks hold the exact totals. */
struct pw_raw_thread_lost {
	uint32_t tid;
	uint32_t reserved;
	uint64_t dropped_total;
};

/* Written by `profwrap salvage` before the records it recovered from shared memory after the collector died:
 * records before it were written by the collector, those after it by the salvage. */
struct pw_raw_salvage {
	uint64_t realtime_ns; /* when the salvage ran */
};

enum pw_end_how {
	PW_END_EXITED = 1,   /* exit status known */
	PW_END_EXECED = 2,   /* image replaced by exec */
	PW_END_VANISHED = 3, /* connection closed with no exit: killed by a signal, or crashed */
	PW_END_RUNNING = 4,  /* still running when the collector finished */
	PW_END_DIED_IN_EXIT = 5, /* exit had begun (exit_status requested), then it ended without finishing */
	PW_END_UNRECORDED = 6,   /* never recorded: it could not hand its segment to the collector */
};

struct pw_raw_end {
	uint32_t how; /* enum pw_end_how */
	int32_t exit_status;
	uint64_t end_ticks;
	uint64_t exec_ref;
	uint64_t io_rchar;
	uint64_t io_wchar;
	uint64_t io_valid;
	uint64_t arena_dropped;
	uint64_t guard_skipped;
	uint64_t bad_records; /* records the collector refused (corrupt lane) */
	uint64_t stacks_dropped;  /* stacks not stored: the stack table or the arena was full */
	uint64_t samples_skipped; /* CPU samples not taken: the thread was inside the profiler */
	uint64_t shm_refused;     /* of the dropped records, those /dev/shm had no room for (0 in older files) */
	/* the call stacks its threads took and the ticks they spent taking them (0 in older files) */
	uint64_t stacks;
	uint64_t stack_ticks;
	/* The coverage check's window (pw_seg_header's io_start_* and what follows them; 0 in older files) */
	uint64_t io_start_rchar;
	uint64_t io_start_wchar;
	uint64_t io_start_valid;
	uint64_t io_own;
	uint64_t io_loader;
	uint64_t io_unflushed;
	uint64_t io_unread;
	uint64_t shm_peak; /* the most of /dev/shm the segment held, as the collector saw it (0 in older files) */
	uint32_t unrecorded_why; /* PW_END_UNRECORDED: enum pw_unrecorded_why */
	uint32_t reserved;
};

/* ---- writer ---- */

/* Appends one chunk (header, payload in up to two parts, padding) with a single write. Returns 0 or -errno. */
int pw_raw_write_chunk(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen);
/* Writes the file header. Returns 0 or -errno. */
int pw_raw_write_header(int fd);

/* ---- reader ---- */

/* What the reader hands to its visitor: one decoded process, record, loss or end. */
struct pw_raw_proc_view {
	const struct pw_raw_proc *proc;
	const char *argv; /* argv_len bytes, '\0'-separated */
	const char *exe;
	const char *host;
	uint64_t start_ns; /* CLOCK_MONOTONIC ns of clock0 */
	double ns_per_tick; /* of the process's clock: for durations counted in ticks (a record's cost, stacks') */
};

struct pw_raw_event {
	const struct pw_rec_call *rec;
	uint64_t t0_ns;
	uint64_t t1_ns;
	const char *str; /* the string arg1 refers to for kinds that carry one, else NULL */
	uint32_t str_len;
	int outside; /* written outside the capture window (PW_REC_OUTSIDE): follow it, count it nowhere */
	/* The record's stack (PW_REC_STACK): its reference (stack id, PW_STACK_PY_PENDING included; 0: none) and
	 * bytes (NULL when the file lacks them), to check with pw_stack_parse. */
	uint64_t stack_ref;
	const void *stack;
	uint32_t stack_len;
	/* A module's build-id (PW_K_MODULE), NULL when none. */
	const char *build_id;
	uint32_t build_id_len;
	int nested; /* a GPU library call made inside another (PW_REC_NESTED) */
	size_t offset; /* of the record in the file, as damage messages count it */
	/* The directory descriptor of a call naming a path (an open or a stat: struct pw_rec_open; AT_FDCWD for
	 * other records and an older writer's opens) and the working directory its relative path was relative
	 * to (NULL: none recorded). */
	int64_t dirfd;
	const char *cwd;
	uint32_t cwd_len;
	/* A module's ELF image (PW_K_MODULE of an object no file holds: the vDSO), NULL when none. */
	const char *image;
	uint32_t image_len;
};

struct pw_raw_visitor {
	void (*proc)(void *ctx, const struct pw_raw_proc_view *p);
	void (*event)(void *ctx, const struct pw_raw_event *e);
	void (*lost)(void *ctx, uint32_t lane, uint64_t dropped_total);
	void (*thread_lost)(void *ctx, uint32_t tid, uint64_t dropped_total);
	void (*salvage)(void *ctx, const struct pw_raw_salvage *s);
	void (*end)(void *ctx, const struct pw_raw_end *end, uint64_t end_ns, const char *exec_path);
	/* For `profwrap dump`, which shows the file as it is: every whole chunk (the PROC chunk included) before
	 * what it holds is delivered, with the offset of its header and its payload's length; each CLOCK pair;
	 * each STRING (len bytes, not NUL-terminated). */
	void (*chunk)(void *ctx, size_t offset, uint32_t type, uint32_t len);
	void (*clock)(void *ctx, const struct pw_clock_pair *pair);
	void (*string)(void *ctx, uint64_t ref, const char *s, uint32_t len);
};

/* Reads path, calling the visitor for each item in file order. The file is untrusted: every length is checked
 * against what is left. Returns
 *   0: the file was read, whole or as far as it is whole; err is "" when nothing was wrong, else one line
 *      naming the file, the offset of the first damage and what was done ("PATH: record at offset 4160 is not
 *      valid (type 999, 48 bytes): skipped", "PATH: chunk at offset 4096 overruns the file (cut short): read up
 *      to there"). Records of unknown type or bad size are skipped and counted in *skipped; chunks too short
 *      for their type are skipped; chunks of unknown type are stepped over (they are for newer readers);
 *  -1: nothing was delivered (out of memory aside), with one line naming the file and why in err ("PATH: format
 *      version 9 is newer than this profwrap (2): skipped"): not a regular file, too short, bad magic, another
 *      version, no whole process description. */
int pw_raw_read(const char *path, const struct pw_raw_visitor *v, void *ctx, uint64_t *skipped, char *err,
		size_t errlen);
/* The same over len bytes at buf (8-byte aligned: records are handed out in place), named name in messages. */
int pw_raw_read_mem(const char *name, const void *buf, size_t len, const struct pw_raw_visitor *v, void *ctx,
		    uint64_t *skipped, char *err, size_t errlen);

/* Whether records of this kind carry a string reference in arg1. */
int pw_kind_has_string(enum pw_event_kind k);
/* Whether a record of type (flags masked off) and size bytes (its stack reference left out) is a whole struct
 * pw_rec_open, which says what its path was relative to: an open's, a stat-family or access call's (an older
 * writer's opens are a struct pw_rec_call). */
int pw_rec_has_dir(uint16_t type, uint64_t size);

/* What a record does to a reader's table of descriptors (fd -> what it refers to), so that every reader
 * follows opens, duplicates and closes the same way. */
enum pw_fd_effect {
	PW_FD_NONE,
	PW_FD_BIND,   /* *fd now refers to the record's string (open, or a descriptor named at start) */
	PW_FD_UNBIND, /* *fd refers to nothing known (closed, or opened with a path that was not recorded) */
	PW_FD_COPY,   /* *fd refers to what *from refers to (dup, dup2, dup3, F_DUPFD) */
};
enum pw_fd_effect pw_fd_effect_of(const struct pw_raw_event *e, int64_t *fd, int64_t *from);

#endif
