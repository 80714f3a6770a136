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
	char *capture_env[8]; /* "PROFWRAP_CAPTURE_RANGE=..." etc., checked; NULL-terminated */
	char *stack_env[3];   /* PROFWRAP_STACKS, _STACK_THRESHOLD, _SAMPLE settings, checked; NULL when not given */
	char *python_functions_env; /* PROFWRAP_PYTHON_FUNCTIONS=..., checked; NULL when not given */
	char *pytorch_env;          /* PROFWRAP_PYTORCH=..., checked; NULL when not given */
	char **command;       /* NULL-terminated */
};

/* Runs opts->command under the profiler and writes the reports. Returns profwrap's exit status: the target's
 * exit code, 128+signal when a signal ended it, 2 (with a one-line message) when the output directory is
 * refused (as main refuses a bad option value), or 1 (with a one-line message) when profiling could not
 * start; in both cases the target was not run. */
int pw_cli_run(const struct pw_cli_opts *opts, const char *self_dir);

/* profwrap start|stop PID: opens or closes the capture window of a running profiled process. Returns 0, or 1
 * after a one-line message (PID is not a profiled process). */
int pw_cli_capture_signal(const char *pid, int start);

/* Whether LD_PRELOAD can apply to the program that running `file` as execvp() does would start (through "#!"
 * interpreters): 1 when it cannot (statically linked; run by the loader in secure mode: set-user-ID or
 * set-group-ID to another id, file capabilities), with why set to one line that names the file and the
 * reason; 0 when it can, or when the file cannot be found or read (the exec then says why). cli/target.c. */
int pw_target_check(const char *file, char *why, size_t size);

/* Re-renders the reports of an output directory from its raw traces. Returns 0, or 1 after a message. */
int pw_cli_report(const char *dir);
/* profwrap export sqlite DIR: DIR/rank<R>.sqlite from DIR/raw. Returns the exit status. */
int pw_cli_export_sqlite(const char *dir);

/* profwrap salvage DIR: recovers what a dead collector left in shared memory for DIR, then renders DIR's
 * reports. Returns 0, or 1 after a message. */
int pw_cli_salvage(const char *dir);

/* profwrap dump [options] DIR|FILE...: prints raw traces as JSON lines (argv[0] is "dump"). Returns 0; 1 after
 * a line for each file that is damaged (dumped up to there) or cannot be read; 2 after a usage message.
 * cli/dump.c. */
int pw_cli_dump(int argc, char **argv);

/* profwrap clean: removes this user's stale shared memory and session directories. Returns 0, or 1. */
int pw_cli_clean(void);

#endif
