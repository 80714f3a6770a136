/* A CUDA graph captured from a stream and replayed, as torch.cuda.CUDAGraph does, on the fake libraries: the
 * kernels a replay runs are the graph's nodes, all under the graph launch's correlation id, launched together
 * by it rather than each by a call of their own.
 *
 * Captures NODES kernels (three different functions) on a stream, instantiates the graph, replays it REPLAYS
 * times, and launches PLAIN kernels of its own. Prints the ground truth for tests/integration/test_gpu_graphs.py
 * as `expect` lines:
 *   expect kernels N         kernels that ran in all
 *   expect graph-kernels N   of which the graph's replays ran
 *   expect replays N         graph launches
 *   expect plain N           kernels launched each by a call */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#define CHECK(call)                                                                                    \
	do {                                                                                           \
		cudaError_t e_ = (call);                                                               \
		if (e_ != cudaSuccess) {                                                               \
			fprintf(stderr, "cuda_graphs: %s failed: %d (line %d)\n", #call, (int)e_, __LINE__); \
			exit(1);                                                                       \
		}                                                                                      \
	} while (0)

enum { REPLAYS = 20, PLAIN = 5 };

void graph_scale(void)
{
}

void graph_bias(void)
{
}

void graph_relu(void)
{
}

void plain_kernel(void)
{
}

int main(void)
{
	void (*const nodes[])(void) = { graph_scale, graph_bias, graph_relu };
	const int n = (int)(sizeof nodes / sizeof nodes[0]);
	dim3 grid = { 4, 1, 1 }, block = { 128, 1, 1 };
	cudaStream_t s;
	cudaGraph_t graph;
	cudaGraphExec_t exec;

	CHECK(cudaStreamCreate(&s));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < n; i++)
		CHECK(cudaLaunchKernel((const void *)nodes[i], grid, block, NULL, 0, s));
	CHECK(cudaStreamEndCapture(s, &graph));
	CHECK(cudaGraphInstantiate(&exec, graph, 0));
	for (int r = 0; r < REPLAYS; r++)
		CHECK(cudaGraphLaunch(exec, s));
	for (int i = 0; i < PLAIN; i++)
		CHECK(cudaLaunchKernel((const void *)plain_kernel, grid, block, NULL, 0, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaGraphDestroy(graph));
	CHECK(cudaStreamDestroy(s));
	printf("expect kernels %d\n", n * REPLAYS + PLAIN);
	printf("expect graph-kernels %d\n", n * REPLAYS);
	printf("expect replays %d\n", REPLAYS);
	printf("expect plain %d\n", PLAIN);
	return 0;
}
