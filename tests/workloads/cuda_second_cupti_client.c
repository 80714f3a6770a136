/* A program with a CUPTI client of its own, used as torch.profiler's Kineto uses CUPTI inside libtorch: linked
 * against libcupti (DT_NEEDED libcupti.so.13, as libtorch_cpu is), it launches kernels before, during and after
 * a "profiling session" in which it takes CUPTI over the way Kineto does:
 *   - it registers its own timestamp callback (Kineto's is TSC-based: here CLOCK_MONOTONIC + 1e15 ns, so its
 *     times are recognisably its own) and its own buffer callbacks, which hand out malloc'd buffers;
 *   - it enables kernels, runtime API records and external correlation, and pushes CUSTOM0 ids around its
 *     launches;
 *   - at the end it flushes, disables the kinds and calls cuptiFinalize.
 * It checks what a client can see of another one, and prints it (the same lines with profwrap or without):
 *   client settings ...   the global settings its buffers are filled with (thread id type, zeroed buffers)
 *                         and whether its timestamps were its own
 *   client kernels N      the kernels in its buffers (the launches of the session)
 *   client foreign-buffers N   buffers handed to it that it never gave
 * and the ground truth for tests/integration/test_cupti_other_client.py as `expect` lines:
 *   expect launches N           cudaLaunchKernel calls in all
 *   expect kernels-before N     kernels launched (and synchronised) before the session
 * Usage: cuda_second_cupti_client [first]  (first: the session comes before any other CUDA call) */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cupti_activity.h>

#define CHECK(call, ok)                                                                                 \
	do {                                                                                            \
		if ((call) != (ok)) {                                                                   \
			fprintf(stderr, "cuda_second_cupti_client: %s failed (line %d)\n", #call, __LINE__); \
			exit(1);                                                                        \
		}                                                                                       \
	} while (0)

enum { BEFORE = 7, DURING = 11, AFTER = 5, BUF_SIZE = 64 * 1024, MAX_BUFS = 64 };
#define OWN_CLOCK_BASE 1000000000000000ull /* ns added to CLOCK_MONOTONIC by the client's timestamp callback */

static void kernel(void)
{
}

static uint8_t *given[MAX_BUFS];
static int ngiven;
static unsigned long kernels, foreign_buffers, foreign_times;

static uint64_t CUPTIAPI own_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return OWN_CLOCK_BASE + (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = NULL;
	*size = 0;
	*max_records = 0;
	if (ngiven == MAX_BUFS)
		return;
	*buffer = given[ngiven++] = malloc(BUF_SIZE);
	memset(*buffer, 0xa5, BUF_SIZE); /* Kineto does not zero its buffers */
	*size = BUF_SIZE;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	int ours = 0;

	(void)ctx, (void)stream, (void)size;
	for (int i = 0; i < ngiven; i++)
		ours |= given[i] == buffer;
	if (!ours) {
		foreign_buffers++;
		return; /* not ours to read or free */
	}
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
			const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;

			kernels++;
			foreign_times += k->start < OWN_CLOCK_BASE;
		}
	}
}

static void launch(int n, int pushed)
{
	dim3 one = { 1, 1, 1 };

	for (int i = 0; i < n; i++) {
		if (pushed)
			CHECK(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, i + 1),
			      CUPTI_SUCCESS);
		CHECK(cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, 0), cudaSuccess);
		if (pushed)
			CHECK(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, NULL),
			      CUPTI_SUCCESS);
	}
	CHECK(cudaDeviceSynchronize(), cudaSuccess);
}

static void session(void)
{
	CUpti_ActivityThreadIdType tid_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
	uint8_t zeroed = 2;
	size_t len = sizeof zeroed;

	CHECK(cuptiActivityRegisterTimestampCallback(own_clock), CUPTI_SUCCESS);
	CHECK(cuptiActivityRegisterCallbacks(requested, completed), CUPTI_SUCCESS);
	/* the settings its buffers will be filled with */
	CHECK(cuptiGetThreadIdType(&tid_type), CUPTI_SUCCESS);
	CHECK(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len, &zeroed), CUPTI_SUCCESS);
	CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), CUPTI_SUCCESS);
	launch(DURING, 1);
	CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), CUPTI_SUCCESS);
	CHECK(cuptiFinalize(), CUPTI_SUCCESS);
	printf("client settings thread-id-type %s zeroed-buffers %d clock %s\n",
	       tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT ? "default" : "changed", (int)zeroed,
	       foreign_times ? "foreign" : "own");
	printf("client kernels %lu\n", kernels);
	printf("client foreign-buffers %lu\n", foreign_buffers);
}

int main(int argc, char **argv)
{
	int first = argc > 1 && strcmp(argv[1], "first") == 0;

	if (first)
		session();
	launch(BEFORE, 0);
	if (!first)
		session();
	launch(AFTER, 0);
	for (int i = 0; i < ngiven; i++)
		free(given[i]);
	printf("expect launches %d\n", BEFORE + DURING + AFTER);
	printf("expect kernels-before %d\n", first ? 0 : BEFORE);
	return 0;
}
