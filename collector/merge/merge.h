/* profwrap merge DIR: the cross-rank summary (OUT/summary.txt, .json, .html) made from the "summary"
 * objects of the per-rank JSON reports (rank<R>.json) and of the launchers' (launcher-<host>.json) alone, so
 * that it works across nodes writing into one shared directory and can be made again later.
 *
 * Files are read one at a time, each only up to the end of its "summary" object (mapped, not read whole),
 * and a second time only for the straggler's phases. Memory: one rank's summary (its collective entry
 * offsets, at most PW_MERGE_MAX_COLLECTIVES per domain), a small row per rank, and per collective domain one
 * accumulator per collective index (earliest and latest entry, the rank that entered last, how many ranks
 * were seen), never ranks x collectives. */
#ifndef PW_MERGE_H
#define PW_MERGE_H

#include <stddef.h>

#include "merge_limits.h"

/* Straggler rules (see docs/ARCHITECTURE.md, "Cross-rank summary"):
 * - collectives: the rank the others waited for longest (the spread of each compared collective, latest
 *   minus earliest entry, is the last rank's lateness), when that is at least
 *   max(PW_MERGE_LAST_SHARE_MIN, min(PW_MERGE_LAST_SHARE_MAX, PW_MERGE_LAST_SHARE_RANKS / ranks)) of the
 *   spreads of all collectives compared (all domains together), and at least PW_MERGE_MIN_COMPARED were
 *   compared, and that waiting is at least PW_MERGE_LATE_MIN_WALL of the median wall time (else start-up
 *   skew alone names a rank in a balanced job). (Counting last entries alone names noise: after one rank's late Allreduce the collectives
 *   that follow in lockstep are entered last by whichever rank is microseconds behind.)
 * - when no collective could be compared: the rank whose main thread was busy longest, when that is at
 *   least PW_MERGE_BUSY_EXCESS above the median. */
#define PW_MERGE_LAST_SHARE_MIN 0.5
#define PW_MERGE_LAST_SHARE_MAX 0.75
#define PW_MERGE_LAST_SHARE_RANKS 1.5
#define PW_MERGE_MIN_COMPARED 3
#define PW_MERGE_LATE_MIN_WALL 0.02 /* and the others waited for it at least this share of the median wall */
#define PW_MERGE_BUSY_EXCESS 0.10

/* Writes OUT/summary.txt and OUT/summary.json from OUT/rank<R>.json and OUT/launcher-*.json. Concurrent
 * merges of one directory are serialised by flock on OUT/.profwrap-merge.lock.
 *
 * only_if_complete: write only when every rank 0..W-1 has a report (W: the largest world_size read), and do
 * nothing when summary.json is newer than every report (summary.json is dated 1 s before the directory was
 * listed, so a report written during a merge, or just before it, makes the next one run). A report that
 * cannot be parsed counts as present.
 *
 * A file that cannot be read or parsed is named on stderr (with the byte offset) and skipped.
 * Returns 0 when written (msg: "summary of N ranks in OUT/summary.txt") or up to date; 1 when only_if_complete
 * and ranks are missing (msg: "ranks 2, 5-7 of 8 have no report yet"); -1 on error (msg: the reason, one
 * line: no rank report in OUT, none readable, a write that failed). */
int pw_merge(const char *out_dir, int only_if_complete, char *msg, size_t msglen);

#endif
