/* Figures with their units, as every report shows them (units.h). */
#include "units.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* v in [0, 999.5) with 3 significant figures, then the unit. */
static void format_3_figures(char *buf, size_t len, double v, const char *unit)
{
	int decimals = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
	snprintf(buf, len, "%.*f %s", decimals, v, unit);
}

void pw_format_duration(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000) {
		snprintf(buf, len, "%" PRIu64 " ns", ns);
		return;
	}
	static const struct {
		double scale;
		const char *unit;
	} units[] = {{1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
	size_t u = 0;
	while (u + 1 < sizeof units / sizeof units[0] && (double)ns / units[u].scale >= 999.5)
		u++;
	double v = (double)ns / units[u].scale;
	if (v >= 999.5)
		snprintf(buf, len, "%.0f %s", v, units[u].unit); /* past 1000 s: more figures, same unit */
	else
		format_3_figures(buf, len, v, units[u].unit);
}

void pw_format_bytes(char *buf, size_t len, uint64_t bytes)
{
	if (bytes < 1000) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return;
	}
	static const char *const units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
	double scale = 1e3;
	size_t u = 0;
	while (u + 1 < sizeof units / sizeof units[0] && (double)bytes / scale >= 999.5) {
		scale *= 1e3;
		u++;
	}
	/* UINT64_MAX is 18.4 EB, so the last unit always fits in 3 figures. */
	format_3_figures(buf, len, (double)bytes / scale, units[u]);
}

void pw_format_flops(char *buf, size_t len, uint64_t flops)
{
	if (flops < 1000) {
		snprintf(buf, len, "%" PRIu64 " FLOP", flops);
		return;
	}
	static const char *const units[] = {"kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"};
	double scale = 1e3;
	size_t u = 0;
	while (u + 1 < sizeof units / sizeof units[0] && (double)flops / scale >= 999.5) {
		scale *= 1e3;
		u++;
	}
	format_3_figures(buf, len, (double)flops / scale, units[u]);
}

void pw_format_3sig(char *buf, size_t len, double v, int max_decimals)
{
	int decimals = 0;
	if (v > 0 && v < 99.95) {
		/* as many decimals as 3 significant figures need: 1.23, 0.0123 */
		decimals = 2 - (int)floor(log10(v));
		if (decimals > 0 && round(v * pow(10, decimals)) >= 1000) /* 9.996 is 10.0, 0.09996 is 0.100 */
			decimals--;
		if (decimals > max_decimals)
			decimals = max_decimals;
	}
	if (decimals < 0)
		decimals = 0;
	snprintf(buf, len, "%.*f", decimals, v);
}

void pw_format_gbps(char *buf, size_t len, double bytes, uint64_t ns)
{
	if (!ns) {
		snprintf(buf, len, "-");
		return;
	}
	pw_format_3sig(buf, len, bytes / (double)ns, 6);
}

void pw_format_mean(char *buf, size_t len, uint64_t total_ns, uint64_t count)
{
	if (count)
		pw_format_duration(buf, len, total_ns / count);
	else
		snprintf(buf, len, "-");
}

