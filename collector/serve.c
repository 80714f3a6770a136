#define _GNU_SOURCE
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../common/pw_clock.h"
#include "../common/pw_ring.h"
#include "../common/pw_session.h"
#include "ingest/drain.h"
#include "lib/session_files.h"
#include "render.h"

#define MAX_PRODUCERS 4096
/* Connections accepted whose hello is not read yet. A burst of process starts (a shell loop, xargs -P, a
 * pool of workers) queues in the listen backlog beyond these, and a process waits for room there. */
#define MAX_PENDING 1024
#define DRAIN_MIN_MS 1
#define DRAIN_MAX_MS 4
#define DETACHED_IDLE_START_MS 30000

struct pending {
	int sock;
	uint64_t since_ns;
};

struct server {
	const struct pw_serve_opts *o;
	struct pw_drain d;
	int listen_fd;
	struct pw_producer *prod[MAX_PRODUCERS];
	size_t nprod;
	struct pending pend[MAX_PENDING];
	size_t npend;
	struct pw_live_status *live;
	char sock_path[3200];
	char alive_path[3200];
	char unrecorded_path[3200]; /* processes that could not connect append themselves (pw_unrecorded) */
	int alive_fd;
	int session_file_fd; /* preload-only: this session's file in OUT/raw, held while the collector runs */
	int had_producer;
	int timeout; /* poll's, in ms: short while producers write, longer while they are quiet */
	uint64_t started, last_producer_at, end_requested_at;
};

static volatile sig_atomic_t stop_requested;
static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t now_ns(void)
{
	return pw_clock_mono_ns();
}

#define log_line(s, ...) pw_collector_log((s)->o->quiet, __VA_ARGS__)

static int listen_on(struct server *s, const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof addr.sun_path) {
		log_line(s, "socket path too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	unlink(path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	mode_t old = umask(0177); /* 0600: connecting takes write permission, and only this user has it */
	int rc = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&addr, sizeof addr);
	umask(old);
	if (rc < 0 || listen(fd, SOMAXCONN) < 0) {
		log_line(s, "cannot listen on %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void map_live_status(struct server *s)
{
	char path[3200];
	if (pw_session_path(s->o->session_dir, "status", path, sizeof path))
		return;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (ftruncate(fd, sizeof *s->live) == 0) {
		void *m = mmap(NULL, sizeof *s->live, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			s->live = m;
			s->live->magic = PW_LIVE_MAGIC;
		}
	}
	close(fd);
}

static void update_live(struct server *s)
{
	if (!s->live)
		return;
	s->live->events = s->d.events;
	s->live->dropped = s->d.dropped;
	s->live->producers = s->nprod;
	s->live->processes = s->d.processes;
}

/* Takes new connections while there is room for their hellos; the rest wait in the listen backlog (their
 * processes are not held up: connecting does not wait for the accept). */
static void accept_all(struct server *s)
{
	while (s->npend < sizeof s->pend / sizeof s->pend[0]) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		s->pend[s->npend++] = (struct pending){fd, now_ns()};
	}
}

static void catch_signals(const struct pw_serve_opts *o)
{
	signal(SIGPIPE, SIG_IGN);
	pw_drain_catch_faults();
	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigaction(SIGTERM, &sa, NULL);
	if (o->detached)
		sigaction(SIGINT, &sa, NULL);
	else
		signal(SIGINT, SIG_IGN); /* Ctrl-C is for the target; the CLI ends the session when it has ended */
}

/* OUT and OUT/raw. Returns 0, or -1 after a message on stderr. */
static int make_output_dirs(struct server *s)
{
	const char *out = s->o->output;
	char why[4600];
	if (snprintf(s->d.raw_dir, sizeof s->d.raw_dir, "%s/raw", out) >= (int)sizeof s->d.raw_dir) {
		fprintf(stderr, "profwrap-collector: output directory name too long: %.100s...\n", out);
		return -1;
	}
	if (pw_output_dirs(out, why, sizeof why) < 0) {
		fprintf(stderr, "profwrap-collector: %s\n", why);
		return -1;
	}
	return 0;
}

static int start_listening(struct server *s)
{
	if (pw_session_path(s->o->session_dir, "sock", s->sock_path, sizeof s->sock_path))
		return -1;
	/* made before the socket: a process that finds the socket finds the list too */
	int fd = -1;
	if (pw_session_path(s->o->session_dir, PW_SESSION_UNRECORDED, s->unrecorded_path, sizeof s->unrecorded_path) ||
	    (fd = pw_create_file(s->unrecorded_path)) < 0) {
		log_line(s, "cannot create %s: %s", s->unrecorded_path, strerror(errno));
		return -1;
	}
	close(fd);
	s->listen_fd = listen_on(s, s->sock_path);
	return s->listen_fd < 0 ? -1 : 0;
}

/* Preload-only: OUT/raw/session-<session leaf>.txt names this session, for salvage, and is held while this
 * collector runs (under the CLI, the CLI writes the run's). Returns 0, or -1 after a message on stderr. */
static int register_session(struct server *s)
{
	const char *sdir = s->o->session_dir, *slash = strrchr(sdir, '/');
	char path[4800], host[256] = "", text[4000];
	gethostname(host, sizeof host - 1);
	host[strcspn(host, "\n")] = 0;
	snprintf(path, sizeof path, "%s/session-%s.txt", s->d.raw_dir, slash ? slash + 1 : sdir);
	snprintf(text, sizeof text, "%s%s\ncollector_pid=%d\nhost=%s\n", PW_SESSION_DIR_KEY, sdir, (int)getpid(), host);
	s->session_file_fd = pw_session_file_create(path, text);
	if (s->session_file_fd >= 0)
		return 0;
	fprintf(stderr, "profwrap-collector: cannot write %s: %s\n", path, strerror(errno));
	return -1;
}

/* <session>/alive, locked for salvage to see that this collector runs (pw_session.h). */
static void hold_alive_lock(struct server *s)
{
	s->alive_fd = pw_session_path(s->o->session_dir, PW_SESSION_ALIVE, s->alive_path, sizeof s->alive_path)
			      ? -1
			      : open(s->alive_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->alive_fd >= 0)
		flock(s->alive_fd, LOCK_EX); /* released when this process ends, however it ends */
}

static void say_ready(const struct pw_serve_opts *o)
{
	if (o->ready_fd >= 0) {
		(void)!write(o->ready_fd, "R", 1);
		close(o->ready_fd);
	}
}

/* The listening socket, the control pipe, the pending hellos, then the producers. Returns how many. */
static size_t fill_pollfds(const struct server *s, struct pollfd *pfd)
{
	size_t n = 0;
	pfd[n++] = (struct pollfd){s->listen_fd, POLLIN, 0};
	pfd[n++] = (struct pollfd){s->o->control_fd, POLLIN, 0};
	for (size_t i = 0; i < s->npend; i++)
		pfd[n++] = (struct pollfd){s->pend[i].sock, POLLIN, 0};
	for (size_t i = 0; i < s->nprod; i++)
		pfd[n++] = (struct pollfd){s->prod[i]->sock, POLLIN, 0};
	return n;
}

/* End of file (or an error) on the control pipe: the CLI's target has ended. */
static void read_control(struct server *s, short revents)
{
	if (s->o->control_fd < 0 || !(revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	char b[256];
	ssize_t r = read(s->o->control_fd, b, sizeof b);
	if (r <= 0 && !s->end_requested_at)
		s->end_requested_at = now_ns();
}

/* Hellos, in the order the connections came (an exec'd image connects after the image it replaced): the
 * first npolled pending sockets have their poll results in pfd; those accepted since follow, unpolled. A
 * connection that stays silent for 5 s is dropped. */
static void take_hellos(struct server *s, const struct pollfd *pfd, size_t npolled)
{
	size_t kept = 0, total = s->npend;
	for (size_t i = 0; i < total; i++) {
		short re = i < npolled ? pfd[i].revents : 0;
		int expired = now_ns() - s->pend[i].since_ns > 5000000000ull;
		if (!(re & (POLLIN | POLLHUP | POLLERR)) && !expired) {
			s->pend[kept++] = s->pend[i];
			continue;
		}
		int fd = s->pend[i].sock;
		if (!(re & POLLIN)) {
			close(fd);
			continue;
		}
		int fl = fcntl(fd, F_GETFL);
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		struct pw_producer *p = pw_producer_open(&s->d, fd);
		if (p && s->nprod < MAX_PRODUCERS) {
			s->prod[s->nprod++] = p;
			s->had_producer = 1;
		} else if (p) {
			log_line(s, "too many processes at once; pid %d is not recorded", (int)p->pid);
			pw_producer_finish(&s->d, p, 0);
		}
	}
	s->npend = kept;
}

/* Ends: end of file on a producer's connection. pfd holds the poll results of the first npolled producers
 * (those added by take_hellos() since follow them, unpolled); walked backwards, so that a finished
 * producer's slot takes the last one, already looked at or not polled. */
static void take_ends(struct server *s, const struct pollfd *pfd, size_t npolled)
{
	for (size_t i = npolled; i-- > 0;) {
		if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		char b[64];
		ssize_t r = recv(s->prod[i]->sock, b, sizeof b, MSG_DONTWAIT);
		if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR)))
			continue;
		pw_producer_finish(&s->d, s->prod[i], 0);
		s->prod[i] = s->prod[--s->nprod];
		s->last_producer_at = now_ns();
	}
}

/* Every producer's lanes into its raw trace; the next poll waits DRAIN_MIN_MS after records moved, up to
 * twice as long each time nothing did, at most DRAIN_MAX_MS. */
static void drain_all(struct server *s)
{
	uint64_t moved = 0;
	for (size_t i = 0; i < s->nprod; i++)
		moved += pw_producer_drain(&s->d, s->prod[i]);
	s->timeout = moved ? DRAIN_MIN_MS : (s->timeout * 2 > DRAIN_MAX_MS ? DRAIN_MAX_MS : s->timeout * 2);
	update_live(s);
	if (s->nprod)
		s->last_producer_at = now_ns();
}

/* CLI mode: the target ended and every producer is gone, or the grace time is up. Detached: no producer
 * for linger_ms, or none ever within DETACHED_IDLE_START_MS. */
static int session_over(const struct server *s)
{
	const struct pw_serve_opts *o = s->o;
	uint64_t now = now_ns();
	int idle = !s->nprod && !s->npend;
	if (s->end_requested_at && (idle || now - s->end_requested_at > (uint64_t)o->grace_ms * 1000000))
		return 1;
	return o->detached && idle &&
	       ((s->had_producer && now - s->last_producer_at > (uint64_t)o->linger_ms * 1000000) ||
		(!s->had_producer && now - s->started > (uint64_t)DETACHED_IDLE_START_MS * 1000000));
}

static void serve_loop(struct server *s)
{
	struct pollfd pfd[MAX_PRODUCERS + MAX_PENDING + 2];
	s->started = s->last_producer_at = now_ns();
	s->timeout = DRAIN_MIN_MS;
	while (!stop_requested) {
		size_t n = fill_pollfds(s, pfd);
		int ready = poll(pfd, n, s->timeout);
		if (ready < 0 && errno != EINTR)
			break;
		size_t npend = s->npend; /* those polled; accept_all() appends more */
		if (pfd[0].revents & POLLIN)
			accept_all(s);
		read_control(s, pfd[1].revents);
		take_hellos(s, pfd + 2, npend);
		take_ends(s, pfd + 2 + npend, n - 2 - npend);
		drain_all(s);
		if (session_over(s))
			break;
	}
}

/* The processes that could not connect (they waited PW_CONNECT_WAIT_MS for room in the backlog, or their
 * hello failed): each gets a raw trace that names it, so the report counts it. */
static void take_unrecorded(struct server *s)
{
	struct pw_unrecorded u;
	uint64_t n = 0, no_shm = 0;
	int fd = open(s->unrecorded_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	while (fd >= 0 && read(fd, &u, sizeof u) == (ssize_t)sizeof u) {
		if (u.magic != PW_UNRECORDED_MAGIC || u.pid <= 0)
			continue;
		pw_drain_unrecorded(&s->d, &u);
		s->had_producer = 1;
		n++;
		no_shm += u.why == PW_UNRECORDED_NO_SHM;
	}
	if (fd >= 0)
		close(fd);
	if (no_shm)
		log_line(s, "%" PRIu64 " process%s not recorded: /dev/shm had no room for profwrap's shared memory "
			 "(it leaves a quarter of /dev/shm, at least 16 MiB, to the program; `df /dev/shm`)",
			 no_shm, no_shm == 1 ? " was" : "es were");
	if (n > no_shm)
		log_line(s, "%" PRIu64 " process%s not recorded: the collector's backlog stayed full", n - no_shm,
			 n - no_shm == 1 ? " was" : "es were");
}

/* Producers still connected are finished as still running; hellos never read are dropped. */
static void close_connections(struct server *s)
{
	for (size_t i = 0; i < s->nprod; i++)
		pw_producer_finish(&s->d, s->prod[i], 1);
	s->nprod = 0;
	for (size_t i = 0; i < s->npend; i++)
		close(s->pend[i].sock);
	update_live(s);
	close(s->listen_fd);
	unlink(s->sock_path);
	take_unrecorded(s);
}

/* The reports of the raw traces this collector wrote. Returns pw_serve()'s exit code. */
static int render_reports(struct server *s)
{
	const struct pw_serve_opts *o = s->o;
	char err[512];
	struct pw_render_counts seen;
	int wr;
	if (!s->had_producer) {
		/* The CLI explains this itself (exec failed, or a static or setuid target). */
		if (o->detached)
			log_line(s, "no process connected; nothing to report");
		return PW_SERVE_NOTHING_RECORDED;
	}
	if ((wr = pw_render(o->output, s->d.raw_names, s->d.nraw, 0, &seen, err, sizeof err)) < 0) {
		fprintf(stderr, "profwrap-collector: %s\n", err);
		return 1;
	}
	if (wr > 0 && seen.ranks > 1 && !o->quiet)
		/* one collector for the job, and some of its ranks made no report (one per rank: the last
		 * rank's collector writes the summary; they are silent) */
		fprintf(stderr, "profwrap: no summary.txt: %s; `profwrap merge %s` writes it from the reports there\n",
			err, o->output);
	return 0;
}

static void clean_up(struct server *s)
{
	pw_drain_free(&s->d);
	if (s->live)
		munmap(s->live, sizeof *s->live);
	/* The CLI removes its session directory; a detached collector leaves only the lock, which the next
	 * job's processes must find in place to agree on who starts the next collector. */
	char status_path[3200];
	if (s->o->detached && pw_session_path(s->o->session_dir, "status", status_path, sizeof status_path) == 0)
		unlink(status_path);
	if (s->unrecorded_path[0])
		unlink(s->unrecorded_path);
	if (s->alive_fd >= 0) {
		unlink(s->alive_path);
		close(s->alive_fd);
	}
	if (s->session_file_fd >= 0)
		close(s->session_file_fd); /* the file stays: segments it could not write wait there for salvage */
}

int pw_serve(const struct pw_serve_opts *o)
{
	struct server srv = {.o = o, .d = {.quiet = o->quiet}, .listen_fd = -1, .alive_fd = -1, .session_file_fd = -1};
	struct server *s = &srv;

	catch_signals(o);
	pw_clock_init(getenv(PW_ENV_CLOCK));
	s->d.start_pair = pw_clock_pair_now();
	if (make_output_dirs(s) || (o->detached && register_session(s)) || start_listening(s))
		return 1;
	map_live_status(s);
	hold_alive_lock(s);
	say_ready(o);
	serve_loop(s);
	close_connections(s);
	int rc = render_reports(s);
	clean_up(s);
	return rc;
}
