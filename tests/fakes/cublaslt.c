/* Fake libcublasLt.so.13: handles, matmul/layout/preference descriptors with the real attribute contract
 * (sizes checked, sizeWritten), one heuristic result, and cublasLtMatmul computed on the CPU
 * (D = alpha * op(A) * op(B) + beta * C, batched, RELU/BIAS epilogues) and timed like cuBLAS.
 * No public CUDA name is called (tests/fakes/README.md): the profiler calls the GetAttribute functions from
 * inside its cublasLtMatmul wrapper, and would count them twice. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "fakeblas.h"
#include "fakegpu.h"

/* The kernel name the activity records show, in the style of cuBLASLt's on a Hopper GPU. */
#define K_LT_MATMUL "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_kernel__5x_cublasLt"

#define LT_HANDLE_MAGIC 0x4c54484eu
#define LT_DESC_MAGIC 0x4c544d44u
#define LT_LAYOUT_MAGIC 0x4c544c41u
#define LT_PREF_MAGIC 0x4c545052u
#define LT_ALGO_MAGIC 0x4c54414cu

struct cublasLtContext {
	uint32_t magic;
};

struct lt_desc {
	uint32_t magic;
	int32_t compute, scale, pointer_mode, transa, transb, transc, fill_mode;
	uint32_t epilogue;
	const void *bias;
	int64_t bias_batch_stride;
	void *aux;
	int64_t aux_ld, aux_batch_stride, alpha_vector_batch_stride;
	int32_t sm_count_target;
	const void *a_scale, *b_scale, *c_scale, *d_scale;
	void *amax_d;
	int32_t aux_data_type;
	void *aux_scale, *aux_amax;
	int8_t fast_accum;
	int32_t bias_data_type;
};

struct lt_layout {
	uint32_t magic;
	uint32_t type;
	int32_t order;
	uint64_t rows, cols;
	int64_t ld;
	int32_t batch_count;
	int64_t batch_stride;
	int64_t plane_offset;
	uint32_t batch_mode;
};

struct lt_pref {
	uint32_t magic;
	uint32_t search_mode;
	uint64_t max_workspace;
	uint32_t reduction_mask;
	uint32_t align_a, align_b, align_c, align_d;
	float max_waves;
	uint64_t impl_mask;
};

/* Where an attribute lives in its descriptor and its size: the size the caller must pass. */
struct lt_attr {
	int id;
	size_t off;
	size_t size;
};

#define LT_A(id, type, field) { id, offsetof(type, field), sizeof(((type *)0)->field) }

static const struct lt_attr desc_attrs[] = {
	LT_A(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, struct lt_desc, compute),
	LT_A(CUBLASLT_MATMUL_DESC_SCALE_TYPE, struct lt_desc, scale),
	LT_A(CUBLASLT_MATMUL_DESC_POINTER_MODE, struct lt_desc, pointer_mode),
	LT_A(CUBLASLT_MATMUL_DESC_TRANSA, struct lt_desc, transa),
	LT_A(CUBLASLT_MATMUL_DESC_TRANSB, struct lt_desc, transb),
	LT_A(CUBLASLT_MATMUL_DESC_TRANSC, struct lt_desc, transc),
	LT_A(CUBLASLT_MATMUL_DESC_FILL_MODE, struct lt_desc, fill_mode),
	LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE, struct lt_desc, epilogue),
	LT_A(CUBLASLT_MATMUL_DESC_BIAS_POINTER, struct lt_desc, bias),
	LT_A(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, struct lt_desc, bias_batch_stride),
	LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, struct lt_desc, aux),
	LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, struct lt_desc, aux_ld),
	LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, struct lt_desc, aux_batch_stride),
	LT_A(CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, struct lt_desc, alpha_vector_batch_stride),
	LT_A(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, struct lt_desc, sm_count_target),
	LT_A(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, struct lt_desc, a_scale),
	LT_A(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, struct lt_desc, b_scale),
	LT_A(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, struct lt_desc, c_scale),
	LT_A(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, struct lt_desc, d_scale),
	LT_A(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, struct lt_desc, amax_d),
	LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, struct lt_desc, aux_data_type),
	LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER, struct lt_desc, aux_scale),
	LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, struct lt_desc, aux_amax),
	LT_A(CUBLASLT_MATMUL_DESC_FAST_ACCUM, struct lt_desc, fast_accum),
	LT_A(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, struct lt_desc, bias_data_type),
};

static const struct lt_attr layout_attrs[] = {
	LT_A(CUBLASLT_MATRIX_LAYOUT_TYPE, struct lt_layout, type),
	LT_A(CUBLASLT_MATRIX_LAYOUT_ORDER, struct lt_layout, order),
	LT_A(CUBLASLT_MATRIX_LAYOUT_ROWS, struct lt_layout, rows),
	LT_A(CUBLASLT_MATRIX_LAYOUT_COLS, struct lt_layout, cols),
	LT_A(CUBLASLT_MATRIX_LAYOUT_LD, struct lt_layout, ld),
	LT_A(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, struct lt_layout, batch_count),
	LT_A(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, struct lt_layout, batch_stride),
	LT_A(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, struct lt_layout, plane_offset),
	LT_A(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, struct lt_layout, batch_mode),
};

static const struct lt_attr pref_attrs[] = {
	LT_A(CUBLASLT_MATMUL_PREF_SEARCH_MODE, struct lt_pref, search_mode),
	LT_A(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, struct lt_pref, max_workspace),
	LT_A(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, struct lt_pref, reduction_mask),
	LT_A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, struct lt_pref, align_a),
	LT_A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, struct lt_pref, align_b),
	LT_A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, struct lt_pref, align_c),
	LT_A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, struct lt_pref, align_d),
	LT_A(CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, struct lt_pref, max_waves),
	LT_A(CUBLASLT_MATMUL_PREF_IMPL_MASK, struct lt_pref, impl_mask),
};

#define LT_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct lt_attr *attr_find(const struct lt_attr *table, size_t n, int id)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].id == id)
			return &table[i];
	return NULL;
}

/* Set: buf non-NULL and sizeInBytes exactly the attribute's size, else CUBLAS_STATUS_INVALID_VALUE. */
static cublasStatus_t attr_set(void *obj, const struct lt_attr *table, size_t n, int id, const void *buf,
			       size_t size)
{
	const struct lt_attr *a = attr_find(table, n, id);

	if (a == NULL || buf == NULL || size != a->size)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy((char *)obj + a->off, buf, size);
	return CUBLAS_STATUS_SUCCESS;
}

/* Get: with sizeInBytes 0, *sizeWritten gets the size needed (sizeWritten NULL is INVALID_VALUE); else buf
 * non-NULL and sizeInBytes exactly the attribute's size, and *sizeWritten (if given) the bytes written. */
static cublasStatus_t attr_get(const void *obj, const struct lt_attr *table, size_t n, int id, void *buf,
			       size_t size, size_t *written)
{
	const struct lt_attr *a = attr_find(table, n, id);

	if (a == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (size == 0) {
		if (written == NULL)
			return CUBLAS_STATUS_INVALID_VALUE;
		*written = a->size;
		return CUBLAS_STATUS_SUCCESS;
	}
	if (buf == NULL || size != a->size)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(buf, (const char *)obj + a->off, a->size);
	if (written != NULL)
		*written = a->size;
	return CUBLAS_STATUS_SUCCESS;
}

static struct lt_desc *desc_of(cublasLtMatmulDesc_t d)
{
	struct lt_desc *p = (struct lt_desc *)(void *)d;

	return p != NULL && p->magic == LT_DESC_MAGIC ? p : NULL;
}

static struct lt_layout *layout_of(cublasLtMatrixLayout_t l)
{
	struct lt_layout *p = (struct lt_layout *)(void *)l;

	return p != NULL && p->magic == LT_LAYOUT_MAGIC ? p : NULL;
}

static struct lt_pref *pref_of(cublasLtMatmulPreference_t pr)
{
	struct lt_pref *p = (struct lt_pref *)(void *)pr;

	return p != NULL && p->magic == LT_PREF_MAGIC ? p : NULL;
}

static int handle_ok(cublasLtHandle_t h)
{
	return h != NULL && h->magic == LT_HANDLE_MAGIC;
}

/* ---- handles ---- */

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle)
{
	struct cublasLtContext *h;

	if (lightHandle == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (fakegpu_device_count() == 0)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return CUBLAS_STATUS_ALLOC_FAILED;
	h->magic = LT_HANDLE_MAGIC;
	*lightHandle = h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle)
{
	if (!handle_ok(lightHandle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	lightHandle->magic = 0;
	free(lightHandle);
	return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void)
{
	return CUBLAS_VERSION;
}

size_t cublasLtGetCudartVersion(void)
{
	return CUDART_VERSION;
}

#define LT_STATUS(X)                                                                  \
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

const char *cublasLtGetStatusName(cublasStatus_t status)
{
#define LT_NAME(code, text) case code: return #code;
	switch (status) {
	LT_STATUS(LT_NAME)
	default: return "CUBLAS_STATUS_UNKNOWN";
	}
#undef LT_NAME
}

const char *cublasLtGetStatusString(cublasStatus_t status)
{
#define LT_STR(code, text) case code: return text;
	switch (status) {
	LT_STATUS(LT_STR)
	default: return "unknown error";
	}
#undef LT_STR
}

/* ---- descriptors ---- */

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc, cublasComputeType_t computeType,
					cudaDataType_t scaleType)
{
	struct lt_desc *d;

	if (matmulDesc == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return CUBLAS_STATUS_ALLOC_FAILED;
	d->magic = LT_DESC_MAGIC;
	d->compute = computeType;
	d->scale = scaleType;
	d->pointer_mode = CUBLASLT_POINTER_MODE_HOST;
	d->transa = d->transb = d->transc = CUBLAS_OP_N;
	d->fill_mode = CUBLAS_FILL_MODE_FULL;
	d->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
	d->aux_data_type = -1;
	d->bias_data_type = -1;
	*matmulDesc = (cublasLtMatmulDesc_t)(void *)d;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
	struct lt_desc *d = desc_of(matmulDesc);

	if (d == NULL)
		return matmulDesc == NULL ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
	d->magic = 0;
	free(d);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
					      const void *buf, size_t sizeInBytes)
{
	struct lt_desc *d = desc_of(matmulDesc);

	if (d == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	return attr_set(d, desc_attrs, LT_COUNT(desc_attrs), attr, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
					      void *buf, size_t sizeInBytes, size_t *sizeWritten)
{
	struct lt_desc *d = desc_of(matmulDesc);

	if (d == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	return attr_get(d, desc_attrs, LT_COUNT(desc_attrs), attr, buf, sizeInBytes, sizeWritten);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type, uint64_t rows,
					  uint64_t cols, int64_t ld)
{
	struct lt_layout *l;

	if (matLayout == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return CUBLAS_STATUS_ALLOC_FAILED;
	*l = (struct lt_layout){ .magic = LT_LAYOUT_MAGIC, .type = (uint32_t)type, .order = CUBLASLT_ORDER_COL,
				 .rows = rows, .cols = cols, .ld = ld, .batch_count = 1 };
	*matLayout = (cublasLtMatrixLayout_t)(void *)l;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout)
{
	struct lt_layout *l = layout_of(matLayout);

	if (l == NULL)
		return matLayout == NULL ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
	l->magic = 0;
	free(l);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout, cublasLtMatrixLayoutAttribute_t attr,
						const void *buf, size_t sizeInBytes)
{
	struct lt_layout *l = layout_of(matLayout);

	if (l == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	return attr_set(l, layout_attrs, LT_COUNT(layout_attrs), attr, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout, cublasLtMatrixLayoutAttribute_t attr,
						void *buf, size_t sizeInBytes, size_t *sizeWritten)
{
	struct lt_layout *l = layout_of(matLayout);

	if (l == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	return attr_get(l, layout_attrs, LT_COUNT(layout_attrs), attr, buf, sizeInBytes, sizeWritten);
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
	struct lt_pref *p;

	if (pref == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return CUBLAS_STATUS_ALLOC_FAILED;
	*p = (struct lt_pref){ .magic = LT_PREF_MAGIC, .search_mode = CUBLASLT_SEARCH_BEST_FIT,
			       .reduction_mask = CUBLASLT_REDUCTION_SCHEME_MASK, .align_a = 256, .align_b = 256,
			       .align_c = 256, .align_d = 256, .impl_mask = UINT64_MAX };
	*pref = (cublasLtMatmulPreference_t)(void *)p;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
	struct lt_pref *p = pref_of(pref);

	if (p == NULL)
		return pref == NULL ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
	p->magic = 0;
	free(p);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
						    cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
						    size_t sizeInBytes)
{
	struct lt_pref *p = pref_of(pref);

	if (p == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	return attr_set(p, pref_attrs, LT_COUNT(pref_attrs), attr, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
						    cublasLtMatmulPreferenceAttributes_t attr, void *buf,
						    size_t sizeInBytes, size_t *sizeWritten)
{
	struct lt_pref *p = pref_of(pref);

	if (p == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	return attr_get(p, pref_attrs, LT_COUNT(pref_attrs), attr, buf, sizeInBytes, sizeWritten);
}

/* ---- matmul ---- */

static int lt_op_ok(int32_t op)
{
	return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

/* The problem the descriptors describe, checked as cublasLtMatmul checks it: shapes and leading dimensions
 * (INVALID_VALUE), types, orders and epilogues the fake does not do (NOT_SUPPORTED). Fills g (but its
 * pointers and scalars) and *batch. */
static cublasStatus_t lt_problem(const struct lt_desc *d, const struct lt_layout *a, const struct lt_layout *b,
				 const struct lt_layout *c, const struct lt_layout *dd, struct fb_gemm *g,
				 int64_t *batch)
{
	cudaDataType scale;
	uint64_t k;
	uint32_t epi = d->epilogue;

	if (!lt_op_ok(d->transa) || !lt_op_ok(d->transb) || d->transc != CUBLAS_OP_N)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (a->order != CUBLASLT_ORDER_COL || b->order != CUBLASLT_ORDER_COL || c->order != CUBLASLT_ORDER_COL ||
	    dd->order != CUBLASLT_ORDER_COL)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	k = d->transa == CUBLAS_OP_N ? a->cols : a->rows;
	if ((d->transa == CUBLAS_OP_N ? a->rows : a->cols) != dd->rows ||
	    (d->transb == CUBLAS_OP_N ? b->rows : b->cols) != k ||
	    (d->transb == CUBLAS_OP_N ? b->cols : b->rows) != dd->cols || c->rows != dd->rows || c->cols != dd->cols)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (a->ld < (int64_t)(a->rows ? a->rows : 1) || b->ld < (int64_t)(b->rows ? b->rows : 1) ||
	    c->ld < (int64_t)(c->rows ? c->rows : 1) || dd->ld < (int64_t)(dd->rows ? dd->rows : 1))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (dd->batch_count < 1 || a->batch_count != dd->batch_count || b->batch_count != dd->batch_count ||
	    c->batch_count != dd->batch_count)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!fb_types_ok((cublasComputeType_t)d->compute, (cudaDataType)a->type, (cudaDataType)b->type,
			 (cudaDataType)c->type, &scale) ||
	    dd->type != c->type || d->scale != (int32_t)scale)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	if (d->pointer_mode != CUBLASLT_POINTER_MODE_HOST && d->pointer_mode != CUBLASLT_POINTER_MODE_DEVICE)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	if (epi != CUBLASLT_EPILOGUE_DEFAULT && epi != CUBLASLT_EPILOGUE_RELU && epi != CUBLASLT_EPILOGUE_BIAS &&
	    epi != CUBLASLT_EPILOGUE_RELU_BIAS)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	*g = (struct fb_gemm){ .ta = (cublasOperation_t)d->transa, .tb = (cublasOperation_t)d->transb,
			       .m = (int64_t)dd->rows, .n = (int64_t)dd->cols, .k = (int64_t)k,
			       .at = (cudaDataType)a->type, .bt = (cudaDataType)b->type, .ct = (cudaDataType)c->type,
			       .dt = (cudaDataType)dd->type, .acc64 = scale == CUDA_R_64F, .lda = a->ld, .ldb = b->ld,
			       .ldc = c->ld, .ldd = dd->ld, .relu = (epi & CUBLASLT_EPILOGUE_RELU) != 0 };
	if (epi & CUBLASLT_EPILOGUE_BIAS) {
		if (d->bias == NULL)
			return CUBLAS_STATUS_INVALID_VALUE;
		g->bias = d->bias;
	}
	*batch = dd->batch_count;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
					      cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
					      cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
					      cublasLtMatmulPreference_t preference, int requestedAlgoCount,
					      cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount)
{
	struct lt_desc *d = desc_of(operationDesc);
	struct lt_layout *a = layout_of(Adesc), *b = layout_of(Bdesc), *c = layout_of(Cdesc), *dd = layout_of(Ddesc);
	struct fb_gemm g;
	int64_t batch;
	cublasStatus_t st;

	if (!handle_ok(lightHandle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (d == NULL || a == NULL || b == NULL || c == NULL || dd == NULL || pref_of(preference) == NULL ||
	    requestedAlgoCount <= 0 || heuristicResultsArray == NULL || returnAlgoCount == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	*returnAlgoCount = 0;
	st = lt_problem(d, a, b, c, dd, &g, &batch);
	if (st != CUBLAS_STATUS_SUCCESS)
		return st;
	memset(&heuristicResultsArray[0], 0, sizeof(heuristicResultsArray[0]));
	heuristicResultsArray[0].algo.data[0] = LT_ALGO_MAGIC;
	heuristicResultsArray[0].workspaceSize = 0;
	heuristicResultsArray[0].state = CUBLAS_STATUS_SUCCESS;
	heuristicResultsArray[0].wavesCount = 1.0f;
	*returnAlgoCount = 1;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
			      const void *A, cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
			      const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
			      cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
			      size_t workspaceSizeInBytes, cudaStream_t stream)
{
	struct lt_desc *d = desc_of(computeDesc);
	struct lt_layout *a = layout_of(Adesc), *b = layout_of(Bdesc), *c = layout_of(Cdesc), *dd = layout_of(Ddesc);
	struct fb_gemm g;
	int64_t batch;
	cudaDataType scale;
	cublasStatus_t st;

	if (!handle_ok(lightHandle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (d == NULL || a == NULL || b == NULL || c == NULL || dd == NULL || alpha == NULL || beta == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (algo != NULL && algo->data[0] != LT_ALGO_MAGIC)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (workspace == NULL && workspaceSizeInBytes != 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	st = lt_problem(d, a, b, c, dd, &g, &batch);
	if (st != CUBLAS_STATUS_SUCCESS)
		return st;
	if (C == D && c->ld != dd->ld)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (g.m == 0 || g.n == 0)
		return CUBLAS_STATUS_SUCCESS;
	if (fakegpu_stream_check(stream) != cudaSuccess)
		return CUBLAS_STATUS_EXECUTION_FAILED;
	fb_types_ok((cublasComputeType_t)d->compute, g.at, g.bt, g.ct, &scale);
	g.alpha = fb_load(alpha, scale, 0);
	g.beta = fb_load(beta, scale, 0);
	for (int64_t i = 0; i < batch; i++) {
		g.A = (const char *)A + i * a->batch_stride * (int64_t)fb_type_size(g.at);
		g.B = (const char *)B + i * b->batch_stride * (int64_t)fb_type_size(g.bt);
		g.C = (const char *)C + i * c->batch_stride * (int64_t)fb_type_size(g.ct);
		g.D = (char *)D + i * dd->batch_stride * (int64_t)fb_type_size(g.dt);
		fb_gemm(&g);
	}
	if (fakegpu_enqueue_named(stream, fb_gemm_ns(2.0 * (double)g.m * (double)g.n * (double)g.k * (double)batch),
				  K_LT_MATMUL) != cudaSuccess)
		return CUBLAS_STATUS_EXECUTION_FAILED;
	return CUBLAS_STATUS_SUCCESS;
}
