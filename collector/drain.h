/* Draining producers' segments into raw traces: what the collector does for each process it accepted, and
 * what `profwrap salvage` does for the segments a dead collector left in shared memory. */
#ifndef PW_DRAIN_H
#define PW_DRAIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/pw_clock.h"
#include "../common/pw_ring.h"

/* A set of string references already written to a producer's raw file. */
struct refset {
	uint64_t *slots;
	size_t cap;
	size_t used;
};

struct pw_producer {
	int sock;
	pid_t pid;
	struct pw_seg_header *h;
	struct pw_seg_geometry geo; /* checked once; the header itself is the producer's to scribble on */
	int raw_fd;
	int write_failed;
	int broken; /* reading its segment faulted (it was truncated): nothing more is read from it */
	uint64_t *lost_seen;
	struct refset strings;
	uint64_t events;
	uint64_t dropped;
	uint64_t bad_records;
	uint64_t last_clock_ns;
	char raw_name[320];  /* its raw trace, in OUT/raw */
	int32_t rank, world; /* as written in the PROC chunk */
};

struct pid_images;

/* What all producers of one collector share: where raw traces go, the names written, the copy buffer. */
struct pw_drain {
	int quiet;
	char raw_dir[4096];
	char **raw_names; /* the raw traces this collector wrote: the only ones it analyses */
	size_t nraw, raw_cap;
	struct pid_images *pids; /* images seen per pid: an exec'd image is the next */
	size_t npids, pids_cap;
	uint8_t *buf; /* one lane's worth, linearised */
	uint64_t buf_size;
	struct pw_clock_pair start_pair;
	uint64_t processes;
	uint64_t events;
	uint64_t dropped;
};

/* Reads of a segment run under a SIGBUS guard (a producer may truncate it): installs the handler. */
void pw_drain_catch_faults(void);

/* Takes a producer from its hello on sock (which it keeps). Returns NULL after logging why it was refused
 * (sock is then closed). */
struct pw_producer *pw_producer_open(struct pw_drain *d, int sock);
/* Moves what the producer's lanes hold into its raw trace. Returns the bytes moved. */
uint64_t pw_producer_drain(struct pw_drain *d, struct pw_producer *p);
/* The process is gone (or the session is over, still_running): last drain, END chunk; frees p. */
void pw_producer_finish(struct pw_drain *d, struct pw_producer *p, int still_running);
/* Frees what pw_drain holds. */
void pw_drain_free(struct pw_drain *d);

#endif
