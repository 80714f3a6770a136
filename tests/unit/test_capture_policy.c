#define _GNU_SOURCE
/* Unit tests for the capture settings (common/pw_capture.c): the parsers of --capture-range, --capture-count,
 * --delay/--duration, --schedule and --step-range (accepted values, and refused ones with a message naming
 * the option), the checks of their combination, reading them back from the environment (a bad value clears
 * everything), the settings in words, and pw_schedule_active against a step-by-step reimplementation of
 * torch.profiler.schedule (wait, warmup, active, repeat). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../common/pw_capture.h"

#define ERRLEN 256

static void clear(struct pw_capture_settings *c)
{
	memset(c, 0, sizeof *c);
}

static int is_zero(const struct pw_capture_settings *c)
{
	struct pw_capture_settings z;
	clear(&z);
	return memcmp(c, &z, sizeof z) == 0;
}

/* Runs a parser expected to refuse: -1 and a message containing want. */
#define REFUSED(call, err, want)                                                                           \
	do {                                                                                               \
		(err)[0] = 0;                                                                              \
		assert_int_equal((call), -1);                                                              \
		if (!strstr((err), (want)))                                                                \
			fail_msg("%s: message \"%s\" lacks \"%s\"", #call, (err), (want));                   \
	} while (0)

/* ---- --capture-range ---- */

static void test_parse_range_modes(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN] = "";
	clear(&c);
	assert_int_equal(pw_capture_parse_range("cudaProfilerApi", &c, err, sizeof err), 0);
	assert_int_equal(c.mode, PW_CAPMODE_PROFILER_API);
	assert_int_equal(pw_capture_parse_range("manual", &c, err, sizeof err), 0);
	assert_int_equal(c.mode, PW_CAPMODE_MANUAL);
	assert_int_equal(pw_capture_parse_range("none", &c, err, sizeof err), 0);
	assert_int_equal(c.mode, PW_CAPMODE_NONE);

	clear(&c);
	assert_int_equal(pw_capture_parse_range("nvtx:train step", &c, err, sizeof err), 0);
	assert_int_equal(c.mode, PW_CAPMODE_NVTX);
	assert_string_equal(c.range, "train step");
	assert_string_equal(c.domain, "");

	clear(&c);
	assert_int_equal(pw_capture_parse_range("nvtx:step@mydomain", &c, err, sizeof err), 0);
	assert_int_equal(c.mode, PW_CAPMODE_NVTX);
	assert_string_equal(c.range, "step");
	assert_string_equal(c.domain, "mydomain");

	/* the last '@' separates the domain: a name may hold one */
	clear(&c);
	assert_int_equal(pw_capture_parse_range("nvtx:user@host@dom", &c, err, sizeof err), 0);
	assert_string_equal(c.range, "user@host");
	assert_string_equal(c.domain, "dom");

	/* the longest name and domain that fit */
	char s[5 + PW_CAPTURE_NAME_MAX + 1 + PW_CAPTURE_NAME_MAX + 1];
	memcpy(s, "nvtx:", 5);
	memset(s + 5, 'n', PW_CAPTURE_NAME_MAX - 1);
	s[5 + PW_CAPTURE_NAME_MAX - 1] = '@';
	memset(s + 5 + PW_CAPTURE_NAME_MAX, 'd', PW_CAPTURE_NAME_MAX - 1);
	s[5 + PW_CAPTURE_NAME_MAX + PW_CAPTURE_NAME_MAX - 1] = 0;
	clear(&c);
	assert_int_equal(pw_capture_parse_range(s, &c, err, sizeof err), 0);
	assert_int_equal(strlen(c.range), PW_CAPTURE_NAME_MAX - 1);
	assert_int_equal(strlen(c.domain), PW_CAPTURE_NAME_MAX - 1);
}

static void test_parse_range_refused(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN];
	static const char *const bad[] = {"", "nvtx", "NVTX:step", "cudaprofilerapi", "Manual", "all", "none ",
					  "nvtx step"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		clear(&c);
		REFUSED(pw_capture_parse_range(bad[i], &c, err, sizeof err), err, "--capture-range");
		if (bad[i][0] && !strstr(err, bad[i]))
			fail_msg("the message \"%s\" does not quote '%s'", err, bad[i]);
		assert_true(is_zero(&c));
	}
	clear(&c);
	REFUSED(pw_capture_parse_range("nvtx:", &c, err, sizeof err), err, "no range name");
	REFUSED(pw_capture_parse_range("nvtx:@dom", &c, err, sizeof err), err, "no range name");
	assert_int_equal(c.mode, PW_CAPMODE_NONE);

	/* a name or a domain of PW_CAPTURE_NAME_MAX bytes does not fit */
	char s[5 + 2 * PW_CAPTURE_NAME_MAX + 8];
	memcpy(s, "nvtx:", 5);
	memset(s + 5, 'n', PW_CAPTURE_NAME_MAX);
	s[5 + PW_CAPTURE_NAME_MAX] = 0;
	REFUSED(pw_capture_parse_range(s, &c, err, sizeof err), err, "too long");
	memcpy(s + 5, "a@", 2);
	memset(s + 7, 'd', PW_CAPTURE_NAME_MAX);
	s[7 + PW_CAPTURE_NAME_MAX] = 0;
	REFUSED(pw_capture_parse_range(s, &c, err, sizeof err), err, "too long");
	assert_int_equal(c.mode, PW_CAPMODE_NONE);
}

/* ---- --capture-count ---- */

static void test_parse_count(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN];
	clear(&c);
	assert_int_equal(pw_capture_parse_count("3", &c, err, sizeof err), 0);
	assert_int_equal(c.count, 3);
	assert_int_equal(pw_capture_parse_count("0", &c, err, sizeof err), 0);
	assert_int_equal(c.count, 0);
	assert_int_equal(pw_capture_parse_count("4294967295", &c, err, sizeof err), 0);
	assert_int_equal(c.count, UINT32_MAX);

	static const char *const bad[] = {"-1", "+1", "", "abc", "3x", "3 ", "1.5", "0x10", "4294967296",
					  "18446744073709551615", "18446744073709551616",
					  "99999999999999999999999999"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		c.count = 7;
		REFUSED(pw_capture_parse_count(bad[i], &c, err, sizeof err), err, "--capture-count");
		assert_int_equal(c.count, 7); /* left as it was */
	}
}

/* ---- --delay, --duration ---- */

static void test_parse_seconds(void **state)
{
	(void)state;
	char err[ERRLEN];
	static const struct {
		const char *s;
		uint64_t ns;
	} good[] = {
		{"0.5", 500000000ull}, {"0", 0},		 {"2", 2000000000ull},	  {"1.25", 1250000000ull},
		{"0.1", 100000000ull}, {"1e-9", 1},		 {"0.000000001", 1},	  {"3600", 3600000000000ull},
		{"1e9", 1000000000000000000ull},
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		uint64_t ns = 12345;
		if (pw_capture_parse_seconds(good[i].s, &ns, "--delay", err, sizeof err) != 0)
			fail_msg("'%s' refused: %s", good[i].s, err);
		if (ns != good[i].ns)
			fail_msg("'%s' -> %llu ns, not %llu", good[i].s, (unsigned long long)ns,
				 (unsigned long long)good[i].ns);
	}
	static const char *const bad[] = {"-1", "-0.5", "", "abc", "1s", "1 ", "nan", "inf", "-inf", "1e10", "1e400"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t ns = 12345;
		REFUSED(pw_capture_parse_seconds(bad[i], &ns, "--duration", err, sizeof err), err, "--duration");
		assert_int_equal(ns, 12345);
	}
}

/* ---- --schedule ---- */

static void test_parse_schedule(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN];
	clear(&c);
	assert_int_equal(pw_capture_parse_schedule("wait=1,warmup=2,active=3,repeat=4", &c, err, sizeof err), 0);
	assert_int_equal(c.schedule, 1);
	assert_int_equal(c.wait, 1);
	assert_int_equal(c.warmup, 2);
	assert_int_equal(c.active, 3);
	assert_int_equal(c.repeat, 4);

	/* any order; what is not given is 0, whatever it was before */
	assert_int_equal(pw_capture_parse_schedule("active=5,wait=7", &c, err, sizeof err), 0);
	assert_int_equal(c.wait, 7);
	assert_int_equal(c.warmup, 0);
	assert_int_equal(c.active, 5);
	assert_int_equal(c.repeat, 0);
	assert_int_equal(pw_capture_parse_schedule("active=1", &c, err, sizeof err), 0);
	assert_int_equal(c.wait, 0);
	assert_int_equal(c.warmup, 0);
	assert_int_equal(c.active, 1);
	assert_int_equal(c.repeat, 0);
	assert_int_equal(c.schedule, 1);
	assert_int_equal(pw_capture_parse_schedule("active=4294967295,repeat=0", &c, err, sizeof err), 0);
	assert_int_equal(c.active, UINT32_MAX);

	static const struct {
		const char *s, *msg;
	} bad[] = {
		{"", "active=N"},
		{"wait=1,warmup=1", "active=N"},
		{"wait=1,warmup=1,repeat=2", "active=N"},
		{"active=0", "active=N"},
		{"wait=1,active=0,repeat=1", "active=N"},
		{"active=2,foo=1", "'foo=1'"},
		{"skip_first=1,active=2", "'skip_first=1'"},
		{"active", "'active'"},
		{"active=", "'active='"},
		{"=3", "'=3'"},
		{"Active=2", "'Active=2'"},
		{"wait=1;active=2", "is not a whole number"},
		{"active=2,,wait=1", "is not one of"},
		{",active=2", "is not one of"},
		{"active=x", "active=x is not a whole number"},
		{"active=-1", "active=-1 is not a whole number"},
		{"active=+1", "is not a whole number"},
		{"active=1.5", "is not a whole number"},
		{"active=4294967296", "is not a whole number"},
		{"active=2,wait=99999999999999999999", "is not a whole number"},
		{"active=2,wait=000000000000000000000000000000001", "is not one of"}, /* 33 digits */
		{"active = 2", "is not one of"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		clear(&c);
		err[0] = 0;
		if (pw_capture_parse_schedule(bad[i].s, &c, err, sizeof err) != -1)
			fail_msg("--schedule '%s' accepted", bad[i].s);
		if (!strstr(err, "--schedule") || !strstr(err, bad[i].msg))
			fail_msg("--schedule '%s': message \"%s\" lacks \"%s\"", bad[i].s, err, bad[i].msg);
		assert_int_equal(c.schedule, 0);
	}
}

/* ---- --step-range ---- */

static void test_parse_step(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN];
	clear(&c);
	assert_int_equal(pw_capture_parse_step("train_step", &c, err, sizeof err), 0);
	assert_string_equal(c.step, "train_step");
	assert_string_equal(c.step_domain, "");
	assert_int_equal(pw_capture_parse_step("ProfilerStep#@torch", &c, err, sizeof err), 0);
	assert_string_equal(c.step, "ProfilerStep#");
	assert_string_equal(c.step_domain, "torch");
	assert_int_equal(c.mode, PW_CAPMODE_NONE);
	assert_string_equal(c.range, "");

	clear(&c);
	REFUSED(pw_capture_parse_step("", &c, err, sizeof err), err, "--step-range");
	REFUSED(pw_capture_parse_step("@torch", &c, err, sizeof err), err, "no range name");
	char s[PW_CAPTURE_NAME_MAX + 2];
	memset(s, 's', PW_CAPTURE_NAME_MAX);
	s[PW_CAPTURE_NAME_MAX] = 0;
	REFUSED(pw_capture_parse_step(s, &c, err, sizeof err), err, "--step-range: name too long");
	assert_string_equal(c.step, "");
}

/* ---- combinations ---- */

static void test_check(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN];

	clear(&c);
	assert_int_equal(pw_capture_check(&c, err, sizeof err), 0);

	/* a schedule needs a step range */
	clear(&c);
	c.schedule = 1;
	c.active = 1;
	REFUSED(pw_capture_check(&c, err, sizeof err), err, "--step-range");
	strcpy(c.step, "step");
	assert_int_equal(pw_capture_check(&c, err, sizeof err), 0);
	c.delay_ns = 1000;
	c.duration_ns = 2000;
	assert_int_equal(pw_capture_check(&c, err, sizeof err), 0);

	/* and excludes --capture-range */
	static const enum pw_capture_mode modes[] = {PW_CAPMODE_PROFILER_API, PW_CAPMODE_NVTX, PW_CAPMODE_MANUAL};
	for (size_t i = 0; i < 3; i++) {
		c.mode = modes[i];
		REFUSED(pw_capture_check(&c, err, sizeof err), err, "cannot be combined");
	}

	/* a count needs nvtx:NAME or cudaProfilerApi */
	clear(&c);
	c.count = 3;
	REFUSED(pw_capture_check(&c, err, sizeof err), err, "--capture-count");
	c.mode = PW_CAPMODE_MANUAL;
	REFUSED(pw_capture_check(&c, err, sizeof err), err, "--capture-count");
	c.mode = PW_CAPMODE_NVTX;
	strcpy(c.range, "step");
	assert_int_equal(pw_capture_check(&c, err, sizeof err), 0);
	c.mode = PW_CAPMODE_PROFILER_API;
	assert_int_equal(pw_capture_check(&c, err, sizeof err), 0);

	/* a count with a schedule (hence no range) */
	clear(&c);
	c.schedule = 1;
	c.active = 2;
	strcpy(c.step, "step");
	c.count = 2;
	assert_int_equal(pw_capture_check(&c, err, sizeof err), -1);

	/* delay and duration alone, and with any range */
	clear(&c);
	c.delay_ns = 5;
	assert_int_equal(pw_capture_check(&c, err, sizeof err), 0);
	c.mode = PW_CAPMODE_MANUAL;
	c.duration_ns = 5;
	assert_int_equal(pw_capture_check(&c, err, sizeof err), 0);
}

static void test_configured(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	clear(&c);
	assert_false(pw_capture_configured(&c));
	c.count = 3; /* alone, it limits nothing */
	assert_false(pw_capture_configured(&c));
	clear(&c);
	c.mode = PW_CAPMODE_MANUAL;
	assert_true(pw_capture_configured(&c));
	clear(&c);
	c.schedule = 1;
	assert_true(pw_capture_configured(&c));
	clear(&c);
	c.delay_ns = 1;
	assert_true(pw_capture_configured(&c));
	clear(&c);
	c.duration_ns = 1;
	assert_true(pw_capture_configured(&c));
}

/* ---- the environment ---- */

static const char *const env_names[] = {PW_ENV_CAPTURE_RANGE, PW_ENV_CAPTURE_COUNT, PW_ENV_DELAY,
					PW_ENV_DURATION,      PW_ENV_SCHEDULE,	    PW_ENV_STEP_RANGE};

static int env_clean(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof env_names / sizeof env_names[0]; i++)
		unsetenv(env_names[i]);
	return 0;
}

static void junk(struct pw_capture_settings *c)
{
	memset(c, 0x5a, sizeof *c);
}

static void test_env_none(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN];
	junk(&c);
	assert_int_equal(pw_capture_from_env(&c, err, sizeof err), 0);
	assert_true(is_zero(&c));
	assert_false(pw_capture_configured(&c));
	/* empty values are not set */
	for (size_t i = 0; i < sizeof env_names / sizeof env_names[0]; i++)
		setenv(env_names[i], "", 1);
	junk(&c);
	assert_int_equal(pw_capture_from_env(&c, err, sizeof err), 0);
	assert_true(is_zero(&c));
}

static void test_env_range(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN] = "";
	setenv(PW_ENV_CAPTURE_RANGE, "nvtx:step@dom", 1);
	setenv(PW_ENV_CAPTURE_COUNT, "3", 1);
	setenv(PW_ENV_DELAY, "1.5", 1);
	setenv(PW_ENV_DURATION, "2", 1);
	junk(&c);
	if (pw_capture_from_env(&c, err, sizeof err) != 0)
		fail_msg("refused: %s", err);
	assert_int_equal(c.mode, PW_CAPMODE_NVTX);
	assert_string_equal(c.range, "step");
	assert_string_equal(c.domain, "dom");
	assert_int_equal(c.count, 3);
	assert_int_equal(c.delay_ns, 1500000000ull);
	assert_int_equal(c.duration_ns, 2000000000ull);
	assert_int_equal(c.schedule, 0);
	assert_int_equal(c.wait, 0);
	assert_int_equal(c.active, 0);
	assert_string_equal(c.step, "");
	assert_true(pw_capture_configured(&c));
}

static void test_env_schedule(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN] = "";
	setenv(PW_ENV_SCHEDULE, "wait=1,warmup=1,active=2,repeat=3", 1);
	setenv(PW_ENV_STEP_RANGE, "train_step@torch", 1);
	junk(&c);
	if (pw_capture_from_env(&c, err, sizeof err) != 0)
		fail_msg("refused: %s", err);
	assert_int_equal(c.mode, PW_CAPMODE_NONE);
	assert_int_equal(c.schedule, 1);
	assert_int_equal(c.wait, 1);
	assert_int_equal(c.warmup, 1);
	assert_int_equal(c.active, 2);
	assert_int_equal(c.repeat, 3);
	assert_string_equal(c.step, "train_step");
	assert_string_equal(c.step_domain, "torch");
	assert_int_equal(c.count, 0);
	assert_int_equal(c.delay_ns, 0);
}

/* A value that does not parse, or a combination that does not hold: -1, a message, and nothing set. */
static void test_env_bad(void **state)
{
	static const struct {
		const char *name, *value, *msg;
	} bad[] = {
		{PW_ENV_CAPTURE_RANGE, "bogus", "--capture-range"},
		{PW_ENV_CAPTURE_COUNT, "x", "--capture-count"},
		{PW_ENV_DELAY, "-1", "--delay"},
		{PW_ENV_DURATION, "soon", "--duration"},
		{PW_ENV_SCHEDULE, "active=0", "--schedule"},
		{PW_ENV_STEP_RANGE, "@dom", "--step-range"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		env_clean(state);
		/* everything else valid */
		setenv(PW_ENV_CAPTURE_RANGE, "nvtx:step", 1);
		setenv(PW_ENV_CAPTURE_COUNT, "2", 1);
		setenv(PW_ENV_DELAY, "1", 1);
		setenv(PW_ENV_DURATION, "1", 1);
		setenv(bad[i].name, bad[i].value, 1);
		struct pw_capture_settings c;
		char err[ERRLEN] = "";
		junk(&c);
		if (pw_capture_from_env(&c, err, sizeof err) != -1)
			fail_msg("%s=%s accepted", bad[i].name, bad[i].value);
		if (!strstr(err, bad[i].msg))
			fail_msg("%s=%s: message \"%s\" lacks \"%s\"", bad[i].name, bad[i].value, err, bad[i].msg);
		assert_true(is_zero(&c));
	}

	/* each value parses; the combination does not */
	struct pw_capture_settings c;
	char err[ERRLEN] = "";
	env_clean(state);
	setenv(PW_ENV_SCHEDULE, "active=2", 1);
	junk(&c);
	assert_int_equal(pw_capture_from_env(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "--step-range"));
	assert_true(is_zero(&c));

	env_clean(state);
	setenv(PW_ENV_SCHEDULE, "active=2", 1);
	setenv(PW_ENV_STEP_RANGE, "step", 1);
	setenv(PW_ENV_CAPTURE_RANGE, "cudaProfilerApi", 1);
	junk(&c);
	assert_int_equal(pw_capture_from_env(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "cannot be combined"));
	assert_true(is_zero(&c));

	env_clean(state);
	setenv(PW_ENV_CAPTURE_COUNT, "2", 1);
	junk(&c);
	assert_int_equal(pw_capture_from_env(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "--capture-count"));
	assert_true(is_zero(&c));
}

/* ---- in words ---- */

static void test_describe(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char buf[512];

	clear(&c);
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "");

	c.mode = PW_CAPMODE_NVTX;
	strcpy(c.range, "step");
	c.count = 3;
	c.delay_ns = 2000000000ull;
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "nvtx:step, first 3 occurrences; delay 2 s");

	clear(&c);
	c.mode = PW_CAPMODE_NVTX;
	strcpy(c.range, "step");
	strcpy(c.domain, "dom");
	c.count = 1;
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "nvtx:step@dom, first 1 occurrence");

	clear(&c);
	c.mode = PW_CAPMODE_PROFILER_API;
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "cudaProfilerApi");
	c.count = 2;
	c.delay_ns = 1000000000ull;
	c.duration_ns = 3000000000ull;
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "cudaProfilerApi, first 2 occurrences; delay 1 s; duration 3 s");

	clear(&c);
	c.mode = PW_CAPMODE_MANUAL;
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "manual (profwrap start|stop PID)");
	c.duration_ns = 500000000ull;
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "manual (profwrap start|stop PID); duration 0.5 s");

	clear(&c);
	c.schedule = 1;
	c.wait = 1;
	c.warmup = 2;
	c.active = 3;
	strcpy(c.step, "train");
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "schedule wait=1,warmup=2,active=3,repeat=0 over steps train");
	strcpy(c.step_domain, "torch");
	c.repeat = 4;
	c.delay_ns = 250000000ull;
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "schedule wait=1,warmup=2,active=3,repeat=4 over steps train@torch; delay 0.25 s");

	clear(&c);
	c.delay_ns = 500000000ull;
	c.duration_ns = 10000000000ull;
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "delay 0.5 s; duration 10 s");

	clear(&c);
	c.duration_ns = 1500000000ull;
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "duration 1.5 s");

	/* too long for the buffer: cut, ending in "..." */
	clear(&c);
	c.mode = PW_CAPMODE_MANUAL;
	char small[10];
	pw_capture_describe(&c, small, sizeof small);
	assert_string_equal(small, "manual...");
	c.mode = PW_CAPMODE_NVTX;
	memset(c.range, 'r', PW_CAPTURE_NAME_MAX - 1);
	memset(c.domain, 'd', PW_CAPTURE_NAME_MAX - 1);
	c.count = 5;
	c.delay_ns = 1;
	c.duration_ns = 1;
	char mid[64];
	pw_capture_describe(&c, mid, sizeof mid);
	assert_int_equal(strlen(mid), sizeof mid - 1);
	assert_string_equal(mid + sizeof mid - 4, "...");
	assert_int_equal(strncmp(mid, "nvtx:rrr", 8), 0);
}

/* The settings a parse gives, described, read back the same. */
static void test_describe_round_trip(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN], buf[512];
	clear(&c);
	assert_int_equal(pw_capture_parse_range("nvtx:fwd@model", &c, err, sizeof err), 0);
	assert_int_equal(pw_capture_parse_count("12", &c, err, sizeof err), 0);
	assert_int_equal(pw_capture_parse_seconds("0.75", &c.delay_ns, "--delay", err, sizeof err), 0);
	assert_int_equal(pw_capture_check(&c, err, sizeof err), 0);
	pw_capture_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "nvtx:fwd@model, first 12 occurrences; delay 0.75 s");
}

/* ---- the schedule ---- */

/* torch.profiler.schedule, step by step: cycles of `wait` idle steps, `warmup` warm-up steps and `active`
 * recorded steps, `repeat` cycles (0: forever), then nothing. Fills act[0..n) with 1 for the recorded steps. */
static void torch_schedule(uint32_t wait, uint32_t warmup, uint32_t active, uint32_t repeat, unsigned char *act,
			   size_t n)
{
	memset(act, 0, n);
	if (!wait && !warmup && !active)
		return;
	size_t k = 0;
	for (uint32_t cycle = 0; k < n && (!repeat || cycle < repeat); cycle++) {
		for (uint32_t i = 0; i < wait && k < n; i++)
			act[k++] = 0;
		for (uint32_t i = 0; i < warmup && k < n; i++)
			act[k++] = 0;
		for (uint32_t i = 0; i < active && k < n; i++)
			act[k++] = 1;
	}
}

static void test_schedule_brute_force(void **state)
{
	(void)state;
	enum { N = 400 };
	unsigned char act[N];
	size_t combos = 0;
	for (uint32_t w = 0; w <= 5; w++)
		for (uint32_t u = 0; u <= 4; u++)
			for (uint32_t a = 0; a <= 5; a++)
				for (uint32_t r = 0; r <= 4; r++) {
					struct pw_capture_settings c;
					clear(&c);
					c.schedule = 1;
					c.wait = w;
					c.warmup = u;
					c.active = a;
					c.repeat = r;
					torch_schedule(w, u, a, r, act, N);
					uint64_t cyc = (uint64_t)w + u + a;
					for (uint64_t k = 0; k < N; k++) {
						int got = pw_schedule_active(&c, k);
						/* the brief's closed form, as a second opinion */
						int formula = cyc && (r == 0 || k / cyc < r) && k % cyc >= (uint64_t)w + u;
						if (got != act[k] || got != formula)
							fail_msg("wait=%u warmup=%u active=%u repeat=%u step %llu: got %d, "
								 "torch %d, formula %d",
								 w, u, a, r, (unsigned long long)k, got, act[k], formula);
					}
					combos++;
				}
	assert_int_equal(combos, 6 * 5 * 6 * 5);
}

/* Steps and fields at the ends of their types. */
static void test_schedule_extremes(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	clear(&c);
	c.wait = UINT32_MAX;
	c.warmup = UINT32_MAX;
	c.active = UINT32_MAX;
	c.repeat = 2;
	uint64_t cyc = 3ull * UINT32_MAX, on = 2ull * UINT32_MAX;
	assert_false(pw_schedule_active(&c, 0));
	assert_false(pw_schedule_active(&c, on - 1));
	assert_true(pw_schedule_active(&c, on));
	assert_true(pw_schedule_active(&c, cyc - 1));
	assert_false(pw_schedule_active(&c, cyc));
	assert_true(pw_schedule_active(&c, cyc + on));
	assert_true(pw_schedule_active(&c, 2 * cyc - 1));
	assert_false(pw_schedule_active(&c, 2 * cyc));
	assert_false(pw_schedule_active(&c, UINT64_MAX));

	/* repeat 0: forever */
	clear(&c);
	c.active = 1;
	assert_true(pw_schedule_active(&c, UINT64_MAX));
	c.wait = 1; /* cycle 2: odd steps */
	assert_true(pw_schedule_active(&c, UINT64_MAX));
	assert_false(pw_schedule_active(&c, UINT64_MAX - 1));
	c.repeat = UINT32_MAX;
	assert_true(pw_schedule_active(&c, 2ull * UINT32_MAX - 1));
	assert_false(pw_schedule_active(&c, 2ull * UINT32_MAX + 1));

	/* no cycle at all */
	clear(&c);
	assert_false(pw_schedule_active(&c, 0));
	assert_false(pw_schedule_active(&c, 12345));
}

/* The schedule torch's documentation shows: wait=1, warmup=1, active=2, repeat=1 records steps 2 and 3. */
static void test_schedule_parsed(void **state)
{
	(void)state;
	struct pw_capture_settings c;
	char err[ERRLEN];
	clear(&c);
	assert_int_equal(pw_capture_parse_schedule("wait=1,warmup=1,active=2,repeat=1", &c, err, sizeof err), 0);
	static const int want[] = {0, 0, 1, 1, 0, 0, 0, 0, 0, 0};
	for (uint64_t k = 0; k < 10; k++)
		assert_int_equal(pw_schedule_active(&c, k), want[k]);
	assert_int_equal(pw_capture_parse_schedule("wait=2,active=1", &c, err, sizeof err), 0);
	for (uint64_t k = 0; k < 30; k++)
		assert_int_equal(pw_schedule_active(&c, k), k % 3 == 2);
}


/* The stack settings: --stacks, --stack-threshold (a bare number is microseconds), --sample. */
static void test_stack_settings(void **state)
{
	(void)state;
	char err[300];
	int mode = -1;
	assert_int_equal(pw_stacks_parse_mode("on", &mode, err, sizeof err), 0);
	assert_int_equal(mode, 2);
	assert_int_equal(pw_stacks_parse_mode("native", &mode, err, sizeof err), 0);
	assert_int_equal(mode, 1);
	assert_int_equal(pw_stacks_parse_mode("off", &mode, err, sizeof err), 0);
	assert_int_equal(mode, 0);
	assert_int_equal(pw_stacks_parse_mode("maybe", &mode, err, sizeof err), -1);
	assert_non_null(strstr(err, "--stacks"));
	uint64_t ns = 1;
	static const struct {
		const char *s;
		uint64_t ns;
	} ok[] = {{"0", 0}, {"100", 100000}, {"100us", 100000}, {"2ms", 2000000}, {"1.5s", 1500000000},
		  {"250ns", 250}, {"0.5ms", 500000}};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		assert_int_equal(pw_stacks_parse_threshold(ok[i].s, &ns, err, sizeof err), 0);
		assert_int_equal(ns, ok[i].ns);
	}
	static const char *const bad[] = {"", "abc", "-1", "10 ms", "5m", "1e20s", "us"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(pw_stacks_parse_threshold(bad[i], &ns, err, sizeof err), -1);
	uint32_t hz = 7;
	assert_int_equal(pw_stacks_parse_sample("99", &hz, err, sizeof err), 0);
	assert_int_equal(hz, 99);
	assert_int_equal(pw_stacks_parse_sample("0", &hz, err, sizeof err), 0);
	assert_int_equal(hz, 0);
	assert_int_equal(pw_stacks_parse_sample("-5", &hz, err, sizeof err), -1);
	assert_int_equal(pw_stacks_parse_sample("10001", &hz, err, sizeof err), -1);
	assert_int_equal(pw_stacks_parse_sample("1k", &hz, err, sizeof err), -1);
}

/* From the environment, with the defaults when unset or wrong. */
static void test_stack_settings_from_env(void **state)
{
	(void)state;
	char err[300];
	struct pw_stack_settings c;
	unsetenv(PW_ENV_STACKS);
	unsetenv(PW_ENV_STACK_THRESHOLD);
	unsetenv(PW_ENV_SAMPLE);
	assert_int_equal(pw_stacks_from_env(&c, err, sizeof err), 0);
	assert_int_equal(c.mode, 2);
	assert_int_equal(c.threshold_ns, 100000);
	assert_int_equal(c.sample_hz, 0);
	setenv(PW_ENV_STACKS, "native", 1);
	setenv(PW_ENV_STACK_THRESHOLD, "1ms", 1);
	setenv(PW_ENV_SAMPLE, "50", 1);
	assert_int_equal(pw_stacks_from_env(&c, err, sizeof err), 0);
	assert_int_equal(c.mode, 1);
	assert_int_equal(c.threshold_ns, 1000000);
	assert_int_equal(c.sample_hz, 50);
	setenv(PW_ENV_STACK_THRESHOLD, "soon", 1);
	assert_int_equal(pw_stacks_from_env(&c, err, sizeof err), -1);
	assert_int_equal(c.mode, 2);
	assert_int_equal(c.threshold_ns, 100000);
	assert_int_equal(c.sample_hz, 0);
	unsetenv(PW_ENV_STACKS);
	unsetenv(PW_ENV_STACK_THRESHOLD);
	unsetenv(PW_ENV_SAMPLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_range_modes),
		cmocka_unit_test(test_stack_settings),
		cmocka_unit_test(test_stack_settings_from_env),
		cmocka_unit_test(test_parse_range_refused),
		cmocka_unit_test(test_parse_count),
		cmocka_unit_test(test_parse_seconds),
		cmocka_unit_test(test_parse_schedule),
		cmocka_unit_test(test_parse_step),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_configured),
		cmocka_unit_test_setup_teardown(test_env_none, env_clean, env_clean),
		cmocka_unit_test_setup_teardown(test_env_range, env_clean, env_clean),
		cmocka_unit_test_setup_teardown(test_env_schedule, env_clean, env_clean),
		cmocka_unit_test_setup_teardown(test_env_bad, env_clean, env_clean),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_describe_round_trip),
		cmocka_unit_test(test_schedule_brute_force),
		cmocka_unit_test(test_schedule_extremes),
		cmocka_unit_test(test_schedule_parsed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
