/* The rules of "What to fix first" (see findings.h). */
#define _GNU_SOURCE
#include "findings.h"

#include "../lib/units.h"
#include "gpu_activity.h"
#include "ranges.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP_CALLS 3 /* calls named in an idle finding's evidence */
#define NAMED_DEVICES 4

static const char ADVICE_INPUT[] =
	"Load and preprocess in background workers (DataLoader(num_workers>0, pin_memory=True, "
	"persistent_workers=True, prefetch_factor=2 or more)), cache decoded samples, or move the data to "
	"faster storage, so the next batch is ready when the GPU is.";
static const char ADVICE_SYNC[] =
	"Remove synchronisation from the loop (.item(), .cpu(), printing tensors, torch.cuda.synchronize(); "
	"cudaStreamSynchronize/cudaDeviceSynchronize in C): keep values on the GPU, log every N steps, and use "
	"non_blocking copies and CUDA events.";
static const char ADVICE_LAUNCH[] =
	"Launch fewer, larger kernels: capture the step in a CUDA graph (torch.cuda.graphs, "
	"torch.compile(mode=\"reduce-overhead\")), fuse small operations (torch.compile), or use larger "
	"batches.";
static const char ADVICE_CPU[] =
	"Move host-side preprocessing off the training thread (DataLoader workers, transforms on the GPU) and "
	"profile the host code (py-spy, perf) to find what it computes between launches.";
static const char ADVICE_PAGEABLE[] =
	"Copy from pinned memory: DataLoader(pin_memory=True) with .to(device, non_blocking=True), or "
	"cudaMallocHost/cudaHostRegister for the host buffers.";
static const char ADVICE_SMALL[] =
	"Batch small transfers into one (concatenate, then copy once) and keep scalars on the GPU instead of "
	"copying them back and forth.";
static const char ADVICE_COLLECTIVE[] =
	"Overlap communication with compute (DDP bucket_cap_mb, no_sync() with gradient accumulation), check "
	"the transport with NCCL_DEBUG=INFO, and send fewer bytes (bf16 gradients, gradient compression).";

static const char ADVICE_STARTUP[] =
	"Import less before the work starts (import submodules where they are used, not whole packages at the "
	"top), keep the environment on local disk (site-packages on a network file system costs each import "
	"its stats), and see where it goes with python -X importtime; run many short jobs in one process.";
static const char ADVICE_HOST_INPUT[] =
	"Give the loader more worker processes (DataLoader num_workers) and a prefetch_factor of 2 or more, "
	"make each sample cheaper to read and decode (fewer, larger files; decoded caches), or move the data "
	"to faster storage.";
static const char ADVICE_WORKERS[] =
	"Keep the loader's workers from epoch to epoch (DataLoader(persistent_workers=True)) and make their start "
	"cheaper (the fork start method, less state to pickle into them, imports done before they start).";
static const char ADVICE_CHECKPOINT[] =
	"Checkpoint less often, in the background (torch.distributed.checkpoint.async_save, a writer thread), "
	"to fast local disk first, and save only what a restart needs.";

struct builder {
	struct pw_rank_report *r;
	struct pw_finding *f;
	size_t n, cap;
	int oom;
};

static double share_of(uint64_t ns, uint64_t wall)
{
	if (!wall)
		return 0;
	double s = (double)ns / (double)wall;
	return s > 1.0 ? 1.0 : s;
}

__attribute__((format(printf, 5, 6))) static void add(struct builder *b, const char *id, double share,
						      const char *advice, const char *fmt, ...)
{
	if (b->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 8;
		struct pw_finding *n = realloc(b->f, ncap * sizeof *n);
		if (!n) {
			b->oom = 1;
			return;
		}
		b->f = n;
		b->cap = ncap;
	}
	char *text = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		b->oom = 1;
		return;
	}
	b->f[b->n++] = (struct pw_finding){id, share, text, advice};
}

/* "GPU 0 (NVIDIA H100)" or "GPUs 0, 1 and 3": the devices with idle time of class c (all devices when c is
 * PW_GAP_CLASSES). */
static void format_devices(char *buf, size_t len, const struct pw_act_report *a, int c)
{
	size_t used = 0, named = 0, total = 0;
	const struct pw_act_device *only = NULL;
	for (size_t i = 0; i < a->ndevices; i++)
		if (c == PW_GAP_CLASSES || a->devices[i].idle_by_class[c]) {
			total++;
			only = &a->devices[i];
		}
	if (total == 1) {
		if (only->name)
			snprintf(buf, len, "GPU %d (%s)", only->id, only->name);
		else
			snprintf(buf, len, "GPU %d", only->id);
		return;
	}
	used = (size_t)snprintf(buf, len, "GPUs");
	for (size_t i = 0; i < a->ndevices && used < len; i++) {
		if (c != PW_GAP_CLASSES && !a->devices[i].idle_by_class[c])
			continue;
		if (named == NAMED_DEVICES) {
			snprintf(buf + used, len - used, " and %zu more", total - named);
			return;
		}
		const char *sep = named == 0 ? " " : named + 1 == total ? " and " : ", ";
		int w = snprintf(buf + used, len - used, "%s%d", sep, a->devices[i].id);
		if (w > 0)
			used += (size_t)w;
		named++;
	}
}

/* "read 900 ms, poll 300 ms": the calls with the most time inside gaps of class c. */
static void format_top_calls(char *buf, size_t len, const struct pw_act_class *k)
{
	int used_ev[TOP_CALLS];
	size_t n = 0, used = 0;
	buf[0] = 0;
	for (; n < TOP_CALLS; n++) {
		int best = -1;
		for (int ev = 0; ev < PW_EV_COUNT; ev++) {
			int taken = 0;
			for (size_t i = 0; i < n; i++)
				taken |= used_ev[i] == ev;
			if (!taken && k->call_ns[ev] && (best < 0 || k->call_ns[ev] > k->call_ns[best]))
				best = ev;
		}
		if (best < 0)
			break;
		used_ev[n] = best;
		char dur[32];
		pw_format_duration(dur, sizeof dur, k->call_ns[best]);
		int w = snprintf(buf + used, len - used, "%s%s %s", n ? ", " : "", pw_events[best].name, dur);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
}

static void idle_findings(struct builder *b)
{
	const struct pw_rank_report *r = b->r;
	const struct pw_act_report *a = r->act;
	char dev[256], idle[32], calls[256], share[32];
	for (int c = 0; c < PW_GAP_CLASSES; c++) {
		const struct pw_act_class *k = &a->classes[c];
		double s = share_of(k->idle_ns, r->wall_ns);
		if (s < PW_FIND_IDLE_SHARE)
			continue;
		format_devices(dev, sizeof dev, a, c);
		pw_format_duration(idle, sizeof idle, k->idle_ns);
		snprintf(share, sizeof share, "%.1f%%", s * 100.0);
		format_top_calls(calls, sizeof calls, k);
		const char *s_gaps = k->gaps == 1 ? "" : "s";
		switch (c) {
		case PW_GAP_INPUT:
			add(b, "input_bound", s, ADVICE_INPUT,
			    "%s sat idle %s (%s of wall time) in %" PRIu64 " gap%s while the thread that launches its "
			    "work was reading input or waiting on other threads or processes: %s.",
			    dev, idle, share, k->gaps, s_gaps, calls[0] ? calls : "no call named");
			break;
		case PW_GAP_SYNC: {
			int best = -1;
			for (int ev = 0; ev < PW_EV_COUNT; ev++)
				if (k->sync_ns[ev] && (best < 0 || k->sync_ns[ev] > k->sync_ns[best]))
					best = ev;
			char after[32];
			pw_format_duration(after, sizeof after, best >= 0 ? k->sync_ns[best] : 0);
			add(b, "sync_bound", s, ADVICE_SYNC,
			    "%s sat idle %s (%s of wall time) in %" PRIu64 " gap%s that began while the launching "
			    "thread waited for the GPU in a synchronising call; most after %s (%" PRIu64 " time%s, %s).",
			    dev, idle, share, k->gaps, s_gaps, best >= 0 ? pw_events[best].name : "?",
			    best >= 0 ? k->sync_gaps[best] : 0, best >= 0 && k->sync_gaps[best] == 1 ? "" : "s", after);
			break;
		}
		case PW_GAP_LAUNCH: {
			if (a->kernel_median_ns >= PW_FIND_LAUNCH_MEDIAN_NS || !a->kernels)
				break;
			char median[32];
			pw_format_duration(median, sizeof median, a->kernel_median_ns);
			add(b, "launch_bound", s, ADVICE_LAUNCH,
			    "%s sat idle %s (%s of wall time) in %" PRIu64 " gap%s shorter than 100 us between "
			    "kernels whose median duration is %s: the host could not launch work as fast as the GPU "
			    "ran it.",
			    dev, idle, share, k->gaps, s_gaps, median);
			break;
		}
		case PW_GAP_CPU: {
			char extra[300] = "";
			if (calls[0])
				snprintf(extra, sizeof extra, " (recorded calls in them: %s)", calls);
			add(b, "cpu_bound", s, ADVICE_CPU,
			    "%s sat idle %s (%s of wall time) in %" PRIu64 " gap%s while the launching thread ran host "
			    "code without recorded I/O or waits%s.",
			    dev, idle, share, k->gaps, s_gaps, extra);
			break;
		}
		default:
			break; /* sleep and unknown: no rule */
		}
	}
}

static void copy_findings(struct builder *b)
{
	const struct pw_rank_report *r = b->r;
	const struct pw_act_report *a = r->act;
	char bytes[32], dur[32], rate[32], pinned[64] = "";
	double s = share_of(a->pageable_ns, r->wall_ns);
	if (s >= PW_FIND_PAGEABLE_SHARE) {
		pw_format_bytes(bytes, sizeof bytes, a->pageable_bytes);
		pw_format_duration(dur, sizeof dur, a->pageable_ns);
		pw_format_gbps(rate, sizeof rate, (double)a->pageable_bytes, a->pageable_ns);
		if (a->pinned_count && a->pinned_ns) {
			char prate[32];
			pw_format_gbps(prate, sizeof prate, (double)a->pinned_bytes, a->pinned_ns);
			snprintf(pinned, sizeof pinned, "; the %" PRIu64 " pinned copies ran at %s GB/s", a->pinned_count,
				 prate);
		}
		add(b, "pageable_memcpy", s, ADVICE_PAGEABLE,
		    "%" PRIu64 " GPU cop%s to or from pageable host memory (%s) took %s of GPU time (%.1f%% of wall "
		    "time) at %s GB/s%s.",
		    a->pageable_count, a->pageable_count == 1 ? "y" : "ies", bytes, dur, s * 100.0, rate, pinned);
	}
}

static void small_copy_finding(struct builder *b)
{
	const struct pw_rank_report *r = b->r;
	const struct pw_act_report *a = r->act;
	if (a->small_copy_calls < PW_FIND_SMALL_COPY_CALLS)
		return;
	int recorded = pw_act_recorded(a);
	uint64_t gpu = recorded ? a->small_copy_gpu_ns : 0;
	uint64_t worst = a->small_copy_cpu_ns > gpu ? a->small_copy_cpu_ns : gpu;
	double s = share_of(worst, r->wall_ns);
	if (s < PW_FIND_SMALL_COPY_SHARE)
		return;
	char cpu[32], g[32], gtext[80] = "";
	pw_format_duration(cpu, sizeof cpu, a->small_copy_cpu_ns);
	if (recorded) {
		pw_format_duration(g, sizeof g, gpu);
		snprintf(gtext, sizeof gtext, " and %s of GPU copy time", g);
	}
	add(b, "small_memcpy", s, ADVICE_SMALL,
	    "%" PRIu64 " copy calls of under 64 KiB each took %s in the calls on the CPU%s (%.1f%% of wall time).",
	    a->small_copy_calls, cpu, gtext, s * 100.0);
}

static void collective_finding(struct builder *b)
{
	const struct pw_rank_report *r = b->r;
	const struct pw_act_report *a = r->act;
	double s = share_of(a->coll_kernel_ns, r->wall_ns);
	if (s < PW_FIND_COLLECTIVE_SHARE)
		return;
	char dur[32], dev[256] = "the GPU", bw[96];
	const struct pw_act_device *d = pw_act_device_of(a, a->coll_device);
	if (d && d->name)
		snprintf(dev, sizeof dev, "GPU %d (%s)", d->id, d->name);
	else if (d)
		snprintf(dev, sizeof dev, "GPU %d", d->id);
	pw_format_duration(dur, sizeof dur, a->coll_kernel_ns);
	if (a->coll_linked_ns && a->coll_bus_bytes > 0) {
		char rate[32];
		pw_format_gbps(rate, sizeof rate, a->coll_bus_bytes, a->coll_linked_ns);
		snprintf(bw, sizeof bw, "bus bandwidth %s GB/s over the kernels' GPU time (as nccl-tests counts it)",
			 rate);
	} else {
		snprintf(bw, sizeof bw, "bus bandwidth unknown (the kernels are not linked to NCCL calls)");
	}
	add(b, "collective_bound", s, ADVICE_COLLECTIVE,
	    "NCCL kernels ran %s on %s (%.1f%% of wall time) in %" PRIu64 " kernel%s; %s.", dur, dev, s * 100.0,
	    a->coll_kernels, a->coll_kernels == 1 ? "" : "s", bw);
}

/* startup_bound: the time before the first step (the first range, else the first GPU library call). */
static void startup_finding(struct builder *b)
{
	const struct pw_rank_report *r = b->r;
	const struct pw_range_row *first = pw_ranges_first(r->ranges);
	uint64_t step = first ? r->ranges->first_ns : 0;
	if (r->first_gpu_call_ns && (!step || r->first_gpu_call_ns < step)) {
		step = r->first_gpu_call_ns;
		first = NULL;
	}
	uint64_t before = step > r->start_ns ? step - r->start_ns : 0;
	double s = share_of(before, r->wall_ns);
	if (!step || before < PW_FIND_STARTUP_MIN_NS || s < PW_FIND_STARTUP_SHARE)
		return;
	uint64_t n[3] = {0, 0, 0}, load_ns = 0;
	for (size_t i = 0; i < r->nstartup; i++) {
		const struct pw_startup_call *c = &r->startup[i];
		if (c->t0_ns >= step)
			continue;
		n[c->kind]++;
		if (c->kind == PW_STARTUP_LOAD)
			load_ns += c->dur_ns;
	}
	char d[32], w[32], l[32], what[160];
	pw_format_duration(d, sizeof d, before);
	pw_format_duration(w, sizeof w, r->wall_ns);
	pw_format_duration(l, sizeof l, load_ns);
	if (first)
		snprintf(what, sizeof what, "the first range (%s%s%.80s)", first->domain, first->domain[0] ? ":" : "",
			 first->name);
	else
		snprintf(what, sizeof what, "the first GPU library call");
	add(b, "startup_bound", s, ADVICE_STARTUP,
	    "%s of %s passed before %s: %" PRIu64 " libraries loaded (%s in dlopen), %" PRIu64 " files opened and "
	    "%" PRIu64 " stat calls (imports read and look for modules).",
	    d, w, what, n[PW_STARTUP_LOAD], l, n[PW_STARTUP_OPEN], n[PW_STARTUP_STAT]);
}

/* Whether procs[i] is the first image of a child that the main process m's program started (while its last
 * image ran: a wrapper's children, before its exec, are its own, as a pyenv shim's lookups are); then c is
 * that child, across its exec chain. */
static int program_child(const struct pw_rank_report *r, const struct pw_process *m, size_t i, struct pw_process *c)
{
	const struct pw_proc *p = &r->procs[i];
	if (p->replaced_one || p->ppid != m->pid || p->start_ns < m->last->start_ns)
		return 0;
	pw_process_of(r, p, c);
	return 1;
}

/* input_bound without GPU activity: the main thread blocked while child processes read the data. */
static void host_input_finding(struct builder *b)
{
	const struct pw_rank_report *r = b->r;
	struct pw_process m, c;
	if (pw_rank_main_process(r, &m))
		return;
	uint64_t read = 0;
	size_t workers = 0;
	for (size_t i = 0; i < r->nprocs; i++)
		if (program_child(r, &m, i, &c) && c.seen_read_bytes) {
			read += c.seen_read_bytes;
			workers++;
		}
	uint64_t blocked = m.main_wait_ns + m.main_stream_ns;
	double s = share_of(blocked, r->wall_ns);
	if (s < PW_FIND_HOST_INPUT_SHARE || read < PW_FIND_HOST_INPUT_BYTES || read <= m.seen_read_bytes)
		return;
	char d[32], bytes[32], own[32];
	pw_format_duration(d, sizeof d, blocked);
	pw_format_bytes(bytes, sizeof bytes, read);
	pw_format_bytes(own, sizeof own, m.seen_read_bytes);
	add(b, "input_bound", s, ADVICE_HOST_INPUT,
	    "The main thread of pid %d waited %s while %zu child process%s read %s (it read %s itself).", m.pid, d,
	    workers, workers == 1 ? "" : "es", bytes, own);
}

struct worker {
	uint64_t start, first_read;
};

static int by_start(const void *x, const void *y)
{
	const struct worker *a = x, *b = y;
	return (a->start > b->start) - (a->start < b->start);
}

/* worker_startup: the children of the main process's program that read files (loader workers) were started
 * round after round (persistent_workers=False: each epoch), each round's first batch waiting for a worker's
 * start-up. A round is the workers that start before the first of them reads. */
static void worker_startup_finding(struct builder *b)
{
	const struct pw_rank_report *r = b->r;
	struct pw_process m, c;
	int found = pw_rank_main_process(r, &m) == 0;
	struct worker *w = found ? malloc((r->nprocs ? r->nprocs : 1) * sizeof *w) : NULL;
	size_t n = 0;
	if (!w) {
		b->oom |= found;
		return;
	}
	/* a worker that exec'd (spawned, not forked) reads in its last image: its start-up spans them */
	for (size_t i = 0; i < r->nprocs; i++)
		if (program_child(r, &m, i, &c) && c.first_read_ns > c.start_ns)
			w[n++] = (struct worker){c.start_ns, c.first_read_ns};
	qsort(w, n, sizeof *w, by_start);
	size_t rounds = 0, most = 0, size = 0;
	uint64_t round_read = 0, waited = 0, startup = 0, first = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t took = w[i].first_read - w[i].start;
		startup += took;
		if (!rounds || w[i].start >= round_read) {
			waited += first;
			rounds++;
			size = 0;
			round_read = w[i].first_read;
			first = took;
		}
		if (w[i].first_read < round_read)
			round_read = w[i].first_read;
		if (took < first)
			first = took;
		if (++size > most)
			most = size;
	}
	waited += first;
	free(w);
	double s = share_of(waited, r->wall_ns);
	if (rounds < PW_FIND_WORKER_ROUNDS || s < PW_FIND_WORKER_STARTUP_SHARE)
		return;
	char d[32], mean[32];
	pw_format_duration(d, sizeof d, waited);
	pw_format_duration(mean, sizeof mean, startup / n);
	add(b, "worker_startup", s, ADVICE_WORKERS,
	    "pid %d started %zu worker processes in %zu rounds of up to %zu: each took %s on average from its start "
	    "to its first read, and each round's first batch waited at least %s in all.",
	    m.pid, n, rounds, most, mean, d);
}

/* Whether a file written is a checkpoint, by its name. */
static int checkpoint_file(const char *path)
{
	static const char *const ext[] = {".pt", ".pth", ".ckpt", ".safetensors", ".bin", ".h5", ".npz", ".pkl"};
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strstr(base, "checkpoint") || strstr(base, "ckpt"))
		return 1;
	size_t len = strlen(base);
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		size_t el = strlen(ext[i]);
		if (len > el && strcmp(base + len - el, ext[i]) == 0)
			return 1;
	}
	return 0;
}

/* checkpoint_bound: the time in calls on the checkpoint files written. The evidence counts saves (an open
 * in which the file was written, to its close), not files: a checkpoint rewritten in place is one file saved
 * many times. */
static void checkpoint_finding(struct builder *b)
{
	const struct pw_rank_report *r = b->r;
	uint64_t ns = 0, bytes = 0, saves = 0, top_ns = 0, least = UINT64_MAX, most = 0;
	size_t files = 0;
	const char *top = NULL;
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct pw_file_stat *f = &r->files[i];
		if (f->stream || !f->saves || !checkpoint_file(f->path))
			continue;
		ns += f->time_ns;
		bytes += f->write_bytes;
		saves += f->saves;
		files++;
		if (f->save_min_bytes < least)
			least = f->save_min_bytes;
		if (f->save_max_bytes > most)
			most = f->save_max_bytes;
		if (f->save_max_ns >= top_ns) {
			top_ns = f->save_max_ns;
			top = f->path;
		}
	}
	double s = share_of(ns, r->wall_ns);
	if (!files || s < PW_FIND_CHECKPOINT_SHARE)
		return;
	char d[32], all[32], lo[32], hi[32], td[32], size[112];
	pw_format_duration(d, sizeof d, ns);
	pw_format_bytes(all, sizeof all, bytes);
	if (saves == 1) {
		add(b, "checkpoint_bound", s, ADVICE_CHECKPOINT, "1 checkpoint save to %s (%s) took %s in calls on it.",
		    top, all, d);
		return;
	}
	pw_format_bytes(lo, sizeof lo, least);
	pw_format_bytes(hi, sizeof hi, most);
	pw_format_duration(td, sizeof td, top_ns);
	if (least == most)
		snprintf(size, sizeof size, "%s each, %s in all", hi, all);
	else
		snprintf(size, sizeof size, "%s to %s each, %s in all", lo, hi, all);
	if (files == 1)
		add(b, "checkpoint_bound", s, ADVICE_CHECKPOINT,
		    "%" PRIu64 " checkpoint saves to %s (%s) took %s in calls on it; the longest save took %s.", saves,
		    top, size, d, td);
	else
		add(b, "checkpoint_bound", s, ADVICE_CHECKPOINT,
		    "%" PRIu64 " checkpoint saves to %zu files (%s) took %s in calls on them; the longest save took %s "
		    "(%s).",
		    saves, files, size, d, td, top);
}

static int by_share(const void *x, const void *y)
{
	const struct pw_finding *a = x, *b = y;
	if (a->share != b->share)
		return a->share > b->share ? -1 : 1;
	return strcmp(a->id, b->id);
}

int pw_findings_build(struct pw_rank_report *r)
{
	struct builder b = {.r = r};
	pw_findings_free(r->findings, r->nfindings);
	r->findings = NULL;
	r->nfindings = 0;
	if (!r->wall_ns)
		return 0;
	startup_finding(&b);
	checkpoint_finding(&b);
	if (r->act && pw_act_recorded(r->act)) {
		idle_findings(&b);
		copy_findings(&b);
		collective_finding(&b);
	} else {
		host_input_finding(&b);
	}
	worker_startup_finding(&b);
	if (r->act)
		small_copy_finding(&b);
	if (b.n)
		qsort(b.f, b.n, sizeof *b.f, by_share);
	r->findings = b.f;
	r->nfindings = b.n;
	return b.oom ? -1 : 0;
}

void pw_findings_free(struct pw_finding *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].evidence);
	free(f);
}
