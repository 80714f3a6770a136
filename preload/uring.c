/* System calls made directly (syscall()), and io_uring: the I/O a ring does is seen neither by the wrappers
 * nor by the kernel's rchar/wchar, so a ring's set-up is recorded for the report to say so, whether made with
 * syscall() or by liburing (which makes the system call inline). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pw_gpu.h"
#include "pw_preload.h"

/* Writes the record of a call made at t0 (guard free on entry); err is its errno when it failed. */
static void record_call(uint16_t ev, uint64_t t0, long ret, uint64_t a0, uint64_t a1, int err)
{
	uint64_t t1 = pw_clock_ticks();
	struct pw_guarded was = pw_guard_enter(PW_GUARD_RECORDING);
	if (err > PW_ERR_NO_ERRNO || err < 0)
		err = PW_ERR_NO_ERRNO;
	if (pw_call_wants_stack(t0, t1))
		pw_emit_call_stack(ev, t0, t1, ret, a0, a1, err);
	else
		pw_emit_call(ev, t0, t1, ret, a0, a1, err);
	pw_guard_leave(was);
}

/* The event a system call made through syscall() records, -1 for those that go straight through. */
static int raw_event(long number)
{
	switch (number) {
	case SYS_read:
		return PW_EV_READ;
	case SYS_pread64:
		return PW_EV_PREAD;
	case SYS_readv:
		return PW_EV_READV;
	case SYS_preadv:
	case SYS_preadv2:
		return PW_EV_PREADV;
	case SYS_write:
		return PW_EV_WRITE;
	case SYS_pwrite64:
		return PW_EV_PWRITE;
	case SYS_writev:
		return PW_EV_WRITEV;
	case SYS_pwritev:
	case SYS_pwritev2:
		return PW_EV_PWRITEV;
	case SYS_io_uring_setup:
		return PW_EV_IO_URING_SETUP;
	default:
		return -1;
	}
}

static __thread int in_uring_setup; /* inside a liburing set-up function */

/* syscall() passes six arguments on whatever the call takes, as libc's does: the extra ones are never read
 * by the kernel. On x86-64 and aarch64 a variadic call passes them where a call of seven longs does (libc's
 * syscall is assembly that reads them there), so the wrapper takes them as such: reading them with va_arg
 * cost 50 instructions more per call, and futex-heavy programs call syscall() a lot. */
#if defined(__x86_64__) || defined(__aarch64__)
#define PW_SYSCALL_PARAMS long number, long a, long b, long c, long d, long e, long f
#define PW_SYSCALL_ARGS_START
#else
#define PW_SYSCALL_PARAMS long number, ...
#define PW_SYSCALL_ARGS_START                                              \
	va_list ap;                                                         \
	va_start(ap, number);                                               \
	long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long); \
	long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long); \
	va_end(ap)
#endif

static long (*real_syscall)(PW_SYSCALL_PARAMS);
static struct pw_real_slot pw_slot_syscall __attribute__((section("pw_real"), used, aligned(sizeof(void *)))) = {
	(void *)&real_syscall, "syscall", NULL};

/* Out of line, so that the calls that go straight through pay for no saved registers. */
static __attribute__((noinline)) long syscall_recorded(int ev, long number, long a, long b, long c, long d, long e,
						       long f)
{
	uint64_t t0 = pw_clock_ticks();
	long ret = real_syscall(number, a, b, c, d, e, f);
	int err = ret < 0 ? errno : 0;
	if (ev == PW_EV_IO_URING_SETUP)
		record_call((uint16_t)ev, t0, ret, (uint64_t)-1, (uint64_t)a, err);
	else
		record_call((uint16_t)ev, t0, ret, (uint64_t)a, ret > 0 ? (uint64_t)ret : 0, err);
	return ret;
}

long pw_syscall_unrecorded(long number, long a, long b, long c, long d, long e, long f)
{
	PW_RESOLVE(syscall);
	return real_syscall(number, a, b, c, d, e, f);
}

PW_EXPORT long pw_syscall(PW_SYSCALL_PARAMS) __asm__("syscall");
PW_EXPORT long pw_syscall(PW_SYSCALL_PARAMS)
{
	PW_SYSCALL_ARGS_START;
	PW_RESOLVE(syscall);
	int ev = raw_event(number);
	if (PW_LIKELY(ev < 0) || in_uring_setup || !pw_should_record(PW_DOM_IO))
		return real_syscall(number, a, b, c, d, e, f);
	return syscall_recorded(ev, number, a, b, c, d, e, f);
}

/* liburing's set-up functions (found in liburing.so when it is loaded, as the GPU libraries' are); they
 * return a negative errno, and the ring is handed to the program's struct io_uring (opaque here). One calls
 * another through liburing's own exports (and older ones make the system call with syscall()): only the
 * outermost is recorded. */
#define PW_URING_WRAP(name, params, args, entries)                                            \
	PW_EXPORT int name params;                                                            \
	static int(*real_##name) params;                                                      \
	PW_GPU_SLOT(URING, name, (void *)name);                                               \
	PW_EXPORT int name params                                                             \
	{                                                                                     \
		if (PW_UNLIKELY(!real_##name) && pw_gpu_resolve(&pw_gpu_slot_##name) < 0)     \
			return -ENOSYS;                                                       \
		if (in_uring_setup || !pw_should_record(PW_DOM_IO))                           \
			return real_##name args;                                              \
		uint64_t t0 = pw_clock_ticks();                                               \
		in_uring_setup = 1;                                                           \
		int ret = real_##name args;                                                   \
		in_uring_setup = 0;                                                           \
		record_call(PW_EV_IO_URING_SETUP, t0, ret, (uint64_t)-1, entries, ret < 0 ? -ret : 0); \
		return ret;                                                                   \
	}

PW_URING_WRAP(io_uring_queue_init, (unsigned entries, void *ring, unsigned flags), (entries, ring, flags), entries)
PW_URING_WRAP(io_uring_queue_init_params, (unsigned entries, void *ring, void *params), (entries, ring, params),
	      entries)
PW_URING_WRAP(io_uring_queue_init_mem, (unsigned entries, void *ring, void *params, void *buf, size_t size),
	      (entries, ring, params, buf, size), entries)
PW_URING_WRAP(io_uring_setup, (unsigned entries, void *params), (entries, params), entries)
