/* The figures of one rank that ranks are compared by: rank<R>.json's "summary", described member by member
 * by one table (PW_SUMMARY_MEMBERS) from which its writer here and its reader, the cross-rank summary
 * (merge.h), are both made. */
#ifndef PW_RANK_SUMMARY_H
#define PW_RANK_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

struct pw_analysis;
struct pw_json;
struct pw_rank_report;

struct pw_rank_figures {
	uint64_t wall_ns;
	uint64_t gpu_busy_ns;   /* the union of GPU activity, per device, summed over devices */
	uint64_t kernel_ns;     /* compute kernels' GPU time (NCCL's excluded) */
	uint64_t collective_ns; /* MPI collective calls, and NCCL's kernels (or its calls, without GPU activity) */
	uint64_t io_ns;         /* file I/O: calls of the io, stdio and meta domains but those on pipes and sockets */
	uint64_t stream_ns;     /* calls on pipes and sockets (and those that made them) */
	uint64_t wait_ns;       /* the main process's main thread in waits and GPU synchronisation (not inside MPI) */
	uint64_t busy_ns;       /* the main process's life minus its main thread's blocked time (model.h) */
};

void pw_rank_figures(const struct pw_rank_report *r, struct pw_rank_figures *f);

/* Where the rank's time went, as the reports' header says it: the main thread's busy time, then those of GPU
 * busy, collectives, file I/O, pipes and sockets and waits that are not 0. Returns how many parts. */
#define PW_ACTIVITY_PARTS 6
struct pw_activity_part {
	const char *label;
	uint64_t ns;
};
size_t pw_rank_activity(const struct pw_rank_report *r, struct pw_activity_part parts[PW_ACTIVITY_PARTS]);

/* The three calls with the most time, "io.read 1.20 s, ..." ("-" when none). */
void pw_rank_top_calls(char *buf, size_t len, const struct pw_rank_report *r);

/* Writes the "summary" object (its key already written): the members of PW_SUMMARY_MEMBERS in order. */
void pw_write_rank_summary_json(struct pw_json *j, const struct pw_analysis *a, const struct pw_rank_report *r);

/* The longest texts the merge keeps, NUL included (a longer one is cut at a character boundary). */
#define PW_SUMMARY_HOST_MAX 256
#define PW_SUMMARY_COMMAND_MAX 4096
#define PW_SUMMARY_TOP_MAX 256

/* The "summary" object's members, in the order written: X(NAME, "key", TYPE, MERGE, cap, label, row, stat).
 * TYPE, how the value is written and read:
 *   INT, UINT; NS (a UINT in nanoseconds, shown as a duration); TEXT (a string or null: the merge keeps
 *   cap - 1 bytes of it); ARRAY (written and read by code of its own: the phases, the collectives).
 * MERGE, what the cross-rank summary (merge.c) does with it:
 *   RANK      checked against the rank in the file's name
 *   ROW       kept in the rank's row
 *   JOB       the job's: the largest world size, the lowest rank's command
 *   ORIGIN    the wall-clock time the collective entries are offsets from
 *   FIGURE    compared across ranks: summary.json's ranks have it (at position row), and rank_stats (at
 *             position stat); summary.txt's spreads too (at stat) when it has a label
 *   PHASES    the straggler's phases against the other ranks' (read in the second pass only)
 *   COLLECTIVES  the entry times compared across ranks
 * The positions keep summary.json's and summary.txt's order from before the table; a new figure takes the
 * next one of each. A null or missing member reads as 0 or empty; an unknown one is skipped. */
#define PW_SUMMARY_MEMBERS(X)                                                                   \
	X(RANK, "rank", INT, RANK, 0, NULL, 0, 0)                                               \
	X(HOST, "host", TEXT, ROW, PW_SUMMARY_HOST_MAX, NULL, 0, 0)                             \
	X(WORLD_SIZE, "world_size", UINT, JOB, 0, NULL, 0, 0)                                   \
	X(COMMAND, "command", TEXT, JOB, PW_SUMMARY_COMMAND_MAX, NULL, 0, 0)                    \
	X(START_REALTIME, "start_realtime_ns", NS, ORIGIN, 0, NULL, 0, 0)                       \
	X(WALL, "wall_ns", NS, FIGURE, 0, "wall", 0, 0)                                         \
	X(PROCESSES, "processes", UINT, FIGURE, 0, NULL, 8, 8)                                  \
	X(EVENTS, "events", UINT, FIGURE, 0, NULL, 9, 9)                                        \
	X(DROPPED, "dropped", UINT, FIGURE, 0, "dropped", 6, 7)                                 \
	X(GPU_BUSY, "gpu_busy_ns", NS, FIGURE, 0, "GPU busy", 1, 1)                             \
	X(KERNEL, "kernel_ns", NS, FIGURE, 0, "kernels", 2, 2)                                  \
	X(COLLECTIVE, "collective_ns", NS, FIGURE, 0, "collectives", 3, 3)                      \
	X(IO, "io_ns", NS, FIGURE, 0, "I/O", 4, 4)                                              \
	X(WAIT, "wait_ns", NS, FIGURE, 0, "waits", 5, 5)                                        \
	X(BUSY, "busy_ns", NS, FIGURE, 0, "busy", 7, 6)                                         \
	X(OWN_COST, "profwrap_cost_ns", NS, FIGURE, 0, "own cost", 10, 10)                      \
	X(TOP_CALLS, "top_calls", TEXT, ROW, PW_SUMMARY_TOP_MAX, NULL, 0, 0)                    \
	X(PHASES, "phases", ARRAY, PHASES, 0, NULL, 0, 0)                                       \
	X(COLLECTIVES, "collectives", ARRAY, COLLECTIVES, 0, NULL, 0, 0)

enum pw_summary_member {
#define PW_X(name, key, type, merge, cap, label, row, stat) PW_SUM_##name,
	PW_SUMMARY_MEMBERS(PW_X)
#undef PW_X
	PW_SUM_COUNT
};

enum pw_summary_type { PW_SUMMARY_INT, PW_SUMMARY_UINT, PW_SUMMARY_NS, PW_SUMMARY_TEXT, PW_SUMMARY_ARRAY };

enum pw_summary_merge {
	PW_MERGE_RANK,
	PW_MERGE_ROW,
	PW_MERGE_JOB,
	PW_MERGE_ORIGIN,
	PW_MERGE_FIGURE,
	PW_MERGE_PHASES,
	PW_MERGE_COLLECTIVES,
};

struct pw_summary_member_info {
	const char *key;
	enum pw_summary_type type;
	enum pw_summary_merge merge;
	size_t cap;
	const char *label;
	int row, stat;
};

/* PW_SUMMARY_MEMBERS, indexed by enum pw_summary_member. */
extern const struct pw_summary_member_info pw_summary_members[PW_SUM_COUNT];

/* One member's value, by its type (ARRAY members have none here). */
union pw_summary_value {
	int64_t i;     /* INT */
	uint64_t u;    /* UINT, NS */
	const char *s; /* TEXT; NULL writes null */
};

#endif
