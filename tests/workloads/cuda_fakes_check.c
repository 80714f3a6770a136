/* cuda_fakes_check: checks that the fake CUDA libraries (tests/fakes) keep the contracts the profiler's
 * tests rely on: stream ordering and the legacy stream's rules, events, sticky errors, memory tables and
 * copy checks, GEMM results for every op combination (complex batched and SgemmEx included), cuBLASLt's
 * attribute protocol, cuDNN's argument rules (batch normalisation's Ex forms, pooling, spatial transformer)
 * and backend finalize rules, NCCL's one-rank collectives and send/receive pairing.
 * Linked like cuda_train; run with no arguments. Prints one line per failed check; exit 0 when all pass. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nccl.h>

/* The half-precision cuBLAS entry point, declared for C++ only (see tests/fakes/cublas.c). */
cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
			   int k, const __half_raw *alpha, const __half_raw *A, int lda, const __half_raw *B, int ldb,
			   const __half_raw *beta, __half_raw *C, int ldc);

static int g_failed, g_checks;

#define CHECK(cond)                                                                       \
	do {                                                                              \
		g_checks++;                                                               \
		if (!(cond)) {                                                            \
			g_failed++;                                                       \
			fprintf(stderr, "cuda_fakes_check:%d: failed: %s\n", __LINE__, #cond); \
		}                                                                         \
	} while (0)

#define EQ(expr, want)                                                                                     \
	do {                                                                                               \
		long got_ = (long)(expr), want_ = (long)(want);                                            \
		g_checks++;                                                                                \
		if (got_ != want_) {                                                                       \
			g_failed++;                                                                        \
			fprintf(stderr, "cuda_fakes_check:%d: %s = %ld, want %ld\n", __LINE__, #expr, got_, want_); \
		}                                                                                          \
	} while (0)

/* Kernels: exported host functions (-rdynamic). */
void kern_a(float *p);
void kern_a(float *p)
{
	p[0] = 1;
}

static void kern_hidden(float *p)
{
	p[0] = 2;
}

float device_symbol[16];

static dim3 d3(unsigned int x)
{
	dim3 d = { x, 1, 1 };

	return d;
}

/* A kernel of n blocks takes n * 2 us (FAKEGPU_NS_PER_BLOCK unset). */
static cudaError_t run_blocks(unsigned int blocks, cudaStream_t s)
{
	return cudaLaunchKernel((const void *)kern_a, d3(blocks), d3(128), NULL, 0, s);
}

static void check_runtime(void)
{
	int n = -1, dev = -1;
	const char *name = NULL;
	void *p = (void *)1;
	size_t free_b, total_b, free_after;

	EQ(cudaGetDeviceCount(&n), cudaSuccess);
	EQ(n, 1);
	EQ(cudaSetDevice(1), cudaErrorInvalidDevice);
	EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice);
	EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice);
	EQ(cudaGetLastError(), cudaErrorInvalidDevice);
	EQ(cudaGetLastError(), cudaSuccess);
	EQ(cudaGetDevice(&dev), cudaSuccess);
	EQ(dev, 0);
	CHECK(strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
	CHECK(strcmp(cudaGetErrorString(cudaErrorNotReady), "device not ready") == 0);

	/* launches */
	EQ(cudaLaunchKernel(NULL, d3(1), d3(1), NULL, 0, NULL), cudaErrorInvalidDeviceFunction);
	EQ(cudaLaunchKernel((const void *)kern_a, d3(0), d3(1), NULL, 0, NULL), cudaErrorInvalidConfiguration);
	EQ(cudaLaunchKernel((const void *)kern_a, d3(1), d3(1025), NULL, 0, NULL), cudaErrorInvalidConfiguration);
	EQ(cudaFuncGetName(&name, (const void *)kern_a), cudaSuccess);
	CHECK(name != NULL && strcmp(name, "kern_a") == 0);
	EQ(cudaFuncGetName(&name, (const void *)kern_hidden), cudaErrorInvalidDeviceFunction);
	EQ(cudaGraphLaunch(NULL, NULL), cudaErrorInvalidValue);
	EQ(cudaGraphLaunch((cudaGraphExec_t)&n, NULL), cudaSuccess);
	cudaGetLastError();

	/* memory */
	EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
	EQ(cudaMalloc(&p, total_b + 1), cudaErrorMemoryAllocation);
	CHECK(p == NULL);
	EQ(cudaMalloc(&p, 1000), cudaSuccess);
	EQ(cudaMemGetInfo(&free_after, &total_b), cudaSuccess);
	EQ(free_b - free_after, 1000);
	EQ(cudaFree((char *)p + 8), cudaErrorInvalidValue);
	EQ(cudaFree(p), cudaSuccess);
	EQ(cudaFree(p), cudaErrorInvalidValue);
	EQ(cudaFree(NULL), cudaSuccess);
	cudaGetLastError();
}

static void check_streams_and_events(void)
{
	cudaStream_t a, b, gone;
	cudaEvent_t e0, e1, nt;
	float ms = -1;

	EQ(cudaStreamCreateWithFlags(&a, cudaStreamDefault), cudaSuccess);
	EQ(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
	EQ(cudaStreamCreateWithFlags(&gone, 4), cudaErrorInvalidValue);
	EQ(cudaStreamCreate(&gone), cudaSuccess);
	EQ(cudaStreamDestroy(gone), cudaSuccess);
	EQ(cudaStreamSynchronize(gone), cudaErrorInvalidResourceHandle);
	EQ(cudaStreamDestroy(NULL), cudaErrorInvalidResourceHandle);
	EQ(cudaEventCreate(&e0), cudaSuccess);
	EQ(cudaEventCreate(&e1), cudaSuccess);
	EQ(cudaEventCreateWithFlags(&nt, cudaEventDisableTiming), cudaSuccess);
	EQ(cudaEventQuery(e0), cudaSuccess); /* never recorded: complete */
	EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle); /* the last failure above */

	/* 500 blocks = 1 ms on a */
	EQ(cudaEventRecord(e0, a), cudaSuccess);
	EQ(run_blocks(500, a), cudaSuccess);
	EQ(cudaEventRecord(e1, a), cudaSuccess);
	EQ(cudaStreamQuery(a), cudaErrorNotReady);
	EQ(cudaEventQuery(e1), cudaErrorNotReady);
	EQ(cudaEventElapsedTime(&ms, e0, e1), cudaErrorNotReady);
	EQ(cudaGetLastError(), cudaSuccess); /* NotReady is not an error */
	EQ(cudaEventSynchronize(e1), cudaSuccess);
	EQ(cudaStreamQuery(a), cudaSuccess);
	EQ(cudaEventElapsedTime(&ms, e0, e1), cudaSuccess);
	CHECK(ms >= 1.0f && ms < 1.5f);
	EQ(cudaEventRecord(nt, a), cudaSuccess);
	EQ(cudaEventElapsedTime(&ms, e0, nt), cudaErrorInvalidResourceHandle);

	/* the legacy stream waits for the blocking stream a, not for the non-blocking b */
	EQ(run_blocks(500, b), cudaSuccess);
	EQ(cudaStreamQuery(NULL), cudaSuccess);
	EQ(run_blocks(500, a), cudaSuccess);
	EQ(cudaEventRecord(e0, NULL), cudaSuccess);
	EQ(cudaEventQuery(e0), cudaErrorNotReady);
	/* ... and a blocking stream waits for the legacy stream */
	EQ(cudaStreamSynchronize(a), cudaSuccess);
	EQ(run_blocks(500, NULL), cudaSuccess);
	EQ(cudaEventRecord(e1, a), cudaSuccess);
	EQ(cudaEventQuery(e1), cudaErrorNotReady);
	EQ(cudaDeviceSynchronize(), cudaSuccess);
	EQ(cudaStreamQuery(a), cudaSuccess);
	EQ(cudaStreamQuery(b), cudaSuccess);

	/* cross-stream wait */
	EQ(run_blocks(500, a), cudaSuccess);
	EQ(cudaEventRecord(e0, a), cudaSuccess);
	EQ(cudaStreamWaitEvent(b, e0, 0), cudaSuccess);
	EQ(cudaStreamQuery(b), cudaErrorNotReady);
	EQ(cudaStreamSynchronize(b), cudaSuccess);
	EQ(cudaEventQuery(e0), cudaSuccess);

	EQ(cudaEventDestroy(nt), cudaSuccess);
	EQ(cudaEventDestroy(nt), cudaErrorInvalidResourceHandle);
	EQ(cudaEventDestroy(e0), cudaSuccess);
	EQ(cudaEventDestroy(e1), cudaSuccess);
	EQ(cudaStreamDestroy(a), cudaSuccess);
	EQ(cudaStreamDestroy(b), cudaSuccess);
	cudaGetLastError();
}

static void check_copies(void)
{
	float *d, *pinned, host[64], *pageable = malloc(4096), *managed;
	struct cudaPointerAttributes at;

	for (int i = 0; i < 64; i++)
		host[i] = (float)i;
	EQ(cudaMalloc((void **)&d, 64 * sizeof(float)), cudaSuccess);
	EQ(cudaMallocHost((void **)&pinned, 64 * sizeof(float)), cudaSuccess);
	EQ(cudaMallocManaged((void **)&managed, 64, cudaMemAttachGlobal), cudaSuccess);
	EQ(cudaMemcpy(d, host, sizeof(host), (enum cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
	EQ(cudaMemcpy(host, host, sizeof(host), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
	EQ(cudaMemcpy(d, host, sizeof(host) + 4, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
	EQ(cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice), cudaSuccess);
	EQ(cudaMemcpy(pinned, d, sizeof(host), cudaMemcpyDefault), cudaSuccess);
	CHECK(memcmp(pinned, host, sizeof(host)) == 0);
	EQ(cudaMemset(d, 0, sizeof(host)), cudaSuccess);
	EQ(cudaMemcpyAsync(pinned, d, sizeof(host), cudaMemcpyDeviceToHost, NULL), cudaSuccess);
	CHECK(pinned[5] == 0);
	EQ(cudaMemcpy2D(d, 16, host, 8, 12, 2, cudaMemcpyHostToDevice), cudaErrorInvalidPitchValue);
	EQ(cudaMemcpy2D(d, 16, host, 8, 8, 4, cudaMemcpyHostToDevice), cudaSuccess);
	CHECK(d[0] == 0 && d[1] == 1 && d[4] == 2 && d[5] == 3 && d[2] == 0);
	EQ(cudaMemcpyToSymbol(device_symbol, host, 8 * sizeof(float), 4 * sizeof(float), cudaMemcpyHostToDevice),
	   cudaSuccess);
	CHECK(device_symbol[4] == 0 && device_symbol[11] == 7);
	EQ(cudaMemcpyFromSymbol(pinned, device_symbol, 4, 0, cudaMemcpyHostToDevice), cudaErrorInvalidMemcpyDirection);

	EQ(cudaPointerGetAttributes(&at, d + 3), cudaSuccess);
	EQ(at.type, cudaMemoryTypeDevice);
	EQ(cudaPointerGetAttributes(&at, pinned), cudaSuccess);
	EQ(at.type, cudaMemoryTypeHost);
	EQ(cudaPointerGetAttributes(&at, managed), cudaSuccess);
	EQ(at.type, cudaMemoryTypeManaged);
	EQ(cudaPointerGetAttributes(&at, pageable), cudaSuccess);
	EQ(at.type, cudaMemoryTypeUnregistered);
	EQ(cudaHostRegister(pageable, 4096, 0), cudaSuccess);
	EQ(cudaHostRegister(pageable + 8, 64, 0), cudaErrorHostMemoryAlreadyRegistered);
	EQ(cudaPointerGetAttributes(&at, pageable + 8), cudaSuccess);
	EQ(at.type, cudaMemoryTypeHost);
	EQ(cudaHostUnregister(pageable + 8), cudaErrorHostMemoryNotRegistered);
	EQ(cudaHostUnregister(pageable), cudaSuccess);
	EQ(cudaFreeHost(d), cudaErrorInvalidValue);
	EQ(cudaFree(pinned), cudaErrorInvalidValue);
	EQ(cudaFreeHost(pinned), cudaSuccess);
	EQ(cudaFree(managed), cudaSuccess);
	EQ(cudaFree(d), cudaSuccess);
	free(pageable);
	cudaGetLastError();
}

/* Reference column-major product with op N, T (and C = T for real types). */
static double ref_elem(const double *A, int lda, int ta, const double *B, int ldb, int tb, int k, int i, int j)
{
	double s = 0;

	for (int l = 0; l < k; l++)
		s += (ta ? A[l + i * lda] : A[i + l * lda]) * (tb ? B[j + l * ldb] : B[l + j * ldb]);
	return s;
}

static uint16_t to_half(float f)
{
	/* exact for the small integers used here */
	uint32_t x;
	int e;

	if (f == 0)
		return 0;
	memcpy(&x, &f, 4);
	e = (int)((x >> 23) & 0xff) - 127 + 15;
	return (uint16_t)(((x >> 16) & 0x8000) | ((uint32_t)e << 10) | ((x >> 13) & 0x3ff));
}

static void check_cublas(void)
{
	enum { M = 5, N = 4, K = 3, LD = 7 };
	cublasHandle_t h;
	cublasOperation_t ops[3] = { CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C };
	float *A, *B, *C;
	double *dA, *dB, *dC, a64[LD * LD], b64[LD * LD], one64 = 1, zero64 = 0;
	const float one = 1, zero = 0, two = 2;

	EQ(cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
	cudaMallocManaged((void **)&A, LD * LD * sizeof(float), cudaMemAttachGlobal);
	cudaMallocManaged((void **)&B, LD * LD * sizeof(float), cudaMemAttachGlobal);
	cudaMallocManaged((void **)&C, LD * LD * sizeof(float), cudaMemAttachGlobal);
	cudaMallocManaged((void **)&dA, LD * LD * sizeof(double), cudaMemAttachGlobal);
	cudaMallocManaged((void **)&dB, LD * LD * sizeof(double), cudaMemAttachGlobal);
	cudaMallocManaged((void **)&dC, LD * LD * sizeof(double), cudaMemAttachGlobal);
	for (int i = 0; i < LD * LD; i++) {
		a64[i] = dA[i] = A[i] = (float)((i * 7) % 5 - 2);
		b64[i] = dB[i] = B[i] = (float)((i * 3) % 7 - 3);
	}
	for (int ta = 0; ta < 3; ta++) {
		for (int tb = 0; tb < 3; tb++) {
			int bad = 0;

			for (int i = 0; i < LD * LD; i++)
				C[i] = 1;
			EQ(cublasSgemm_v2(h, ops[ta], ops[tb], M, N, K, &two, A, LD, B, LD, &one, C, LD),
			   CUBLAS_STATUS_SUCCESS);
			EQ(cublasDgemm_v2(h, ops[ta], ops[tb], M, N, K, &one64, dA, LD, dB, LD, &zero64, dC, LD),
			   CUBLAS_STATUS_SUCCESS);
			for (int j = 0; j < N; j++)
				for (int i = 0; i < M; i++) {
					double want = ref_elem(a64, LD, ta != 0, b64, LD, tb != 0, K, i, j);

					bad += C[i + j * LD] != (float)(2 * want + 1) || dC[i + j * LD] != want;
				}
			bad += C[M] != 1; /* outside the M x N block: untouched */
			CHECK(bad == 0);
		}
	}
	/* argument checks */
	EQ(cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, LD, B, LD, &zero, C, LD),
	   CUBLAS_STATUS_NOT_INITIALIZED);
	EQ(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, N, K, &one, A, LD, B, LD, &zero, C, LD),
	   CUBLAS_STATUS_INVALID_VALUE);
	EQ(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, M - 1, B, LD, &zero, C, LD),
	   CUBLAS_STATUS_INVALID_VALUE);
	EQ(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, A, K, B, LD, &zero, C, LD), CUBLAS_STATUS_SUCCESS);
	EQ(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_T, M, N, K, &one, A, LD, B, N - 1, &zero, C, LD),
	   CUBLAS_STATUS_INVALID_VALUE);
	EQ(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, LD, B, LD, &zero, C, M - 1),
	   CUBLAS_STATUS_INVALID_VALUE);
	EQ(cublasSgemm_v2(h, (cublasOperation_t)3, CUBLAS_OP_N, M, N, K, &one, A, LD, B, LD, &zero, C, LD),
	   CUBLAS_STATUS_INVALID_VALUE);
	EQ(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, CUDA_R_8I, LD, B, CUDA_R_8I, LD, &zero, C,
			CUDA_R_32F, LD, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
	   CUBLAS_STATUS_NOT_SUPPORTED);

	/* half: A, B in fp16, C in fp32 through GemmEx, and Hgemm */
	{
		uint16_t *hA = (uint16_t *)dA, *hB = (uint16_t *)dB, *hC = (uint16_t *)dC;
		__half_raw hone = { to_half(1) }, hzero = { 0 };
		int bad = 0;

		for (int i = 0; i < LD * LD; i++) {
			hA[i] = to_half((float)a64[i]);
			hB[i] = to_half((float)b64[i]);
		}
		EQ(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, M, N, K, &one, hA, CUDA_R_16F, LD, hB, CUDA_R_16F, LD, &zero,
				C, CUDA_R_32F, LD, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
		   CUBLAS_STATUS_SUCCESS);
		EQ(cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, M, N, K, &hone, (const __half_raw *)hA, LD,
			       (const __half_raw *)hB, LD, &hzero, (__half_raw *)hC, LD),
		   CUBLAS_STATUS_SUCCESS);
		for (int j = 0; j < N; j++)
			for (int i = 0; i < M; i++) {
				double want = ref_elem(a64, LD, 0, b64, LD, 1, K, i, j);

				bad += C[i + j * LD] != (float)want || hC[i + j * LD] != to_half((float)want);
			}
		CHECK(bad == 0);
	}

	/* complex: C = A^H B with A = i, B = 1: A^H B = -i k */
	{
		cuComplex *cA, *cB, *cC, cone = { 1, 0 }, czero = { 0, 0 };

		cudaMallocManaged((void **)&cA, 4 * sizeof(cuComplex), cudaMemAttachGlobal);
		cudaMallocManaged((void **)&cB, 4 * sizeof(cuComplex), cudaMemAttachGlobal);
		cudaMallocManaged((void **)&cC, 4 * sizeof(cuComplex), cudaMemAttachGlobal);
		for (int i = 0; i < 4; i++) {
			cA[i] = (cuComplex){ 0, 1 };
			cB[i] = (cuComplex){ 1, 0 };
		}
		EQ(cublasCgemm_v2(h, CUBLAS_OP_C, CUBLAS_OP_N, 2, 2, 2, &cone, cA, 2, cB, 2, &czero, cC, 2),
		   CUBLAS_STATUS_SUCCESS);
		CHECK(cC[3].x == 0 && cC[3].y == -2);
		cudaFree(cA);
		cudaFree(cB);
		cudaFree(cC);
	}

	/* complex batched: entry b of A is (0, b + 1), of B (1, 0): A^T B = k (0, b + 1), A^H B = k (0, -(b + 1)) */
	{
		cuComplex *cA, *cB, *cC, cone = { 1, 0 }, czero = { 0, 0 };
		cuDoubleComplex *zA, *zB, *zC, zone = { 1, 0 }, zzero = { 0, 0 };

		cudaMallocManaged((void **)&cA, 8 * sizeof(cuComplex), cudaMemAttachGlobal);
		cudaMallocManaged((void **)&cB, 8 * sizeof(cuComplex), cudaMemAttachGlobal);
		cudaMallocManaged((void **)&cC, 8 * sizeof(cuComplex), cudaMemAttachGlobal);
		cudaMallocManaged((void **)&zA, 8 * sizeof(cuDoubleComplex), cudaMemAttachGlobal);
		cudaMallocManaged((void **)&zB, 8 * sizeof(cuDoubleComplex), cudaMemAttachGlobal);
		cudaMallocManaged((void **)&zC, 8 * sizeof(cuDoubleComplex), cudaMemAttachGlobal);
		for (int i = 0; i < 8; i++) {
			cA[i] = (cuComplex){ 0, (float)(i / 4 + 1) };
			cB[i] = (cuComplex){ 1, 0 };
			zA[i] = (cuDoubleComplex){ 0, i / 4 + 1 };
			zB[i] = (cuDoubleComplex){ 1, 0 };
		}
		EQ(cublasCgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 2, &cone, cA, 2, 4, cB, 2, 4, &czero, cC,
					     2, 4, 2),
		   CUBLAS_STATUS_SUCCESS);
		CHECK(cC[3].x == 0 && cC[3].y == 2 && cC[7].x == 0 && cC[7].y == 4);
		EQ(cublasZgemmStridedBatched(h, CUBLAS_OP_C, CUBLAS_OP_N, 2, 2, 2, &zone, zA, 2, 4, zB, 2, 4, &zzero, zC,
					     2, 4, 2),
		   CUBLAS_STATUS_SUCCESS);
		CHECK(zC[3].x == 0 && zC[3].y == -2 && zC[7].x == 0 && zC[7].y == -4);
		{
			const cuComplex *ca[2] = { cA + 4, cA }, *cb[2] = { cB, cB + 4 };
			cuComplex *cc[2] = { cC, cC + 4 };
			const cuDoubleComplex *za[2] = { zA + 4, zA }, *zb[2] = { zB, zB + 4 };
			cuDoubleComplex *zc[2] = { zC, zC + 4 };

			EQ(cublasCgemmBatched(h, CUBLAS_OP_C, CUBLAS_OP_N, 2, 2, 2, &cone, ca, 2, cb, 2, &czero, cc, 2, 2),
			   CUBLAS_STATUS_SUCCESS);
			CHECK(cC[0].y == -4 && cC[7].y == -2);
			EQ(cublasZgemmBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 2, &zone, za, 2, zb, 2, &zzero, zc, 2, 2),
			   CUBLAS_STATUS_SUCCESS);
			CHECK(zC[0].y == 4 && zC[7].y == 2);
			EQ(cublasZgemmBatched(NULL, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 2, &zone, za, 2, zb, 2, &zzero, zc, 2, 2),
			   CUBLAS_STATUS_NOT_INITIALIZED);
			EQ(cublasCgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &cone, ca, 1, cb, 2, &czero, cc, 2, 2),
			   CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
		}
		EQ(cublasCgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &cone, cA, 2, 4, cB, 2, 4, &czero, cC, 2,
					     4, -1),
		   CUBLAS_STATUS_INVALID_VALUE);
		EQ(cublasZgemmStridedBatched(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &zone, zA, 2, 4, zB, 2, 4, &zzero, zC,
					     2, 4, 2),
		   CUBLAS_STATUS_NOT_INITIALIZED);
		cudaFree(cA);
		cudaFree(cB);
		cudaFree(cC);
		cudaFree(zA);
		cudaFree(zB);
		cudaFree(zC);
	}

	/* SgemmEx: float arithmetic over 32F data (as Sgemm) or 16F data into 32F; 64F is not among its types */
	{
		uint16_t *hA = (uint16_t *)dA, *hB = (uint16_t *)dB;
		int bad = 0;

		for (int i = 0; i < LD * LD; i++) {
			hA[i] = to_half((float)a64[i]);
			hB[i] = to_half((float)b64[i]);
		}
		EQ(cublasSgemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &two, A, CUDA_R_32F, LD, B, CUDA_R_32F, LD, &zero, C,
				 CUDA_R_32F, LD),
		   CUBLAS_STATUS_SUCCESS);
		for (int j = 0; j < N; j++)
			for (int i = 0; i < M; i++)
				bad += C[i + j * LD] != (float)(2 * ref_elem(a64, LD, 1, b64, LD, 0, K, i, j));
		EQ(cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, hA, CUDA_R_16F, LD, hB, CUDA_R_16F, LD, &zero, C,
				 CUDA_R_32F, LD),
		   CUBLAS_STATUS_SUCCESS);
		for (int j = 0; j < N; j++)
			for (int i = 0; i < M; i++)
				bad += C[i + j * LD] != (float)ref_elem(a64, LD, 0, b64, LD, 0, K, i, j);
		CHECK(bad == 0);
		EQ(cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, CUDA_R_64F, LD, dB, CUDA_R_64F, LD, &zero,
				 dC, CUDA_R_64F, LD),
		   CUBLAS_STATUS_NOT_SUPPORTED);
		EQ(cublasSgemmEx(NULL, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, CUDA_R_32F, LD, B, CUDA_R_32F, LD, &zero,
				 C, CUDA_R_32F, LD),
		   CUBLAS_STATUS_NOT_INITIALIZED);
	}

	/* strided batched and pointer-array batched agree with single products */
	{
		const float *Aa[2] = { A, A + 1 }, *Ba[2] = { B, B + 2 };
		float *Ca[2] = { C, C + 24 };
		float ref[2][4];

		EQ(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, Aa, LD, Ba, LD, &zero, Ca, LD, 2),
		   CUBLAS_STATUS_SUCCESS);
		for (int b = 0; b < 2; b++)
			for (int j = 0; j < 2; j++)
				for (int i = 0; i < 2; i++)
					ref[b][i + 2 * j] = Ca[b][i + j * LD];
		EQ(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A, LD, 1, B, LD, 2, &zero, C, LD,
					     24, 2),
		   CUBLAS_STATUS_SUCCESS);
		for (int b = 0; b < 2; b++)
			for (int j = 0; j < 2; j++)
				for (int i = 0; i < 2; i++)
					CHECK(C[b * 24 + i + j * LD] == ref[b][i + 2 * j] &&
					      ref[b][i + 2 * j] == (float)ref_elem(a64 + b, LD, 0, b64 + 2 * b, LD, 0, 2, i, j));
	}
	cudaFree(A);
	cudaFree(B);
	cudaFree(C);
	cudaFree(dA);
	cudaFree(dB);
	cudaFree(dC);
	EQ(cublasDestroy_v2(h), CUBLAS_STATUS_SUCCESS);
}

static void check_cublaslt(void)
{
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, lc, l8;
	uint64_t rows = 0;
	int32_t op = CUBLAS_OP_T, batch = 2;
	int64_t stride;
	size_t written = 0;
	float *A, *B, *C, one = 1, zero = 0;
	double a64[12], b64[12];
	int bad = 0;

	EQ(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
	EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
	EQ(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 3, 2, 3), CUBLAS_STATUS_SUCCESS); /* A: k x m, op T */
	EQ(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 3, 2, 3), CUBLAS_STATUS_SUCCESS); /* B: k x n */
	EQ(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, 2, 2, 2), CUBLAS_STATUS_SUCCESS); /* C, D: m x n */

	/* the attribute protocol */
	EQ(cublasLtMatrixLayoutGetAttribute(la, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, 0, NULL), CUBLAS_STATUS_INVALID_VALUE);
	EQ(cublasLtMatrixLayoutGetAttribute(la, CUBLASLT_MATRIX_LAYOUT_ROWS, NULL, 0, &written), CUBLAS_STATUS_SUCCESS);
	EQ(written, sizeof(uint64_t));
	EQ(cublasLtMatrixLayoutGetAttribute(la, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, 4, &written),
	   CUBLAS_STATUS_INVALID_VALUE);
	EQ(cublasLtMatrixLayoutGetAttribute(la, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof(rows), &written),
	   CUBLAS_STATUS_SUCCESS);
	EQ(rows, 3);
	EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, 2), CUBLAS_STATUS_INVALID_VALUE);
	EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof(op)), CUBLAS_STATUS_SUCCESS);
	op = -1;
	EQ(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof(op), &written),
	   CUBLAS_STATUS_SUCCESS);
	EQ(op, CUBLAS_OP_T);

	/* two batches of D = A^T B */
	cudaMallocManaged((void **)&A, 12 * sizeof(float), cudaMemAttachGlobal);
	cudaMallocManaged((void **)&B, 12 * sizeof(float), cudaMemAttachGlobal);
	cudaMallocManaged((void **)&C, 8 * sizeof(float), cudaMemAttachGlobal);
	for (int i = 0; i < 12; i++) {
		a64[i] = A[i] = (float)(i % 4 - 1);
		b64[i] = B[i] = (float)(i % 3);
	}
	stride = 6;
	for (int i = 0; i < 2; i++) {
		cublasLtMatrixLayout_t l = i ? lb : la;

		EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)),
		   CUBLAS_STATUS_SUCCESS);
		EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
		   CUBLAS_STATUS_SUCCESS);
	}
	stride = 4;
	EQ(cublasLtMatmul(lt, desc, &one, A, la, B, lb, &zero, C, lc, C, lc, NULL, NULL, 0, NULL),
	   CUBLAS_STATUS_INVALID_VALUE); /* C's batch count differs */
	EQ(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)),
	   CUBLAS_STATUS_SUCCESS);
	EQ(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
	   CUBLAS_STATUS_SUCCESS);
	EQ(cublasLtMatmul(lt, desc, &one, A, la, B, lb, &zero, C, lc, C, lc, NULL, NULL, 0, NULL), CUBLAS_STATUS_SUCCESS);
	for (int b = 0; b < 2; b++)
		for (int j = 0; j < 2; j++)
			for (int i = 0; i < 2; i++)
				bad += C[4 * b + i + 2 * j] != (float)ref_elem(a64 + 6 * b, 3, 1, b64 + 6 * b, 3, 0, 3, i, j);
	CHECK(bad == 0);
	EQ(cublasLtMatrixLayoutCreate(&l8, CUDA_R_8I, 3, 2, 3), CUBLAS_STATUS_SUCCESS);
	EQ(cublasLtMatrixLayoutSetAttribute(l8, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)),
	   CUBLAS_STATUS_SUCCESS);
	EQ(cublasLtMatmul(lt, desc, &one, A, l8, B, lb, &zero, C, lc, C, lc, NULL, NULL, 0, NULL),
	   CUBLAS_STATUS_NOT_SUPPORTED);
	EQ(cublasLtMatmul(NULL, desc, &one, A, la, B, lb, &zero, C, lc, C, lc, NULL, NULL, 0, NULL),
	   CUBLAS_STATUS_NOT_INITIALIZED);
	cublasLtMatrixLayoutDestroy(l8);
	cublasLtMatrixLayoutDestroy(la);
	cublasLtMatrixLayoutDestroy(lb);
	cublasLtMatrixLayoutDestroy(lc);
	cublasLtMatmulDescDestroy(desc);
	EQ(cublasLtDestroy(lt), CUBLAS_STATUS_SUCCESS);
	cudaFree(A);
	cudaFree(B);
	cudaFree(C);
}

static cudnnBackendDescriptor_t tensor(int64_t uid, bool is_virtual)
{
	cudnnBackendDescriptor_t t;
	int64_t dims[4] = { 2, 3, 4, 5 }, strides[4] = { 60, 20, 5, 1 }, align = 4;
	cudnnDataType_t f = CUDNN_DATA_FLOAT;

	cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t);
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f);
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
	return t;
}

static void check_cudnn(void)
{
	cudnnHandle_t h;
	cudnnTensorDescriptor_t x, y;
	cudnnFilterDescriptor_t w;
	cudnnConvolutionDescriptor_t conv;
	float one = 1, zero = 0, *buf;
	cudnnBackendDescriptor_t tx, ty, pw, op, graph, heur, cfg, plan, pack, engine_out;
	cudnnPointwiseMode_t relu = CUDNN_POINTWISE_RELU_FWD;
	cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_INSTANT;
	cudnnDataType_t f = CUDNN_DATA_FLOAT;
	int64_t n = 0, uids[2] = { 1, 2 }, wrong_uids[2] = { 1, 3 }, idx = -1;
	void *ptrs[2];

	cudaMalloc((void **)&buf, 1 << 16);
	EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
	cudnnCreateTensorDescriptor(&x);
	cudnnCreateTensorDescriptor(&y);
	cudnnCreateFilterDescriptor(&w);
	cudnnCreateConvolutionDescriptor(&conv);
	EQ(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 8, 8), CUDNN_STATUS_SUCCESS);
	EQ(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 8, 8), CUDNN_STATUS_SUCCESS);
	EQ(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 0, 4, 8, 8), CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3), CUDNN_STATUS_SUCCESS);
	EQ(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
	   CUDNN_STATUS_SUCCESS);
	EQ(cudnnConvolutionForward(h, &one, x, buf, w, buf, conv, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0, &zero, y, buf),
	   CUDNN_STATUS_SUCCESS);
	EQ(cudnnConvolutionForward(NULL, &one, x, buf, w, buf, conv, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0, &zero, y,
				   buf),
	   CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnConvolutionForward(h, &one, x, buf, w, buf, conv, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0, &zero, x, buf),
	   CUDNN_STATUS_BAD_PARAM); /* output shape */
	{ /* the algorithm searches: every algorithm asked for, run and returned */
		cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
		cudnnConvolutionBwdDataAlgoPerf_t bwd_data[2];
		cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter[1];
		int got = -1;

		EQ(cudnnFindConvolutionForwardAlgorithmEx(h, x, buf, w, buf, conv, y, buf, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
							  &got, fwd, NULL, 0),
		   CUDNN_STATUS_SUCCESS);
		EQ(got, CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
		EQ(fwd[1].algo, 1);
		EQ(fwd[1].status, CUDNN_STATUS_SUCCESS);
		EQ(fwd[1].time > 0, 1);
		EQ(cudnnFindConvolutionForwardAlgorithmEx(h, x, buf, w, buf, conv, y, buf, 0, &got, fwd, NULL, 0),
		   CUDNN_STATUS_BAD_PARAM);
		EQ(cudnnFindConvolutionBackwardDataAlgorithmEx(h, w, buf, y, buf, conv, x, buf, 2, &got, bwd_data, NULL, 0),
		   CUDNN_STATUS_SUCCESS);
		EQ(got, 2);
		EQ(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, x, buf, y, buf, conv, w, buf, 1, &got, bwd_filter, NULL,
								 0),
		   CUDNN_STATUS_SUCCESS);
		EQ(got, 1);
		EQ(cudnnFindConvolutionBackwardFilterAlgorithmEx(NULL, x, buf, y, buf, conv, w, buf, 1, &got, bwd_filter,
								 NULL, 0),
		   CUDNN_STATUS_BAD_PARAM);
	}
	EQ(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_MODE_CHANNEL, &one, x, buf, &zero, y, buf),
	   CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnRNNForward(h, NULL, CUDNN_FWD_MODE_TRAINING, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
			   NULL, 0, NULL, 0, NULL, 0, NULL),
	   CUDNN_STATUS_BAD_PARAM);

	/* backend: relu(x) as a one-operation graph */
	tx = tensor(1, false);
	ty = tensor(2, false);
	cudnnBackendCreateDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw);
	cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &relu);
	EQ(cudnnBackendFinalize(pw), CUDNN_STATUS_BAD_PARAM); /* no math precision */
	cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f);
	EQ(cudnnBackendFinalize(pw), CUDNN_STATUS_SUCCESS);
	EQ(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f),
	   CUDNN_STATUS_NOT_INITIALIZED);
	cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &op);
	EQ(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tx),
	   CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
	EQ(cudnnBackendFinalize(tx), CUDNN_STATUS_SUCCESS);
	EQ(cudnnBackendFinalize(ty), CUDNN_STATUS_SUCCESS);
	EQ(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw),
	   CUDNN_STATUS_BAD_PARAM); /* a pointwise descriptor is not a tensor */
	EQ(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_INT64, 1, &n),
	   CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tx),
	   CUDNN_STATUS_SUCCESS);
	cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ty);
	cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
	EQ(cudnnBackendFinalize(op), CUDNN_STATUS_SUCCESS);
	cudnnBackendDestroyDescriptor(tx); /* the operation keeps its own copy */
	cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph);
	cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
	EQ(cudnnBackendFinalize(graph), CUDNN_STATUS_SUCCESS);

	/* the engine configuration through the heuristics, then the plan */
	cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
	cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
	cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
	EQ(cudnnBackendFinalize(heur), CUDNN_STATUS_SUCCESS);
	cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg);
	EQ(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cfg),
	   CUDNN_STATUS_SUCCESS);
	EQ(n, 1);
	cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine_out);
	EQ(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine_out),
	   CUDNN_STATUS_SUCCESS);
	EQ(cudnnBackendGetAttribute(engine_out, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &idx),
	   CUDNN_STATUS_SUCCESS);
	EQ(idx, 0);
	cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
	cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
	cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
	ptrs[0] = buf;
	ptrs[1] = buf + 1024;
	cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 2, wrong_uids);
	cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 2, ptrs);
	EQ(cudnnBackendFinalize(pack), CUDNN_STATUS_SUCCESS);
	EQ(cudnnBackendExecute(h, plan, pack), CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
	EQ(cudnnBackendFinalize(plan), CUDNN_STATUS_SUCCESS);
	EQ(cudnnBackendExecute(h, plan, pack), CUDNN_STATUS_BAD_PARAM); /* uid 2 missing */
	EQ(cudnnBackendInitialize(pack), CUDNN_STATUS_SUCCESS);
	cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 2, uids);
	cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 2, ptrs);
	EQ(cudnnBackendFinalize(pack), CUDNN_STATUS_SUCCESS);
	EQ(cudnnBackendExecute(h, plan, pack), CUDNN_STATUS_SUCCESS);
	EQ(cudnnBackendExecute(NULL, plan, pack), CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnBackendExecute(h, pack, plan), CUDNN_STATUS_BAD_PARAM);

	cudnnBackendDestroyDescriptor(ty);
	cudnnBackendDestroyDescriptor(pw);
	cudnnBackendDestroyDescriptor(op);
	cudnnBackendDestroyDescriptor(graph);
	cudnnBackendDestroyDescriptor(heur);
	cudnnBackendDestroyDescriptor(cfg);
	cudnnBackendDestroyDescriptor(engine_out);
	cudnnBackendDestroyDescriptor(plan);
	cudnnBackendDestroyDescriptor(pack);
	cudnnDestroyTensorDescriptor(x);
	cudnnDestroyTensorDescriptor(y);
	cudnnDestroyFilterDescriptor(w);
	cudnnDestroyConvolutionDescriptor(conv);
	EQ(cudnnDestroy(h), CUDNN_STATUS_SUCCESS);
	cudaFree(buf);
}

/* Batch normalisation's Ex forms, pooling and the spatial transformer. */
static void check_cudnn_ops(void)
{
	cudnnHandle_t h;
	cudnnTensorDescriptor_t x, y, small, bn;
	cudnnActivationDescriptor_t relu;
	cudnnPoolingDescriptor_t pool;
	cudnnSpatialTransformerDescriptor_t st;
	float one = 1, zero = 0, *buf;
	size_t size = 1;
	int st_dims[4] = { 2, 3, 4, 4 }, st_dims5[5] = { 2, 3, 1, 4, 4 };

	cudaMalloc((void **)&buf, 1 << 16);
	EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
	cudnnCreateTensorDescriptor(&x);
	cudnnCreateTensorDescriptor(&y);
	cudnnCreateTensorDescriptor(&small);
	cudnnCreateTensorDescriptor(&bn);
	cudnnCreateActivationDescriptor(&relu);
	cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 8, 8);
	cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 8, 8);
	cudnnSetTensor4dDescriptor(small, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 4);
	EQ(cudnnDeriveBNTensorDescriptor(bn, x, CUDNN_BATCHNORM_SPATIAL), CUDNN_STATUS_SUCCESS);
	cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0);

	/* batch normalisation, Ex forms */
	EQ(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL,
								    CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, x, y, y, bn,
								    relu, &size),
	   CUDNN_STATUS_SUCCESS);
	EQ(size, 0);
	size = 1;
	EQ(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, CUDNN_BATCHNORM_SPATIAL,
								CUDNN_BATCHNORM_OPS_BN_ACTIVATION, relu, x, &size),
	   CUDNN_STATUS_SUCCESS);
	EQ(size, 0);
	EQ(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ACTIVATION,
							     x, NULL, y, NULL, y, bn, relu, &size),
	   CUDNN_STATUS_BAD_PARAM); /* the activation's backward needs y */
	EQ(cudnnBatchNormalizationForwardTrainingEx(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION,
						    &one, &zero, x, buf, y, buf, y, buf, bn, buf, buf, 0.1, buf, buf,
						    1e-5, buf, buf, relu, NULL, 0, NULL, 0),
	   CUDNN_STATUS_SUCCESS);
	EQ(cudnnBatchNormalizationForwardTrainingEx(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION,
						    &one, &zero, x, buf, NULL, NULL, y, buf, bn, buf, buf, 0.1, buf, buf,
						    1e-5, buf, buf, relu, NULL, 0, NULL, 0),
	   CUDNN_STATUS_BAD_PARAM); /* no z to add */
	EQ(cudnnBatchNormalizationForwardTrainingEx(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one,
						    &zero, x, buf, NULL, NULL, y, buf, bn, buf, buf, 0.1, buf, buf, 1e-5,
						    buf, buf, NULL, NULL, 0, NULL, 0),
	   CUDNN_STATUS_BAD_PARAM); /* no activation */
	EQ(cudnnBatchNormalizationForwardTrainingEx(NULL, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN, &one, &zero, x,
						    buf, NULL, NULL, y, buf, bn, buf, buf, 0.1, buf, buf, 1e-5, buf, buf,
						    NULL, NULL, 0, NULL, 0),
	   CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnBatchNormalizationBackwardEx(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one, &zero,
					     &one, &zero, x, buf, y, buf, y, buf, NULL, NULL, y, buf, bn, buf, buf, buf,
					     buf, 1e-5, buf, buf, relu, NULL, 0, NULL, 0),
	   CUDNN_STATUS_SUCCESS);
	EQ(cudnnBatchNormalizationBackwardEx(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one, &zero,
					     &one, &zero, x, buf, y, buf, y, buf, NULL, NULL, y, buf, bn, buf, NULL, buf,
					     buf, 1e-5, buf, buf, relu, NULL, 0, NULL, 0),
	   CUDNN_STATUS_BAD_PARAM); /* the activation's backward needs the bias */
	EQ(cudnnBatchNormalizationBackwardEx(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN, &one, &zero, &one,
					     &zero, x, buf, NULL, NULL, y, buf, NULL, NULL, y, buf, bn, buf, NULL, buf,
					     buf, 1e-5, buf, NULL, NULL, NULL, 0, NULL, 0),
	   CUDNN_STATUS_BAD_PARAM); /* one of the saved mean and inverse variance */

	/* pooling: 2x2 windows, stride 2, 8x8 -> 4x4 */
	EQ(cudnnCreatePoolingDescriptor(&pool), CUDNN_STATUS_SUCCESS);
	EQ(cudnnPoolingForward(h, pool, &one, x, buf, &zero, small, buf), CUDNN_STATUS_BAD_PARAM); /* not set */
	EQ(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 0, 2, 0, 0, 2, 2),
	   CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2),
	   CUDNN_STATUS_SUCCESS);
	EQ(cudnnPoolingForward(h, pool, &one, x, buf, &zero, small, buf), CUDNN_STATUS_SUCCESS);
	EQ(cudnnPoolingForward(NULL, pool, &one, x, buf, &zero, small, buf), CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnPoolingForward(h, pool, &one, x, buf, &zero, bn, buf), CUDNN_STATUS_BAD_PARAM); /* n and c differ */
	EQ(cudnnDestroyPoolingDescriptor(pool), CUDNN_STATUS_SUCCESS);

	/* spatial transformer: x 8x8 sampled into the descriptor's 4x4 */
	EQ(cudnnCreateSpatialTransformerDescriptor(&st), CUDNN_STATUS_SUCCESS);
	EQ(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 5, st_dims5),
	   CUDNN_STATUS_NOT_SUPPORTED);
	EQ(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, NULL),
	   CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnSpatialTfGridGeneratorForward(h, st, buf, buf), CUDNN_STATUS_BAD_PARAM); /* not set */
	EQ(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, st_dims),
	   CUDNN_STATUS_SUCCESS);
	EQ(cudnnSpatialTfGridGeneratorForward(h, st, buf, buf), CUDNN_STATUS_SUCCESS);
	EQ(cudnnSpatialTfGridGeneratorForward(h, st, NULL, buf), CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnSpatialTfGridGeneratorBackward(h, st, buf, buf), CUDNN_STATUS_SUCCESS);
	EQ(cudnnSpatialTfGridGeneratorBackward(NULL, st, buf, buf), CUDNN_STATUS_BAD_PARAM);
	EQ(cudnnSpatialTfSamplerForward(h, st, &one, x, buf, buf, &zero, small, buf), CUDNN_STATUS_SUCCESS);
	EQ(cudnnSpatialTfSamplerForward(h, st, &one, x, buf, buf, &zero, y, buf),
	   CUDNN_STATUS_BAD_PARAM); /* y is not the transformed shape */
	EQ(cudnnSpatialTfSamplerBackward(h, st, &one, x, buf, &zero, x, buf, &one, small, buf, buf, &zero, buf),
	   CUDNN_STATUS_SUCCESS);
	EQ(cudnnSpatialTfSamplerBackward(h, st, &one, x, buf, &zero, small, buf, &one, small, buf, buf, &zero, buf),
	   CUDNN_STATUS_BAD_PARAM); /* dx is not x's shape */
	EQ(cudnnDestroySpatialTransformerDescriptor(st), CUDNN_STATUS_SUCCESS);

	cudnnDestroyActivationDescriptor(relu);
	cudnnDestroyTensorDescriptor(x);
	cudnnDestroyTensorDescriptor(y);
	cudnnDestroyTensorDescriptor(small);
	cudnnDestroyTensorDescriptor(bn);
	EQ(cudnnDestroy(h), CUDNN_STATUS_SUCCESS);
	cudaFree(buf);
}

static void check_nccl(void)
{
	ncclUniqueId id;
	ncclComm_t comm, two[2];
	int v = 0;
	float *a, *b;

	cudaMalloc((void **)&a, 64 * sizeof(float));
	cudaMalloc((void **)&b, 64 * sizeof(float));
	for (int i = 0; i < 64; i++)
		a[i] = (float)i;
	EQ(ncclGetVersion(&v), ncclSuccess);
	EQ(v, NCCL_VERSION_CODE);
	EQ(ncclGetUniqueId(&id), ncclSuccess);
	EQ(ncclCommInitRank(&comm, 2, id, 0), ncclInvalidArgument);
	EQ(ncclCommInitRank(&comm, 1, id, 1), ncclInvalidArgument);
	EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess);
	EQ(ncclCommCount(comm, &v), ncclSuccess);
	EQ(v, 1);
	EQ(ncclAllReduce(a, b, 64, ncclFloat, ncclSum, NULL, NULL), ncclInvalidArgument);
	EQ(ncclAllReduce(a, b, 64, ncclNumTypes, ncclSum, comm, NULL), ncclInvalidArgument);
	EQ(ncclAllReduce(a, b, 64, ncclFloat, ncclNumOps, comm, NULL), ncclInvalidArgument);
	EQ(ncclBroadcast(a, b, 64, ncclFloat, 1, comm, NULL), ncclInvalidArgument);
	EQ(ncclBcast(a, 64, ncclFloat, 1, comm, NULL), ncclInvalidArgument);
	EQ(ncclBcast(a, 64, ncclFloat, 0, comm, NULL), ncclSuccess);
	CHECK(a[63] == 63); /* in place: one rank's broadcast leaves the buffer as it was */
	EQ(ncclGather(a, b, 64, ncclFloat, 1, comm, NULL), ncclInvalidArgument);
	EQ(ncclScatter(a, b, 64, ncclFloat, -1, comm, NULL), ncclInvalidArgument);
	EQ(ncclAlltoAll(a, NULL, 64, ncclFloat, comm, NULL), ncclInvalidArgument);
	EQ(ncclGather(a, b, 32, ncclFloat, 0, comm, NULL), ncclSuccess);
	EQ(ncclScatter(a + 32, b + 32, 16, ncclFloat, 0, comm, NULL), ncclSuccess);
	EQ(ncclAlltoAll(a + 48, b + 48, 16, ncclFloat, comm, NULL), ncclSuccess);
	CHECK(b[0] == 0 && b[31] == 31 && b[32] == 32 && b[63] == 63);
	EQ(ncclAllReduce(a, b, 64, ncclFloat, ncclSum, comm, NULL), ncclSuccess);
	CHECK(b[63] == 63);
	memset(b, 0, 64 * sizeof(float));
	EQ(ncclSend(a, 16, ncclFloat, 0, comm, NULL), ncclInvalidUsage);
	EQ(ncclGroupStart(), ncclSuccess);
	EQ(ncclSend(a, 16, ncclFloat, 0, comm, NULL), ncclSuccess);
	EQ(ncclRecv(b, 16, ncclFloat, 0, comm, NULL), ncclSuccess);
	EQ(ncclGroupEnd(), ncclSuccess);
	CHECK(b[15] == 15 && b[16] == 0);
	EQ(ncclGroupStart(), ncclSuccess);
	EQ(ncclRecv(b, 8, ncclFloat, 0, comm, NULL), ncclSuccess);
	EQ(ncclGroupEnd(), ncclInvalidUsage);
	EQ(ncclGroupEnd(), ncclInvalidUsage);
	CHECK(strlen(ncclGetLastError(comm)) > 0);
	EQ(ncclCommInitAll(two, 2, NULL), ncclInvalidArgument); /* one fake device */
	EQ(ncclCommDestroy(comm), ncclSuccess);
	EQ(ncclCommDestroy(NULL), ncclSuccess);
	cudaFree(a);
	cudaFree(b);
}

int main(void)
{
	check_runtime();
	check_streams_and_events();
	check_copies();
	check_cublas();
	check_cublaslt();
	check_cudnn();
	check_cudnn_ops();
	check_nccl();
	printf("cuda_fakes_check: %d checks, %d failed\n", g_checks, g_failed);
	return g_failed ? 1 : 0;
}
