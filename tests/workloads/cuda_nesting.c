/* GPU library calls inside other GPU library calls, and NCCL groups, on the fake libraries.
 *
 * - convs cudnnConvolutionForward calls with the explicit-GEMM algorithm: the fake cuDNN runs each one's
 *   GEMM through cuBLASLt, loaded with dlopen and called through dlsym as cuDNN 9's engines do, so each
 *   makes one cublasLtMatmul inside the cuDNN call, and two kernels (the GEMM's and the convolution's).
 * - groups NCCL groups, each of pairs ncclSend/ncclRecv with oneself and one ncclAllReduce: NCCL launches
 *   the group's work at its ncclGroupEnd (the fake: one kernel per stream and kernel name), then one
 *   ncclAllReduce outside any group.
 *
 * - strangers: cublasSgeam (not wrapped) under external ids another CUPTI client pushed
 *   (CUSTOM0, as PyTorch's Kineto does), equal to the ids profwrap gives its first calls: those kernels are
 *   tied to no wrapped call.
 *
 * Prints its ground truth for tests/integration/test_gpu_nesting.py as `expect` lines:
 *   expect call NAME COUNT          calls the program made (cudnnConvolutionForward, ncclSend, ...)
 *   expect nested NAME COUNT        calls made inside them
 *   expect kernels-of NAME COUNT    kernels the work of those calls ran
 *   expect kernels COUNT            kernels in all
 *   expect kernels-wrapped COUNT    kernels launched inside wrapped calls */
#include <stdio.h>
#include <stdlib.h>

#include <dlfcn.h>
#include <stdint.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <cupti_activity.h>
#include <nccl.h>

#define CHECK(call, ok)                                                                     \
	do {                                                                                \
		if ((call) != (ok)) {                                                       \
			fprintf(stderr, "cuda_nesting: %s failed (line %d)\n", #call, __LINE__); \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

enum { CONVS = 5, GROUPS = 3, PAIRS = 2, COUNT = 1 << 14, STRANGERS = 3 };

static void convolutions(cudaStream_t s)
{
	cudnnHandle_t h;
	cudnnTensorDescriptor_t x, y;
	cudnnFilterDescriptor_t w;
	cudnnConvolutionDescriptor_t conv;
	float one = 1, zero = 0, *buf;

	CHECK(cudaMalloc((void **)&buf, 1 << 16), cudaSuccess);
	CHECK(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
	CHECK(cudnnSetStream(h, s), CUDNN_STATUS_SUCCESS);
	CHECK(cudnnCreateTensorDescriptor(&x), CUDNN_STATUS_SUCCESS);
	CHECK(cudnnCreateTensorDescriptor(&y), CUDNN_STATUS_SUCCESS);
	CHECK(cudnnCreateFilterDescriptor(&w), CUDNN_STATUS_SUCCESS);
	CHECK(cudnnCreateConvolutionDescriptor(&conv), CUDNN_STATUS_SUCCESS);
	CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 8, 8), CUDNN_STATUS_SUCCESS);
	CHECK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 8, 8), CUDNN_STATUS_SUCCESS);
	CHECK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3), CUDNN_STATUS_SUCCESS);
	CHECK(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
	      CUDNN_STATUS_SUCCESS);
	for (int i = 0; i < CONVS; i++)
		CHECK(cudnnConvolutionForward(h, &one, x, buf, w, buf, conv, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0,
					      &zero, y, buf),
		      CUDNN_STATUS_SUCCESS);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	printf("expect call cudnnConvolutionForward %d\n", CONVS);
	printf("expect nested cublasLtMatmul %d\n", CONVS);
	printf("expect kernels-of cudnnConvolutionForward %d\n", 2 * CONVS);
}

static void collectives(cudaStream_t s)
{
	ncclComm_t comm;
	int dev = 0;
	float *send, *recv;

	CHECK(cudaMalloc((void **)&send, COUNT * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&recv, COUNT * sizeof(float)), cudaSuccess);
	CHECK(ncclCommInitAll(&comm, 1, &dev), ncclSuccess);
	for (int g = 0; g < GROUPS; g++) {
		CHECK(ncclGroupStart(), ncclSuccess);
		for (int p = 0; p < PAIRS; p++) {
			CHECK(ncclSend(send, COUNT, ncclFloat, 0, comm, s), ncclSuccess);
			CHECK(ncclRecv(recv, COUNT, ncclFloat, 0, comm, s), ncclSuccess);
		}
		CHECK(ncclAllReduce(send, recv, COUNT, ncclFloat, ncclSum, comm, s), ncclSuccess);
		CHECK(ncclGroupEnd(), ncclSuccess);
	}
	CHECK(ncclAllReduce(send, recv, COUNT, ncclFloat, ncclSum, comm, s), ncclSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(ncclCommDestroy(comm), ncclSuccess);
	printf("expect call ncclSend %d\n", GROUPS * PAIRS);
	printf("expect call ncclRecv %d\n", GROUPS * PAIRS);
	printf("expect call ncclAllReduce %d\n", GROUPS + 1);
	printf("expect call ncclGroupStart %d\n", GROUPS);
	printf("expect call ncclGroupEnd %d\n", GROUPS);
	/* each group: one send/receive kernel and one all-reduce kernel; then the lone all-reduce's */
	printf("expect kernels-of nccl %d\n", 2 * GROUPS + 1);
}

static void strangers(cudaStream_t s)
{
	void *cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
	CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
	CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
	cublasHandle_t h;
	float one = 1, zero = 0, *m;
	uint64_t last;

	if (cupti == NULL) {
		fprintf(stderr, "cuda_nesting: no libcupti.so.13: %s\n", dlerror());
		exit(1);
	}
	*(void **)&push = dlsym(cupti, "cuptiActivityPushExternalCorrelationId");
	*(void **)&pop = dlsym(cupti, "cuptiActivityPopExternalCorrelationId");
	CHECK(push == NULL || pop == NULL, 0);
	CHECK(cudaMalloc((void **)&m, 3 * 16 * sizeof(float)), cudaSuccess);
	CHECK(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
	CHECK(cublasSetStream(h, s), CUBLAS_STATUS_SUCCESS);
	for (uint64_t id = 1; id <= STRANGERS; id++) {
		CHECK(push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id), CUPTI_SUCCESS);
		CHECK(cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, &one, m, 4, &zero, m + 16, 4, m + 32, 4),
		      CUBLAS_STATUS_SUCCESS);
		CHECK(pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last), CUPTI_SUCCESS);
	}
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
}

int main(void)
{
	cudaStream_t s;

	CHECK(cudaStreamCreate(&s), cudaSuccess);
	convolutions(s);
	collectives(s);
	strangers(s);
	printf("expect kernels %d\n", 2 * CONVS + 2 * GROUPS + 1 + STRANGERS);
	printf("expect kernels-wrapped %d\n", 2 * CONVS + 2 * GROUPS + 1);
	return 0;
}
