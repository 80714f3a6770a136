/* One profiled run: output directory, session directory, collector, target, exit status. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../collector/lib/session_files.h"
#include "../collector/render.h"
#include "../collector/salvage.h"
#include "../collector/serve.h"
#include "../common/pw_capture.h"
#include "../common/pw_clock.h"
#include "../common/pw_rank.h"
#include "../common/pw_record.h"
#include "../common/pw_ring.h"
#include "../common/pw_session.h"
#include "cli.h"
#include "session_file.h"

/* Less free space than this in OUT and the command is not run (check_room). */
#define PW_MIN_FREE_BYTES (1u << 20)

#define STATUS_EVERY_MS 500

extern char **environ;

static int say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("profwrap: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 1;
}

static int exists_exec(const char *path)
{
	return access(path, X_OK) == 0;
}

/* The preload and collector beside the binary (build tree) or in ../lib and the same bin/ (installed). */
static int find_parts(const char *dir, char *lib, size_t lsize, char *collector, size_t csize)
{
	snprintf(collector, csize, "%s/profwrap-collector", dir);
	if (!exists_exec(collector))
		return say("cannot find profwrap-collector beside %s/profwrap", dir);
	snprintf(lib, lsize, "%s/libprofwrap.so", dir);
	if (access(lib, R_OK) == 0)
		return 0;
	snprintf(lib, lsize, "%s/../lib/libprofwrap.so", dir);
	if (access(lib, R_OK) == 0)
		return 0;
	return say("cannot find libprofwrap.so in %s or %s/../lib", dir, dir);
}

static int ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), e = strlen(end);
	return n > e && strcmp(s + n - e, end) == 0;
}

/* rank<R>.* (prefix "rank<R>.") or launcher-<host>.*, the summary. rank < 0: every rank. */
static int is_report_output(const char *name, int rank)
{
	int ext = ends_with(name, ".json") || ends_with(name, ".txt") || ends_with(name, ".folded");
	if (!ext)
		return 0;
	if (strcmp(name, "summary.txt") == 0 || strcmp(name, "summary.json") == 0)
		return 1;
	if (rank >= 0) {
		char prefix[32];
		snprintf(prefix, sizeof prefix, "rank%d.", rank);
		return strncmp(name, prefix, strlen(prefix)) == 0;
	}
	return strncmp(name, "rank", 4) == 0 || strncmp(name, "launcher-", 9) == 0;
}

/* A raw trace or session file of an earlier run ("<rank>-<host>-<pid>.pwt"); rank < 0: of every rank. */
static int is_raw_output(const char *name, int rank)
{
	char prefix[32];
	if (!ends_with(name, ".pwt")) {
		if (!pw_is_session_file(name))
			return 0;
		if (rank < 0 || strcmp(name, "session.txt") == 0)
			return 1;
		snprintf(prefix, sizeof prefix, "session-%d-", rank);
		return strncmp(name, prefix, strlen(prefix)) == 0;
	}
	if (rank < 0)
		return 1;
	snprintf(prefix, sizeof prefix, "%d-", rank);
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

/* Removes what an earlier run wrote: reports and raw traces (of one rank when rank >= 0: the other ranks of
 * a job write into the same directory). Other files are the user's and stay. */
static int clear_previous(const char *out, int rank)
{
	char path[4352];
	const char *dirs[2] = {out, NULL};
	snprintf(path, sizeof path, "%s/raw", out);
	dirs[1] = path;
	for (int i = 0; i < 2; i++) {
		/* O_NOFOLLOW: a link named raw must not make -f remove files wherever it points */
		int fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d = fd < 0 ? NULL : fdopendir(fd);
		if (!d) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		struct dirent *de;
		while ((de = readdir(d))) {
			int ours = i == 0 ? is_report_output(de->d_name, rank) : is_raw_output(de->d_name, rank);
			/* ENOENT: another rank's profwrap removed it first (summary.txt) */
			if (ours && unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT) {
				int err = errno;
				say("cannot remove %s/%s: %s", dirs[i], de->d_name, strerror(err));
				closedir(d);
				return 1;
			}
		}
		closedir(d);
	}
	return 0;
}

/* Whether the directory raw in dirfd is empty (and a directory, not a link). */
static int raw_is_empty(int dirfd)
{
	int fd = openat(dirfd, "raw", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	struct dirent *de;
	int empty = 1;
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	return empty;
}

/* Whether path holds nothing, or nothing but an empty raw/ (a run that recorded nothing left it). */
static int dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return 1;
	struct dirent *de;
	int empty = 1;
	while (empty && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    (strcmp(de->d_name, "raw") || !raw_is_empty(dirfd(d))))
			empty = 0;
	closedir(d);
	return empty;
}

/* A run that still writes into out: a session file that -f would remove (of rank when rank >= 0) is held.
 * Returns 0, or 1 after a one-line message. */
static int refuse_live_run(const char *out, const char *output, int rank)
{
	char raw[PATH_MAX + 8];
	snprintf(raw, sizeof raw, "%s/raw", out);
	int fd = open(raw, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	int live = 0;
	struct dirent *de;
	while (!live && (de = readdir(d)))
		if (pw_is_session_file(de->d_name) && is_raw_output(de->d_name, rank) &&
		    pw_session_file_held(dirfd(d), de->d_name)) {
			live = 1;
			say("output directory %s is in use by a run still going (its raw/%s is held): -f would destroy its "
			    "raw traces; wait for it to end, or use -o another", output, de->d_name);
		}
	closedir(d);
	return live;
}

/* Output directory: created if missing (0700: a profile is its user's; *created says so), with raw/ in it; a
 * non-empty one only with --force, and never while a run still writes there. Checked before the target runs.
 * One rank of a job (`srun profwrap CMD`, `mpirun -n N profwrap CMD`: job_rank >= 0) shares the directory with
 * the other ranks' profwraps: only its own rank's reports must be absent, or are replaced with -f. Returns 0,
 * or 1 after a one-line message. */
static int prepare_output(const struct pw_cli_opts *o, const char *output, int job_rank, char abs[PATH_MAX],
			  int *created)
{
	*created = mkdir(output, 0700) == 0;
	if (!*created && errno != EEXIST)
		return say("cannot create output directory %s: %s", output, strerror(errno));
	if (!realpath(output, abs))
		return say("cannot use output directory %s: %s", output, strerror(errno));
	struct stat st;
	if (stat(abs, &st) < 0 || !S_ISDIR(st.st_mode))
		return say("output %s is not a directory", output);
	if (access(abs, W_OK) < 0)
		return say("output directory %s is not writable", output);
	char raw[PATH_MAX + 8], why[PATH_MAX + 200];
	snprintf(raw, sizeof raw, "%s/raw", abs);
	if (lstat(raw, &st) == 0 && !S_ISDIR(st.st_mode)) /* before -f removes anything */
		return say("%s is not a directory (%s); remove it", raw, S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
	if (job_rank >= 0) {
		char mine[PATH_MAX + 32];
		snprintf(mine, sizeof mine, "%s/rank%d.json", abs, job_rank);
		if (access(mine, F_OK) == 0 && !o->force)
			return say("output directory %s already has the reports of rank %d; use -f to replace them, or -o "
				   "another (%%q{SLURM_JOB_ID} in it, say)", output, job_rank);
		if (o->force && (refuse_live_run(abs, output, job_rank) || clear_previous(abs, job_rank)))
			return 1;
	} else if (!dir_is_empty(abs)) {
		if (!o->force)
			return say("output directory %s is not empty; use -f to replace its reports, or -o another", output);
		if (refuse_live_run(abs, output, -1) || clear_previous(abs, -1))
			return 1;
	}
	return pw_output_dirs(abs, why, sizeof why) ? say("%s", why) : 0;
}

/* The rank of this profwrap when a launcher started it as one rank of a job of several, else -1. */
static int job_rank(void)
{
	int rank = pw_rank_detect(getenv);
	return rank >= 0 && pw_world_size_detect(getenv) > 1 ? rank : -1;
}

static int private_dir(const char *path)
{
	if (pw_private_dir(path) == 0)
		return 0;
	if (errno == EPERM)
		return say("%s is not a private directory of this user; remove it", path);
	return say("cannot create %s: %s", path, strerror(errno));
}

static void remove_session_dir(const char *sdir)
{
	char path[3200];
	static const char *const leaves[] = {"sock", "status", "lock", PW_SESSION_ALIVE};
	for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++)
		if (pw_session_path(sdir, leaves[i], path, sizeof path) == 0)
			unlink(path);
	rmdir(sdir);
}

/* An environment for children: the parent's without LD_PRELOAD (collector), or with our library first in
 * LD_PRELOAD and the session variables set (target). */
static char **child_env(const char *lib, char **extra, char **preload)
{
	size_t n = 0, k = 0, nextra = 0;
	while (environ[n])
		n++;
	while (extra && extra[nextra])
		nextra++;
	char **env = calloc(n + nextra + 2, sizeof *env);
	if (!env)
		return NULL;
	const char *old_preload = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], "LD_PRELOAD=", 11) == 0) {
			old_preload = environ[i] + 11;
			continue;
		}
		int replaced = 0;
		for (size_t j = 0; j < nextra; j++) {
			size_t eq = strcspn(extra[j], "=");
			if (strncmp(environ[i], extra[j], eq + 1) == 0)
				replaced = 1;
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < nextra; j++)
		env[k++] = extra[j];
	if (lib) {
		char *p = NULL;
		if (asprintf(&p, "LD_PRELOAD=%s%s%s", lib, old_preload && *old_preload ? ":" : "",
			     old_preload ? old_preload : "") < 0)
			return NULL;
		env[k++] = p;
		*preload = p;
	}
	return env;
}

/* Starts the collector, which inherits the session file's descriptor: its lock then says the run lives as
 * long as the collector does, should this profwrap die first. */
static pid_t start_collector(const char *collector, const char *sdir, const char *out, int quiet, int session_fd,
			     int *control_wr)
{
	int ctl[2], ready[2];
	if (pipe2(ctl, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0) {
		say("cannot create pipes: %s", strerror(errno));
		return -1;
	}
	char **env = child_env(NULL, NULL, NULL);
	pid_t pid = env ? fork() : -1;
	if (pid == 0) {
		char cfd[16], rfd[16];
		fcntl(ctl[0], F_SETFD, 0);
		fcntl(ready[1], F_SETFD, 0);
		fcntl(session_fd, F_SETFD, 0);
		snprintf(cfd, sizeof cfd, "%d", ctl[0]);
		snprintf(rfd, sizeof rfd, "%d", ready[1]);
		char *argv[] = {(char *)collector, "--serve",	    "--session-dir", (char *)sdir, "--output", (char *)out,
				"--control-fd",	   cfd,		    "--ready-fd",    rfd,	   quiet ? "--quiet" : NULL, NULL};
		setpgid(0, 0); /* keep Ctrl-C and job-control signals for the target */
		execve(collector, argv, env);
		_exit(127);
	}
	free(env);
	close(ctl[0]);
	close(ready[1]);
	if (pid < 0) {
		close(ctl[1]);
		close(ready[0]);
		say("cannot start the collector: %s", strerror(errno));
		return -1;
	}
	char b;
	ssize_t r = read(ready[0], &b, 1); /* the collector writes once it listens, or exits */
	close(ready[0]);
	if (r != 1) {
		close(ctl[1]);
		waitpid(pid, NULL, 0);
		say("the collector did not start; the command was not run");
		return -1;
	}
	*control_wr = ctl[1];
	return pid;
}

static volatile sig_atomic_t forward_to;

static void forward_signal(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
}

static const struct pw_live_status *map_live(const char *sdir)
{
	char path[3200];
	if (pw_session_path(sdir, "status", path, sizeof path))
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	void *m = mmap(NULL, sizeof(struct pw_live_status), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

/* Progress while the target runs, on profwrap's stderr when that is a terminal and the target's stdin and
 * stdout are not (a program on the terminal may draw anywhere on it, its window title included, so profwrap
 * shows nothing then): the last row, under a scroll region that holds whatever else reaches the terminal
 * (the target's stderr), as apt draws its progress bar. */
static int status_shown;
static int status_row;

static void status_begin(void)
{
	struct winsize ws;
	if (isatty(0) || isatty(1) || ioctl(2, TIOCGWINSZ, &ws) < 0 || ws.ws_row < 3)
		return;
	status_shown = 1;
	status_row = ws.ws_row;
	/* a new line, so that the cursor can stay inside the region; save; region; restore; back up a line */
	fprintf(stderr, "\n\0337\033[1;%dr\0338\033[1A", status_row - 1);
	fflush(stderr);
}

static void status_show(const char *text)
{
	fprintf(stderr, "\0337\033[%d;1H\033[K%s\0338", status_row, text);
	fflush(stderr);
}

static void status_end(void)
{
	fprintf(stderr, "\0337\033[r\033[%d;1H\033[K\0338", status_row);
	fflush(stderr);
	status_shown = 0;
}

/* Waits for the target, keeping the progress (if shown) up to date meanwhile. */
static int wait_target(pid_t pid, const char *sdir)
{
	int st = 0;
	if (!status_shown) {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return st;
	}
	const struct pw_live_status *live = map_live(sdir);
	uint64_t start = pw_clock_mono_ns(), last_events = 0, last_ns = start, next = start;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		uint64_t now = pw_clock_mono_ns();
		if (now >= next && live && live->magic == PW_LIVE_MAGIC) {
			char text[256];
			uint64_t ev = live->events;
			double rate = now > last_ns ? (double)(ev - last_events) * 1e9 / (double)(now - last_ns) : 0;
			snprintf(text, sizeof text, "profwrap: %.1fs  %llu events  %.0f/s  %llu dropped  %llu processes",
				 (double)(now - start) / 1e9, (unsigned long long)ev, rate,
				 (unsigned long long)live->dropped, (unsigned long long)live->processes);
			status_show(text);
			last_events = ev;
			last_ns = now;
			next = now + STATUS_EVERY_MS * 1000000ull;
		}
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
	status_end();
	if (live)
		munmap((void *)live, sizeof *live);
	return st;
}

/* Raw traces grow with the run: a file system that is nearly full would stop the collector mid-run (what it
 * could not write then waits in shared memory for `profwrap salvage`), so it is refused before the target
 * starts. Returns 0, or 1 after a message. */
static int check_room(const char *out)
{
	struct statvfs sv;
	if (statvfs(out, &sv) < 0 || (uint64_t)sv.f_bavail * sv.f_frsize >= PW_MIN_FREE_BYTES)
		return 0;
	say("%s: only %llu KiB free; the raw traces need at least %u KiB: the command was not run", out,
	    (unsigned long long)((uint64_t)sv.f_bavail * sv.f_frsize >> 10), PW_MIN_FREE_BYTES >> 10);
	return 1;
}

/* Renders dir's reports from its raw traces. Returns 0, or 1 after a message. */
static int report_dir(const char *dir, int quiet)
{
	char err[1024];
	struct pw_render_counts seen;
	/* ranks without a report: summarise those there are */
	if (pw_render(dir, NULL, 0, 1, &seen, err, sizeof err) < 0)
		return say("%s", err);
	if (!quiet)
		say("wrote reports for %zu rank%s in %s", seen.reports, seen.reports == 1 ? "" : "s", dir);
	return 0;
}

/* The collector died by a signal: what the processes recorded since is in their segments; it goes into the
 * raw traces, and the reports are written from them. */
static void salvage_after(const char *out, int sig, int quiet)
{
	struct pw_salvage_result r;
	char err[1024];
	if (pw_salvage(out, quiet, &r, err, sizeof err) < 0) {
		say("the collector died (%s) and its records could not be salvaged: %s", strsignal(sig), err);
		return;
	}
	say("the collector died (%s); salvaged %llu records of %llu processes from shared memory (%llu dropped "
	    "while none was collecting)", strsignal(sig), (unsigned long long)r.events, (unsigned long long)r.processes,
	    (unsigned long long)r.dropped);
	report_dir(out, quiet);
}

/* Stale state of earlier runs (killed CLIs and collectors): salvaged into its output directory, or removed. */
static void clean_stale(int quiet)
{
	struct pw_clean_result r;
	char err[512];
	if (pw_clean(1, &r, err, sizeof err) == 0 && r.segments_salvaged && !quiet)
		say("salvaged %llu processes of an earlier run whose collector died into %s (its reports are rewritten)",
		    (unsigned long long)r.segments_salvaged, r.salvaged_into);
}

/* The variables the target gets beside its own: the session, the output, what to trace, capture control,
 * stacks. Strings made here are in owned[] (freed by the caller). Returns 0, or -1 when out of memory. */
struct target_env {
	char ring[64], t0[64];
	char *owned[3];
	char *extra[13 + sizeof ((struct pw_cli_opts *)0)->capture_env / sizeof(char *)];
};

static int make_target_env(struct target_env *te, const struct pw_cli_opts *o, const char *sdir, const char *out)
{
	int ne = 0;
	snprintf(te->ring, sizeof te->ring, "PROFWRAP_RING_SIZE=%llu", (unsigned long long)o->ring_size);
	if (asprintf(&te->owned[0], "%s=%s", PW_ENV_SESSION_DIR, sdir) < 0 ||
	    asprintf(&te->owned[1], "%s=%s", PW_ENV_OUTPUT, out) < 0 ||
	    asprintf(&te->owned[2], "%s=%s", PW_ENV_TRACE, o->trace ? o->trace : "all") < 0)
		return -1;
	for (int i = 0; i < 3; i++)
		te->extra[ne++] = te->owned[i];
	te->extra[ne++] = te->ring;
	te->extra[ne++] = o->follow_fork ? "PROFWRAP_FOLLOW_FORK=1" : "PROFWRAP_FOLLOW_FORK=0";
	if (o->quiet)
		te->extra[ne++] = "PROFWRAP_QUIET=1";
	if (o->capture_env[0]) {
		/* --delay counts from now, in every process of the job */
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		snprintf(te->t0, sizeof te->t0, "%s=%llu", PW_ENV_CAPTURE_T0,
			 (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
		te->extra[ne++] = te->t0;
		for (size_t i = 0; o->capture_env[i]; i++)
			te->extra[ne++] = o->capture_env[i];
	}
	for (size_t i = 0; i < sizeof o->stack_env / sizeof o->stack_env[0]; i++)
		if (o->stack_env[i])
			te->extra[ne++] = o->stack_env[i];
	if (o->python_functions_env)
		te->extra[ne++] = o->python_functions_env;
	if (o->pytorch_env)
		te->extra[ne++] = o->pytorch_env;
	te->extra[ne] = NULL;
	return 0;
}

static void free_target_env(struct target_env *te)
{
	for (int i = 0; i < 3; i++)
		free(te->owned[i]);
}

/* The child's side of the launch: env with PROFWRAP_ROOT_PID (which lets --no-follow-fork tell the target
 * from its children), then exec; on failure the errno goes up sync_fd. Never returns. */
static void exec_target(const struct pw_cli_opts *o, char **env, int sync_fd)
{
	char root[48];
	snprintf(root, sizeof root, "PROFWRAP_ROOT_PID=%d", (int)getpid());
	size_t n = 0;
	while (env[n])
		n++;
	char **full = calloc(n + 2, sizeof *full);
	if (full) {
		memcpy(full, env, n * sizeof *full);
		full[n] = root;
		environ = full;
		execvp(o->command[0], o->command);
	}
	int err = errno;
	(void)!write(sync_fd, &err, sizeof err);
	_exit(127);
}

/* Forwards the signals that end a job to the target, waits for it and records how it ended. Returns the
 * CLI's exit status; *exec_err is the errno of a failed exec (0: it ran). */
static int supervise_target(const struct pw_cli_opts *o, pid_t target, int sync_fd, const char *sdir,
			    struct pw_cli_session *session, int *exec_err, int *status_out)
{
	forward_to = target;
	struct sigaction fwd = {.sa_handler = forward_signal}, ign = {.sa_handler = SIG_IGN};
	sigaction(SIGTERM, &fwd, NULL);
	sigaction(SIGHUP, &fwd, NULL);
	sigaction(SIGINT, &ign, NULL); /* the terminal sends it to the target too */
	sigaction(SIGQUIT, &ign, NULL);
	if (read(sync_fd, exec_err, sizeof *exec_err) != (ssize_t)sizeof *exec_err)
		*exec_err = 0;
	int status = wait_target(target, sdir);
	int rc;
	if (*exec_err) {
		say("cannot run %s: %s", o->command[0], strerror(*exec_err));
		rc = 127;
	} else {
		rc = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	}
	pw_cli_session_end(session, target, status);
	*status_out = *exec_err ? 0 : status;
	return rc;
}

/* A target that a signal ended: profwrap ends by the same signal once its reports are written, so that a
 * calling shell sees what it would see without profwrap (a loop stops at Ctrl-C). A signal that dumps core
 * is passed on as 128+N instead: a core of profwrap would say nothing of the program. */
static void end_as_target(int status)
{
	if (!WIFSIGNALED(status))
		return;
	int sig = WTERMSIG(status);
	static const int core[] = {SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ, SIGSYS};
	for (size_t i = 0; i < sizeof core / sizeof core[0]; i++)
		if (sig == core[i])
			return;
	fflush(NULL);
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
}

/* One line on how the collector ended, when it has something to say: nothing recorded, it died (salvaged
 * here), it failed, or where the reports are. */
static void tell_collector_outcome(const struct pw_cli_opts *o, int cst, const char *out, int exec_err,
				   int said_unprofiled)
{
	if (WIFEXITED(cst) && WEXITSTATUS(cst) == PW_SERVE_NOTHING_RECORDED) {
		if (!exec_err && !said_unprofiled)
			say("nothing was recorded: %s never loaded libprofwrap.so (statically linked or setuid?)",
			    o->command[0]);
	} else if (WIFSIGNALED(cst)) {
		salvage_after(out, WTERMSIG(cst), o->quiet);
	} else if (!WIFEXITED(cst) || WEXITSTATUS(cst) != 0) {
		if (!exec_err)
			say("the collector failed; `profwrap salvage %s` writes what it left in shared memory and renders "
			    "the reports", out);
	} else if (!o->quiet && !exec_err) {
		say("reports in %s (rank<R>.txt, .html, .json, .trace.json, .folded, summary.txt)", out);
	}
}

/* A run that recorded nothing (its command could not be run, or was static) leaves nothing behind that would
 * refuse the next run into its directory: its session file goes, raw/ when empty, and the output directory
 * when this run made it and it is empty. One rank of a job leaves raw/ to the others. */
static void forget_run(struct pw_cli_session *session, const char *out, int rank, int created)
{
	char raw[4352];
	pw_cli_session_close(session, 1);
	snprintf(raw, sizeof raw, "%s/raw", out);
	if (rank < 0 && rmdir(raw) == 0 && created)
		rmdir(out);
}

/* The session's private directories, under an unpredictable name: the session base is private anyway,
 * but a name nobody can guess cannot be taken first. Returns 0 or -1. */
static int make_session_dir(char *base, size_t base_len, char *sdir, size_t sdir_len)
{
	if (pw_session_base(base, base_len) || private_dir(base) ||
	    pw_session_dir_for_cli((int)getpid(), pw_random_u64(), sdir, sdir_len) || private_dir(sdir))
		return -1;
	return 0;
}

int pw_cli_run(const struct pw_cli_opts *o, const char *self_dir)
{
	char lib[4352], collector[4352], out[4096], sdir[3072], base[3072], output[4096], why[4300];
	if (pw_expand_output(o->output, output, sizeof output, why, sizeof why) < 0) {
		say("-o %s", why);
		return 2;
	}
	int rank = job_rank(), created;
	if (find_parts(self_dir, lib, sizeof lib, collector, sizeof collector))
		return 1;
	if (prepare_output(o, output, rank, out, &created))
		return 2; /* the output directory is refused, as a bad option value is */
	if (check_room(out))
		return 2;
	struct pw_cli_session session;
	if (make_session_dir(base, sizeof base, sdir, sizeof sdir))
		return 1;
	if (pw_cli_session_start(&session, out, rank, o->command, sdir)) {
		remove_session_dir(sdir);
		return 1;
	}

	clean_stale(o->quiet);
	int control = -1;
	pid_t cpid = start_collector(collector, sdir, out, o->quiet, session.fd, &control);
	if (cpid < 0) {
		remove_session_dir(sdir);
		forget_run(&session, out, rank, created);
		return 1;
	}
	struct target_env te = {0};
	char *preload = NULL;
	char **env = make_target_env(&te, o, sdir, out) ? NULL : child_env(lib, te.extra, &preload);
	if (!env)
		return say("out of memory");

	/* A program LD_PRELOAD cannot apply to still runs (its children may be profiled): one line says why,
	 * before it runs, instead of "nothing was recorded" after. */
	char unprofiled[4400];
	int said_unprofiled = pw_target_check(o->command[0], unprofiled, sizeof unprofiled);
	if (said_unprofiled)
		say("%s", unprofiled);
	int sync_pipe[2];
	if (pipe2(sync_pipe, O_CLOEXEC) < 0)
		return say("cannot create a pipe: %s", strerror(errno));
	if (!o->quiet && isatty(2))
		status_begin();
	pid_t target = fork();
	if (target == 0)
		exec_target(o, env, sync_pipe[1]);
	close(sync_pipe[1]);
	int exec_err = 0, rc, target_status = 0;
	if (target < 0) {
		if (status_shown)
			status_end();
		say("cannot fork: %s", strerror(errno));
		rc = 1;
	} else {
		rc = supervise_target(o, target, sync_pipe[0], sdir, &session, &exec_err, &target_status);
	}
	close(sync_pipe[0]);
	close(control); /* tells the collector the target has ended */
	int cst = 0;
	while (waitpid(cpid, &cst, 0) < 0 && errno == EINTR)
		;
	remove_session_dir(sdir);
	free(env);
	free(preload);
	free_target_env(&te);
	tell_collector_outcome(o, cst, out, exec_err, said_unprofiled);
	if (WIFEXITED(cst) && WEXITSTATUS(cst) == PW_SERVE_NOTHING_RECORDED)
		forget_run(&session, out, rank, created);
	else
		pw_cli_session_close(&session, 0);
	end_as_target(target_status);
	return rc;
}

int pw_cli_salvage(const char *dir)
{
	struct pw_salvage_result r;
	char err[1024];
	if (pw_salvage(dir, 0, &r, err, sizeof err) < 0)
		return say("%s", err);
	char kept[160] = "";
	if (r.kept)
		snprintf(kept, sizeof kept, "; %llu of them could not be written whole (out of disk space?): the rest "
			 "stays in shared memory", (unsigned long long)r.kept);
	say("salvaged %llu records of %llu processes (%llu dropped while none was collecting%s%s)",
	    (unsigned long long)r.events, (unsigned long long)r.processes, (unsigned long long)r.dropped,
	    r.busy ? "; some are still being written by a live collector" : "", kept);
	return report_dir(dir, 0);
}

int pw_cli_clean(void)
{
	struct pw_clean_result r;
	char err[512];
	if (pw_clean(0, &r, err, sizeof err) < 0)
		return say("%s", err);
	say("removed %llu shared-memory segments (%llu KiB) and %llu session directories; salvaged %llu processes%s%s; "
	    "%llu segments in use left alone",
	    (unsigned long long)r.segments_removed, (unsigned long long)(r.bytes_removed >> 10),
	    (unsigned long long)r.sessions_removed, (unsigned long long)r.segments_salvaged,
	    r.salvaged_into[0] ? " into " : "", r.salvaged_into, (unsigned long long)r.in_use);
	return 0;
}

int pw_cli_report(const char *dir)
{
	return report_dir(dir, 0);
}

int pw_cli_export_sqlite(const char *dir)
{
	char err[1024];
	size_t n = 0;
	if (pw_export_sqlite(dir, dir, &n, err, sizeof err) < 0)
		return say("%s", err);
	say("wrote %zu database%s in %s (rank<R>.sqlite)", n, n == 1 ? "" : "s", dir);
	return 0;
}

/* Whether process pid's recording segment says profwrap's SIGUSR2 handler is in place: 1, 0 (the program
 * has its own), or -1 when pid has no segment of this user's that runs. */
static int capture_handler_ours(pid_t pid)
{
	DIR *d = opendir("/dev/shm");
	int ours = -1;
	for (struct dirent *e; d && ours < 0 && (e = readdir(d));) {
		char name[PW_SHM_NAME_MAX + 2];
		struct stat st;
		snprintf(name, sizeof name, "/%s", e->d_name);
		if (!pw_shm_name_is_of(name, (int)getuid(), (int)pid))
			continue;
		int fd = shm_open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != getuid() ||
		    (size_t)st.st_size < sizeof(struct pw_seg_header)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		const struct pw_seg_header *h = mmap(NULL, sizeof *h, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (h == MAP_FAILED)
			continue;
		if (h->magic == PW_SEG_MAGIC && h->version == PW_FORMAT_VERSION && h->pid == pid &&
		    atomic_load(&h->state) == PW_STATE_RUNNING)
			ours = atomic_load(&h->capture_signal_ours) != 0;
		munmap((void *)h, sizeof *h);
	}
	if (d)
		closedir(d);
	return ours;
}

int pw_cli_capture_signal(const char *arg, int start)
{
	char *end;
	long pid = strtol(arg, &end, 10);
	if (!*arg || *end || pid <= 0 || pid > INT32_MAX) {
		fprintf(stderr, "profwrap: '%s' is not a process id\n", arg);
		return 1;
	}
	/* Only a recorded process with profwrap's own handler in place gets the signal: to any other, SIGUSR2 is
	 * fatal or means something else (gunicorn, nginx and faulthandler take it for their own). */
	int ours = capture_handler_ours((pid_t)pid);
	if (ours < 0) {
		fprintf(stderr, "profwrap: process %ld is not profiled by profwrap\n", pid);
		return 1;
	}
	if (!ours) {
		fprintf(stderr, "profwrap: process %ld handles SIGUSR2 itself, so profwrap does not signal it; "
			"--delay, --duration or --capture-range choose what it records\n", pid);
		return 1;
	}
	union sigval v = {.sival_int = start ? PW_CAPTURE_SIG_START : PW_CAPTURE_SIG_STOP};
	if (sigqueue((pid_t)pid, PW_CAPTURE_SIGNAL, v) < 0) {
		fprintf(stderr, "profwrap: cannot signal process %ld: %s\n", pid, strerror(errno));
		return 1;
	}
	return 0;
}
