/* cuBLAS and cuBLASLt: the GEMM family with its shape (m, n, k, batch, data type), from which the report
 * derives FLOPs. The stream is the handle's (cublasGetStream_v2); cublasLtMatmul's shape is read from its
 * descriptors with the library's own getters. Only the v2 names are wrapped (cublas_v2.h maps the legacy
 * names onto them); the 64-bit-index variants (_64) are not. */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_v2.h>

#include "pw_gpu.h"

#define PW_CUBLAS(ev, name, params, args, ...) \
	PW_GPU_WRAP(CUBLAS, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, CUBLAS, ev, 0, name, params, args, __VA_ARGS__)

PW_GPU_HELPER(CUBLAS, cublasStatus_t, cublasGetStream_v2, (cublasHandle_t, cudaStream_t *));

static void gemm_fields(struct pw_rec_api *r, cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
			int m, int n, int k, int batch, cudaDataType dtype, int64_t compute)
{
	cudaStream_t stream = NULL;
	if (real_cublasGetStream_v2 && real_cublasGetStream_v2(handle, &stream) == CUBLAS_STATUS_SUCCESS)
		r->stream = (uint64_t)(uintptr_t)stream;
	pw_put_gemm(r, (struct pw_gemm){(uint64_t)(int64_t)m, (uint64_t)(int64_t)n, (uint64_t)(int64_t)k,
					(uint64_t)(int64_t)batch, (uint8_t)dtype, (uint8_t)ta, (uint8_t)tb});
	r->c.arg0 = (uint64_t)compute;
}

PW_CUBLAS(CUBLAS_CREATE, cublasCreate_v2, (cublasHandle_t * handle), (handle),
	  r.c.arg0 = ret == CUBLAS_STATUS_SUCCESS && handle ? (uint64_t)(uintptr_t)*handle : 0)
PW_CUBLAS(CUBLAS_DESTROY, cublasDestroy_v2, (cublasHandle_t handle), (handle), r.c.arg0 = (uint64_t)(uintptr_t)handle)

/* The typed GEMMs: cublas<T>gemm, its strided and pointer-array batched forms. */
#define PW_TYPED_GEMM(ev, name, T, dtype)                                                                  \
	PW_CUBLAS(ev, name,                                                                                \
		  (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,       \
		   const T *alpha, const T *A, int lda, const T *B, int ldb, const T *beta, T *C, int ldc), \
		  (h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),                                \
		  gemm_fields(&r, h, ta, tb, m, n, k, 1, dtype, -1))
#define PW_STRIDED_GEMM(ev, name, T, dtype)                                                                \
	PW_CUBLAS(ev, name,                                                                                \
		  (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,       \
		   const T *alpha, const T *A, int lda, long long int sa, const T *B, int ldb,              \
		   long long int sb, const T *beta, T *C, int ldc, long long int sc, int batch),            \
		  (h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch),             \
		  gemm_fields(&r, h, ta, tb, m, n, k, batch, dtype, -1))
#define PW_BATCHED_GEMM(ev, name, T, dtype)                                                                \
	PW_CUBLAS(ev, name,                                                                                \
		  (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,       \
		   const T *alpha, const T *const A[], int lda, const T *const B[], int ldb, const T *beta, \
		   T *const C[], int ldc, int batch),                                                       \
		  (h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch),                         \
		  gemm_fields(&r, h, ta, tb, m, n, k, batch, dtype, -1))

/* cublas_api.h declares the half-precision GEMMs for C++ only; struct __half is the same type in C. */
typedef struct __half pw_half;

PW_TYPED_GEMM(CUBLAS_SGEMM, cublasSgemm_v2, float, CUDA_R_32F)
PW_TYPED_GEMM(CUBLAS_DGEMM, cublasDgemm_v2, double, CUDA_R_64F)
PW_TYPED_GEMM(CUBLAS_HGEMM, cublasHgemm, pw_half, CUDA_R_16F)
PW_TYPED_GEMM(CUBLAS_CGEMM, cublasCgemm_v2, cuComplex, CUDA_C_32F)
PW_TYPED_GEMM(CUBLAS_ZGEMM, cublasZgemm_v2, cuDoubleComplex, CUDA_C_64F)
PW_STRIDED_GEMM(CUBLAS_SGEMM_STRIDED_BATCHED, cublasSgemmStridedBatched, float, CUDA_R_32F)
PW_STRIDED_GEMM(CUBLAS_DGEMM_STRIDED_BATCHED, cublasDgemmStridedBatched, double, CUDA_R_64F)
PW_STRIDED_GEMM(CUBLAS_HGEMM_STRIDED_BATCHED, cublasHgemmStridedBatched, pw_half, CUDA_R_16F)
PW_BATCHED_GEMM(CUBLAS_SGEMM_BATCHED, cublasSgemmBatched, float, CUDA_R_32F)
PW_BATCHED_GEMM(CUBLAS_DGEMM_BATCHED, cublasDgemmBatched, double, CUDA_R_64F)
PW_BATCHED_GEMM(CUBLAS_HGEMM_BATCHED, cublasHgemmBatched, pw_half, CUDA_R_16F)
PW_STRIDED_GEMM(CUBLAS_CGEMM_STRIDED_BATCHED, cublasCgemmStridedBatched, cuComplex, CUDA_C_32F)
PW_STRIDED_GEMM(CUBLAS_ZGEMM_STRIDED_BATCHED, cublasZgemmStridedBatched, cuDoubleComplex, CUDA_C_64F)
PW_BATCHED_GEMM(CUBLAS_CGEMM_BATCHED, cublasCgemmBatched, cuComplex, CUDA_C_32F)
PW_BATCHED_GEMM(CUBLAS_ZGEMM_BATCHED, cublasZgemmBatched, cuDoubleComplex, CUDA_C_64F)

/* cublasSgemmEx takes its data types as arguments and computes in float whatever they are. */
PW_CUBLAS(CUBLAS_SGEMM_EX, cublasSgemmEx,
	  (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float *alpha,
	   const void *A, cudaDataType at, int lda, const void *B, cudaDataType bt, int ldb, const float *beta,
	   void *C, cudaDataType ct, int ldc),
	  (h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc),
	  gemm_fields(&r, h, ta, tb, m, n, k, 1, at, CUBLAS_COMPUTE_32F))

PW_CUBLAS(CUBLAS_GEMM_EX, cublasGemmEx,
	  (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,
	   const void *A, cudaDataType at, int lda, const void *B, cudaDataType bt, int ldb, const void *beta,
	   void *C, cudaDataType ct, int ldc, cublasComputeType_t compute, cublasGemmAlgo_t algo),
	  (h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, compute, algo),
	  gemm_fields(&r, h, ta, tb, m, n, k, 1, at, compute))

PW_CUBLAS(CUBLAS_GEMM_STRIDED_BATCHED_EX, cublasGemmStridedBatchedEx,
	  (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,
	   const void *A, cudaDataType at, int lda, long long int sa, const void *B, cudaDataType bt, int ldb,
	   long long int sb, const void *beta, void *C, cudaDataType ct, int ldc, long long int sc, int batch,
	   cublasComputeType_t compute, cublasGemmAlgo_t algo),
	  (h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C, ct, ldc, sc, batch, compute, algo),
	  gemm_fields(&r, h, ta, tb, m, n, k, batch, at, compute))

PW_CUBLAS(CUBLAS_GEMM_BATCHED_EX, cublasGemmBatchedEx,
	  (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha,
	   const void *const A[], cudaDataType at, int lda, const void *const B[], cudaDataType bt, int ldb,
	   const void *beta, void *const C[], cudaDataType ct, int ldc, int batch, cublasComputeType_t compute,
	   cublasGemmAlgo_t algo),
	  (h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, batch, compute, algo),
	  gemm_fields(&r, h, ta, tb, m, n, k, batch, at, compute))

/* ---- cuBLASLt ---- */

PW_GPU_HELPER(CUBLASLT, cublasStatus_t, cublasLtMatrixLayoutGetAttribute,
	      (cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void *, size_t, size_t *));
PW_GPU_HELPER(CUBLASLT, cublasStatus_t, cublasLtMatmulDescGetAttribute,
	      (cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void *, size_t, size_t *));

/* Reads one attribute of the size given; 0 when the getter is missing or refuses. */
static uint64_t layout_attr(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, size_t size)
{
	uint64_t v = 0;
	size_t written = 0;
	if (!l || !real_cublasLtMatrixLayoutGetAttribute ||
	    real_cublasLtMatrixLayoutGetAttribute(l, a, &v, size, &written) != CUBLAS_STATUS_SUCCESS)
		return 0;
	return v;
}

static int32_t desc_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, int32_t fallback)
{
	int32_t v = fallback;
	size_t written = 0;
	if (!d || !real_cublasLtMatmulDescGetAttribute ||
	    real_cublasLtMatmulDescGetAttribute(d, a, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS)
		return fallback;
	return v;
}

/* D is m x n; op(A) is m x k, so k is A's columns, or its rows when A is transposed. */
static void matmul_fields(struct pw_rec_api *r, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a_layout,
			  cublasLtMatrixLayout_t d_layout, cudaStream_t stream)
{
	int32_t ta = desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
	int32_t tb = desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
	int32_t batch = (int32_t)layout_attr(d_layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, sizeof(int32_t));
	pw_put_gemm(r, (struct pw_gemm){
		.m = layout_attr(d_layout, CUBLASLT_MATRIX_LAYOUT_ROWS, sizeof(uint64_t)),
		.n = layout_attr(d_layout, CUBLASLT_MATRIX_LAYOUT_COLS, sizeof(uint64_t)),
		.k = layout_attr(a_layout, ta == CUBLAS_OP_N ? CUBLASLT_MATRIX_LAYOUT_COLS : CUBLASLT_MATRIX_LAYOUT_ROWS,
				 sizeof(uint64_t)),
		.batch = (uint64_t)(int64_t)(batch > 0 ? batch : 1),
		.dtype = (uint8_t)layout_attr(a_layout, CUBLASLT_MATRIX_LAYOUT_TYPE, sizeof(uint32_t)),
		.transa = (uint8_t)ta,
		.transb = (uint8_t)tb,
	});
	r->c.arg0 = (uint64_t)(int64_t)desc_attr(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, -1);
	r->stream = (uint64_t)(uintptr_t)stream;
}

PW_GPU_WRAP(CUBLASLT, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, CUBLASLT, CUBLASLT_MATMUL, 0, cublasLtMatmul,
	    (cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
	     cublasLtMatrixLayout_t al, const void *B, cublasLtMatrixLayout_t bl, const void *beta, const void *C,
	     cublasLtMatrixLayout_t cl, void *D, cublasLtMatrixLayout_t dl, const cublasLtMatmulAlgo_t *algo,
	     void *workspace, size_t workspace_size, cudaStream_t stream),
	    (h, desc, alpha, A, al, B, bl, beta, C, cl, D, dl, algo, workspace, workspace_size, stream),
	    matmul_fields(&r, desc, al, dl, stream))
