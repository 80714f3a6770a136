/* Fake libcublas.so.13: handles and the GEMM family, computed on the CPU (column major, op N/T/C, leading
 * dimensions, alpha/beta) and timed on the simulated device through libcudart's fakegpu_enqueue_named.
 * Device memory is host memory in the fakes, so alpha and beta are read in either pointer mode.
 * No public CUDA name is called (tests/fakes/README.md). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "fakeblas.h"
#include "fakegpu.h"

/* The kernel names the activity records show, in the style of cuBLAS's on a Hopper GPU. */
#define K_SGEMM "ampere_sgemm_128x64_nn"
#define K_DGEMM "ampere_dgemm_64x64_nn"
#define K_HGEMM "ampere_h16816gemm_128x128_ldg8_stages_64x3_nn"
#define K_GEMM_EX "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_kernel__5x_cublas"
#define K_CGEMM "ampere_cgemm_64x64_nn"
#define K_ZGEMM "ampere_zgemm_32x32_nn"
#define K_SGEAM "geam_kernel_f32_nn"

/* The half-precision entry points are declared for C++ only (__half is a C++ class); __half_raw is the
 * same two bytes, and only pointers cross the interface. */
cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
			   int k, const __half_raw *alpha, const __half_raw *A, int lda, const __half_raw *B, int ldb,
			   const __half_raw *beta, __half_raw *C, int ldc);
cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
					 int m, int n, int k, const __half_raw *alpha, const __half_raw *A, int lda,
					 long long int strideA, const __half_raw *B, int ldb, long long int strideB,
					 const __half_raw *beta, __half_raw *C, int ldc, long long int strideC,
					 int batchCount);
cublasStatus_t cublasHgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
				  int n, int k, const __half_raw *alpha, const __half_raw *const Aarray[], int lda,
				  const __half_raw *const Barray[], int ldb, const __half_raw *beta,
				  __half_raw *const Carray[], int ldc, int batchCount);

#define FB_HANDLE_MAGIC 0x43424c53u

struct cublasContext {
	uint32_t magic;
	cudaStream_t stream;
	cublasMath_t math;
	cublasPointerMode_t pointer_mode;
	void *workspace;
	size_t workspace_bytes;
};

static int handle_ok(cublasHandle_t h)
{
	return h != NULL && h->magic == FB_HANDLE_MAGIC;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
	struct cublasContext *h;

	if (handle == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (fakegpu_device_count() == 0)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return CUBLAS_STATUS_ALLOC_FAILED;
	h->magic = FB_HANDLE_MAGIC;
	*handle = h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->magic = 0;
	free(handle);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (version == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	*version = CUBLAS_VERSION;
	return CUBLAS_STATUS_SUCCESS;
}

/* Like cuBLAS, the stream is not checked here; a bad one fails the next operation (EXECUTION_FAILED). */
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->stream = streamId;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (streamId == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	*streamId = handle->stream;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if ((mode & 0xf) > CUBLAS_TF32_TENSOR_OP_MATH ||
	    (mode & ~(cublasMath_t)(0xf | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)))
		return CUBLAS_STATUS_INVALID_VALUE;
	handle->math = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (mode == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	*mode = handle->math;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
		return CUBLAS_STATUS_INVALID_VALUE;
	handle->pointer_mode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (mode == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	*mode = handle->pointer_mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t workspaceSizeInBytes)
{
	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (workspace == NULL && workspaceSizeInBytes != 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	handle->workspace = workspace;
	handle->workspace_bytes = workspaceSizeInBytes;
	return CUBLAS_STATUS_SUCCESS;
}

#define FB_STATUS(X)                                                                  \
	X(CUBLAS_STATUS_SUCCESS, "success")                                           \
	X(CUBLAS_STATUS_NOT_INITIALIZED, "the library was not initialized")          \
	X(CUBLAS_STATUS_ALLOC_FAILED, "the resource allocation failed")              \
	X(CUBLAS_STATUS_INVALID_VALUE, "an invalid numeric value was used as an argument") \
	X(CUBLAS_STATUS_ARCH_MISMATCH, "an absent device architectural feature is required") \
	X(CUBLAS_STATUS_MAPPING_ERROR, "an access to GPU memory space failed")       \
	X(CUBLAS_STATUS_EXECUTION_FAILED, "the GPU program failed to execute")       \
	X(CUBLAS_STATUS_INTERNAL_ERROR, "an internal operation failed")              \
	X(CUBLAS_STATUS_NOT_SUPPORTED, "the functionality requested is not supported") \
	X(CUBLAS_STATUS_LICENSE_ERROR, "error detected trying to check the license")

const char *cublasGetStatusName(cublasStatus_t status)
{
#define FB_NAME(code, text) case code: return #code;
	switch (status) {
	FB_STATUS(FB_NAME)
	default: return "CUBLAS_STATUS_UNKNOWN";
	}
#undef FB_NAME
}

const char *cublasGetStatusString(cublasStatus_t status)
{
#define FB_STR(code, text) case code: return text;
	switch (status) {
	FB_STATUS(FB_STR)
	default: return "unknown error";
	}
#undef FB_STR
}

/* ---- GEMM ---- */

static int op_ok(cublasOperation_t op)
{
	return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static int64_t max1(int64_t v)
{
	return v > 1 ? v : 1;
}

/* The argument checks of cuBLAS's GEMMs, in its order. */
static cublasStatus_t gemm_check(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
				 int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int64_t batch)
{
	if (!handle_ok(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!op_ok(ta) || !op_ok(tb) || m < 0 || n < 0 || k < 0 || batch < 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (lda < max1(ta == CUBLAS_OP_N ? m : k) || ldb < max1(tb == CUBLAS_OP_N ? k : n) || ldc < max1(m))
		return CUBLAS_STATUS_INVALID_VALUE;
	return CUBLAS_STATUS_SUCCESS;
}

/* Takes the time of the product on the handle's stream. */
static cublasStatus_t gemm_time(cublasHandle_t h, int64_t m, int64_t n, int64_t k, int64_t batch, const char *name)
{
	double flops = 2.0 * (double)m * (double)n * (double)k * (double)batch;

	return fakegpu_enqueue_named(h->stream, fb_gemm_ns(flops), name) == cudaSuccess
		       ? CUBLAS_STATUS_SUCCESS
		       : CUBLAS_STATUS_EXECUTION_FAILED;
}

/* One real-typed product per batch entry: pointers from arrays (ptrs) or base + i * stride. */
struct gemm_batch {
	const void *A, *B;
	void *C;
	const void *const *Aarr, *const *Barr;
	void *const *Carr;
	long long sa, sb, sc; /* strides in elements */
	int64_t count;
};

/* Whether a pointer-array batch lacks one of its arrays (CUBLAS_STATUS_INVALID_VALUE). */
static int batch_arrays_missing(const struct gemm_batch *bt)
{
	int given = (bt->Aarr != NULL) + (bt->Barr != NULL) + (bt->Carr != NULL);

	return given != 0 && given != 3;
}

/* The matrices of entry i, elements of a_size bytes in A and B, c_size in C. */
static void batch_entry(const struct gemm_batch *bt, int64_t i, size_t a_size, size_t c_size, const void **A,
			const void **B, void **C)
{
	if (bt->Aarr != NULL) {
		*A = bt->Aarr[i], *B = bt->Barr[i], *C = bt->Carr[i];
	} else {
		*A = (const char *)bt->A + i * bt->sa * (long long)a_size;
		*B = (const char *)bt->B + i * bt->sb * (long long)a_size;
		*C = (char *)bt->C + i * bt->sc * (long long)c_size;
	}
}

static cublasStatus_t gemm_real_run(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
				    int64_t n, int64_t k, cudaDataType at, cudaDataType ct, cudaDataType scale,
				    int acc64, const void *alpha, int64_t lda, int64_t ldb, const void *beta,
				    int64_t ldc, const struct gemm_batch *bt, const char *name)
{
	struct fb_gemm g = { .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .at = at, .bt = at, .ct = ct, .dt = ct,
			     .acc64 = acc64, .lda = lda, .ldb = ldb, .ldc = ldc, .ldd = ldc };
	cublasStatus_t st = gemm_check(h, ta, tb, m, n, k, lda, ldb, ldc, bt->count);

	if (st != CUBLAS_STATUS_SUCCESS)
		return st;
	if (m == 0 || n == 0 || bt->count == 0)
		return CUBLAS_STATUS_SUCCESS;
	if (alpha == NULL || beta == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (fakegpu_stream_check(h->stream) != cudaSuccess)
		return CUBLAS_STATUS_EXECUTION_FAILED;
	if (batch_arrays_missing(bt))
		return CUBLAS_STATUS_INVALID_VALUE;
	g.alpha = fb_load(alpha, scale, 0);
	g.beta = fb_load(beta, scale, 0);
	for (int64_t i = 0; i < bt->count; i++) {
		batch_entry(bt, i, fb_type_size(at), fb_type_size(ct), &g.A, &g.B, &g.D);
		g.C = g.D;
		fb_gemm(&g);
	}
	return gemm_time(h, m, n, k, bt->count, name);
}

#define FB_ONE(ptrA, ptrB, ptrC) (&(struct gemm_batch){ .A = (ptrA), .B = (ptrB), .C = (ptrC), .count = 1 })
#define FB_STRIDED(ptrA, stA, ptrB, stB, ptrC, stC, n)                                                    \
	(&(struct gemm_batch){ .A = (ptrA), .B = (ptrB), .C = (ptrC), .sa = (stA), .sb = (stB), .sc = (stC), \
			       .count = (n) })
#define FB_ARRAYS(arrA, arrB, arrC, n)                                                                       \
	(&(struct gemm_batch){ .Aarr = (const void *const *)(arrA), .Barr = (const void *const *)(arrB),     \
			       .Carr = (void *const *)(arrC), .count = (n) })

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
			      int n, int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
			      const float *beta, float *C, int ldc)
{
	return gemm_real_run(handle, transa, transb, m, n, k, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 0, alpha, lda, ldb,
			     beta, ldc, FB_ONE(A, B, C), K_SGEMM);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
			      int n, int k, const double *alpha, const double *A, int lda, const double *B, int ldb,
			      const double *beta, double *C, int ldc)
{
	return gemm_real_run(handle, transa, transb, m, n, k, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, 1, alpha, lda, ldb,
			     beta, ldc, FB_ONE(A, B, C), K_DGEMM);
}

cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
			   int k, const __half_raw *alpha, const __half_raw *A, int lda, const __half_raw *B, int ldb,
			   const __half_raw *beta, __half_raw *C, int ldc)
{
	return gemm_real_run(handle, transa, transb, m, n, k, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, 0, alpha, lda, ldb,
			     beta, ldc, FB_ONE(A, B, C), K_HGEMM);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
					 int m, int n, int k, const float *alpha, const float *A, int lda,
					 long long int strideA, const float *B, int ldb, long long int strideB,
					 const float *beta, float *C, int ldc, long long int strideC, int batchCount)
{
	return gemm_real_run(handle, transa, transb, m, n, k, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 0, alpha, lda, ldb,
			     beta, ldc, FB_STRIDED(A, strideA, B, strideB, C, strideC, batchCount),
			     K_SGEMM);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
					 int m, int n, int k, const double *alpha, const double *A, int lda,
					 long long int strideA, const double *B, int ldb, long long int strideB,
					 const double *beta, double *C, int ldc, long long int strideC, int batchCount)
{
	return gemm_real_run(handle, transa, transb, m, n, k, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, 1, alpha, lda, ldb,
			     beta, ldc, FB_STRIDED(A, strideA, B, strideB, C, strideC, batchCount),
			     K_DGEMM);
}

cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
					 int m, int n, int k, const __half_raw *alpha, const __half_raw *A, int lda,
					 long long int strideA, const __half_raw *B, int ldb, long long int strideB,
					 const __half_raw *beta, __half_raw *C, int ldc, long long int strideC,
					 int batchCount)
{
	return gemm_real_run(handle, transa, transb, m, n, k, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, 0, alpha, lda, ldb,
			     beta, ldc, FB_STRIDED(A, strideA, B, strideB, C, strideC, batchCount),
			     K_HGEMM);
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
				  int n, int k, const float *alpha, const float *const Aarray[], int lda,
				  const float *const Barray[], int ldb, const float *beta, float *const Carray[],
				  int ldc, int batchCount)
{
	return gemm_real_run(handle, transa, transb, m, n, k, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 0, alpha, lda, ldb,
			     beta, ldc, FB_ARRAYS(Aarray, Barray, Carray, batchCount), K_SGEMM);
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
				  int n, int k, const double *alpha, const double *const Aarray[], int lda,
				  const double *const Barray[], int ldb, const double *beta, double *const Carray[],
				  int ldc, int batchCount)
{
	return gemm_real_run(handle, transa, transb, m, n, k, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, 1, alpha, lda, ldb,
			     beta, ldc, FB_ARRAYS(Aarray, Barray, Carray, batchCount), K_DGEMM);
}

cublasStatus_t cublasHgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
				  int n, int k, const __half_raw *alpha, const __half_raw *const Aarray[], int lda,
				  const __half_raw *const Barray[], int ldb, const __half_raw *beta,
				  __half_raw *const Carray[], int ldc, int batchCount)
{
	return gemm_real_run(handle, transa, transb, m, n, k, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, 0, alpha, lda, ldb,
			     beta, ldc, FB_ARRAYS(Aarray, Barray, Carray, batchCount), K_HGEMM);
}

/* The Ex family: 16F, 32F and 64F data (A and B of one type) with the compute types cuBLAS pairs them with;
 * other types are CUBLAS_STATUS_NOT_SUPPORTED. */
static cublasStatus_t gemm_ex_run(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
				  int64_t k, const void *alpha, cudaDataType at, int64_t lda, cudaDataType bt,
				  int64_t ldb, const void *beta, cudaDataType ct, int64_t ldc,
				  cublasComputeType_t compute, const struct gemm_batch *batch, const char *name)
{
	cudaDataType scale;
	cublasStatus_t st = gemm_check(h, ta, tb, m, n, k, lda, ldb, ldc, batch->count);

	if (st != CUBLAS_STATUS_SUCCESS)
		return st;
	if (!fb_types_ok(compute, at, bt, ct, &scale))
		return CUBLAS_STATUS_NOT_SUPPORTED;
	return gemm_real_run(h, ta, tb, m, n, k, at, ct, scale, scale == CUDA_R_64F, alpha, lda, ldb, beta, ldc, batch,
			     name);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
			    int k, const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
			    cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
			    cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
	(void)algo;
	return gemm_ex_run(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype, ldc,
			   computeType, FB_ONE(A, B, C), K_GEMM_EX);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
					  int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
					  int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
					  long long int strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
					  long long int strideC, int batchCount, cublasComputeType_t computeType,
					  cublasGemmAlgo_t algo)
{
	(void)algo;
	return gemm_ex_run(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype, ldc,
			   computeType, FB_STRIDED(A, strideA, B, strideB, C, strideC, batchCount),
			   K_GEMM_EX);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
				   int n, int k, const void *alpha, const void *const Aarray[], cudaDataType Atype,
				   int lda, const void *const Barray[], cudaDataType Btype, int ldb, const void *beta,
				   void *const Carray[], cudaDataType Ctype, int ldc, int batchCount,
				   cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
	(void)algo;
	return gemm_ex_run(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype, ldc,
			   computeType, FB_ARRAYS(Aarray, Barray, Carray, batchCount), K_GEMM_EX);
}

/* Float alpha and beta and float arithmetic over the data types given: those of CUBLAS_COMPUTE_32F. */
cublasStatus_t cublasSgemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
			     int k, const float *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
			     cudaDataType Btype, int ldb, const float *beta, void *C, cudaDataType Ctype, int ldc)
{
	return gemm_ex_run(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb, beta, Ctype, ldc,
			   CUBLAS_COMPUTE_32F, FB_ONE(A, B, C), K_GEMM_EX);
}

/* Complex products (Cgemm, Zgemm and their batched forms), checked and timed as the real ones: op C
 * conjugates. NAME computes one product, NAME##_run a batch. */
#define FB_COMPLEX_GEMM(NAME, CT, RT)                                                                          \
	static void NAME(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, CT alpha, const CT *A,   \
			 int lda, const CT *B, int ldb, CT beta, CT *C, int ldc)                                   \
	{                                                                                                          \
		for (int j = 0; j < n; j++) {                                                                      \
			for (int i = 0; i < m; i++) {                                                              \
				RT sr = 0, si = 0, cr = 0, ci = 0;                                                 \
				if (alpha.x != 0 || alpha.y != 0) {                                                \
					for (int l = 0; l < k; l++) {                                              \
						CT a = ta == CUBLAS_OP_N ? A[i + (long)l * lda] : A[l + (long)i * lda]; \
						CT b = tb == CUBLAS_OP_N ? B[l + (long)j * ldb] : B[j + (long)l * ldb]; \
						if (ta == CUBLAS_OP_C)                                             \
							a.y = -a.y;                                                \
						if (tb == CUBLAS_OP_C)                                             \
							b.y = -b.y;                                                \
						sr += a.x * b.x - a.y * b.y;                                       \
						si += a.x * b.y + a.y * b.x;                                       \
					}                                                                          \
				}                                                                                  \
				if (beta.x != 0 || beta.y != 0) {                                                  \
					CT c = C[i + (long)j * ldc];                                               \
					cr = beta.x * c.x - beta.y * c.y;                                          \
					ci = beta.x * c.y + beta.y * c.x;                                          \
				}                                                                                  \
				C[i + (long)j * ldc].x = alpha.x * sr - alpha.y * si + cr;                         \
				C[i + (long)j * ldc].y = alpha.x * si + alpha.y * sr + ci;                         \
			}                                                                                          \
		}                                                                                                  \
	}                                                                                                          \
	static cublasStatus_t NAME##_run(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,      \
					 int n, int k, const CT *alpha, int lda, int ldb, const CT *beta, int ldc,  \
					 const struct gemm_batch *bt, const char *name)                             \
	{                                                                                                          \
		cublasStatus_t st = gemm_check(h, ta, tb, m, n, k, lda, ldb, ldc, bt->count);                     \
		const void *A, *B;                                                                                 \
		void *C;                                                                                           \
		if (st != CUBLAS_STATUS_SUCCESS || m == 0 || n == 0 || bt->count == 0)                             \
			return st;                                                                                 \
		if (alpha == NULL || beta == NULL)                                                                 \
			return CUBLAS_STATUS_INVALID_VALUE;                                                        \
		if (fakegpu_stream_check(h->stream) != cudaSuccess)                                                \
			return CUBLAS_STATUS_EXECUTION_FAILED;                                                     \
		if (batch_arrays_missing(bt))                                                                      \
			return CUBLAS_STATUS_INVALID_VALUE;                                                        \
		if ((double)m * n * k <= fakegpu_env_double("FAKEGPU_GEMM_MAX_MACS", 1073741824.0)) {              \
			for (int64_t i = 0; i < bt->count; i++) {                                                  \
				batch_entry(bt, i, sizeof(CT), sizeof(CT), &A, &B, &C);                            \
				NAME(ta, tb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);                      \
			}                                                                                          \
		}                                                                                                  \
		return gemm_time(h, m, n, k, bt->count, name);                                                     \
	}

FB_COMPLEX_GEMM(cgemm, cuComplex, float)
FB_COMPLEX_GEMM(zgemm, cuDoubleComplex, double)

cublasStatus_t cublasCgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
			      int n, int k, const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *B,
			      int ldb, const cuComplex *beta, cuComplex *C, int ldc)
{
	return cgemm_run(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, FB_ONE(A, B, C), K_CGEMM);
}

cublasStatus_t cublasZgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
			      int n, int k, const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
			      const cuDoubleComplex *B, int ldb, const cuDoubleComplex *beta, cuDoubleComplex *C,
			      int ldc)
{
	return zgemm_run(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, FB_ONE(A, B, C), K_ZGEMM);
}

cublasStatus_t cublasCgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
					 int m, int n, int k, const cuComplex *alpha, const cuComplex *A, int lda,
					 long long int strideA, const cuComplex *B, int ldb, long long int strideB,
					 const cuComplex *beta, cuComplex *C, int ldc, long long int strideC,
					 int batchCount)
{
	return cgemm_run(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
			 FB_STRIDED(A, strideA, B, strideB, C, strideC, batchCount), K_CGEMM);
}

cublasStatus_t cublasZgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
					 int m, int n, int k, const cuDoubleComplex *alpha, const cuDoubleComplex *A,
					 int lda, long long int strideA, const cuDoubleComplex *B, int ldb,
					 long long int strideB, const cuDoubleComplex *beta, cuDoubleComplex *C, int ldc,
					 long long int strideC, int batchCount)
{
	return zgemm_run(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
			 FB_STRIDED(A, strideA, B, strideB, C, strideC, batchCount), K_ZGEMM);
}

cublasStatus_t cublasCgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
				  int n, int k, const cuComplex *alpha, const cuComplex *const Aarray[], int lda,
				  const cuComplex *const Barray[], int ldb, const cuComplex *beta,
				  cuComplex *const Carray[], int ldc, int batchCount)
{
	return cgemm_run(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
			 FB_ARRAYS(Aarray, Barray, Carray, batchCount), K_CGEMM);
}

cublasStatus_t cublasZgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
				  int n, int k, const cuDoubleComplex *alpha, const cuDoubleComplex *const Aarray[],
				  int lda, const cuDoubleComplex *const Barray[], int ldb, const cuDoubleComplex *beta,
				  cuDoubleComplex *const Carray[], int ldc, int batchCount)
{
	return zgemm_run(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc,
			 FB_ARRAYS(Aarray, Barray, Carray, batchCount), K_ZGEMM);
}

/* C = alpha * op(A) + beta * op(B), m x n. In place (C == A or C == B) only with op N and the same leading
 * dimension, as cuBLAS. Timed as the bytes it moves at FAKEGPU_COPY_BW. */
cublasStatus_t cublasSgeam(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
			   const float *alpha, const float *A, int lda, const float *beta, const float *B, int ldb,
			   float *C, int ldc)
{
	double ns;

	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!op_ok(transa) || !op_ok(transb) || m < 0 || n < 0 || lda < max1(transa == CUBLAS_OP_N ? m : n) ||
	    ldb < max1(transb == CUBLAS_OP_N ? m : n) || ldc < max1(m))
		return CUBLAS_STATUS_INVALID_VALUE;
	if ((C == A && (transa != CUBLAS_OP_N || lda != ldc)) || (C == B && (transb != CUBLAS_OP_N || ldb != ldc)))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (m == 0 || n == 0)
		return CUBLAS_STATUS_SUCCESS;
	if (alpha == NULL || beta == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (fakegpu_stream_check(handle->stream) != cudaSuccess)
		return CUBLAS_STATUS_EXECUTION_FAILED;
	for (int j = 0; j < n; j++) {
		for (int i = 0; i < m; i++) {
			float v = 0;

			if (*alpha != 0)
				v += *alpha * (transa == CUBLAS_OP_N ? A[i + (long)j * lda] : A[j + (long)i * lda]);
			if (*beta != 0)
				v += *beta * (transb == CUBLAS_OP_N ? B[i + (long)j * ldb] : B[j + (long)i * ldb]);
			C[i + (long)j * ldc] = v;
		}
	}
	ns = 3.0 * m * n * sizeof(float) * 1e9 / fakegpu_env_double("FAKEGPU_COPY_BW", 20e9);
	return fakegpu_enqueue_named(handle->stream, ns < 1000 ? 1000 : (uint64_t)ns, K_SGEAM) == cudaSuccess
		       ? CUBLAS_STATUS_SUCCESS
		       : CUBLAS_STATUS_EXECUTION_FAILED;
}
