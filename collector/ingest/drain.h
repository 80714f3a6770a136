/* Draining producers' segments into raw traces: what the collector does for each process it accepted, and
 * what `profwrap salvage` does for the segments a dead collector left in shared memory. */
#ifndef PW_DRAIN_H
#define PW_DRAIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../common/pw_clock.h"
#include "../../common/pw_ring.h"
#include "../../common/pw_session.h"
#include "../lib/hash_index.h"

struct pw_producer {
	int sock;
	pid_t pid;
	struct pw_seg_header *h;
	struct pw_seg_geometry geo; /* checked once; the header itself is the producer's to scribble on */
	int raw_fd;
	uint64_t raw_size; /* bytes of whole chunks in the raw trace: a failed write is cut back to this */
	int write_failed;
	int broken; /* reading its segment faulted (it was truncated): nothing more is read from it */
	uint64_t *lost_seen;
	struct pw_keys strings; /* string references already written to its raw file */
	uint64_t events;
	uint64_t dropped;
	uint64_t bad_records;
	uint64_t last_clock_ns;
	uint64_t shm_peak; /* the most of /dev/shm its segment was seen to hold */
	char raw_name[320];  /* its raw trace, in OUT/raw */
	int32_t rank, world; /* as written in the PROC chunk */
	char shm_name[PW_SHM_NAME_MAX]; /* the segment's name: removed once the END chunk is written, else kept for salvage */
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

/* "profwrap-collector: <message>" on stderr, unless quiet. */
void pw_collector_log(int quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reads of a segment run under a SIGBUS guard (a producer may truncate it): installs the handler. */
void pw_drain_catch_faults(void);

/* Takes a producer from its hello on sock (which it keeps). Returns NULL after logging why it was refused
 * (sock is then closed). */
struct pw_producer *pw_producer_open(struct pw_drain *d, int sock);
/* A raw trace that a dead collector started, to be continued: its descriptor (locked, at its end), the bytes
 * of its whole chunks, its name in raw_dir and the rank its PROC chunk holds. */
struct pw_raw_resume {
	int fd;
	uint64_t size;
	const char *name;
	int32_t rank, world;
};

/* Salvage: takes over a segment (mapped read-write, map_size bytes, checked private to this user) whose
 * collector is gone. Its records go to the end of resume's file after a SALVAGE chunk, or to a new raw trace
 * when resume is NULL. On success the producer owns map and resume->fd; returns NULL after logging why. */
struct pw_producer *pw_producer_adopt(struct pw_drain *d, void *map, uint64_t map_size, const char *shm_name,
				      const struct pw_raw_resume *resume);
/* Moves what the producer's lanes hold into its raw trace. Returns the bytes moved. */
uint64_t pw_producer_drain(struct pw_drain *d, struct pw_producer *p);
/* The process is gone (or the session is over, still_running): last drain, END chunk; frees p. */
void pw_producer_finish(struct pw_drain *d, struct pw_producer *p, int still_running);
/* A process that could not connect (pw_unrecorded, from the session's list): a raw trace that names it, with
 * no records and an END of PW_END_UNRECORDED. */
void pw_drain_unrecorded(struct pw_drain *d, const struct pw_unrecorded *u);
/* Frees what pw_drain holds. */
void pw_drain_free(struct pw_drain *d);

#endif
