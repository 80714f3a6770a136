/* What the GPU library wrappers (cudart.c, cublas.c, cudnn.c, nccl.c) share: finding the real functions in
 * libraries that may be loaded late and privately, the record of a GPU library call, and the wrapper macro
 * each library's own macro is made from. */
#ifndef PW_GPU_H
#define PW_GPU_H

#include <stdint.h>
#include <string.h>

#include "pw_preload.h"

/* The libraries whose calls are wrapped, found among the loaded objects by the name their files start with
 * (libcudart.so.12 and libcudart.so.13 alike). MPI (mpi.c) is found the same way: libmpi.so is OpenMPI's,
 * MPICH's (3.1 and later), Intel MPI's and MVAPICH's library; and liburing (uring.c). */
#define PW_GPU_LIB_LIST(X)                 \
	X(CUDART, "libcudart.so")          \
	X(CUBLAS, "libcublas.so")          \
	X(CUBLASLT, "libcublasLt.so")      \
	X(CUDNN, "libcudnn.so")            \
	X(NCCL, "libnccl.so")              \
	X(CUPTI, "libcupti.so")            \
	X(MPI, "libmpi.so")                \
	X(URING, "liburing.so")

/* Other file names of a library above: an object loaded under one of them fills the same slots. MPICH
 * before 3.1, and Debian's and Ubuntu's MPICH packages to this day, link programs with libmpich.so. */
#define PW_GPU_LIB_ALIASES(X) X(MPI, "libmpich.so")

enum pw_gpu_lib {
#define PW_X(id, file) PW_LIB_##id,
	PW_GPU_LIB_LIST(PW_X)
#undef PW_X
	PW_LIB_COUNT
};

/* A real GPU library function, registered in the "pw_real_gpu" section. Unlike libc's, these are found
 * when their library is loaded: at start, after each dlopen, or when the program looks one up with dlsym
 * (ctypes does, on a handle from dlopen(..., RTLD_LOCAL), where RTLD_NEXT cannot see). */
struct pw_gpu_slot {
	void *fn;         /* the real_<name> pointer to fill */
	const char *name;
	void *wrapper;    /* the definition this library exports, or NULL for a function it only calls */
	uint32_t lib;     /* enum pw_gpu_lib */
};

#define PW_GPU_SLOT(lib, name, wrapper)                                                                   \
	static struct pw_gpu_slot pw_gpu_slot_##name                                                      \
		__attribute__((section("pw_real_gpu"), used, aligned(sizeof(void *)))) = {                \
			(void *)&real_##name, #name, wrapper, PW_LIB_##lib}

/* A function of a GPU library that the profiler calls (never wraps): declared, registered, resolved with
 * its library. */
#define PW_GPU_HELPER(lib, ret_t, name, params)  \
	static ret_t(*real_##name) params;       \
	PW_GPU_SLOT(lib, name, NULL)

/* Fills *slot->fn if a loaded object of its library defines it. Returns 0 if it is now filled, else -1
 * (said once on stderr: the program called a function that no loaded library defines). */
int pw_gpu_resolve(struct pw_gpu_slot *slot);
/* Looks for GPU libraries among the loaded objects (at start, and after a dlopen loaded something). */
void pw_gpu_scan(void);
/* Forgets the functions of libraries that are no longer loaded (after a dlclose). */
void pw_gpu_after_dlclose(void);
/* Forgets per-process caches that referred to the parent's string arena (fork child). */
void pw_gpu_after_fork(void);

/* Called after every wrapped call that succeeded: if this thread's current device is still unknown, asks
 * the runtime (a call that cannot fail once the runtime has done something for this thread). */
void pw_gpu_learn_device(void);

/* Slots of the per-address name tables (pw_once): kernel names, CUPTI's names. */
#define PW_NAME_SLOTS 8192

/* The kernel name of a launched function or kernel handle, interned once per address (kernel_names.c): the
 * device function registered for it, else cudaFuncGetName where the runtime has it, else the symbol dladdr
 * finds. 0 when unknown. launched is 0 when the launch failed: the runtime is then not asked (a failing call
 * would set its sticky last error), and a name not registered is not cached. Called with the internal guard
 * held. */
pw_strref pw_gpu_kernel_name(const void *func, int launched);
/* The reference of name, interned once per text in slots (PW_NAME_SLOTS of them), afresh when they have no
 * room for it: for names whose pointer found no slot in a cache by address. 0 when the arena is full. */
pw_strref pw_intern_name_by_text(struct pw_once_slot *slots, const char *name);
/* A module registered a kernel (__cudaRegisterFunction): host_stub launches the device function named
 * device_name, a string of the module's that lives as long as it. */
void pw_kernel_registered(const void *host_stub, const char *device_name);
/* __cudaGetKernel or cudaGetKernel gave handle for host_stub: launches through handle get the stub's name. */
void pw_kernel_handle_made(const void *handle, const void *host_stub);
/* In a fork child: the names interned named the parent's arena. */
void pw_kernel_names_after_fork(void);
/* A module is being unregistered (__cudaUnregisterFatBinary): from now on kernel names are interned by text
 * only (addresses may be reused), and CUPTI's records naming its kernels are converted first, while CUPTI's
 * copies of their names are valid. */
void pw_kernel_module_unloading(void);
void pw_cupti_module_unloading(void);

/* Calls after which the user needs to know who made them (nsys's --cudabacktrace set): they make the thread
 * wait for the device, allocate or free, or copy synchronously (through pageable memory, mostly). */
static inline int pw_kind_always_stacked(int kind, uint32_t sub)
{
	return kind == PW_K_GPU_SYNC || kind == PW_K_GPU_ALLOC || kind == PW_K_GPU_FREE ||
	       ((kind == PW_K_GPU_MEMCPY || kind == PW_K_GPU_MEMSET) && !(sub & PW_API_ASYNC));
}

/* The real dlsym (gpulib.c), NULL until resolved. */
extern void *(*pw_real_dlsym)(void *, const char *) __attribute__((visibility("hidden")));

/* GPU activity (cupti.c). The functions that files built without the CUDA headers call are weak: the
 * module is not built then, and the callers skip them. */

/* Notes the loaded CUDA runtime or driver (cuda_path), near which libcupti is looked for, once, when the
 * process records the gpu domain: the next wrapped GPU call loads libcupti and starts recording activity
 * (a driver alone: at once). */
void pw_cupti_check(const char *cuda_path) __attribute__((weak));
/* When the process exits, before atexit handlers tear the runtime down: a forced flush. */
void pw_cupti_at_exit(void) __attribute__((weak));
/* In a fork child: CUPTI stays with the parent. */
void pw_cupti_after_fork(void) __attribute__((weak));
/* In a fork child: interned NVTX texts named the parent's arena. */
void pw_nvtx_after_fork(void) __attribute__((weak));
/* Flushes CUPTI's buffers (forced: incomplete records too). */
void pw_cupti_flush(int forced);
/* Set while external correlation ids are pushed around calls that enqueue GPU work. */
extern int pw_cupti_correlating;
/* Pushes a fresh external id and returns it (0 if CUPTI refused); pw_cupti_pop() after the call. */
uint64_t pw_cupti_push(void);
void pw_cupti_pop(void);
/* Whether the capture window's GPU bit was last seen open (1) or closed (0) by pw_cupti_catch_up, which
 * enables CUPTI's activity kinds while the window is open and disables them (and flushes) while it is closed;
 * PW_CUPTI_CATCH_UP while CUPTI is to be started by the next GPU call (pw_cupti_check: the first call after
 * the CUDA runtime is loaded). GPU wrappers call pw_cupti_catch_up when the two differ: the window may have
 * changed in a signal handler, where CUPTI cannot be called. */
#define PW_CUPTI_CATCH_UP 2u
extern uint32_t pw_cupti_window_seen;
void pw_cupti_catch_up(void);
static inline int pw_cupti_window_stale(void)
{
	return ((pw_window_now() >> PW_DOM_GPU) & 1) != __atomic_load_n(&pw_cupti_window_seen, __ATOMIC_RELAXED);
}
/* Another CUPTI client made call, which changes what CUPTI records or how (cupti_client.c): profwrap flushes
 * what it has, puts back the settings it changed, records no more GPU activity and says so, once. */
void pw_cupti_other_client(const char *call) __attribute__((weak));

/* Whether a call of this kind puts work on the GPU, whose activity records are tied to it. */
static inline int pw_kind_enqueues(int k)
{
	return k == PW_K_GPU_LAUNCH || k == PW_K_GPU_GRAPH || k == PW_K_GPU_MEMCPY || k == PW_K_GPU_MEMSET ||
	       k == PW_K_GEMM || k == PW_K_DNN || k == PW_K_COLL;
}

/* Whether CUPTI records activity and takes external ids (one load). */
static inline int pw_cupti_on(void)
{
	return __atomic_load_n(&pw_cupti_correlating, __ATOMIC_RELAXED);
}

/* The external id an outermost call of kind k pushes around itself (0: none, nothing pushed): a fresh one
 * for calls that enqueue GPU work, except NCCL calls inside a group, which enqueue nothing themselves: the
 * group's id, pushed at its start (nccl.c), stays on top until its end, where NCCL launches the work. */
static inline uint64_t pw_gpu_ext_push(int k)
{
	if (!pw_kind_enqueues(k) || (k == PW_K_COLL && pw_self.nccl_group_ext))
		return 0;
	return pw_cupti_push();
}

/* The common part of a GPU call record; the wrapper's fill statements add the kind's fields. */
static inline __attribute__((always_inline)) void pw_api_init(struct pw_rec_api *r, uint16_t ev, int64_t status,
							      uint32_t sub)
{
	r->c.h.type = ev;
	r->c.h.size8 = sizeof *r / 8;
	r->c.h.err = status ? PW_ERR_NO_ERRNO : 0;
	r->c.ret = status;
	r->c.arg0 = 0;
	r->c.arg1 = 0;
	r->stream = 0;
	if (PW_UNLIKELY(!pw_self.gpu_device) && !status)
		pw_gpu_learn_device();
	r->device = (int32_t)pw_self.gpu_device - 1;
	r->sub = sub;
	r->a[0] = r->a[1] = r->a[2] = r->a[3] = 0;
	r->corr = 0;
}

/* A GPU library wrapper's head: its real_<name> pointer, its slot, and the definition's signature, whose body
 * opens with PW_GPU_RESOLVE: missing is returned when no loaded library defines the function. */
#define PW_GPU_DEFINE(lib, ret_t, name, params) \
	static ret_t(*real_##name) params;      \
	PW_EXPORT ret_t name params;            \
	PW_GPU_SLOT(lib, name, (void *)name);   \
	PW_EXPORT ret_t name params
#define PW_GPU_RESOLVE(name, missing)                                                      \
	do {                                                                               \
		if (PW_UNLIKELY(!real_##name) && pw_gpu_resolve(&pw_gpu_slot_##name) < 0) \
			return missing;                                                    \
	} while (0)

/* The wrapper of one GPU library function. ret_t is the library's status type, missing what to return when
 * no loaded library defines the function, sub0 flags for the record's sub field; the variadic part is the
 * statements that fill `r` (struct pw_rec_api) from the parameters and `ret`, run with the internal guard
 * held so that what they call is not recorded. */
#define PW_GPU_WRAP(lib, ret_t, missing, dom, ev, sub0, name, params, args, ...) \
	PW_GPU_WRAP_HOOKED((void)0, lib, ret_t, missing, dom, ev, sub0, name, params, args, __VA_ARGS__)

/* PW_GPU_WRAP with a statement run before anything else once the real function is known (capture control:
 * cudaProfilerStart opens the window before the call, so that the call is recorded). */
#define PW_GPU_WRAP_HOOKED(before, lib, ret_t, missing, dom, ev, sub0, name, params, args, ...)            \
	PW_GPU_DEFINE(lib, ret_t, name, params)                                                           \
	{                                                                                                 \
		PW_GPU_RESOLVE(name, missing);                                                            \
		before;                                                                                   \
		if (PW_UNLIKELY(pw_cupti_window_stale()))                                                 \
			pw_cupti_catch_up();                                                              \
		if (!pw_should_record(PW_DOM_##dom))                                                      \
			return real_##name args;                                                          \
		struct pw_rec_api r;                                                                      \
		uint64_t corr_ = 0;                                                                       \
		uint32_t nested_ = pw_self.gpu_depth++;                                                   \
		if (!nested_ && PW_UNLIKELY(pw_cupti_on()))                                               \
			corr_ = pw_gpu_ext_push(PW_EVKIND_##ev);                                          \
		r.c.t0 = pw_clock_ticks();                                                                \
		ret_t ret = real_##name args;                                                             \
		r.c.t1 = pw_clock_ticks();                                                                \
		struct pw_guarded was_ = pw_guard_enter(PW_GUARD_INTERNAL);                               \
		pw_self.gpu_depth = nested_;                                                              \
		if (corr_)                                                                                \
			pw_cupti_pop();                                                                   \
		pw_api_init(&r, PW_EV_##ev, (int64_t)ret, sub0);                                          \
		if (nested_)                                                                              \
			r.c.h.type |= PW_REC_NESTED;                                                      \
		r.corr = corr_;                                                                           \
		__VA_ARGS__;                                                                              \
		pw_record_done(&r, sizeof r,                                                              \
			       pw_call_wants_stack(r.c.t0, r.c.t1) ||                                     \
				       (PW_UNLIKELY(pw_stacks_on) && pw_kind_always_stacked(PW_EVKIND_##ev, r.sub)), \
			       was_);                                                                     \
		return ret;                                                                               \
	}

/* A wrapper that only watches, unrecorded: calls the real function, then the statements (of the parameters
 * and `ret`), with errno as the call left it. For calls whose arguments or results later records need
 * (kernel registrations, cuDNN descriptors) and which cost next to nothing. */
#define PW_GPU_WATCH(lib, ret_t, missing, name, params, args, ...)                                       \
	PW_GPU_DEFINE(lib, ret_t, name, params)                                                           \
	{                                                                                                 \
		PW_GPU_RESOLVE(name, missing);                                                            \
		ret_t ret = real_##name args;                                                             \
		struct pw_guarded was_ = pw_guard_enter(PW_GUARD_INTERNAL);                               \
		__VA_ARGS__;                                                                              \
		pw_guard_leave(was_);                                                                     \
		return ret;                                                                               \
	}

/* A void function watched before it runs (the statements, of the parameters), unrecorded: a registration
 * noted before the call, an unloading acted on while what it unloads is still there. */
#define PW_GPU_WATCH_BEFORE(lib, name, params, args, ...)                                                \
	PW_GPU_DEFINE(lib, void, name, params)                                                            \
	{                                                                                                 \
		PW_GPU_RESOLVE(name, );                                                                   \
		struct pw_guarded was_ = pw_guard_enter(PW_GUARD_INTERNAL);                               \
		__VA_ARGS__;                                                                              \
		pw_guard_leave(was_);                                                                     \
		real_##name args;                                                                         \
	}

#endif
