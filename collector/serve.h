/* The collector's serving loop: accepts producers on the session socket, drains their lanes into raw
 * trace files, notices each process's end, and when the session is over writes the reports. */
#ifndef PW_SERVE_H
#define PW_SERVE_H

#include <stdint.h>

struct pw_serve_opts {
	const char *session_dir;
	const char *output;
	int detached;     /* preload-only mode: end once the last producer has been gone for linger_ms */
	int control_fd;   /* CLI mode: end of file here means the target has ended; -1 in detached mode */
	int ready_fd;     /* written to and closed once the socket listens; -1 for none */
	uint32_t linger_ms;
	uint32_t grace_ms; /* after the target ended, how long producers still connected get to finish */
	int quiet;
};

/* Live figures for the CLI's status line: <session_dir>/status, a small shared file the collector updates
 * and the CLI maps read-only. */
struct pw_live_status {
	uint64_t magic;
	uint64_t events;
	uint64_t dropped;
	uint64_t producers;
	uint64_t processes;
};
#define PW_LIVE_MAGIC 0x5355544154535750ull

#define PW_SERVE_NOTHING_RECORDED 3

/* Runs the session. Returns the collector's exit code: 0; PW_SERVE_NOTHING_RECORDED when no process
 * connected; or 1 after a one-line message on stderr. */
int pw_serve(const struct pw_serve_opts *o);

#endif
