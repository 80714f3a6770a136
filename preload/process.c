/* Process life: fork, spawn, exec, exit, and the parent's waits (how the report learns how a child ended). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "pw_preload.h"

/* fork: only the parent records; the child's state is reset by pw_after_fork_child() (pthread_atfork). */
PW_REAL(pid_t, fork, (void));
#define PW_FORK_WRAP(ev, name)                                  \
	PW_EXPORT pid_t name(void)                              \
	{                                                       \
		PW_RESOLVE(fork);                               \
		if (!PW_SHOULD_RECORD(PROCESS, ev))             \
			return real_fork();                     \
		PW_BEGIN();                                     \
		pid_t pid = real_fork();                        \
		if (pid == 0)                                   \
			return 0;                               \
		PW_END(ev, pid, pid, 0, pid < 0);               \
		return pid;                                     \
	}
PW_FORK_WRAP(FORK, fork)

/* vfork stays a vfork: a fork would copy the parent's page tables, a cost that grows with its memory (36 ms
 * a spawn from a 2 GiB Python). The child borrows the parent's memory, stack and thread until it execs or
 * exits, so it must change nothing of ours: the guard is held across the call, and every wrapper the child
 * reaches (dup2, close, execve, _exit) goes straight through. The exec'd image records from its start, as a
 * posix_spawn child does; a child that only exits is known by the parent's wait. The wrapper is assembly
 * because it returns twice through one stack: the return address is kept in a register across the system
 * call, as libc's own vfork does. Elsewhere than x86-64, vfork is served by fork. */
#if defined(__x86_64__)
#define VFORK_STR_(x) #x
#define VFORK_STR(x) VFORK_STR_(x)

static __thread struct {
	uint64_t t0;
	pw_strref exec_ref; /* written by the child: the path it execs, 0 when it did not */
	struct pw_guarded was; /* the guard (and errno) before the call */
	uint8_t record;
	uint8_t active;     /* between the call and its return in the parent: read by the child's exec */
} vfork_call;

__attribute__((visibility("hidden"), used)) void pw_vfork_enter(void)
{
	vfork_call.record = (uint8_t)PW_SHOULD_RECORD(PROCESS, VFORK);
	vfork_call.was = pw_guard_enter(PW_GUARD_VFORK);
	vfork_call.exec_ref = 0;
	vfork_call.active = 1;
	vfork_call.t0 = pw_clock_ticks();
}

static pw_strref exec_path_ref(const char *path);

/* The child's exec, in the parent's memory: the report names what a followed child that cannot record
 * itself (a static or set-user-ID program) ran. The arena takes writers from any thread; the parent's is
 * stopped. */
static void vfork_child_execs(const char *path)
{
	if (vfork_call.active && pw_cfg.follow_fork)
		vfork_call.exec_ref = exec_path_ref(path);
}

static void vfork_child_exec_failed(void)
{
	if (vfork_call.active)
		vfork_call.exec_ref = 0;
}

/* In the parent, once the child has exec'd or exited: ret is the system call's result (pid or -errno). */
__attribute__((visibility("hidden"), used)) long pw_vfork_leave(long ret)
{
	uint64_t t1 = pw_clock_ticks();
	int err = ret < 0 ? (int)-ret : 0;
	vfork_call.active = 0;
	if (vfork_call.record) {
		pw_guard_set(PW_GUARD_RECORDING);
		pw_emit_call(PW_EV_VFORK | pw_outside_flag(), vfork_call.t0, t1, ret < 0 ? -1 : ret,
			     (uint64_t)(ret < 0 ? -1 : ret), ret < 0 ? 0 : vfork_call.exec_ref, err);
	}
	pw_guard_leave(vfork_call.was);
	if (ret < 0) {
		errno = err;
		return -1;
	}
	return ret;
}

__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	sub $8, %rsp\n"
	"	call pw_vfork_enter\n"
	"	add $8, %rsp\n"
	"	pop %rdi\n" /* the return address, out of the stack the child will use */
	"	mov $" VFORK_STR(SYS_vfork) ", %eax\n"
	"	syscall\n"
	"	push %rdi\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"
	"	sub $8, %rsp\n"
	"	mov %rax, %rdi\n"
	"	call pw_vfork_leave\n"
	"	add $8, %rsp\n"
	"1:	ret\n"
	".size vfork, .-vfork\n");
#else
PW_FORK_WRAP(VFORK, vfork)
#define vfork_child_execs(path) ((void)(path))
#define vfork_child_exec_failed() ((void)0)
#endif

/* daemon() forks inside libc, and its parent's side ends in libc's own _exit(0), which no wrapper sees: the
 * parent's image is marked exited (status 0) when that fork returns in it (pthread_atfork), and unmarked if
 * daemon() comes back in it (the fork failed). The child is a fork child like any other. */
static __thread int daemon_forking;

static void daemon_fork_parent(void)
{
	if (!daemon_forking || !pw_seg)
		return;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	pw_note_exit(0, 1);
	pw_guard_leave(guard);
}

__attribute__((constructor)) static void process_init(void)
{
	pthread_atfork(NULL, daemon_fork_parent, NULL);
}

PW_REAL(int, daemon, (int, int));
PW_EXPORT int daemon(int nochdir, int noclose)
{
	PW_RESOLVE(daemon);
	pid_t before = getpid();
	daemon_forking = 1;
	int rc = real_daemon(nochdir, noclose);
	daemon_forking = 0;
	if (getpid() == before && pw_seg) {
		int saved = errno;
		atomic_store_explicit(&pw_seg->state, PW_STATE_RUNNING, memory_order_release);
		errno = saved;
	}
	return rc;
}

/* clone() called by the program (pthread_create and posix_spawn use libc's own, unwrapped).
 * - Without CLONE_VM the child is a copy of the process, as after fork, but no pthread_atfork handler runs:
 *   it starts through clone_child, which does what the fork child handler does before calling the program's
 *   function, and marks the image exited with that function's result (libc then makes the exit system call).
 *   That set-up needs more stack than a program may have given its child (tens of KiB), so it runs on a stack
 *   of ours, and the program's function on the program's stack. In a process that has had threads, locks
 *   another thread held stay held in the child, and starting a session takes some (the allocator's, the
 *   loader's): such a child only lets go of its parent's segment and runs unprofiled.
 * - With CLONE_VM and without CLONE_SETTLS the child runs on its creator's TLS, so on its creator's per-thread
 *   state: two producers on one lane. From then on the process's wrappers check the thread id (PW_TLS_SHARED,
 *   pw_tls_owner); a thread on TLS that is not its own is not recorded, and its calls count as dropped.
 * - Unless it is CLONE_VFORK too: then the creator waits for the child's exec or exit, and the child is a vfork
 *   child, the guard held across (PW_TLS_SHARED would outlive it, and with it the check on every call). */
struct clone_start {
	int (*fn)(void *);
	void *arg;
	void *stack; /* the program's */
	int follow;  /* the child may start a session of its own */
};

#define PW_CLONE_SETUP_STACK (256u << 10)

/* In the child (its own copy of memory): what runs on the program's stack, and how it comes back. */
static struct clone_start clone_run;
static int clone_ret;
static ucontext_t clone_back;

static void clone_call(void)
{
	clone_ret = clone_run.fn(clone_run.arg);
}

/* Runs in the child on our stack, where *p (the creator's, copied) still is. */
static int clone_child(void *p)
{
	clone_run = *(struct clone_start *)p;
	if (!clone_run.follow)
		pw_cfg.follow_fork = 0; /* this copy of the configuration only */
	pw_after_fork_child();
	/* makecontext takes a stack as base and size and starts below their end: the program's top, as given */
	ucontext_t call;
	getcontext(&call);
	call.uc_stack.ss_sp = (char *)clone_run.stack - 4096;
	call.uc_stack.ss_size = 4096;
	call.uc_link = &clone_back;
	makecontext(&call, clone_call, 0);
	swapcontext(&clone_back, &call);
	if (pw_seg) {
		struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
		pw_note_exit(clone_ret, 1);
		pw_guard_leave(guard);
	}
	return clone_ret;
}

int pw_tls_owner(void)
{
	struct pw_thread *t = &pw_self;
	uint32_t tid = (uint32_t)PW_SYSCALL(SYS_gettid);
	if (!t->tid)
		t->tid = tid; /* a thread's first call: clone() gave every creator a thread id before its clone */
	if (t->tid == tid)
		return 1;
	/* a vfork child's call goes straight through uncounted, as it would without such clones */
	struct pw_seg_header *h = pw_seg;
	if (h && t->guard != PW_GUARD_VFORK)
		atomic_fetch_add_explicit(&pw_seg_lanes(h)[h->lane_count - 1].dropped, 1, memory_order_relaxed);
	return 0;
}

PW_REAL(int, clone, (int (*)(void *), void *, int, void *, ...));
PW_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	/* The optional arguments, as many as the flags say were passed (the kernel reads no others). */
	pid_t *ptid = NULL, *ctid = NULL;
	void *tls = NULL;
	int nargs = (flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID)) ? 3 : (flags & CLONE_SETTLS) ? 2
		    : (flags & (CLONE_PARENT_SETTID | CLONE_PIDFD))			  ? 1
											  : 0;
	va_list ap;
	va_start(ap, arg);
	if (nargs >= 1)
		ptid = va_arg(ap, pid_t *);
	if (nargs >= 2)
		tls = va_arg(ap, void *);
	if (nargs >= 3)
		ctid = va_arg(ap, pid_t *);
	va_end(ap);
	PW_RESOLVE(clone);
	if (!(flags & CLONE_VM)) {
		struct clone_start start = {fn, arg, stack, __libc_single_threaded};
		char *setup = mmap(NULL, PW_CLONE_SETUP_STACK, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (setup == MAP_FAILED || !stack)
			return real_clone(fn, stack, flags, arg, ptid, tls, ctid); /* as without profwrap */
		int ret = real_clone(clone_child, setup + PW_CLONE_SETUP_STACK, flags, &start, ptid, tls, ctid);
		int saved = errno;
		munmap(setup, PW_CLONE_SETUP_STACK);
		errno = saved;
		return ret;
	}
	if ((flags & (CLONE_VFORK | CLONE_SETTLS)) == CLONE_VFORK) {
		struct pw_guarded was = pw_guard_enter(PW_GUARD_VFORK);
		int ret = real_clone(fn, stack, flags, arg, ptid, tls, ctid);
		int err = errno;
		pw_guard_leave(was);
		errno = err;
		return ret;
	}
	if (!(flags & CLONE_SETTLS) && pw_recording_now()) {
		/* The creator's id before the child can run: a thread whose state has none is the owner of its TLS
		 * (pw_tls_owner). A creator that is itself such a clone has its owner's id already. */
		int saved = errno;
		if (!pw_self.tid)
			pw_self.tid = (uint32_t)PW_SYSCALL(SYS_gettid);
		atomic_fetch_or_explicit(&pw_recording, PW_TLS_SHARED, memory_order_seq_cst);
		errno = saved;
	}
	return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
}

/* posix_spawn reports failure in its return value, not errno. */
#define PW_SPAWN_WRAP(ev, name)                                                                              \
	PW_REAL(int, name, (pid_t *, const char *, const posix_spawn_file_actions_t *,                    \
			    const posix_spawnattr_t *, char *const[], char *const[]));                   \
	PW_EXPORT int name(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,           \
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])          \
	{                                                                                               \
		PW_RESOLVE(name);                                                                       \
		if (!PW_SHOULD_RECORD(PROCESS, ev))                                                     \
			return real_##name(pid, path, fa, attr, argv, envp);                            \
		pid_t child = 0;                                                                        \
		uint64_t t0 = pw_clock_ticks();                                                         \
		int rc = real_##name(&child, path, fa, attr, argv, envp);                               \
		uint64_t t1 = pw_clock_ticks();                                                         \
		struct pw_guarded guard = pw_guard_enter(PW_GUARD_RECORDING);                           \
		if (pid && rc == 0)                                                                     \
			*pid = child;                                                                   \
		pw_emit_call(PW_EV_##ev | pw_outside_flag(), t0, t1, rc, (uint64_t)(rc == 0 ? child : -1), \
			     rc == EFAULT ? 0 : pw_intern_path(path), rc);                              \
		pw_guard_leave(guard);                                                                  \
		return rc;                                                                              \
	}
PW_SPAWN_WRAP(POSIX_SPAWN, posix_spawn)
PW_SPAWN_WRAP(POSIX_SPAWNP, posix_spawnp)

/* exec: mark the segment so that its end reads as "replaced by path"; only a failed exec returns. */
/* exec's path is read before the call: a bad pointer (the exec would fail with EFAULT) must not be read
 * here, so it is probed with a call that reports EFAULT instead of faulting. */
static pw_strref exec_path_ref(const char *path)
{
	int saved = errno;
	int bad = pw_access_unrecorded(path, F_OK) < 0 && errno == EFAULT;
	errno = saved;
	return bad ? 0 : pw_intern_path(path);
}

static void exec_begin(const char *path)
{
	if (!pw_seg)
		return;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_RECORDING);
	pw_seg->exec_ref = exec_path_ref(path);
	pw_guard_set(PW_GUARD_INTERNAL); /* the profiler's own reads: not skipped calls */
	pw_count_loads();
	pw_seg->io_valid = pw_read_io(&pw_seg->io_rchar, &pw_seg->io_wchar) >= 0; /* the image's window ends */
	pw_seg->end_ticks = pw_clock_ticks();
	atomic_store_explicit(&pw_seg->state, PW_STATE_EXECING, memory_order_release);
	pw_guard_leave(guard);
}

static void exec_failed(uint64_t t0, const char *path)
{
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_RECORDING);
	if (pw_seg) {
		pw_seg->io_valid = 0;
		atomic_store_explicit(&pw_seg->state, PW_STATE_RUNNING, memory_order_release);
	}
	pw_emit_call(PW_EV_EXECVE | pw_outside_flag(), t0, pw_clock_ticks(), -1, 0,
		     guard.saved_errno == EFAULT ? 0 : pw_intern_path(path), guard.saved_errno);
	pw_guard_leave(guard);
}

#define PW_EXEC_WRAP(name, params, args, path)                  \
	PW_REAL(int, name, params);                             \
	PW_EXPORT int name params                               \
	{                                                       \
		PW_RESOLVE(name);                               \
		if (!PW_SHOULD_RECORD(PROCESS, EXECVE)) {       \
			vfork_child_execs(path);                \
			int rc_ = real_##name args;             \
			vfork_child_exec_failed();              \
			return rc_;                             \
		}                                               \
		uint64_t t0 = pw_clock_ticks();                 \
		exec_begin(path);                               \
		int rc = real_##name args;                      \
		exec_failed(t0, path);                          \
		return rc;                                      \
	}

PW_EXEC_WRAP(execve, (const char *path, char *const argv[], char *const envp[]), (path, argv, envp), path)
PW_EXEC_WRAP(execv, (const char *path, char *const argv[]), (path, argv), path)
PW_EXEC_WRAP(execvp, (const char *file, char *const argv[]), (file, argv), file)
PW_EXEC_WRAP(execvpe, (const char *file, char *const argv[], char *const envp[]), (file, argv, envp), file)
PW_EXEC_WRAP(fexecve, (int fd, char *const argv[], char *const envp[]), (fd, argv, envp), "(fexecve)")

/* The execl family takes its arguments as a list: gather them on the stack and go through the vector
 * wrappers above, which record. */
#define PW_GATHER_ARGS(arg, ap, argv)                               \
	size_t n_ = 1;                                              \
	va_start(ap, arg);                                          \
	while (va_arg(ap, const char *))                            \
		n_++;                                               \
	va_end(ap);                                                 \
	const char *argv[n_ + 1];                                   \
	argv[0] = arg;                                              \
	va_start(ap, arg);                                          \
	for (size_t i_ = 1; i_ <= n_; i_++)                         \
		argv[i_] = va_arg(ap, const char *)

PW_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	PW_GATHER_ARGS(arg, ap, argv);
	va_end(ap);
	return execv(path, (char *const *)argv);
}

PW_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	PW_GATHER_ARGS(arg, ap, argv);
	va_end(ap);
	return execvp(file, (char *const *)argv);
}

PW_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	PW_GATHER_ARGS(arg, ap, argv);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, (char *const *)argv, envp);
}

/* Exits: an instant record (when the process domain is traced), then the status and /proc/self/io into the
 * segment header (always: how the process ended is not a call). Not from a vfork child, which holds the
 * guard: the segment is its parent's. */
#define PW_EXIT_WRAP(ev, name, finished)                                         \
	PW_REAL(void, name, (int));                                              \
	PW_EXPORT __attribute__((noreturn)) void name(int status)                \
	{                                                                        \
		PW_RESOLVE(name);                                                \
		if (pw_seg && pw_thread_allows(pw_recording_now())) {           \
			int record = PW_SHOULD_RECORD(PROCESS, ev);              \
			struct pw_guarded guard = pw_guard_enter(PW_GUARD_RECORDING); \
			if (record) {                                            \
				uint64_t now = pw_clock_ticks();                 \
				pw_emit_call(PW_EV_##ev | pw_outside_flag(), now, now, 0, (uint64_t)status, 0, 0); \
			}                                                        \
			pw_guard_set(PW_GUARD_INTERNAL);                         \
			pw_note_exit(status, finished);                          \
			pw_guard_leave(guard); /* atexit handlers are recorded */ \
		}                                                                \
		real_##name(status);                                             \
		__builtin_unreachable();                                         \
	}
PW_EXIT_WRAP(EXIT, exit, 0)
PW_EXIT_WRAP(EXIT_NOW, _exit, 1)
PW_EXIT_WRAP(EXIT_NOW, _Exit, 1)

/* Waits: the status is recorded even when the caller passed NULL for it. own_args are the real call's
 * arguments with &st in the status's place. */
#define PW_WAIT_WRAP(ev, name, params, args, own_args)                \
	PW_REAL(pid_t, name, params);                                 \
	PW_EXPORT pid_t name params                                   \
	{                                                             \
		PW_RESOLVE(name);                                     \
		if (!PW_SHOULD_RECORD(PROCESS, ev))                   \
			return real_##name args;                      \
		int st = 0;                                           \
		PW_BEGIN();                                           \
		pid_t ret = real_##name own_args;                     \
		if (status && ret > 0)                                \
			*status = st;                                 \
		PW_END(ev, ret, ret, ret > 0 ? st : 0, ret < 0);      \
		return ret;                                           \
	}
PW_WAIT_WRAP(WAITPID, waitpid, (pid_t pid, int *status, int options), (pid, status, options), (pid, &st, options))
PW_WAIT_WRAP(WAIT, wait, (int *status), (status), (&st))
PW_WAIT_WRAP(WAIT3, wait3, (int *status, int options, struct rusage *ru), (status, options, ru), (&st, options, ru))
PW_WAIT_WRAP(WAIT4, wait4, (pid_t pid, int *status, int options, struct rusage *ru), (pid, status, options, ru),
	     (pid, &st, options, ru))

/* waitid reports through siginfo: turned into the waitpid() status form the other waits record. */
static int siginfo_status(const siginfo_t *si)
{
	switch (si->si_code) {
	case CLD_EXITED:
		return (si->si_status & 0xff) << 8;
	case CLD_KILLED:
		return si->si_status & 0x7f;
	case CLD_DUMPED:
		return (si->si_status & 0x7f) | 0x80;
	default:
		return 0;
	}
}

PW_REAL(int, waitid, (idtype_t, id_t, siginfo_t *, int));
PW_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	PW_RESOLVE(waitid);
	if (!PW_SHOULD_RECORD(PROCESS, WAITID) || !info)
		return real_waitid(idtype, id, info, options);
	PW_BEGIN();
	int ret = real_waitid(idtype, id, info, options);
	int reaped = ret == 0 && info->si_pid > 0 && !(options & WNOWAIT);
	PW_END(WAITID, ret, reaped ? info->si_pid : 0, reaped ? siginfo_status(info) : 0, ret < 0);
	return ret;
}

/* Return from main is an exit the exit() wrapper does not see (libc calls its own exit): wrap main. */
typedef int (*pw_main_fn)(int, char **, char **);
static pw_main_fn real_main;

static int pw_main(int argc, char **argv, char **envp)
{
	int status = real_main(argc, argv, envp);
	if (pw_seg) {
		struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
		pw_note_exit(status, 0);
		pw_guard_leave(guard);
	}
	return status;
}

PW_REAL(int, __libc_start_main, (pw_main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *));
PW_EXPORT int __libc_start_main(pw_main_fn main_fn, int argc, char **argv, void (*init)(void), void (*fini)(void),
				void (*rtld_fini)(void), void *stack_end)
{
	PW_RESOLVE(__libc_start_main);
	real_main = main_fn;
	return real___libc_start_main(pw_main, argc, argv, init, fini, rtld_fini, stack_end);
}
