/* Fake libcudnn_graph.so.9, behind the shim libcudnn.so.9 (cudnn_shim.c) that programs link: handles, the
 * legacy descriptor API (tensors, filters, 2-D convolutions, activations, pooling, spatial transformers,
 * RNNs), the legacy operations (convolutions, batch normalisation, softmax, pooling, spatial transformer,
 * RNN) and the v9 backend graph API. NVIDIA spreads these over its sub-libraries (libcudnn_graph, _ops,
 * _cnn, ...); the fake keeps them all here, under libcudnn_graph.so.9's version node.
 * Operations check their arguments as cuDNN does and take device time on the handle's stream (the largest
 * tensor they touch, FAKEGPU_DNN_NS_PER_ELEM ns per element, at least 1 us); they compute nothing.
 * Backend descriptors keep their type and every attribute set; descriptor-valued attributes hold copies of
 * the (finalized) descriptors given, as cuDNN does, so a plan can be walked down to its operations.
 * No public CUDA name is called (tests/fakes/README.md). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <pthread.h>

#include "fakegpu.h"

/* The kernel names the activity records show, in the style of cuDNN's on a Hopper GPU (CUPTI gives names
 * mangled). */
#define K_CONV_TAIL "f32f32_f32f32_f32_nchwkcrs_nchw_tilesize128x128x16_stage4_g1_kernel_cudnn"
#define K_CONV_FWD "sm90_xmma_fprop_implicit_gemm_" K_CONV_TAIL
#define K_CONV_BWD_DATA "sm90_xmma_dgrad_implicit_gemm_" K_CONV_TAIL
#define K_CONV_BWD_FILTER "sm90_xmma_wgrad_implicit_gemm_" K_CONV_TAIL
#define K_CONV_BIAS_ACT "sm90_xmma_fprop_implicit_gemm_bias_relu_" K_CONV_TAIL
#define K_BN_FWD_TRAINING "_ZN5cudnn25bn_fw_tr_1C11_kernel_NCHWEv"
#define K_BN_FWD_INFERENCE "_ZN5cudnn26bn_fw_inf_1C11_kernel_NCHWEv"
#define K_BN_BWD "_ZN5cudnn21bn_bw_1C11_kernel_newEv"
#define K_SOFTMAX_FWD "_ZN5cudnn17softmax_fw_kernelEv"
#define K_SOFTMAX_BWD "_ZN5cudnn17softmax_bw_kernelEv"
#define K_POOLING_FWD "_ZN5cudnn20pooling_fw_4d_kernelEv"
#define K_ST_GRID_FWD "_ZN5cudnn27st_grid_generator_fw_kernelEv"
#define K_ST_GRID_BWD "_ZN5cudnn27st_grid_generator_bw_kernelEv"
#define K_ST_SAMPLER_FWD "_ZN5cudnn20st_sampler_fw_kernelEv"
#define K_ST_SAMPLER_BWD "_ZN5cudnn20st_sampler_bw_kernelEv"
#define K_RNN_FWD "_ZN5cudnn22rnn_fwd_persist_kernelEv"
#define K_RNN_BWD_DATA "_ZN5cudnn27rnn_bwd_data_persist_kernelEv"
#define K_RNN_BWD_WEIGHTS "_ZN5cudnn22rnn_bwd_weights_kernelEv"
#define K_GRAPH_EXECUTE "sm90_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_cudnn"

#define DN_HANDLE_MAGIC 0x444e4e48u
#define DN_TENSOR_MAGIC 0x444e5445u
#define DN_FILTER_MAGIC 0x444e4649u
#define DN_CONV_MAGIC 0x444e434fu
#define DN_ACT_MAGIC 0x444e4143u
#define DN_RNN_MAGIC 0x444e524eu
#define DN_RNNDATA_MAGIC 0x444e5244u
#define DN_POOL_MAGIC 0x444e504fu
#define DN_ST_MAGIC 0x444e5354u
#define DN_BACKEND_MAGIC 0x444e4244u

struct cudnnContext {
	uint32_t magic;
	cudaStream_t stream;
};

struct cudnnTensorStruct {
	uint32_t magic;
	int set;
	cudnnDataType_t dtype;
	int nb_dims;
	int dims[CUDNN_DIM_MAX];
	int strides[CUDNN_DIM_MAX];
};

struct cudnnFilterStruct {
	uint32_t magic;
	int set;
	cudnnDataType_t dtype;
	cudnnTensorFormat_t format;
	int nb_dims;
	int dims[CUDNN_DIM_MAX];
};

struct cudnnConvolutionStruct {
	uint32_t magic;
	int set;
	int pad[2], stride[2], dilation[2];
	cudnnConvolutionMode_t mode;
	cudnnDataType_t compute;
	cudnnMathType_t math;
	int groups;
};

struct cudnnActivationStruct {
	uint32_t magic;
	int set;
	cudnnActivationMode_t mode;
	cudnnNanPropagation_t nan;
	double coef;
};

struct cudnnRNNStruct {
	uint32_t magic;
	int set;
	cudnnRNNAlgo_t algo;
	cudnnRNNMode_t cell;
	cudnnDirectionMode_t dir;
	cudnnDataType_t dtype;
	int32_t input_size, hidden_size, proj_size, layers;
};

struct cudnnRNNDataStruct {
	uint32_t magic;
	int set;
	cudnnDataType_t dtype;
	cudnnRNNDataLayout_t layout;
	int max_seq, batch, vector;
};

struct cudnnPoolingStruct {
	uint32_t magic;
	int set;
	cudnnPoolingMode_t mode;
	cudnnNanPropagation_t nan;
	int nb_dims; /* spatial dimensions: 2 */
	int window[2], pad[2], stride[2];
};

/* The transformed (output) tensor: n, c, h, w. */
struct cudnnSpatialTransformerStruct {
	uint32_t magic;
	int set;
	cudnnDataType_t dtype;
	int dims[4];
};

static cudnnStatus_t dn_time(cudnnHandle_t h, double elements, const char *name)
{
	double ns = elements * fakegpu_env_double("FAKEGPU_DNN_NS_PER_ELEM", 1.0);

	return fakegpu_enqueue_named(h->stream, ns < 1000 ? 1000 : (uint64_t)ns, name) == cudaSuccess
		       ? CUDNN_STATUS_SUCCESS
		       : CUDNN_STATUS_EXECUTION_FAILED_CUDART;
}

static int handle_ok(cudnnHandle_t h)
{
	return h != NULL && h->magic == DN_HANDLE_MAGIC;
}

/* ---- handles, versions, errors ---- */

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
	struct cudnnContext *h;

	if (handle == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	if (fakegpu_device_count() == 0)
		return CUDNN_STATUS_NOT_INITIALIZED;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
	h->magic = DN_HANDLE_MAGIC;
	*handle = h;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
	if (!handle_ok(handle))
		return CUDNN_STATUS_BAD_PARAM;
	handle->magic = 0;
	free(handle);
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
	if (!handle_ok(handle) || fakegpu_stream_check(streamId) != cudaSuccess)
		return CUDNN_STATUS_BAD_PARAM;
	handle->stream = streamId;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *streamId)
{
	if (!handle_ok(handle) || streamId == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	*streamId = handle->stream;
	return CUDNN_STATUS_SUCCESS;
}

size_t cudnnGetVersion(void)
{
	return CUDNN_VERSION;
}

size_t cudnnGetCudartVersion(void)
{
	return CUDART_VERSION;
}

cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int *value)
{
	if (value == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	switch (type) {
	case MAJOR_VERSION: *value = CUDNN_MAJOR; break;
	case MINOR_VERSION: *value = CUDNN_MINOR; break;
	case PATCH_LEVEL: *value = CUDNN_PATCHLEVEL; break;
	default: return CUDNN_STATUS_BAD_PARAM;
	}
	return CUDNN_STATUS_SUCCESS;
}

const char *cudnnGetErrorString(cudnnStatus_t status)
{
#define DN_S(code) case code: return #code;
	switch ((int)status) {
	DN_S(CUDNN_STATUS_SUCCESS)
	DN_S(CUDNN_STATUS_NOT_INITIALIZED)
	DN_S(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)
	DN_S(CUDNN_STATUS_DEPRECATED)
	DN_S(CUDNN_STATUS_BAD_PARAM)
	DN_S(CUDNN_STATUS_BAD_PARAM_NULL_POINTER)
	DN_S(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED)
	DN_S(CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND)
	DN_S(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH)
	DN_S(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE)
	DN_S(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE)
	DN_S(CUDNN_STATUS_NOT_SUPPORTED)
	DN_S(CUDNN_STATUS_INTERNAL_ERROR)
	DN_S(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED)
	DN_S(CUDNN_STATUS_EXECUTION_FAILED)
	DN_S(CUDNN_STATUS_EXECUTION_FAILED_CUDART)
	default: return "CUDNN_STATUS_UNKNOWN";
	}
#undef DN_S
}

/* ---- tensor, filter, convolution, activation descriptors ---- */

#define DN_CREATE(fn, type, magic_value)                          \
	cudnnStatus_t fn(type *out)                               \
	{                                                         \
		if (out == NULL)                                  \
			return CUDNN_STATUS_BAD_PARAM;            \
		*out = calloc(1, sizeof(**out));                  \
		if (*out == NULL)                                 \
			return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED; \
		(*out)->magic = magic_value;                      \
		return CUDNN_STATUS_SUCCESS;                      \
	}
#define DN_DESTROY(fn, type, magic_value)                         \
	cudnnStatus_t fn(type d)                                  \
	{                                                         \
		if (d == NULL)                                    \
			return CUDNN_STATUS_SUCCESS;              \
		if (d->magic != magic_value)                      \
			return CUDNN_STATUS_BAD_PARAM;            \
		d->magic = 0;                                     \
		free(d);                                          \
		return CUDNN_STATUS_SUCCESS;                      \
	}

DN_CREATE(cudnnCreateTensorDescriptor, cudnnTensorDescriptor_t, DN_TENSOR_MAGIC)
DN_DESTROY(cudnnDestroyTensorDescriptor, cudnnTensorDescriptor_t, DN_TENSOR_MAGIC)
DN_CREATE(cudnnCreateFilterDescriptor, cudnnFilterDescriptor_t, DN_FILTER_MAGIC)
DN_DESTROY(cudnnDestroyFilterDescriptor, cudnnFilterDescriptor_t, DN_FILTER_MAGIC)
DN_CREATE(cudnnCreateConvolutionDescriptor, cudnnConvolutionDescriptor_t, DN_CONV_MAGIC)
DN_DESTROY(cudnnDestroyConvolutionDescriptor, cudnnConvolutionDescriptor_t, DN_CONV_MAGIC)
DN_CREATE(cudnnCreateActivationDescriptor, cudnnActivationDescriptor_t, DN_ACT_MAGIC)
DN_DESTROY(cudnnDestroyActivationDescriptor, cudnnActivationDescriptor_t, DN_ACT_MAGIC)
DN_CREATE(cudnnCreateRNNDescriptor, cudnnRNNDescriptor_t, DN_RNN_MAGIC)
DN_DESTROY(cudnnDestroyRNNDescriptor, cudnnRNNDescriptor_t, DN_RNN_MAGIC)
DN_CREATE(cudnnCreateRNNDataDescriptor, cudnnRNNDataDescriptor_t, DN_RNNDATA_MAGIC)
DN_DESTROY(cudnnDestroyRNNDataDescriptor, cudnnRNNDataDescriptor_t, DN_RNNDATA_MAGIC)
DN_CREATE(cudnnCreatePoolingDescriptor, cudnnPoolingDescriptor_t, DN_POOL_MAGIC)
DN_DESTROY(cudnnDestroyPoolingDescriptor, cudnnPoolingDescriptor_t, DN_POOL_MAGIC)
DN_CREATE(cudnnCreateSpatialTransformerDescriptor, cudnnSpatialTransformerDescriptor_t, DN_ST_MAGIC)
DN_DESTROY(cudnnDestroySpatialTransformerDescriptor, cudnnSpatialTransformerDescriptor_t, DN_ST_MAGIC)

/* Set descriptors (created, valid and set), else NULL. */
static const struct cudnnTensorStruct *tensor_of(const cudnnTensorDescriptor_t t)
{
	return t != NULL && t->magic == DN_TENSOR_MAGIC && t->set ? t : NULL;
}

static const struct cudnnFilterStruct *filter_of(const cudnnFilterDescriptor_t f)
{
	return f != NULL && f->magic == DN_FILTER_MAGIC && f->set ? f : NULL;
}

static const struct cudnnConvolutionStruct *conv_of(const cudnnConvolutionDescriptor_t c)
{
	return c != NULL && c->magic == DN_CONV_MAGIC && c->set ? c : NULL;
}

static int dtype_ok(cudnnDataType_t t)
{
	return (int)t >= CUDNN_DATA_FLOAT && (int)t <= CUDNN_DATA_COMPLEX_FP64;
}

static double tensor_elements(const struct cudnnTensorStruct *t)
{
	double n = 1;

	for (int i = 0; i < t->nb_dims; i++)
		n *= t->dims[i];
	return n;
}

static int same_dims(const struct cudnnTensorStruct *a, const struct cudnnTensorStruct *b)
{
	return a->nb_dims == b->nb_dims && memcmp(a->dims, b->dims, (size_t)a->nb_dims * sizeof(int)) == 0;
}

static cudnnStatus_t tensor_set(cudnnTensorDescriptor_t t, cudnnDataType_t dtype, int nb, const int *dims,
				const int *strides)
{
	if (t == NULL || t->magic != DN_TENSOR_MAGIC || !dtype_ok(dtype) || nb < 3 || nb > CUDNN_DIM_MAX ||
	    dims == NULL || strides == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < nb; i++)
		if (dims[i] <= 0 || strides[i] <= 0)
			return CUDNN_STATUS_BAD_PARAM;
	t->dtype = dtype;
	t->nb_dims = nb;
	memcpy(t->dims, dims, (size_t)nb * sizeof(int));
	memcpy(t->strides, strides, (size_t)nb * sizeof(int));
	t->set = 1;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnTensorFormat_t format,
					 cudnnDataType_t dataType, int n, int c, int h, int w)
{
	int dims[4] = { n, c, h, w }, strides[4];

	if (format == CUDNN_TENSOR_NCHW) {
		strides[3] = 1, strides[2] = w, strides[1] = h * w, strides[0] = c * h * w;
	} else if (format == CUDNN_TENSOR_NHWC) {
		strides[1] = 1, strides[3] = c, strides[2] = w * c, strides[0] = h * w * c;
	} else {
		return CUDNN_STATUS_BAD_PARAM;
	}
	return tensor_set(tensorDesc, dataType, 4, dims, strides);
}

cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t dataType, int n,
					   int c, int h, int w, int nStride, int cStride, int hStride, int wStride)
{
	int dims[4] = { n, c, h, w }, strides[4] = { nStride, cStride, hStride, wStride };

	return tensor_set(tensorDesc, dataType, 4, dims, strides);
}

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t dataType, int nbDims,
					 const int dimA[], const int strideA[])
{
	return tensor_set(tensorDesc, dataType, nbDims, dimA, strideA);
}

cudnnStatus_t cudnnGetTensor4dDescriptor(const cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t *dataType,
					 int *n, int *c, int *h, int *w, int *nStride, int *cStride, int *hStride,
					 int *wStride)
{
	const struct cudnnTensorStruct *t = tensor_of(tensorDesc);

	if (t == NULL || t->nb_dims != 4)
		return CUDNN_STATUS_BAD_PARAM;
	if (dataType)
		*dataType = t->dtype;
	if (n)
		*n = t->dims[0];
	if (c)
		*c = t->dims[1];
	if (h)
		*h = t->dims[2];
	if (w)
		*w = t->dims[3];
	if (nStride)
		*nStride = t->strides[0];
	if (cStride)
		*cStride = t->strides[1];
	if (hStride)
		*hStride = t->strides[2];
	if (wStride)
		*wStride = t->strides[3];
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t tensorDesc, int nbDimsRequested,
					 cudnnDataType_t *dataType, int *nbDims, int dimA[], int strideA[])
{
	const struct cudnnTensorStruct *t = tensor_of(tensorDesc);

	if (t == NULL || nbDimsRequested < 0 || dataType == NULL || nbDims == NULL ||
	    (nbDimsRequested > 0 && (dimA == NULL || strideA == NULL)))
		return CUDNN_STATUS_BAD_PARAM;
	*dataType = t->dtype;
	*nbDims = t->nb_dims;
	for (int i = 0; i < nbDimsRequested && i < t->nb_dims; i++) {
		dimA[i] = t->dims[i];
		strideA[i] = t->strides[i];
	}
	return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t filter_set(cudnnFilterDescriptor_t f, cudnnDataType_t dtype, cudnnTensorFormat_t format,
				int nb, const int *dims)
{
	if (f == NULL || f->magic != DN_FILTER_MAGIC || !dtype_ok(dtype) || nb < 3 || nb > CUDNN_DIM_MAX ||
	    dims == NULL || (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC &&
			     format != CUDNN_TENSOR_NCHW_VECT_C))
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < nb; i++)
		if (dims[i] <= 0)
			return CUDNN_STATUS_BAD_PARAM;
	f->dtype = dtype;
	f->format = format;
	f->nb_dims = nb;
	memcpy(f->dims, dims, (size_t)nb * sizeof(int));
	f->set = 1;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
					 cudnnTensorFormat_t format, int k, int c, int h, int w)
{
	int dims[4] = { k, c, h, w };

	return filter_set(filterDesc, dataType, format, 4, dims);
}

cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
					 cudnnTensorFormat_t format, int nbDims, const int filterDimA[])
{
	return filter_set(filterDesc, dataType, format, nbDims, filterDimA);
}

cudnnStatus_t cudnnGetFilter4dDescriptor(const cudnnFilterDescriptor_t filterDesc, cudnnDataType_t *dataType,
					 cudnnTensorFormat_t *format, int *k, int *c, int *h, int *w)
{
	const struct cudnnFilterStruct *f = filter_of(filterDesc);

	if (f == NULL || f->nb_dims != 4)
		return CUDNN_STATUS_BAD_PARAM;
	if (dataType)
		*dataType = f->dtype;
	if (format)
		*format = f->format;
	if (k)
		*k = f->dims[0];
	if (c)
		*c = f->dims[1];
	if (h)
		*h = f->dims[2];
	if (w)
		*w = f->dims[3];
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w, int u,
					      int v, int dilation_h, int dilation_w, cudnnConvolutionMode_t mode,
					      cudnnDataType_t computeType)
{
	if (convDesc == NULL || convDesc->magic != DN_CONV_MAGIC || pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 ||
	    dilation_h <= 0 || dilation_w <= 0 || (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) ||
	    !dtype_ok(computeType))
		return CUDNN_STATUS_BAD_PARAM;
	convDesc->pad[0] = pad_h, convDesc->pad[1] = pad_w;
	convDesc->stride[0] = u, convDesc->stride[1] = v;
	convDesc->dilation[0] = dilation_h, convDesc->dilation[1] = dilation_w;
	convDesc->mode = mode;
	convDesc->compute = computeType;
	if (convDesc->groups == 0)
		convDesc->groups = 1;
	convDesc->set = 1;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t mathType)
{
	if (convDesc == NULL || convDesc->magic != DN_CONV_MAGIC || (int)mathType < CUDNN_DEFAULT_MATH ||
	    (int)mathType > CUDNN_FMA_MATH)
		return CUDNN_STATUS_BAD_PARAM;
	convDesc->math = mathType;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount)
{
	if (convDesc == NULL || convDesc->magic != DN_CONV_MAGIC || groupCount < 1)
		return CUDNN_STATUS_BAD_PARAM;
	convDesc->groups = groupCount;
	return CUDNN_STATUS_SUCCESS;
}

/* The output of a 2-D convolution of x by w, into out[4] (n, k, h, w). */
static cudnnStatus_t conv_out(const struct cudnnConvolutionStruct *c, const struct cudnnTensorStruct *x,
			      const struct cudnnFilterStruct *w, int out[4])
{
	if (c == NULL || x == NULL || w == NULL || x->nb_dims != 4 || w->nb_dims != 4)
		return CUDNN_STATUS_BAD_PARAM;
	if (x->dims[1] != w->dims[1] * c->groups || w->dims[0] % c->groups != 0)
		return CUDNN_STATUS_BAD_PARAM;
	out[0] = x->dims[0];
	out[1] = w->dims[0];
	for (int i = 0; i < 2; i++) {
		int span = (w->dims[2 + i] - 1) * c->dilation[i] + 1;
		int room = x->dims[2 + i] + 2 * c->pad[i] - span;

		if (room < 0)
			return CUDNN_STATUS_BAD_PARAM;
		out[2 + i] = 1 + room / c->stride[i];
	}
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
						    const cudnnTensorDescriptor_t inputTensorDesc,
						    const cudnnFilterDescriptor_t filterDesc, int *n, int *c, int *h,
						    int *w)
{
	int out[4];
	cudnnStatus_t st;

	if (n == NULL || c == NULL || h == NULL || w == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	st = conv_out(conv_of(convDesc), tensor_of(inputTensorDesc), filter_of(filterDesc), out);
	if (st == CUDNN_STATUS_SUCCESS)
		*n = out[0], *c = out[1], *h = out[2], *w = out[3];
	return st;
}

cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
						    const cudnnTensorDescriptor_t inputTensorDesc,
						    const cudnnFilterDescriptor_t filterDesc, int nbDims,
						    int tensorOuputDimA[])
{
	int out[4];
	cudnnStatus_t st;

	if (nbDims != 4 || tensorOuputDimA == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	st = conv_out(conv_of(convDesc), tensor_of(inputTensorDesc), filter_of(filterDesc), out);
	if (st == CUDNN_STATUS_SUCCESS)
		memcpy(tensorOuputDimA, out, sizeof(out));
	return st;
}

/* x (input), w, y (output) must agree with the convolution. */
static cudnnStatus_t conv_check(cudnnHandle_t h, const struct cudnnConvolutionStruct *c,
				const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
				const struct cudnnTensorStruct *y)
{
	int out[4];
	cudnnStatus_t st;

	if (!handle_ok(h) || c == NULL || x == NULL || w == NULL || y == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	st = conv_out(c, x, w, out);
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (y->nb_dims != 4 || memcmp(y->dims, out, sizeof(out)) != 0 || x->dtype != y->dtype || w->dtype != x->dtype)
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

/* The fake's algorithms need no workspace. */
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
						      const cudnnFilterDescriptor_t wDesc,
						      const cudnnConvolutionDescriptor_t convDesc,
						      const cudnnTensorDescriptor_t yDesc, cudnnConvolutionFwdAlgo_t algo,
						      size_t *sizeInBytes)
{
	cudnnStatus_t st = conv_check(handle, conv_of(convDesc), tensor_of(xDesc), filter_of(wDesc), tensor_of(yDesc));

	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (sizeInBytes == NULL || (int)algo < 0 || algo >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
		return CUDNN_STATUS_BAD_PARAM;
	*sizeInBytes = 0;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
							   const cudnnTensorDescriptor_t dyDesc,
							   const cudnnConvolutionDescriptor_t convDesc,
							   const cudnnTensorDescriptor_t dxDesc,
							   cudnnConvolutionBwdDataAlgo_t algo, size_t *sizeInBytes)
{
	cudnnStatus_t st = conv_check(handle, conv_of(convDesc), tensor_of(dxDesc), filter_of(wDesc), tensor_of(dyDesc));

	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (sizeInBytes == NULL || (int)algo < 0 || algo >= CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT)
		return CUDNN_STATUS_BAD_PARAM;
	*sizeInBytes = 0;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
							     const cudnnTensorDescriptor_t dyDesc,
							     const cudnnConvolutionDescriptor_t convDesc,
							     const cudnnFilterDescriptor_t gradDesc,
							     cudnnConvolutionBwdFilterAlgo_t algo, size_t *sizeInBytes)
{
	cudnnStatus_t st = conv_check(handle, conv_of(convDesc), tensor_of(xDesc), filter_of(gradDesc), tensor_of(dyDesc));

	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (sizeInBytes == NULL || (int)algo < 0 || algo >= CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT)
		return CUDNN_STATUS_BAD_PARAM;
	*sizeInBytes = 0;
	return CUDNN_STATUS_SUCCESS;
}

static double filter_elements(const struct cudnnFilterStruct *f)
{
	double n = 1;

	for (int i = 0; i < f->nb_dims; i++)
		n *= f->dims[i];
	return n;
}

static double max3(double a, double b, double c)
{
	double m = a > b ? a : b;

	return m > c ? m : c;
}

/* The explicit-GEMM convolution runs its GEMM in cuBLASLt, which cuDNN 9's engines load with dlopen and call
 * through dlsym (cuDNN links no cuBLAS): one GEMM_TILE^3 cublasLtMatmul on the handle's stream, on buffers of
 * its own, before the convolution's own kernel. A profiler sees it as a call inside the cuDNN call. */
#define GEMM_TILE 64
static struct {
	cublasStatus_t (*matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
				 cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t, const void *, const void *,
				 cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *,
				 void *, size_t, cudaStream_t);
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t layout;
	float *a, *b, *d;
} g_gemm;
static pthread_once_t g_gemm_once = PTHREAD_ONCE_INIT;

static void gemm_load(void)
{
	void *lib = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
	cublasStatus_t (*create)(cublasLtHandle_t *);
	cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
	cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t, int64_t);
	size_t tile = (size_t)GEMM_TILE * GEMM_TILE;

	if (lib == NULL)
		return;
	*(void **)&create = dlsym(lib, "cublasLtCreate");
	*(void **)&desc_create = dlsym(lib, "cublasLtMatmulDescCreate");
	*(void **)&layout_create = dlsym(lib, "cublasLtMatrixLayoutCreate");
	*(void **)&g_gemm.matmul = dlsym(lib, "cublasLtMatmul");
	g_gemm.a = calloc(tile, sizeof(float));
	g_gemm.b = calloc(tile, sizeof(float));
	g_gemm.d = calloc(tile, sizeof(float));
	if (create == NULL || desc_create == NULL || layout_create == NULL || g_gemm.matmul == NULL || !g_gemm.a ||
	    !g_gemm.b || !g_gemm.d || create(&g_gemm.lt) != CUBLAS_STATUS_SUCCESS ||
	    desc_create(&g_gemm.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS ||
	    layout_create(&g_gemm.layout, CUDA_R_32F, GEMM_TILE, GEMM_TILE, GEMM_TILE) != CUBLAS_STATUS_SUCCESS)
		g_gemm.matmul = NULL;
}

static cudnnStatus_t conv_gemm(cudnnHandle_t h)
{
	float one = 1, zero = 0;

	pthread_once(&g_gemm_once, gemm_load);
	if (g_gemm.matmul == NULL)
		return CUDNN_STATUS_NOT_SUPPORTED;
	return g_gemm.matmul(g_gemm.lt, g_gemm.desc, &one, g_gemm.a, g_gemm.layout, g_gemm.b, g_gemm.layout, &zero,
			     g_gemm.d, g_gemm.layout, g_gemm.d, g_gemm.layout, NULL, NULL, 0,
			     h->stream) == CUBLAS_STATUS_SUCCESS
		       ? CUDNN_STATUS_SUCCESS
		       : CUDNN_STATUS_EXECUTION_FAILED;
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc,
				      const void *x, const cudnnFilterDescriptor_t wDesc, const void *w,
				      const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
				      void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
				      const cudnnTensorDescriptor_t yDesc, void *y)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc);
	const struct cudnnFilterStruct *wf = filter_of(wDesc);
	cudnnStatus_t st = conv_check(handle, conv_of(convDesc), xt, wf, yt);

	(void)workSpace, (void)workSpaceSizeInBytes;
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (alpha == NULL || beta == NULL || x == NULL || w == NULL || y == NULL || (int)algo < 0 ||
	    algo >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
		return CUDNN_STATUS_BAD_PARAM;
	if (algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM && (st = conv_gemm(handle)) != CUDNN_STATUS_SUCCESS)
		return st;
	return dn_time(handle, max3(tensor_elements(xt), filter_elements(wf), tensor_elements(yt)), K_CONV_FWD);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha, const cudnnFilterDescriptor_t wDesc,
					   const void *w, const cudnnTensorDescriptor_t dyDesc, const void *dy,
					   const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdDataAlgo_t algo,
					   void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
					   const cudnnTensorDescriptor_t dxDesc, void *dx)
{
	const struct cudnnTensorStruct *dyt = tensor_of(dyDesc), *dxt = tensor_of(dxDesc);
	const struct cudnnFilterStruct *wf = filter_of(wDesc);
	cudnnStatus_t st = conv_check(handle, conv_of(convDesc), dxt, wf, dyt);

	(void)workSpace, (void)workSpaceSizeInBytes;
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (alpha == NULL || beta == NULL || w == NULL || dy == NULL || dx == NULL || (int)algo < 0 ||
	    algo >= CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, max3(tensor_elements(dxt), filter_elements(wf), tensor_elements(dyt)),
		       K_CONV_BWD_DATA);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
					     const cudnnTensorDescriptor_t xDesc, const void *x,
					     const cudnnTensorDescriptor_t dyDesc, const void *dy,
					     const cudnnConvolutionDescriptor_t convDesc,
					     cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
					     size_t workSpaceSizeInBytes, const void *beta,
					     const cudnnFilterDescriptor_t dwDesc, void *dw)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *dyt = tensor_of(dyDesc);
	const struct cudnnFilterStruct *dwf = filter_of(dwDesc);
	cudnnStatus_t st = conv_check(handle, conv_of(convDesc), xt, dwf, dyt);

	(void)workSpace, (void)workSpaceSizeInBytes;
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (alpha == NULL || beta == NULL || x == NULL || dy == NULL || dw == NULL || (int)algo < 0 ||
	    algo >= CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, max3(tensor_elements(xt), filter_elements(dwf), tensor_elements(dyt)),
		       K_CONV_BWD_FILTER);
}

/* cudnnFind*AlgorithmEx: cuDNN runs every algorithm of the operation once, on the handle's stream, and
 * returns their results fastest first. Here each run is the operation's kernel and every algorithm takes
 * the same time, so the results are in algorithm order. requestedAlgoCount below 1, or a NULL count or
 * results → BAD_PARAM. */
#define FIND_ALGOS(handle, requested, returned, results, algo_count, elements, kernel)                       \
	do {                                                                                                  \
		double ns_ = (elements)*fakegpu_env_double("FAKEGPU_DNN_NS_PER_ELEM", 1.0);                   \
		int n_ = (requested) < (int)(algo_count) ? (requested) : (int)(algo_count);                   \
		if ((requested) < 1 || (returned) == NULL || (results) == NULL)                               \
			return CUDNN_STATUS_BAD_PARAM;                                                        \
		for (int i_ = 0; i_ < n_; i_++) {                                                             \
			cudnnStatus_t run_ = dn_time(handle, elements, kernel);                               \
			if (run_ != CUDNN_STATUS_SUCCESS)                                                     \
				return run_;                                                                  \
			memset(&(results)[i_], 0, sizeof((results)[i_]));                                     \
			(results)[i_].algo = (__typeof__((results)[i_].algo))i_;                              \
			(results)[i_].status = CUDNN_STATUS_SUCCESS;                                          \
			(results)[i_].time = (float)((ns_ < 1000 ? 1000 : ns_) / 1e6);                        \
			(results)[i_].determinism = CUDNN_DETERMINISTIC;                                      \
			(results)[i_].mathType = CUDNN_DEFAULT_MATH;                                          \
		}                                                                                             \
		*(returned) = n_;                                                                             \
		return CUDNN_STATUS_SUCCESS;                                                                  \
	} while (0)

cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
						     const void *x, const cudnnFilterDescriptor_t wDesc, const void *w,
						     const cudnnConvolutionDescriptor_t convDesc,
						     const cudnnTensorDescriptor_t yDesc, void *y,
						     const int requestedAlgoCount, int *returnedAlgoCount,
						     cudnnConvolutionFwdAlgoPerf_t *perfResults, void *workSpace,
						     size_t workSpaceSizeInBytes)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc);
	const struct cudnnFilterStruct *wf = filter_of(wDesc);
	cudnnStatus_t st = conv_check(handle, conv_of(convDesc), xt, wf, yt);

	(void)workSpace, (void)workSpaceSizeInBytes;
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (x == NULL || w == NULL || y == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	FIND_ALGOS(handle, requestedAlgoCount, returnedAlgoCount, perfResults, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
		   max3(tensor_elements(xt), filter_elements(wf), tensor_elements(yt)), K_CONV_FWD);
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
							  const void *w, const cudnnTensorDescriptor_t dyDesc,
							  const void *dy, const cudnnConvolutionDescriptor_t convDesc,
							  const cudnnTensorDescriptor_t dxDesc, void *dx,
							  const int requestedAlgoCount, int *returnedAlgoCount,
							  cudnnConvolutionBwdDataAlgoPerf_t *perfResults,
							  void *workSpace, size_t workSpaceSizeInBytes)
{
	const struct cudnnTensorStruct *dyt = tensor_of(dyDesc), *dxt = tensor_of(dxDesc);
	const struct cudnnFilterStruct *wf = filter_of(wDesc);
	cudnnStatus_t st = conv_check(handle, conv_of(convDesc), dxt, wf, dyt);

	(void)workSpace, (void)workSpaceSizeInBytes;
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (w == NULL || dy == NULL || dx == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	FIND_ALGOS(handle, requestedAlgoCount, returnedAlgoCount, perfResults, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
		   max3(tensor_elements(dxt), filter_elements(wf), tensor_elements(dyt)), K_CONV_BWD_DATA);
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
							    const void *x, const cudnnTensorDescriptor_t dyDesc,
							    const void *y, const cudnnConvolutionDescriptor_t convDesc,
							    const cudnnFilterDescriptor_t dwDesc, void *dw,
							    const int requestedAlgoCount, int *returnedAlgoCount,
							    cudnnConvolutionBwdFilterAlgoPerf_t *perfResults,
							    void *workSpace, size_t workSpaceSizeInBytes)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *dyt = tensor_of(dyDesc);
	const struct cudnnFilterStruct *dwf = filter_of(dwDesc);
	cudnnStatus_t st = conv_check(handle, conv_of(convDesc), xt, dwf, dyt);

	(void)workSpace, (void)workSpaceSizeInBytes;
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (x == NULL || y == NULL || dw == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	FIND_ALGOS(handle, requestedAlgoCount, returnedAlgoCount, perfResults,
		   CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
		   max3(tensor_elements(xt), filter_elements(dwf), tensor_elements(dyt)), K_CONV_BWD_FILTER);
}

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t activationDesc, cudnnActivationMode_t mode,
					   cudnnNanPropagation_t reluNanOpt, double coef)
{
	if (activationDesc == NULL || activationDesc->magic != DN_ACT_MAGIC || (int)mode < CUDNN_ACTIVATION_SIGMOID ||
	    (int)mode > CUDNN_ACTIVATION_SWISH || ((int)reluNanOpt != CUDNN_NOT_PROPAGATE_NAN &&
						    (int)reluNanOpt != CUDNN_PROPAGATE_NAN))
		return CUDNN_STATUS_BAD_PARAM;
	activationDesc->mode = mode;
	activationDesc->nan = reluNanOpt;
	activationDesc->coef = coef;
	activationDesc->set = 1;
	return CUDNN_STATUS_SUCCESS;
}

/* As cuDNN: only RELU and IDENTITY activations, IDENTITY only with IMPLICIT_PRECOMP_GEMM. */
cudnnStatus_t cudnnConvolutionBiasActivationForward(cudnnHandle_t handle, const void *alpha1,
						    const cudnnTensorDescriptor_t xDesc, const void *x,
						    const cudnnFilterDescriptor_t wDesc, const void *w,
						    const cudnnConvolutionDescriptor_t convDesc,
						    cudnnConvolutionFwdAlgo_t algo, void *workSpace,
						    size_t workSpaceSizeInBytes, const void *alpha2,
						    const cudnnTensorDescriptor_t zDesc, const void *z,
						    const cudnnTensorDescriptor_t biasDesc, const void *bias,
						    const cudnnActivationDescriptor_t activationDesc,
						    const cudnnTensorDescriptor_t yDesc, void *y)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc), *zt = tensor_of(zDesc),
				       *bt = tensor_of(biasDesc);
	const struct cudnnFilterStruct *wf = filter_of(wDesc);
	cudnnStatus_t st = conv_check(handle, conv_of(convDesc), xt, wf, yt);

	(void)workSpace, (void)workSpaceSizeInBytes;
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (alpha1 == NULL || alpha2 == NULL || x == NULL || w == NULL || y == NULL || z == NULL || bias == NULL ||
	    zt == NULL || bt == NULL || !same_dims(zt, yt) || bt->nb_dims != 4 || bt->dims[0] != 1 ||
	    bt->dims[1] != yt->dims[1] || bt->dims[2] != 1 || bt->dims[3] != 1 || activationDesc == NULL ||
	    activationDesc->magic != DN_ACT_MAGIC || !activationDesc->set || (int)algo < 0 ||
	    algo >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
		return CUDNN_STATUS_BAD_PARAM;
	if (activationDesc->mode != CUDNN_ACTIVATION_RELU && activationDesc->mode != CUDNN_ACTIVATION_IDENTITY)
		return CUDNN_STATUS_NOT_SUPPORTED;
	if (activationDesc->mode == CUDNN_ACTIVATION_IDENTITY && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
		return CUDNN_STATUS_NOT_SUPPORTED;
	return dn_time(handle, max3(tensor_elements(xt), filter_elements(wf), tensor_elements(yt)),
		       K_CONV_BIAS_ACT);
}

/* ---- batch normalisation, softmax ---- */

cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derivedBnDesc, const cudnnTensorDescriptor_t xDesc,
					    cudnnBatchNormMode_t mode)
{
	const struct cudnnTensorStruct *x = tensor_of(xDesc);
	int dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX], n;

	if (x == NULL || derivedBnDesc == NULL || (int)mode < CUDNN_BATCHNORM_PER_ACTIVATION ||
	    (int)mode > CUDNN_BATCHNORM_SPATIAL_PERSISTENT)
		return CUDNN_STATUS_BAD_PARAM;
	n = x->nb_dims;
	dims[0] = 1;
	for (int i = 1; i < n; i++)
		dims[i] = mode == CUDNN_BATCHNORM_PER_ACTIVATION || i == 1 ? x->dims[i] : 1;
	strides[n - 1] = 1;
	for (int i = n - 2; i >= 0; i--)
		strides[i] = strides[i + 1] * dims[i + 1];
	return tensor_set(derivedBnDesc, x->dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT, n, dims,
			  strides);
}

/* The scale/bias/mean/variance tensor: 1xCx1x1 (spatial) or 1xCxHxW (per activation). */
static int bn_param_ok(const struct cudnnTensorStruct *x, const struct cudnnTensorStruct *p, cudnnBatchNormMode_t mode)
{
	if ((int)mode < CUDNN_BATCHNORM_PER_ACTIVATION || (int)mode > CUDNN_BATCHNORM_SPATIAL_PERSISTENT)
		return 0;
	if (x == NULL || p == NULL || p->nb_dims != x->nb_dims || p->dims[0] != 1)
		return 0;
	for (int i = 1; i < x->nb_dims; i++)
		if (p->dims[i] != (mode == CUDNN_BATCHNORM_PER_ACTIVATION || i == 1 ? x->dims[i] : 1))
			return 0;
	return 1;
}

cudnnStatus_t cudnnBatchNormalizationForwardTraining(
	cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
	const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
	const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale, const void *bnBias,
	double exponentialAverageFactor, void *resultRunningMean, void *resultRunningVariance, double epsilon,
	void *resultSaveMean, void *resultSaveInvVariance)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc),
				       *pt = tensor_of(bnScaleBiasMeanVarDesc);

	(void)exponentialAverageFactor;
	if (!handle_ok(handle) || xt == NULL || yt == NULL || !same_dims(xt, yt) || !bn_param_ok(xt, pt, mode) ||
	    alpha == NULL || beta == NULL || x == NULL || y == NULL || bnScale == NULL || bnBias == NULL ||
	    (resultRunningMean == NULL) != (resultRunningVariance == NULL) ||
	    (resultSaveMean == NULL) != (resultSaveInvVariance == NULL) || epsilon < CUDNN_BN_MIN_EPSILON)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, tensor_elements(xt), K_BN_FWD_TRAINING);
}

cudnnStatus_t cudnnBatchNormalizationForwardInference(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
						      const void *alpha, const void *beta,
						      const cudnnTensorDescriptor_t xDesc, const void *x,
						      const cudnnTensorDescriptor_t yDesc, void *y,
						      const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc,
						      const void *bnScale, const void *bnBias, const void *estimatedMean,
						      const void *estimatedVariance, double epsilon)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc),
				       *pt = tensor_of(bnScaleBiasMeanVarDesc);

	if (!handle_ok(handle) || xt == NULL || yt == NULL || !same_dims(xt, yt) || !bn_param_ok(xt, pt, mode) ||
	    alpha == NULL || beta == NULL || x == NULL || y == NULL || bnScale == NULL || bnBias == NULL ||
	    estimatedMean == NULL || estimatedVariance == NULL || epsilon < CUDNN_BN_MIN_EPSILON)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, tensor_elements(xt), K_BN_FWD_INFERENCE);
}

cudnnStatus_t cudnnBatchNormalizationBackward(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
					      const void *alphaDataDiff, const void *betaDataDiff,
					      const void *alphaParamDiff, const void *betaParamDiff,
					      const cudnnTensorDescriptor_t xDesc, const void *x,
					      const cudnnTensorDescriptor_t dyDesc, const void *dy,
					      const cudnnTensorDescriptor_t dxDesc, void *dx,
					      const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScale,
					      void *dBnScaleResult, void *dBnBiasResult, double epsilon,
					      const void *savedMean, const void *savedInvVariance)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *dyt = tensor_of(dyDesc), *dxt = tensor_of(dxDesc),
				       *pt = tensor_of(dBnScaleBiasDesc);

	if (!handle_ok(handle) || xt == NULL || dyt == NULL || dxt == NULL || !same_dims(xt, dyt) ||
	    !same_dims(xt, dxt) || !bn_param_ok(xt, pt, mode) || alphaDataDiff == NULL || betaDataDiff == NULL ||
	    alphaParamDiff == NULL || betaParamDiff == NULL || x == NULL || dy == NULL || dx == NULL ||
	    bnScale == NULL || dBnScaleResult == NULL || dBnBiasResult == NULL ||
	    (savedMean == NULL) != (savedInvVariance == NULL) || epsilon < CUDNN_BN_MIN_EPSILON)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, tensor_elements(xt), K_BN_BWD);
}

/* The Ex forms' operations: BN_ACTIVATION and BN_ADD_ACTIVATION need a set activation descriptor. */
static int bn_ops_ok(cudnnBatchNormOps_t ops, const cudnnActivationDescriptor_t act)
{
	if ((int)ops < CUDNN_BATCHNORM_OPS_BN || (int)ops > CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION)
		return 0;
	return ops == CUDNN_BATCHNORM_OPS_BN || (act != NULL && act->magic == DN_ACT_MAGIC && act->set);
}

/* BN_ADD_ACTIVATION adds a tensor of the shape of x (z forward, dz backward; NULL: not given). */
static int bn_added_ok(cudnnBatchNormOps_t ops, const struct cudnnTensorStruct *added,
		       const struct cudnnTensorStruct *x)
{
	return ops != CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION || (added != NULL && same_dims(added, x));
}

/* The Ex forms take 4-D and 5-D tensors only. */
static int bn_ex_tensor_ok(const struct cudnnTensorStruct *x)
{
	return x != NULL && (x->nb_dims == 4 || x->nb_dims == 5);
}

/* The fake's batch normalisation needs no workspace and keeps nothing in the reserve space: any given (NULL
 * included) is accepted. */
cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
	cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const cudnnTensorDescriptor_t xDesc,
	const cudnnTensorDescriptor_t zDesc, const cudnnTensorDescriptor_t yDesc,
	const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const cudnnActivationDescriptor_t activationDesc,
	size_t *sizeInBytes)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc),
				       *pt = tensor_of(bnScaleBiasMeanVarDesc);

	if (!handle_ok(handle) || !bn_ex_tensor_ok(xt) || yt == NULL || !same_dims(xt, yt) ||
	    !bn_param_ok(xt, pt, mode) || !bn_ops_ok(bnOps, activationDesc) ||
	    !bn_added_ok(bnOps, tensor_of(zDesc), xt) ||
	    sizeInBytes == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	*sizeInBytes = 0;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
	cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const cudnnTensorDescriptor_t xDesc,
	const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
	const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t dBnScaleBiasDesc,
	const cudnnActivationDescriptor_t activationDesc, size_t *sizeInBytes)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc), *dyt = tensor_of(dyDesc),
				       *dxt = tensor_of(dxDesc), *pt = tensor_of(dBnScaleBiasDesc);

	if (!handle_ok(handle) || !bn_ex_tensor_ok(xt) || dyt == NULL || dxt == NULL || !same_dims(xt, dyt) ||
	    !same_dims(xt, dxt) || !bn_param_ok(xt, pt, mode) ||
	    !bn_ops_ok(bnOps, activationDesc) ||
	    !bn_added_ok(bnOps, tensor_of(dzDesc), xt) ||
	    (bnOps != CUDNN_BATCHNORM_OPS_BN && (yt == NULL || !same_dims(xt, yt))) || sizeInBytes == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	*sizeInBytes = 0;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
								   cudnnBatchNormOps_t bnOps,
								   const cudnnActivationDescriptor_t activationDesc,
								   const cudnnTensorDescriptor_t xDesc,
								   size_t *sizeInBytes)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc);

	if (!handle_ok(handle) || !bn_ex_tensor_ok(xt) || (int)mode < CUDNN_BATCHNORM_PER_ACTIVATION ||
	    (int)mode > CUDNN_BATCHNORM_SPATIAL_PERSISTENT ||
	    !bn_ops_ok(bnOps, activationDesc) || sizeInBytes == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	*sizeInBytes = 0;
	return CUDNN_STATUS_SUCCESS;
}

/* As cudnnBatchNormalizationForwardTraining, then activation (of the sum with z for BN_ADD_ACTIVATION). */
cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
	cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void *alpha, const void *beta,
	const cudnnTensorDescriptor_t xDesc, const void *xData, const cudnnTensorDescriptor_t zDesc, const void *zData,
	const cudnnTensorDescriptor_t yDesc, void *yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc,
	const void *bnScale, const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
	void *resultRunningVariance, double epsilon, void *resultSaveMean, void *resultSaveInvVariance,
	cudnnActivationDescriptor_t activationDesc, void *workspace, size_t workSpaceSizeInBytes, void *reserveSpace,
	size_t reserveSpaceSizeInBytes)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc),
				       *pt = tensor_of(bnScaleBiasMeanVarDesc);

	(void)exponentialAverageFactor, (void)workspace, (void)workSpaceSizeInBytes, (void)reserveSpace,
		(void)reserveSpaceSizeInBytes;
	if (!handle_ok(handle) || !bn_ex_tensor_ok(xt) || yt == NULL || !same_dims(xt, yt) || xt->dtype != yt->dtype ||
	    !bn_param_ok(xt, pt, mode) || !bn_ops_ok(bnOps, activationDesc) ||
	    !bn_added_ok(bnOps, tensor_of(zDesc), xt) ||
	    (bnOps == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION && zData == NULL) || alpha == NULL || beta == NULL ||
	    xData == NULL || yData == NULL || bnScale == NULL || bnBias == NULL ||
	    (resultRunningMean == NULL) != (resultRunningVariance == NULL) ||
	    (resultSaveMean == NULL) != (resultSaveInvVariance == NULL) || epsilon < CUDNN_BN_MIN_EPSILON)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, tensor_elements(xt), K_BN_FWD_TRAINING);
}

/* As cudnnBatchNormalizationBackward, through the activation: y and the bias are needed then, and dz for
 * BN_ADD_ACTIVATION. */
cudnnStatus_t cudnnBatchNormalizationBackwardEx(
	cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void *alphaDataDiff,
	const void *betaDataDiff, const void *alphaParamDiff, const void *betaParamDiff,
	const cudnnTensorDescriptor_t xDesc, const void *xData, const cudnnTensorDescriptor_t yDesc, const void *yData,
	const cudnnTensorDescriptor_t dyDesc, const void *dyData, const cudnnTensorDescriptor_t dzDesc, void *dzData,
	const cudnnTensorDescriptor_t dxDesc, void *dxData, const cudnnTensorDescriptor_t dBnScaleBiasDesc,
	const void *bnScaleData, const void *bnBiasData, void *dBnScaleData, void *dBnBiasData, double epsilon,
	const void *savedMean, const void *savedInvVariance, cudnnActivationDescriptor_t activationDesc,
	void *workSpace, size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc), *dyt = tensor_of(dyDesc),
				       *dxt = tensor_of(dxDesc), *pt = tensor_of(dBnScaleBiasDesc);
	int activation = bnOps != CUDNN_BATCHNORM_OPS_BN;

	(void)workSpace, (void)workSpaceSizeInBytes, (void)reserveSpace, (void)reserveSpaceSizeInBytes;
	if (!handle_ok(handle) || !bn_ex_tensor_ok(xt) || dyt == NULL || dxt == NULL || !same_dims(xt, dyt) ||
	    !same_dims(xt, dxt) || !bn_param_ok(xt, pt, mode) ||
	    !bn_ops_ok(bnOps, activationDesc) ||
	    !bn_added_ok(bnOps, tensor_of(dzDesc), xt) ||
	    (bnOps == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION && dzData == NULL) ||
	    (activation && (yt == NULL || !same_dims(xt, yt) || yData == NULL || bnBiasData == NULL)) ||
	    alphaDataDiff == NULL || betaDataDiff == NULL || alphaParamDiff == NULL || betaParamDiff == NULL ||
	    xData == NULL || dyData == NULL || dxData == NULL || bnScaleData == NULL || dBnScaleData == NULL ||
	    dBnBiasData == NULL || (savedMean == NULL) != (savedInvVariance == NULL) || epsilon < CUDNN_BN_MIN_EPSILON)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, tensor_elements(xt), K_BN_BWD);
}

static int softmax_args_ok(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode)
{
	return (int)algo >= CUDNN_SOFTMAX_FAST && (int)algo <= CUDNN_SOFTMAX_LOG &&
	       (int)mode >= CUDNN_SOFTMAX_MODE_INSTANCE && (int)mode <= CUDNN_SOFTMAX_MODE_CHANNEL;
}

cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
				  const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
				  const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc);

	if (!handle_ok(handle) || !softmax_args_ok(algo, mode) || xt == NULL || yt == NULL || !same_dims(xt, yt) ||
	    alpha == NULL || beta == NULL || x == NULL || y == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, tensor_elements(xt), K_SOFTMAX_FWD);
}

cudnnStatus_t cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
				   const void *alpha, const cudnnTensorDescriptor_t yDesc, const void *y,
				   const cudnnTensorDescriptor_t dyDesc, const void *dy, const void *beta,
				   const cudnnTensorDescriptor_t dxDesc, void *dx)
{
	const struct cudnnTensorStruct *yt = tensor_of(yDesc), *dyt = tensor_of(dyDesc), *dxt = tensor_of(dxDesc);

	if (!handle_ok(handle) || !softmax_args_ok(algo, mode) || yt == NULL || dyt == NULL || dxt == NULL ||
	    !same_dims(yt, dyt) || !same_dims(yt, dxt) || alpha == NULL || beta == NULL || y == NULL || dy == NULL ||
	    dx == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, tensor_elements(yt), K_SOFTMAX_BWD);
}

/* ---- pooling, spatial transformer ---- */

cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t poolingDesc, cudnnPoolingMode_t mode,
					  cudnnNanPropagation_t maxpoolingNanOpt, int windowHeight, int windowWidth,
					  int verticalPadding, int horizontalPadding, int verticalStride,
					  int horizontalStride)
{
	if (poolingDesc == NULL || poolingDesc->magic != DN_POOL_MAGIC || (int)mode < CUDNN_POOLING_MAX ||
	    (int)mode > CUDNN_POOLING_MAX_DETERMINISTIC ||
	    ((int)maxpoolingNanOpt != CUDNN_NOT_PROPAGATE_NAN && (int)maxpoolingNanOpt != CUDNN_PROPAGATE_NAN) ||
	    windowHeight <= 0 || windowWidth <= 0 || verticalPadding < 0 || horizontalPadding < 0 ||
	    verticalStride <= 0 || horizontalStride <= 0)
		return CUDNN_STATUS_BAD_PARAM;
	poolingDesc->mode = mode;
	poolingDesc->nan = maxpoolingNanOpt;
	poolingDesc->nb_dims = 2;
	poolingDesc->window[0] = windowHeight, poolingDesc->window[1] = windowWidth;
	poolingDesc->pad[0] = verticalPadding, poolingDesc->pad[1] = horizontalPadding;
	poolingDesc->stride[0] = verticalStride, poolingDesc->stride[1] = horizontalStride;
	poolingDesc->set = 1;
	return CUDNN_STATUS_SUCCESS;
}

/* x and y: the pooling's spatial dimensions plus n and c, which they share, of one data type. */
cudnnStatus_t cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc, const void *alpha,
				  const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
				  const cudnnTensorDescriptor_t yDesc, void *y)
{
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc);
	double xn, yn;

	if (!handle_ok(handle) || poolingDesc == NULL || poolingDesc->magic != DN_POOL_MAGIC || !poolingDesc->set ||
	    xt == NULL || yt == NULL || xt->nb_dims != poolingDesc->nb_dims + 2 || yt->nb_dims != xt->nb_dims ||
	    xt->dims[0] != yt->dims[0] || xt->dims[1] != yt->dims[1] || xt->dtype != yt->dtype || alpha == NULL ||
	    beta == NULL || x == NULL || y == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	xn = tensor_elements(xt), yn = tensor_elements(yt);
	return dn_time(handle, xn > yn ? xn : yn, K_POOLING_FWD);
}

/* cuDNN transforms in 2-D only (4-D tensors): other sizes are CUDNN_STATUS_NOT_SUPPORTED. */
cudnnStatus_t cudnnSetSpatialTransformerNdDescriptor(cudnnSpatialTransformerDescriptor_t stDesc,
						     cudnnSamplerType_t samplerType, cudnnDataType_t dataType,
						     const int nbDims, const int dimA[])
{
	if (stDesc == NULL || stDesc->magic != DN_ST_MAGIC || dimA == NULL || samplerType != CUDNN_SAMPLER_BILINEAR ||
	    !dtype_ok(dataType) || nbDims <= 0 || nbDims > CUDNN_DIM_MAX)
		return CUDNN_STATUS_BAD_PARAM;
	if (nbDims != 4)
		return CUDNN_STATUS_NOT_SUPPORTED;
	for (int i = 0; i < 4; i++)
		if (dimA[i] <= 0)
			return CUDNN_STATUS_BAD_PARAM;
	stDesc->dtype = dataType;
	memcpy(stDesc->dims, dimA, sizeof(stDesc->dims));
	stDesc->set = 1;
	return CUDNN_STATUS_SUCCESS;
}

static const struct cudnnSpatialTransformerStruct *st_of(const cudnnSpatialTransformerDescriptor_t st)
{
	return st != NULL && st->magic == DN_ST_MAGIC && st->set ? st : NULL;
}

/* The sampling grid: an (x, y) pair per point of the transformed tensor's n x h x w. */
static double st_grid_elements(const struct cudnnSpatialTransformerStruct *st)
{
	return 2.0 * st->dims[0] * st->dims[2] * st->dims[3];
}

/* The grid of an affine transform theta (n x 2 x 3), and theta's gradient from the grid's. */
cudnnStatus_t cudnnSpatialTfGridGeneratorForward(cudnnHandle_t handle, const cudnnSpatialTransformerDescriptor_t stDesc,
						 const void *theta, void *grid)
{
	const struct cudnnSpatialTransformerStruct *st = st_of(stDesc);

	if (!handle_ok(handle) || st == NULL || theta == NULL || grid == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, st_grid_elements(st), K_ST_GRID_FWD);
}

cudnnStatus_t cudnnSpatialTfGridGeneratorBackward(cudnnHandle_t handle,
						  const cudnnSpatialTransformerDescriptor_t stDesc, const void *dgrid,
						  void *dtheta)
{
	const struct cudnnSpatialTransformerStruct *st = st_of(stDesc);

	if (!handle_ok(handle) || st == NULL || dgrid == NULL || dtheta == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, st_grid_elements(st), K_ST_GRID_BWD);
}

/* x (4-D) sampled into the transformed tensor y (the descriptor's dimensions), n and c shared. */
static int st_tensors_ok(const struct cudnnSpatialTransformerStruct *st, const struct cudnnTensorStruct *x,
			 const struct cudnnTensorStruct *y)
{
	return st != NULL && x != NULL && y != NULL && x->nb_dims == 4 && y->nb_dims == 4 &&
	       memcmp(y->dims, st->dims, sizeof(st->dims)) == 0 && x->dims[0] == y->dims[0] &&
	       x->dims[1] == y->dims[1] && x->dtype == y->dtype;
}

cudnnStatus_t cudnnSpatialTfSamplerForward(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t stDesc,
					   const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
					   const void *grid, const void *beta, cudnnTensorDescriptor_t yDesc, void *y)
{
	const struct cudnnSpatialTransformerStruct *st = st_of(stDesc);
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *yt = tensor_of(yDesc);

	if (!handle_ok(handle) || !st_tensors_ok(st, xt, yt) || alpha == NULL || beta == NULL || x == NULL ||
	    grid == NULL || y == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, max3(tensor_elements(xt), tensor_elements(yt), st_grid_elements(st)), K_ST_SAMPLER_FWD);
}

cudnnStatus_t cudnnSpatialTfSamplerBackward(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t stDesc,
					    const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
					    const void *beta, const cudnnTensorDescriptor_t dxDesc, void *dx,
					    const void *alphaDgrid, const cudnnTensorDescriptor_t dyDesc, const void *dy,
					    const void *grid, const void *betaDgrid, void *dgrid)
{
	const struct cudnnSpatialTransformerStruct *st = st_of(stDesc);
	const struct cudnnTensorStruct *xt = tensor_of(xDesc), *dxt = tensor_of(dxDesc), *dyt = tensor_of(dyDesc);

	if (!handle_ok(handle) || !st_tensors_ok(st, xt, dyt) || dxt == NULL || !same_dims(xt, dxt) || alpha == NULL ||
	    beta == NULL || alphaDgrid == NULL || betaDgrid == NULL || x == NULL || dx == NULL || dy == NULL ||
	    grid == NULL || dgrid == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, max3(tensor_elements(xt), tensor_elements(dyt), st_grid_elements(st)), K_ST_SAMPLER_BWD);
}

/* ---- RNN (minimal: descriptors, sizes, timed operations) ---- */

cudnnStatus_t cudnnSetRNNDescriptor_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNAlgo_t algo, cudnnRNNMode_t cellMode,
				       cudnnRNNBiasMode_t biasMode, cudnnDirectionMode_t dirMode,
				       cudnnRNNInputMode_t inputMode, cudnnDataType_t dataType,
				       cudnnDataType_t mathPrec, cudnnMathType_t mathType, int32_t inputSize,
				       int32_t hiddenSize, int32_t projSize, int32_t numLayers,
				       cudnnDropoutDescriptor_t dropoutDesc, uint32_t auxFlags)
{
	(void)biasMode, (void)inputMode, (void)mathPrec, (void)mathType, (void)dropoutDesc, (void)auxFlags;
	if (rnnDesc == NULL || rnnDesc->magic != DN_RNN_MAGIC || (int)algo < 0 || algo >= CUDNN_RNN_ALGO_COUNT ||
	    (int)cellMode < CUDNN_RNN_RELU || (int)cellMode > CUDNN_GRU ||
	    (dirMode != CUDNN_UNIDIRECTIONAL && dirMode != CUDNN_BIDIRECTIONAL) || !dtype_ok(dataType) ||
	    inputSize <= 0 || hiddenSize <= 0 || numLayers <= 0 || projSize <= 0 || projSize > hiddenSize)
		return CUDNN_STATUS_BAD_PARAM;
	rnnDesc->algo = algo;
	rnnDesc->cell = cellMode;
	rnnDesc->dir = dirMode;
	rnnDesc->dtype = dataType;
	rnnDesc->input_size = inputSize;
	rnnDesc->hidden_size = hiddenSize;
	rnnDesc->proj_size = projSize;
	rnnDesc->layers = numLayers;
	rnnDesc->set = 1;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc, cudnnDataType_t dataType,
					cudnnRNNDataLayout_t layout, int maxSeqLength, int batchSize, int vectorSize,
					const int seqLengthArray[], void *paddingFill)
{
	(void)paddingFill;
	if (rnnDataDesc == NULL || rnnDataDesc->magic != DN_RNNDATA_MAGIC || !dtype_ok(dataType) ||
	    (int)layout < CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED ||
	    (int)layout > CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED || maxSeqLength <= 0 || batchSize <= 0 ||
	    vectorSize <= 0 || seqLengthArray == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < batchSize; i++)
		if (seqLengthArray[i] <= 0 || seqLengthArray[i] > maxSeqLength)
			return CUDNN_STATUS_BAD_PARAM;
	rnnDataDesc->dtype = dataType;
	rnnDataDesc->layout = layout;
	rnnDataDesc->max_seq = maxSeqLength;
	rnnDataDesc->batch = batchSize;
	rnnDataDesc->vector = vectorSize;
	rnnDataDesc->set = 1;
	return CUDNN_STATUS_SUCCESS;
}

static const struct cudnnRNNStruct *rnn_of(cudnnRNNDescriptor_t r)
{
	return r != NULL && r->magic == DN_RNN_MAGIC && r->set ? r : NULL;
}

static const struct cudnnRNNDataStruct *rnndata_of(cudnnRNNDataDescriptor_t d)
{
	return d != NULL && d->magic == DN_RNNDATA_MAGIC && d->set ? d : NULL;
}

static int rnn_gates(const struct cudnnRNNStruct *r)
{
	return r->cell == CUDNN_LSTM ? 4 : r->cell == CUDNN_GRU ? 3 : 1;
}

static int rnn_dirs(const struct cudnnRNNStruct *r)
{
	return r->dir == CUDNN_BIDIRECTIONAL ? 2 : 1;
}

static size_t rnn_elem(const struct cudnnRNNStruct *r)
{
	return r->dtype == CUDNN_DATA_DOUBLE ? 8 : r->dtype == CUDNN_DATA_HALF || r->dtype == CUDNN_DATA_BFLOAT16 ? 2 : 4;
}

/* Weights and biases of every layer and direction: gates x (input or previous output + hidden + 2 biases). */
static size_t rnn_weight_bytes(const struct cudnnRNNStruct *r)
{
	size_t total = 0;

	for (int l = 0; l < r->layers; l++) {
		size_t in = l == 0 ? (size_t)r->input_size : (size_t)r->proj_size * (size_t)rnn_dirs(r);

		total += (size_t)rnn_dirs(r) * (size_t)rnn_gates(r) * (size_t)r->hidden_size *
			 (in + (size_t)r->proj_size + 2);
	}
	return total * rnn_elem(r);
}

static size_t rnn_reserve_bytes(const struct cudnnRNNStruct *r, const struct cudnnRNNDataStruct *x)
{
	return (size_t)x->max_seq * (size_t)x->batch * (size_t)r->hidden_size * (size_t)rnn_dirs(r) *
	       (size_t)r->layers * (size_t)rnn_gates(r) * rnn_elem(r);
}

static double rnn_elements(const struct cudnnRNNStruct *r, const struct cudnnRNNDataStruct *x)
{
	return (double)x->max_seq * x->batch * r->hidden_size * rnn_dirs(r) * r->layers * rnn_gates(r);
}

cudnnStatus_t cudnnGetRNNWeightSpaceSize(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, size_t *weightSpaceSize)
{
	const struct cudnnRNNStruct *r = rnn_of(rnnDesc);

	if (!handle_ok(handle) || r == NULL || weightSpaceSize == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	*weightSpaceSize = rnn_weight_bytes(r);
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetRNNTempSpaceSizes(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnForwardMode_t fwdMode,
					cudnnRNNDataDescriptor_t xDesc, size_t *workSpaceSize, size_t *reserveSpaceSize)
{
	const struct cudnnRNNStruct *r = rnn_of(rnnDesc);
	const struct cudnnRNNDataStruct *x = rnndata_of(xDesc);

	if (!handle_ok(handle) || r == NULL || x == NULL || (fwdMode != CUDNN_FWD_MODE_INFERENCE &&
							    fwdMode != CUDNN_FWD_MODE_TRAINING))
		return CUDNN_STATUS_BAD_PARAM;
	if (workSpaceSize != NULL)
		*workSpaceSize = 0;
	if (reserveSpaceSize != NULL)
		*reserveSpaceSize = fwdMode == CUDNN_FWD_MODE_TRAINING ? rnn_reserve_bytes(r, x) : 0;
	return CUDNN_STATUS_SUCCESS;
}

/* Shared checks of the RNN operations: x and y are the sequences in and out. */
static cudnnStatus_t rnn_check(cudnnHandle_t handle, const struct cudnnRNNStruct *r,
			       const struct cudnnRNNDataStruct *x, const struct cudnnRNNDataStruct *y,
			       const int32_t *devSeqLengths, size_t weightSpaceSize, const void *weightSpace,
			       int training, size_t reserveSpaceSize, const void *reserveSpace)
{
	if (!handle_ok(handle) || r == NULL || x == NULL || y == NULL || devSeqLengths == NULL || weightSpace == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	if (x->vector != r->input_size || y->vector != r->proj_size * rnn_dirs(r) || x->batch != y->batch ||
	    x->max_seq != y->max_seq || weightSpaceSize < rnn_weight_bytes(r))
		return CUDNN_STATUS_BAD_PARAM;
	if (training && (reserveSpace == NULL || reserveSpaceSize < rnn_reserve_bytes(r, x)))
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnRNNForward(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnForwardMode_t fwdMode,
			      const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
			      cudnnRNNDataDescriptor_t yDesc, void *y, cudnnTensorDescriptor_t hDesc, const void *hx,
			      void *hy, cudnnTensorDescriptor_t cDesc, const void *cx, void *cy, size_t weightSpaceSize,
			      const void *weightSpace, size_t workSpaceSize, void *workSpace, size_t reserveSpaceSize,
			      void *reserveSpace)
{
	const struct cudnnRNNStruct *r = rnn_of(rnnDesc);
	const struct cudnnRNNDataStruct *xd = rnndata_of(xDesc), *yd = rnndata_of(yDesc);
	cudnnStatus_t st;

	(void)hDesc, (void)hx, (void)hy, (void)cDesc, (void)cx, (void)cy, (void)workSpaceSize, (void)workSpace;
	if (fwdMode != CUDNN_FWD_MODE_INFERENCE && fwdMode != CUDNN_FWD_MODE_TRAINING)
		return CUDNN_STATUS_BAD_PARAM;
	st = rnn_check(handle, r, xd, yd, devSeqLengths, weightSpaceSize, weightSpace,
		       fwdMode == CUDNN_FWD_MODE_TRAINING, reserveSpaceSize, reserveSpace);
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (x == NULL || y == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, rnn_elements(r, xd), K_RNN_FWD);
}

cudnnStatus_t cudnnRNNBackwardData_v8(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
				      const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t yDesc, const void *y,
				      const void *dy, cudnnRNNDataDescriptor_t xDesc, void *dx,
				      cudnnTensorDescriptor_t hDesc, const void *hx, const void *dhy, void *dhx,
				      cudnnTensorDescriptor_t cDesc, const void *cx, const void *dcy, void *dcx,
				      size_t weightSpaceSize, const void *weightSpace, size_t workSpaceSize,
				      void *workSpace, size_t reserveSpaceSize, void *reserveSpace)
{
	const struct cudnnRNNStruct *r = rnn_of(rnnDesc);
	const struct cudnnRNNDataStruct *xd = rnndata_of(xDesc), *yd = rnndata_of(yDesc);
	cudnnStatus_t st;

	(void)hDesc, (void)hx, (void)dhy, (void)dhx, (void)cDesc, (void)cx, (void)dcy, (void)dcx;
	(void)workSpaceSize, (void)workSpace;
	st = rnn_check(handle, r, xd, yd, devSeqLengths, weightSpaceSize, weightSpace, 1, reserveSpaceSize,
		       reserveSpace);
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (y == NULL || dy == NULL || dx == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, rnn_elements(r, xd), K_RNN_BWD_DATA);
}

cudnnStatus_t cudnnRNNBackwardWeights_v8(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnWgradMode_t addGrad,
					 const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
					 cudnnTensorDescriptor_t hDesc, const void *hx, cudnnRNNDataDescriptor_t yDesc,
					 const void *y, size_t weightSpaceSize, void *dweightSpace,
					 size_t workSpaceSize, void *workSpace, size_t reserveSpaceSize,
					 void *reserveSpace)
{
	const struct cudnnRNNStruct *r = rnn_of(rnnDesc);
	const struct cudnnRNNDataStruct *xd = rnndata_of(xDesc), *yd = rnndata_of(yDesc);
	cudnnStatus_t st;

	(void)hDesc, (void)hx, (void)workSpaceSize, (void)workSpace;
	if (addGrad != CUDNN_WGRAD_MODE_ADD && addGrad != CUDNN_WGRAD_MODE_SET)
		return CUDNN_STATUS_BAD_PARAM;
	st = rnn_check(handle, r, xd, yd, devSeqLengths, weightSpaceSize, dweightSpace, 1, reserveSpaceSize,
		       reserveSpace);
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	if (x == NULL || y == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	return dn_time(handle, rnn_elements(r, xd), K_RNN_BWD_WEIGHTS);
}

/* ---- backend (graph) API ----
 *
 * A descriptor is its type, whether it is finalized, and the attributes set on it, each kept as given
 * (type, count, bytes). Descriptor-valued attributes keep deep copies of the descriptors given (which must be
 * finalized), so the caller may destroy its own; cudnnBackendGetAttribute copies them back into descriptors
 * the caller made, as cuDNN does. The fake has one engine (global index 0) per operation graph. */

struct bd_attr {
	cudnnBackendAttributeName_t name;
	cudnnBackendAttributeType_t type;
	int64_t count;
	void *data; /* count elements; for CUDNN_TYPE_BACKEND_DESCRIPTOR: struct bdesc *[count], owned */
};

struct bdesc {
	uint32_t magic;
	cudnnBackendDescriptorType_t type;
	int finalized;
	int nattrs;
	struct bd_attr *attrs;
};

static size_t bd_elem_size(cudnnBackendAttributeType_t t)
{
	switch (t) {
	case CUDNN_TYPE_HANDLE: return sizeof(cudnnHandle_t);
	case CUDNN_TYPE_DATA_TYPE: return sizeof(cudnnDataType_t);
	case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
	case CUDNN_TYPE_INT64: return sizeof(int64_t);
	case CUDNN_TYPE_FLOAT: return sizeof(float);
	case CUDNN_TYPE_DOUBLE: return sizeof(double);
	case CUDNN_TYPE_VOID_PTR: return sizeof(void *);
	case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(cudnnBackendDescriptor_t);
	case CUDNN_TYPE_INT32: return sizeof(int32_t);
	case CUDNN_TYPE_CHAR: return sizeof(char);
	case CUDNN_TYPE_FRACTION: return sizeof(cudnnFraction_t);
	case CUDNN_TYPE_CONVOLUTION_MODE:
	case CUDNN_TYPE_HEUR_MODE:
	case CUDNN_TYPE_KNOB_TYPE:
	case CUDNN_TYPE_NAN_PROPOGATION:
	case CUDNN_TYPE_NUMERICAL_NOTE:
	case CUDNN_TYPE_LAYOUT_TYPE:
	case CUDNN_TYPE_ATTRIB_NAME:
	case CUDNN_TYPE_POINTWISE_MODE:
	case CUDNN_TYPE_GENSTATS_MODE:
	case CUDNN_TYPE_BN_FINALIZE_STATS_MODE:
	case CUDNN_TYPE_REDUCTION_OPERATOR_TYPE:
	case CUDNN_TYPE_BEHAVIOR_NOTE:
	case CUDNN_TYPE_TENSOR_REORDERING_MODE:
	case CUDNN_TYPE_RESAMPLE_MODE:
	case CUDNN_TYPE_PADDING_MODE:
	case CUDNN_TYPE_SIGNAL_MODE:
	case CUDNN_TYPE_NORM_MODE:
	case CUDNN_TYPE_NORM_FWD_PHASE:
	case CUDNN_TYPE_RNG_DISTRIBUTION:
	case CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE: return sizeof(int);
	default: return 0;
	}
}

static int bd_is_operation(cudnnBackendDescriptorType_t t)
{
	switch (t) {
	case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_CONTRACT_BAND_MATRIX_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR:
	case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR: return 1;
	default: return 0;
	}
}

#define BD_ANY_OPERATION (-1)
#define BD_NOT_DESCRIPTOR (-2)
#define BD_FLOAT_OR_DOUBLE ((cudnnBackendAttributeType_t)-1)

/* The attributes the fake knows: the descriptor type they belong to, their element type and, for
 * descriptor-valued ones, the type of descriptor they take. Others are kept unchecked. */
static const struct bd_known {
	cudnnBackendAttributeName_t name;
	cudnnBackendDescriptorType_t owner;
	cudnnBackendAttributeType_t type;
	int child; /* cudnnBackendDescriptorType_t, BD_ANY_OPERATION or BD_NOT_DESCRIPTOR */
} bd_known[] = {
	{ CUDNN_ATTR_POINTWISE_MODE, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, CUDNN_TYPE_POINTWISE_MODE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, CUDNN_TYPE_DATA_TYPE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, CUDNN_TYPE_DATA_TYPE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, CUDNN_TYPE_CONVOLUTION_MODE,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, CUDNN_TYPE_INT64, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, CUDNN_TYPE_INT64,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, CUDNN_TYPE_INT64,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, CUDNN_TYPE_INT64,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, CUDNN_TYPE_INT64,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, CUDNN_TYPE_HEUR_MODE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	  CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR },
	{ CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	  CUDNN_BACKEND_ENGINECFG_DESCRIPTOR },
	{ CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	  CUDNN_BACKEND_ENGINE_DESCRIPTOR },
	{ CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, CUDNN_TYPE_INT64, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, CUDNN_TYPE_HANDLE,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR },
	{ CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, CUDNN_TYPE_INT64,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
	  BD_FLOAT_OR_DOUBLE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
	  BD_FLOAT_OR_DOUBLE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
	  BD_FLOAT_OR_DOUBLE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
	  BD_FLOAT_OR_DOUBLE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
	  CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	  CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
	  CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, BD_FLOAT_OR_DOUBLE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
	  CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, BD_FLOAT_OR_DOUBLE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
	  CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	  CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
	  CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	  CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
	  CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	  CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
	  CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	  CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_POINTWISE_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, BD_FLOAT_OR_DOUBLE,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, BD_FLOAT_OR_DOUBLE,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
	  CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, CUDNN_TYPE_HANDLE,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	  BD_ANY_OPERATION },
	{ CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, CUDNN_TYPE_INT64,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_BACKEND_TENSOR_DESCRIPTOR, CUDNN_TYPE_INT64, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_BACKEND_TENSOR_DESCRIPTOR, CUDNN_TYPE_DATA_TYPE, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_BACKEND_TENSOR_DESCRIPTOR, CUDNN_TYPE_INT64, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_TENSOR_STRIDES, CUDNN_BACKEND_TENSOR_DESCRIPTOR, CUDNN_TYPE_INT64, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_BACKEND_TENSOR_DESCRIPTOR, CUDNN_TYPE_INT64, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_BACKEND_TENSOR_DESCRIPTOR, CUDNN_TYPE_BOOLEAN, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_BACKEND_TENSOR_DESCRIPTOR, CUDNN_TYPE_BOOLEAN, BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, CUDNN_TYPE_INT64,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, CUDNN_TYPE_VOID_PTR,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, CUDNN_TYPE_VOID_PTR,
	  BD_NOT_DESCRIPTOR },
	{ CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_BACKEND_ENGINE_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	  CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR },
	{ CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_BACKEND_ENGINE_DESCRIPTOR, CUDNN_TYPE_INT64, BD_NOT_DESCRIPTOR },
};

static const struct bd_known *bd_known_find(cudnnBackendAttributeName_t name)
{
	for (size_t i = 0; i < sizeof(bd_known) / sizeof(bd_known[0]); i++)
		if (bd_known[i].name == name)
			return &bd_known[i];
	return NULL;
}

static struct bdesc *bd_of(cudnnBackendDescriptor_t d)
{
	struct bdesc *b = d;

	return b != NULL && b->magic == DN_BACKEND_MAGIC ? b : NULL;
}

static void bd_clear(struct bdesc *b);

static void bd_free(struct bdesc *b)
{
	if (b == NULL)
		return;
	bd_clear(b);
	b->magic = 0;
	free(b);
}

static void bd_attr_free(struct bd_attr *a)
{
	if (a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
		for (int64_t i = 0; i < a->count; i++)
			bd_free(((struct bdesc **)a->data)[i]);
	free(a->data);
	a->data = NULL;
	a->count = 0;
}

/* Back to a fresh descriptor of its type. */
static void bd_clear(struct bdesc *b)
{
	for (int i = 0; i < b->nattrs; i++)
		bd_attr_free(&b->attrs[i]);
	free(b->attrs);
	b->attrs = NULL;
	b->nattrs = 0;
	b->finalized = 0;
}

static struct bdesc *bd_clone(const struct bdesc *src);

/* A deep copy of count elements of type t (descriptors cloned); NULL when out of memory. */
static void *bd_copy_data(cudnnBackendAttributeType_t t, int64_t count, const void *data)
{
	size_t bytes = (size_t)count * bd_elem_size(t);
	void *out = malloc(bytes ? bytes : 1);

	if (out == NULL)
		return NULL;
	if (t != CUDNN_TYPE_BACKEND_DESCRIPTOR) {
		memcpy(out, data, bytes);
		return out;
	}
	for (int64_t i = 0; i < count; i++) {
		((struct bdesc **)out)[i] = bd_clone(((struct bdesc *const *)data)[i]);
		if (((struct bdesc **)out)[i] == NULL) {
			for (int64_t j = 0; j < i; j++)
				bd_free(((struct bdesc **)out)[j]);
			free(out);
			return NULL;
		}
	}
	return out;
}

/* Sets (replacing) attribute name; data is copied. 0, or -1 when out of memory. */
static int bd_put(struct bdesc *b, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
		  const void *data)
{
	void *copy = bd_copy_data(type, count, data);
	struct bd_attr *a = NULL;

	if (copy == NULL)
		return -1;
	for (int i = 0; i < b->nattrs; i++)
		if (b->attrs[i].name == name)
			a = &b->attrs[i];
	if (a == NULL) {
		struct bd_attr *n = realloc(b->attrs, (size_t)(b->nattrs + 1) * sizeof(*n));

		if (n == NULL) {
			struct bd_attr tmp = { .type = type, .count = count, .data = copy };

			bd_attr_free(&tmp);
			return -1;
		}
		b->attrs = n;
		a = &b->attrs[b->nattrs++];
	} else {
		bd_attr_free(a);
	}
	*a = (struct bd_attr){ .name = name, .type = type, .count = count, .data = copy };
	return 0;
}

static struct bdesc *bd_clone(const struct bdesc *src)
{
	struct bdesc *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	b->magic = DN_BACKEND_MAGIC;
	b->type = src->type;
	for (int i = 0; i < src->nattrs; i++) {
		if (bd_put(b, src->attrs[i].name, src->attrs[i].type, src->attrs[i].count, src->attrs[i].data) != 0) {
			bd_free(b);
			return NULL;
		}
	}
	b->finalized = src->finalized;
	return b;
}

static const struct bd_attr *bd_get(const struct bdesc *b, cudnnBackendAttributeName_t name)
{
	for (int i = 0; i < b->nattrs; i++)
		if (b->attrs[i].name == name)
			return &b->attrs[i];
	return NULL;
}

/* The single descriptor held by a descriptor-valued attribute, or NULL. */
static const struct bdesc *bd_child(const struct bdesc *b, cudnnBackendAttributeName_t name)
{
	const struct bd_attr *a = bd_get(b, name);

	if (a == NULL || a->type != CUDNN_TYPE_BACKEND_DESCRIPTOR || a->count < 1)
		return NULL;
	return ((struct bdesc *const *)a->data)[0];
}

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t descriptorType,
					   cudnnBackendDescriptor_t *descriptor)
{
	struct bdesc *b;

	if (descriptor == NULL || (int)descriptorType < CUDNN_BACKEND_POINTWISE_DESCRIPTOR ||
	    (int)descriptorType > CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR)
		return CUDNN_STATUS_BAD_PARAM;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
	b->magic = DN_BACKEND_MAGIC;
	b->type = descriptorType;
	*descriptor = b;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
{
	struct bdesc *b = bd_of(descriptor);

	if (b == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	bd_free(b);
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor)
{
	struct bdesc *b = bd_of(descriptor);

	if (b == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	bd_clear(b);
	return CUDNN_STATUS_SUCCESS;
}

/* A finalized descriptor takes no more attributes (CUDNN_STATUS_NOT_INITIALIZED, as cuDNN); descriptors
 * given as values must be finalized (CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED) and of the type the attribute
 * takes. */
cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t attributeName,
				       cudnnBackendAttributeType_t attributeType, int64_t elementCount,
				       const void *arrayOfElements)
{
	struct bdesc *b = bd_of(descriptor);
	const struct bd_known *k = bd_known_find(attributeName);

	if (b == NULL || elementCount < 0 || (elementCount > 0 && arrayOfElements == NULL) ||
	    bd_elem_size(attributeType) == 0)
		return CUDNN_STATUS_BAD_PARAM;
	if (b->finalized)
		return CUDNN_STATUS_NOT_INITIALIZED;
	if (k != NULL) {
		if (k->owner != b->type)
			return CUDNN_STATUS_BAD_PARAM;
		if (k->type == BD_FLOAT_OR_DOUBLE ? attributeType != CUDNN_TYPE_FLOAT && attributeType != CUDNN_TYPE_DOUBLE
						  : attributeType != k->type)
			return CUDNN_STATUS_BAD_PARAM;
	}
	if (attributeType == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
		for (int64_t i = 0; i < elementCount; i++) {
			const struct bdesc *c = bd_of(((const cudnnBackendDescriptor_t *)arrayOfElements)[i]);

			if (c == NULL)
				return CUDNN_STATUS_BAD_PARAM;
			if (!c->finalized)
				return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
			if (k != NULL && (k->child == BD_ANY_OPERATION ? !bd_is_operation(c->type)
								       : (int)c->type != k->child))
				return CUDNN_STATUS_BAD_PARAM;
		}
	}
	if (bd_put(b, attributeName, attributeType, elementCount, arrayOfElements) != 0)
		return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
	return CUDNN_STATUS_SUCCESS;
}

/* Attributes a descriptor of this type must have before it can be finalized. */
static int bd_has_required(const struct bdesc *b)
{
	static const struct {
		cudnnBackendDescriptorType_t type;
		cudnnBackendAttributeName_t names[7];
		int n;
	} req[] = {
		{ CUDNN_BACKEND_TENSOR_DESCRIPTOR,
		  { CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_ATTR_TENSOR_STRIDES,
		    CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT },
		  5 },
		{ CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR,
		  { CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_ATTR_CONVOLUTION_DILATIONS,
		    CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
		    CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS },
		  7 },
		{ CUDNN_BACKEND_POINTWISE_DESCRIPTOR, { CUDNN_ATTR_POINTWISE_MODE, CUDNN_ATTR_POINTWISE_MATH_PREC }, 2 },
		{ CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
		  { CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
		    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC },
		  4 },
		{ CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
		  { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
		    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC },
		  4 },
		{ CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
		  { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
		    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
		    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC },
		  4 },
		{ CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
		  { CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
		    CUDNN_ATTR_OPERATION_POINTWISE_YDESC },
		  3 },
		{ CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, { CUDNN_ATTR_OPERATIONGRAPH_OPS }, 1 },
		{ CUDNN_BACKEND_ENGINE_DESCRIPTOR, { CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_ATTR_ENGINE_GLOBAL_INDEX }, 2 },
		{ CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, { CUDNN_ATTR_ENGINECFG_ENGINE }, 1 },
		{ CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, { CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_ATTR_ENGINEHEUR_MODE },
		  2 },
		{ CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, { CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG }, 1 },
		{ CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
		  { CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS },
		  2 },
	};

	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
		if (req[i].type != b->type)
			continue;
		for (int j = 0; j < req[i].n; j++) {
			const struct bd_attr *a = bd_get(b, req[i].names[j]);

			if (a == NULL || a->count < 1)
				return 0;
		}
	}
	return 1;
}

static int64_t bd_int64(const struct bdesc *b, cudnnBackendAttributeName_t name, int64_t def)
{
	const struct bd_attr *a = bd_get(b, name);

	return a != NULL && a->type == CUDNN_TYPE_INT64 && a->count >= 1 ? ((const int64_t *)a->data)[0] : def;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
{
	struct bdesc *b = bd_of(descriptor);

	if (b == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	if (b->finalized)
		return CUDNN_STATUS_SUCCESS;
	if (!bd_has_required(b))
		return CUDNN_STATUS_BAD_PARAM;
	switch (b->type) {
	case CUDNN_BACKEND_TENSOR_DESCRIPTOR: {
		const struct bd_attr *d = bd_get(b, CUDNN_ATTR_TENSOR_DIMENSIONS), *s = bd_get(b, CUDNN_ATTR_TENSOR_STRIDES);

		if (d->count != s->count || d->count > CUDNN_DIM_MAX)
			return CUDNN_STATUS_BAD_PARAM;
		for (int64_t i = 0; i < d->count; i++)
			if (((const int64_t *)d->data)[i] <= 0)
				return CUDNN_STATUS_BAD_PARAM;
		break;
	}
	case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
		if (bd_int64(b, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, -1) != 0)
			return CUDNN_STATUS_BAD_PARAM;
		break;
	case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
		int64_t zero = 0;

		if (bd_put(b, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &zero) != 0)
			return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
		break;
	}
	case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
		if (bd_get(b, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS)->count !=
		    bd_get(b, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS)->count)
			return CUDNN_STATUS_BAD_PARAM;
		break;
	default:
		break;
	}
	b->finalized = 1;
	return CUDNN_STATUS_SUCCESS;
}

/* Copies src into the caller's descriptor dst (same type). */
static cudnnStatus_t bd_copy_into(struct bdesc *dst, const struct bdesc *src)
{
	struct bdesc *tmp;

	if (dst->type != src->type)
		return CUDNN_STATUS_BAD_PARAM;
	tmp = bd_clone(src);
	if (tmp == NULL)
		return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
	bd_clear(dst);
	dst->attrs = tmp->attrs;
	dst->nattrs = tmp->nattrs;
	dst->finalized = tmp->finalized;
	tmp->attrs = NULL;
	tmp->nattrs = 0;
	bd_free(tmp);
	return CUDNN_STATUS_SUCCESS;
}

/* ENGINEHEUR_RESULTS: the fake's one engine configuration for the heuristic's graph. */
static cudnnStatus_t bd_heur_results(const struct bdesc *heur, int64_t requested, int64_t *count, void *array)
{
	const struct bd_attr *graph = bd_get(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
	struct bdesc engine = { .magic = DN_BACKEND_MAGIC, .type = CUDNN_BACKEND_ENGINE_DESCRIPTOR };
	struct bdesc cfg = { .magic = DN_BACKEND_MAGIC, .type = CUDNN_BACKEND_ENGINECFG_DESCRIPTOR };
	struct bdesc *engine_ptr = &engine, *target;
	int64_t zero = 0;
	cudnnStatus_t st = CUDNN_STATUS_SUCCESS;

	*count = 1;
	if (requested < 1)
		return CUDNN_STATUS_SUCCESS;
	target = bd_of(((cudnnBackendDescriptor_t *)array)[0]);
	if (target == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	if (bd_put(&engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, graph->data) != 0 ||
	    bd_put(&engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &zero) != 0) {
		st = CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
		goto out;
	}
	engine.finalized = 1;
	if (bd_put(&cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine_ptr) != 0) {
		st = CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
		goto out;
	}
	cfg.finalized = 1;
	st = bd_copy_into(target, &cfg);
out:
	bd_clear(&engine);
	bd_clear(&cfg);
	return st;
}

/* Reading needs a finalized descriptor (CUDNN_STATUS_NOT_INITIALIZED); *elementCount gets the number of
 * elements the attribute has (0 when never set), and at most requestedElementCount are copied. */
cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
				       cudnnBackendAttributeName_t attributeName,
				       cudnnBackendAttributeType_t attributeType, int64_t requestedElementCount,
				       int64_t *elementCount, void *arrayOfElements)
{
	const struct bdesc *b = bd_of(descriptor);
	const struct bd_known *k = bd_known_find(attributeName);
	const struct bd_attr *a;
	int64_t n;

	if (b == NULL || elementCount == NULL || requestedElementCount < 0 ||
	    (requestedElementCount > 0 && arrayOfElements == NULL) || bd_elem_size(attributeType) == 0)
		return CUDNN_STATUS_BAD_PARAM;
	if (!b->finalized)
		return CUDNN_STATUS_NOT_INITIALIZED;
	if (k != NULL && (k->owner != b->type || (k->type != BD_FLOAT_OR_DOUBLE && attributeType != k->type)))
		return CUDNN_STATUS_BAD_PARAM;
	if (attributeName == CUDNN_ATTR_ENGINEHEUR_RESULTS)
		return bd_heur_results(b, requestedElementCount, elementCount, arrayOfElements);
	if (attributeName == CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT) {
		*elementCount = 1;
		if (requestedElementCount > 0)
			*(int64_t *)arrayOfElements = 1;
		return CUDNN_STATUS_SUCCESS;
	}
	a = bd_get(b, attributeName);
	if (a == NULL) {
		*elementCount = 0;
		return CUDNN_STATUS_SUCCESS;
	}
	if (a->type != attributeType)
		return CUDNN_STATUS_BAD_PARAM;
	n = requestedElementCount < a->count ? requestedElementCount : a->count;
	if (a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
		for (int64_t i = 0; i < n; i++) {
			struct bdesc *dst = bd_of(((cudnnBackendDescriptor_t *)arrayOfElements)[i]);
			cudnnStatus_t st;

			if (dst == NULL)
				return CUDNN_STATUS_BAD_PARAM;
			st = bd_copy_into(dst, ((struct bdesc *const *)a->data)[i]);
			if (st != CUDNN_STATUS_SUCCESS)
				return st;
		}
	} else if (n > 0) {
		memcpy(arrayOfElements, a->data, (size_t)n * bd_elem_size(a->type));
	}
	*elementCount = a->count;
	return CUDNN_STATUS_SUCCESS;
}

/* Every tensor of an operation that is not virtual must be in the variant pack with a data pointer; the
 * operation's cost is its largest tensor, added to *elements. */
static cudnnStatus_t bd_check_op(const struct bdesc *op, const struct bd_attr *uids, const struct bd_attr *ptrs,
				 double *elements)
{
	double largest = 0;

	for (int i = 0; i < op->nattrs; i++) {
		const struct bd_attr *a = &op->attrs[i];

		if (a->type != CUDNN_TYPE_BACKEND_DESCRIPTOR)
			continue;
		for (int64_t j = 0; j < a->count; j++) {
			const struct bdesc *t = ((struct bdesc *const *)a->data)[j];
			const struct bd_attr *dims, *virt;
			double n = 1;
			int64_t uid;
			int found = 0;

			if (t->type != CUDNN_BACKEND_TENSOR_DESCRIPTOR)
				continue;
			dims = bd_get(t, CUDNN_ATTR_TENSOR_DIMENSIONS);
			for (int64_t d = 0; dims != NULL && d < dims->count; d++)
				n *= (double)((const int64_t *)dims->data)[d];
			if (n > largest)
				largest = n;
			virt = bd_get(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL);
			if (virt != NULL && virt->count >= 1 && *(const bool *)virt->data)
				continue;
			uid = bd_int64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, -1);
			for (int64_t u = 0; u < uids->count; u++) {
				if (((const int64_t *)uids->data)[u] == uid) {
					found = ((void *const *)ptrs->data)[u] != NULL;
					break;
				}
			}
			if (!found)
				return CUDNN_STATUS_BAD_PARAM;
		}
	}
	*elements += largest;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
				  cudnnBackendDescriptor_t variantPack)
{
	const struct bdesc *plan = bd_of(executionPlan), *pack = bd_of(variantPack), *cfg, *engine, *graph;
	const struct bd_attr *ops, *uids, *ptrs;
	double elements = 0;

	if (!handle_ok(handle) || plan == NULL || pack == NULL ||
	    plan->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || pack->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
		return CUDNN_STATUS_BAD_PARAM;
	if (!plan->finalized || !pack->finalized)
		return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
	cfg = bd_child(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
	engine = cfg ? bd_child(cfg, CUDNN_ATTR_ENGINECFG_ENGINE) : NULL;
	graph = engine ? bd_child(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH) : NULL;
	ops = graph ? bd_get(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS) : NULL;
	uids = bd_get(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
	ptrs = bd_get(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
	if (ops == NULL || uids == NULL || ptrs == NULL)
		return CUDNN_STATUS_BAD_PARAM;
	for (int64_t i = 0; i < ops->count; i++) {
		cudnnStatus_t st = bd_check_op(((struct bdesc *const *)ops->data)[i], uids, ptrs, &elements);

		if (st != CUDNN_STATUS_SUCCESS)
			return st;
	}
	return dn_time(handle, elements, K_GRAPH_EXECUTE);
}
