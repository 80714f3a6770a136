/* stdioloop [CALL [N [RUNS]]]: times N stdio calls of one kind, RUNS times (default 10,000,000 and 5), and
 * prints the best run as nanoseconds per call:
 *
 *   stdioloop call=putc calls=10000000 runs=5 ns_per_call=... cpu_ns_per_call=...
 *
 * CALL is putc, fputc, putc_unlocked (inline: only its buffer flushes call libc), fwrite (1 byte) or fputs
 * (a 1-byte string), to /dev/null through a 4 KiB buffer, or getc, fgetc, getc_unlocked (1 byte) from
 * /dev/zero. Run plainly it is libc's own cost; under profwrap the difference is what the wrapper and the
 * stream's accounting add: per character call (most find room in the buffer) and per flush or refill. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loop_util.h"

/* N calls of the kind on f, the loop written out for each so that nothing but the call is timed. Returns 0
 * when one failed. */
#define LOOP(expr)                                     \
	do {                                           \
		for (unsigned long long i = 0; i < n; i++) \
			if (!(expr))                   \
				return 0;              \
		return 1;                              \
	} while (0)

static int calls(const char *call, FILE *f, unsigned long long n)
{
	if (!strcmp(call, "putc"))
		LOOP(putc('x', f) != EOF);
	if (!strcmp(call, "fputc"))
		LOOP(fputc('x', f) != EOF);
	if (!strcmp(call, "putc_unlocked"))
		LOOP(putc_unlocked('x', f) != EOF);
	if (!strcmp(call, "fwrite"))
		LOOP(fwrite("x", 1, 1, f) == 1);
	if (!strcmp(call, "fputs"))
		LOOP(fputs("x", f) != EOF);
	if (!strcmp(call, "getc"))
		LOOP(getc(f) != EOF);
	if (!strcmp(call, "fgetc"))
		LOOP(fgetc(f) != EOF);
	LOOP(getc_unlocked(f) != EOF);
}

static int known(const char *call)
{
	static const char *const names[] = {"putc", "fputc", "putc_unlocked", "fwrite", "fputs",
					    "getc", "fgetc", "getc_unlocked"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(call, names[i]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *call = argc > 1 ? argv[1] : "putc";
	unsigned long long n = argc > 2 ? parse_count("stdioloop", argv[2], "N") : 10000000;
	unsigned long long runs = argc > 3 ? parse_count("stdioloop", argv[3], "RUNS") : 5;
	if (!known(call)) {
		fprintf(stderr, "stdioloop: unknown call '%s'\n", call);
		return 2;
	}
	int input = strstr(call, "get") != NULL;
	FILE *f = fopen(input ? "/dev/zero" : "/dev/null", input ? "r" : "w");
	if (!f || setvbuf(f, NULL, _IOFBF, 4096)) {
		fprintf(stderr, "stdioloop: %s: %s\n", input ? "/dev/zero" : "/dev/null", strerror(errno));
		return 1;
	}
	unsigned long long best = ~0ull, best_cpu = ~0ull;
	for (unsigned long long r = 0; r < runs; r++) {
		unsigned long long c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = clock_ns(CLOCK_MONOTONIC);
		if (!calls(call, f, n)) {
			fprintf(stderr, "stdioloop: %s failed: %s\n", call, strerror(errno));
			return 1;
		}
		unsigned long long dt = clock_ns(CLOCK_MONOTONIC) - t0, dc = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		best = dt < best ? dt : best;
		best_cpu = dc < best_cpu ? dc : best_cpu;
	}
	fclose(f);
	printf("stdioloop call=%s calls=%llu runs=%llu ns_per_call=%.2f cpu_ns_per_call=%.2f\n", call, n, runs,
	       (double)best / (double)n, (double)best_cpu / (double)n);
	return 0;
}
