/* CUDA runtime: launches, copies, memsets, allocations, synchronisation, streams and events.
 *
 * Each wrapper records the calling thread's device, the stream, the status code and the kind's fields
 * (common/pw_record.h). The per-thread default stream variants (_ptsz, _ptds: programs built with
 * --default-stream per-thread) are the same events with PW_API_PTSZ. `<<<>>>` launches reach
 * __cudaLaunchKernel (CUDA 12 and later) from the host stub nvcc generates, with the kernel handle that
 * __cudaGetKernel gave the stub, when the program links the shared runtime (nvcc -cudart shared); a
 * statically linked runtime is inside the program and cannot be interposed (CUPTI sees its kernels). */
#define _GNU_SOURCE
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "pw_gpu.h"

#define PW_CUDART_AS(ev, sub, name, params, args, ...) \
	PW_GPU_WRAP(CUDART, cudaError_t, cudaErrorUnknown, CUDART, ev, sub, name, params, args, __VA_ARGS__)
#define PW_CUDART(ev, name, params, args, ...) PW_CUDART_AS(ev, 0, name, params, args, __VA_ARGS__)
/* A function and its per-thread default stream variant: _ptsz for calls that take a stream... */
#define PW_CUDART_PTSZ(ev, name, params, args, ...)                      \
	PW_CUDART_AS(ev, 0, name, params, args, __VA_ARGS__)            \
	PW_CUDART_AS(ev, PW_API_PTSZ, name##_ptsz, params, args, __VA_ARGS__)
/* ... and _ptds for the synchronous ones. */
#define PW_CUDART_PTDS(ev, name, params, args, ...)                      \
	PW_CUDART_AS(ev, 0, name, params, args, __VA_ARGS__)            \
	PW_CUDART_AS(ev, PW_API_PTSZ, name##_ptds, params, args, __VA_ARGS__)

#define STREAM(s) (r.stream = (uint64_t)(uintptr_t)(s))
#define ADDR(p) ((uint64_t)(uintptr_t)(p))

/* ---- launches ---- */

static void launch_fields(struct pw_rec_api *r, const void *func, dim3 grid, dim3 block, size_t shmem,
			  cudaError_t ret)
{
	r->c.arg0 = ADDR(func);
	r->c.arg1 = pw_gpu_kernel_name(func, ret == cudaSuccess);
	pw_put_dims(r->a, (struct pw_dims){{grid.x, grid.y, grid.z}, {block.x, block.y, block.z}});
	r->sub = shmem > UINT32_MAX ? UINT32_MAX : (uint32_t)shmem; /* launches carry no flags */
}

PW_CUDART_PTSZ(CUDA_LAUNCH_KERNEL, cudaLaunchKernel,
	       (const void *func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream),
	       (func, grid, block, args, shmem, stream), launch_fields(&r, func, grid, block, shmem, ret);
	       STREAM(stream))

/* nvcc's host stubs: declared by its headers for C++ only. */
PW_CUDART(CUDA_NVCC_LAUNCH_KERNEL, __cudaLaunchKernel,
	  (cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream),
	  (kernel, grid, block, args, shmem, stream), launch_fields(&r, kernel, grid, block, shmem, ret);
	  STREAM(stream))
PW_CUDART(CUDA_NVCC_LAUNCH_KERNEL, __cudaLaunchKernel_ptsz,
	  (cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream),
	  (kernel, grid, block, args, shmem, stream), launch_fields(&r, kernel, grid, block, shmem, ret);
	  STREAM(stream))

PW_CUDART_PTSZ(CUDA_LAUNCH_COOPERATIVE_KERNEL, cudaLaunchCooperativeKernel,
	       (const void *func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream),
	       (func, grid, block, args, shmem, stream), launch_fields(&r, func, grid, block, shmem, ret);
	       STREAM(stream))

PW_CUDART_PTSZ(CUDA_LAUNCH_KERNEL_EXC, cudaLaunchKernelExC,
	       (const cudaLaunchConfig_t *config, const void *func, void **args), (config, func, args),
	       if (config) {
		       launch_fields(&r, func, config->gridDim, config->blockDim, config->dynamicSmemBytes, ret);
		       STREAM(config->stream);
	       })

PW_CUDART_PTSZ(CUDA_GRAPH_LAUNCH, cudaGraphLaunch, (cudaGraphExec_t exec, cudaStream_t stream), (exec, stream),
	       r.c.arg0 = ADDR(exec);
	       STREAM(stream))

/* ---- kernel registration: not recorded, only noted, so that launches are named ---- */

/* Called by each module's constructor for each of its kernels (host_runtime.h declares it for C++ only).
 * The name is noted first: the call returns nothing to wait for. */
PW_GPU_WATCH_BEFORE(CUDART, __cudaRegisterFunction,
		    (void **fatbin, const char *host_stub, char *device_fun, const char *device_name, int thread_limit,
		     uint3 *tid, uint3 *bid, dim3 *block, dim3 *grid, int *warp_size),
		    (fatbin, host_stub, device_fun, device_name, thread_limit, tid, bid, block, grid, warp_size),
		    pw_kernel_registered(host_stub, device_fun ? device_fun : device_name))

/* Called by each module's destructor (a library unloaded, or the process exiting). */
PW_GPU_WATCH_BEFORE(CUDART, __cudaUnregisterFatBinary, (void **fatbin), (fatbin), pw_kernel_module_unloading();
		    pw_cupti_module_unloading())

/* A failed lookup (no driver) leaves the stub itself as the handle, which is registered already. */
PW_GPU_WATCH(CUDART, cudaError_t, cudaErrorUnknown, __cudaGetKernel, (cudaKernel_t * kernel, const void *host_stub),
	     (kernel, host_stub), if (ret == cudaSuccess && kernel) pw_kernel_handle_made(*kernel, host_stub))
PW_GPU_WATCH(CUDART, cudaError_t, cudaErrorUnknown, cudaGetKernel, (cudaKernel_t * kernel, const void *host_stub),
	     (kernel, host_stub), if (ret == cudaSuccess && kernel) pw_kernel_handle_made(*kernel, host_stub))

/* ---- copies ---- */

static void copy_fields(struct pw_rec_api *r, size_t bytes, const void *dst, const void *src, unsigned dir)
{
	r->c.arg0 = bytes;
	pw_put_copy_call(r, (struct pw_copy_call){.dst = ADDR(dst), .src = ADDR(src)});
	r->sub |= dir;
}

/* A 2D or 3D copy moves width x height (x depth) bytes; a product that overflows saturates. */
static size_t area(size_t a, size_t b)
{
	size_t p;
	return __builtin_mul_overflow(a, b, &p) ? SIZE_MAX : p;
}

static void copy3d_fields(struct pw_rec_api *r, const struct cudaMemcpy3DParms *p)
{
	if (!p)
		return;
	copy_fields(r, area(area(p->extent.width, p->extent.height), p->extent.depth),
		    p->dstArray ? (const void *)p->dstArray : p->dstPtr.ptr,
		    p->srcArray ? (const void *)p->srcArray : p->srcPtr.ptr, (unsigned)p->kind & PW_COPY_DIR_MASK);
}

PW_CUDART_PTDS(CUDA_MEMCPY, cudaMemcpy, (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind),
	       (dst, src, count, kind), copy_fields(&r, count, dst, src, (unsigned)kind & PW_COPY_DIR_MASK))

PW_CUDART_PTSZ(CUDA_MEMCPY_ASYNC, cudaMemcpyAsync,
	       (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream),
	       (dst, src, count, kind, stream),
	       copy_fields(&r, count, dst, src, ((unsigned)kind & PW_COPY_DIR_MASK) | PW_API_ASYNC);
	       STREAM(stream))

PW_CUDART_PTDS(CUDA_MEMCPY_2D, cudaMemcpy2D,
	       (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
		enum cudaMemcpyKind kind),
	       (dst, dpitch, src, spitch, width, height, kind),
	       copy_fields(&r, area(width, height), dst, src, (unsigned)kind & PW_COPY_DIR_MASK))

PW_CUDART_PTSZ(CUDA_MEMCPY_2D_ASYNC, cudaMemcpy2DAsync,
	       (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
		enum cudaMemcpyKind kind, cudaStream_t stream),
	       (dst, dpitch, src, spitch, width, height, kind, stream),
	       copy_fields(&r, area(width, height), dst, src, ((unsigned)kind & PW_COPY_DIR_MASK) | PW_API_ASYNC);
	       STREAM(stream))

PW_CUDART_PTDS(CUDA_MEMCPY_3D, cudaMemcpy3D, (const struct cudaMemcpy3DParms *p), (p), copy3d_fields(&r, p))

PW_CUDART_PTSZ(CUDA_MEMCPY_3D_ASYNC, cudaMemcpy3DAsync, (const struct cudaMemcpy3DParms *p, cudaStream_t stream),
	       (p, stream), r.sub |= PW_API_ASYNC;
	       copy3d_fields(&r, p); STREAM(stream))

PW_CUDART_PTDS(CUDA_MEMCPY_TO_SYMBOL, cudaMemcpyToSymbol,
	       (const void *symbol, const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind),
	       (symbol, src, count, offset, kind),
	       copy_fields(&r, count, symbol, src, (unsigned)kind & PW_COPY_DIR_MASK))

PW_CUDART_PTSZ(CUDA_MEMCPY_TO_SYMBOL_ASYNC, cudaMemcpyToSymbolAsync,
	       (const void *symbol, const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind,
		cudaStream_t stream),
	       (symbol, src, count, offset, kind, stream),
	       copy_fields(&r, count, symbol, src, ((unsigned)kind & PW_COPY_DIR_MASK) | PW_API_ASYNC);
	       STREAM(stream))

PW_CUDART_PTDS(CUDA_MEMCPY_FROM_SYMBOL, cudaMemcpyFromSymbol,
	       (void *dst, const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind),
	       (dst, symbol, count, offset, kind),
	       copy_fields(&r, count, dst, symbol, (unsigned)kind & PW_COPY_DIR_MASK))

PW_CUDART_PTSZ(CUDA_MEMCPY_FROM_SYMBOL_ASYNC, cudaMemcpyFromSymbolAsync,
	       (void *dst, const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind,
		cudaStream_t stream),
	       (dst, symbol, count, offset, kind, stream),
	       copy_fields(&r, count, dst, symbol, ((unsigned)kind & PW_COPY_DIR_MASK) | PW_API_ASYNC);
	       STREAM(stream))

static void peer_fields(struct pw_rec_api *r, void *dst, int dst_dev, const void *src, int src_dev, size_t count)
{
	r->c.arg0 = count;
	pw_put_copy_call(r, (struct pw_copy_call){ADDR(dst), ADDR(src), dst_dev, src_dev});
	r->sub |= PW_COPY_PEER;
}

PW_CUDART(CUDA_MEMCPY_PEER, cudaMemcpyPeer, (void *dst, int dst_dev, const void *src, int src_dev, size_t count),
	  (dst, dst_dev, src, src_dev, count), peer_fields(&r, dst, dst_dev, src, src_dev, count))

PW_CUDART(CUDA_MEMCPY_PEER_ASYNC, cudaMemcpyPeerAsync,
	  (void *dst, int dst_dev, const void *src, int src_dev, size_t count, cudaStream_t stream),
	  (dst, dst_dev, src, src_dev, count, stream), peer_fields(&r, dst, dst_dev, src, src_dev, count);
	  r.sub |= PW_API_ASYNC; STREAM(stream))

/* ---- memset ---- */

PW_CUDART_PTDS(CUDA_MEMSET, cudaMemset, (void *ptr, int value, size_t count), (ptr, value, count),
	       r.c.arg0 = count;
	       r.a[0] = ADDR(ptr))

PW_CUDART_PTSZ(CUDA_MEMSET_ASYNC, cudaMemsetAsync, (void *ptr, int value, size_t count, cudaStream_t stream),
	       (ptr, value, count, stream), r.c.arg0 = count;
	       r.a[0] = ADDR(ptr); r.sub |= PW_API_ASYNC; STREAM(stream))

PW_CUDART_PTDS(CUDA_MEMSET_2D, cudaMemset2D, (void *ptr, size_t pitch, int value, size_t width, size_t height),
	       (ptr, pitch, value, width, height), r.c.arg0 = area(width, height);
	       r.a[0] = ADDR(ptr))

PW_CUDART_PTSZ(CUDA_MEMSET_2D_ASYNC, cudaMemset2DAsync,
	       (void *ptr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream),
	       (ptr, pitch, value, width, height, stream), r.c.arg0 = area(width, height);
	       r.a[0] = ADDR(ptr); r.sub |= PW_API_ASYNC; STREAM(stream))

/* ---- allocation ---- */

/* The address an allocation returned, read only when it succeeded (the pointer is then valid). */
#define ALLOCATED(pp) (ret == cudaSuccess && (pp) ? ADDR(*(pp)) : 0)

PW_CUDART_AS(CUDA_MALLOC, PW_MEM_DEVICE, cudaMalloc, (void **ptr, size_t size), (ptr, size), r.c.arg0 = size;
	     r.c.arg1 = ALLOCATED(ptr))

PW_CUDART_AS(CUDA_MALLOC_PITCH, PW_MEM_DEVICE, cudaMallocPitch,
	     (void **ptr, size_t *pitch, size_t width, size_t height), (ptr, pitch, width, height),
	     r.c.arg0 = area(ret == cudaSuccess && pitch ? *pitch : width, height);
	     r.c.arg1 = ALLOCATED(ptr))

PW_CUDART_AS(CUDA_FREE, PW_MEM_DEVICE, cudaFree, (void *ptr), (ptr), r.c.arg1 = ADDR(ptr))

PW_CUDART_AS(CUDA_MALLOC_ASYNC, PW_MEM_DEVICE_ASYNC, cudaMallocAsync,
	     (void **ptr, size_t size, cudaStream_t stream), (ptr, size, stream), r.c.arg0 = size;
	     r.c.arg1 = ALLOCATED(ptr); STREAM(stream))
PW_CUDART_AS(CUDA_MALLOC_ASYNC, PW_MEM_DEVICE_ASYNC, cudaMallocAsync_ptsz,
	     (void **ptr, size_t size, cudaStream_t stream), (ptr, size, stream), r.c.arg0 = size;
	     r.c.arg1 = ALLOCATED(ptr); STREAM(stream))

PW_CUDART_AS(CUDA_FREE_ASYNC, PW_MEM_DEVICE_ASYNC, cudaFreeAsync, (void *ptr, cudaStream_t stream),
	     (ptr, stream), r.c.arg1 = ADDR(ptr);
	     STREAM(stream))
PW_CUDART_AS(CUDA_FREE_ASYNC, PW_MEM_DEVICE_ASYNC, cudaFreeAsync_ptsz,
	     (void *ptr, cudaStream_t stream), (ptr, stream), r.c.arg1 = ADDR(ptr);
	     STREAM(stream))

PW_CUDART_AS(CUDA_MALLOC_HOST, PW_MEM_HOST_PINNED, cudaMallocHost, (void **ptr, size_t size), (ptr, size),
	     r.c.arg0 = size;
	     r.c.arg1 = ALLOCATED(ptr))

PW_CUDART_AS(CUDA_HOST_ALLOC, PW_MEM_HOST_PINNED, cudaHostAlloc, (void **ptr, size_t size, unsigned int flags),
	     (ptr, size, flags), r.c.arg0 = size;
	     r.c.arg1 = ALLOCATED(ptr))

PW_CUDART_AS(CUDA_FREE_HOST, PW_MEM_HOST_PINNED, cudaFreeHost, (void *ptr), (ptr), r.c.arg1 = ADDR(ptr))

PW_CUDART_AS(CUDA_MALLOC_MANAGED, PW_MEM_MANAGED, cudaMallocManaged, (void **ptr, size_t size, unsigned int flags),
	     (ptr, size, flags), r.c.arg0 = size;
	     r.c.arg1 = ALLOCATED(ptr))

PW_CUDART_AS(CUDA_HOST_REGISTER, PW_MEM_HOST_REGISTERED, cudaHostRegister,
	     (void *ptr, size_t size, unsigned int flags), (ptr, size, flags), r.c.arg0 = size;
	     r.c.arg1 = ret == cudaSuccess ? ADDR(ptr) : 0)

PW_CUDART_AS(CUDA_HOST_UNREGISTER, PW_MEM_HOST_REGISTERED, cudaHostUnregister, (void *ptr), (ptr),
	     r.c.arg1 = ADDR(ptr))

/* ---- synchronisation ---- */

/* A query that finds the work unfinished has not failed. */
#define NOT_READY_IS_NO_ERROR()                 \
	do {                                    \
		if (ret == cudaErrorNotReady)   \
			r.c.h.err = 0;          \
	} while (0)

PW_CUDART(CUDA_DEVICE_SYNCHRONIZE, cudaDeviceSynchronize, (void), (), (void)0)

PW_CUDART_PTSZ(CUDA_STREAM_SYNCHRONIZE, cudaStreamSynchronize, (cudaStream_t stream), (stream),
	       r.c.arg0 = ADDR(stream);
	       STREAM(stream))

PW_CUDART(CUDA_EVENT_SYNCHRONIZE, cudaEventSynchronize, (cudaEvent_t event), (event), r.c.arg0 = ADDR(event))

PW_CUDART_PTSZ(CUDA_STREAM_WAIT_EVENT, cudaStreamWaitEvent, (cudaStream_t stream, cudaEvent_t event, unsigned int flags),
	       (stream, event, flags), r.c.arg0 = ADDR(event);
	       STREAM(stream))

PW_CUDART_PTSZ(CUDA_STREAM_QUERY, cudaStreamQuery, (cudaStream_t stream), (stream), r.c.arg0 = ADDR(stream);
	       STREAM(stream); NOT_READY_IS_NO_ERROR())

PW_CUDART(CUDA_EVENT_QUERY, cudaEventQuery, (cudaEvent_t event), (event), r.c.arg0 = ADDR(event);
	  NOT_READY_IS_NO_ERROR())

/* ---- streams, events, devices ---- */

#define CREATED(pp) (ret == cudaSuccess && (pp) ? ADDR(*(pp)) : 0)

PW_CUDART(CUDA_STREAM_CREATE, cudaStreamCreate, (cudaStream_t *stream), (stream), r.c.arg0 = CREATED(stream))

PW_CUDART(CUDA_STREAM_CREATE_WITH_FLAGS, cudaStreamCreateWithFlags, (cudaStream_t *stream, unsigned int flags),
	  (stream, flags), r.c.arg0 = CREATED(stream))

PW_CUDART(CUDA_STREAM_CREATE_WITH_PRIORITY, cudaStreamCreateWithPriority,
	  (cudaStream_t *stream, unsigned int flags, int priority), (stream, flags, priority),
	  r.c.arg0 = CREATED(stream))

PW_CUDART(CUDA_STREAM_DESTROY, cudaStreamDestroy, (cudaStream_t stream), (stream), r.c.arg0 = ADDR(stream);
	  STREAM(stream))

PW_CUDART(CUDA_EVENT_CREATE, cudaEventCreate, (cudaEvent_t *event), (event), r.c.arg0 = CREATED(event))

PW_CUDART(CUDA_EVENT_CREATE_WITH_FLAGS, cudaEventCreateWithFlags, (cudaEvent_t *event, unsigned int flags),
	  (event, flags), r.c.arg0 = CREATED(event))

PW_CUDART(CUDA_EVENT_DESTROY, cudaEventDestroy, (cudaEvent_t event), (event), r.c.arg0 = ADDR(event))

PW_CUDART_PTSZ(CUDA_EVENT_RECORD, cudaEventRecord, (cudaEvent_t event, cudaStream_t stream), (event, stream),
	       r.c.arg0 = ADDR(event);
	       STREAM(stream))

PW_CUDART_PTSZ(CUDA_EVENT_RECORD_WITH_FLAGS, cudaEventRecordWithFlags,
	       (cudaEvent_t event, cudaStream_t stream, unsigned int flags), (event, stream, flags),
	       r.c.arg0 = ADDR(event);
	       STREAM(stream))

PW_CUDART(CUDA_SET_DEVICE, cudaSetDevice, (int device), (device), r.c.arg0 = (uint64_t)(int64_t)device;
	  if (ret == cudaSuccess) {
		  pw_self.gpu_device = (uint32_t)device + 1;
		  r.device = device;
	  })

PW_CUDART(CUDA_GET_DEVICE, cudaGetDevice, (int *device), (device),
	  if (ret == cudaSuccess && device) {
		  r.c.arg0 = (uint64_t)(int64_t)*device;
		  pw_self.gpu_device = (uint32_t)*device + 1;
		  r.device = *device;
	  })

/* --capture-range=cudaProfilerApi: the window opens before cudaProfilerStart, so that the call is recorded,
 * and closes after cudaProfilerStop has been (before it, when the window is closed already). What CUPTI
 * holds of the profiled range reaches the ring at the stop, as a profiler that stops would flush it. */
PW_GPU_WRAP_HOOKED(pw_capture_profiler_api(1), CUDART, cudaError_t, cudaErrorUnknown, CUDART, CUDA_PROFILER_START, 0,
		   cudaProfilerStart, (void), (), (void)0)
PW_GPU_WRAP_HOOKED(if (!(pw_window_now() & PW_WINDOW_OPEN)) pw_capture_profiler_api(0), CUDART, cudaError_t,
		   cudaErrorUnknown, CUDART, CUDA_PROFILER_STOP, 0, cudaProfilerStop, (void), (),
		   pw_cupti_flush(0); pw_capture_profiler_api(0))
