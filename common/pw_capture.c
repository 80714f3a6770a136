/* Capture settings: parsing, checking and describing (pw_capture.h). */
#include "pw_capture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -1)

/* NAME[@DOMAIN] into name and domain. */
static int split_name(const char *s, char *name, char *domain, const char *what, char *err, size_t errlen)
{
	const char *at = strrchr(s, '@');
	size_t len = at ? (size_t)(at - s) : strlen(s);
	if (!len)
		return ERR("%s: no range name in '%s'", what, s);
	if (len >= PW_CAPTURE_NAME_MAX || (at && strlen(at + 1) >= PW_CAPTURE_NAME_MAX))
		return ERR("%s: name too long", what);
	memcpy(name, s, len);
	name[len] = 0;
	snprintf(domain, PW_CAPTURE_NAME_MAX, "%s", at ? at + 1 : "");
	return 0;
}

int pw_capture_parse_range(const char *s, struct pw_capture_settings *c, char *err, size_t errlen)
{
	if (strcmp(s, "none") == 0) {
		c->mode = PW_CAPMODE_NONE;
		return 0;
	}
	if (strcmp(s, "cudaProfilerApi") == 0) {
		c->mode = PW_CAPMODE_PROFILER_API;
		return 0;
	}
	if (strcmp(s, "manual") == 0) {
		c->mode = PW_CAPMODE_MANUAL;
		return 0;
	}
	if (strncmp(s, "nvtx:", 5) == 0) {
		if (split_name(s + 5, c->range, c->domain, "--capture-range", err, errlen))
			return -1;
		c->mode = PW_CAPMODE_NVTX;
		return 0;
	}
	return ERR("--capture-range: '%s' is none of cudaProfilerApi, nvtx:NAME[@DOMAIN], manual, none", s);
}

static int parse_u32(const char *s, uint32_t *v)
{
	if (!*s || *s == '-' || *s == '+')
		return -1;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (*end || errno || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int pw_capture_parse_count(const char *s, struct pw_capture_settings *c, char *err, size_t errlen)
{
	if (parse_u32(s, &c->count))
		return ERR("--capture-count: '%s' is not a whole number", s);
	return 0;
}

int pw_capture_parse_seconds(const char *s, uint64_t *ns, const char *what, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !(v >= 0 && v <= 1e9))
		return ERR("%s: '%s' is not a number of seconds", what, s);
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

int pw_capture_parse_schedule(const char *s, struct pw_capture_settings *c, char *err, size_t errlen)
{
	uint32_t *fields[] = {&c->wait, &c->warmup, &c->active, &c->repeat};
	static const char *const names[] = {"wait", "warmup", "active", "repeat"};
	unsigned seen = 0;
	c->wait = c->warmup = c->repeat = 0;
	c->active = 0;
	const char *p = s;
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		int which = -1;
		for (int i = 0; eq && i < 4; i++)
			if ((size_t)(eq - p) == strlen(names[i]) && strncmp(p, names[i], (size_t)(eq - p)) == 0)
				which = i;
		char num[32];
		size_t nlen = eq ? len - (size_t)(eq - p) - 1 : 0;
		if (which < 0 || nlen == 0 || nlen >= sizeof num)
			return ERR("--schedule: '%.*s' is not one of wait=N, warmup=N, active=N, repeat=N", (int)len, p);
		memcpy(num, eq + 1, nlen);
		num[nlen] = 0;
		if (parse_u32(num, fields[which]))
			return ERR("--schedule: %s=%s is not a whole number", names[which], num);
		seen |= 1u << which;
		p += len + (p[len] == ',');
	}
	if (!(seen & 4) || c->active == 0)
		return ERR("--schedule: '%s' lacks active=N (N > 0), which is required", s);
	c->schedule = 1;
	return 0;
}

int pw_capture_parse_step(const char *s, struct pw_capture_settings *c, char *err, size_t errlen)
{
	return split_name(s, c->step, c->step_domain, "--step-range", err, errlen);
}

int pw_capture_check(const struct pw_capture_settings *c, char *err, size_t errlen)
{
	if (c->schedule && !c->step[0])
		return ERR("--schedule needs --step-range=NAME: the NVTX range that marks one step");
	if (c->schedule && c->mode != PW_CAPMODE_NONE)
		return ERR("--schedule and --capture-range cannot be combined: the schedule decides the windows");
	if (c->count && c->mode != PW_CAPMODE_NVTX && c->mode != PW_CAPMODE_PROFILER_API)
		return ERR("--capture-count needs --capture-range=nvtx:NAME or cudaProfilerApi");
	return 0;
}

int pw_capture_from_env(struct pw_capture_settings *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	const char *v;
	int rc = 0;
	if (!rc && (v = getenv(PW_ENV_CAPTURE_RANGE)) && *v)
		rc = pw_capture_parse_range(v, c, err, errlen);
	if (!rc && (v = getenv(PW_ENV_CAPTURE_COUNT)) && *v)
		rc = pw_capture_parse_count(v, c, err, errlen);
	if (!rc && (v = getenv(PW_ENV_DELAY)) && *v)
		rc = pw_capture_parse_seconds(v, &c->delay_ns, "--delay", err, errlen);
	if (!rc && (v = getenv(PW_ENV_DURATION)) && *v)
		rc = pw_capture_parse_seconds(v, &c->duration_ns, "--duration", err, errlen);
	if (!rc && (v = getenv(PW_ENV_SCHEDULE)) && *v)
		rc = pw_capture_parse_schedule(v, c, err, errlen);
	if (!rc && (v = getenv(PW_ENV_STEP_RANGE)) && *v)
		rc = pw_capture_parse_step(v, c, err, errlen);
	if (!rc)
		rc = pw_capture_check(c, err, errlen);
	if (rc)
		memset(c, 0, sizeof *c);
	return rc;
}

int pw_capture_configured(const struct pw_capture_settings *c)
{
	return c->mode != PW_CAPMODE_NONE || c->schedule || c->delay_ns || c->duration_ns;
}

void pw_capture_describe(const struct pw_capture_settings *c, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = 0;
#define ADD(...)                                                                     \
	do {                                                                         \
		int w_ = snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__);    \
		n += w_ > 0 ? (size_t)w_ : 0;                                        \
	} while (0)
	const char *sep = "";
	switch (c->mode) {
	case PW_CAPMODE_PROFILER_API:
		ADD("cudaProfilerApi");
		sep = "; ";
		break;
	case PW_CAPMODE_NVTX:
		ADD("nvtx:%s%s%s", c->range, c->domain[0] ? "@" : "", c->domain);
		sep = "; ";
		break;
	case PW_CAPMODE_MANUAL:
		ADD("manual (profwrap start|stop PID)");
		sep = "; ";
		break;
	case PW_CAPMODE_NONE:
		break;
	}
	if (c->count)
		ADD(", first %u occurrence%s", c->count, c->count == 1 ? "" : "s");
	if (c->schedule) {
		ADD("%sschedule wait=%u,warmup=%u,active=%u,repeat=%u over steps %s%s%s", sep, c->wait, c->warmup,
		    c->active, c->repeat, c->step, c->step_domain[0] ? "@" : "", c->step_domain);
		sep = "; ";
	}
	if (c->delay_ns) {
		ADD("%sdelay %.3g s", sep, (double)c->delay_ns / 1e9);
		sep = "; ";
	}
	if (c->duration_ns)
		ADD("%sduration %.3g s", sep, (double)c->duration_ns / 1e9);
#undef ADD
	if (n >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

int pw_stacks_parse_mode(const char *s, int *mode, char *err, size_t errlen)
{
	if (strcmp(s, "on") == 0)
		*mode = 2;
	else if (strcmp(s, "native") == 0)
		*mode = 1;
	else if (strcmp(s, "off") == 0)
		*mode = 0;
	else
		return ERR("--stacks: '%s' is not one of on, native, off", s);
	return 0;
}

int pw_stacks_parse_threshold(const char *s, uint64_t *ns, char *err, size_t errlen)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"", 1e3}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	for (size_t i = 0; *s && end != s && !errno && v >= 0 && i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(end, units[i].unit) == 0 && v * units[i].ns <= 1e15) {
			*ns = (uint64_t)(v * units[i].ns + 0.5);
			return 0;
		}
	}
	return ERR("--stack-threshold: '%s' is not a duration (such as 100us, 2ms, 0)", s);
}

int pw_stacks_parse_sample(const char *s, uint32_t *hz, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v > PW_SAMPLE_HZ_MAX)
		return ERR("--sample: '%s' is not a rate from 0 to %u samples per second", s, PW_SAMPLE_HZ_MAX);
	*hz = (uint32_t)v;
	return 0;
}

int pw_stacks_from_env(struct pw_stack_settings *c, char *err, size_t errlen)
{
	const char *v;
	int rc = 0;
	c->mode = 2;
	c->threshold_ns = PW_STACK_THRESHOLD_DEFAULT_NS;
	c->sample_hz = 0;
	if (!rc && (v = getenv(PW_ENV_STACKS)) && *v)
		rc = pw_stacks_parse_mode(v, &c->mode, err, errlen);
	if (!rc && (v = getenv(PW_ENV_STACK_THRESHOLD)) && *v)
		rc = pw_stacks_parse_threshold(v, &c->threshold_ns, err, errlen);
	if (!rc && (v = getenv(PW_ENV_SAMPLE)) && *v)
		rc = pw_stacks_parse_sample(v, &c->sample_hz, err, errlen);
	if (rc) {
		c->mode = 2;
		c->threshold_ns = PW_STACK_THRESHOLD_DEFAULT_NS;
		c->sample_hz = 0;
	}
	return rc;
}
