/* Session naming: the environment variables that carry a session to every process of a job, the session
 * directory (socket, lock, live status), shared-memory segment names, and the hello a producer sends. */
#ifndef PW_SESSION_H
#define PW_SESSION_H

#include <stddef.h>
#include <stdint.h>

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

/* Base of session directories: $XDG_RUNTIME_DIR/profwrap when that is set, else /tmp/profwrap-<uid>.
 * Returns 0, or -ENAMETOOLONG. */
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

/* Session directory for a CLI run: <base>/s-<pid>-<nonce>. */
int pw_session_dir_for_cli(int pid, uint64_t nonce, char *buf, size_t size);

/* Creates path as a directory only this user can enter (0700), or checks that an existing one is that: ours,
 * a directory and not a link, no access for others. Returns 0, or -1 with errno set (EPERM for a directory
 * that is not private). */
int pw_private_dir(const char *path);

/* <dir>/<leaf> into buf. Returns 0 or -ENAMETOOLONG. */
int pw_session_path(const char *dir, const char *leaf, char *buf, size_t size);

/* Segment name "/profwrap.<uid>.<pid>.<nonce>". Returns 0 or -ENAMETOOLONG. */
int pw_shm_name(int uid, int pid, uint64_t nonce, char *buf, size_t size);

/* 64-bit FNV-1a, for names derived from paths. */
uint64_t pw_hash64(const void *data, size_t len);

#endif
