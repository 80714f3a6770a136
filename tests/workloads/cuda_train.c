/* cuda_train: a training loop written against the CUDA runtime, cuBLAS, cuBLASLt, cuDNN and NCCL, linked
 * as a real program links against them. With the fake libraries (tests/fakes) it runs without a GPU; the
 * profiler's GPU tests run it and compare the profiler's report with what it says it did.
 *
 *     cuda_train [--steps N] [--oom] [--bad-launch]
 *
 * It counts its own calls and prints, at the end, one `expect ...` line per figure a report should hold
 * (calls per API name, copies per direction, GEMM shapes and flops, collectives, allocation peaks, kernel
 * launches), plus `gemm check ok` (one cuBLAS product checked on the CPU) and `checksum <hex>` of the final
 * weights, which must not change under the profiler.
 *
 * The "kernels" are host functions with a kernel's signature: their addresses are what cudaLaunchKernel
 * takes, and their names (exported with -rdynamic) are what cudaFuncGetName and the profiler report. The
 * fake runtime times them and never calls them. Exit status 0 on success, 1 on any unexpected result. */
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

/* ---- the kernels (host stand-ins, never called by the fakes) ---- */

void fwd_kernel(const float *x, float *y, int n);
void bwd_kernel(const float *y, const float *dy, float *dx, int n);
void sgd_kernel(float *w, float *momentum, const float *grad, float lr, int n);

void fwd_kernel(const float *x, float *y, int n)
{
	for (int i = 0; i < n; i++)
		y[i] = x[i] > 0 ? x[i] : 0;
}

void bwd_kernel(const float *y, const float *dy, float *dx, int n)
{
	for (int i = 0; i < n; i++)
		dx[i] = y[i] > 0 ? dy[i] : 0;
}

void sgd_kernel(float *w, float *momentum, const float *grad, float lr, int n)
{
	for (int i = 0; i < n; i++) {
		momentum[i] = 0.9f * momentum[i] + grad[i];
		w[i] -= lr * momentum[i];
	}
}

/* ---- what the program did, counted as it goes ---- */

#define MAX_ENTRIES 128

static struct counter {
	const char *name;
	long count;
} g_calls[MAX_ENTRIES], g_launches[8];
static int g_ncalls, g_nlaunches;

static struct gemm_shape {
	const char *api;
	int m, n, k, batch;
	long count;
} g_gemms[16];
static int g_ngemms;
static unsigned long long g_flops;

static struct {
	long count;
	unsigned long long bytes;
} g_copies[4]; /* by cudaMemcpyKind: HtoH, HtoD, DtoH, DtoD */

static struct {
	const char *api;
	long count;
	unsigned long long bytes;
} g_colls[4];
static int g_ncolls;

static unsigned long long g_dev_live, g_dev_peak, g_pin_live, g_pin_peak;
static long g_dev_allocs;

static void bump(struct counter *table, int *n, int cap, const char *name)
{
	for (int i = 0; i < *n; i++) {
		if (strcmp(table[i].name, name) == 0) {
			table[i].count++;
			return;
		}
	}
	if (*n == cap) {
		fprintf(stderr, "cuda_train: counter table full\n");
		exit(1);
	}
	table[*n].name = name;
	table[(*n)++].count = 1;
}

static void count_call(const char *name)
{
	bump(g_calls, &g_ncalls, MAX_ENTRIES, name);
}

static void fail(const char *what, const char *name, long code, int line)
{
	fprintf(stderr, "cuda_train:%d: %s %s returned %ld\n", line, what, name, code);
	exit(1);
}

static void check_cuda(const char *name, cudaError_t e, int line)
{
	count_call(name);
	if (e != cudaSuccess)
		fail("CUDA", name, e, line);
}

static void check_cublas(const char *name, cublasStatus_t s, int line)
{
	count_call(name);
	if (s != CUBLAS_STATUS_SUCCESS)
		fail("cuBLAS", name, s, line);
}

static void check_cudnn(const char *name, cudnnStatus_t s, int line)
{
	count_call(name);
	if (s != CUDNN_STATUS_SUCCESS)
		fail("cuDNN", name, s, line);
}

static void check_nccl(const char *name, ncclResult_t r, int line)
{
	count_call(name);
	if (r != ncclSuccess)
		fail("NCCL", name, r, line);
}

/* Each call is named by the function called, so the counted name is exactly the library's. */
#define CUDA(fn, ...) check_cuda(#fn, fn(__VA_ARGS__), __LINE__)
#define CUBLAS(fn, ...) check_cublas(#fn, fn(__VA_ARGS__), __LINE__)
#define CUDNN(fn, ...) check_cudnn(#fn, fn(__VA_ARGS__), __LINE__)
#define NCCL(fn, ...) check_nccl(#fn, fn(__VA_ARGS__), __LINE__)

static void note_gemm(const char *api, int m, int n, int k, int batch)
{
	int i;

	for (i = 0; i < g_ngemms; i++) {
		struct gemm_shape *g = &g_gemms[i];

		if (strcmp(g->api, api) == 0 && g->m == m && g->n == n && g->k == k && g->batch == batch)
			break;
	}
	if (i == g_ngemms)
		g_gemms[g_ngemms++] = (struct gemm_shape){ .api = api, .m = m, .n = n, .k = k, .batch = batch };
	g_gemms[i].count++;
	g_flops += 2ull * (unsigned long long)m * (unsigned long long)n * (unsigned long long)k * (unsigned long long)batch;
}

static void note_coll(const char *api, unsigned long long bytes)
{
	int i;

	for (i = 0; i < g_ncolls && strcmp(g_colls[i].api, api) != 0; i++)
		;
	if (i == g_ncolls)
		g_colls[g_ncolls++].api = api;
	g_colls[i].count++;
	g_colls[i].bytes += bytes;
}

static void copy_sync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
	CUDA(cudaMemcpy, dst, src, bytes, kind);
	g_copies[kind].count++;
	g_copies[kind].bytes += bytes;
}

static void copy_async(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t s)
{
	CUDA(cudaMemcpyAsync, dst, src, bytes, kind, s);
	g_copies[kind].count++;
	g_copies[kind].bytes += bytes;
}

static void dev_track(long long delta)
{
	g_dev_live += (unsigned long long)delta;
	if (g_dev_live > g_dev_peak)
		g_dev_peak = g_dev_live;
}

static void pin_track(long long delta)
{
	g_pin_live += (unsigned long long)delta;
	if (g_pin_live > g_pin_peak)
		g_pin_peak = g_pin_live;
}

static float *dev_alloc(size_t bytes)
{
	void *p;

	CUDA(cudaMalloc, &p, bytes);
	dev_track((long long)bytes);
	g_dev_allocs++;
	return p;
}

static void dev_free(void *p, size_t bytes)
{
	CUDA(cudaFree, p);
	dev_track(-(long long)bytes);
}

static void launch(const char *name, const void *kernel, unsigned int grid, unsigned int block, void **args,
		   cudaStream_t s)
{
	dim3 g = { grid, 1, 1 }, b = { block, 1, 1 };

	CUDA(cudaLaunchKernel, kernel, g, b, args, 0, s);
	bump(g_launches, &g_nlaunches, 8, name);
}

/* A kernel is launched by its address; its symbol is the name counted. */
#define LAUNCH(kernel, grid, block, args, s) launch(#kernel, (const void *)kernel, grid, block, args, s)

/* ---- the model's shapes ---- */

enum {
	IN = 256,  /* input features */
	HID = 128, /* hidden units: W is HID x IN */
	OUT = 32,  /* outputs: V is OUT x HID */
	BATCH = 64,
	/* attention-like batched product: BATCHED x (SQ x HD) * (HD x SQ) */
	SQ = 16,
	HD = 32,
	BATCHED = 4,
	/* cuBLASLt product: LT_M x LT_K * LT_K x LT_N */
	LT_M = 64,
	LT_N = 64,
	LT_K = 128,
	/* convolution block: CN x CC x CH x CW images, CK filters of CR x CR, then batch norm and ReLU */
	CN = 8,
	CC = 3,
	CH = 32,
	CW = 32,
	CK = 16,
	CR = 3,
	CLASSES = 10,
	LOSS = 16,   /* floats of loss copied back each step */
	LABELS = 64, /* labels copied in each step (ints) */
};

#define CX_ELEMS (CN * CC * CH * CW)
#define CW_ELEMS (CK * CC * CR * CR)
#define CY_ELEMS (CN * CK * CH * CW)
#define BN_ELEMS (CK * 8) /* scale, bias, running mean/var, saved mean/inv var, their two gradients */
#define LOGIT_ELEMS (CN * CLASSES)
#define CONV_ELEMS (2 * CX_ELEMS + 2 * CW_ELEMS + 5 * CY_ELEMS + BN_ELEMS + 2 * LOGIT_ELEMS)
#define WORKSPACE_BYTES (192 * 1024)
#define INIT_TMP_BYTES (1024 * 1024)
#define LABELS_HOST_BYTES 4096

static const float one = 1.0f, zero = 0.0f, neg_lr = -1.0f / 4096;

struct model {
	cudaStream_t stream;
	cudaEvent_t ev_start, ev_end;
	cublasHandle_t blas;
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t lt_desc;
	cublasLtMatrixLayout_t lt_a, lt_b, lt_c, lt_d;
	cublasLtMatmulPreference_t lt_pref;
	cublasLtMatmulHeuristicResult_t lt_algo;
	cudnnHandle_t dnn;
	cudnnTensorDescriptor_t x_desc, y_desc, bn_desc, logit_desc;
	cudnnFilterDescriptor_t w_desc;
	cudnnConvolutionDescriptor_t conv_desc;
	cudnnBackendDescriptor_t bk[16];
	int nbk;
	cudnnBackendDescriptor_t plan, pack;
	ncclComm_t comm;

	/* device memory */
	float *w, *v, *grads, *batch, *act, *attn, *ltbuf, *conv, *loss;
	int *labels;
	void *workspace;
	/* host memory */
	float *h_batch;  /* pinned (cudaMallocHost) */
	int *h_labels;   /* registered (cudaHostRegister) */
	float *h_loss;   /* pageable */
	float *h_w_init; /* pageable, kept for the CPU check */
	float *h_check;  /* pageable */
};

/* Offsets (floats) of the convolution block's tensors in m->conv. */
enum {
	OFF_CX = 0,
	OFF_CW = OFF_CX + CX_ELEMS,
	OFF_CY = OFF_CW + CW_ELEMS,
	OFF_BY = OFF_CY + CY_ELEMS,
	OFF_BDY = OFF_BY + CY_ELEMS,
	OFF_CDY = OFF_BDY + CY_ELEMS,
	OFF_CDX = OFF_CDY + CY_ELEMS,
	OFF_CDW = OFF_CDX + CX_ELEMS,
	OFF_BN = OFF_CDW + CW_ELEMS,
	OFF_LOGIT_IN = OFF_BN + BN_ELEMS,
	OFF_LOGIT_OUT = OFF_LOGIT_IN + LOGIT_ELEMS,
	OFF_GRAPH_OUT = OFF_LOGIT_OUT + LOGIT_ELEMS,
};

/* ---- cuDNN backend graph: convolution forward, then ReLU (pointwise), as one plan ---- */

static cudnnBackendDescriptor_t bk_new(struct model *m, cudnnBackendDescriptorType_t type)
{
	cudnnBackendDescriptor_t d;

	CUDNN(cudnnBackendCreateDescriptor, type, &d);
	m->bk[m->nbk++] = d;
	return d;
}

static void bk_set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
		   int64_t count, const void *values)
{
	CUDNN(cudnnBackendSetAttribute, d, name, type, count, values);
}

static cudnnBackendDescriptor_t bk_tensor(struct model *m, int64_t uid, const int64_t dims[4], bool is_virtual)
{
	cudnnBackendDescriptor_t t = bk_new(m, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
	int64_t strides[4] = { dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1 }, align = 16;
	cudnnDataType_t f32 = CUDNN_DATA_FLOAT;

	bk_set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
	bk_set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
	bk_set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
	bk_set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
	bk_set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
	bk_set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
	CUDNN(cudnnBackendFinalize, t);
	return t;
}

enum { UID_X = 1, UID_W = 2, UID_Y = 3, UID_Z = 4 };

static void build_graph(struct model *m)
{
	const int64_t xd[4] = { CN, CC, CH, CW }, wd[4] = { CK, CC, CR, CR }, yd[4] = { CN, CK, CH, CW };
	const int64_t ones[2] = { 1, 1 }, pads[2] = { 1, 1 }, spatial = 2, engine_index = 0;
	cudnnBackendDescriptor_t x = bk_tensor(m, UID_X, xd, false), w = bk_tensor(m, UID_W, wd, false);
	cudnnBackendDescriptor_t y = bk_tensor(m, UID_Y, yd, true), z = bk_tensor(m, UID_Z, yd, false);
	cudnnBackendDescriptor_t conv, conv_op, pw, pw_op, graph, engine, cfg, ops[2];
	cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
	cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
	cudnnPointwiseMode_t relu = CUDNN_POINTWISE_RELU_FWD;
	float alpha = 1.0f, beta = 0.0f;
	int64_t ws = -1, n = 0, uids[3] = { UID_X, UID_W, UID_Z };
	void *ptrs[3] = { m->conv + OFF_CX, m->conv + OFF_CW, m->conv + OFF_GRAPH_OUT };

	conv = bk_new(m, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
	bk_set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
	bk_set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
	bk_set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
	bk_set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, ones);
	bk_set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, ones);
	bk_set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pads);
	bk_set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pads);
	CUDNN(cudnnBackendFinalize, conv);

	conv_op = bk_new(m, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
	bk_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
	bk_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
	bk_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
	bk_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
	bk_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
	bk_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
	CUDNN(cudnnBackendFinalize, conv_op);

	pw = bk_new(m, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
	bk_set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &relu);
	bk_set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f32);
	CUDNN(cudnnBackendFinalize, pw);

	pw_op = bk_new(m, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
	bk_set(pw_op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
	bk_set(pw_op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
	bk_set(pw_op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &z);
	CUDNN(cudnnBackendFinalize, pw_op);

	graph = bk_new(m, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	ops[0] = conv_op;
	ops[1] = pw_op;
	bk_set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 2, ops);
	bk_set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &m->dnn);
	CUDNN(cudnnBackendFinalize, graph);

	engine = bk_new(m, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
	bk_set(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
	bk_set(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &engine_index);
	CUDNN(cudnnBackendFinalize, engine);

	cfg = bk_new(m, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
	bk_set(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine);
	CUDNN(cudnnBackendFinalize, cfg);

	m->plan = bk_new(m, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
	bk_set(m->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &m->dnn);
	bk_set(m->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
	CUDNN(cudnnBackendFinalize, m->plan);
	CUDNN(cudnnBackendGetAttribute, m->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws);
	if (n != 1 || ws < 0 || ws > WORKSPACE_BYTES) {
		fprintf(stderr, "cuda_train: plan workspace %lld bytes\n", (long long)ws);
		exit(1);
	}

	m->pack = bk_new(m, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
	bk_set(m->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
	bk_set(m->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
	bk_set(m->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &m->workspace);
	CUDNN(cudnnBackendFinalize, m->pack);
}

/* ---- set-up and tear-down ---- */

static void setup_libraries(struct model *m)
{
	int ndev, n, c, h, w;
	struct cudaDeviceProp prop;
	uint64_t ws = WORKSPACE_BYTES;
	int returned = 0;
	size_t bytes;
	const char *kname = NULL;
	ncclUniqueId id;

	CUDA(cudaGetDeviceCount, &ndev);
	CUDA(cudaSetDevice, 0);
	CUDA(cudaGetDeviceProperties, &prop, 0);
	printf("device 0: %s, %zu bytes\n", prop.name, prop.totalGlobalMem);
	CUDA(cudaFuncGetName, &kname, (const void *)fwd_kernel);
	if (strcmp(kname, "fwd_kernel") != 0) {
		fprintf(stderr, "cuda_train: cudaFuncGetName gave %s\n", kname);
		exit(1);
	}
	CUDA(cudaStreamCreateWithFlags, &m->stream, cudaStreamDefault);
	CUDA(cudaEventCreate, &m->ev_start);
	CUDA(cudaEventCreateWithFlags, &m->ev_end, cudaEventBlockingSync);

	CUBLAS(cublasCreate_v2, &m->blas);
	CUBLAS(cublasSetStream_v2, m->blas, m->stream);

	CUBLAS(cublasLtCreate, &m->lt);
	CUBLAS(cublasLtMatmulDescCreate, &m->lt_desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
	{
		int32_t op = CUBLAS_OP_N;

		CUBLAS(cublasLtMatmulDescSetAttribute, m->lt_desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof(op));
		CUBLAS(cublasLtMatmulDescSetAttribute, m->lt_desc, CUBLASLT_MATMUL_DESC_TRANSB, &op, sizeof(op));
	}
	CUBLAS(cublasLtMatrixLayoutCreate, &m->lt_a, CUDA_R_32F, LT_M, LT_K, LT_M);
	CUBLAS(cublasLtMatrixLayoutCreate, &m->lt_b, CUDA_R_32F, LT_K, LT_N, LT_K);
	CUBLAS(cublasLtMatrixLayoutCreate, &m->lt_c, CUDA_R_32F, LT_M, LT_N, LT_M);
	CUBLAS(cublasLtMatrixLayoutCreate, &m->lt_d, CUDA_R_32F, LT_M, LT_N, LT_M);
	CUBLAS(cublasLtMatmulPreferenceCreate, &m->lt_pref);
	CUBLAS(cublasLtMatmulPreferenceSetAttribute, m->lt_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
	CUBLAS(cublasLtMatmulAlgoGetHeuristic, m->lt, m->lt_desc, m->lt_a, m->lt_b, m->lt_c, m->lt_d, m->lt_pref, 1,
	       &m->lt_algo, &returned);
	if (returned != 1 || m->lt_algo.workspaceSize > WORKSPACE_BYTES) {
		fprintf(stderr, "cuda_train: no cuBLASLt algorithm\n");
		exit(1);
	}

	CUDNN(cudnnCreate, &m->dnn);
	CUDNN(cudnnSetStream, m->dnn, m->stream);
	CUDNN(cudnnCreateTensorDescriptor, &m->x_desc);
	CUDNN(cudnnSetTensor4dDescriptor, m->x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, CN, CC, CH, CW);
	CUDNN(cudnnCreateFilterDescriptor, &m->w_desc);
	CUDNN(cudnnSetFilter4dDescriptor, m->w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CK, CC, CR, CR);
	CUDNN(cudnnCreateConvolutionDescriptor, &m->conv_desc);
	CUDNN(cudnnSetConvolution2dDescriptor, m->conv_desc, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
	CUDNN(cudnnGetConvolution2dForwardOutputDim, m->conv_desc, m->x_desc, m->w_desc, &n, &c, &h, &w);
	if (n != CN || c != CK || h != CH || w != CW) {
		fprintf(stderr, "cuda_train: convolution output %dx%dx%dx%d\n", n, c, h, w);
		exit(1);
	}
	CUDNN(cudnnCreateTensorDescriptor, &m->y_desc);
	CUDNN(cudnnSetTensor4dDescriptor, m->y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w);
	CUDNN(cudnnCreateTensorDescriptor, &m->bn_desc);
	CUDNN(cudnnDeriveBNTensorDescriptor, m->bn_desc, m->y_desc, CUDNN_BATCHNORM_SPATIAL);
	CUDNN(cudnnCreateTensorDescriptor, &m->logit_desc);
	CUDNN(cudnnSetTensor4dDescriptor, m->logit_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, CN, CLASSES, 1, 1);
	CUDNN(cudnnGetConvolutionForwardWorkspaceSize, m->dnn, m->x_desc, m->w_desc, m->conv_desc, m->y_desc,
	      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &bytes);
	if (bytes > WORKSPACE_BYTES)
		fail("cuDNN", "forward workspace", (long)bytes, __LINE__);
	CUDNN(cudnnGetConvolutionBackwardDataWorkspaceSize, m->dnn, m->w_desc, m->y_desc, m->conv_desc, m->x_desc,
	      CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, &bytes);
	if (bytes > WORKSPACE_BYTES)
		fail("cuDNN", "backward data workspace", (long)bytes, __LINE__);
	CUDNN(cudnnGetConvolutionBackwardFilterWorkspaceSize, m->dnn, m->x_desc, m->y_desc, m->conv_desc, m->w_desc,
	      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, &bytes);
	if (bytes > WORKSPACE_BYTES)
		fail("cuDNN", "backward filter workspace", (long)bytes, __LINE__);

	NCCL(ncclGetUniqueId, &id);
	NCCL(ncclCommInitRank, &m->comm, 1, id, 0);
}

/* Small integers, so that products are exact in float and the CPU check can compare bit for bit. */
static float small_int(unsigned int i, unsigned int salt, int span)
{
	return (float)((int)((i * 2654435761u + salt * 40503u) >> 7) % (2 * span + 1) - span);
}

static void setup_memory(struct model *m)
{
	const size_t w_bytes = (size_t)HID * IN * sizeof(float), v_bytes = (size_t)OUT * HID * sizeof(float);
	float *staging, *init_tmp;

	m->w = dev_alloc(w_bytes);
	m->v = dev_alloc(v_bytes);
	m->grads = dev_alloc(2 * w_bytes); /* gradient, then the optimizer's momentum */
	m->batch = dev_alloc((size_t)IN * BATCH * sizeof(float));
	m->act = dev_alloc((size_t)(HID * BATCH + OUT * BATCH + IN * BATCH) * sizeof(float));
	m->attn = dev_alloc((size_t)BATCHED * (SQ * HD + HD * SQ + SQ * SQ) * sizeof(float));
	m->ltbuf = dev_alloc((size_t)(LT_M * LT_K + LT_K * LT_N + LT_M * LT_N) * sizeof(float));
	m->conv = dev_alloc((size_t)CONV_ELEMS * sizeof(float));
	m->loss = dev_alloc(LOSS * sizeof(float));
	m->labels = (int *)dev_alloc(LABELS * sizeof(int));

	/* Initial weights: through pinned staging memory and a temporary device buffer, as a loader would. */
	m->h_w_init = malloc(w_bytes);
	if (m->h_w_init == NULL)
		exit(1);
	CUDA(cudaHostAlloc, (void **)&staging, w_bytes + v_bytes, cudaHostAllocDefault);
	pin_track((long long)(w_bytes + v_bytes));
	for (unsigned int i = 0; i < HID * IN; i++)
		staging[i] = m->h_w_init[i] = small_int(i, 1, 2);
	for (unsigned int i = 0; i < OUT * HID; i++)
		staging[HID * IN + i] = small_int(i, 2, 2);
	init_tmp = dev_alloc(INIT_TMP_BYTES);
	copy_sync(init_tmp, staging, w_bytes + v_bytes, cudaMemcpyHostToDevice);
	copy_sync(m->w, init_tmp, w_bytes, cudaMemcpyDeviceToDevice);
	copy_sync(m->v, init_tmp + HID * IN, v_bytes, cudaMemcpyDeviceToDevice);
	dev_free(init_tmp, INIT_TMP_BYTES);
	CUDA(cudaFreeHost, staging);
	pin_track(-(long long)(w_bytes + v_bytes));

	CUDA(cudaMemset, m->grads, 0, 2 * w_bytes);
	CUDA(cudaMemset, m->act, 0, (size_t)(HID * BATCH + OUT * BATCH + IN * BATCH) * sizeof(float));
	CUDA(cudaMemset, m->attn, 0, (size_t)BATCHED * (SQ * HD + HD * SQ + SQ * SQ) * sizeof(float));
	CUDA(cudaMemset, m->ltbuf, 0, (size_t)(LT_M * LT_K + LT_K * LT_N + LT_M * LT_N) * sizeof(float));
	CUDA(cudaMemset, m->conv, 0, (size_t)CONV_ELEMS * sizeof(float));
	CUDA(cudaMemset, m->loss, 0, LOSS * sizeof(float));

	CUDA(cudaMallocAsync, &m->workspace, WORKSPACE_BYTES, m->stream);
	dev_track(WORKSPACE_BYTES);
	g_dev_allocs++;
	CUDA(cudaMemsetAsync, m->workspace, 0, WORKSPACE_BYTES, m->stream);

	CUDA(cudaMallocHost, (void **)&m->h_batch, (size_t)IN * BATCH * sizeof(float));
	pin_track((long long)IN * BATCH * sizeof(float));
	m->h_labels = aligned_alloc(4096, LABELS_HOST_BYTES);
	m->h_loss = malloc(LOSS * sizeof(float));
	m->h_check = malloc((size_t)HID * BATCH * sizeof(float));
	if (m->h_labels == NULL || m->h_loss == NULL || m->h_check == NULL)
		exit(1);
	CUDA(cudaHostRegister, m->h_labels, LABELS_HOST_BYTES, cudaHostRegisterDefault);
	pin_track(LABELS_HOST_BYTES);
}

static void teardown(struct model *m)
{
	CUDA(cudaFreeAsync, m->workspace, m->stream);
	dev_track(-(long long)WORKSPACE_BYTES);
	CUDA(cudaStreamSynchronize, m->stream);
	dev_free(m->w, (size_t)HID * IN * sizeof(float));
	dev_free(m->v, (size_t)OUT * HID * sizeof(float));
	dev_free(m->grads, 2 * (size_t)HID * IN * sizeof(float));
	dev_free(m->batch, (size_t)IN * BATCH * sizeof(float));
	dev_free(m->act, (size_t)(HID * BATCH + OUT * BATCH + IN * BATCH) * sizeof(float));
	dev_free(m->attn, (size_t)BATCHED * (SQ * HD + HD * SQ + SQ * SQ) * sizeof(float));
	dev_free(m->ltbuf, (size_t)(LT_M * LT_K + LT_K * LT_N + LT_M * LT_N) * sizeof(float));
	dev_free(m->conv, (size_t)CONV_ELEMS * sizeof(float));
	dev_free(m->loss, LOSS * sizeof(float));
	dev_free(m->labels, LABELS * sizeof(int));
	CUDA(cudaFreeHost, m->h_batch);
	pin_track(-(long long)IN * BATCH * sizeof(float));
	CUDA(cudaHostUnregister, m->h_labels);
	pin_track(-(long long)LABELS_HOST_BYTES);
	free(m->h_labels);
	free(m->h_loss);
	free(m->h_check);
	free(m->h_w_init);

	while (m->nbk > 0)
		CUDNN(cudnnBackendDestroyDescriptor, m->bk[--m->nbk]);
	CUDNN(cudnnDestroyTensorDescriptor, m->x_desc);
	CUDNN(cudnnDestroyTensorDescriptor, m->y_desc);
	CUDNN(cudnnDestroyTensorDescriptor, m->bn_desc);
	CUDNN(cudnnDestroyTensorDescriptor, m->logit_desc);
	CUDNN(cudnnDestroyFilterDescriptor, m->w_desc);
	CUDNN(cudnnDestroyConvolutionDescriptor, m->conv_desc);
	CUDNN(cudnnDestroy, m->dnn);
	CUBLAS(cublasLtMatmulPreferenceDestroy, m->lt_pref);
	CUBLAS(cublasLtMatrixLayoutDestroy, m->lt_a);
	CUBLAS(cublasLtMatrixLayoutDestroy, m->lt_b);
	CUBLAS(cublasLtMatrixLayoutDestroy, m->lt_c);
	CUBLAS(cublasLtMatrixLayoutDestroy, m->lt_d);
	CUBLAS(cublasLtMatmulDescDestroy, m->lt_desc);
	CUBLAS(cublasLtDestroy, m->lt);
	CUBLAS(cublasDestroy_v2, m->blas);
	NCCL(ncclCommDestroy, m->comm);
	CUDA(cudaEventDestroy, m->ev_start);
	CUDA(cudaEventDestroy, m->ev_end);
	CUDA(cudaStreamDestroy, m->stream);
}

/* ---- one training step ---- */

/* Y = W X on the CPU, compared with what cuBLAS computed (exact: small integers). */
static void gemm_check(struct model *m)
{
	copy_sync(m->h_check, m->act, (size_t)HID * BATCH * sizeof(float), cudaMemcpyDeviceToHost);
	for (int j = 0; j < BATCH; j++) {
		for (int i = 0; i < HID; i++) {
			float want = 0;

			for (int l = 0; l < IN; l++)
				want += m->h_w_init[i + l * HID] * m->h_batch[l + j * IN];
			if (m->h_check[i + j * HID] != want) {
				fprintf(stderr, "cuda_train: Y[%d,%d] = %g, want %g\n", i, j, m->h_check[i + j * HID], want);
				exit(1);
			}
		}
	}
	printf("gemm check ok\n");
}

static void step(struct model *m, int s)
{
	float *x = m->batch, *y = m->act, *z = m->act + HID * BATCH, *dx = m->act + HID * BATCH + OUT * BATCH;
	float *dw = m->grads, *momentum = m->grads + HID * IN, *cv = m->conv, *bn = m->conv + OFF_BN;
	float *attn_a = m->attn, *attn_b = m->attn + BATCHED * SQ * HD, *attn_c = m->attn + 2 * BATCHED * SQ * HD;
	float *lt_a = m->ltbuf, *lt_b = m->ltbuf + LT_M * LT_K, *lt_c = m->ltbuf + LT_M * LT_K + LT_K * LT_N;
	int n_act = HID * BATCH, n_w = HID * IN;
	float lr = -neg_lr, ms = 0;
	void *fwd_args[] = { &x, &y, &n_act };
	void *bwd_args[] = { &y, &y, &dx, &n_act };
	void *sgd_args[] = { &m->w, &momentum, &dw, &lr, &n_w };

	CUDA(cudaEventRecord, m->ev_start, m->stream);
	for (unsigned int i = 0; i < IN * BATCH; i++)
		m->h_batch[i] = small_int(i, 100 + (unsigned int)s, 1);
	for (int i = 0; i < LABELS; i++)
		m->h_labels[i] = (i + s) % CLASSES;
	copy_async(m->batch, m->h_batch, (size_t)IN * BATCH * sizeof(float), cudaMemcpyHostToDevice, m->stream);
	copy_async(m->labels, m->h_labels, LABELS * sizeof(int), cudaMemcpyHostToDevice, m->stream);

	/* forward */
	LAUNCH(fwd_kernel, 64, 256, fwd_args, m->stream);
	CUBLAS(cublasSgemm_v2, m->blas, CUBLAS_OP_N, CUBLAS_OP_N, HID, BATCH, IN, &one, m->w, HID, x, IN, &zero, y, HID);
	note_gemm("cublasSgemm_v2", HID, BATCH, IN, 1);
	if (s == 0)
		gemm_check(m);
	CUBLAS(cublasGemmEx, m->blas, CUBLAS_OP_N, CUBLAS_OP_N, OUT, BATCH, HID, &one, m->v, CUDA_R_32F, OUT, y,
	       CUDA_R_32F, HID, &zero, z, CUDA_R_32F, OUT, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	note_gemm("cublasGemmEx", OUT, BATCH, HID, 1);
	CUBLAS(cublasSgemmStridedBatched, m->blas, CUBLAS_OP_N, CUBLAS_OP_N, SQ, SQ, HD, &one, attn_a, SQ, SQ * HD,
	       attn_b, HD, HD * SQ, &zero, attn_c, SQ, SQ * SQ, BATCHED);
	note_gemm("cublasSgemmStridedBatched", SQ, SQ, HD, BATCHED);
	CUBLAS(cublasLtMatmul, m->lt, m->lt_desc, &one, lt_a, m->lt_a, lt_b, m->lt_b, &zero, lt_c, m->lt_c, lt_c,
	       m->lt_d, &m->lt_algo.algo, m->workspace, WORKSPACE_BYTES, m->stream);
	note_gemm("cublasLtMatmul", LT_M, LT_N, LT_K, 1);
	CUDNN(cudnnConvolutionForward, m->dnn, &one, m->x_desc, cv + OFF_CX, m->w_desc, cv + OFF_CW, m->conv_desc,
	      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, m->workspace, WORKSPACE_BYTES, &zero, m->y_desc,
	      cv + OFF_CY);
	CUDNN(cudnnBatchNormalizationForwardTraining, m->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, m->y_desc,
	      cv + OFF_CY, m->y_desc, cv + OFF_BY, m->bn_desc, bn, bn + CK, 0.1, bn + 2 * CK, bn + 3 * CK, 1e-5,
	      bn + 4 * CK, bn + 5 * CK);
	CUDNN(cudnnSoftmaxForward, m->dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, m->logit_desc,
	      cv + OFF_LOGIT_IN, &zero, m->logit_desc, cv + OFF_LOGIT_OUT);

	/* backward: the loss is |Y|^2 / 2, so dY = Y */
	LAUNCH(bwd_kernel, 64, 256, bwd_args, m->stream);
	CUBLAS(cublasSgemm_v2, m->blas, CUBLAS_OP_T, CUBLAS_OP_N, IN, BATCH, HID, &one, m->w, HID, y, HID, &zero, dx, IN);
	note_gemm("cublasSgemm_v2", IN, BATCH, HID, 1);
	CUBLAS(cublasSgemm_v2, m->blas, CUBLAS_OP_N, CUBLAS_OP_T, HID, IN, BATCH, &one, y, HID, x, IN, &zero, dw, HID);
	note_gemm("cublasSgemm_v2", HID, IN, BATCH, 1);
	CUDNN(cudnnConvolutionBackwardData, m->dnn, &one, m->w_desc, cv + OFF_CW, m->y_desc, cv + OFF_CDY, m->conv_desc,
	      CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, m->workspace, WORKSPACE_BYTES, &zero, m->x_desc, cv + OFF_CDX);
	CUDNN(cudnnConvolutionBackwardFilter, m->dnn, &one, m->x_desc, cv + OFF_CX, m->y_desc, cv + OFF_CDY,
	      m->conv_desc, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, m->workspace, WORKSPACE_BYTES, &zero, m->w_desc,
	      cv + OFF_CDW);
	CUDNN(cudnnBatchNormalizationBackward, m->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, m->y_desc,
	      cv + OFF_CY, m->y_desc, cv + OFF_BDY, m->y_desc, cv + OFF_CDY, m->bn_desc, bn, bn + 6 * CK, bn + 7 * CK,
	      1e-5, bn + 4 * CK, bn + 5 * CK);
	CUDNN(cudnnBackendExecute, m->dnn, m->plan, m->pack);
	NCCL(ncclAllReduce, dw, dw, (size_t)HID * IN, ncclFloat, ncclSum, m->comm, m->stream);
	note_coll("ncclAllReduce", (unsigned long long)HID * IN * sizeof(float));

	/* optimizer: the SGD kernel, and the same update through cuBLAS (W += -lr dW) so the weights move */
	LAUNCH(sgd_kernel, 128, 256, sgd_args, m->stream);
	CUBLAS(cublasSgeam, m->blas, CUBLAS_OP_N, CUBLAS_OP_N, HID, IN, &one, m->w, HID, &neg_lr, dw, HID, m->w, HID);

	/* loss, back on the host (pageable memory: a synchronous copy on the legacy stream, which waits for
	 * this blocking stream's work) */
	copy_sync(m->h_loss, m->loss, LOSS * sizeof(float), cudaMemcpyDeviceToHost);
	CUDA(cudaEventRecord, m->ev_end, m->stream);
	CUDA(cudaStreamSynchronize, m->stream);
	CUDA(cudaEventElapsedTime, &ms, m->ev_start, m->ev_end);
	printf("step %d loss %g gpu %.3f ms\n", s, (double)m->h_loss[0], (double)ms);
}

/* ---- the two provoked failures ---- */

static void provoke_oom(void)
{
	const char *env = getenv("FAKEGPU_MEM_BYTES");
	unsigned long long mem = env && *env ? strtoull(env, NULL, 0) : 1024ull * 1024 * 1024;
	void *p = NULL;
	cudaError_t e;

	count_call("cudaMalloc");
	e = cudaMalloc(&p, (size_t)mem + 1);
	printf("oom result %d\n", (int)e);
	if (e != cudaErrorMemoryAllocation) {
		fprintf(stderr, "cuda_train: cudaMalloc of %llu bytes returned %d\n", mem + 1, (int)e);
		exit(1);
	}
}

static void provoke_bad_launch(cudaStream_t s)
{
	dim3 grid = { 64, 1, 1 }, block = { 2048, 1, 1 };
	cudaError_t e;
	cudaError_t last;

	/* A call, not a launch: the report counts failed launch calls as calls with an error only. */
	count_call("cudaLaunchKernel");
	e = cudaLaunchKernel((const void *)fwd_kernel, grid, block, NULL, 0, s);
	count_call("cudaGetLastError");
	last = cudaGetLastError();
	if (e != cudaErrorInvalidConfiguration || last != cudaErrorInvalidConfiguration) {
		fprintf(stderr, "cuda_train: launch of 2048 threads per block returned %d, last error %d\n", (int)e,
			(int)last);
		exit(1);
	}
}

/* ---- report ---- */

static void print_expectations(int oom, int bad_launch)
{
	static const char *const dirs[4] = { "HtoH", "HtoD", "DtoH", "DtoD" };

	for (int i = 0; i < g_ncalls; i++)
		printf("expect call %s %ld\n", g_calls[i].name, g_calls[i].count);
	for (int d = 0; d < 4; d++)
		if (g_copies[d].count > 0)
			printf("expect copy %s %ld %llu\n", dirs[d], g_copies[d].count, g_copies[d].bytes);
	for (int i = 0; i < g_ngemms; i++)
		printf("expect gemm %s %d %d %d %d %ld\n", g_gemms[i].api, g_gemms[i].m, g_gemms[i].n, g_gemms[i].k,
		       g_gemms[i].batch, g_gemms[i].count);
	printf("expect flops %llu\n", g_flops);
	for (int i = 0; i < g_ncolls; i++)
		printf("expect coll %s %ld %llu\n", g_colls[i].api, g_colls[i].count, g_colls[i].bytes);
	printf("expect alloc device_peak_bytes %llu\n", g_dev_peak);
	printf("expect alloc device_allocs %ld\n", g_dev_allocs);
	printf("expect alloc host_pinned_peak_bytes %llu\n", g_pin_peak);
	for (int i = 0; i < g_nlaunches; i++)
		printf("expect launch %s %ld\n", g_launches[i].name, g_launches[i].count);
	if (oom)
		printf("expect error cudaMalloc %d 1\n", (int)cudaErrorMemoryAllocation);
	if (bad_launch)
		printf("expect error cudaLaunchKernel %d 1\n", (int)cudaErrorInvalidConfiguration);
}

/* FNV-1a over the bytes. */
static uint64_t checksum(const void *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
	return h;
}

static void usage(void)
{
	fprintf(stderr, "usage: cuda_train [--steps N] [--oom] [--bad-launch]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct model m = { 0 };
	int steps = 4, oom = 0, bad_launch = 0;
	float *final_w;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
			char *end;

			steps = (int)strtol(argv[++i], &end, 10);
			if (*end != '\0' || steps < 1)
				usage();
		} else if (strcmp(argv[i], "--oom") == 0) {
			oom = 1;
		} else if (strcmp(argv[i], "--bad-launch") == 0) {
			bad_launch = 1;
		} else {
			usage();
		}
	}

	setup_libraries(&m);
	setup_memory(&m);
	build_graph(&m);
	if (oom)
		provoke_oom();
	if (bad_launch)
		provoke_bad_launch(m.stream);

	for (int s = 0; s < steps; s++)
		step(&m, s);
	CUDA(cudaDeviceSynchronize);

	final_w = malloc((size_t)HID * IN * sizeof(float));
	if (final_w == NULL)
		return 1;
	copy_sync(final_w, m.w, (size_t)HID * IN * sizeof(float), cudaMemcpyDeviceToHost);
	printf("checksum %016llx\n", (unsigned long long)checksum(final_w, (size_t)HID * IN * sizeof(float)));
	free(final_w);

	teardown(&m);
	print_expectations(oom, bad_launch);
	return 0;
}
