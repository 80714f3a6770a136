#define _GNU_SOURCE
#include "pw_clock.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int pw_clock_use_tsc;

/* The kernel marks the TSC unusable (and picks another clocksource) when it is not invariant or not
 * synchronised across CPUs; following its choice avoids re-doing those checks here. */
static int kernel_trusts_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	char buf[32];
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == 0);
#else
	return 0;
#endif
}

enum pw_clock_kind pw_clock_init(const char *override)
{
	if (override && strcmp(override, "monotonic") == 0)
		pw_clock_use_tsc = 0;
	else if (override && strcmp(override, "tsc") == 0)
#if defined(__x86_64__) || defined(__i386__)
		pw_clock_use_tsc = 1;
#else
		pw_clock_use_tsc = 0;
#endif
	else
		pw_clock_use_tsc = kernel_trusts_tsc();
	return pw_clock_use_tsc ? PW_CLOCK_TSC : PW_CLOCK_MONOTONIC;
}

struct pw_clock_pair pw_clock_pair_now(void)
{
	struct pw_clock_pair best = {0, 0};
	uint64_t best_span = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		uint64_t a = pw_clock_ticks();
		uint64_t ns = pw_clock_mono_ns();
		uint64_t b = pw_clock_ticks();
		if (b - a < best_span) {
			best_span = b - a;
			best.ticks = a + (b - a) / 2;
			best.ns = ns;
		}
	}
	return best;
}

struct pw_clock_line pw_clock_line_fit(enum pw_clock_kind kind, struct pw_clock_pair a, struct pw_clock_pair b)
{
	struct pw_clock_line l = {a.ticks, a.ns, 1.0};
	if (kind == PW_CLOCK_TSC && b.ticks > a.ticks && b.ns > a.ns)
		l.ns_per_tick = (double)(b.ns - a.ns) / (double)(b.ticks - a.ticks);
	return l;
}
