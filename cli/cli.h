/* The profwrap command: options, and the run of one profiled command. */
#ifndef PW_CLI_H
#define PW_CLI_H

#include <stdint.h>

struct pw_cli_opts {
	const char *output;
	int force;
	const char *trace; /* validated comma-separated domain list, NULL for all */
	int follow_fork;
	int quiet;
	uint64_t ring_size;
	char **command; /* NULL-terminated */
};

/* Runs opts->command under the profiler and writes the reports. Returns profwrap's exit status: the target's
 * exit code, 128+signal when a signal ended it, or 1 (with a one-line message) when profiling could not
 * start, in which case the target was not run. */
int pw_cli_run(const struct pw_cli_opts *opts, const char *self_dir);

/* Re-renders the reports of an output directory from its raw traces. Returns 0, or 1 after a message. */
int pw_cli_report(const char *dir);

#endif
