/* cuda_nvtx: NVTX annotations and capture windows, each mode built so that the profiler's NVTX ranges and
 * capture control have one right answer. Linked against the fake CUDA libraries (tests/fakes); NVTX is
 * NVIDIA's header-only NVTX3, which loads the tool named by NVTX_INJECTION64_PATH (profwrap sets it to
 * libprofwrap.so) at the first NVTX call. Every mode writes its own ground truth as JSON to OUT.json (read
 * by tests/integration/test_nvtx_ranges.py and test_capture.py).
 *
 *     cuda_nvtx ranges   OUT.json N                 NVTX ranges, marks, domains, names; N steps
 *     cuda_nvtx window   OUT.json N BYTES           N steps "step", reads in and between them
 *     cuda_nvtx profiler OUT.json N BYTES           the same, steps 2..4 (and 6, N >= 7) between
 *                                                   cudaProfilerStart and cudaProfilerStop
 *     cuda_nvtx manual   OUT.json DIR               phases of reads, each started by the test (DIR/go<P>)
 *     cuda_nvtx fork     OUT.json                   a child forked before the window reads in and after it
 *     cuda_nvtx timed    OUT.json N BYTES SLEEP_MS  N reads with sleeps between, each timed
 *
 * Modes other than ranges read the file named by the environment variable NVTX_DATA, with read(2) only; it
 * must be long enough (the mode dies at its end). NVTX_STEP_DOMAIN=NAME makes window and profiler push their
 * "step" ranges in the NVTX domain NAME (nvtxDomainRangePushEx) rather than the default domain.
 *
 * ranges (main thread, then a second thread "loader"):
 *   nvtxRangeStartA("epoch") on the main thread, ended with nvtxRangeEnd on the loader thread after the steps;
 *   N times: push "step <i>" { push "forward" { kernel, 2 ms } push "backward" { 2 ms, push "grad" { kernel,
 *   1 ms } sync } }; a mark "checkpoint" after every fifth step; then 3 pushes in domain "mydomain" of a
 *   registered string "registered op" (category 7 named "io category", int64 payload 42, 1 ms each) and one
 *   domain mark "dmark"; a wide range L"wide ünïcode" (1 ms); a range "ex range" pushed with nvtxRangePushEx
 *   (category 3 named "cat three", double payload 0.5); one unmatched nvtxRangePop. The loader thread
 *   names itself "loader" (nvtxNameOsThreadA) and pushes "load" (1 ms) 10 times, concurrently with the steps.
 *   OUT.json: "ranges" [{domain, name, depth, kind, count, min_ns (sleeps inside one occurrence), gpu_ns
 *   (kernel time launched inside it by the fake's clock)}], exact names (the test folds them); "marks";
 *   "closed" (occurrences ended); the return values NVTX gave: "push"/"pop"/"load_push"/"load_pop"/
 *   "domain_push"/"domain_pop" as [[expected level, returned, count], ...] (expected: the 0-based level of
 *   the range pushed or popped), "unmatched_pop_ret", "epoch_id".
 *   stdout: one line "cuda_nvtx ranges: N steps".
 *
 * window / profiler: a descriptor of NVTX_DATA opened before the first step reads the file sequentially:
 *   step i: push "step"; read (i+1)*BYTES bytes; pop. After each step: open NVTX_DATA again, read 1000
 *   bytes, close. OUT.json: "steps" [{in_bytes, in_reads, out_bytes, out_reads, out_opens}], "brackets"
 *   [[first step, last step], ...] (profiler: cudaProfilerStart just before the first step's push,
 *   cudaProfilerStop just after the last step's pop, before the 1000-byte read).
 *
 * manual: prints its pid (and writes it to DIR/pid), then for phase p = 0..5 waits for DIR/go<p> to exist,
 *   reads 1000*3^p bytes, creates DIR/done<p>. OUT.json: "phases" [{bytes, reads}], "pid".
 *
 * fork: opens NVTX_DATA, reads 1000 bytes, marks "fork", forks a child (which marks "fork" too, opens
 *   NVTX_DATA itself, says so on a pipe and waits on another); once the child has opened the file, push "step";
 *   wakes the child, which reads 20000 bytes and answers; the parent reads 5000 bytes,
 *   waits for the answer, pops "step", wakes the child again, which reads 100000 bytes more and exits 0;
 *   waitpid. OUT.json: parent_before, parent_inside, child_inside, child_after (bytes), "child_pid".
 *
 * timed: reads BYTES bytes N times from one descriptor, sleeping SLEEP_MS ms after each. OUT.json:
 *   "t_main" (CLOCK_MONOTONIC ns at main), "reads" [[t_before, t_after, bytes], ...] (CLOCK_MONOTONIC ns).
 *
 * Exit status 0 on success, 1 when a call fails or a wait times out (30 s), 2 on bad usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

/* ---- the kernels (host functions with a kernel's signature, named by the fake through dladdr) ---- */

void nvtx_fwd_kernel(float *x, int n);
void nvtx_grad_kernel(float *x, int n);

void nvtx_fwd_kernel(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] += 1.0f;
}

void nvtx_grad_kernel(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] *= 0.5f;
}

enum { FWD_BLOCKS = 100, GRAD_BLOCKS = 50 };

/* ---- helpers ---- */

static const char *g_mode = "?";

static void die(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	fprintf(stderr, "cuda_nvtx %s: ", g_mode);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (e != 0)
		fprintf(stderr, " (%s)", strerror(e));
	fputc('\n', stderr);
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: cuda_nvtx ranges OUT.json N | window OUT.json N BYTES | profiler OUT.json N BYTES |"
			" manual OUT.json DIR | fork OUT.json | timed OUT.json N BYTES SLEEP_MS\n");
	exit(2);
}

static long arg_num(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		usage();
	return v;
}

static void cuda_check(const char *what, cudaError_t e, int line)
{
	if (e != cudaSuccess) {
		errno = 0;
		die("line %d: %s returned %d", line, what, (int)e);
	}
}

#define CUDA(call) cuda_check(#call, (call), __LINE__)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

#define MS 1000000u

static FILE *open_out(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		die("cannot write %s", path);
	return f;
}

static void close_out(FILE *f, const char *path)
{
	if (ferror(f) || fclose(f) != 0)
		die("cannot write %s", path);
}

static const char *data_path(void)
{
	const char *p = getenv("NVTX_DATA");

	if (p == NULL || *p == '\0') {
		errno = 0;
		die("NVTX_DATA is not set");
	}
	return p;
}

static int open_data(void)
{
	int fd = open(data_path(), O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("cannot open %s", data_path());
	return fd;
}

/* Reads exactly n bytes with read(2), in pieces of at most 1 MiB; adds the read calls made to *reads. */
static void read_exact(int fd, size_t n, long *reads)
{
	static char buf[1 << 20];

	while (n > 0) {
		size_t want = n < sizeof(buf) ? n : sizeof(buf);
		ssize_t got = read(fd, buf, want);

		if (got < 0 && errno == EINTR)
			continue;
		++*reads;
		if (got < 0)
			die("read of %s", data_path());
		if (got == 0) {
			errno = 0;
			die("%s is too short: %zu bytes left to read", data_path(), n);
		}
		n -= (size_t)got;
	}
}

/* Waits until path exists; dies after 30 s. */
static void wait_file(const char *path)
{
	uint64_t end = now_ns() + 30000 * (uint64_t)MS;

	while (access(path, F_OK) != 0) {
		if (now_ns() > end) {
			errno = 0;
			die("no %s after 30 s", path);
		}
		sleep_ns(MS);
	}
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0 || close(fd) != 0)
		die("cannot create %s", path);
}

/* (expected, returned) pairs of NVTX's return values, counted. */
enum { MAX_PAIRS = 16 };
struct rets {
	int n;
	struct {
		int expected, got;
		long count;
	} p[MAX_PAIRS];
};

static void ret_add(struct rets *r, int expected, int got)
{
	for (int i = 0; i < r->n; i++)
		if (r->p[i].expected == expected && r->p[i].got == got) {
			r->p[i].count++;
			return;
		}
	if (r->n == MAX_PAIRS) {
		errno = 0;
		die("too many distinct NVTX return values");
	}
	r->p[r->n].expected = expected;
	r->p[r->n].got = got;
	r->p[r->n].count = 1;
	r->n++;
}

static void ret_json(FILE *f, const char *key, const struct rets *r)
{
	fprintf(f, ",\n\"%s\":[", key);
	for (int i = 0; i < r->n; i++)
		fprintf(f, "%s[%d,%d,%ld]", i ? "," : "", r->p[i].expected, r->p[i].got, r->p[i].count);
	fprintf(f, "]");
}

/* Triggers NVTX's initialisation (the tool is loaded at the first NVTX call) before anything measured. */
static void nvtx_init(void)
{
	nvtxNameOsThreadA((uint32_t)gettid(), "main");
}

/* ---- ranges ---- */

/* What one range row of the default domain (or mydomain) is expected to hold. */
struct row {
	const char *domain, *kind;
	char name[64];
	int depth;
	long count;
	uint64_t min_ns, gpu_ns;
};

enum { MAX_ROWS = 64 };
static struct row g_rows[MAX_ROWS];
static int g_nrows;

static void row_add(const char *domain, const char *name, int depth, const char *kind, uint64_t min_ns,
		    uint64_t gpu_ns)
{
	struct row *r;

	for (int i = 0; i < g_nrows; i++) {
		r = &g_rows[i];
		if (strcmp(r->domain, domain) == 0 && strcmp(r->name, name) == 0 && r->depth == depth &&
		    strcmp(r->kind, kind) == 0) {
			r->count++;
			r->gpu_ns += gpu_ns;
			return;
		}
	}
	if (g_nrows == MAX_ROWS) {
		errno = 0;
		die("too many range rows");
	}
	r = &g_rows[g_nrows++];
	r->domain = domain;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->depth = depth;
	r->kind = kind;
	r->count = 1;
	r->min_ns = min_ns;
	r->gpu_ns = gpu_ns;
}

static nvtxRangeId_t g_epoch;
static int g_steps_done, g_loader_ready;
static struct rets g_load_push, g_load_pop;
enum { LOADS = 10 };

static void *loader(void *arg)
{
	(void)arg;
	nvtxNameOsThreadA((uint32_t)gettid(), "loader");
	__atomic_store_n(&g_loader_ready, 1, __ATOMIC_RELEASE);
	for (int j = 0; j < LOADS; j++) {
		ret_add(&g_load_push, 0, nvtxRangePushA("load"));
		sleep_ns(MS);
		ret_add(&g_load_pop, 0, nvtxRangePop());
	}
	/* The epoch that the main thread started ends here, once the steps are done. */
	uint64_t end = now_ns() + 30000 * (uint64_t)MS;
	while (!__atomic_load_n(&g_steps_done, __ATOMIC_ACQUIRE)) {
		if (now_ns() > end) {
			errno = 0;
			die("the steps did not end within 30 s");
		}
		sleep_ns(MS / 2);
	}
	nvtxRangeEnd(g_epoch);
	return NULL;
}

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

static void launch(const void *fn, unsigned blocks, float *x, int n, cudaStream_t s)
{
	void *args[] = { &x, &n };
	dim3 grid = { blocks, 1, 1 }, block = { 128, 1, 1 };

	CUDA(cudaLaunchKernel(fn, grid, block, args, 0, s));
}

static int mode_ranges(const char *out, int n)
{
	struct rets push = { 0 }, pop = { 0 }, dpush = { 0 }, dpop = { 0 };
	double ns_per_block = env_num("FAKEGPU_NS_PER_BLOCK", 2000);
	uint64_t fwd_ns = (uint64_t)(ns_per_block * FWD_BLOCKS), grad_ns = (uint64_t)(ns_per_block * GRAD_BLOCKS);
	long marks = 0, closed = 0;
	const int domain_pushes = 3, x_len = 256;
	cudaStream_t stream;
	float *x;
	pthread_t th;
	char name[64];
	int unmatched;

	CUDA(cudaStreamCreate(&stream));
	nvtxNameCudaStreamA(stream, "compute");
	CUDA(cudaMalloc((void **)&x, (size_t)x_len * sizeof(float)));

	g_epoch = nvtxRangeStartA("epoch");
	if (pthread_create(&th, NULL, loader, NULL) != 0)
		die("pthread_create");
	while (!__atomic_load_n(&g_loader_ready, __ATOMIC_ACQUIRE))
		sleep_ns(MS / 10);

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "step %d", i);
		ret_add(&push, 0, nvtxRangePushA(name));

		ret_add(&push, 1, nvtxRangePushA("forward"));
		launch((const void *)nvtx_fwd_kernel, FWD_BLOCKS, x, x_len, stream);
		sleep_ns(2 * MS);
		ret_add(&pop, 1, nvtxRangePop());
		row_add("", "forward", 1, "push", 2 * MS, fwd_ns);

		ret_add(&push, 1, nvtxRangePushA("backward"));
		sleep_ns(2 * MS);
		ret_add(&push, 2, nvtxRangePushA("grad"));
		launch((const void *)nvtx_grad_kernel, GRAD_BLOCKS, x, x_len, stream);
		sleep_ns(MS);
		ret_add(&pop, 2, nvtxRangePop());
		row_add("", "grad", 2, "push", MS, grad_ns);
		CUDA(cudaStreamSynchronize(stream));
		ret_add(&pop, 1, nvtxRangePop());
		row_add("", "backward", 1, "push", 3 * MS, grad_ns);

		ret_add(&pop, 0, nvtxRangePop());
		row_add("", name, 0, "push", 5 * MS, fwd_ns + grad_ns);
		closed += 4;
		if (i % 5 == 4) {
			nvtxMarkA("checkpoint");
			marks++;
		}
	}
	__atomic_store_n(&g_steps_done, 1, __ATOMIC_RELEASE);

	/* A named domain: registered string, named category, int64 payload. */
	nvtxDomainHandle_t dom = nvtxDomainCreateA("mydomain");
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered op");
	nvtxEventAttributes_t a;

	nvtxDomainNameCategoryA(dom, 7, "io category");
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = 7;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xFF00FF00u;
	a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
	a.payload.llValue = 42;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = reg;
	for (int j = 0; j < domain_pushes; j++) {
		ret_add(&dpush, 0, nvtxDomainRangePushEx(dom, &a));
		sleep_ns(MS);
		ret_add(&dpop, 0, nvtxDomainRangePop(dom));
		row_add("mydomain", "registered op", 0, "push", MS, 0);
		closed++;
	}
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "dmark";
	nvtxDomainMarkEx(dom, &a);

	/* A wide message, converted to UTF-8 by the tool. */
	ret_add(&push, 0, nvtxRangePushW(L"wide \u00fcn\u00efcode"));
	sleep_ns(MS);
	ret_add(&pop, 0, nvtxRangePop());
	row_add("", "wide \xc3\xbc" "n\xc3\xaf" "code", 0, "push", MS, 0);
	closed++;

	/* nvtxRangePushEx in the default domain, with a named category and a double payload. */
	nvtxNameCategoryA(3, "cat three");
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = 3;
	a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
	a.payload.dValue = 0.5;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "ex range";
	ret_add(&push, 0, nvtxRangePushEx(&a));
	sleep_ns(MS);
	ret_add(&pop, 0, nvtxRangePop());
	row_add("", "ex range", 0, "push", MS, 0);
	closed++;

	/* Nothing is open on this thread: NVTX documents a negative return. */
	unmatched = nvtxRangePop();

	if (pthread_join(th, NULL) != 0)
		die("pthread_join");
	for (int j = 0; j < LOADS; j++)
		row_add("", "load", 0, "push", MS, 0);
	closed += LOADS;
	/* The epoch holds every step (their launches were made on the thread that started it). */
	row_add("", "epoch", 0, "start", (uint64_t)n * 5 * MS, (uint64_t)n * (fwd_ns + grad_ns));
	closed++;
	nvtxDomainDestroy(dom);
	CUDA(cudaFree(x));
	CUDA(cudaStreamDestroy(stream));

	FILE *f = open_out(out);
	fprintf(f, "{\"mode\":\"ranges\",\"n\":%d,\"pid\":%d,\"ranges\":[", n, (int)getpid());
	for (int i = 0; i < g_nrows; i++) {
		struct row *r = &g_rows[i];
		fprintf(f, "%s\n{\"domain\":\"%s\",\"name\":\"%s\",\"depth\":%d,\"kind\":\"%s\",\"count\":%ld,"
			   "\"min_ns\":%llu,\"gpu_ns\":%llu}",
			i ? "," : "", r->domain, r->name, r->depth, r->kind, r->count, (unsigned long long)r->min_ns,
			(unsigned long long)r->gpu_ns);
	}
	fprintf(f, "],\n\"marks\":[{\"domain\":\"\",\"name\":\"checkpoint\",\"count\":%ld},"
		   "{\"domain\":\"mydomain\",\"name\":\"dmark\",\"count\":1}]", marks);
	fprintf(f, ",\n\"closed\":%ld,\"kernel_fwd_ns\":%llu,\"kernel_grad_ns\":%llu", closed,
		(unsigned long long)fwd_ns, (unsigned long long)grad_ns);
	ret_json(f, "push", &push);
	ret_json(f, "pop", &pop);
	ret_json(f, "load_push", &g_load_push);
	ret_json(f, "load_pop", &g_load_pop);
	ret_json(f, "domain_push", &dpush);
	ret_json(f, "domain_pop", &dpop);
	fprintf(f, ",\n\"unmatched_pop_ret\":%d,\"epoch_id\":%llu}\n", unmatched, (unsigned long long)g_epoch);
	close_out(f, out);
	printf("cuda_nvtx ranges: %d steps\n", n);
	return 0;
}

/* ---- window, profiler ---- */

static nvtxDomainHandle_t g_step_domain;

static void step_push(void)
{
	if (g_step_domain != NULL) {
		nvtxEventAttributes_t a;

		memset(&a, 0, sizeof(a));
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = "step";
		nvtxDomainRangePushEx(g_step_domain, &a);
	} else {
		nvtxRangePushA("step");
	}
}

static void step_pop(void)
{
	if (g_step_domain != NULL)
		nvtxDomainRangePop(g_step_domain);
	else
		nvtxRangePop();
}

static int mode_window(const char *out, int n, size_t bytes, int profiler)
{
	enum { OUT_BYTES = 1000 };
	static const int brackets[][2] = { { 2, 4 }, { 6, 6 } };
	int nbrackets = profiler ? (n >= 7 ? 2 : 1) : 0;
	const char *dom = getenv("NVTX_STEP_DOMAIN");
	long *in_reads = calloc((size_t)n, sizeof(long)), *out_reads = calloc((size_t)n, sizeof(long));
	int fd;

	if (in_reads == NULL || out_reads == NULL)
		die("calloc");
	if (profiler && n < 5)
		usage();
	if (profiler) {
		int devices;

		CUDA(cudaGetDeviceCount(&devices));
	}
	nvtx_init();
	if (dom != NULL && *dom != '\0')
		g_step_domain = nvtxDomainCreateA(dom);
	fd = open_data();
	for (int i = 0; i < n; i++) {
		for (int b = 0; b < nbrackets; b++)
			if (i == brackets[b][0])
				CUDA(cudaProfilerStart());
		step_push();
		read_exact(fd, (size_t)(i + 1) * bytes, &in_reads[i]);
		step_pop();
		for (int b = 0; b < nbrackets; b++)
			if (i == brackets[b][1])
				CUDA(cudaProfilerStop());
		int fd2 = open_data();
		read_exact(fd2, OUT_BYTES, &out_reads[i]);
		if (close(fd2) != 0)
			die("close");
	}
	if (close(fd) != 0)
		die("close");

	FILE *f = open_out(out);
	fprintf(f, "{\"mode\":\"%s\",\"n\":%d,\"bytes\":%zu,\"pid\":%d,\"domain\":\"%s\",\"steps\":[",
		profiler ? "profiler" : "window", n, bytes, (int)getpid(), g_step_domain ? dom : "");
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\n{\"in_bytes\":%zu,\"in_reads\":%ld,\"out_bytes\":%d,\"out_reads\":%ld,\"out_opens\":1}",
			i ? "," : "", (size_t)(i + 1) * bytes, in_reads[i], OUT_BYTES, out_reads[i]);
	fprintf(f, "],\n\"brackets\":[");
	for (int b = 0; b < nbrackets; b++)
		fprintf(f, "%s[%d,%d]", b ? "," : "", brackets[b][0], brackets[b][1]);
	fprintf(f, "]}\n");
	close_out(f, out);
	free(in_reads);
	free(out_reads);
	return 0;
}

/* ---- manual ---- */

static int mode_manual(const char *out, const char *dir)
{
	enum { PHASES = 6 };
	size_t bytes[PHASES];
	long reads[PHASES] = { 0 };
	char path[4096], tmp[4096];
	int fd;
	FILE *f;

	nvtx_init();
	for (int p = 0, b = 1000; p < PHASES; p++, b *= 3)
		bytes[p] = (size_t)b;
	fd = open_data();
	printf("%d\n", (int)getpid());
	fflush(stdout);
	snprintf(tmp, sizeof(tmp), "%s/pid.tmp", dir);
	snprintf(path, sizeof(path), "%s/pid", dir);
	f = open_out(tmp);
	fprintf(f, "%d\n", (int)getpid());
	close_out(f, tmp);
	if (rename(tmp, path) != 0)
		die("rename %s", tmp);
	for (int p = 0; p < PHASES; p++) {
		snprintf(path, sizeof(path), "%s/go%d", dir, p);
		wait_file(path);
		read_exact(fd, bytes[p], &reads[p]);
		snprintf(path, sizeof(path), "%s/done%d", dir, p);
		touch(path);
	}
	if (close(fd) != 0)
		die("close");
	f = open_out(out);
	fprintf(f, "{\"mode\":\"manual\",\"pid\":%d,\"phases\":[", (int)getpid());
	for (int p = 0; p < PHASES; p++)
		fprintf(f, "%s{\"bytes\":%zu,\"reads\":%ld}", p ? "," : "", bytes[p], reads[p]);
	fprintf(f, "]}\n");
	close_out(f, out);
	return 0;
}

/* ---- fork ---- */

static void pipe_put(int fd)
{
	char c = 1;

	while (write(fd, &c, 1) != 1)
		if (errno != EINTR)
			die("pipe write");
}

static void pipe_get(int fd)
{
	char c;
	ssize_t r;

	while ((r = read(fd, &c, 1)) != 1) {
		if (r == 0) {
			errno = 0;
			die("pipe closed");
		}
		if (errno != EINTR)
			die("pipe read");
	}
}

static int mode_fork(const char *out)
{
	enum { PARENT_BEFORE = 1000, PARENT_INSIDE = 5000, CHILD_INSIDE = 20000, CHILD_AFTER = 100000 };
	int p2c[2], c2p[2], fd, status;
	long reads = 0;
	pid_t child;

	nvtx_init();
	fd = open_data();
	read_exact(fd, PARENT_BEFORE, &reads);
	if (pipe2(p2c, O_CLOEXEC) != 0 || pipe2(c2p, O_CLOEXEC) != 0)
		die("pipe");
	nvtxMarkA("fork"); /* a text the parent has seen before the fork: the child marks it too */
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		int cfd = open_data();

		nvtxMarkA("fork");

		close(p2c[1]);
		close(c2p[0]);
		pipe_put(c2p[1]); /* opened: the parent may open its window */
		pipe_get(p2c[0]); /* the parent's window is open */
		read_exact(cfd, CHILD_INSIDE, &reads);
		pipe_put(c2p[1]);
		pipe_get(p2c[0]); /* the parent has popped: the window is closed */
		read_exact(cfd, CHILD_AFTER, &reads);
		close(cfd);
		_exit(0);
	}
	close(p2c[0]);
	close(c2p[1]);
	pipe_get(c2p[0]); /* the child has opened the file (outside any window) */
	nvtxRangePushA("step");
	pipe_put(p2c[1]);
	read_exact(fd, PARENT_INSIDE, &reads);
	pipe_get(c2p[0]); /* the child has read */
	nvtxRangePop();
	pipe_put(p2c[1]);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		errno = 0;
		die("the child ended with status %#x", status);
	}
	close(fd);
	close(p2c[1]);
	close(c2p[0]);

	FILE *f = open_out(out);
	fprintf(f, "{\"mode\":\"fork\",\"pid\":%d,\"child_pid\":%d,\"parent_before\":%d,\"parent_inside\":%d,"
		   "\"child_inside\":%d,\"child_after\":%d}\n",
		(int)getpid(), (int)child, PARENT_BEFORE, PARENT_INSIDE, CHILD_INSIDE, CHILD_AFTER);
	close_out(f, out);
	return 0;
}

/* ---- timed ---- */

static int mode_timed(const char *out, int n, size_t bytes, long sleep_ms, uint64_t t_main)
{
	uint64_t(*t)[2] = calloc((size_t)n, sizeof(*t));
	long reads = 0;
	int fd;

	if (t == NULL)
		die("calloc");
	fd = open_data();
	for (int i = 0; i < n; i++) {
		t[i][0] = now_ns();
		read_exact(fd, bytes, &reads);
		t[i][1] = now_ns();
		sleep_ns((uint64_t)sleep_ms * MS);
	}
	close(fd);

	FILE *f = open_out(out);
	fprintf(f, "{\"mode\":\"timed\",\"pid\":%d,\"t_main\":%llu,\"bytes\":%zu,\"reads\":[", (int)getpid(),
		(unsigned long long)t_main, bytes);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\n[%llu,%llu,%zu]", i ? "," : "", (unsigned long long)t[i][0],
			(unsigned long long)t[i][1], bytes);
	fprintf(f, "]}\n");
	close_out(f, out);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t t_main = now_ns();

	if (argc < 3)
		usage();
	g_mode = argv[1];
	if (strcmp(argv[1], "ranges") == 0 && argc == 4)
		return mode_ranges(argv[2], (int)arg_num(argv[3], 1, 10000));
	if (strcmp(argv[1], "window") == 0 && argc == 5)
		return mode_window(argv[2], (int)arg_num(argv[3], 1, 1000), (size_t)arg_num(argv[4], 1, 1 << 24), 0);
	if (strcmp(argv[1], "profiler") == 0 && argc == 5)
		return mode_window(argv[2], (int)arg_num(argv[3], 5, 1000), (size_t)arg_num(argv[4], 1, 1 << 24), 1);
	if (strcmp(argv[1], "manual") == 0 && argc == 4)
		return mode_manual(argv[2], argv[3]);
	if (strcmp(argv[1], "fork") == 0 && argc == 3)
		return mode_fork(argv[2]);
	if (strcmp(argv[1], "timed") == 0 && argc == 6)
		return mode_timed(argv[2], (int)arg_num(argv[3], 1, 100000), (size_t)arg_num(argv[4], 1, 1 << 24),
				  arg_num(argv[5], 0, 10000), t_main);
	usage();
	return 2;
}
