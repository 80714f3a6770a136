/* Call stacks: who made the calls that wait, allocate or take long, and where the CPU goes (--sample).
 *
 * A stack is captured with libunwind's local fast trace (no malloc, async-signal-safe once the thread's
 * cache exists), Python frames are added where the thread runs Python (python.c), and the result is stored
 * once per distinct content in the string arena: records carry its reference. Every loaded object is listed
 * as a PW_K_MODULE record (path, load bias, address range, build-id) so the collector can symbolise the
 * addresses after the process is gone.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../common/pw_rank.h"
#include "pw_own_fds.h"
#include "pw_preload.h"

int pw_stacks_on;
int64_t pw_stack_min_ticks = INT64_MAX;

/* Our own code's addresses: its frames are the profiler's, never the caller's. */
static uintptr_t self_lo, self_hi;

/* ---- the stack store: one arena entry per distinct stack ---- */

/* One table slot per distinct stack (pw_once, keyed by its hash), bounded: a full neighbourhood, or an arena
 * three quarters full, drops the stack and counts it (strings such as paths keep the last quarter). */
#define STACK_SLOTS 16384u
static struct pw_once_slot stack_slots[STACK_SLOTS];

/* A word at a time (pw_hash64 goes byte by byte: several times slower on a stack's 200-600 bytes). */
static uint64_t stack_hash(const uint8_t *p, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h | 1; /* pw_once's keys are not 0 */
}

struct stack_bytes {
	const void *p;
	size_t len;
};

static pw_strref store_copy(uint64_t hash, const void *arg)
{
	(void)hash;
	const struct stack_bytes *b = arg;
	struct pw_seg_header *h = pw_seg;
	if (!h || atomic_load_explicit(&h->arena_used, memory_order_relaxed) + b->len > h->arena_size / 4 * 3)
		return 0;
	return pw_intern_bytes(b->p, b->len);
}

pw_strref pw_stack_store(const void *stack, size_t len)
{
	struct stack_bytes b = {stack, len};
	pw_strref ref = pw_once(stack_slots, STACK_SLOTS, stack_hash(stack, len), store_copy, &b);
	if (!ref && pw_seg)
		atomic_fetch_add_explicit(&pw_seg->stacks_dropped, 1, memory_order_relaxed);
	return ref;
}

/* ---- modules ---- */

/* The address ranges already listed, sorted by start, so that a capture can tell cheaply whether one of its
 * addresses lies in an object loaded behind dlopen's back (a libc-internal load): then the list is scanned
 * again. Changed under modules_lock; captures read it without the lock (a torn read only costs a rescan). */
#define MAX_MODULES 4096u
static struct {
	uintptr_t lo, hi;
} modules[MAX_MODULES];
static _Atomic uint32_t nmodules;
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
/* 1: a capture saw an address outside the list (scanned again now and then); 2: the list was cleared
 * (dlclose, a fork child: scanned at the next capture) */
static _Atomic int modules_stale;

static int module_known(uintptr_t addr)
{
	uint32_t lo = 0, hi = atomic_load_explicit(&nmodules, memory_order_acquire);
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (addr < modules[mid].lo)
			hi = mid;
		else if (addr >= modules[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/* Adds [lo, hi); returns 1 when it was new. Called with modules_lock held. */
static int module_add(uintptr_t lo, uintptr_t hi)
{
	uint32_t n = atomic_load_explicit(&nmodules, memory_order_relaxed), at = 0;
	while (at < n && modules[at].lo < lo)
		at++;
	if (at < n && modules[at].lo == lo && modules[at].hi == hi)
		return 0;
	if (n == MAX_MODULES)
		return 1; /* listed, but not remembered: at worst listed again */
	memmove(&modules[at + 1], &modules[at], (n - at) * sizeof modules[0]);
	modules[at].lo = lo;
	modules[at].hi = hi;
	atomic_store_explicit(&nmodules, n + 1, memory_order_release);
	return 1;
}

static pw_strref build_id_of(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			size_t name = (n->n_namesz + 3) & ~3u, desc = (n->n_descsz + 3) & ~3u;
			const uint8_t *d = p + sizeof *n + name;
			if ((size_t)(end - p) < sizeof *n + name + desc)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(p + sizeof *n, "GNU", 4) == 0 &&
			    n->n_descsz > 0 && n->n_descsz <= 64) {
				char hex[129];
				for (uint32_t j = 0; j < n->n_descsz; j++) {
					hex[2 * j] = "0123456789abcdef"[d[j] >> 4];
					hex[2 * j + 1] = "0123456789abcdef"[d[j] & 15];
				}
				return pw_intern_bytes(hex, 2 * n->n_descsz);
			}
			p += sizeof *n + name + desc;
		}
	}
	return 0;
}

/* The vDSO's ELF image as the kernel mapped it, whole (its section headers included), when it starts at lo:
 * no file holds it, so its bytes go into the trace for the symbolizer to read its symbols. Returns the
 * reference, 0 for any other object. */
static pw_strref vdso_image(uintptr_t lo, uintptr_t hi)
{
	uintptr_t ehdr = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	if (!ehdr || ehdr != lo)
		return 0;
	const ElfW(Ehdr) *e = (const ElfW(Ehdr) *)ehdr;
	if (memcmp(e->e_ident, ELFMAG, SELFMAG) != 0)
		return 0;
	uint64_t size = hi - lo, sections = (uint64_t)e->e_shoff + (uint64_t)e->e_shnum * e->e_shentsize;
	if (sections > size)
		size = sections;
	return size <= PW_MODULE_IMAGE_MAX ? pw_intern_bytes((const char *)ehdr, size) : 0;
}

static int list_module(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (start < lo)
			lo = start;
		if (start + ph->p_memsz > hi)
			hi = start + ph->p_memsz;
	}
	if (lo >= hi || !module_add(lo, hi))
		return 0;
	struct pw_rec_module m = {0};
	uint64_t now = pw_clock_ticks();
	m.c.h.type = PW_EV_MODULE;
	m.c.h.size8 = sizeof m / 8;
	m.c.t0 = m.c.t1 = now;
	m.c.arg0 = info->dlpi_addr;
	/* the main program has no name here: the path the process started from stands for it */
	m.c.arg1 = info->dlpi_name && info->dlpi_name[0] ? pw_intern_path(info->dlpi_name) : pw_seg->exe_ref;
	m.lo = lo;
	m.hi = hi;
	m.build_id = build_id_of(info);
	m.image = vdso_image(lo, hi);
	pw_emit_record(&m, sizeof m);
	return 0;
}

/* Fork safety. While a thread unwinds, libunwind holds locks of its own (and the loader its lock, in
 * dl_iterate_phdr); a fork child inherits them held by a thread it does not have, and its first stack then
 * waits forever. So around a fork (pthread_atfork) no unwinding starts, and the forking thread waits for the
 * unwinding under way: a stack asked for meanwhile is not taken (the call is recorded without one). Atomics
 * only: a sample's signal handler passes the gate too. */
static _Atomic int unwinding;    /* threads in the unwinder or listing objects */
static _Atomic int fork_pending; /* a fork is being made */

static int unwind_enter(void)
{
	if (pw_loader_unsafe)
		return -1; /* libunwind lists objects with dl_iterate_phdr */
	atomic_fetch_add(&unwinding, 1);
	if (!atomic_load(&fork_pending))
		return 0;
	atomic_fetch_sub(&unwinding, 1);
	return -1;
}

static void unwind_leave(void)
{
	atomic_fetch_sub(&unwinding, 1);
}

static void fork_prepare(void)
{
	atomic_store(&fork_pending, 1);
	while (atomic_load(&unwinding))
		sched_yield();
}

static void fork_parent(void)
{
	atomic_store(&fork_pending, 0);
}

void pw_stacks_after_fork(void)
{
	atomic_store(&unwinding, 0);
	atomic_store(&fork_pending, 0);
}

/* Lists the objects not listed yet. Not from a signal handler: dl_iterate_phdr takes the loader's lock. */
static void list_modules(void)
{
	if (!pw_seg || unwind_enter() < 0)
		return;
	atomic_store_explicit(&modules_stale, 0, memory_order_relaxed);
	pw_mutex_lock_unrecorded(&modules_lock);
	pw_loader_iterate(list_module, NULL);
	pthread_mutex_unlock(&modules_lock);
	unwind_leave();
}

/* Code outside every object (JIT code) keeps a capture finding unknown addresses: the list is scanned again
 * at most every 100 ms for them. */
static void list_modules_now_and_then(void)
{
	static _Atomic uint64_t last_ns;
	uint64_t now = pw_clock_mono_ns(), last = atomic_load_explicit(&last_ns, memory_order_relaxed);
	if (now - last < 100000000u ||
	    !atomic_compare_exchange_strong_explicit(&last_ns, &last, now, memory_order_relaxed, memory_order_relaxed))
		return;
	list_modules();
}

void pw_stacks_after_dlclose(void)
{
	if (!pw_stacks_on)
		return;
	/* listed again (and recorded again) at the next capture or dlopen: an object loaded later at the same
	 * addresses must be recorded too */
	pw_mutex_lock_unrecorded(&modules_lock);
	atomic_store_explicit(&nmodules, 0, memory_order_release);
	pthread_mutex_unlock(&modules_lock);
	atomic_store_explicit(&modules_stale, 2, memory_order_relaxed);
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t probe = (uintptr_t)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && probe >= start && probe < start + ph->p_memsz) {
			self_lo = start;
			self_hi = start + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* ---- libunwind's pipe (pw_unwind_*, see pw_preload.h) ---- */

/* The pipe libunwind validates addresses with, and what its two ends are, so that a number the program has
 * closed and reused is never taken for it. Touched only while a capture runs; the raw system calls keep our
 * own wrappers out. */
static struct {
	int fd;
	dev_t dev;
	ino_t ino;
} unw_pipe[2] = {{-1, 0, 0}, {-1, 0, 0}};

static int unw_pipe_end(int fd)
{
	struct stat st;
	for (int i = 0; i < 2; i++)
		if (fd >= 0 && fd == unw_pipe[i].fd && pw_fstat_unrecorded(fd, &st) == 0 &&
		    st.st_dev == unw_pipe[i].dev && st.st_ino == unw_pipe[i].ino)
			return i;
	return -1;
}

int pw_unwind_pipe2(int fds[2], int flags)
{
	int made[2];
	if (PW_SYSCALL(SYS_pipe2, made, flags | O_CLOEXEC) < 0)
		return -1;
	/* above the numbers programs use, as the profiler's own descriptors are */
	struct rlimit rl;
	int floor = 3;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 128)
		floor = rl.rlim_cur > 1024 ? 1024 - 96 : (int)rl.rlim_cur - 48;
	for (int i = 0; i < 2; i++) {
		int high = (int)PW_SYSCALL(SYS_fcntl, made[i], F_DUPFD_CLOEXEC, floor);
		if (high >= 0) {
			PW_SYSCALL(SYS_close, made[i]);
			made[i] = high;
		}
		struct stat st;
		pw_fstat_unrecorded(made[i], &st);
		unw_pipe[i].fd = fds[i] = made[i];
		unw_pipe[i].dev = st.st_dev;
		unw_pipe[i].ino = st.st_ino;
		pw_own_fd_note(PW_OWN_UNWIND_READ + i, made[i]); /* the program's closes leave it alone */
	}
	return 0;
}

/* Whether fd is one of the numbers libunwind takes for its pipe (the program's own handlers, running in a
 * signal that interrupted the unwinder, use other numbers and are served as usual). */
static int unw_pipe_number(int fd)
{
	return fd >= 0 && (fd == unw_pipe[0].fd || fd == unw_pipe[1].fd);
}

/* Bytes moved through libunwind's pipe: the kernel counts them, and they are not the program's. */
static ssize_t own_bytes(ssize_t n)
{
	if (n > 0 && pw_seg)
		atomic_fetch_add_explicit(&pw_seg->io_own, (uint64_t)n, memory_order_relaxed);
	return n;
}

ssize_t pw_unwind_read(int fd, void *buf, size_t n)
{
	if (!unw_pipe_number(fd))
		return PW_SYSCALL(SYS_read, fd, buf, n);
	/* both ends must still be the pipe: libunwind writes to the other end next */
	if (unw_pipe_end(fd) != 0 || unw_pipe_end(unw_pipe[1].fd) != 1) {
		errno = EBADF;
		return -1;
	}
	return own_bytes(PW_SYSCALL(SYS_read, fd, buf, n));
}

ssize_t pw_unwind_write(int fd, const void *buf, size_t n)
{
	ssize_t put = PW_SYSCALL(SYS_write, fd, buf, n);
	return unw_pipe_number(fd) ? own_bytes(put) : put;
}

int pw_unwind_close(int fd)
{
	if (!unw_pipe_number(fd))
		return (int)PW_SYSCALL(SYS_close, fd);
	int end = unw_pipe_end(fd);
	if (end < 0)
		return 0; /* the number is the program's now: left alone */
	unw_pipe[end].fd = -1;
	pw_own_fd_forget(PW_OWN_UNWIND_READ + end);
	return (int)PW_SYSCALL(SYS_close, fd);
}

/* ---- the unwinder ---- */

/* libunwind, loaded privately (RTLD_LOCAL) rather than linked: as a dependency of libprofwrap.so it would sit
 * in the program's global scope, where its _Unwind_* (and backtrace) would serve every library loaded later,
 * and every C++ exception would be unwound by another library than without profwrap. */
PW_REAL(void *, dlopen, (const char *, int));
extern void *(*pw_real_dlsym)(void *, const char *) __attribute__((visibility("hidden")));
#define PW_STR_(x) #x
#define PW_STR(x) PW_STR_(x) /* the name a libunwind macro stands for (_ULx86_64_...) */
static struct {
	int (*backtrace)(void **, int);
	int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
	unw_addr_space_t *local_addr_space;
	/* the step-by-step walk from a signal's context (signal_frames); init_local2 is NULL before libunwind 1.3 */
	int (*init_local2)(unw_cursor_t *, unw_context_t *, int);
	int (*step)(unw_cursor_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
} unwinder;

/* 0 when libunwind's functions are there. */
static int unwinder_load(void)
{
	if (unwinder.backtrace)
		return 0;
	PW_RESOLVE(dlopen);
	void *h = real_dlopen ? real_dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!h || !pw_real_dlsym)
		return -1;
	*(void **)&unwinder.set_caching_policy = pw_real_dlsym(h, PW_STR(unw_set_caching_policy));
	unwinder.local_addr_space = pw_real_dlsym(h, PW_STR(unw_local_addr_space));
	*(void **)&unwinder.backtrace = pw_real_dlsym(h, PW_STR(unw_backtrace));
	*(void **)&unwinder.step = pw_real_dlsym(h, PW_STR(unw_step));
	*(void **)&unwinder.get_reg = pw_real_dlsym(h, PW_STR(unw_get_reg));
	if (unwinder.step && unwinder.get_reg)
		*(void **)&unwinder.init_local2 = pw_real_dlsym(h, PW_STR(unw_init_local2));
	dlerror();
	return unwinder.backtrace && unwinder.set_caching_policy && unwinder.local_addr_space ? 0 : -1;
}

/* ---- capture ---- */

/* Has a capture scan the module list again when one of the count addresses lies outside it. */
static void note_unknown_frames(const uint64_t *ips, int count)
{
	int unknown = 0;
	for (int i = 0; i < count; i++)
		unknown |= !module_known((uintptr_t)ips[i]);
	int clean = 0;
	if (unknown)
		atomic_compare_exchange_strong_explicit(&modules_stale, &clean, 1, memory_order_relaxed,
							memory_order_relaxed);
}

/* Native frames of the calling thread into ips (innermost first), without the profiler's own; with
 * interrupted_ip set (a sample), from that instruction on. Returns the count; *truncated when the stack was
 * deeper than PW_STACK_MAX_NATIVE. libunwind's fast trace keeps a cache per thread, made at the thread's
 * first walk (~200 us: 256 KiB mapped and filled, a thread key set, its thread-local block allocated):
 * a walk outside a signal handler marks the thread as having it (pw_thread.unwound). */
static uint16_t native_frames(uint64_t *ips, uintptr_t interrupted_ip, int *truncated, int *interrupted)
{
	void *raw[PW_STACK_MAX_NATIVE + 16];
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_UNWIND);
	int n = unwinder.backtrace ? unwinder.backtrace(raw, (int)(sizeof raw / sizeof raw[0])) : 0;
	pw_guard_leave(guard);
	if (!interrupted_ip)
		pw_self.unwound = 1;
	int from = 0;
	while (from < n && (uintptr_t)raw[from] >= self_lo && (uintptr_t)raw[from] < self_hi)
		from++;
	*interrupted = 0;
	if (interrupted_ip) {
		/* past the signal trampoline: the interrupted instruction, when the unwinder went through the frame */
		for (int i = from; i < n && i < from + 4; i++) {
			if ((uintptr_t)raw[i] == interrupted_ip) {
				from = i;
				*interrupted = 1;
				break;
			}
		}
		if (!*interrupted && from < n)
			from++;
	}
	int count = n - from;
	*truncated = n == (int)(sizeof raw / sizeof raw[0]) || count > PW_STACK_MAX_NATIVE;
	if (count > PW_STACK_MAX_NATIVE)
		count = PW_STACK_MAX_NATIVE;
	for (int i = 0; i < count; i++)
		ips[i] = (uint64_t)(uintptr_t)raw[from + i];
	if (count > 0)
		note_unknown_frames(ips, count);
	return count < 0 ? 0 : (uint16_t)count;
}

/* A sample's native frames on a thread libunwind has not walked outside a signal handler: its fast trace
 * would make the thread's cache here, and the allocations that takes are not safe in a handler. The
 * step-by-step walk from the interrupted context uses no per-thread state (~1 us a frame, against a fraction
 * of that for the fast trace); the thread's first call with a stack makes the cache, and its later samples
 * take the fast trace. As native_frames; the innermost frame is the interrupted instruction. */
static uint16_t signal_frames(uint64_t *ips, void *ucontext, int *truncated, int *interrupted)
{
	unw_cursor_t cursor;
	int n = 0;
	*truncated = 0;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_UNWIND);
	if (unwinder.init_local2(&cursor, ucontext, UNW_INIT_SIGNAL_FRAME) == 0) {
		unw_word_t ip;
		do {
			if (n == PW_STACK_MAX_NATIVE) {
				*truncated = 1;
				break;
			}
			if (unwinder.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || !ip)
				break;
			ips[n++] = ip;
		} while (unwinder.step(&cursor) > 0);
	}
	pw_guard_leave(guard);
	*interrupted = n > 0;
	if (n > 0)
		note_unknown_frames(ips, n);
	return (uint16_t)n;
}

/* Python frames are built in one of a few buffers, each taken with a flag: frames read directly (no GIL) can
 * be taken by several threads at once. A thread that finds them all taken waits its turn briefly (the
 * holders only copy frames), then goes without Python frames. */
#define PY_BUF_SIZE (sizeof(struct pw_stack) + PW_STACK_MAX_NATIVE * 8 + PW_STACK_MAX_PYTHON * 272)
#define PY_BUFS 4
#define PY_BUF_TRIES 1000
static uint8_t py_bufs[PY_BUFS][PY_BUF_SIZE];
static _Atomic int py_buf_busy[PY_BUFS];

/* A free buffer's index, taken, or -1. */
static int py_buf_take(void)
{
	for (int tries = 0; tries < PY_BUF_TRIES; tries++) {
		for (int i = 0; i < PY_BUFS; i++) {
			int expected = 0;
			if (atomic_compare_exchange_strong(&py_buf_busy[i], &expected, 1))
				return i;
		}
		sched_yield();
	}
	return -1;
}

/* Captures the calling thread's stack and returns its reference (PW_STACK_PY_PENDING set when Python frames
 * are to follow), 0 when none was stored; a sample passes its signal's ucontext, a call NULL. Called with the
 * guard at PW_GUARD_INTERNAL. */
static uint64_t capture_stack(uintptr_t interrupted_ip, void *ucontext)
{
	int in_signal = ucontext != NULL;
	struct {
		struct pw_stack s;
		uint64_t ips[PW_STACK_MAX_NATIVE];
	} b;
	int truncated, interrupted;
	b.s.magic = PW_STACK_MAGIC;
	b.s.native = in_signal && !pw_self.unwound && unwinder.init_local2
			     ? signal_frames(b.ips, ucontext, &truncated, &interrupted)
			     : native_frames(b.ips, interrupted_ip, &truncated, &interrupted);
	b.s.python = 0;
	b.s.flags = (truncated ? PW_STACK_TRUNCATED : 0) | (interrupted ? PW_STACK_INTERRUPTED : 0);
	b.s.reserved = 0;
	size_t native_len = sizeof b.s + (size_t)b.s.native * 8;
	uint64_t pending = 0;
	if (pw_stacks_on == PW_STACKS_ALL && !in_signal) {
		int py = pw_py_thread_state();
		int direct = py == 0 && pw_py_direct_ready();
		int buf = py == 1 || direct ? py_buf_take() : -1;
		if (buf >= 0) {
			uint8_t *py_buf = py_bufs[buf];
			uint16_t count = 0;
			int py_truncated = 0;
			size_t len = direct ? pw_py_frames_direct(py_buf + native_len, sizeof py_buf - native_len, &count,
								  &py_truncated)
					    : pw_py_frames(py_buf + native_len, sizeof py_buf - native_len, &count, &py_truncated);
			b.s.python = count;
			if (py_truncated)
				b.s.flags |= PW_STACK_TRUNCATED;
			memcpy(py_buf, &b, native_len);
			pw_strref ref = pw_stack_store(py_buf, native_len + len);
			atomic_store(&py_buf_busy[buf], 0);
			if (py == 1)
				pw_py_install_held();
			return ref;
		}
		if (py == 0 && !direct) {
			pw_py_defer();
			pending = PW_STACK_PY_PENDING;
		}
	} else if (in_signal && pw_self.py_hooked) {
		/* a sample of a Python thread: its frames as the profile hook next sees them */
		pw_self.py_sample_pending = 1;
		pending = PW_STACK_PY_PENDING;
	}
	int stale = atomic_load_explicit(&modules_stale, memory_order_relaxed);
	if (!in_signal && stale == 2)
		list_modules();
	else if (!in_signal && stale)
		list_modules_now_and_then();
	pw_strref ref = pw_stack_store(&b, native_len);
	return ref ? ref | pending : pending;
}

/* capture_stack() behind the fork gate: 0 (no stack) while a fork is being made. */
static uint64_t capture(uintptr_t interrupted_ip, void *ucontext)
{
	if (unwind_enter() < 0)
		return 0;
	uint64_t ref = capture_stack(interrupted_ip, ucontext);
	unwind_leave();
	return ref;
}

/* Every signal but those a fault raises in the thread itself (set by pw_stacks_start). */
static sigset_t async_signals;

void pw_stack_cost(uint64_t t0)
{
	struct pw_lane *l = pw_self.lane;
	if (!l)
		return;
	atomic_fetch_add_explicit(&l->stacks, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&l->stack_ticks, pw_clock_ticks() - t0, memory_order_relaxed);
}

void pw_emit_with_stack(const void *rec, size_t size)
{
	uint64_t buf[32]; /* the largest record with a stack: struct pw_rec_api + 8 */
	const struct pw_rec_hdr *h = rec;
	if (size + 8 > sizeof buf || (h->type & PW_REC_OUTSIDE) || !pw_stacks_on) {
		pw_emit_record(rec, size);
		return;
	}
	uint64_t t0 = pw_clock_ticks(); /* the stack's cost: signal mask, capture, and writing its record */
	/* While the stack is taken the guard is the unwinder's, and a wrapped call made by a signal handler then
	 * would be neither recorded nor counted: asynchronous signals wait until the record is written (their
	 * handlers' calls then find the guard at RECORDING and are counted as skipped). */
	sigset_t old;
	pthread_sigmask(SIG_BLOCK, &async_signals, &old);
	pw_guard_set(PW_GUARD_INTERNAL);
	uint64_t stack = capture(0, NULL);
	pw_guard_set(PW_GUARD_RECORDING);
	if (!stack) {
		pw_emit_record(rec, size);
	} else {
		memcpy(buf, rec, size);
		memcpy((uint8_t *)buf + size, &stack, 8);
		struct pw_rec_hdr *out = (struct pw_rec_hdr *)buf;
		out->type |= PW_REC_STACK;
		out->size8 = (uint8_t)((size + 8) / 8);
		pw_emit_record(buf, size + 8);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pw_stack_cost(t0);
}

void pw_emit_call_stack(uint16_t type, uint64_t t0, uint64_t t1, int64_t ret, uint64_t a0, uint64_t a1, int err)
{
	struct pw_rec_call c;
	c.h.type = type;
	c.h.size8 = sizeof c / 8;
	c.h.err = (uint8_t)(err > PW_ERR_NO_ERRNO ? PW_ERR_NO_ERRNO : err);
	c.h.tid = 0;
	c.t0 = t0;
	c.t1 = t1;
	c.ret = ret;
	c.arg0 = a0;
	c.arg1 = a1;
	pw_emit_with_stack(&c, sizeof c);
}

/* ---- CPU sampling (--sample=HZ) ---- */

/* Each thread has a timer on its own CPU-time clock, so a thread is sampled in proportion to the CPU it
 * uses and the signal lands on that thread (a process-wide timer's signal may go to any thread). */
static int sampling;
static uint64_t sample_period_ns;

/* The calling thread's CPU time in ns (async-signal-safe). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The thread's CPU time since its previous sample, which this one stands for: the kernel checks CPU-time
 * timers at its tick (250 Hz here), so at a higher rate one signal comes for several periods. Measured rather
 * than taken from timer_getoverrun: exact whatever the tick, and it covers the time before the first
 * expiry. A sample that is not recorded drops its time with it. */
static uint64_t thread_cpu_since_sample(struct pw_thread *t)
{
	uint64_t now = thread_cpu_ns(), since = now > t->sample_cpu_ns ? now - t->sample_cpu_ns : 0;
	t->sample_cpu_ns = now;
	return since;
}

/* Arms a sample timer: one signal per period of its clock. */
static int sample_timer_arm(timer_t timer)
{
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(sample_period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(sample_period_ns % 1000000000u);
	its.it_value = its.it_interval;
	return timer_settime(timer, 0, &its, NULL);
}

/* Threads already running when sampling starts, started by the constructor of a library the loader
 * initialised before profwrap (OpenBLAS starts its workers so): they never ran sampled_start. Each gets a
 * timer on its CPU clock, made here, that its first signal hands over to it (early_join). At most
 * EARLY_THREADS (the others are sampled from their first record); the timer of one that ends before its
 * first signal is left until the process ends. */
#define EARLY_THREADS 256
enum { EARLY_WAITING, EARLY_TAKEN, EARLY_DELETED };
static struct early_thread {
	timer_t timer;
	uint64_t cpu_ns; /* the thread's CPU time when the timer started */
	int state;       /* EARLY_*, changed only on the thread, in the handler */
} early[EARLY_THREADS];

static void sample_early_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	int self = (int)PW_SYSCALL(SYS_gettid), n = 0;
	struct dirent *de;
	while (n < EARLY_THREADS && (de = readdir(d))) {
		int tid = pw_parse_nonneg_int(de->d_name);
		if (tid <= 0 || tid == self)
			continue;
		/* thread tid's CPU clock as the kernel numbers it (MAKE_THREAD_CPUCLOCK: pthread_getcpuclockid's) */
		clockid_t clock = (clockid_t)(~(unsigned)tid << 3 | 6u);
		struct early_thread *e = &early[n];
		struct sigevent sev;
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = SIGPROF;
		sev.sigev_value.sival_ptr = e;
		sev._sigev_un._tid = tid;
		struct timespec ts;
		if (clock_gettime(clock, &ts) != 0 || timer_create(clock, &sev, &e->timer) < 0)
			continue; /* ended meanwhile */
		e->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		e->state = EARLY_WAITING;
		if (sample_timer_arm(e->timer) < 0) {
			timer_delete(e->timer);
			continue;
		}
		n++;
	}
	closedir(d);
}

/* The early thread whose timer sent si, or NULL (a thread's own timer carries no value). */
static struct early_thread *early_of(const siginfo_t *si)
{
	uintptr_t e = si->si_code == SI_TIMER ? (uintptr_t)si->si_value.sival_ptr : 0;
	return e >= (uintptr_t)early && e < (uintptr_t)(early + EARLY_THREADS) ? (struct early_thread *)e : NULL;
}

/* A signal of early thread e's timer, on that thread: whether it is a sample. The first one hands the timer
 * to the thread, unless the thread started a timer of its own meanwhile (at its first record: this one is
 * deleted) or is inside the profiler (the next signal tries again). */
static int early_join(struct pw_thread *t, struct early_thread *e)
{
	if (e->state != EARLY_WAITING) /* the thread's timer now, or one due before it was deleted */
		return e->state == EARLY_TAKEN && t->sampling && (timer_t)t->sample_timer == e->timer;
	if (t->sampling) {
		e->state = EARLY_DELETED;
		timer_delete(e->timer);
		return 0;
	}
	/* (a clone sharing another thread's TLS sees that thread's state: not its own to take) */
	if (t->guard || !pw_seg || !pw_recording_now() || (t->tid && t->tid != (uint32_t)PW_SYSCALL(SYS_gettid)))
		return 0;
	e->state = EARLY_TAKEN;
	t->sample_timer = e->timer;
	t->sample_cpu_ns = e->cpu_ns;
	t->sampling = 1;
	return 1;
}

/* Takes a lane, in the handler, for a thread whose first record is a sample (a thread that never uses a
 * period of CPU takes none), as a wrapped call made in a signal handler takes it. Returns 0 or -1. */
static int sample_lane(struct pw_thread *t)
{
	struct pw_guarded was = pw_guard_enter(PW_GUARD_INTERNAL);
	int rc = pw_thread_attach(t);
	pw_guard_leave(was);
	return rc;
}

static void on_sample(int sig, siginfo_t *si, void *ucontext)
{
	(void)sig;
	int saved_errno = errno;
	struct pw_thread *t = &pw_self;
	struct early_thread *e = early_of(si);
	if (e ? !early_join(t, e) : !t->sampling) {
		/* not this thread's timer: a SIGPROF sent from outside, or one due before the timer ended */
		errno = saved_errno;
		return;
	}
	uint64_t cpu_ns = thread_cpu_since_sample(t);
	if (!pw_seg || !pw_recording_now() || !(pw_window_now() & (1u << PW_DOM_PROCESS))) {
		errno = saved_errno;
		return;
	}
	if (t->guard || (!t->lane && sample_lane(t) < 0)) {
		/* inside the profiler (its lane may be mid-record), or no lane to be had */
		atomic_fetch_add_explicit(&pw_seg->samples_skipped, 1, memory_order_relaxed);
		errno = saved_errno;
		return;
	}
	struct pw_guarded was = pw_guard_enter(PW_GUARD_INTERNAL);
	uintptr_t ip = 0;
#if defined(__x86_64__)
	ip = (uintptr_t)((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	ip = (uintptr_t)((ucontext_t *)ucontext)->uc_mcontext.pc;
#else
	(void)ucontext;
#endif
	uint64_t now = pw_clock_ticks();
	struct {
		struct pw_rec_call c;
		uint64_t stack;
	} r = {0};
	r.stack = capture(ip ? ip : 1, ucontext);
	r.c.h.type = PW_EV_CPU_SAMPLE | PW_REC_STACK;
	r.c.h.size8 = sizeof r / 8;
	r.c.t0 = r.c.t1 = now;
	pw_put_sample(&r.c, (struct pw_sample){.period_ns = sample_period_ns, .cpu_ns = cpu_ns});
	pw_stack_cost(now);
	pw_record_done(&r, sizeof r, 0, was);
}

void pw_sample_thread_start(struct pw_thread *t)
{
	if (!sampling || t->sampling)
		return;
	if (!unwinder.init_local2) {
		/* no signal_frames: the thread's first walk, which makes its cache, must not be in the handler */
		uint64_t ips[PW_STACK_MAX_NATIVE];
		int truncated, interrupted;
		struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL); /* t is the calling thread's */
		native_frames(ips, 0, &truncated, &interrupted);
		pw_guard_leave(guard);
	}
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)t->tid;
	timer_t timer;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) < 0)
		return;
	/* set before the timer runs: its first signal finds them */
	t->sample_timer = timer;
	t->sample_cpu_ns = thread_cpu_ns();
	t->sampling = 1;
	if (sample_timer_arm(timer) < 0) {
		t->sampling = 0;
		timer_delete(timer);
	}
}

void pw_sample_thread_end(struct pw_thread *t)
{
	if (!t->sampling)
		return;
	timer_delete((timer_t)t->sample_timer);
	t->sampling = 0;
}

/* A thread the program starts while sampling runs sampled_start first: it starts its timer before its own
 * code runs. Otherwise that happens when it takes its lane, at its first record, which a thread that only
 * computes (a spinning pthread, a BLAS worker) never makes. */
struct sampled_start_arg {
	void *(*start)(void *);
	void *arg;
};

static void *sampled_start(void *p)
{
	struct sampled_start_arg a = *(struct sampled_start_arg *)p;
	free(p);
	struct pw_thread *t = &pw_self;
	struct pw_guarded was = pw_guard_enter(PW_GUARD_INTERNAL);
	t->tid = (uint32_t)PW_SYSCALL(SYS_gettid);
	pw_sample_thread_start(t);
	if (t->sampling)
		pw_thread_at_end(); /* its timer is deleted with it, whether or not it ever takes a lane */
	pw_guard_leave(was);
	/* a sibling call at -O2: the thread's samples show no frame of ours between start_thread and start */
	return a.start(a.arg);
}

void *pw_sample_new_thread(void *(**start)(void *), void **arg)
{
	/* not the profiler's own threads (created with the guard held), nor in a process that does not record */
	if (!sampling || !pw_seg || !pw_recording_now() || pw_self.guard)
		return NULL;
	struct sampled_start_arg *a = malloc(sizeof *a);
	if (!a)
		return NULL;
	a->start = *start;
	a->arg = *arg;
	*start = sampled_start;
	*arg = a;
	return a;
}

/* Installs the SIGPROF handler unless the program has its own (a profiler of its own, Python's
 * signal.setitimer): then no sampling, said once. */
static void sampling_start(uint32_t hz)
{
	static int said;
	struct sigaction old;
	if (sigaction(SIGPROF, NULL, &old) < 0)
		return;
	int free_signal = !(old.sa_flags & SA_SIGINFO) && (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN);
	if (!free_signal && old.sa_sigaction != on_sample) {
		if (!said++ && !pw_cfg.quiet)
			dprintf(2, "profwrap: the program handles SIGPROF itself; --sample is off in pid %d\n", getpid());
		return;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) < 0)
		return;
	sample_period_ns = 1000000000u / hz;
	sampling = 1;
}

/* ---- set-up ---- */

/* Ticks per ns of the record clock, measured over 50 us (within 0.1 %): the threshold is compared in ticks. */
static double ticks_per_ns(void)
{
	struct pw_clock_pair a = pw_clock_pair_now(), b;
	do
		b = pw_clock_pair_now();
	while (b.ns - a.ns < 50000);
	return b.ticks > a.ticks ? (double)(b.ticks - a.ticks) / (double)(b.ns - a.ns) : 1.0;
}

void pw_stacks_start(void)
{
	static double rate;
	if (!pw_cfg.stacks || !pw_seg)
		return;
	sigfillset(&async_signals);
	static const int faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS};
	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
		sigdelset(&async_signals, faults[i]);
	if (!self_lo)
		pw_loader_iterate(find_self, (void *)(uintptr_t)pw_stacks_start);
	/* a fork child: the parent's table names entries of the parent's arena, and the lock may have been
	 * held by a thread the child does not have (the first start finds the table untouched: no page of it
	 * is made resident for nothing) */
	int fork_child = rate != 0;
	if (fork_child) {
		memset(stack_slots, 0, sizeof stack_slots);
		atomic_store(&nmodules, 0);
		pthread_mutex_init(&modules_lock, NULL);
		for (int i = 0; i < PY_BUFS; i++)
			atomic_store(&py_buf_busy[i], 0);
		pw_py_after_fork();
	} else {
		rate = pw_clock_use_tsc ? ticks_per_ns() : 1.0;
		pthread_atfork(fork_prepare, fork_parent, NULL); /* the child: pw_stacks_after_fork, first */
	}
	pw_stack_min_ticks = (int64_t)((double)pw_cfg.stack_threshold_ns * rate);
	/* per-thread caches: no lock in the unwinder, so a sample may interrupt an unwind on another thread */
	/* libunwind's set-up would make its pipe (PW_UNWIND_ANSWER) */
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_UNWIND);
	if (unwinder_load() < 0) {
		pw_guard_leave(guard);
		if (!pw_cfg.quiet)
			dprintf(2, "profwrap: libunwind.so.8 cannot be loaded; calls are recorded without call stacks\n");
		return;
	}
	unwinder.set_caching_policy(*unwinder.local_addr_space, UNW_CACHE_PER_THREAD);
	pw_guard_leave(guard);
	pw_stacks_on = pw_cfg.stacks;
	/* A fork child lists its objects at its first capture: dl_iterate_phdr's lock may have been held by
	 * another thread of the parent at the fork, and glibc does not reset that one in the child. */
	if (fork_child)
		atomic_store_explicit(&modules_stale, 2, memory_order_relaxed);
	else
		list_modules();
	if (pw_cfg.sample_hz && !sampling) {
		sampling_start(pw_cfg.sample_hz);
		/* an early thread's samples start in the handler: without signal_frames they would make its cache
		 * there (a fork child gets here only when the parent did not sample, and has no other thread) */
		if (sampling && unwinder.init_local2)
			sample_early_threads();
	}
	if (pw_self.lane)
		pw_sample_thread_start(&pw_self); /* the thread attached while listing the modules */
}

void pw_stacks_after_dlopen(void *handle, const char *path)
{
	if (!pw_stacks_on)
		return;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	list_modules();
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	if (pw_stacks_on == PW_STACKS_ALL && base && strncmp(base, "libpython", 9) == 0)
		pw_py_detect(handle);
	pw_guard_leave(guard);
}
