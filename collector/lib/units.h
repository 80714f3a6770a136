/* Figures with their units, as every report and finding shows them: durations, bytes, FLOPs, rates. */
#ifndef PW_UNITS_H
#define PW_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* ns with a unit (ns, us, ms, s) and 3 significant figures: "812 ns", "1.23 ms", "45.6 s". */
void pw_format_duration(char *buf, size_t len, uint64_t ns);
/* bytes with a decimal unit (B, kB, MB, GB, TB, PB, EB) and 3 significant figures: "512 B", "1.23 MB". */
void pw_format_bytes(char *buf, size_t len, uint64_t bytes);

/* FLOPs with a decimal unit and 3 significant figures: "512 FLOP", "1.23 GFLOP", "45.6 TFLOP". */
void pw_format_flops(char *buf, size_t len, uint64_t flops);
/* v >= 0 with 3 significant figures in fixed notation ("123", "12.3", "0.00123"), at most max_decimals
 * decimals (smaller values round to 0). */
void pw_format_3sig(char *buf, size_t len, double v, int max_decimals);
/* bytes per ns (= GB/s) with 3 significant figures ("12.3", "0.456"), "-" when ns is 0. */
void pw_format_gbps(char *buf, size_t len, double bytes, uint64_t ns);

/* The mean duration total_ns / count as pw_format_duration does it, "-" when count is 0. */
void pw_format_mean(char *buf, size_t len, uint64_t total_ns, uint64_t count);

#endif
