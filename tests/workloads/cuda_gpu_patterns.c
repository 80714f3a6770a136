/* cuda_gpu_patterns: ways of keeping a GPU busy or idle, one per mode, each built so that the profiler's
 * GPU activity analysis (busy/idle time, gaps and their causes, findings) has one right answer. Linked
 * against the fake CUDA libraries (tests/fakes), whose simulated device takes FAKEGPU_NS_PER_BLOCK ns per
 * block of a kernel's grid, bytes / FAKEGPU_COPY_BW (pinned or device memory) or / FAKEGPU_PAGEABLE_BW
 * (pageable) per copy and bytes / FAKEGPU_NCCL_BW per collective; its synchronising calls sleep until the
 * simulated work is done.
 *
 *     cuda_gpu_patterns MODE [--steps N] [--bytes N] [--exit N]
 *
 * Modes (what the GPU sees, and what a profiler should conclude):
 *   idle50        400 steps of 2 ms (a 10 ms preemption stays under 5 %): launch 1 ms, cudaDeviceSynchronize,
 *                 CPU work until the next step:
 *                 busy half of the time, sync-bound
 *   input         batches read from a pipe that a forked "data loader" fills slowly: input-bound
 *   input_thread  the same with a loader thread and a condition variable
 *   launch        2 us kernels with ~10 us of CPU work between launches: launch-bound
 *   cpu           1 ms kernels with 3 ms of CPU work between, no synchronisation: CPU-bound
 *   late_start    a synchronous weights copy, 60 ms of CPU set-up, then 1 ms kernels queued back to back: the
 *                 one gap began in the copy but is the CPU's (CPU-bound, not sync-bound)
 *   sleep         1 ms kernels with a 2 ms nanosleep between: idle in sleeps, no finding about it
 *   pageable      16 MiB host-to-device copies from malloc'd memory: pageable copies
 *   pinned        the same from cudaMallocHost memory: no finding
 *   small         a 100 us kernel then a synchronous 4-byte device-to-host copy (loss.item()) per step
 *                 (--bytes sets the copy's size, --steps the count: the finding needs >= 100 copies < 64 KiB)
 *   collective    a 32 MiB ncclAllReduce after a little compute per step: collective-bound
 *   balanced      1 ms kernels (and a few small all-reduces) queued back to back, one sync at the end: no finding
 *   multi         kernels of several names and grids from two threads on two streams (on devices 0 and 1
 *                 when the fake has two), then a few on the legacy stream
 *   overlap       a 1 MiB ncclAllReduce on a stream of its own, under a 1 ms compute kernel, per NVTX range
 *                 "step" (HTA's communication/computation overlap and iterations)
 *
 * Every mode prints, at the end and nothing else, its own ground truth as `expect` lines (read by
 * tests/integration/test_gpu_activity.py and test_gpu_findings.py):
 *   expect mode M
 *   expect kernel NAME COUNT NS_EACH DEVICE STREAM   STREAM labels the stream it ran on (same label, same stream)
 *   expect collective_kernels COUNT NS_EACH          NCCL work on the device
 *   expect kernels N                                 GPU kernels in all, NCCL's included
 *   expect launches N                                successful cudaLaunchKernel calls
 *   expect kernel_ns DEVICE NS                       sum of the kernels' durations on the device
 *   expect idle_gaps DEVICE N                        idle gaps between the device's work
 *   expect busy_share DEVICE SHARE                   busy time over the device's span (by design; time-based)
 *   expect gap_min_ns DEVICE NS                      no idle gap is shorter (the CPU work between launches)
 *   expect gap_class CLASS                           what the launching (main) thread did in the gaps
 *   expect gap_call NAME                             the call it was in
 *   expect queue_depth_max_at_most DEVICE N / expect queue_depth_max_at_least DEVICE N
 *   expect launch_latency_p50_at_most DEVICE NS / expect launch_latency_max_at_least DEVICE NS
 *   expect memcpy DIR SRC DST COUNT BYTES GBPS       copies as the GPU ran them, GBPS = 1e9 bytes/s
 *   expect finding ID MIN_SHARE                      a finding the mode is built to trigger, with a share of the
 *                                                    wall time of at least MIN_SHARE (half the design's)
 *   expect no_finding ID                             a finding it is built not to trigger
 *   expect no_findings                               none at all
 *
 * The "kernels" are host functions with a kernel's signature, exported (-rdynamic) so that the fake names
 * them by dladdr; they are never called. CPU work is a busy loop on clock_gettime, which the profiler does
 * not wrap. --exit N makes the program exit with status N after printing. Exit status 0 (or N) on success,
 * 1 when a CUDA or NCCL call fails, 2 on bad usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>

/* ---- the kernels (distinct bodies, so that no two can be folded into one symbol) ---- */

void idle_step_kernel(float *x, int n);
void input_fwd_kernel(const float *x, float *y, int n);
void input_bwd_kernel(const float *y, float *dx, int n);
void tiny_kernel(int *counter);
void cpu_step_kernel(float *x, int n);
void late_step_kernel(float *x, int n);
void sleep_step_kernel(float *x, int n);
void loss_kernel(const float *x, float *loss, int n);
void grad_kernel(float *g, int n);
void balanced_kernel(float *x, float scale, int n);
void overlap_kernel(float *x, int n);
void ms_alpha_kernel(float *x, int n);
void ms_beta_kernel(float *x, const float *y, int n);
void ms_gamma_kernel(double *x, int n);
void ms_delta_kernel(double *x, const double *y, int n);
void ms_tail_kernel(int *flag);

void idle_step_kernel(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] += 1.0f;
}

void input_fwd_kernel(const float *x, float *y, int n)
{
	for (int i = 0; i < n; i++)
		y[i] = 2.0f * x[i];
}

void input_bwd_kernel(const float *y, float *dx, int n)
{
	for (int i = 0; i < n; i++)
		dx[i] = y[i] - 1.0f;
}

void tiny_kernel(int *counter)
{
	++*counter;
}

void cpu_step_kernel(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] *= 0.5f;
}

void late_step_kernel(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] -= 0.25f;
}

void sleep_step_kernel(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] = -x[i];
}

void loss_kernel(const float *x, float *loss, int n)
{
	float s = 0;

	for (int i = 0; i < n; i++)
		s += x[i] * x[i];
	*loss = s;
}

void grad_kernel(float *g, int n)
{
	for (int i = 0; i < n; i++)
		g[i] = g[i] > 0 ? 1.0f : -1.0f;
}

void overlap_kernel(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] *= 0.5f;
}

void balanced_kernel(float *x, float scale, int n)
{
	for (int i = 0; i < n; i++)
		x[i] = x[i] * scale + 3.0f;
}

void ms_alpha_kernel(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] = x[i] * x[i];
}

void ms_beta_kernel(float *x, const float *y, int n)
{
	for (int i = 0; i < n; i++)
		x[i] += y[i];
}

void ms_gamma_kernel(double *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] = x[i] / 3.0;
}

void ms_delta_kernel(double *x, const double *y, int n)
{
	for (int i = 0; i < n; i++)
		x[i] -= y[i];
}

void ms_tail_kernel(int *flag)
{
	*flag = 7;
}

/* ---- checks, clocks, CPU work ---- */

static void cuda_check(const char *what, cudaError_t e, int line)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "cuda_gpu_patterns:%d: %s returned %d\n", line, what, (int)e);
		exit(1);
	}
}

static void nccl_check(const char *what, ncclResult_t r, int line)
{
	if (r != ncclSuccess) {
		fprintf(stderr, "cuda_gpu_patterns:%d: %s returned %d\n", line, what, (int)r);
		exit(1);
	}
}

#define CUDA(call) cuda_check(#call, (call), __LINE__)
#define NCCL(call) nccl_check(#call, (call), __LINE__)

static void die(const char *what)
{
	fprintf(stderr, "cuda_gpu_patterns: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns of CPU work: a loop on the clock, no call the profiler records. */
static void cpu_work(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* A number from the environment (the fakes' settings), or def. */
static double env_num(const char *name, double def)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return def;
	v = strtod(s, &end);
	return end == s || *end != '\0' ? def : v;
}

/* ---- what the program ran on the device, counted as it goes ---- */

enum { MAX_DEVICES = 2 };

/* One kernel name: where it runs and how often. Each is launched by one thread only. */
struct kernel {
	const char *name;
	const void *fn;
	dim3 grid, block;
	int device;
	const char *stream; /* label: kernels with the same label share one stream */
	long count;
};

static double g_ns_per_block;
static long g_launches;

static uint64_t kernel_ns(const struct kernel *k)
{
	return (uint64_t)(g_ns_per_block * (double)((uint64_t)k->grid.x * k->grid.y * k->grid.z));
}

static void launch(struct kernel *k, void **args, cudaStream_t s)
{
	CUDA(cudaLaunchKernel(k->fn, k->grid, k->block, args, 0, s));
	k->count++;
	__atomic_add_fetch(&g_launches, 1, __ATOMIC_RELAXED);
}

#define KERNEL(fn_, gx, gy, gz, bx, dev, label) \
	{ .name = #fn_, .fn = (const void *)fn_, .grid = { gx, gy, gz }, .block = { bx, 1, 1 }, .device = dev, \
	  .stream = label }

/* Collectives: one size per mode. */
static long g_coll_count;
static uint64_t g_coll_ns;

static void all_reduce(float *buf, size_t count, ncclComm_t comm, cudaStream_t s)
{
	NCCL(ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, s));
	g_coll_count++;
	g_coll_ns = (uint64_t)((double)(count * sizeof(float)) * 1e9 / env_num("FAKEGPU_NCCL_BW", 10e9));
	if (g_coll_ns < 1000)
		g_coll_ns = 1000; /* the fake's least */
}

/* Copies: one kind per mode. */
static struct {
	const char *dir, *src, *dst;
	long count;
	uint64_t bytes;
	double gbps;
} g_copy;

static void note_copies(const char *dir, const char *src, const char *dst, long count, uint64_t bytes, double bps)
{
	g_copy.dir = dir, g_copy.src = src, g_copy.dst = dst;
	g_copy.count = count, g_copy.bytes = bytes, g_copy.gbps = bps / 1e9;
}

static void print_kernels(const struct kernel *ks, int n)
{
	uint64_t per_dev[MAX_DEVICES] = { 0 };
	long total = g_coll_count;

	for (int i = 0; i < n; i++) {
		if (ks[i].count == 0)
			continue;
		printf("expect kernel %s %ld %llu %d %s\n", ks[i].name, ks[i].count, (unsigned long long)kernel_ns(&ks[i]),
		       ks[i].device, ks[i].stream);
		per_dev[ks[i].device] += (uint64_t)ks[i].count * kernel_ns(&ks[i]);
		total += ks[i].count;
	}
	if (g_coll_count > 0) {
		printf("expect collective_kernels %ld %llu\n", g_coll_count, (unsigned long long)g_coll_ns);
		per_dev[0] += (uint64_t)g_coll_count * g_coll_ns;
	}
	printf("expect kernels %ld\n", total);
	printf("expect launches %ld\n", g_launches);
	for (int d = 0; d < MAX_DEVICES; d++)
		if (per_dev[d] > 0 || d == 0)
			printf("expect kernel_ns %d %llu\n", d, (unsigned long long)per_dev[d]);
	if (g_copy.count > 0)
		printf("expect memcpy %s %s %s %ld %llu %.1f\n", g_copy.dir, g_copy.src, g_copy.dst, g_copy.count,
		       (unsigned long long)g_copy.bytes, g_copy.gbps);
}

/* The findings a mode is not about and cannot trigger: no copies, no collectives. */
static void print_no_transfer_findings(void)
{
	printf("expect no_finding pageable_memcpy\n");
	printf("expect no_finding small_memcpy\n");
	printf("expect no_finding collective_bound\n");
}

static int steps_or(int steps, int def)
{
	return steps > 0 ? steps : def;
}

/* ---- idle50: busy half of the time, idle while the CPU works after each synchronisation ---- */

static void mode_idle50(int steps)
{
	struct kernel k = KERNEL(idle_step_kernel, 500, 1, 1, 256, 0, "legacy"); /* 1 ms */
	float *x;
	int n = 500 * 256;
	void *args[] = { &x, &n };
	uint64_t t0;

	CUDA(cudaMalloc((void **)&x, (size_t)n * sizeof(float)));
	t0 = now_ns();
	for (int i = 0; i < steps; i++) {
		uint64_t step_end = t0 + (uint64_t)(i + 1) * 2000000, t;

		launch(&k, args, NULL);
		CUDA(cudaDeviceSynchronize());
		/* Steps on a 2 ms schedule, however late the synchronisation returns (the sleep's timer slack, a
		 * busy machine): the CPU works until the step's end, at least 200 us, so a late step is made up
		 * by the next ones. */
		t = now_ns();
		cpu_work(step_end > t + 200000 ? step_end - t : 200000);
	}
	CUDA(cudaFree(x));

	print_kernels(&k, 1);
	printf("expect idle_gaps 0 %d\n", steps - 1);
	printf("expect busy_share 0 0.50\n");
	printf("expect gap_min_ns 0 190000\n"); /* each gap holds at least 200 us of CPU work */
	printf("expect gap_class sync\n");
	printf("expect gap_call cudaDeviceSynchronize\n");
	printf("expect queue_depth_max_at_most 0 2\n");
	printf("expect launch_latency_p50_at_most 0 100000\n");
	printf("expect finding sync_bound 0.20\n");
	printf("expect no_finding input_bound\n");
	printf("expect no_finding launch_bound\n");
	printf("expect no_finding cpu_bound\n");
	print_no_transfer_findings();
}

/* ---- input: the GPU waits for batches that a data loader produces slowly ---- */

enum { BATCH_BYTES = 4096, LOADER_NS = 3000000 };

static void read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "cuda_gpu_patterns: the loader's pipe ended after %zu bytes\n", got);
			exit(1);
		}
		got += (size_t)r;
	}
}

/* Two kernels of 0.5 ms per batch, enqueued without waiting. */
static struct kernel g_input_kernels[2] = {
	KERNEL(input_fwd_kernel, 250, 1, 1, 256, 0, "legacy"),
	KERNEL(input_bwd_kernel, 250, 1, 1, 256, 0, "legacy"),
};

static void input_expectations(int steps, const char *call)
{
	print_kernels(g_input_kernels, 2);
	printf("expect idle_gaps 0 %d\n", steps - 1);
	printf("expect gap_class input\n");
	printf("expect gap_call %s\n", call);
	printf("expect finding input_bound 0.20\n");
	printf("expect no_finding sync_bound\n");
	printf("expect no_finding launch_bound\n");
	printf("expect no_finding cpu_bound\n");
	print_no_transfer_findings();
}

static void mode_input(int steps)
{
	int fds[2], acks[2];
	pid_t pid;
	int status;
	float *x, *y;
	int n = 250 * 256;
	void *fwd_args[] = { &x, &y, &n }, *bwd_args[] = { &y, &x, &n };
	static char batch[BATCH_BYTES];

	/* The loader is forked before the program touches CUDA, and never does. It prepares a batch only once the
	 * previous one is launched (a prefetch depth of one, as a loader with back-pressure): a main thread that a
	 * busy machine delays then never finds two batches waiting, so every batch leaves the GPU idle. */
	if (pipe(fds) != 0 || pipe(acks) != 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char ack;

		close(fds[0]);
		close(acks[1]);
		for (int i = 0; i < steps; i++) {
			if (i > 0 && read(acks[0], &ack, 1) != 1)
				_exit(1);
			sleep_ns(LOADER_NS);
			memset(batch, i & 0xff, sizeof(batch));
			if (write(fds[1], batch, sizeof(batch)) != (ssize_t)sizeof(batch))
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	close(acks[0]);

	CUDA(cudaMalloc((void **)&x, (size_t)n * sizeof(float)));
	CUDA(cudaMalloc((void **)&y, (size_t)n * sizeof(float)));
	for (int i = 0; i < steps; i++) {
		read_full(fds[0], batch, sizeof(batch));
		launch(&g_input_kernels[0], fwd_args, NULL);
		launch(&g_input_kernels[1], bwd_args, NULL);
		if (i + 1 < steps && write(acks[1], "", 1) != 1)
			die("write");
	}
	CUDA(cudaDeviceSynchronize());
	close(fds[0]);
	close(acks[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "cuda_gpu_patterns: the loader failed\n");
		exit(1);
	}
	CUDA(cudaFree(x));
	CUDA(cudaFree(y));
	input_expectations(steps, "read");
}

static struct {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	pthread_cond_t launched;
	int produced, consumed, steps;
} g_queue = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };

static void *loader_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < g_queue.steps; i++) {
		/* A prefetch depth of one, as mode_input's loader. */
		pthread_mutex_lock(&g_queue.lock);
		while (g_queue.consumed < i)
			pthread_cond_wait(&g_queue.launched, &g_queue.lock);
		pthread_mutex_unlock(&g_queue.lock);
		sleep_ns(LOADER_NS);
		pthread_mutex_lock(&g_queue.lock);
		g_queue.produced++;
		pthread_cond_signal(&g_queue.ready);
		pthread_mutex_unlock(&g_queue.lock);
	}
	return NULL;
}

static void mode_input_thread(int steps)
{
	pthread_t loader;
	float *x, *y;
	int n = 250 * 256;
	void *fwd_args[] = { &x, &y, &n }, *bwd_args[] = { &y, &x, &n };

	CUDA(cudaMalloc((void **)&x, (size_t)n * sizeof(float)));
	CUDA(cudaMalloc((void **)&y, (size_t)n * sizeof(float)));
	g_queue.steps = steps;
	if (pthread_create(&loader, NULL, loader_thread, NULL) != 0)
		die("pthread_create");
	for (int i = 0; i < steps; i++) {
		pthread_mutex_lock(&g_queue.lock);
		while (g_queue.produced <= i)
			pthread_cond_wait(&g_queue.ready, &g_queue.lock);
		pthread_mutex_unlock(&g_queue.lock);
		launch(&g_input_kernels[0], fwd_args, NULL);
		launch(&g_input_kernels[1], bwd_args, NULL);
		pthread_mutex_lock(&g_queue.lock);
		g_queue.consumed = i + 1;
		pthread_cond_signal(&g_queue.launched);
		pthread_mutex_unlock(&g_queue.lock);
	}
	CUDA(cudaDeviceSynchronize());
	pthread_join(loader, NULL);
	CUDA(cudaFree(x));
	CUDA(cudaFree(y));
	input_expectations(steps, "pthread_cond_wait");
}

/* ---- launch: kernels shorter than the CPU time it takes to launch the next ---- */

static void mode_launch(int steps)
{
	struct kernel k = KERNEL(tiny_kernel, 1, 1, 1, 32, 0, "legacy"); /* 2 us */
	int *counter;
	void *args[] = { &counter };

	CUDA(cudaMalloc((void **)&counter, sizeof(int)));
	for (int i = 0; i < steps; i++) {
		launch(&k, args, NULL);
		cpu_work(10000);
	}
	CUDA(cudaDeviceSynchronize());
	CUDA(cudaFree(counter));

	print_kernels(&k, 1);
	printf("expect idle_gaps 0 %d\n", steps - 1);
	printf("expect gap_min_ns 0 7900\n"); /* 10 us between launches, 2 us of it busy */
	printf("expect finding launch_bound 0.30\n");
	printf("expect no_finding sync_bound\n");
	printf("expect no_finding input_bound\n");
	print_no_transfer_findings();
}

/* ---- cpu: the CPU's work between steps is longer than the GPU's ---- */

/* Gaps where the launching thread computed: CPU-bound and nothing else. */
static void cpu_gap_expectations(void)
{
	printf("expect gap_class cpu\n");
	printf("expect finding cpu_bound 0.30\n");
	printf("expect no_finding sync_bound\n");
	printf("expect no_finding input_bound\n");
	printf("expect no_finding launch_bound\n");
	print_no_transfer_findings();
}

static void mode_cpu(int steps)
{
	struct kernel k = KERNEL(cpu_step_kernel, 500, 1, 1, 256, 0, "legacy"); /* 1 ms */
	float *x;
	int n = 500 * 256;
	void *args[] = { &x, &n };

	CUDA(cudaMalloc((void **)&x, (size_t)n * sizeof(float)));
	for (int i = 0; i < steps; i++) {
		launch(&k, args, NULL);
		cpu_work(3000000);
	}
	CUDA(cudaDeviceSynchronize());
	CUDA(cudaFree(x));

	print_kernels(&k, 1);
	printf("expect idle_gaps 0 %d\n", steps - 1);
	printf("expect gap_min_ns 0 1990000\n"); /* 3 ms between launches, 1 ms of it busy */
	cpu_gap_expectations();
}

/* ---- late_start: the weights copied with a synchronous cudaMemcpy (model.to(device)), then a long set-up on
 * the CPU (a data pipeline built) before the first step. The one gap began inside the synchronising copy,
 * which waited only for the copy: removing it would not have kept the GPU busy, so the gap is the CPU's ---- */

enum { SETUP_NS = 60000000, WEIGHTS_BYTES = 1 << 20 };

static void mode_late_start(int steps)
{
	struct kernel k = KERNEL(late_step_kernel, 500, 1, 1, 256, 0, "legacy"); /* 1 ms */
	void *host, *weights;
	float *x;
	int n = 500 * 256;
	void *args[] = { &x, &n };

	CUDA(cudaMallocHost(&host, WEIGHTS_BYTES));
	memset(host, 0x5a, WEIGHTS_BYTES);
	CUDA(cudaMalloc(&weights, WEIGHTS_BYTES));
	CUDA(cudaMalloc((void **)&x, (size_t)n * sizeof(float)));
	CUDA(cudaMemcpy(weights, host, WEIGHTS_BYTES, cudaMemcpyHostToDevice));
	cpu_work(SETUP_NS);
	for (int i = 0; i < steps; i++)
		launch(&k, args, NULL);
	CUDA(cudaDeviceSynchronize());
	CUDA(cudaFree(x));
	CUDA(cudaFree(weights));
	CUDA(cudaFreeHost(host));

	note_copies("HtoD", "pinned", "device", 1, WEIGHTS_BYTES, env_num("FAKEGPU_COPY_BW", 20e9));
	print_kernels(&k, 1);
	printf("expect idle_gaps 0 1\n");
	printf("expect gap_min_ns 0 %d\n", SETUP_NS - 1000000);
	cpu_gap_expectations();
}

/* ---- sleep: the launching thread sleeps while the GPU is idle ---- */

static void mode_sleep(int steps)
{
	struct kernel k = KERNEL(sleep_step_kernel, 500, 1, 1, 256, 0, "legacy"); /* 1 ms */
	float *x;
	int n = 500 * 256;
	void *args[] = { &x, &n };

	CUDA(cudaMalloc((void **)&x, (size_t)n * sizeof(float)));
	for (int i = 0; i < steps; i++) {
		launch(&k, args, NULL);
		sleep_ns(2000000);
	}
	CUDA(cudaDeviceSynchronize());
	CUDA(cudaFree(x));

	print_kernels(&k, 1);
	printf("expect idle_gaps 0 %d\n", steps - 1);
	printf("expect gap_min_ns 0 990000\n"); /* 2 ms of sleep between launches, 1 ms of it busy */
	printf("expect gap_class sleep\n");
	printf("expect gap_call nanosleep\n");
	printf("expect no_finding sync_bound\n");
	printf("expect no_finding input_bound\n");
	printf("expect no_finding launch_bound\n");
	printf("expect no_finding cpu_bound\n");
	print_no_transfer_findings();
}

/* ---- pageable / pinned: large host-to-device copies ---- */

enum { BIG_COPY = 16 << 20 };

static void mode_copies(int steps, int pinned)
{
	void *host, *dev;

	if (pinned) {
		CUDA(cudaMallocHost(&host, BIG_COPY));
	} else {
		host = malloc(BIG_COPY);
		if (host == NULL)
			die("malloc");
	}
	memset(host, 0x5a, BIG_COPY);
	CUDA(cudaMalloc(&dev, BIG_COPY));
	for (int i = 0; i < steps; i++)
		CUDA(cudaMemcpy(dev, host, BIG_COPY, cudaMemcpyHostToDevice));
	CUDA(cudaFree(dev));
	if (pinned)
		CUDA(cudaFreeHost(host));
	else
		free(host);

	note_copies("HtoD", pinned ? "pinned" : "pageable", "device", steps, (uint64_t)steps * BIG_COPY,
		    pinned ? env_num("FAKEGPU_COPY_BW", 20e9) : env_num("FAKEGPU_PAGEABLE_BW", 5e9));
	print_kernels(NULL, 0);
	if (pinned)
		printf("expect no_finding pageable_memcpy\n");
	else
		printf("expect finding pageable_memcpy 0.10\n");
	printf("expect no_finding small_memcpy\n");
	printf("expect no_finding collective_bound\n");
	printf("expect no_finding launch_bound\n");
	printf("expect no_finding input_bound\n");
	printf("expect no_finding cpu_bound\n");
}

/* ---- peer: copies from device 0 to device 1 on device 0's legacy stream (FAKEGPU_DEVICES=2), which CUPTI
 * reports as MEMCPY2 (PtoP) records ---- */

static void mode_peer(int steps)
{
	void *src, *dst;

	CUDA(cudaSetDevice(1));
	CUDA(cudaMalloc(&dst, BIG_COPY));
	CUDA(cudaSetDevice(0));
	CUDA(cudaMalloc(&src, BIG_COPY));
	for (int i = 0; i < steps; i++)
		CUDA(cudaMemcpyPeerAsync(dst, 1, src, 0, BIG_COPY, NULL));
	CUDA(cudaDeviceSynchronize());
	CUDA(cudaFree(src));
	CUDA(cudaSetDevice(1));
	CUDA(cudaFree(dst));
	CUDA(cudaSetDevice(0));

	note_copies("PtoP", "device", "device", steps, (uint64_t)steps * BIG_COPY, env_num("FAKEGPU_COPY_BW", 20e9));
	print_kernels(NULL, 0);
	printf("expect no_finding pageable_memcpy\n");
	printf("expect no_finding small_memcpy\n");
}

/* ---- small: a synchronous copy of the loss after each step's kernel, like loss.item() ---- */

enum { SMALL_LIMIT = 64 << 10, SMALL_MIN_CALLS = 100 };

static void mode_small(int steps, size_t bytes)
{
	struct kernel k = KERNEL(loss_kernel, 50, 1, 1, 256, 0, "legacy"); /* 100 us */
	float *x, *loss;
	void *host;
	int n = 50 * 256;
	void *args[] = { &x, &loss, &n };

	CUDA(cudaMalloc((void **)&x, (size_t)n * sizeof(float)));
	CUDA(cudaMalloc((void **)&loss, bytes));
	host = malloc(bytes);
	if (host == NULL)
		die("malloc");
	for (int i = 0; i < steps; i++) {
		launch(&k, args, NULL);
		CUDA(cudaMemcpy(host, loss, bytes, cudaMemcpyDeviceToHost));
	}
	free(host);
	CUDA(cudaFree(loss));
	CUDA(cudaFree(x));

	note_copies("DtoH", "device", "pageable", steps, (uint64_t)steps * bytes, env_num("FAKEGPU_PAGEABLE_BW", 5e9));
	print_kernels(&k, 1);
	if (bytes < SMALL_LIMIT && steps >= SMALL_MIN_CALLS)
		printf("expect finding small_memcpy 0.10\n");
	else
		printf("expect no_finding small_memcpy\n");
	/* The copies' pageable GPU time is under 2 % of the wall time when it is under 2 % of the kernels'. */
	if ((double)bytes * 1e9 / env_num("FAKEGPU_PAGEABLE_BW", 5e9) * 50 < (double)kernel_ns(&k))
		printf("expect no_finding pageable_memcpy\n");
	printf("expect no_finding collective_bound\n");
	printf("expect no_finding input_bound\n");
}

/* ---- collective: the step's time goes to a large all-reduce ---- */

enum { COLL_FLOATS = 8 << 20 }; /* 32 MiB: 3.36 ms at 10 GB/s */

static void mode_collective(int steps)
{
	struct kernel k = KERNEL(grad_kernel, 50, 1, 1, 256, 0, "s"); /* 100 us */
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t s;
	float *grads;
	int n = COLL_FLOATS;
	void *args[] = { &grads, &n };

	NCCL(ncclGetUniqueId(&id));
	NCCL(ncclCommInitRank(&comm, 1, id, 0));
	CUDA(cudaStreamCreate(&s));
	CUDA(cudaMalloc((void **)&grads, (size_t)COLL_FLOATS * sizeof(float)));
	for (int i = 0; i < steps; i++) {
		launch(&k, args, s);
		all_reduce(grads, COLL_FLOATS, comm, s);
		CUDA(cudaStreamSynchronize(s));
	}
	CUDA(cudaFree(grads));
	CUDA(cudaStreamDestroy(s));
	NCCL(ncclCommDestroy(comm));

	print_kernels(&k, 1);
	printf("expect finding collective_bound 0.30\n");
	printf("expect no_finding pageable_memcpy\n");
	printf("expect no_finding small_memcpy\n");
	printf("expect no_finding input_bound\n");
	printf("expect no_finding launch_bound\n");
	printf("expect no_finding cpu_bound\n");
}

/* ---- balanced: the queue never runs dry ---- */

enum { BALANCED_REDUCE_EVERY = 10, BALANCED_REDUCE_FLOATS = 256 << 10 }; /* 1 MiB: 105 us */

static void mode_balanced(int steps)
{
	struct kernel k = KERNEL(balanced_kernel, 500, 1, 1, 256, 0, "s"); /* 1 ms */
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t s;
	float *x, scale = 0.5f;
	int n = BALANCED_REDUCE_FLOATS;
	void *args[] = { &x, &scale, &n };

	NCCL(ncclGetUniqueId(&id));
	NCCL(ncclCommInitRank(&comm, 1, id, 0));
	CUDA(cudaStreamCreate(&s));
	CUDA(cudaMalloc((void **)&x, (size_t)n * sizeof(float)));
	for (int i = 0; i < steps; i++) {
		launch(&k, args, s);
		if ((i + 1) % BALANCED_REDUCE_EVERY == 0)
			all_reduce(x, BALANCED_REDUCE_FLOATS, comm, s);
	}
	CUDA(cudaStreamSynchronize(s));
	CUDA(cudaFree(x));
	CUDA(cudaStreamDestroy(s));
	NCCL(ncclCommDestroy(comm));

	print_kernels(&k, 1);
	printf("expect idle_gaps 0 0\n");
	printf("expect busy_share 0 1.00\n");
	if (steps >= 100) {
		printf("expect queue_depth_max_at_least 0 50\n");
		/* The last kernel waits for the ones queued before it: steps - 1 ms, less the time to queue them. */
		printf("expect launch_latency_max_at_least 0 %llu\n", (unsigned long long)(steps / 2) * 1000000ull);
	}
	printf("expect no_findings\n");
}

/* ---- overlap: each step's all-reduce on a stream of its own, under a longer compute kernel ---- */

enum { OVERLAP_FLOATS = 256 << 10 }; /* 1 MiB: 105 us, inside the kernel's 1 ms */

static void mode_overlap(int steps)
{
	struct kernel k = KERNEL(overlap_kernel, 500, 1, 1, 256, 0, "compute"); /* 1 ms */
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t compute, comms;
	float *x, *grads;
	int n = OVERLAP_FLOATS;
	void *args[] = { &x, &n };

	NCCL(ncclGetUniqueId(&id));
	NCCL(ncclCommInitRank(&comm, 1, id, 0));
	CUDA(cudaStreamCreate(&compute));
	CUDA(cudaStreamCreate(&comms));
	CUDA(cudaMalloc((void **)&x, (size_t)n * sizeof(float)));
	CUDA(cudaMalloc((void **)&grads, (size_t)n * sizeof(float)));
	for (int i = 0; i < steps; i++) {
		nvtxRangePushA("step");
		launch(&k, args, compute);
		all_reduce(grads, OVERLAP_FLOATS, comm, comms);
		CUDA(cudaStreamSynchronize(comms));
		CUDA(cudaStreamSynchronize(compute));
		nvtxRangePop();
	}
	CUDA(cudaFree(grads));
	CUDA(cudaFree(x));
	CUDA(cudaStreamDestroy(comms));
	CUDA(cudaStreamDestroy(compute));
	NCCL(ncclCommDestroy(comm));

	print_kernels(&k, 1);
	printf("expect no_finding collective_bound\n");
}

/* ---- multi: two threads, two streams, several kernels ---- */

static struct kernel g_multi[5] = {
	KERNEL(ms_alpha_kernel, 10, 1, 1, 128, 0, "a"),  /* 20 us */
	KERNEL(ms_beta_kernel, 25, 2, 1, 64, 0, "a"),    /* 50 blocks: 100 us */
	KERNEL(ms_gamma_kernel, 4, 2, 2, 256, 0, "b"),   /* 16 blocks: 32 us */
	KERNEL(ms_delta_kernel, 75, 1, 1, 1024, 0, "b"), /* 150 us */
	KERNEL(ms_tail_kernel, 5, 1, 1, 32, 0, "legacy"),
};

struct multi_job {
	struct kernel *first, *second;
	int device, steps, every;
	uint64_t work_ns;
};

/* Launches first each step and second every `every` steps on a non-blocking stream of its own, then waits
 * for it. */
static void *multi_thread(void *arg)
{
	struct multi_job *job = arg;
	cudaStream_t s;
	void *buf;
	int n = 1024;
	void *args[] = { &buf, &buf, &n };

	CUDA(cudaSetDevice(job->device));
	CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CUDA(cudaMalloc(&buf, (size_t)n * sizeof(double)));
	for (int i = 0; i < job->steps; i++) {
		launch(job->first, args, s);
		if ((i + 1) % job->every == 0)
			launch(job->second, args, s);
		cpu_work(job->work_ns);
	}
	CUDA(cudaStreamSynchronize(s));
	CUDA(cudaStreamDestroy(s));
	CUDA(cudaFree(buf));
	return NULL;
}

static void mode_multi(int steps)
{
	int ndev;
	pthread_t threads[2];
	struct multi_job jobs[2] = {
		{ .first = &g_multi[0], .second = &g_multi[1], .device = 0, .steps = steps, .every = 3, .work_ns = 30000 },
		{ .first = &g_multi[2], .second = &g_multi[3], .steps = steps * 2 / 3, .every = 4, .work_ns = 45000 },
	};
	int *flag;
	void *args[] = { &flag };

	CUDA(cudaGetDeviceCount(&ndev));
	jobs[1].device = ndev >= 2 ? 1 : 0;
	g_multi[2].device = g_multi[3].device = jobs[1].device;
	for (int t = 0; t < 2; t++)
		if (pthread_create(&threads[t], NULL, multi_thread, &jobs[t]) != 0)
			die("pthread_create");
	for (int t = 0; t < 2; t++)
		pthread_join(threads[t], NULL);

	CUDA(cudaSetDevice(0));
	CUDA(cudaMalloc((void **)&flag, sizeof(int)));
	for (int i = 0; i < 3; i++)
		launch(&g_multi[4], args, NULL);
	CUDA(cudaDeviceSynchronize());
	CUDA(cudaFree(flag));

	print_kernels(g_multi, 5);
	print_no_transfer_findings();
}

/* ---- main ---- */

static void usage(void)
{
	fprintf(stderr, "usage: cuda_gpu_patterns idle50|input|input_thread|launch|cpu|late_start|sleep|pageable|pinned|peer|small|"
			"collective|balanced|multi|overlap [--steps N] [--bytes N] [--exit N]\n");
	exit(2);
}

static long number_arg(const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	const char *mode;
	int steps = 0, exit_code = 0;
	size_t bytes = 4;

	if (argc < 2)
		usage();
	mode = argv[1];
	for (int i = 2; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--steps") == 0)
			steps = (int)number_arg(argv[++i], 2, 1000000);
		else if (strcmp(argv[i], "--bytes") == 0)
			bytes = (size_t)number_arg(argv[++i], 1, 1 << 26);
		else if (strcmp(argv[i], "--exit") == 0)
			exit_code = (int)number_arg(argv[++i], 0, 255);
		else
			usage();
	}
	g_ns_per_block = env_num("FAKEGPU_NS_PER_BLOCK", 2000);

	if (strcmp(mode, "idle50") == 0)
		mode_idle50(steps_or(steps, 400));
	else if (strcmp(mode, "input") == 0)
		mode_input(steps_or(steps, 50));
	else if (strcmp(mode, "input_thread") == 0)
		mode_input_thread(steps_or(steps, 50));
	else if (strcmp(mode, "launch") == 0)
		mode_launch(steps_or(steps, 4000));
	else if (strcmp(mode, "cpu") == 0)
		mode_cpu(steps_or(steps, 40));
	else if (strcmp(mode, "late_start") == 0)
		mode_late_start(steps_or(steps, 20));
	else if (strcmp(mode, "sleep") == 0)
		mode_sleep(steps_or(steps, 40));
	else if (strcmp(mode, "pageable") == 0)
		mode_copies(steps_or(steps, 8), 0);
	else if (strcmp(mode, "pinned") == 0)
		mode_copies(steps_or(steps, 8), 1);
	else if (strcmp(mode, "peer") == 0)
		mode_peer(steps_or(steps, 8));
	else if (strcmp(mode, "small") == 0)
		mode_small(steps_or(steps, 400), bytes);
	else if (strcmp(mode, "collective") == 0)
		mode_collective(steps_or(steps, 20));
	else if (strcmp(mode, "balanced") == 0)
		mode_balanced(steps_or(steps, 100));
	else if (strcmp(mode, "multi") == 0)
		mode_multi(steps_or(steps, 60));
	else if (strcmp(mode, "overlap") == 0)
		mode_overlap(steps_or(steps, 20));
	else
		usage();
	printf("expect mode %s\n", mode);
	if (fflush(stdout) != 0)
		return 1;
	return exit_code;
}
