/* cuDNN: the legacy convolution, batch-norm, softmax, pooling, spatial transformer and RNN entry points, and
 * graph executions (cudnnBackendExecute) with the operations their plan runs.
 *
 * A plan does not say what it computes without a chain of cuDNN calls, so the operations are followed as
 * the program builds the plan: each operation descriptor's type at creation, the graph's operations, the
 * graph of an engine or of a heuristics query, the engine of a configuration (or the configurations a
 * query returned), the configuration of a plan. A plan built otherwise (deserialised) shows as unknown. */
#define _GNU_SOURCE
#include <cudnn.h>
#include <stdatomic.h>

#include "pw_gpu.h"

#define PW_CUDNN(ev, name, params, args, ...) \
	PW_GPU_WRAP(CUDNN, cudnnStatus_t, CUDNN_STATUS_NOT_INITIALIZED, CUDNN, ev, 0, name, params, args, __VA_ARGS__)

PW_GPU_HELPER(CUDNN, cudnnStatus_t, cudnnGetStream, (cudnnHandle_t, cudaStream_t *));

static void handle_stream(struct pw_rec_api *r, cudnnHandle_t handle)
{
	cudaStream_t s = NULL;
	if (real_cudnnGetStream && handle && real_cudnnGetStream(handle, &s) == CUDNN_STATUS_SUCCESS)
		r->stream = (uint64_t)(uintptr_t)s;
}

#define STREAM_OF(h) handle_stream(&r, h)

PW_CUDNN(CUDNN_CONV_FWD, cudnnConvolutionForward,
	 (cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd, const void *x,
	  const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t cd,
	  cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_size, const void *beta, const cudnnTensorDescriptor_t yd,
	  void *y),
	 (h, alpha, xd, x, wd, w, cd, algo, ws, ws_size, beta, yd, y), STREAM_OF(h))

PW_CUDNN(CUDNN_CONV_BWD_DATA, cudnnConvolutionBackwardData,
	 (cudnnHandle_t h, const void *alpha, const cudnnFilterDescriptor_t wd, const void *w,
	  const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnConvolutionDescriptor_t cd,
	  cudnnConvolutionBwdDataAlgo_t algo, void *ws, size_t ws_size, const void *beta,
	  const cudnnTensorDescriptor_t dxd, void *dx),
	 (h, alpha, wd, w, dyd, dy, cd, algo, ws, ws_size, beta, dxd, dx), STREAM_OF(h))

PW_CUDNN(CUDNN_CONV_BWD_FILTER, cudnnConvolutionBackwardFilter,
	 (cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd, const void *x,
	  const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnConvolutionDescriptor_t cd,
	  cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t ws_size, const void *beta,
	  const cudnnFilterDescriptor_t dwd, void *dw),
	 (h, alpha, xd, x, dyd, dy, cd, algo, ws, ws_size, beta, dwd, dw), STREAM_OF(h))

/* The algorithm searches run every algorithm of the convolution on the GPU (PyTorch's cudnn.benchmark): their
 * kernels are the search's. */
PW_CUDNN(CUDNN_FIND_CONV_FWD, cudnnFindConvolutionForwardAlgorithmEx,
	 (cudnnHandle_t h, const cudnnTensorDescriptor_t xd, const void *x, const cudnnFilterDescriptor_t wd,
	  const void *w, const cudnnConvolutionDescriptor_t cd, const cudnnTensorDescriptor_t yd, void *y,
	  const int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *results, void *ws, size_t ws_size),
	 (h, xd, x, wd, w, cd, yd, y, requested, returned, results, ws, ws_size), STREAM_OF(h))

PW_CUDNN(CUDNN_FIND_CONV_BWD_DATA, cudnnFindConvolutionBackwardDataAlgorithmEx,
	 (cudnnHandle_t h, const cudnnFilterDescriptor_t wd, const void *w, const cudnnTensorDescriptor_t dyd,
	  const void *dy, const cudnnConvolutionDescriptor_t cd, const cudnnTensorDescriptor_t dxd, void *dx,
	  const int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *results, void *ws, size_t ws_size),
	 (h, wd, w, dyd, dy, cd, dxd, dx, requested, returned, results, ws, ws_size), STREAM_OF(h))

PW_CUDNN(CUDNN_FIND_CONV_BWD_FILTER, cudnnFindConvolutionBackwardFilterAlgorithmEx,
	 (cudnnHandle_t h, const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t dyd,
	  const void *dy, const cudnnConvolutionDescriptor_t cd, const cudnnFilterDescriptor_t dwd, void *dw,
	  const int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *results, void *ws,
	  size_t ws_size),
	 (h, xd, x, dyd, dy, cd, dwd, dw, requested, returned, results, ws, ws_size), STREAM_OF(h))

PW_CUDNN(CUDNN_CONV_BIAS_ACT_FWD, cudnnConvolutionBiasActivationForward,
	 (cudnnHandle_t h, const void *alpha1, const cudnnTensorDescriptor_t xd, const void *x,
	  const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t cd,
	  cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_size, const void *alpha2,
	  const cudnnTensorDescriptor_t zd, const void *z, const cudnnTensorDescriptor_t bd, const void *bias,
	  const cudnnActivationDescriptor_t ad, const cudnnTensorDescriptor_t yd, void *y),
	 (h, alpha1, xd, x, wd, w, cd, algo, ws, ws_size, alpha2, zd, z, bd, bias, ad, yd, y), STREAM_OF(h))

PW_CUDNN(CUDNN_BN_FWD_TRAINING, cudnnBatchNormalizationForwardTraining,
	 (cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
	  const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t yd, void *y,
	  const cudnnTensorDescriptor_t bnd, const void *scale, const void *bias, double factor, void *running_mean,
	  void *running_var, double epsilon, void *save_mean, void *save_inv_var),
	 (h, mode, alpha, beta, xd, x, yd, y, bnd, scale, bias, factor, running_mean, running_var, epsilon, save_mean,
	  save_inv_var),
	 STREAM_OF(h))

PW_CUDNN(CUDNN_BN_FWD_INFERENCE, cudnnBatchNormalizationForwardInference,
	 (cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
	  const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t yd, void *y,
	  const cudnnTensorDescriptor_t bnd, const void *scale, const void *bias, const void *mean, const void *var,
	  double epsilon),
	 (h, mode, alpha, beta, xd, x, yd, y, bnd, scale, bias, mean, var, epsilon), STREAM_OF(h))

PW_CUDNN(CUDNN_BN_BWD, cudnnBatchNormalizationBackward,
	 (cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *alpha_data, const void *beta_data,
	  const void *alpha_param, const void *beta_param, const cudnnTensorDescriptor_t xd, const void *x,
	  const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnTensorDescriptor_t dxd, void *dx,
	  const cudnnTensorDescriptor_t bnd, const void *scale, void *dscale, void *dbias, double epsilon,
	  const void *saved_mean, const void *saved_inv_var),
	 (h, mode, alpha_data, beta_data, alpha_param, beta_param, xd, x, dyd, dy, dxd, dx, bnd, scale, dscale, dbias,
	  epsilon, saved_mean, saved_inv_var),
	 STREAM_OF(h))

/* The Ex forms add a fused activation (and addition of z) to batch normalisation; PyTorch trains with them. */
PW_CUDNN(CUDNN_BN_FWD_TRAINING_EX, cudnnBatchNormalizationForwardTrainingEx,
	 (cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void *alpha, const void *beta,
	  const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t zd, const void *z,
	  const cudnnTensorDescriptor_t yd, void *y, const cudnnTensorDescriptor_t bnd, const void *scale,
	  const void *bias, double factor, void *running_mean, void *running_var, double epsilon, void *save_mean,
	  void *save_inv_var, cudnnActivationDescriptor_t ad, void *ws, size_t ws_size, void *rs, size_t rs_size),
	 (h, mode, ops, alpha, beta, xd, x, zd, z, yd, y, bnd, scale, bias, factor, running_mean, running_var, epsilon,
	  save_mean, save_inv_var, ad, ws, ws_size, rs, rs_size),
	 STREAM_OF(h))

PW_CUDNN(CUDNN_BN_BWD_EX, cudnnBatchNormalizationBackwardEx,
	 (cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void *alpha_data,
	  const void *beta_data, const void *alpha_param, const void *beta_param, const cudnnTensorDescriptor_t xd,
	  const void *x, const cudnnTensorDescriptor_t yd, const void *y, const cudnnTensorDescriptor_t dyd,
	  const void *dy, const cudnnTensorDescriptor_t dzd, void *dz, const cudnnTensorDescriptor_t dxd, void *dx,
	  const cudnnTensorDescriptor_t bnd, const void *scale, const void *bias, void *dscale, void *dbias,
	  double epsilon, const void *saved_mean, const void *saved_inv_var, cudnnActivationDescriptor_t ad, void *ws,
	  size_t ws_size, void *rs, size_t rs_size),
	 (h, mode, ops, alpha_data, beta_data, alpha_param, beta_param, xd, x, yd, y, dyd, dy, dzd, dz, dxd, dx, bnd,
	  scale, bias, dscale, dbias, epsilon, saved_mean, saved_inv_var, ad, ws, ws_size, rs, rs_size),
	 STREAM_OF(h))

PW_CUDNN(CUDNN_SOFTMAX_FWD, cudnnSoftmaxForward,
	 (cudnnHandle_t h, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, const void *alpha,
	  const cudnnTensorDescriptor_t xd, const void *x, const void *beta, const cudnnTensorDescriptor_t yd, void *y),
	 (h, algo, mode, alpha, xd, x, beta, yd, y), STREAM_OF(h))

PW_CUDNN(CUDNN_SOFTMAX_BWD, cudnnSoftmaxBackward,
	 (cudnnHandle_t h, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, const void *alpha,
	  const cudnnTensorDescriptor_t yd, const void *y, const cudnnTensorDescriptor_t dyd, const void *dy,
	  const void *beta, const cudnnTensorDescriptor_t dxd, void *dx),
	 (h, algo, mode, alpha, yd, y, dyd, dy, beta, dxd, dx), STREAM_OF(h))

PW_CUDNN(CUDNN_POOLING_FWD, cudnnPoolingForward,
	 (cudnnHandle_t h, const cudnnPoolingDescriptor_t pd, const void *alpha, const cudnnTensorDescriptor_t xd,
	  const void *x, const void *beta, const cudnnTensorDescriptor_t yd, void *y),
	 (h, pd, alpha, xd, x, beta, yd, y), STREAM_OF(h))

/* The spatial transformer: an affine grid from theta, then x sampled at the grid's points. */
PW_CUDNN(CUDNN_SPATIAL_TF_GRID_FWD, cudnnSpatialTfGridGeneratorForward,
	 (cudnnHandle_t h, const cudnnSpatialTransformerDescriptor_t st, const void *theta, void *grid),
	 (h, st, theta, grid), STREAM_OF(h))

PW_CUDNN(CUDNN_SPATIAL_TF_GRID_BWD, cudnnSpatialTfGridGeneratorBackward,
	 (cudnnHandle_t h, const cudnnSpatialTransformerDescriptor_t st, const void *dgrid, void *dtheta),
	 (h, st, dgrid, dtheta), STREAM_OF(h))

PW_CUDNN(CUDNN_SPATIAL_TF_SAMPLER_FWD, cudnnSpatialTfSamplerForward,
	 (cudnnHandle_t h, cudnnSpatialTransformerDescriptor_t st, const void *alpha, const cudnnTensorDescriptor_t xd,
	  const void *x, const void *grid, const void *beta, cudnnTensorDescriptor_t yd, void *y),
	 (h, st, alpha, xd, x, grid, beta, yd, y), STREAM_OF(h))

PW_CUDNN(CUDNN_SPATIAL_TF_SAMPLER_BWD, cudnnSpatialTfSamplerBackward,
	 (cudnnHandle_t h, cudnnSpatialTransformerDescriptor_t st, const void *alpha, const cudnnTensorDescriptor_t xd,
	  const void *x, const void *beta, const cudnnTensorDescriptor_t dxd, void *dx, const void *alpha_dgrid,
	  const cudnnTensorDescriptor_t dyd, const void *dy, const void *grid, const void *beta_dgrid, void *dgrid),
	 (h, st, alpha, xd, x, beta, dxd, dx, alpha_dgrid, dyd, dy, grid, beta_dgrid, dgrid), STREAM_OF(h))

PW_CUDNN(CUDNN_RNN_FWD, cudnnRNNForward,
	 (cudnnHandle_t h, cudnnRNNDescriptor_t rd, cudnnForwardMode_t fwd_mode, const int32_t seq_lengths[],
	  cudnnRNNDataDescriptor_t xd, const void *x, cudnnRNNDataDescriptor_t yd, void *y, cudnnTensorDescriptor_t hd,
	  const void *hx, void *hy, cudnnTensorDescriptor_t cd, const void *cx, void *cy, size_t w_size,
	  const void *w, size_t ws_size, void *ws, size_t rs_size, void *rs),
	 (h, rd, fwd_mode, seq_lengths, xd, x, yd, y, hd, hx, hy, cd, cx, cy, w_size, w, ws_size, ws, rs_size, rs),
	 STREAM_OF(h))

PW_CUDNN(CUDNN_RNN_BWD_DATA, cudnnRNNBackwardData_v8,
	 (cudnnHandle_t h, cudnnRNNDescriptor_t rd, const int32_t seq_lengths[], cudnnRNNDataDescriptor_t yd,
	  const void *y, const void *dy, cudnnRNNDataDescriptor_t xd, void *dx, cudnnTensorDescriptor_t hd,
	  const void *hx, const void *dhy, void *dhx, cudnnTensorDescriptor_t cd, const void *cx, const void *dcy,
	  void *dcx, size_t w_size, const void *w, size_t ws_size, void *ws, size_t rs_size, void *rs),
	 (h, rd, seq_lengths, yd, y, dy, xd, dx, hd, hx, dhy, dhx, cd, cx, dcy, dcx, w_size, w, ws_size, ws, rs_size,
	  rs),
	 STREAM_OF(h))

PW_CUDNN(CUDNN_RNN_BWD_WEIGHTS, cudnnRNNBackwardWeights_v8,
	 (cudnnHandle_t h, cudnnRNNDescriptor_t rd, cudnnWgradMode_t add, const int32_t seq_lengths[],
	  cudnnRNNDataDescriptor_t xd, const void *x, cudnnTensorDescriptor_t hd, const void *hx,
	  cudnnRNNDataDescriptor_t yd, const void *y, size_t w_size, void *dw, size_t ws_size, void *ws,
	  size_t rs_size, void *rs),
	 (h, rd, add, seq_lengths, xd, x, hd, hx, yd, y, w_size, dw, ws_size, ws, rs_size, rs), STREAM_OF(h))

/* ---- graph executions: what a plan computes ---- */

/* Descriptor -> the operations it stands for (bits of cudnnBackendDescriptorType_t). Open addressing with
 * tombstones; a full neighbourhood loses the descriptor, whose executions then show as unknown. */
#define DESC_SLOTS 4096
#define DESC_PROBES 32
#define DESC_TOMBSTONE ((uintptr_t)1)
#define OPS_UNKNOWN (1ull << 63)
static struct {
	_Atomic uintptr_t desc;
	_Atomic uint64_t ops;
} descs[DESC_SLOTS];

static size_t desc_hash(uintptr_t d)
{
	return (size_t)((d >> 4) * 0x9E3779B97F4A7C15ull >> 52) & (DESC_SLOTS - 1);
}

static void desc_set(cudnnBackendDescriptor_t d, uint64_t ops)
{
	uintptr_t key = (uintptr_t)d;
	if (key <= DESC_TOMBSTONE)
		return;
	size_t h = desc_hash(key);
	for (unsigned i = 0; i < DESC_PROBES; i++) {
		size_t at = (h + i) & (DESC_SLOTS - 1);
		uintptr_t cur = atomic_load(&descs[at].desc);
		if (cur == key) {
			atomic_store(&descs[at].ops, ops);
			return;
		}
		if (cur == 0 || cur == DESC_TOMBSTONE) {
			if (atomic_compare_exchange_strong(&descs[at].desc, &cur, key)) {
				atomic_store(&descs[at].ops, ops);
				return;
			}
		}
	}
}

static uint64_t desc_get(cudnnBackendDescriptor_t d)
{
	uintptr_t key = (uintptr_t)d;
	if (key <= DESC_TOMBSTONE)
		return 0;
	size_t h = desc_hash(key);
	for (unsigned i = 0; i < DESC_PROBES; i++) {
		size_t at = (h + i) & (DESC_SLOTS - 1);
		uintptr_t cur = atomic_load(&descs[at].desc);
		if (cur == key)
			return atomic_load(&descs[at].ops);
		if (cur == 0)
			return 0;
	}
	return 0;
}

static void desc_forget(cudnnBackendDescriptor_t d)
{
	uintptr_t key = (uintptr_t)d;
	if (key <= DESC_TOMBSTONE)
		return;
	size_t h = desc_hash(key);
	for (unsigned i = 0; i < DESC_PROBES; i++) {
		size_t at = (h + i) & (DESC_SLOTS - 1);
		uintptr_t cur = atomic_load(&descs[at].desc);
		if (cur == 0)
			return;
		if (cur == key) {
			atomic_store(&descs[at].desc, DESC_TOMBSTONE);
			return;
		}
	}
}

/* Descriptors that are not operations; every other type is one (new cuDNN versions add operations). */
static int is_operation(cudnnBackendDescriptorType_t t)
{
	switch (t) {
	case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
	case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
	case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
	case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
	case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
	case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
	case CUDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR:
	case CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR:
	case CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR:
	case CUDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
	case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
	case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
	case CUDNN_BACKEND_MATMUL_DESCRIPTOR:
	case CUDNN_BACKEND_REDUCTION_DESCRIPTOR:
	case CUDNN_BACKEND_RESAMPLE_DESCRIPTOR:
	case CUDNN_BACKEND_RNG_DESCRIPTOR:
	case CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR:
		return 0;
	default:
		return 1;
	}
}

/* Descriptor-building calls are only watched (PW_GPU_WATCH): the statements run after a call that succeeded. */
#define PW_CUDNN_WATCH(name, params, args, ...)                                                        \
	PW_GPU_WATCH(CUDNN, cudnnStatus_t, CUDNN_STATUS_NOT_INITIALIZED, name, params, args,           \
		     if (ret == CUDNN_STATUS_SUCCESS) { __VA_ARGS__; })

static void watch_create(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *d)
{
	if (!d || (unsigned)type >= 63)
		return;
	if (is_operation(type))
		desc_set(*d, 1ull << type);
	else if (type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR || type == CUDNN_BACKEND_ENGINE_DESCRIPTOR ||
		 type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR || type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR ||
		 type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
		desc_set(*d, 0);
}

/* The links that carry a plan's operations from its graph. */
static void watch_link(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
		       int64_t count, const void *elements)
{
	if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR || count <= 0 || !elements)
		return;
	const cudnnBackendDescriptor_t *e = elements;
	switch (name) {
	case CUDNN_ATTR_OPERATIONGRAPH_OPS: {
		uint64_t ops = 0;
		for (int64_t i = 0; i < count && i < 256; i++) {
			uint64_t op = desc_get(e[i]);
			ops |= op ? op : OPS_UNKNOWN;
		}
		desc_set(d, ops);
		break;
	}
	case CUDNN_ATTR_ENGINE_OPERATION_GRAPH:
	case CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
	case CUDNN_ATTR_ENGINECFG_ENGINE:
	case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
		desc_set(d, desc_get(e[0]));
		break;
	default:
		break;
	}
}

/* Configurations a heuristics query returns run the query's graph. */
static void watch_results(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
			  cudnnBackendAttributeType_t type, const int64_t *count, const void *elements)
{
	if (name != CUDNN_ATTR_ENGINEHEUR_RESULTS || type != CUDNN_TYPE_BACKEND_DESCRIPTOR || !count || !elements)
		return;
	uint64_t ops = desc_get(d);
	const cudnnBackendDescriptor_t *e = elements;
	for (int64_t i = 0; i < *count && i < 256; i++)
		desc_set(e[i], ops);
}

PW_CUDNN_WATCH(cudnnBackendCreateDescriptor, (cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *d),
	       (type, d), watch_create(type, d))

PW_CUDNN_WATCH(cudnnBackendSetAttribute,
	       (cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
		int64_t count, const void *elements),
	       (d, name, type, count, elements), watch_link(d, name, type, count, elements))

PW_CUDNN_WATCH(cudnnBackendGetAttribute,
	       (cudnnBackendDescriptor_t const d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
		int64_t requested, int64_t *count, void *elements),
	       (d, name, type, requested, count, elements), watch_results(d, name, type, count, elements))

PW_CUDNN_WATCH(cudnnBackendDestroyDescriptor, (cudnnBackendDescriptor_t d), (d), desc_forget(d))

PW_CUDNN(CUDNN_BACKEND_EXECUTE, cudnnBackendExecute, (cudnnHandle_t h, cudnnBackendDescriptor_t plan,
						       cudnnBackendDescriptor_t pack),
	 (h, plan, pack), uint64_t ops = desc_get(plan);
	 r.c.arg0 = ops ? ops : OPS_UNKNOWN; STREAM_OF(h))
