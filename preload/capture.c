/* Capture control: which part of the run is recorded. The window is one word (pw_window) that every
 * wrapper reads; it lives in a page shared with the children this process forks, so DataLoader workers
 * record in their parent's windows, while a process that execs starts its own. The triggers that move it:
 * cudaProfilerStart/Stop (cudart.c), occurrences of an NVTX range or of the step range of a schedule
 * (nvtx.c), a timer thread for --delay/--duration, and SIGUSR2 from `profwrap start|stop PID`. Each change
 * writes a PW_K_CAPTURE record, so the report knows the windows. */
#define _GNU_SOURCE
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "pw_preload.h"

/* State bits above PW_WINDOW_OPEN. The window is open when forced open, or when not forced closed and both
 * the trigger (capture range, schedule) and the timer (delay, duration) allow it. */
#define ST_TRIGGER (1u << 24)
#define ST_TIMER (1u << 25)
#define ST_FORCE_OPEN (1u << 26)
#define ST_FORCE_CLOSED (1u << 27)

static _Atomic uint32_t always_open = PW_WINDOW_OPEN | ST_TRIGGER | ST_TIMER;
_Atomic uint32_t *pw_window = &always_open;
int pw_capture_watch_ranges;

/* An occurrence of a watched range that is open: the pop or end that closes it. */
struct occurrence {
	int active;
	uint32_t tid;
	uint32_t domain;
	int32_t level;  /* push/pop ranges */
	uint64_t id;    /* start/end ranges (0: a push/pop range) */
	uint64_t index; /* which occurrence or step */
};

static struct {
	atomic_flag lock; /* guards the occurrences and counters: taken only when a watched range begins or ends */
	struct occurrence range, step;
	uint64_t occurrences, steps;
	_Atomic int tracking; /* an occurrence is open: pops and ends must be looked at */
	pw_strref range_ref, step_ref;
} cap = {.lock = ATOMIC_FLAG_INIT};

static int window_open_for(uint32_t st)
{
	if (st & ST_FORCE_OPEN)
		return 1;
	return !(st & ST_FORCE_CLOSED) && (st & ST_TRIGGER) && (st & ST_TIMER);
}

static void emit_capture(int open, enum pw_capture_reason why, pw_strref name, int64_t occurrence)
{
	if (pw_self.guard == PW_GUARD_RECORDING) { /* a signal interrupted a record of this thread */
		pw_note_guard_skip();
		return;
	}
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_RECORDING);
	uint64_t now = pw_clock_ticks();
	pw_emit_call(open ? PW_EV_CAPTURE_START : PW_EV_CAPTURE_STOP, now, now, occurrence, why, name, 0);
	pw_guard_leave(guard);
}

/* Sets and clears state bits; records the change when the window opened or closed. Async-signal-safe. */
static void window_update(uint32_t set, uint32_t clear, enum pw_capture_reason why, pw_strref name,
			  int64_t occurrence)
{
	uint32_t old = atomic_load_explicit(pw_window, memory_order_relaxed), next;
	do {
		uint32_t st = ((old & ~PW_WINDOW_OPEN) & ~clear) | set;
		next = st | (window_open_for(st) ? PW_WINDOW_OPEN : 0);
	} while (!atomic_compare_exchange_weak_explicit(pw_window, &old, next, memory_order_acq_rel,
							 memory_order_relaxed));
	if ((old ^ next) & PW_WINDOW_OPEN)
		emit_capture((next & PW_WINDOW_OPEN) != 0, why, name, occurrence);
}

static void lock(void)
{
	while (atomic_flag_test_and_set_explicit(&cap.lock, memory_order_acquire))
		;
}

static void unlock(void)
{
	atomic_flag_clear_explicit(&cap.lock, memory_order_release);
}

static int names_match(const char *want, const char *msg, size_t len)
{
	return strlen(want) == len && memcmp(want, msg, len) == 0;
}

static int domain_matches(const char *want, const char *domain_name)
{
	return want[0] ? domain_name && strcmp(want, domain_name) == 0 : domain_name == NULL;
}

static int ends(const struct occurrence *o, uint32_t domain, int32_t level, uint64_t id)
{
	if (!o->active)
		return 0;
	return o->id ? o->id == id : !id && o->tid == pw_self.tid && o->domain == domain && o->level == level;
}

void pw_capture_range_begin(uint32_t domain, const char *domain_name, const char *msg, size_t len, int32_t level,
			    uint64_t id)
{
	const struct pw_capture_settings *c = &pw_cfg.capture;
	int is_range = c->mode == PW_CAPMODE_NVTX && names_match(c->range, msg, len) &&
		       domain_matches(c->domain, domain_name);
	int is_step = c->schedule && names_match(c->step, msg, len) && domain_matches(c->step_domain, domain_name);
	if (!is_range && !is_step)
		return;
	struct occurrence o = {1, pw_self.tid, domain, level, id, 0};
	lock();
	if (is_range && !cap.range.active) {
		o.index = cap.occurrences++;
		if (!c->count || o.index < c->count) {
			cap.range = o;
			atomic_store_explicit(&cap.tracking, 1, memory_order_release);
			window_update(ST_TRIGGER, 0, PW_CAPTURE_NVTX, cap.range_ref, (int64_t)o.index);
		}
	}
	if (is_step && !cap.step.active) {
		o.index = cap.steps++;
		cap.step = o;
		atomic_store_explicit(&cap.tracking, 1, memory_order_release);
		if (pw_schedule_active(c, o.index))
			window_update(ST_TRIGGER, 0, PW_CAPTURE_SCHEDULE, cap.step_ref, (int64_t)o.index);
	}
	unlock();
}

void pw_capture_range_end(uint32_t domain, int32_t level, uint64_t id)
{
	if (!atomic_load_explicit(&cap.tracking, memory_order_acquire))
		return;
	lock();
	if (ends(&cap.range, domain, level, id)) {
		cap.range.active = 0;
		window_update(0, ST_TRIGGER, PW_CAPTURE_NVTX, cap.range_ref, (int64_t)cap.range.index);
	}
	if (ends(&cap.step, domain, level, id)) {
		cap.step.active = 0;
		if (!pw_schedule_active(&pw_cfg.capture, cap.step.index + 1))
			window_update(0, ST_TRIGGER, PW_CAPTURE_SCHEDULE, cap.step_ref, (int64_t)cap.step.index);
	}
	atomic_store_explicit(&cap.tracking, cap.range.active || cap.step.active, memory_order_release);
	unlock();
}

void pw_capture_profiler_api(int start)
{
	const struct pw_capture_settings *c = &pw_cfg.capture;
	if (c->mode != PW_CAPMODE_PROFILER_API)
		return;
	lock();
	if (start) {
		uint64_t k = cap.occurrences++;
		if (!c->count || k < c->count)
			window_update(ST_TRIGGER, 0, PW_CAPTURE_PROFILER_API, 0, (int64_t)k);
	} else if (atomic_load_explicit(pw_window, memory_order_relaxed) & ST_TRIGGER) {
		window_update(0, ST_TRIGGER, PW_CAPTURE_PROFILER_API, 0, (int64_t)cap.occurrences - 1);
	}
	unlock();
}

/* profwrap start|stop PID: sigqueue'd with PW_CAPTURE_SIG_START or _STOP; a plain kill toggles. */
/* --capture-range=manual: a plain SIGUSR2 (kill -USR2) toggles recording. Otherwise only profwrap's own
 * (sigqueue with a start or stop value) does, and any other SIGUSR2 has its default action, as without
 * profwrap. */
static int plain_signal_toggles;

PW_REAL(int, sigaction, (int, const struct sigaction *, struct sigaction *));
PW_REAL(sighandler_t, signal, (int, sighandler_t));

static void on_capture_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int saved = errno;
	int what = si && si->si_code == SI_QUEUE ? si->si_value.sival_int : 0;
	if (what != PW_CAPTURE_SIG_START && what != PW_CAPTURE_SIG_STOP) {
		if (!plain_signal_toggles) {
			/* not profwrap's: the program would have died of it, so it does (default action, re-raised
			 * once this handler returns and the signal is unblocked) */
			real_signal(sig, SIG_DFL);
			raise(sig);
			errno = saved;
			return;
		}
		what = (pw_window_now() & PW_WINDOW_OPEN) ? PW_CAPTURE_SIG_STOP : PW_CAPTURE_SIG_START;
	}
	if (what == PW_CAPTURE_SIG_START)
		window_update(ST_FORCE_OPEN, ST_FORCE_CLOSED, PW_CAPTURE_ON_DEMAND, 0, -1);
	else
		window_update(ST_FORCE_CLOSED, ST_FORCE_OPEN, PW_CAPTURE_ON_DEMAND, 0, -1);
	errno = saved;
}

/* The capture signal's handler is profwrap's, not the program's: asked for SIGUSR2's disposition (Python's
 * signal.getsignal), the program sees the default until it sets its own, as without profwrap; setting the
 * default keeps profwrap's, which acts as the default for any SIGUSR2 not profwrap's; setting anything else
 * replaces it for good (profwrap start|stop then refuse that process). */
static _Atomic int handler_ours;

/* Whether profwrap's handler is in place, here and in the segment's header, where the CLI reads it. */
static void set_handler_ours(int ours)
{
	atomic_store_explicit(&handler_ours, ours, memory_order_relaxed);
	if (pw_seg)
		atomic_store_explicit(&pw_seg->capture_signal_ours, (uint32_t)ours, memory_order_release);
}

static void default_disposition(struct sigaction *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sa_handler = SIG_DFL;
}

PW_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	PW_RESOLVE(sigaction);
	if (sig != PW_CAPTURE_SIGNAL || !atomic_load_explicit(&handler_ours, memory_order_relaxed))
		return real_sigaction(sig, act, old);
	if (act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
		if (old)
			default_disposition(old);
		return 0;
	}
	struct sigaction prev;
	int rc = real_sigaction(sig, act, &prev);
	if (rc == 0 && old) {
		if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction == on_capture_signal)
			default_disposition(old);
		else
			*old = prev;
	}
	if (rc == 0 && act)
		set_handler_ours(0);
	return rc;
}

PW_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	PW_RESOLVE(signal);
	if (sig != PW_CAPTURE_SIGNAL || !atomic_load_explicit(&handler_ours, memory_order_relaxed))
		return real_signal(sig, handler);
	if (handler == SIG_DFL)
		return SIG_DFL;
	sighandler_t prev = real_signal(sig, handler);
	if (prev == SIG_ERR)
		return prev;
	set_handler_ours(0);
	return (uintptr_t)prev == (uintptr_t)on_capture_signal ? SIG_DFL : prev;
}

static void sleep_until(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* --delay and --duration: a thread of the profiler's own, started only when they are set. */
static void *timer_main(void *unused)
{
	(void)unused;
	pw_guard_set(PW_GUARD_INTERNAL);
	const struct pw_capture_settings *c = &pw_cfg.capture;
	uint64_t open_at = pw_cfg.capture_t0 + c->delay_ns;
	if (pw_clock_mono_ns() < open_at) {
		sleep_until(open_at);
		window_update(ST_TIMER, 0, PW_CAPTURE_TIMER, 0, -1);
	}
	if (c->duration_ns) {
		sleep_until(open_at + c->duration_ns);
		window_update(0, ST_TIMER, PW_CAPTURE_TIMER, 0, -1);
	}
	return NULL;
}

static void start_timer(void)
{
	pw_start_thread("profwrap-timer", timer_main, 64u << 10);
}

/* The state this process starts in: ST_TIMER from the launch time, the trigger closed until a range,
 * schedule or cudaProfilerStart opens it, forced closed in manual mode. */
static uint32_t initial_state(const struct pw_capture_settings *c, uint64_t now, int *needs_timer)
{
	uint32_t st = 0;
	if (c->mode == PW_CAPMODE_NONE && !c->schedule)
		st |= ST_TRIGGER;
	if (c->mode == PW_CAPMODE_MANUAL)
		st |= ST_FORCE_CLOSED;
	uint64_t open_at = pw_cfg.capture_t0 + c->delay_ns;
	int before = now < open_at;
	int after = c->duration_ns && now >= open_at + c->duration_ns;
	if (!before && !after)
		st |= ST_TIMER;
	*needs_timer = before || (c->duration_ns && !after);
	return st;
}

void pw_capture_start(int in_fork_child)
{
	const struct pw_capture_settings *c = &pw_cfg.capture;
	int configured = pw_capture_configured(c);
	plain_signal_toggles = c->mode == PW_CAPMODE_MANUAL;
	pw_capture_watch_ranges = c->mode == PW_CAPMODE_NVTX || c->schedule;
	cap.range_ref = c->mode == PW_CAPMODE_NVTX ? pw_intern_path(c->range) : 0;
	cap.step_ref = c->schedule ? pw_intern_path(c->step) : 0;
	if (in_fork_child) {
		set_handler_ours(atomic_load_explicit(&handler_ours, memory_order_relaxed)); /* into its own header */
		/* The window is the parent's, shared; the occurrences it tracks are the parent's ranges, and a
		 * thread of the parent may have held the lock when it forked. */
		atomic_flag_clear(&cap.lock);
		memset(&cap.range, 0, sizeof cap.range);
		memset(&cap.step, 0, sizeof cap.step);
		atomic_store_explicit(&cap.tracking, 0, memory_order_relaxed);
	} else {
		int needs_timer = 0;
		uint32_t st = configured ? initial_state(c, pw_clock_mono_ns(), &needs_timer) : ST_TRIGGER | ST_TIMER;
		_Atomic uint32_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		static _Atomic uint32_t own_window; /* no page: the window is this process's alone */
		pw_window = page != MAP_FAILED ? page : &own_window;
		atomic_store_explicit(pw_window, st | (window_open_for(st) ? PW_WINDOW_OPEN : 0),
				      memory_order_release);
		struct sigaction old;
		PW_RESOLVE(sigaction);
		PW_RESOLVE(signal);
		if (real_sigaction(PW_CAPTURE_SIGNAL, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_sigaction = on_capture_signal;
			sa.sa_flags = SA_SIGINFO | SA_RESTART;
			sigfillset(&sa.sa_mask);
			if (real_sigaction(PW_CAPTURE_SIGNAL, &sa, NULL) == 0)
				set_handler_ours(1);
		}
		if (needs_timer)
			start_timer();
	}
	if (c->step[0]) {
		uint64_t now = pw_clock_ticks();
		pw_strref step = pw_intern_path(c->step);
		struct pw_guarded guard = pw_guard_enter(PW_GUARD_RECORDING);
		pw_emit_call(PW_EV_CAPTURE_START, now, now, -1, PW_CAPTURE_STEPS, step, 0);
		pw_guard_leave(guard);
	}
	if (configured) {
		uint32_t w = pw_window_now();
		uint64_t now = pw_clock_ticks();
		pw_strref settings = pw_intern_path(pw_cfg.capture_text);
		struct pw_guarded guard = pw_guard_enter(PW_GUARD_RECORDING);
		pw_emit_call((w & PW_WINDOW_OPEN) ? PW_EV_CAPTURE_START : PW_EV_CAPTURE_STOP, now, now, -1,
			     PW_CAPTURE_INITIAL, settings, 0);
		pw_guard_leave(guard);
	}
}
