/* The per-process shared-memory segment: header, lanes of records, string arena.
 *
 *   [struct pw_seg_header | lane control blocks][lane 0 data]...[lane N-1 data][string arena]
 *
 * Lanes 0..N-2 are single-producer/single-consumer byte rings, each claimed by one thread at a time; lane
 * N-1 is shared by the threads that found no free lane and is taken with a try-lock (a busy lock drops the
 * record and counts it: an app thread never waits). Head and tail run free (never wrapped); the producer
 * publishes with a release store of head, the consumer frees space with a release store of tail, each
 * reads the other's with an acquire load. A record never straddles the end of a lane: a PAD record there
 * tells the reader to continue at the lane's start.
 *
 * The string arena is append-only: pw_arena_alloc() bumps arena_used atomically, pw_arena_fill() copies the
 * string; a record committed after it carries its offset, so the consumer sees the bytes once it sees the
 * record.
 */
#ifndef PW_RING_H
#define PW_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pw_clock.h"
#include "pw_record.h"

#define PW_SEG_MAGIC 0x31545750u /* "PWT1" little-endian */
#define PW_CACHELINE 64
/* Threads whose drops the segment counts one by one; the lanes' counters hold the exact totals. */
#define PW_DROP_SLOTS 256

/* One thread's dropped records: claimed (tid set) at the thread's first drop. */
struct pw_thread_drops {
	_Atomic uint32_t tid;
	uint32_t reserved;
	_Atomic uint64_t dropped;
};

enum pw_proc_state {
	PW_STATE_RUNNING = 1,
	PW_STATE_EXITED = 2,  /* the process is ending with exit_status (set by _exit, or our destructor) */
	PW_STATE_EXECING = 3, /* inside execve(): if the segment ends now, the image was replaced */
	PW_STATE_EXITING = 4, /* exit() or return from main: atexit handlers and destructors are running */
};

struct pw_lane {
	/* written by the producer */
	_Alignas(PW_CACHELINE) _Atomic uint64_t head;
	uint64_t cached_tail;
	_Atomic uint64_t dropped;
	/* call stacks its threads took and the ticks they spent taking them (the preload's stacks.c): what
	 * stacks cost the program, summed by the collector at the process's end */
	_Atomic uint64_t stacks;
	_Atomic uint64_t stack_ticks;
	/* written by the consumer */
	_Alignas(PW_CACHELINE) _Atomic uint64_t tail;
	/* claim and lock, touched once per thread (owned lanes) or per record (shared lane) */
	_Alignas(PW_CACHELINE) _Atomic uint32_t owner;
	_Atomic uint32_t lock;
	/* bytes of this lane's data, from its start, the producer has reserved (no SIGBUS on a full /dev/shm):
	 * grown in steps as its head advances, lane_size once whole; set back to 0 by the consumer when it gives
	 * the memory of a drained lane whose thread ended back (pw_lane_reclaim_begin). */
	_Atomic uint32_t backed;
};

struct pw_seg_header {
	uint32_t magic;
	uint32_t version;     /* PW_FORMAT_VERSION */
	uint32_t header_size; /* bytes before lane 0's data, page-aligned */
	uint32_t lane_count;  /* including the shared lane, the last one */
	uint64_t lane_size;   /* bytes of data per lane, a power of two */
	uint64_t arena_offset;
	uint64_t arena_size;
	uint64_t segment_size;
	int32_t pid;
	int32_t ppid;
	int32_t rank;
	int32_t world_size;
	uint32_t clock_kind;  /* enum pw_clock_kind */
	uint32_t domain_mask; /* domains traced, 1 << enum pw_domain */
	struct pw_clock_pair clock0;
	uint64_t start_realtime_ns;
	pw_strref argv_ref;   /* arguments separated by '\0' */
	pw_strref exe_ref;    /* /proc/self/exe at start */
	pw_strref host_ref;
	_Atomic uint32_t state; /* enum pw_proc_state */
	int32_t exit_status;
	uint64_t end_ticks;       /* time of exit or of the exec that replaced the image */
	pw_strref exec_ref;       /* path given to the exec in progress */
	uint64_t io_rchar;        /* /proc/self/io at exit or exec, for the coverage check (io_valid = 1) */
	uint64_t io_wchar;
	uint64_t io_valid;
	_Atomic uint64_t arena_used;    /* bytes of the arena handed out, starts at 8 (0 means "no string") */
	_Atomic uint64_t arena_dropped; /* strings that did not fit */
	_Atomic uint64_t guard_skipped; /* calls not recorded because the thread was already recording */
	_Atomic uint64_t stacks_dropped;  /* stacks not stored: the stack table or the arena was full */
	_Atomic uint64_t samples_skipped; /* CPU samples not taken: the thread was inside the profiler */
	_Atomic uint64_t shm_refused; /* records dropped because /dev/shm had too little room to grow a lane */
	pw_strref output_ref; /* the absolute output directory: where `profwrap salvage` and `clean` take it */
	pw_strref session_ref; /* the session directory: its collector holds <session>/alive locked while it runs */
	struct pw_thread_drops thread_drops[PW_DROP_SLOTS];
	/* The coverage check's window: /proc/self/io once the image's set-up is done (the exec's and the
	 * loader's reads before it are left out; io_start_valid = 1), and what is left out or added within it. */
	uint64_t io_start_rchar;
	uint64_t io_start_wchar;
	uint64_t io_start_valid;
	_Atomic uint64_t io_own;    /* bytes profwrap itself read or wrote (libunwind's pipe) */
	_Atomic uint64_t io_loader; /* bytes the loader read for the objects dlopen loaded */
	uint64_t io_unflushed;      /* at exit: bytes in stdio's output buffers, which libc writes after io_* */
	_Atomic uint64_t io_unread; /* bytes stdio read ahead that the program never took (at fclose and exit) */
	/* 1 while profwrap's own SIGUSR2 handler is in place: `profwrap start|stop PID` signals only then (the
	 * program's own handler would take the signal for something else) */
	_Atomic uint32_t capture_signal_ours;
	/* struct pw_lane lanes[lane_count] follows, cache-line aligned */
};

static inline struct pw_lane *pw_seg_lanes(struct pw_seg_header *h)
{
	return (struct pw_lane *)((char *)h + ((sizeof *h + PW_CACHELINE - 1) & ~(size_t)(PW_CACHELINE - 1)));
}

static inline uint8_t *pw_seg_lane_data(struct pw_seg_header *h, uint32_t lane)
{
	return (uint8_t *)h + h->header_size + (uint64_t)lane * h->lane_size;
}

/* Layout for lane_count lanes of lane_size bytes (a power of two, >= 4096) and an arena of arena_size
 * bytes. Returns the segment size in bytes; *header_size gets the page-aligned header size. */
uint64_t pw_seg_layout(uint32_t lane_count, uint64_t lane_size, uint64_t arena_size, uint32_t *header_size);

/* Fills a zeroed segment's layout fields. Returns 0, or -EINVAL for sizes that pw_seg_layout rejects. */
int pw_seg_init(struct pw_seg_header *h, uint32_t lane_count, uint64_t lane_size, uint64_t arena_size);

/* A segment's layout as the consumer checked it. The producer can rewrite its header at any time, so the
 * consumer reads the layout once, checks the copy, and from then on uses only the copy. */
struct pw_seg_geometry {
	uint32_t header_size;
	uint32_t lane_count;
	uint64_t lane_size;
	uint64_t arena_offset;
	uint64_t arena_size;
	uint64_t mapped_size;
};

/* Copies h's layout into *g and checks that it is self-consistent and fits in mapped_size bytes. Returns 0,
 * or -EINVAL naming nothing: the caller says which segment. */
int pw_seg_geometry_read(const struct pw_seg_header *h, uint64_t mapped_size, struct pw_seg_geometry *g);

static inline uint8_t *pw_seg_lane_data_in(void *seg, const struct pw_seg_geometry *g, uint32_t lane)
{
	return (uint8_t *)seg + g->header_size + (uint64_t)lane * g->lane_size;
}

/* ---- producer side (hot path) ---- */

struct pw_reservation {
	uint8_t *rec;
	uint64_t new_head;
};

/* Reserves len bytes (a multiple of 8, at most 2040) in a lane owned by the caller. Returns 0 with
 * r->rec pointing at the space, or -1 when the lane is full (the record is counted as dropped). */
static inline int pw_lane_reserve(struct pw_seg_header *h, struct pw_lane *l, uint8_t *data, uint32_t len,
				  struct pw_reservation *r)
{
	uint64_t size = h->lane_size;
	uint64_t head = atomic_load_explicit(&l->head, memory_order_relaxed);
	uint64_t off = head & (size - 1);
	uint64_t to_end = size - off;
	uint64_t need = to_end < len ? to_end + len : len;
	if (head + need - l->cached_tail > size) {
		l->cached_tail = atomic_load_explicit(&l->tail, memory_order_acquire);
		if (head + need - l->cached_tail > size) {
			/* fetch_add, not load+store: on the shared lane, threads that miss the try-lock count here too */
			atomic_fetch_add_explicit(&l->dropped, 1, memory_order_relaxed);
			return -1;
		}
	}
	if (to_end < len) {
		struct pw_rec_hdr pad = {PW_EV_PAD, 1, 0, 0};
		memcpy(data + off, &pad, sizeof pad);
		head += to_end;
		off = 0;
	}
	r->rec = data + off;
	r->new_head = head + len;
	return 0;
}

/* Whether len bytes fit in a lane owned by the caller now (the consumer's tail read afresh), without counting a
 * drop: a producer that may wait for the consumer (profwrap's own threads) asks before reserving. */
static inline int pw_lane_has_room(const struct pw_seg_header *h, struct pw_lane *l, uint32_t len)
{
	uint64_t size = h->lane_size;
	uint64_t head = atomic_load_explicit(&l->head, memory_order_relaxed);
	uint64_t to_end = size - (head & (size - 1));
	uint64_t need = to_end < len ? to_end + len : len;
	l->cached_tail = atomic_load_explicit(&l->tail, memory_order_acquire);
	return head + need - l->cached_tail <= size;
}

/* Publishes a reserved record: paired with the consumer's acquire load of head in pw_lane_readable(). */
static inline void pw_lane_commit(struct pw_lane *l, const struct pw_reservation *r)
{
	atomic_store_explicit(&l->head, r->new_head, memory_order_release);
}

/* Shared-lane variant of reserve: takes the lane's try-lock, held until pw_shared_lane_commit(). A busy lock
 * counts the record as dropped (atomically: several threads may drop at once). Returns 0 or -1. */
static inline int pw_shared_lane_reserve(struct pw_seg_header *h, struct pw_lane *l, uint8_t *data, uint32_t len,
					 struct pw_reservation *r)
{
	uint32_t unlocked = 0;
	if (!atomic_compare_exchange_strong_explicit(&l->lock, &unlocked, 1, memory_order_acquire,
						     memory_order_relaxed)) {
		atomic_fetch_add_explicit(&l->dropped, 1, memory_order_relaxed);
		return -1;
	}
	if (pw_lane_reserve(h, l, data, len, r) < 0) {
		atomic_store_explicit(&l->lock, 0, memory_order_release);
		return -1;
	}
	return 0;
}

static inline void pw_shared_lane_commit(struct pw_lane *l, const struct pw_reservation *r)
{
	pw_lane_commit(l, r);
	atomic_store_explicit(&l->lock, 0, memory_order_release);
}

/* The producer backs its arena in steps of this many bytes as it fills (the step that holds an entry before
 * the entry is written); the consumer counts what the segment holds by them. */
#define PW_ARENA_STEP (256u << 10)

/* Bytes an arena entry for a string of len bytes takes. */
uint64_t pw_arena_entry_size(size_t len);

/* Hands out space for a string of len bytes. Returns its reference (the entry's offset in the arena), or 0
 * when the arena is full (the string is counted in arena_dropped). Lock-free and async-signal-safe. */
pw_strref pw_arena_alloc(struct pw_seg_header *h, size_t len);

/* Copies len bytes of s (NUL added) into the entry that pw_arena_alloc(h, len) returned. */
void pw_arena_fill(struct pw_seg_header *h, pw_strref ref, const char *s, size_t len);


/* ---- consumer side ---- */

/* Returns the string for ref with its length in *len, or NULL when ref is out of the arena's written range or
 * the stored length runs past it; the layout comes from the consumer's checked copy g. The pointer is into
 * the segment: the producer may still scribble on the bytes, but never beyond the arena. */
const char *pw_arena_get_in(struct pw_seg_header *h, const struct pw_seg_geometry *g, pw_strref ref, uint32_t *len);

/* Bytes published in lane and not yet consumed: [tail, head). */
static inline uint64_t pw_lane_readable(struct pw_lane *l, uint64_t *tail)
{
	*tail = atomic_load_explicit(&l->tail, memory_order_relaxed);
	return atomic_load_explicit(&l->head, memory_order_acquire) - *tail;
}

/* Frees consumed space: paired with the producer's acquire load of tail in pw_lane_reserve(). */
static inline void pw_lane_release(struct pw_lane *l, uint64_t new_tail)
{
	atomic_store_explicit(&l->tail, new_tail, memory_order_release);
}

/* A lane's owner while the consumer gives its memory back: no thread can claim it meanwhile. */
#define PW_LANE_RECLAIMING UINT32_MAX

/* Takes a lane that has memory backed, no owner (its thread ended) and nothing left to read, so that its
 * memory can go back to /dev/shm. Returns 1 with the lane held (the caller frees the pages of its data, then
 * calls pw_lane_reclaim_end), or 0. */
static inline int pw_lane_reclaim_begin(struct pw_lane *l)
{
	uint32_t none = 0;
	if (!atomic_load_explicit(&l->backed, memory_order_relaxed) ||
	    atomic_load_explicit(&l->owner, memory_order_relaxed) != 0 ||
	    !atomic_compare_exchange_strong_explicit(&l->owner, &none, PW_LANE_RECLAIMING, memory_order_acquire,
						     memory_order_relaxed))
		return 0;
	if (atomic_load_explicit(&l->head, memory_order_acquire) != atomic_load_explicit(&l->tail, memory_order_relaxed)) {
		atomic_store_explicit(&l->owner, 0, memory_order_release);
		return 0;
	}
	return 1;
}

/* Ends pw_lane_reclaim_begin: the lane starts afresh with nothing backed, for the next thread that claims it
 * (paired with the acquire of the claim's compare-exchange of owner). */
static inline void pw_lane_reclaim_end(struct pw_lane *l)
{
	atomic_store_explicit(&l->head, 0, memory_order_relaxed);
	l->cached_tail = 0;
	atomic_store_explicit(&l->tail, 0, memory_order_relaxed);
	atomic_store_explicit(&l->backed, 0, memory_order_relaxed);
	atomic_store_explicit(&l->owner, 0, memory_order_release);
}

#endif
