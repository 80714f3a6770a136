/* Session naming: the environment variables that carry a session to every process of a job, the session
 * directory (socket, lock, live status), shared-memory segment names, and the hello a producer sends. */
#ifndef PW_SESSION_H
#define PW_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "pw_rank.h"

/* Environment: set by the CLI (or by hand for PROFWRAP_OUTPUT), inherited by every descendant. */
#define PW_ENV_OUTPUT "PROFWRAP_OUTPUT"           /* output directory; alone, it enables preload-only mode */
#define PW_ENV_SESSION_DIR "PROFWRAP_SESSION_DIR" /* set by the CLI: the session's private directory */
#define PW_ENV_RING_SIZE "PROFWRAP_RING_SIZE"     /* bytes per thread lane, a power of two */
#define PW_ENV_LANES "PROFWRAP_LANES"             /* thread lanes per process */
#define PW_ENV_ARENA_SIZE "PROFWRAP_ARENA_SIZE"   /* string arena bytes per process */
#define PW_ENV_TRACE "PROFWRAP_TRACE"             /* comma-separated domains, default all */
#define PW_ENV_FOLLOW_FORK "PROFWRAP_FOLLOW_FORK" /* 0: forked children are not recorded */
#define PW_ENV_CLOCK "PROFWRAP_CLOCK"             /* tsc | monotonic */
#define PW_ENV_COLLECTOR "PROFWRAP_COLLECTOR"     /* collector binary for preload-only mode */
#define PW_ENV_QUIET "PROFWRAP_QUIET"             /* 1: no notices on stderr */
#define PW_ENV_CUPTI "PROFWRAP_CUPTI"             /* path of the libcupti to load */
#define PW_ENV_CUPTI_BUFFER_SIZE "PROFWRAP_CUPTI_BUFFER_SIZE" /* bytes per CUPTI activity buffer */
#define PW_ENV_CUPTI_BUFFERS "PROFWRAP_CUPTI_BUFFERS"         /* buffers in the pool */
#define PW_ENV_CUPTI_FLUSH_MS "PROFWRAP_CUPTI_FLUSH_MS"       /* flush period of activity buffers */

#define PW_HELLO_MAGIC 0x4f4c4548u /* "HELO" */
#define PW_SHM_NAME_MAX 96

/* First and only message a producer sends on its connection; end of file on the connection afterwards
 * means the process is gone (the descriptor is close-on-exec, so an exec ends it too). */
struct pw_hello {
	uint32_t magic;
	uint32_t version; /* PW_FORMAT_VERSION */
	int32_t pid;
	uint32_t reserved;
	char shm_name[PW_SHM_NAME_MAX];
};

/* A process that could not hand its segment to the collector (its backlog stayed full, the hello failed)
 * appends one of these to <session>/PW_SESSION_UNRECORDED with a single write (O_APPEND), so the report names
 * it instead of losing it without a word. */
#define PW_SESSION_UNRECORDED "unrecorded"
#define PW_UNRECORDED_MAGIC 0x43524e55u /* "UNRC" */
#define PW_UNRECORDED_ARGV_MAX 472
enum pw_unrecorded_why {
	PW_UNRECORDED_BUSY = 1,	  /* the collector's backlog stayed full, or it did not take the hello */
	PW_UNRECORDED_NO_SHM = 2, /* /dev/shm had no room for the segment beside what is left to the program */
};
struct pw_unrecorded {
	uint32_t magic;
	int32_t pid;
	int32_t ppid;
	int32_t rank;
	int32_t world_size;
	uint32_t argv_len; /* bytes of argv used: '\0'-separated, cut at PW_UNRECORDED_ARGV_MAX */
	uint64_t start_realtime_ns;
	uint32_t why; /* enum pw_unrecorded_why */
	uint32_t reserved;
	char argv[PW_UNRECORDED_ARGV_MAX];
};

/* Base of session directories: $XDG_RUNTIME_DIR/profwrap when that is set, else /tmp/profwrap-<uid>, unless
 * that exists and is not this user's private directory (another user took the name first): then
 * $HOME/.profwrap. Returns 0, or -ENAMETOOLONG. */
int pw_session_base(char *buf, size_t size);

/* Session directory of the preload-only mode, one per output directory and host: <base>/o-<hash>, hash of
 * the absolute output path and the host name (nodes that share /tmp, or a test's simulated nodes, still get
 * one collector each). Every process of a node computes the same name with no coordination. */
int pw_session_dir_for_output(const char *output, char *buf, size_t size);

/* Expands an output directory pattern as nsys does: %h the host name, %p the pid, %r the rank from the
 * launcher's environment (0 when none), %q{NAME} the environment variable NAME (empty when unset), %% a '%'.
 * Returns 0, or -1 with a one-line reason in why (an unknown %-sequence, an unclosed %q{, a result too
 * long). */
int pw_expand_output(const char *pattern, char *buf, size_t size, char *why, size_t whylen);

/* Session directory for a CLI run: <base>/s-<pid>-<nonce>, the nonce in 16 hex digits. */
int pw_session_dir_for_cli(int pid, uint64_t nonce, char *buf, size_t size);

/* Creates path as a directory only this user can enter (0700), or checks that an existing one is that: ours,
 * a directory and not a link, no access for others. Returns 0, or -1 with errno set (EPERM for a directory
 * that is not private). */
int pw_private_dir(const char *path);

/* The file a collector holds locked (flock) while it runs, in its session directory: salvage leaves the
 * segments of a session whose collector lives to that collector. */
#define PW_SESSION_ALIVE "alive"

/* <dir>/<leaf> into buf. Returns 0 or -ENAMETOOLONG. */
int pw_session_path(const char *dir, const char *leaf, char *buf, size_t size);

/* Segment name "/profwrap.<uid>.<pid>.<nonce>", the nonce in 16 hex digits. Returns 0 or -ENAMETOOLONG. */
int pw_shm_name(int uid, int pid, uint64_t nonce, char *buf, size_t size);

/* Whether name is a segment name of process pid of user uid, as pw_shm_name makes them: the collector
 * removes only such a name, so a producer cannot make it remove another process's. */
int pw_shm_name_is_of(const char *name, int uid, int pid);

/* 64 unpredictable bits for the nonces of session and segment names (names in /dev/shm are listed to every
 * user): getrandom(), else /dev/urandom, else a mix of clocks, ids and addresses that ASLR randomises. */
uint64_t pw_random_u64(void);

/* Creates path as a new file, 0600, open for writing (close-on-exec): whatever had that name (a file of an
 * earlier run, or a symbolic link someone planted to make the write land elsewhere) is removed first, never
 * followed. Returns the descriptor, or -1 with errno set. */
int pw_create_file(const char *path);

/* The output directory out and out/raw: each created 0700 when missing (a directory that exists keeps its
 * mode). out may be a symbolic link to a directory (the user's choice); out/raw, where the collector writes
 * the traces, must be a directory itself. Returns 0, or -1 with a one-line reason in why. */
int pw_output_dirs(const char *out, char *why, size_t whylen);

/* The settings a profiled process reads from its environment (PROFWRAP_<NAME>). The CLI checks those it
 * passes on before it starts anything; a process refuses a bad value and uses the default instead. */
enum pw_setting {
	PW_SET_RING_SIZE,	 /* bytes per thread lane: a power of two from 4K to 1G (K, M, G suffixes) */
	PW_SET_LANES,		 /* thread lanes per process, 1 to 1023 */
	PW_SET_ARENA_SIZE,	 /* string arena bytes per process, 4K to 4G */
	PW_SET_CUPTI_BUFFER_SIZE, /* bytes per CUPTI activity buffer, 4K to 1G */
	PW_SET_CUPTI_BUFFERS,	 /* buffers in the pool, 1 to 4096 */
	PW_SET_CUPTI_FLUSH_MS,	 /* flush period of activity buffers, 1 ms to 1 hour */
	PW_SET_TRACE,		 /* comma-separated domains or "all" */
	PW_SET_FOLLOW_FORK,	 /* 0 or 1 */
	PW_SET_QUIET,		 /* 0 or 1 */
	PW_SET_CLOCK,		 /* tsc or monotonic */
	PW_SET_RANK,		 /* PROFWRAP_RANK, a whole number */
	PW_SET_WORLD_SIZE,	 /* PROFWRAP_WORLD_SIZE, a whole number from 1 */
	PW_SET_COUNT
};

/* PW_SET_CLOCK's value: */
#define PW_CLOCK_SETTING_AUTO 0 /* the kernel's choice */
#define PW_CLOCK_SETTING_TSC 1
#define PW_CLOCK_SETTING_MONOTONIC 2

/* Settings by enum pw_setting. PW_SET_RANK and PW_SET_WORLD_SIZE are only checked (pw_rank.h reads them with
 * the launchers' variables); their value is the number, or 0 when unset. */
struct pw_settings {
	uint64_t value[PW_SET_COUNT];
};

/* Environment variable of a setting ("PROFWRAP_LANES"). */
const char *pw_setting_env(enum pw_setting s);

/* Parses value (not NULL, not empty) as setting s. Returns 0 with the value in *out (a domain mask for
 * PW_SET_TRACE), or -1 with "'VALUE' is not ..." in why. */
int pw_setting_parse(enum pw_setting s, const char *value, uint64_t *out, char *why, size_t whylen);

/* Reads every setting from env (getenv, or a fake in tests); one that is unset or empty, or whose bit is in
 * skip (1 << setting: those the caller sets itself), has its default. A refused value has its default too.
 * Returns how many values were refused; the first is described in why ("PROFWRAP_LANES='-1' is not a whole
 * number from 1 to 1023"). */
int pw_settings_from_env(struct pw_settings *s, pw_env_fn env, unsigned skip, char *why, size_t whylen);

/* 64-bit FNV-1a, for names derived from paths. */
uint64_t pw_hash64(const void *data, size_t len);

#endif
