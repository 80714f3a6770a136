/* Salvage and clean-up: what a collector that died (SIGKILL, or a disk that filled) left in shared memory is
 * written into the raw traces it had started, and stale sessions of dead runs are removed. */
#ifndef PW_SALVAGE_H
#define PW_SALVAGE_H

#include <stddef.h>
#include <stdint.h>

struct pw_salvage_result {
	uint64_t processes; /* segments whose records were written */
	uint64_t events;    /* records recovered */
	uint64_t dropped;   /* records the processes dropped, as their lanes counted (while nothing collected) */
	uint64_t running;   /* of those processes, still running (their later records are not collected) */
	uint64_t busy;      /* segments left alone: a live collector still writes their raw trace */
	uint64_t kept;      /* of processes, those whose records could not all be written: they stay in shared memory */
};

/* Recovers into out/raw the records left in this user's segments whose output directory is out and whose session
 * wrote into it (a session file of out/raw names it; a segment of another run is not out's): each goes to
 * the end of the raw trace its collector started (cut back to its last whole chunk, after a SALVAGE chunk), or
 * to a new raw trace when there was none; its END chunk follows and the segment is removed. Returns 0 (r says
 * what was found; nothing is not an error), or -1 with a one-line reason in err. */
int pw_salvage(const char *out, int quiet, struct pw_salvage_result *r, char *err, size_t errlen);

struct pw_clean_result {
	uint64_t segments_removed; /* of dead processes, with no output directory to salvage them into */
	uint64_t bytes_removed;
	uint64_t segments_salvaged;
	uint64_t sessions_removed; /* session directories of CLIs that are gone */
	uint64_t in_use;           /* segments of live processes, left alone */
	char salvaged_into[4096];  /* the last output directory salvage wrote into ("" when none) */
};

/* Removes this user's stale state: segments of processes that are gone (salvaged into their output directory
 * first, when it has the raw trace a collector started for them) and the session directories of profwrap runs
 * that are gone. Never touches what a live process or collector uses. Returns 0, or -1 with a reason in err. */
int pw_clean(int quiet, struct pw_clean_result *r, char *err, size_t errlen);

#endif
