/* Record format: the one header both the preload (writer) and the collector (reader) use.
 *
 * A record is a multiple of 8 bytes and starts with struct pw_rec_hdr. Its size is in the header, so a
 * reader can step over types it does not know. Event ids, their domain, name and kind come from one
 * X-macro table (PW_EVENT_LIST) so writer and reader can never disagree. Bump PW_FORMAT_VERSION on any
 * change that an older reader would misread.
 */
#ifndef PW_RECORD_H
#define PW_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define PW_FORMAT_VERSION 1u

/* Domains: the unit of --trace=LIST selection and the "domain" column of the report. */
#define PW_DOMAIN_LIST(X) \
	X(IO, "io")           \
	X(STDIO, "stdio")     \
	X(PROCESS, "process") \
	X(DL, "dl")           \
	X(WAIT, "wait")

enum pw_domain {
#define PW_X(id, str) PW_DOM_##id,
	PW_DOMAIN_LIST(PW_X)
#undef PW_X
	PW_DOM_COUNT
};

/* What the analysis does with an event: which figures its fields feed. For every file event arg0 is the
 * file descriptor (stdio wrappers record fileno() of the stream), so one fd -> path map serves both. */
enum pw_event_kind {
	PW_K_PLAIN,  /* counted and timed only */
	PW_K_OPEN,   /* arg0 = new fd (-1 on failure), arg1 = path string ref */
	PW_K_FDINFO, /* not a call: arg0 = fd inherited at start, arg1 = what it refers to */
	PW_K_CLOSE,  /* arg0 = fd */
	PW_K_READ,   /* arg0 = fd, arg1 = bytes moved (from the return value, not the request) */
	PW_K_WRITE,  /* arg0 = fd, arg1 = bytes moved */
	PW_K_MMAP,   /* arg0 = fd, arg1 = length mapped */
	PW_K_FORK,   /* arg0 = child pid */
	PW_K_WAIT,   /* arg0 = pid reaped (0 or -1: none), arg1 = wait status in waitpid() form */
	PW_K_EXIT,   /* arg0 = exit status */
	PW_K_DLOPEN, /* arg1 = path string ref; the duration is the load time */
	PW_K_SLEEP,  /* the thread waits: on time, I/O readiness or another thread */
	PW_K_EXEC,   /* an exec that failed: arg1 = path string ref (one that succeeds ends the segment) */
	PW_K_DUP,    /* arg0 = new fd (-1 on failure), arg1 = the fd it duplicates */
};

/* X(ID, domain, "name", kind). Append only: ids are stored in raw traces. */
#define PW_EVENT_LIST(X)                                  \
	X(PAD, IO, "pad", PW_K_PLAIN)                     \
	X(OPEN, IO, "open", PW_K_OPEN)                    \
	X(OPENAT, IO, "openat", PW_K_OPEN)                \
	X(CREAT, IO, "creat", PW_K_OPEN)                  \
	X(CLOSE, IO, "close", PW_K_CLOSE)                 \
	X(READ, IO, "read", PW_K_READ)                    \
	X(PREAD, IO, "pread", PW_K_READ)                  \
	X(READV, IO, "readv", PW_K_READ)                  \
	X(PREADV, IO, "preadv", PW_K_READ)                \
	X(WRITE, IO, "write", PW_K_WRITE)                 \
	X(PWRITE, IO, "pwrite", PW_K_WRITE)               \
	X(WRITEV, IO, "writev", PW_K_WRITE)               \
	X(PWRITEV, IO, "pwritev", PW_K_WRITE)             \
	X(LSEEK, IO, "lseek", PW_K_PLAIN)                 \
	X(FSYNC, IO, "fsync", PW_K_PLAIN)                 \
	X(FDATASYNC, IO, "fdatasync", PW_K_PLAIN)         \
	X(MMAP, IO, "mmap", PW_K_MMAP)                    \
	X(MUNMAP, IO, "munmap", PW_K_PLAIN)               \
	X(FOPEN, STDIO, "fopen", PW_K_OPEN)               \
	X(FDOPEN, STDIO, "fdopen", PW_K_PLAIN)           \
	X(FCLOSE, STDIO, "fclose", PW_K_CLOSE)            \
	X(FREAD, STDIO, "fread", PW_K_READ)               \
	X(FWRITE, STDIO, "fwrite", PW_K_WRITE)            \
	X(FGETS, STDIO, "fgets", PW_K_READ)               \
	X(FPUTS, STDIO, "fputs", PW_K_WRITE)              \
	X(FPRINTF, STDIO, "fprintf", PW_K_WRITE)          \
	X(VFPRINTF, STDIO, "vfprintf", PW_K_WRITE)        \
	X(GETDELIM, STDIO, "getdelim", PW_K_READ)         \
	X(FFLUSH, STDIO, "fflush", PW_K_PLAIN)            \
	X(FORK, PROCESS, "fork", PW_K_FORK)               \
	X(VFORK, PROCESS, "vfork", PW_K_FORK)             \
	X(POSIX_SPAWN, PROCESS, "posix_spawn", PW_K_FORK) \
	X(EXECVE, PROCESS, "execve", PW_K_EXEC)           \
	X(EXIT, PROCESS, "exit", PW_K_EXIT)               \
	X(EXIT_NOW, PROCESS, "_exit", PW_K_EXIT)          \
	X(WAIT, PROCESS, "wait", PW_K_WAIT)               \
	X(WAITPID, PROCESS, "waitpid", PW_K_WAIT)         \
	X(WAITID, PROCESS, "waitid", PW_K_WAIT)           \
	X(DLOPEN, DL, "dlopen", PW_K_DLOPEN)              \
	X(DLCLOSE, DL, "dlclose", PW_K_PLAIN)             \
	X(NANOSLEEP, WAIT, "nanosleep", PW_K_SLEEP)       \
	X(CLOCK_NANOSLEEP, WAIT, "clock_nanosleep", PW_K_SLEEP) \
	X(USLEEP, WAIT, "usleep", PW_K_SLEEP)             \
	X(SLEEP, WAIT, "sleep", PW_K_SLEEP)               \
	X(POLL, WAIT, "poll", PW_K_SLEEP)                 \
	X(SELECT, WAIT, "select", PW_K_SLEEP)             \
	X(EPOLL_WAIT, WAIT, "epoll_wait", PW_K_SLEEP)     \
	X(COND_WAIT, WAIT, "pthread_cond_wait", PW_K_SLEEP) \
	X(COND_TIMEDWAIT, WAIT, "pthread_cond_timedwait", PW_K_SLEEP) \
	X(PTHREAD_JOIN, WAIT, "pthread_join", PW_K_SLEEP) \
	X(SEM_WAIT, WAIT, "sem_wait", PW_K_SLEEP)         \
	X(PUTS, STDIO, "puts", PW_K_WRITE)                \
	X(PRINTF, STDIO, "printf", PW_K_WRITE)            \
	X(WAIT3, PROCESS, "wait3", PW_K_WAIT)             \
	X(WAIT4, PROCESS, "wait4", PW_K_WAIT)             \
	X(POSIX_SPAWNP, PROCESS, "posix_spawnp", PW_K_FORK) \
	X(SEM_TIMEDWAIT, WAIT, "sem_timedwait", PW_K_SLEEP) \
	X(FD_INFO, IO, "fd-info", PW_K_FDINFO)            \
	X(DUP, IO, "dup", PW_K_DUP)                       \
	X(DUP2, IO, "dup2", PW_K_DUP)                     \
	X(DUP3, IO, "dup3", PW_K_DUP)                     \
	X(FCNTL_DUPFD, IO, "fcntl(F_DUPFD)", PW_K_DUP)

enum pw_event {
#define PW_X(id, dom, name, kind) PW_EV_##id,
	PW_EVENT_LIST(PW_X)
#undef PW_X
	PW_EV_COUNT
};

/* Every record starts with this. size is in 8-byte units; err is the errno of a failed call (0 if none,
 * errno values on Linux fit in a byte; PW_ERR_NO_ERRNO for a call that failed without setting errno, such as
 * dlopen); tid is the kernel thread id of the writer. */
#define PW_ERR_NO_ERRNO 255
struct pw_rec_hdr {
	uint16_t type;
	uint8_t size8;
	uint8_t err;
	uint32_t tid;
};

/* A timed call. Times are in the clock units of the writing process (see pw_clock.h); ret is the call's
 * return value as a signed 64-bit integer (pointers as their address); arg0/arg1 per the event's kind. */
struct pw_rec_call {
	struct pw_rec_hdr h;
	uint64_t t0;
	uint64_t t1;
	int64_t ret;
	uint64_t arg0;
	uint64_t arg1;
};

/* A string reference: an offset into the process's string arena (pw_ring.h), 0 meaning "none". */
typedef uint64_t pw_strref;

struct pw_event_info {
	const char *name;
	enum pw_domain domain;
	enum pw_event_kind kind;
};

extern const struct pw_event_info pw_events[PW_EV_COUNT];
extern const char *const pw_domain_names[PW_DOM_COUNT];

/* Returns the domain whose name is name, or -1. */
int pw_domain_from_name(const char *name, size_t len);

#endif
