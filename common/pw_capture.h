/* Capture settings: which part of a run is recorded (--capture-range, --capture-count, --delay,
 * --duration, --schedule, --step-range). The CLI checks them and passes them on in the environment; every
 * profiled process reads them back with the same parser, so both sides agree on their meaning. */
#ifndef PW_CAPTURE_H
#define PW_CAPTURE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#define PW_ENV_CAPTURE_RANGE "PROFWRAP_CAPTURE_RANGE" /* cudaProfilerApi | nvtx:NAME[@DOMAIN] | manual | none */
#define PW_ENV_CAPTURE_COUNT "PROFWRAP_CAPTURE_COUNT" /* first N occurrences, 0 = all */
#define PW_ENV_DELAY "PROFWRAP_DELAY"                 /* seconds after launch before recording */
#define PW_ENV_DURATION "PROFWRAP_DURATION"           /* seconds of recording after the delay */
#define PW_ENV_SCHEDULE "PROFWRAP_SCHEDULE"           /* wait=W,warmup=U,active=A,repeat=R */
#define PW_ENV_STEP_RANGE "PROFWRAP_STEP_RANGE"       /* NAME[@DOMAIN]: the NVTX range a step is */
#define PW_ENV_CAPTURE_T0 "PROFWRAP_CAPTURE_T0"       /* CLOCK_MONOTONIC ns of the launch (set by the CLI) */
#define PW_ENV_STACKS "PROFWRAP_STACKS"                   /* on | native | off */
#define PW_ENV_STACK_THRESHOLD "PROFWRAP_STACK_THRESHOLD" /* calls at least this long get a stack */
#define PW_ENV_SAMPLE "PROFWRAP_SAMPLE"                   /* CPU-time samples per second and thread */

/* `profwrap start|stop PID` sends this signal with sigqueue and one of these values; a plain kill toggles. */
#define PW_CAPTURE_SIGNAL SIGUSR2
#define PW_CAPTURE_SIG_START 1
#define PW_CAPTURE_SIG_STOP 2

enum pw_capture_mode {
	PW_CAPMODE_NONE = 0,
	PW_CAPMODE_PROFILER_API = 1, /* between cudaProfilerStart and cudaProfilerStop */
	PW_CAPMODE_NVTX = 2,         /* inside occurrences of one NVTX range */
	PW_CAPMODE_MANUAL = 3,       /* closed until `profwrap start PID` */
};

#define PW_CAPTURE_NAME_MAX 256

struct pw_capture_settings {
	enum pw_capture_mode mode;
	char range[PW_CAPTURE_NAME_MAX];  /* PW_CAPMODE_NVTX: the range's message */
	char domain[PW_CAPTURE_NAME_MAX]; /* its NVTX domain, "" for the default domain */
	uint32_t count;                   /* the first count occurrences open a window, 0 = all */
	uint64_t delay_ns;                /* nothing recorded before launch + delay */
	uint64_t duration_ns;             /* nor after launch + delay + duration (0: no end) */
	int schedule;                     /* the step schedule is set */
	uint32_t wait, warmup, active, repeat;
	char step[PW_CAPTURE_NAME_MAX];        /* the step range's message */
	char step_domain[PW_CAPTURE_NAME_MAX]; /* its domain, "" for the default domain */
};

/* Parsers of one option's value into c. Each returns 0, or -1 with a one-line reason in err. */
int pw_capture_parse_range(const char *s, struct pw_capture_settings *c, char *err, size_t errlen);
int pw_capture_parse_count(const char *s, struct pw_capture_settings *c, char *err, size_t errlen);
int pw_capture_parse_seconds(const char *s, uint64_t *ns, const char *what, char *err, size_t errlen);
int pw_capture_parse_schedule(const char *s, struct pw_capture_settings *c, char *err, size_t errlen);
int pw_capture_parse_step(const char *s, struct pw_capture_settings *c, char *err, size_t errlen);

/* Checks the combination (a schedule needs a step range and excludes --capture-range; a count needs a
 * range). Returns 0 or -1 with err. */
int pw_capture_check(const struct pw_capture_settings *c, char *err, size_t errlen);

/* Stack settings (--stacks, --stack-threshold, --sample): which calls carry their call stack, and CPU
 * sampling. They sit with the capture settings because they too decide what is recorded, and the CLI and the
 * preload share the parsers the same way. */
#define PW_STACK_THRESHOLD_DEFAULT_NS 100000u
#define PW_SAMPLE_HZ_MAX 10000u
struct pw_stack_settings {
	int mode;              /* 0 off, 1 native frames only, 2 native and Python frames */
	uint64_t threshold_ns; /* calls at least this long get a stack (0: every call) */
	uint32_t sample_hz;    /* 0: no sampling */
};
/* Each returns 0, or -1 with a one-line reason in err. A duration is a number with ns, us, ms or s (a bare
 * number is microseconds). */
int pw_stacks_parse_mode(const char *s, int *mode, char *err, size_t errlen);
int pw_stacks_parse_threshold(const char *s, uint64_t *ns, char *err, size_t errlen);
int pw_stacks_parse_sample(const char *s, uint32_t *hz, char *err, size_t errlen);
/* Reads PW_ENV_STACKS, PW_ENV_STACK_THRESHOLD and PW_ENV_SAMPLE (defaults: on, 100 us, no sampling).
 * Returns 0, or -1 with err and the defaults in *c. */
int pw_stacks_from_env(struct pw_stack_settings *c, char *err, size_t errlen);

/* Reads every setting from the environment (PW_ENV_CAPTURE_*). Returns 0, or -1 with err and *c cleared:
 * settings that do not parse are ignored as a whole. */
int pw_capture_from_env(struct pw_capture_settings *c, char *err, size_t errlen);

/* Whether any setting limits recording to windows. */
int pw_capture_configured(const struct pw_capture_settings *c);

/* The settings in words, e.g. "nvtx:step, first 3 occurrences; delay 2 s". */
void pw_capture_describe(const struct pw_capture_settings *c, char *buf, size_t size);

/* Whether step k (0-based) of the schedule is an active one: the window is open during it. */
static inline int pw_schedule_active(const struct pw_capture_settings *c, uint64_t k)
{
	uint64_t cycle = (uint64_t)c->wait + c->warmup + c->active;
	if (!cycle || (c->repeat && k / cycle >= c->repeat))
		return 0;
	return k % cycle >= (uint64_t)c->wait + c->warmup;
}

#endif
