/* What recording a call costs this process: measured once at start by recording calls of a dummy function
 * into a scratch lane through the wrappers' own record path, and written as a PW_K_COST record, so that the
 * report can say how much of what it shows is profwrap's (records x this cost, plus the stacks' own time).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pw_preload.h"

/* 33 blocks of 64 calls each way: about 2,000 records, ~0.1 ms. A block's 64 records (3 KiB) fit the scratch
 * lane, which is emptied between blocks; the median block leaves out the first (cold) ones and interrupts. */
#define COST_BLOCK 64
#define COST_BLOCKS 33
#define SCRATCH_BYTES 4096

_Static_assert(COST_BLOCK * sizeof(struct pw_rec_call) <= SCRATCH_BYTES, "a block fits the scratch lane");

/* The measured cost, kept for fork children: same code, same machine, no need to measure again. */
static struct {
	uint64_t t0, t1;          /* when the measurement ran (ticks) */
	uint64_t recorded, plain; /* median ticks of a block, each way */
} cost;

static uint8_t scratch_data[SCRATCH_BYTES] __attribute__((aligned(8)));
static struct pw_lane scratch_lane;
static struct pw_thread scratch_thread;
static enum pw_domain recorded_domain; /* one the process records: the wrapper's domain test passes */

__attribute__((noinline)) static int64_t dummy(int64_t x)
{
	return x + 1;
}

/* Called through pointers, as a program's call reaches libc or a wrapper through its PLT. */
static int64_t (*volatile dummy_real)(int64_t) = dummy;

/* A wrapper as PW_WRAP makes one (resolve test, domain test, clock, call, clock, record), writing into the
 * scratch lane. The domain test is that of calls recorded also outside the capture window, which may be closed
 * now (one load fewer than the others'). */
__attribute__((noinline)) static int64_t dummy_wrapper(int64_t x)
{
	if (PW_UNLIKELY(!dummy_real))
		return -1;
	if (!pw_should_track(recorded_domain))
		return dummy_real(x);
	uint64_t t0_ = pw_clock_ticks();
	int64_t ret = dummy_real(x);
	PW_RECORD_AS(&scratch_thread, RECORD_COST, ret, x, 0, ret < 0);
	return ret;
}

static int64_t (*volatile dummy_wrapped)(int64_t) = dummy_wrapper;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Ticks COST_BLOCK calls of fn took. */
static uint64_t time_block(int64_t (*volatile *fn)(int64_t))
{
	int64_t sink = 0;
	uint64_t t0 = pw_clock_ticks();
	for (int i = 0; i < COST_BLOCK; i++)
		sink += (*fn)(i);
	uint64_t t1 = pw_clock_ticks();
	__asm__ volatile("" : : "r"(sink));
	return t1 - t0;
}

/* The scratch lane emptied, as the collector would. */
static void scratch_empty(void)
{
	atomic_store_explicit(&scratch_lane.head, 0, memory_order_relaxed);
	atomic_store_explicit(&scratch_lane.tail, 0, memory_order_relaxed);
	scratch_lane.cached_tail = 0;
}

/* Measures, with the guard clear (as in a wrapper called by the program) and no stacks (the record path's stack
 * branch writes the thread's own lane). Returns 0, or -1 when the scratch lane did not get every record (the
 * cost would be that of calls not recorded). */
static int measure(void)
{
	uint64_t recorded[COST_BLOCKS], plain[COST_BLOCKS];
	uint32_t domains = pw_cfg.domain_mask & ((1u << PW_DOM_COUNT) - 1);
	if (!domains)
		return -1;
	recorded_domain = (enum pw_domain)__builtin_ctz(domains);
	/* the record path's drop count (pw_note_thread_drop) returns at once for a thread past the table */
	scratch_thread = (struct pw_thread){.lane = &scratch_lane, .data = scratch_data, .lane_backed = UINT64_MAX,
					    .tid = pw_self.tid ? pw_self.tid : (uint32_t)PW_SYSCALL(SYS_gettid),
					    .drop_slot = PW_DROP_SLOTS + 1};
	int64_t stack_min_ticks = pw_stack_min_ticks;
	pw_stack_min_ticks = INT64_MAX;
	int complete = 1;
	cost.t0 = pw_clock_ticks();
	struct pw_guarded was = pw_guard_enter(0);
	for (int b = 0; b < COST_BLOCKS; b++) {
		scratch_empty();
		recorded[b] = time_block(&dummy_wrapped);
		complete &= atomic_load_explicit(&scratch_lane.head, memory_order_relaxed) ==
			    COST_BLOCK * sizeof(struct pw_rec_call);
		plain[b] = time_block(&dummy_real);
	}
	pw_guard_leave(was);
	cost.t1 = pw_clock_ticks();
	pw_stack_min_ticks = stack_min_ticks;
	qsort(recorded, COST_BLOCKS, sizeof recorded[0], cmp_u64);
	qsort(plain, COST_BLOCKS, sizeof plain[0], cmp_u64);
	cost.recorded = recorded[COST_BLOCKS / 2];
	cost.plain = plain[COST_BLOCKS / 2];
	return complete ? 0 : -1;
}

void pw_cost_note(void)
{
	static int measured; /* 1: measured, -1: could not be (kept by fork children too) */
	if (!measured)
		measured = measure() == 0 ? 1 : -1;
	if (measured > 0)
		pw_emit_call(PW_EV_RECORD_COST, cost.t0, cost.t1, COST_BLOCK, cost.recorded, cost.plain, 0);
}
