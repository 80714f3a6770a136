/* Internal interface of libprofwrap.so: configuration, per-thread state, the re-entrancy guard, the
 * record emitters, and the wrapper macros every interposed library uses. */
#ifndef PW_PRELOAD_H
#define PW_PRELOAD_H

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/pw_capture.h"
#include "../common/pw_clock.h"
#include "../common/pw_record.h"
#include "../common/pw_ring.h"

#define PW_EXPORT __attribute__((visibility("default")))
#define PW_LIKELY(x) __builtin_expect(!!(x), 1)
#define PW_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Configuration, parsed once from the environment by pw_config_load(). */
struct pw_config {
	char output[4096];      /* PROFWRAP_OUTPUT, absolute or as given */
	char session_dir[3072]; /* PROFWRAP_SESSION_DIR, or derived from output in preload-only mode */
	int preload_only;       /* no CLI: this process may have to start the collector */
	uint64_t lane_size;
	uint32_t lanes;
	uint64_t arena_size;
	uint32_t domain_mask;
	int follow_fork;
	int root_pid; /* with follow_fork off, only this process records */
	int quiet;
	const char *clock;
	const char *cupti;          /* PROFWRAP_CUPTI: the libcupti to load, NULL to look for one */
	uint64_t cupti_buffer_size; /* bytes per CUPTI activity buffer, a multiple of the page size */
	uint32_t cupti_buffers;     /* buffers in the pool */
	uint32_t cupti_flush_ms;    /* flush period of activity buffers */
	struct pw_capture_settings capture;
	char capture_text[256]; /* the settings in words, for the report */
	int stacks;                  /* enum pw_stacks_mode */
	uint64_t stack_threshold_ns; /* calls at least this long get a stack */
	uint32_t sample_hz;          /* CPU-time samples per second and thread, 0: none */
	uint64_t capture_t0;    /* CLOCK_MONOTONIC ns that --delay counts from: the launch */
};

#define PW_PYFN_DEPTH 32   /* nested Python function ranges a thread has room for at first (it grows) */
#define PW_PYFN_ACTIONS 16 /* nested Lightning actions followed per thread; deeper ones count as dropped */

/* Per-thread state. initial-exec TLS: the library is preloaded, so this costs one fs-relative load. */
struct pw_thread {
	struct pw_lane *lane; /* NULL until the thread's first record */
	uint8_t *data;
	uint64_t lane_backed;   /* the lane's head may advance to this before it must grow (UINT64_MAX: whole) */
	uint64_t lane_retry_at; /* CLOCK_MONOTONIC ns before which a refused lane does not ask /dev/shm again */
	uint32_t tid;
	uint8_t guard;  /* PW_GUARD_*: set while this thread runs profiler code; wrapped calls go straight through */
	uint8_t shared; /* lane is the shared one */
	uint16_t drop_slot; /* its entry in the segment's thread_drops + 1; 0 before its first drop */
	uint32_t gpu_device; /* the thread's current CUDA device + 1, 0 while unknown (pw_gpu.h) */
	uint32_t gpu_depth;  /* GPU library calls this thread is inside (pw_gpu.h): >1 is a nested call */
	uint32_t nccl_group_depth; /* ncclGroupStart calls not yet ended (nccl.c) */
	uint64_t nccl_group_ext;   /* the external id pushed for the outermost open NCCL group, 0: none */
	/* call stacks (stacks.c, python.c) */
	uint8_t py_hooked;   /* the Python profile hook has run on this thread */
	uint8_t py_pending;  /* calls wait for this thread's Python frames (PW_STACK_PY_PENDING) */
	uint8_t py_sample_pending; /* so does a CPU sample */
	uint8_t py_installs; /* hook installations this thread asked for */
	uint32_t py_call_gen;    /* the builtin the hook saw start and not yet return (0: none), numbered */
	uint32_t py_pending_gen; /* py_call_gen when the pending calls were made */
	uint32_t py_gen_next;
	/* Python function ranges (py_ranges.c) */
	uint32_t pyfn_depth;       /* ranges of matched calls open on this thread (their frames: py_ranges.c) */
	uint8_t pyfn_actions;      /* Lightning actions started and not stopped, as ranges */
	uint32_t pyfn_actions_over; /* actions started and not stopped past PW_PYFN_ACTIONS: no ranges */
	uint32_t pyfn_action_hash[PW_PYFN_ACTIONS]; /* each one's name, hashed */
	uint8_t pyfn_action_again[PW_PYFN_ACTIONS]; /* starts of the same action inside it (profilers that forward
						     * to others): no range of their own */
	void *pyfn_module_frame;   /* the outermost torch module call open (only it is a range), or NULL */
	uint8_t sampling;    /* sample_timer is armed */
	uint8_t unwound;     /* libunwind has walked the thread outside a signal handler: its cache exists */
	void *sample_timer;  /* timer_t of the thread's CPU-time samples */
	uint64_t sample_cpu_ns; /* the thread's CPU clock at its previous sample, or when its timer started */
};

/* Guard values. RECORDING covers only the writing of a record (not the real call, so calls that libc makes
 * back into wrapped functions — constructors run by dlopen, atexit handlers — are recorded too); a wrapped
 * call that finds it set comes from a signal handler that interrupted the record, and is counted as skipped.
 * INTERNAL covers the profiler's own set-up and bookkeeping. */
#define PW_GUARD_RECORDING 1
#define PW_GUARD_INTERNAL 2
/* Set while libunwind walks the stack (stacks.c): see PW_UNWIND_ANSWER. */
#define PW_GUARD_UNWIND 3
/* INTERNAL for a thread whose memory and TLS a vfork child borrows until its exec or exit (vfork(), clone()
 * with CLONE_VM|CLONE_VFORK): the child's calls on that TLS are not counted as a clone's (pw_tls_owner). */
#define PW_GUARD_VFORK 4

/* libunwind checks an address it doubts by writing it into a pipe of its own, and when the pipe's descriptors
 * no longer work (a daemon closed every descriptor) it closes the two numbers and makes a new pipe: by then
 * the numbers may be the program's own files. So the calls libunwind makes through our wrappers while a
 * stack is captured (PW_GUARD_UNWIND) go to these (stacks.c): its pipe is made at high numbers and checked
 * to be still the same pipe before each use, and a number that is no longer the pipe is neither read nor
 * closed; other descriptors are served as usual. */
int pw_unwind_pipe2(int fds[2], int flags);
ssize_t pw_unwind_read(int fd, void *buf, size_t n);
ssize_t pw_unwind_write(int fd, const void *buf, size_t n);
int pw_unwind_close(int fd);
#define PW_IN_UNWIND() PW_UNLIKELY(pw_self.guard == PW_GUARD_UNWIND)

extern __thread struct pw_thread pw_self __attribute__((tls_model("initial-exec")));

/* Sets the calling thread's guard. A signal handler on this thread reads it (pw_guard_allows), so the compiler
 * must neither move profiler work above a store that sets it nor below one that clears it: the store sits
 * between two signal fences (compiler barriers, no instruction). */
static inline __attribute__((always_inline)) void pw_guard_set(uint8_t v)
{
	atomic_signal_fence(memory_order_seq_cst);
	pw_self.guard = v;
	atomic_signal_fence(memory_order_seq_cst);
}

/* Domains being recorded, 0 while the preload is passive: one load decides whether a wrapper records.
 * Atomic because signal handlers and other threads read it while it changes (start, exit, a clone on its
 * creator's TLS); relaxed, since it orders nothing else. */
extern _Atomic uint32_t pw_recording;

static inline uint32_t pw_recording_now(void)
{
	return atomic_load_explicit(&pw_recording, memory_order_relaxed);
}
extern struct pw_seg_header *pw_seg;
extern struct pw_config pw_cfg;

/* Claims a lane for the calling thread (slow path, once per thread). Returns 0, or -1 if recording stopped. */
int pw_thread_attach(struct pw_thread *t);
/* Has the calling thread's end give back its lane and delete its sample timer (pw_thread_attach does it). */
void pw_thread_at_end(void);

/* Resolves the next definition of name after this library: RTLD_NEXT, then the versioned symbol when
 * version is not NULL. Never returns NULL for a symbol libc defines; aborts with a message otherwise, since
 * the wrapper would have nothing to call. */
void *pw_resolve(const char *name, const char *version);

/* A record of thread t was dropped (its lane full, or the shared lane busy): counted for the thread in the
 * segment's thread_drops table (the lane's counter has it already). Lock-free, async-signal-safe. */
void pw_note_thread_drop(struct pw_thread *t);
/* n records of thread t never written (what they hold could not be kept): counted as dropped, as a full
 * lane's are. Called with the guard held. */
void pw_count_dropped(struct pw_thread *t, uint32_t n);

/* A record never straddles a lane's end, so one needs at most this much before the lane's backed end. */
#define PW_LANE_SLACK 4096u

/* Whether the thread's lane must grow before its next record (pw_lane_grow). */
static inline int pw_lane_short(const struct pw_thread *t)
{
	return atomic_load_explicit(&t->lane->head, memory_order_relaxed) + PW_LANE_SLACK > t->lane_backed;
}

/* Backs the next step of the thread's own lane. Returns 0, or -1 when /dev/shm has no room for it beside
 * what is kept for the program (the record is counted as dropped, and in the segment's shm_refused). */
int pw_lane_grow(struct pw_thread *t);

/* Claims size bytes in the calling thread's lane for a record (its lane attached or grown first). Returns
 * 0, or -1 with the record counted as dropped. */
static inline __attribute__((always_inline)) int pw_lane_claim(struct pw_thread *t, size_t size,
							      struct pw_reservation *r)
{
	if (PW_UNLIKELY(!t->lane) && pw_thread_attach(t) < 0)
		return -1;
	int rc = -1;
	if (PW_LIKELY(!pw_lane_short(t)) || pw_lane_grow(t) == 0)
		rc = t->shared ? pw_shared_lane_reserve(pw_seg, t->lane, t->data, size, r)
			       : pw_lane_reserve(pw_seg, t->lane, t->data, size, r);
	if (PW_UNLIKELY(rc < 0))
		pw_note_thread_drop(t);
	return rc;
}

static inline __attribute__((always_inline)) void pw_lane_publish(struct pw_thread *t, struct pw_reservation *r)
{
	if (t->shared)
		pw_shared_lane_commit(t->lane, r);
	else
		pw_lane_commit(t->lane, r);
}

/* Records a timed call in thread t's lane: t is the calling thread's state, or the scratch one the cost
 * calibration (cost.c) writes into. Called with the guard held. Inlined: this is most of a wrapper's own cost. */
static inline __attribute__((always_inline)) void pw_emit_call_as(struct pw_thread *t, uint16_t ev, uint64_t t0,
								   uint64_t t1, int64_t ret, uint64_t a0, uint64_t a1,
								   int err)
{
	struct pw_reservation r;
	if (pw_lane_claim(t, sizeof(struct pw_rec_call), &r) < 0)
		return;
	struct pw_rec_call *c = (struct pw_rec_call *)r.rec;
	c->h.type = ev;
	c->h.size8 = sizeof *c / 8;
	c->h.err = (uint8_t)(err > PW_ERR_NO_ERRNO ? PW_ERR_NO_ERRNO : err);
	c->h.tid = t->tid;
	c->t0 = t0;
	c->t1 = t1;
	c->ret = ret;
	c->arg0 = a0;
	c->arg1 = a1;
	pw_lane_publish(t, &r);
}

/* Records a timed call of the calling thread. Called with the guard held. */
static inline __attribute__((always_inline)) void pw_emit_call(uint16_t ev, uint64_t t0, uint64_t t1, int64_t ret,
								uint64_t a0, uint64_t a1, int err)
{
	pw_emit_call_as(&pw_self, ev, t0, t1, ret, a0, a1, err);
}

/* Writes a finished record of size bytes (a multiple of 8) into the thread's lane. */
static inline __attribute__((always_inline)) void pw_emit_record(const void *rec, size_t size)
{
	struct pw_thread *t = &pw_self;
	struct pw_reservation r;
	if (pw_lane_claim(t, size, &r) < 0)
		return;
	memcpy(r.rec, rec, size);
	((struct pw_rec_hdr *)r.rec)->tid = t->tid;
	pw_lane_publish(t, &r);
}

/* Call stacks (stacks.c). pw_stacks_on is set while stacks are captured; a call that lasted at least
 * pw_stack_min_ticks (INT64_MAX when off) gets one, so a wrapper below the threshold pays one compare; the
 * compare is signed, so that a clock read going backwards across CPUs gives no stack. */
enum pw_stacks_mode { PW_STACKS_OFF = 0, PW_STACKS_NATIVE = 1, PW_STACKS_ALL = 2 /* native and Python */ };
extern int pw_stacks_on;
extern int64_t pw_stack_min_ticks;
/* Writes the record (size bytes, the guard at RECORDING) with the calling thread's stack appended, or as it
 * is when no stack could be had. */
void pw_emit_with_stack(const void *rec, size_t size);
/* Set-up once the process can record (also in a fork child), and after each successful dlopen. */
void pw_stacks_start(void);
void pw_stacks_after_dlopen(void *handle, const char *path);
/* After a successful dlclose: the ranges listed may be reused by another object. */
void pw_stacks_after_dlclose(void);
/* In a fork child, before anything else of the preload runs there: the stacks' fork gate reopened. */
void pw_stacks_after_fork(void);
/* In a fork child (python.c): flags that another thread of the parent may have held. */
void pw_py_after_fork(void);
/* Thread start and end: its CPU-time sample timer (--sample). */
void pw_sample_thread_start(struct pw_thread *t);
void pw_sample_thread_end(struct pw_thread *t);
/* pthread_create of the program's (python.c): while sampling, replaces *start and *arg so that the new thread
 * starts its timer before it runs start. Returns what the thread must free, for the caller to free when no
 * thread was created; NULL when nothing was replaced. */
void *pw_sample_new_thread(void *(**start)(void *), void **arg);

/* Python function ranges (py_ranges.c). pw_pyfn_on: --python-functions was given; pw_pyfn_waiting: the
 * interpreter is still to be hooked, which the opens and stats of the program ask for (pw_pyfn_try_install,
 * python.c) until it is. pw_pyfn_call is told of each call of code (borrowed) in frame, and returns 1 when the
 * call opened a range that pw_pyfn_return, told of the frame's return, closes. */
extern int pw_pyfn_on;
extern int pw_pyfn_waiting;
void pw_pyfn_config(void);
void pw_pyfn_try_install(void);
void pw_pyfn_after_dlopen(void *handle, const char *path);
int pw_pyfn_call(struct pw_thread *t, void *frame, void *code);
void pw_pyfn_return(struct pw_thread *t, void *frame);
/* Whether the code running in frame matches a pattern; *first set when it was matched for the first time. */
int pw_pyfn_code_matches(void *frame, void *code, int *first);
/* At the calling thread's end (pw_thread_at_end): the memory its ranges (py_ranges.c) and its evaluation of
 * deep recursion (python.c) took. */
void pw_pyfn_thread_end(void);
void pw_py_thread_end(void);
/* What py_ranges.c asks of the interpreter (python.c), holding the GIL: references kept and dropped, a code's qualified name (its name before 3.11: pw_py_has_qualname), the module
 * a frame runs in, a local of a frame as text (or the name of its type), and the exception state around it. */
void pw_py_keep(void *obj);
void pw_py_release(void *obj);
int pw_py_has_qualname(void);
size_t pw_py_code_qualname(void *code, char *dst, size_t max);
size_t pw_py_frame_module(void *frame, char *dst, size_t max);
size_t pw_py_frame_local(void *frame, const char *local, int type_name, char *dst, size_t max);
/* Whether frame only makes the generator (or coroutine) its code returns, running none of its body: on 3.11 a
 * generator function's call is a frame of its own, which the profile hook is not told of. */
int pw_py_frame_makes_generator(void *frame, void *code);
void pw_py_error_save(void *saved[3]);
/* --pytorch: turns on PyTorch's NVTX emission in the running program (emit_nvtx(record_shapes), entered and
 * left on), holding the GIL; says so once on stderr when it cannot. */
void pw_py_pytorch_nvtx(int shapes);
void pw_py_error_restore(void *saved[3]);
/* NVTX ranges in the domain "py" (nvtx.c), as the NVTX calls push and pop them. */
void pw_nvtx_py_push(const char *name);
void pw_nvtx_py_pop(void);

/* Python (python.c). pw_py_detect looks for the interpreter's C API in handle (RTLD_DEFAULT at start, a
 * libpython that dlopen loaded later). */
void pw_py_detect(void *handle);
/* The calling thread: 1 runs Python and holds the GIL, 0 runs Python without holding it, -1 no Python. */
int pw_py_thread_state(void);
/* Appends the calling thread's Python frames (it holds the GIL) to a stack being built: buf has cap bytes
 * free. Returns the bytes written, *count the frames, *truncated set when frames were left out. */
size_t pw_py_frames(uint8_t *buf, size_t cap, uint16_t *count, int *truncated);
/* Whether the calling thread's frames can be read without the GIL (CPython 3.9 to 3.13, its layout learnt
 * and checked), and that read, as pw_py_frames. */
int pw_py_direct_ready(void);
size_t pw_py_frames_direct(uint8_t *buf, size_t cap, uint16_t *count, int *truncated);
/* The thread holds the GIL: learns the layout for reading frames directly, once; where that cannot serve,
 * the profile hook on the interpreter's threads now, if this one lacks it, so that their later calls made
 * without the GIL get their frames. */
void pw_py_install_held(void);
/* The thread runs Python without the GIL: have its frames follow in a PW_K_PYSTACK record once it holds
 * the GIL again (the profile hook, installed on the interpreter's threads from the main thread). */
void pw_py_defer(void);
/* Stores a stack (struct pw_stack and what follows, len bytes) once per distinct content; returns its
 * reference, 0 when it was not stored (counted). Async-signal-safe. */
pw_strref pw_stack_store(const void *stack, size_t len);

/* One stack taken by the calling thread, from t0 (ticks) to now: counted with its time in the thread's lane, so
 * the report can say what stacks cost (stacks.c, python.c). Its record written, guard held. */
void pw_stack_cost(uint64_t t0);

/* pw_emit_call for a call that gets a stack (out of line: stacks.c). */
void pw_emit_call_stack(uint16_t type, uint64_t t0, uint64_t t1, int64_t ret, uint64_t a0, uint64_t a1, int err);

/* What recording a call costs (cost.c): measured once per process image (a fork child keeps its parent's)
 * and written as a PW_K_COST record. Called at start, guard held, before stacks start. */
void pw_cost_note(void);

/* Counts a call a signal handler made while its thread was writing a record (not recorded). */
void pw_note_guard_skip(void);

/* The guard held around the profiler's own work on a thread, and errno kept for the program:
 * pw_guard_enter(level) holds it at level and returns what it replaced; pw_guard_leave gives back both the
 * level found (0 in a wrapper; a helper may run with the guard held or not) and errno as it was. */
struct pw_guarded {
	uint8_t guard;
	int saved_errno;
};

static inline __attribute__((always_inline)) struct pw_guarded pw_guard_enter(uint8_t level)
{
	struct pw_guarded was = {pw_self.guard, errno};
	pw_guard_set(level);
	return was;
}

static inline __attribute__((always_inline)) void pw_guard_leave(struct pw_guarded was)
{
	pw_guard_set(was.guard);
	errno = was.saved_errno;
}

/* Whether a call that took t0..t1 (ticks) gets a call stack. */
static inline __attribute__((always_inline)) int pw_call_wants_stack(uint64_t t0, uint64_t t1)
{
	return PW_UNLIKELY(pw_stacks_on) && (int64_t)(t1 - t0) >= pw_stack_min_ticks;
}

/* The record epilogue of every wrapper: the record of the call just made, filled with the guard at
 * INTERNAL, is written with the guard at RECORDING (with the thread's stack when stacked), then the guard
 * and errno are given back (pw_guard_leave). PW_RECORD below does the same for a plain timed call, written
 * in place in the lane (the libc wrappers' fast path). */
static inline __attribute__((always_inline)) void pw_record_done(const void *rec, size_t size, int stacked,
								  struct pw_guarded was)
{
	pw_guard_set(PW_GUARD_RECORDING);
	if (PW_UNLIKELY(stacked))
		pw_emit_with_stack(rec, size);
	else
		pw_emit_record(rec, size);
	pw_guard_leave(was);
}

/* The capture window (capture.c): a word shared with the children this process forks, which record in the
 * same windows. Its low bits (PW_WINDOW_OPEN) are all set while the window is open and clear while it is
 * closed; capture.c keeps its own state in the high bits. Without capture control it stays open. */
#define PW_WINDOW_OPEN 0x00ffffffu
extern _Atomic uint32_t *pw_window;

static inline uint32_t pw_window_now(void)
{
	return atomic_load_explicit(pw_window, memory_order_relaxed);
}

/* The type flag of a record written now: PW_REC_OUTSIDE while the window is closed. */
static inline uint16_t pw_outside_flag(void)
{
	return (pw_window_now() & PW_WINDOW_OPEN) ? 0 : PW_REC_OUTSIDE;
}

static inline int pw_guard_allows(void)
{
	if (PW_LIKELY(!pw_self.guard))
		return 1;
	if (pw_self.guard == PW_GUARD_RECORDING)
		pw_note_guard_skip();
	return 0;
}

/* Set in pw_recording (above the domains' bits) once the program has made a clone that runs on its creator's
 * TLS (clone() with CLONE_VM and without CLONE_SETTLS, process.c): from then on each recorded call asks
 * pw_tls_owner() whether its thread owns the per-thread state it would write. Folded into the word every
 * wrapper loads anyway, so that processes without such clones pay one test of a register. */
#define PW_TLS_SHARED 0x80000000u

/* Slow path, with PW_TLS_SHARED set: 1 when the calling thread's TLS is its own (the thread ids agree); 0
 * for a clone on its creator's TLS, whose call is then counted as dropped and not recorded. */
int pw_tls_owner(void);

static inline int pw_thread_allows(uint32_t recording)
{
	if (PW_UNLIKELY(recording & PW_TLS_SHARED) && !pw_tls_owner())
		return 0;
	return pw_guard_allows();
}

/* Whether a call in domain dom is to be recorded on this thread now: the process records the domain and
 * the capture window is open. */
static inline int pw_should_record(enum pw_domain dom)
{
	uint32_t recording = pw_recording_now();
	if (!(((recording & pw_window_now()) >> dom) & 1))
		return 0;
	return pw_thread_allows(recording);
}

/* Whether a call that names files or processes (pw_kind_tracked) is to be recorded: also outside the
 * capture window, flagged PW_REC_OUTSIDE, so that descriptors opened before a window still have names. */
static inline int pw_should_track(enum pw_domain dom)
{
	uint32_t recording = pw_recording_now();
	if (!((recording >> dom) & 1))
		return 0;
	return pw_thread_allows(recording);
}

/* The kinds of the events as constants, so that a wrapper's tests of its own kind fold away. */
enum {
#define PW_X(id, dom, name, kind) PW_EVKIND_##id = kind,
	PW_EVENT_LIST(PW_X)
#undef PW_X
};

static inline int pw_kind_tracked(int k)
{
	return k == PW_K_OPEN || k == PW_K_CLOSE || k == PW_K_DUP || k == PW_K_CHANNEL || k == PW_K_FORK ||
	       k == PW_K_WAIT || k == PW_K_EXIT || k == PW_K_EXEC || k == PW_K_CHDIR;
}

/* pw_should_record or pw_should_track, as event ev's kind calls for (decided at compile time). */
#define PW_SHOULD_RECORD(dom, ev) \
	(pw_kind_tracked(PW_EVKIND_##ev) ? pw_should_track(PW_DOM_##dom) : pw_should_record(PW_DOM_##dom))

/* The real functions behind wrappers that the profiler itself calls, for its own calls: never recorded nor
 * counted, whatever the guard (a check of one of its descriptors made in a wrapper, exec's path probe made
 * while its record is written, libunwind's module list). */
struct stat;
int pw_fstat_unrecorded(int fd, struct stat *st);
int pw_access_unrecorded(const char *path, int mode);
int pw_mutex_lock_unrecorded(pthread_mutex_t *m);
/* libc's syscall() (uring.c): the library's own references to syscall() bind to its wrapper, as the program's
 * do, which would record its SYS_read and SYS_write (and count a clone's on shared TLS as dropped twice). */
long pw_syscall_unrecorded(long number, long a, long b, long c, long d, long e, long f);
#define PW_SYSCALL_PAD(number, a, b, c, d, e, f, ...) \
	pw_syscall_unrecorded((long)(number), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define PW_SYSCALL(...) PW_SYSCALL_PAD(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)
/* In a fork child: the interned paths of meta.c name entries of the parent's arena. */
void pw_meta_after_fork(void);

/* Copies a path into the arena; returns its reference, 0 for NULL or a full arena. Guard held. */
pw_strref pw_intern_path(const char *path);
/* Copies len bytes into the arena (not deduplicated); returns the reference, 0 for a full arena. */
pw_strref pw_intern_bytes(const char *s, size_t len);

/* The working directory's name in the arena (0: none known), which the record of an open of a relative path
 * carries: set at start and by chdir/fchdir (io.c). */
extern _Atomic pw_strref pw_cwd;
/* Reads the working directory and sets pw_cwd to its name. Returns it. Guard held. */
pw_strref pw_cwd_note(void);
/* In a fork child: the names interned so far are entries of the parent's arena. */
void pw_cwd_after_fork(void);

/* Arena entries made once per key (a function's or a string's address, a hash of the content): a lock-free
 * open-addressing table of nslots slots (a power of two). pw_once() returns the key's entry, calling
 * make(key, arg) to make it the first time; a thread (or a signal handler) that finds the slot still being
 * filled makes its own entry rather than wait. Returns 0 when make does, or when the key's PW_ONCE_PROBES
 * slots are all taken by other keys (the table is bounded). key must not be 0. Async-signal-safe when make
 * is. A fork child clears its tables: they name entries of the parent's arena. */
#define PW_ONCE_PROBES 32
struct pw_once_slot {
	_Atomic uint64_t key;
	_Atomic pw_strref ref;
};
pw_strref pw_once(struct pw_once_slot *slots, size_t nslots, uint64_t key,
		  pw_strref (*make)(uint64_t key, const void *arg), const void *arg);

/* The path argument of a call that has returned, for PW_RECORD's argument expressions (where errno_ holds
 * the call's errno): not read when the call failed because the pointer was bad, which reading it would turn
 * into a crash of the program. */
#define PW_PATH_ARG(path, failed) ((failed) && errno_ == EFAULT ? 0 : pw_intern_path(path))

/* Capture control (capture.c). pw_capture_start() sets up the window once the process can record (a fork
 * child keeps its parent's). The triggers: NVTX ranges (only while pw_capture_watch_ranges; begin before
 * the push or start is recorded, end after the pop or end is), and cudaProfilerStart/Stop. domain is the
 * NVTX domain id (0: default), domain_name NULL for the default domain, id the range id of start/end ranges
 * (0 for push/pop). */
void pw_capture_start(int in_fork_child);
extern int pw_capture_watch_ranges;
void pw_capture_range_begin(uint32_t domain, const char *domain_name, const char *msg, size_t len, int32_t level,
			    uint64_t id);
void pw_capture_range_end(uint32_t domain, int32_t level, uint64_t id);
void pw_capture_profiler_api(int start);

/* Called in the child after fork by the process module: a fresh segment and connection, or passive. */
void pw_after_fork_child(void);
/* Starts a detached thread of profwrap's own, named name, with every signal blocked (the program's signals
 * stay with the program's threads). */
void pw_start_thread(const char *name, void *(*fn)(void *), size_t stack_size);
/* exit/_exit/return from main: the status to report, and /proc/self/io for the coverage check. finished is
 * 0 when atexit handlers and destructors are still to run (exit, return from main), 1 for _exit. */
void pw_note_exit(int status, int finished);
/* stdio at exit (stdio.c), before libc's own flush: records the streams' pending bytes; *unflushed gets the
 * bytes still in output buffers (libc writes them after /proc/self/io is read), *unread those read ahead and
 * not taken. In a fork child: the pending bytes are the parent's to record. */
void pw_stdio_at_exit(uint64_t *unflushed, uint64_t *unread);
void pw_stdio_after_fork(void);
/* rchar and wchar of /proc/self/io. Returns the bytes read to learn them (the kernel counts them after), or -1
 * when they cannot be read. */
int pw_read_io(uint64_t *rchar, uint64_t *wchar);
/* What the loader reads of the objects it maps (dl.c): pw_loads_baseline when the coverage window opens,
 * pw_count_loads after a load and at exit, which adds the objects loaded since to the segment's io_loader. */
void pw_loads_baseline(void);
void pw_count_loads(void);
/* The loader's write lock (dl.c) is held inside dlopen, dlclose and dl_iterate_phdr, and glibc does not reset
 * it in a fork child: a child whose parent had a thread in one of them at the fork would wait forever for
 * it (pw_loader_unsafe). pw_loader_iterate is dl_iterate_phdr for profwrap's own use: in such a child it
 * lists nothing and returns -1. pw_loader_after_fork, first in the child, tells which child this is. */
struct dl_phdr_info;
extern int pw_loader_unsafe;
int pw_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);
void pw_loader_after_fork(void);
/* Once MPI_Init has returned: the process's rank and world size as MPI says (they replace what the
 * launcher's environment said; the collector reads them when the process ends). */
void pw_process_set_rank(int rank, int world_size);

/* Every real-function pointer is registered in the "pw_real" section, so that the constructor resolves
 * them all at once (pw_resolve_all): a dlsym made later, inside a wrapper, would free the string the
 * program's last dlerror() returned. PW_RESOLVE still covers calls made before the constructor ran. The
 * explicit alignment keeps the compiler from padding the slots apart: the section is read as an array. */
struct pw_real_slot {
	void *fn; /* the real_<name> pointer to fill */
	const char *name;
	const char *version; /* NULL: the default version */
};

#define PW_REAL_VERSION(ret_t, name, params, version)                                                  \
	static ret_t(*real_##name) params;                                                             \
	static struct pw_real_slot pw_slot_##name                                                      \
		__attribute__((section("pw_real"), used, aligned(sizeof(void *)))) = {(void *)&real_##name, \
										     #name, version}
#define PW_REAL(ret_t, name, params) PW_REAL_VERSION(ret_t, name, params, NULL)

/* Fills one slot; aborts when libc lacks the symbol (see pw_resolve). */
void pw_resolve_slot(struct pw_real_slot *slot);
/* Fills every registered slot still empty. */
void pw_resolve_all(void);

#define PW_RESOLVE(name)                                     \
	do {                                                 \
		if (PW_UNLIKELY(!real_##name))               \
			pw_resolve_slot(&pw_slot_##name);    \
	} while (0)

/* Writes the record of a call that started at t0_, with the guard held for the writing only. Only tracked kinds
 * can be written outside the capture window (a call that began inside and ended after it closed still counts).
 * The stack test is on the duration alone: pw_stack_min_ticks is INT64_MAX while stacks are off. */
#define PW_RECORD(ev, ret, a0, a1, failed) PW_RECORD_AS(&pw_self, ev, ret, a0, a1, failed)

/* PW_RECORD into thread t's lane (cost.c's calibration: its scratch lane; it runs before stacks start, so
 * the stack branch, which writes the calling thread's lane, is never taken there). */
#define PW_RECORD_AS(t, ev, ret, a0, a1, failed)                                                          \
	do {                                                                                              \
		uint64_t t1_ = pw_clock_ticks();                                                          \
		struct pw_guarded was_ = pw_guard_enter(PW_GUARD_RECORDING);                              \
		int errno_ = was_.saved_errno;                                                            \
		uint16_t type_ = PW_EV_##ev | (pw_kind_tracked(PW_EVKIND_##ev) ? pw_outside_flag() : 0);  \
		int err_ = (failed) ? (errno_ ? errno_ : PW_ERR_NO_ERRNO) : 0;                            \
		if (PW_UNLIKELY((int64_t)(t1_ - t0_) >= pw_stack_min_ticks))                              \
			pw_emit_call_stack(type_, t0_, t1_, (int64_t)(intptr_t)(ret), (uint64_t)(uintptr_t)(a0), \
					   (uint64_t)(uintptr_t)(a1), err_);                              \
		else                                                                                      \
			pw_emit_call_as(t, type_, t0_, t1_, (int64_t)(intptr_t)(ret), (uint64_t)(uintptr_t)(a0), \
					(uint64_t)(uintptr_t)(a1), err_);                                 \
		pw_guard_leave(was_);                                                                     \
	} while (0)

/* The generic wrapper: resolve, time, call, time, record, return. a0/a1 are expressions of the parameters
 * and of `ret` (the result); failed is an expression of `ret` that is true when errno holds the cause. */
#define PW_WRAP(dom, ev, ret_t, name, params, args, a0, a1, failed) \
	PW_WRAP_UNRECORDED(real_##name args, dom, ev, ret_t, name, params, args, a0, a1, failed)

/* PW_WRAP for a call libunwind makes: while a stack is captured, answer (an expression of the parameters) is
 * returned instead (pw_unwind_*). The capture's guard keeps the call from being recorded, so the test costs
 * only calls that are not recorded. */
#define PW_WRAP_UNWIND(answer, dom, ev, ret_t, name, params, args, a0, a1, failed)                      \
	PW_WRAP_UNRECORDED(PW_IN_UNWIND() ? (answer) : real_##name args, dom, ev, ret_t, name, params, args, \
			   a0, a1, failed)

/* PW_WRAP whose calls that are not recorded return unrecorded (an expression of the parameters). */
#define PW_WRAP_UNRECORDED(unrecorded, dom, ev, ret_t, name, params, args, a0, a1, failed)                \
	PW_REAL(ret_t, name, params);                                                                     \
	PW_EXPORT ret_t name params                                                                       \
	{                                                                                                 \
		PW_RESOLVE(name);                                                                         \
		if (!PW_SHOULD_RECORD(dom, ev))                                                           \
			return unrecorded;                                                                \
		uint64_t t0_ = pw_clock_ticks();                                                          \
		ret_t ret = real_##name args;                                                             \
		PW_RECORD(ev, ret, a0, a1, failed);                                                       \
		return ret;                                                                               \
	}

/* The record of a call that names a path (struct pw_rec_open: an open, a stat-family or access call), written as
 * PW_RECORD writes a call's: arg0 (an open's new descriptor, a stat's directory descriptor), the path interned
 * by intern, and what it was relative to (dirfd; the working directory for AT_FDCWD), so that the collector
 * names the file by its absolute path. type is the event with its flags. */
static inline __attribute__((always_inline)) void pw_record_path(uint16_t type, uint64_t t0, int64_t ret, int64_t a0,
								  int failed, int dirfd, const char *path,
								  pw_strref (*intern)(const char *))
{
	uint64_t t1 = pw_clock_ticks();
	struct pw_guarded was = pw_guard_enter(PW_GUARD_INTERNAL);
	int errno_ = was.saved_errno;
	int err = failed ? (errno_ ? errno_ : PW_ERR_NO_ERRNO) : 0;
	pw_strref ref = failed && errno_ == EFAULT ? 0 : intern(path);
	struct pw_rec_open r = {
		.c = {.h = {.type = type, .size8 = sizeof r / 8,
			    .err = (uint8_t)(err > PW_ERR_NO_ERRNO ? PW_ERR_NO_ERRNO : err)},
		      .t0 = t0, .t1 = t1, .ret = ret, .arg0 = (uint64_t)a0, .arg1 = ref},
		.dirfd = dirfd,
		.cwd = ref && dirfd == AT_FDCWD && path[0] != '/' ? atomic_load_explicit(&pw_cwd, memory_order_relaxed) : 0,
	};
	pw_record_done(&r, sizeof r, pw_call_wants_stack(t0, t1), was);
	if (PW_UNLIKELY(pw_pyfn_waiting)) /* the interpreter may run now: its imports open and stat files */
		pw_pyfn_try_install();
}

/* An open that started at t0: fd is the new descriptor. */
#define pw_record_open(ev, t0, ret, fd, failed, dirfd, path) \
	pw_record_path((ev) | pw_outside_flag(), t0, ret, fd, failed, dirfd, path, pw_intern_path)

/* PW_WRAP for a call that names a path (pw_record_path): a0 is an expression of ret and the parameters, dirfd
 * and path of the parameters; intern interns the path. */
#define PW_WRAP_PATH(dom, ev, ret_t, name, params, args, a0, dirfd, path, failed, intern)                 \
	PW_REAL(ret_t, name, params);                                                                     \
	PW_EXPORT ret_t name params                                                                       \
	{                                                                                                 \
		PW_RESOLVE(name);                                                                         \
		if (!PW_SHOULD_RECORD(dom, ev))                                                           \
			return real_##name args;                                                          \
		uint64_t t0_ = pw_clock_ticks();                                                          \
		ret_t ret = real_##name args;                                                             \
		pw_record_path(PW_EV_##ev | (pw_kind_tracked(PW_EVKIND_##ev) ? pw_outside_flag() : 0), t0_, \
			       (int64_t)(intptr_t)ret, a0, failed, dirfd, path, intern);                  \
		return ret;                                                                               \
	}

/* An open: fd is the new descriptor, an expression of ret. */
#define PW_WRAP_OPEN(dom, ev, ret_t, name, params, args, fd, dirfd, path, failed) \
	PW_WRAP_PATH(dom, ev, ret_t, name, params, args, fd, dirfd, path, failed, pw_intern_path)

/* For hand-written wrappers: PW_BEGIN() before the real call, PW_END(...) after it. */
#define PW_BEGIN() uint64_t t0_ = pw_clock_ticks()
#define PW_END(ev, ret, a0, a1, failed) PW_RECORD(ev, ret, a0, a1, failed)

#endif
