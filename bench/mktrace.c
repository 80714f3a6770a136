/* mktrace OUT [EVENTS]: writes a synthetic raw trace of EVENTS records (default 10,000,000) into OUT/raw, as
 * the collector would have written it for one process of 4 threads doing file I/O, so that `profwrap report
 * OUT` can be timed on a trace of a known size without recording one first.
 *
 * The file has what a real one has, in the same order: the file header, a PROC chunk, CLOCK chunks (the start
 * pair, then one per simulated second; ticks are a 3 GHz TSC), FD_INFO records for fds 0-2, STRING chunks
 * before the first record that names a path, RECORDS chunks of one thread's calls per simulated 1 ms drain,
 * and an END chunk with the kernel's I/O counts (so the coverage check sees everything). Each thread keeps
 * an output log open and walks through 12 input shards: openat (0.2 % fail with ENOENT), then 64 KiB reads,
 * preads, lseeks and log writes (0.05 % fsync) until 400 reads, then close. Durations are exponential around
 * realistic means with a slow tail (0.2 % of reads take 1-20 ms). The output is the same for the same
 * EVENTS: the random numbers come from a fixed seed.
 *
 * Prints: mktrace events=N bytes=B path=P */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../collector/lib/rawfile.h"
#include "../common/pw_clock.h"
#include "../common/pw_record.h"

#define THREADS 4
#define SHARDS 12
#define READS_PER_FILE 400
#define PID 4242
#define TICKS_PER_NS 3 /* a 3 GHz TSC */
#define START_NS 1000000000000ull
#define DRAIN_NS 1000000ull
#define CLOCK_EVERY_NS 1000000000ull
#define MAX_PER_DRAIN 20000u

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_u64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

static double uniform(void)
{
	return (double)(next_u64() >> 11) / 9007199254740992.0;
}

/* Exponentially distributed with the given mean, at least min_ns. */
static uint64_t expo(double mean_ns, uint64_t min_ns)
{
	double u = uniform();
	uint64_t v = (uint64_t)(-log(1.0 - u) * mean_ns);
	return v < min_ns ? min_ns : v;
}

struct path {
	char name[128];
	uint64_t ref; /* arena offset the preload would have given it */
	int written;  /* STRING chunk already in the file */
};

struct thread {
	uint32_t tid;
	uint64_t now_ns;
	int in_fd;     /* -1 when no shard is open */
	int log_fd;    /* -1 until opened */
	int shard;
	int reads_left;
	uint64_t offset;
	struct pw_rec_call *buf;
	size_t n;
};

static struct path paths[SHARDS + THREADS + 3];
static size_t npaths;
static uint64_t arena_next = 8;
static int out_fd;
static uint64_t rchar, wchar;

static void die(const char *what)
{
	fprintf(stderr, "mktrace: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void chunk(uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	int rc = pw_raw_write_chunk(out_fd, type, a, alen, b, blen);
	if (rc < 0) {
		errno = -rc;
		die("write");
	}
}

static size_t add_path(const char *name)
{
	struct path *p = &paths[npaths];
	snprintf(p->name, sizeof p->name, "%s", name);
	p->ref = arena_next;
	arena_next += (8 + strlen(p->name) + 1 + 7) & ~(uint64_t)7;
	return npaths++;
}

static void string_once(size_t i)
{
	struct path *p = &paths[i];
	if (p->written)
		return;
	struct pw_raw_string s = {p->ref, (uint32_t)strlen(p->name), 0};
	chunk(PW_CHUNK_STRING, &s, sizeof s, p->name, s.len);
	p->written = 1;
}

static uint64_t ticks(uint64_t ns)
{
	return ns * TICKS_PER_NS;
}

static void clock_pair(uint64_t ns)
{
	struct pw_clock_pair pair = {ticks(ns), ns};
	chunk(PW_CHUNK_CLOCK, &pair, sizeof pair, NULL, 0);
}

/* Appends one call to the thread's drain buffer and advances its time past it and a gap of computing. */
static void call(struct thread *t, uint16_t ev, uint64_t dur_ns, int64_t ret, uint64_t a0, uint64_t a1, int err)
{
	struct pw_rec_call *c = &t->buf[t->n++];
	memset(c, 0, sizeof *c);
	c->h.type = ev;
	c->h.size8 = sizeof *c / 8;
	c->h.err = (uint8_t)err;
	c->h.tid = t->tid;
	c->t0 = ticks(t->now_ns);
	c->t1 = ticks(t->now_ns + dur_ns);
	c->ret = ret;
	c->arg0 = a0;
	c->arg1 = a1;
	t->now_ns += dur_ns + expo(1500, 150);
}

/* One call of the thread's workload (its log is open). */
static void step(struct thread *t)
{
	if (t->in_fd < 0) {
		size_t p = (size_t)t->shard;
		string_once(p);
		t->shard = (t->shard + 1) % SHARDS;
		if (uniform() < 0.002) {
			call(t, PW_EV_OPENAT, expo(4000, 800), -1, (uint64_t)-1, paths[p].ref, ENOENT);
			return;
		}
		t->in_fd = 3 + THREADS + (int)(t->tid - PID) * 2;
		t->reads_left = READS_PER_FILE;
		t->offset = 0;
		call(t, PW_EV_OPENAT, expo(6000, 1500), t->in_fd, (uint64_t)t->in_fd, paths[p].ref, 0);
		return;
	}
	double u = uniform();
	if (t->reads_left == 0) {
		call(t, PW_EV_CLOSE, expo(1500, 300), 0, (uint64_t)t->in_fd, 0, 0);
		t->in_fd = -1;
	} else if (u < 0.68) {
		uint64_t dur = uniform() < 0.002 ? 1000000 + (uint64_t)(uniform() * 19e6) : expo(9000, 700);
		call(t, PW_EV_READ, dur, 65536, (uint64_t)t->in_fd, 65536, 0);
		t->offset += 65536;
		t->reads_left--;
		rchar += 65536;
	} else if (u < 0.73) {
		call(t, PW_EV_PREAD, expo(8000, 700), 4096, (uint64_t)t->in_fd, 4096, 0);
		rchar += 4096;
	} else if (u < 0.83) {
		call(t, PW_EV_LSEEK, expo(250, 60), (int64_t)t->offset, (uint64_t)t->in_fd, 0, 0);
	} else if (u < 0.9995) {
		uint64_t n = 80 + next_u64() % 4000;
		call(t, PW_EV_WRITE, expo(2500, 400), (int64_t)n, (uint64_t)t->log_fd, n, 0);
		wchar += n;
	} else {
		call(t, PW_EV_FSYNC, 1000000 + expo(3e6, 0), 0, (uint64_t)t->log_fd, 0, 0);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: mktrace OUT [EVENTS]\n");
		return 2;
	}
	uint64_t want = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000ull;
	if (want < 16) {
		fprintf(stderr, "mktrace: EVENTS must be at least 16\n");
		return 2;
	}
	char raw[4096], path[4200];
	snprintf(raw, sizeof raw, "%s/raw", argv[1]);
	if ((mkdir(argv[1], 0777) < 0 && errno != EEXIST) || (mkdir(raw, 0700) < 0 && errno != EEXIST))
		die(raw);
	snprintf(path, sizeof path, "%s/0-%d.pwt", raw, PID);
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out_fd < 0)
		die(path);
	if (pw_raw_write_header(out_fd) < 0)
		die("write");

	for (int i = 0; i < SHARDS; i++) {
		char name[128];
		snprintf(name, sizeof name, "/data/train/shard-%03d.bin", i);
		add_path(name);
	}
	for (int i = 0; i < THREADS; i++) {
		char name[128];
		snprintf(name, sizeof name, "/scratch/run-0/worker-%d.log", i);
		add_path(name);
	}
	size_t tty = add_path("/dev/pts/0");

	static const char argv_s[] = "python3\0train.py\0--epochs\0003";
	static const char exe_s[] = "/usr/bin/python3.11";
	static const char host_s[] = "bench-host";
	struct pw_raw_proc proc = {PID, PID - 1, 0, 1, PW_CLOCK_TSC, (1u << PW_DOM_COUNT) - 1,
				   {ticks(START_NS), START_NS}, 1795000000000000000ull, sizeof argv_s - 1,
				   sizeof exe_s - 1, sizeof host_s - 1, 0};
	char strs[256];
	memcpy(strs, argv_s, proc.argv_len);
	memcpy(strs + proc.argv_len, exe_s, proc.exe_len);
	memcpy(strs + proc.argv_len + proc.exe_len, host_s, proc.host_len);
	chunk(PW_CHUNK_PROC, &proc, sizeof proc, strs, (size_t)proc.argv_len + proc.exe_len + proc.host_len);
	clock_pair(START_NS);

	struct thread th[THREADS];
	uint64_t done = 0;
	for (int i = 0; i < THREADS; i++) {
		th[i] = (struct thread){.tid = PID + (uint32_t)i, .now_ns = START_NS + 20000 + (uint64_t)i * 150000,
					.in_fd = -1, .log_fd = -1, .shard = (i * 3) % SHARDS};
		th[i].buf = malloc(MAX_PER_DRAIN * sizeof *th[i].buf);
		if (!th[i].buf)
			die("malloc");
	}
	/* The main thread's first records: what fds 0-2 are, as the preload notes them at start. */
	string_once(tty);
	for (int fd = 0; fd < 3; fd++) {
		call(&th[0], PW_EV_FD_INFO, 0, 0, (uint64_t)fd, paths[tty].ref, 0);
		done++;
	}
	for (int i = 0; i < THREADS; i++) {
		size_t p = SHARDS + (size_t)i;
		string_once(p);
		th[i].log_fd = 3 + i;
		call(&th[i], PW_EV_OPENAT, expo(9000, 2000), th[i].log_fd, (uint64_t)th[i].log_fd, paths[p].ref, 0);
		done++;
	}

	uint64_t window_end = START_NS + DRAIN_NS, next_clock = START_NS + CLOCK_EVERY_NS;
	while (done < want) {
		for (int i = 0; i < THREADS && done < want; i++) {
			struct thread *t = &th[i];
			while (t->now_ns < window_end && done < want && t->n < MAX_PER_DRAIN) {
				step(t);
				done++;
			}
		}
		/* The drain: each lane's records since the last one, lane by lane. */
		for (int i = 0; i < THREADS; i++) {
			if (!th[i].n)
				continue;
			chunk(PW_CHUNK_RECORDS, th[i].buf, th[i].n * sizeof *th[i].buf, NULL, 0);
			th[i].n = 0;
		}
		if (window_end >= next_clock) {
			clock_pair(window_end);
			next_clock += CLOCK_EVERY_NS;
		}
		window_end += DRAIN_NS;
	}
	uint64_t end_ns = window_end;
	clock_pair(end_ns);
	struct pw_raw_end end = {.how = PW_END_EXITED, .exit_status = 0, .end_ticks = ticks(end_ns), .io_rchar = rchar,
				 .io_wchar = wchar, .io_valid = 1};
	chunk(PW_CHUNK_END, &end, sizeof end, NULL, 0);
	off_t size = lseek(out_fd, 0, SEEK_END);
	if (close(out_fd) < 0)
		die("close");
	for (int i = 0; i < THREADS; i++)
		free(th[i].buf);

	snprintf(path, sizeof path, "%s/session.txt", raw);
	FILE *f = fopen(path, "we");
	if (!f)
		die(path);
	fprintf(f, "command=python3 train.py --epochs 3\ntarget_pid=%d\ntarget_status=0\n", PID);
	fclose(f);
	printf("mktrace events=%llu bytes=%lld simulated_s=%.1f path=%s/0-%d.pwt\n", (unsigned long long)done,
	       (long long)size, (double)(end_ns - START_NS) / 1e9, raw, PID);
	return 0;
}
