/* ring [--lane-size BYTES] [--quick] [--paced-only]: throughput of the per-thread lanes of common/pw_ring.h, in process
 * memory (a segment laid out with pw_seg_layout/pw_seg_init in an aligned allocation, not shared memory: the
 * cost of the ring itself, without page faults on a fresh mapping).
 *
 * Prints one aligned table:
 *   - one thread committing 48-byte pw_rec_call records (reserve + fill + commit) into a lane of its own, with
 *     nothing else running: it frees the lane itself each time it fills (one store per lane's worth), so the
 *     figure is the producer's cost alone; with fields from a counter, and with t0/t1 from pw_clock_ticks()
 *     as the preload's wrappers take them; the same on the shared lane (try-lock per record); the clock alone;
 *   - one and two producers writing flat out while one consumer thread drains them the way the collector's
 *     drain_lane() does (copy [tail, head) out, walk the records, write RECORDS chunks with
 *     pw_raw_write_chunk to /dev/null, release), the consumer either draining continuously or polling like
 *     the collector (sleep DRAIN_MIN_MS after moving data, doubling up to DRAIN_MAX_MS when idle);
 *   - the two producers paced at a combined 5 M records/s for 2 s (each paces itself on CLOCK_MONOTONIC,
 *     writing what is due then sleeping ~50 us; one that was kept off the CPU writes what fell due meanwhile
 *     in one burst), with both consumer styles: the drops are the figure.
 *
 * Timings are reported, never judged. --quick shortens every run (for a smoke test); --paced-only runs the
 * paced rows alone (to compare lane sizes). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../collector/lib/rawfile.h"
#include "../common/pw_clock.h"
#include "../common/pw_record.h"
#include "../common/pw_ring.h"

/* The collector's poll interval bounds (collector/serve.c DRAIN_MIN_MS, DRAIN_MAX_MS). */
#define COLLECTOR_DRAIN_MIN_MS 1
#define COLLECTOR_DRAIN_MAX_MS 4
#define ARENA_SIZE 4096u
#define REC_SIZE ((uint32_t)sizeof(struct pw_rec_call))

static double now_s(void)
{
	return (double)pw_clock_mono_ns() / 1e9;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

struct seg {
	struct pw_seg_header *h;
	uint64_t size;
};

static int seg_alloc(struct seg *s, uint32_t lanes, uint64_t lane_size)
{
	uint32_t hs;
	s->size = pw_seg_layout(lanes, lane_size, ARENA_SIZE, &hs);
	if (!s->size)
		return -1;
	s->h = aligned_alloc(4096, s->size);
	if (!s->h)
		return -1;
	memset(s->h, 0, s->size); /* touches every page: no first-use faults in the timed part */
	return pw_seg_init(s->h, lanes, lane_size, ARENA_SIZE);
}

/* Fills a record the way pw_emit_call() in preload/pw_preload.h does. */
static inline void fill(struct pw_rec_call *c, uint32_t tid, uint64_t t0, uint64_t t1, uint64_t i)
{
	c->h.type = PW_EV_READ;
	c->h.size8 = sizeof *c / 8;
	c->h.err = 0;
	c->h.tid = tid;
	c->t0 = t0;
	c->t1 = t1;
	c->ret = 1;
	c->arg0 = 3;
	c->arg1 = i;
}

/* ---- (a) one producer alone ---- */

enum solo_kind { SOLO_COUNTER, SOLO_TICKS, SOLO_SHARED_TICKS, SOLO_CLOCK_ONLY };

static volatile uint64_t sink;

/* Returns records (or clock reads) per second for n operations; the best of runs. */
static double solo(struct seg *s, enum solo_kind kind, uint64_t n, int runs)
{
	struct pw_seg_header *h = s->h;
	uint32_t lane = kind == SOLO_SHARED_TICKS ? h->lane_count - 1 : 0;
	struct pw_lane *l = &pw_seg_lanes(h)[lane];
	uint8_t *data = pw_seg_lane_data(h, lane);
	double best = 1e30;
	for (int r = 0; r < runs; r++) {
		double t0 = now_s();
		if (kind == SOLO_CLOCK_ONLY) {
			uint64_t acc = 0;
			for (uint64_t i = 0; i < n; i++)
				acc += pw_clock_ticks();
			sink = acc;
		} else {
			for (uint64_t i = 0; i < n; i++) {
				struct pw_reservation res;
				uint64_t a = kind == SOLO_COUNTER ? i : pw_clock_ticks();
				uint64_t b = kind == SOLO_COUNTER ? i + 1 : pw_clock_ticks();
				int rc = kind == SOLO_SHARED_TICKS ? pw_shared_lane_reserve(h, l, data, REC_SIZE, &res)
								   : pw_lane_reserve(h, l, data, REC_SIZE, &res);
				if (__builtin_expect(rc < 0, 0)) {
					/* Full: free it all (this thread is its own consumer) and take the record again. */
					atomic_fetch_sub_explicit(&l->dropped, 1, memory_order_relaxed);
					pw_lane_release(l, atomic_load_explicit(&l->head, memory_order_relaxed));
					i--;
					continue;
				}
				fill((struct pw_rec_call *)res.rec, 1234, a, b, i);
				if (kind == SOLO_SHARED_TICKS)
					pw_shared_lane_commit(l, &res);
				else
					pw_lane_commit(l, &res);
			}
		}
		double dt = now_s() - t0;
		if (dt < best)
			best = dt;
	}
	pw_lane_release(l, atomic_load_explicit(&l->head, memory_order_relaxed));
	return (double)n / best;
}

/* ---- (b) producers and one draining consumer ---- */

struct run {
	struct seg *s;
	int nprod;
	int collector_poll;     /* consumer sleeps like the collector's poll loop, else drains continuously */
	double rate_per_prod;   /* records/s per producer; 0 = flat out */
	double seconds;
	_Atomic int go;
	_Atomic int stop;       /* producers stop */
	_Atomic int prod_done;  /* producers that have finished */
	uint64_t produced[2];   /* records attempted (committed or dropped) */
	uint64_t consumed;
	uint64_t max_fill;      /* most bytes found readable in one lane at one drain */
	uint64_t drains;
	uint64_t max_gap_ns;    /* longest time between the starts of two drain passes */
	int out_fd;
	uint8_t *buf;
	double prod_elapsed[2];
};

struct prod_arg {
	struct run *run;
	int idx;
};

static void *producer(void *arg)
{
	struct prod_arg *pa = arg;
	struct run *R = pa->run;
	struct pw_seg_header *h = R->s->h;
	struct pw_lane *l = &pw_seg_lanes(h)[pa->idx];
	uint8_t *data = pw_seg_lane_data(h, (uint32_t)pa->idx);
	uint32_t tid = 1000 + (uint32_t)pa->idx;
	while (!atomic_load_explicit(&R->go, memory_order_acquire))
		;
	uint64_t n = 0;
	uint64_t start = pw_clock_mono_ns();
	uint64_t end = start + (uint64_t)(R->seconds * 1e9);
	if (R->rate_per_prod <= 0) {
		while (!atomic_load_explicit(&R->stop, memory_order_relaxed)) {
			for (int k = 0; k < 256; k++, n++) {
				struct pw_reservation res;
				uint64_t a = pw_clock_ticks(), b = pw_clock_ticks();
				if (pw_lane_reserve(h, l, data, REC_SIZE, &res) < 0)
					continue;
				fill((struct pw_rec_call *)res.rec, tid, a, b, n);
				pw_lane_commit(l, &res);
			}
		}
	} else {
		double ns_per_rec = 1e9 / R->rate_per_prod;
		uint64_t total = (uint64_t)(R->rate_per_prod * R->seconds);
		while (n < total) {
			uint64_t now = pw_clock_mono_ns();
			uint64_t due = (uint64_t)((double)(now - start) / ns_per_rec) + 1;
			if (due > total)
				due = total;
			for (; n < due; n++) {
				struct pw_reservation res;
				uint64_t a = pw_clock_ticks(), b = pw_clock_ticks();
				if (pw_lane_reserve(h, l, data, REC_SIZE, &res) < 0)
					continue;
				fill((struct pw_rec_call *)res.rec, tid, a, b, n);
				pw_lane_commit(l, &res);
			}
			if (n < total)
				sleep_ns(50000);
		}
		(void)end;
	}
	R->produced[pa->idx] = n;
	R->prod_elapsed[pa->idx] = (double)(pw_clock_mono_ns() - start) / 1e9;
	atomic_fetch_add_explicit(&R->prod_done, 1, memory_order_release);
	return NULL;
}

/* One lane, as collector/serve.c drain_lane() does it: copy [tail, head) out, walk the records (a PAD sends
 * the walk to the copy of the lane's start), write the runs of valid records, release. Returns bytes taken. */
static uint64_t drain_lane(struct run *R, uint32_t lane)
{
	struct pw_seg_header *h = R->s->h;
	struct pw_lane *l = &pw_seg_lanes(h)[lane];
	uint64_t size = h->lane_size, tail;
	uint64_t avail = pw_lane_readable(l, &tail);
	if (!avail)
		return 0;
	if (avail > R->max_fill)
		R->max_fill = avail;
	const uint8_t *data = pw_seg_lane_data(h, lane);
	uint64_t off = tail & (size - 1);
	uint64_t first = size - off < avail ? size - off : avail;
	memcpy(R->buf, data + off, first);
	memcpy(R->buf + first, data, avail - first);
	uint64_t pos = 0, run = 0;
	while (pos + sizeof(struct pw_rec_hdr) <= avail) {
		struct pw_rec_hdr rh;
		memcpy(&rh, R->buf + pos, sizeof rh);
		if (rh.type == PW_EV_PAD) {
			if (pos >= first)
				break;
			if (pos > run)
				pw_raw_write_chunk(R->out_fd, PW_CHUNK_RECORDS, R->buf + run, pos - run, NULL, 0);
			pos = run = first;
			continue;
		}
		uint64_t rsize = (uint64_t)rh.size8 * 8;
		if (rsize < sizeof rh || pos + rsize > avail)
			break;
		if (rh.type < PW_EV_COUNT && pw_kind_has_string(pw_events[rh.type].kind)) {
			struct pw_rec_call rc;
			memcpy(&rc, R->buf + pos, sizeof rc);
			sink = rc.arg1;
		}
		R->consumed++;
		pos += rsize;
	}
	if (pos > run)
		pw_raw_write_chunk(R->out_fd, PW_CHUNK_RECORDS, R->buf + run, pos - run, NULL, 0);
	pw_lane_release(l, tail + avail);
	return avail;
}

static void *consumer(void *arg)
{
	struct run *R = arg;
	int timeout = COLLECTOR_DRAIN_MIN_MS;
	while (!atomic_load_explicit(&R->go, memory_order_acquire))
		;
	uint64_t last = pw_clock_mono_ns();
	for (;;) {
		uint64_t now = pw_clock_mono_ns();
		if (now - last > R->max_gap_ns)
			R->max_gap_ns = now - last;
		last = now;
		int done = atomic_load_explicit(&R->prod_done, memory_order_acquire) == R->nprod;
		uint64_t moved = 0;
		for (int i = 0; i < R->nprod; i++)
			moved += drain_lane(R, (uint32_t)i);
		R->drains++;
		if (done)
			break; /* this pass began after the producers' last commit */
		if (R->collector_poll) {
			timeout = moved ? COLLECTOR_DRAIN_MIN_MS
					: (timeout * 2 > COLLECTOR_DRAIN_MAX_MS ? COLLECTOR_DRAIN_MAX_MS : timeout * 2);
			sleep_ns((uint64_t)timeout * 1000000u);
		} else if (!moved) {
			sched_yield();
		}
	}
	return NULL;
}

struct result {
	uint64_t produced, consumed, dropped;
	double seconds;
	double max_fill_pct;
	double max_gap_ms;
};

static int run_once(struct run *R, struct result *res)
{
	pthread_t pt[2], ct;
	struct prod_arg pa[2];
	struct pw_seg_header *h = R->s->h;
	for (uint32_t i = 0; i < h->lane_count; i++) {
		struct pw_lane *l = &pw_seg_lanes(h)[i];
		atomic_store(&l->head, 0);
		atomic_store(&l->tail, 0);
		atomic_store(&l->dropped, 0);
		l->cached_tail = 0;
	}
	R->go = 0;
	R->stop = 0;
	R->prod_done = 0;
	R->consumed = 0;
	R->max_fill = 0;
	R->drains = 0;
	R->max_gap_ns = 0;
	if (pthread_create(&ct, NULL, consumer, R))
		return -1;
	for (int i = 0; i < R->nprod; i++) {
		pa[i] = (struct prod_arg){R, i};
		if (pthread_create(&pt[i], NULL, producer, &pa[i]))
			return -1;
	}
	atomic_store_explicit(&R->go, 1, memory_order_release);
	if (R->rate_per_prod <= 0) {
		sleep_ns((uint64_t)(R->seconds * 1e9));
		atomic_store(&R->stop, 1);
	}
	for (int i = 0; i < R->nprod; i++)
		pthread_join(pt[i], NULL);
	pthread_join(ct, NULL);
	memset(res, 0, sizeof *res);
	for (int i = 0; i < R->nprod; i++) {
		res->produced += R->produced[i];
		res->dropped += atomic_load(&pw_seg_lanes(h)[i].dropped);
		if (R->prod_elapsed[i] > res->seconds)
			res->seconds = R->prod_elapsed[i];
	}
	res->consumed = R->consumed;
	res->max_fill_pct = 100.0 * (double)R->max_fill / (double)h->lane_size;
	res->max_gap_ms = (double)R->max_gap_ns / 1e6;
	return 0;
}

static void rule(void)
{
	puts("----------------------------------------------------------------------------------------------------------");
}

static void row(const char *what, const char *consumer_kind, const struct result *r)
{
	printf("%-34s %-10s %10llu %10llu %9llu %6.2f %8.2f %6.1f %7.2f\n", what, consumer_kind,
	       (unsigned long long)r->produced, (unsigned long long)r->consumed, (unsigned long long)r->dropped,
	       r->seconds, (double)r->consumed / r->seconds / 1e6, r->max_fill_pct, r->max_gap_ms);
}

static uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	return *end ? 0 : (uint64_t)v;
}

int main(int argc, char **argv)
{
	uint64_t lane_size = 1u << 20;
	int quick = 0, paced_only = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--lane-size") == 0 && i + 1 < argc) {
			lane_size = parse_size(argv[++i]);
		} else if (strcmp(argv[i], "--quick") == 0) {
			quick = 1;
		} else if (strcmp(argv[i], "--paced-only") == 0) {
			paced_only = 1;
		} else {
			fprintf(stderr, "usage: ring [--lane-size BYTES] [--quick] [--paced-only]\n");
			return 2;
		}
	}
	enum pw_clock_kind ck = pw_clock_init(getenv("PROFWRAP_CLOCK"));
	struct seg s;
	if (seg_alloc(&s, 3, lane_size) < 0) {
		fprintf(stderr, "ring: cannot lay out a segment with %llu-byte lanes (a power of two >= 4096)\n",
			(unsigned long long)lane_size);
		return 2;
	}
	uint64_t n = quick ? 1000000u : 10000000u;
	int runs = quick ? 1 : 3;
	double scale = quick ? 0.2 : 1.0;

	printf("Ring: one lane per producer thread, %llu KiB lanes (%llu records of %u bytes), clock %s\n",
	       (unsigned long long)(lane_size >> 10), (unsigned long long)(lane_size / REC_SIZE), REC_SIZE,
	       ck == PW_CLOCK_TSC ? "tsc" : "monotonic");
	static const struct {
		enum solo_kind k;
		const char *what;
	} solos[] = {
		{SOLO_COUNTER, "reserve+fill+commit, own lane, fields from a counter"},
		{SOLO_TICKS, "reserve+fill+commit, own lane, t0/t1 = 2 clock reads"},
		{SOLO_SHARED_TICKS, "same on the shared lane (try-lock per record)"},
		{SOLO_CLOCK_ONLY, "pw_clock_ticks() alone (M reads/s)"},
	};
	if (!paced_only) {
		rule();
		printf("%-58s %14s %12s\n", "One thread alone (best of runs)", "M records/s", "ns/record");
		rule();
		for (size_t i = 0; i < sizeof solos / sizeof solos[0]; i++) {
			double rate = solo(&s, solos[i].k, n, runs);
			printf("%-58s %14.1f %12.2f\n", solos[i].what, rate / 1e6, 1e9 / rate);
		}
		rule();
	}
	struct run R = {.s = &s};
	R.out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	R.buf = malloc(lane_size);
	if (R.out_fd < 0 || !R.buf) {
		fprintf(stderr, "ring: cannot open /dev/null or allocate the drain buffer\n");
		return 1;
	}
	printf("Producers and one consumer (drain_lane copy-out, RECORDS chunks written to /dev/null)\n");
	rule();
	printf("%-34s %-10s %10s %10s %9s %6s %8s %6s %7s\n", "run", "consumer", "produced", "consumed", "dropped",
	       "secs", "M rec/s", "fill%", "gap ms");
	rule();
	static const struct {
		int nprod;
		double total_rate;
		double seconds;
		const char *what;
	} cases[] = {
		{1, 0, 1.0, "1 producer, flat out"},
		{2, 0, 1.0, "2 producers, flat out"},
		{2, 5e6, 2.0, "2 producers, paced 5 M rec/s total"},
	};
	for (size_t c = paced_only ? 2 : 0; c < sizeof cases / sizeof cases[0]; c++) {
		for (int poll = 0; poll < 2; poll++) {
			R.nprod = cases[c].nprod;
			R.collector_poll = poll;
			R.rate_per_prod = cases[c].total_rate / cases[c].nprod;
			R.seconds = cases[c].seconds * scale;
			struct result res;
			if (run_once(&R, &res) < 0) {
				fprintf(stderr, "ring: cannot start threads\n");
				return 1;
			}
			row(cases[c].what, poll ? "poll 1-4ms" : "continuous", &res);
		}
	}
	rule();
	printf("produced = records attempted; consumed = records the consumer walked; dropped = lane full (counted\n"
	       "by pw_lane_reserve); M rec/s = consumed / producer seconds; fill%% = most of one lane found readable\n"
	       "at one drain; gap ms = longest time between the starts of two drain passes. 'poll 1-4ms' sleeps like\n"
	       "the collector's poll loop (%d ms after moving data, doubling to %d ms when idle); 'continuous' drains\n"
	       "again at once (yielding when idle).\n",
	       COLLECTOR_DRAIN_MIN_MS, COLLECTOR_DRAIN_MAX_MS);
	free(R.buf);
	close(R.out_fd);
	free(s.h);
	return 0;
}
