/* The model: what the analysis (analysis.h) makes of an output directory's raw traces, one rank report per
 * rank, which the writers render. Everything here is derived from OUT/raw only, so any run can be
 * re-rendered. The model's parts (GPU figures, activity, ranges, stacks, timeline, findings) have headers of
 * their own. */
#ifndef PW_MODEL_H
#define PW_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/pw_record.h"
#include "../lib/rawfile.h"

/* Call durations in power-of-two buckets: bucket 0 holds 0 ns, bucket b in 1..64 holds [2^(b-1), 2^b). */
#define PW_DURATION_BUCKETS 65
static inline unsigned pw_duration_bucket(uint64_t ns)
{
	return ns ? 64u - (unsigned)__builtin_clzll(ns) : 0u;
}

struct pw_call_stat {
	uint64_t count;
	uint64_t total_ns;
	uint64_t min_ns;
	uint64_t max_ns;
	uint64_t bytes;  /* bytes moved (read/write kinds), from return values */
	uint64_t errors; /* calls that failed */
	uint64_t median_ns; /* GPU domains only (0 for the others): approximate, within ~4 % (gpu_analysis.h) */
};

struct pw_file_stat {
	char *path;
	uint64_t opens;
	uint64_t reads;
	uint64_t writes;
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t time_ns; /* time in calls on this file (open, read, write, close, sync, mmap, metadata...) */
	uint64_t stats;     /* stat-family and access calls that succeeded on it */
	uint64_t dir_reads; /* readdir and getdents64 calls on it (a directory) */
	uint64_t meta_ns;   /* of time_ns, the meta domain's calls (stats, directory opens, reads and closes) */
	uint64_t saves;     /* the opens (each with its dups) in which it was written: a checkpoint's saves */
	uint64_t save_max_ns; /* the longest save: the calls on it but reads (open, writes, syncs, close) */
	uint64_t save_min_bytes, save_max_bytes; /* written in the smallest save and in the largest */
	int stream;         /* a pipe or a socket (pipe:[ino], socket:[ino]), not a file */
};

struct pw_lib_stat {
	char *path;
	uint64_t loads;
	uint64_t load_ns; /* total time in dlopen for this path */
	uint64_t failures;
};

struct pw_thread_drop {
	uint32_t tid;
	uint64_t dropped;
};

/* One process image (a pid that exec'd has one per image: struct pw_process joins them). */
struct pw_proc {
	int pid;
	int ppid;
	int rank;
	uint32_t image;
	char *argv; /* arguments joined by spaces */
	char *exe;
	char *raw_path;
	uint32_t timeline_image; /* its image in the rank's timeline (timeline.h), PW_TL_NONE when none */
	uint64_t start_ns;
	uint64_t end_ns; /* exit/exec time, else the last record's end */
	int how;         /* enum pw_end_how, 0 when the file has no END (collector killed) */
	int unrecorded_why; /* how == PW_END_UNRECORDED: enum pw_unrecorded_why */
	int exit_code;   /* -1 when unknown */
	int signal;      /* terminating signal from a parent's wait, 0 if none */
	char *exec_path; /* for PW_END_EXECED */
	uint64_t events;
	uint64_t dropped;
	uint64_t skipped; /* records refused by the reader */
	uint64_t threads;
	uint64_t io_rchar; /* kernel's count at exit or exec (io_valid) */
	uint64_t io_wchar;
	int io_valid;
	uint64_t io_start;    /* rchar+wchar once its set-up was done (io_start_valid): the exec's and the loader's
			       * reads before are not the program's */
	int io_start_valid;
	uint64_t io_left_out; /* within the window: what profwrap itself and the loader (dlopen) moved */
	uint64_t io_unflushed; /* in stdio's buffers at exit: libc wrote them after the counters were read */
	uint64_t io_unread;    /* read ahead by stdio, never taken by the program */
	uint64_t io_children; /* of io_rchar+io_wchar, what reaped children did (the kernel adds it in) */
	int io_uncertain;     /* a child ended whose share of io_rchar/io_wchar is unknown */
	uint32_t io_uring_rings; /* io_uring instances it set up: their I/O is measured by no one */
	uint64_t seen_read_bytes; /* what the wrappers accounted for */
	uint64_t seen_write_bytes;
	/* time its main thread (tid = pid) spent blocked, each moment counted once (a poll inside MPI_Allreduce
	 * is MPI's): in waits (sleeps, polls, condition waits, joins, GPU synchronisation), in waits for its
	 * children, in MPI calls, in calls on pipes and sockets (another process's pace: a worker's queue, a
	 * shell reading `$(cmd)`). The rank's busy time is the rest of its main process's life. */
	uint64_t main_wait_ns, main_child_wait_ns, main_mpi_ns, main_stream_ns;
	uint64_t first_read_ns;  /* the start of its first read of a file (not a pipe or socket), 0: none */
	/* Its collector died: `profwrap salvage` wrote the records after salvaged_at (CLOCK_REALTIME ns). */
	uint64_t salvaged_at;
	uint64_t salvaged_events;
	struct pw_thread_drop *thread_drops; /* threads that dropped records, by tid, most first */
	size_t nthread_drops;
	/* what profwrap cost it: records written (every one its raw trace holds), the cost of one as measured at
	 * its start (PW_K_COST; record_measured 0 when its trace has none), the stacks it took and their time */
	uint64_t records;
	double record_ns;
	int record_measured;
	uint64_t stacks;
	uint64_t stacks_ns;
	/* its exec chain in the rank (finish_rank): the index in the rank's procs of the image that replaced it,
	 * PW_PROC_NONE when none, and whether it replaced one (it is not its process's first image) */
	size_t next_image;
	int replaced_one;
};
#define PW_PROC_NONE SIZE_MAX

/* What profwrap itself cost a rank's processes, in their own time: the records written times the cost of one
 * measured in each process, the stacks taken (timed as they were taken), and CUPTI's own overhead records.
 * total_ns is the sum of the three parts; the text and JSON show each. */
struct pw_own_cost {
	uint64_t records;
	uint64_t records_measured; /* of them, those of processes whose record cost was measured */
	uint64_t records_ns;
	uint64_t stacks;
	uint64_t stacks_ns;
	uint64_t cupti_ns;
	uint64_t total_ns;
	double wall_share; /* total_ns / the rank's wall time (0 without one): the threads' costs add up, so a
			    * busy multi-threaded rank can pass 1 */
	uint64_t shm_peak; /* the most of /dev/shm one process's segment held, and that process */
	int shm_peak_pid;
};

/* Entry times (CLOCK_MONOTONIC ns) of a rank's collectives over the whole world communicator, in entry order
 * once the rank is finished: the collective skew across ranks compares the k-th of each rank. */
enum pw_coll_family { PW_COLL_MPI, PW_COLL_NCCL, PW_COLL_FAMILIES };
#define PW_COLL_ENTRIES_MAX 100000
struct pw_coll_entries {
	uint64_t *ns;
	size_t n, cap;
	int truncated; /* more than PW_COLL_ENTRIES_MAX: the first ones recorded are kept */
};

struct pw_gpu_report; /* gpu_analysis.h */
struct pw_act_report; /* gpu_activity.h */
struct pw_finding;    /* findings.h */
struct pw_range_report; /* ranges.h */
struct pw_stack_report; /* call_stacks.h */
struct pw_timeline;     /* timeline.h */

/* The rank of the processes that no launcher gave a rank, shown apart per host (launcher-<host>.*) when
 * other processes have ranks; they are rank 0 when none has. */
#define PW_RANK_LAUNCHER (-1)

#define PW_STARTUP_MAX (1u << 20)
enum pw_startup_kind { PW_STARTUP_LOAD, PW_STARTUP_OPEN, PW_STARTUP_STAT };
struct pw_startup_call {
	uint64_t t0_ns, dur_ns;
	uint8_t kind; /* enum pw_startup_kind */
};

struct pw_rank_report {
	int rank; /* PW_RANK_LAUNCHER: the launcher processes of host */
	int world_size;
	char *host;
	char *command; /* argv of the rank's first process */
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t wall_ns;
	uint64_t start_realtime_ns;
	struct pw_proc *procs;
	size_t nprocs;
	struct pw_call_stat calls[PW_EV_COUNT];
	/* GPU library calls made inside another on the same thread (cuDNN calling cublasLtMatmul): their time is
	 * the outer call's, so they are counted here and in no other figure */
	struct pw_call_stat nested[PW_EV_COUNT];
	struct pw_file_stat *files;
	size_t nfiles;
	struct pw_lib_stat *libs;
	size_t nlibs;
	uint64_t events;
	uint64_t dropped;
	uint64_t skipped;
	uint64_t strings_dropped;
	uint64_t shm_refused; /* of the dropped events, those /dev/shm had no room for */
	/* processes whose raw trace stops before their end (no END chunk): the collector could not write the rest
	 * (disk full, killed) or still writes it; the rest may wait in shared memory for salvage */
	size_t unfinished;
	int unfinished_pid; /* the first of them */
	struct pw_own_cost own_cost;
	uint64_t stream_ns;   /* time in io, stdio and meta calls on pipes and sockets (not file I/O) */
	/* coverage self-check: bytes the kernel counted (rchar+wchar) for processes that reported them, and the
	 * share of those that the wrappers accounted for */
	uint64_t kernel_bytes;
	uint64_t seen_bytes;
	double coverage; /* seen/kernel, 1.0 when the kernel counted nothing */
	uint64_t io_left_out;   /* left out of kernel_bytes: what the exec, the loader and profwrap moved */
	uint32_t io_checked;    /* processes whose bytes were checked */
	uint32_t io_unchecked;  /* processes whose bytes could not be checked (their counters, or a child's, unread) */
	int io_unchecked_pid;   /* the first of them */
	uint32_t io_uring_procs; /* processes that set up io_uring */
	int io_uring_pid;        /* the first of them */
	struct pw_gpu_report *gpu; /* GPU library calls: NULL when the rank made none */
	/* What the GPU did (CUPTI activity records; never counted as calls), and the GPU call figures the
	 * findings need: NULL when the rank has neither activity records nor GPU calls */
	struct pw_act_report *act;
	struct pw_range_report *ranges; /* NVTX ranges and capture windows (ranges.h): NULL when neither */
	struct pw_stack_report *stacks; /* call stacks and CPU samples (call_stacks.h): NULL when none */
	struct pw_timeline *timeline;   /* what the trace shows (timeline.h): NULL when no raw file was read */
	/* For startup_bound (findings.h), whose first step is known only once the rank is read: the library loads,
	 * opens and stats of its processes (at most PW_STARTUP_MAX), and the first GPU library call's start (0:
	 * none) */
	struct pw_startup_call *startup;
	size_t nstartup, startup_cap;
	uint64_t first_gpu_call_ns;
	struct pw_finding *findings; /* "What to fix first", largest share first (findings.h) */
	size_t nfindings;
	struct pw_coll_entries coll[PW_COLL_FAMILIES];
};

/* A process across its exec chain: an exec keeps the pid, and the main thread is the one whose tid is the pid
 * in every image, so a process's figures are those of all its images in the rank (a wrapper's life until its
 * exec, `#!/bin/sh` + `exec python3 train.py`, is part of the program's process). */
struct pw_process {
	const struct pw_proc *first, *last; /* its first and last images */
	int pid;
	uint64_t start_ns, end_ns; /* the first image's start, the last one's end */
	/* its main thread's blocked time and time on pipes and sockets, every image's (struct pw_proc) */
	uint64_t main_wait_ns, main_child_wait_ns, main_mpi_ns, main_stream_ns;
	uint64_t seen_read_bytes;
	uint64_t first_read_ns; /* its first read of a file in any image, 0: none */
};

/* The image that replaced p (its exec), NULL when none. */
static inline const struct pw_proc *pw_next_image(const struct pw_rank_report *r, const struct pw_proc *p)
{
	return p->next_image != PW_PROC_NONE ? &r->procs[p->next_image] : NULL;
}

/* The process whose first image is first (one with replaced_one 0). */
void pw_process_of(const struct pw_rank_report *r, const struct pw_proc *first, struct pw_process *p);

/* The rank's main process: the first to start (procs are sorted by start) that is not a parent waiting most of
 * its life for children (`bash run.sh`, torchrun-like wrappers), else the first. Returns 0, or -1 when the rank
 * has no process. */
int pw_rank_main_process(const struct pw_rank_report *r, struct pw_process *p);

struct pw_analysis {
	char *out_dir;
	struct pw_rank_report *ranks; /* sorted by rank */
	size_t nranks;
	/* from OUT/raw/session.txt when the CLI ran the job */
	char *command;
	int target_pid;
	int target_status; /* waitpid() form, -1 if unknown */
	int cli_pid;       /* the target's parent */
	char *cli_host;
};

#endif
