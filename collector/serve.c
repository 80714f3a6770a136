#define _GNU_SOURCE
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
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
#include "render.h"

#define MAX_PRODUCERS 4096
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
	struct pending pend[64];
	size_t npend;
	struct pw_live_status *live;
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
	if (rc < 0 || listen(fd, 128) < 0) {
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

int pw_serve(const struct pw_serve_opts *o)
{
	struct server srv = {.o = o, .d = {.quiet = o->quiet}, .listen_fd = -1};
	struct server *s = &srv;
	char sock_path[3200];
	int rc = 1;

	signal(SIGPIPE, SIG_IGN);
	pw_drain_catch_faults();
	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigaction(SIGTERM, &sa, NULL);
	if (o->detached)
		sigaction(SIGINT, &sa, NULL);
	else
		signal(SIGINT, SIG_IGN); /* Ctrl-C is for the target; the CLI ends the session when it has ended */
	pw_clock_init(getenv(PW_ENV_CLOCK));
	s->d.start_pair = pw_clock_pair_now();

	char why[4600];
	if (snprintf(s->d.raw_dir, sizeof s->d.raw_dir, "%s/raw", o->output) >= (int)sizeof s->d.raw_dir) {
		fprintf(stderr, "profwrap-collector: output directory name too long: %.100s...\n", o->output);
		return 1;
	}
	if (pw_output_dirs(o->output, why, sizeof why) < 0) {
		fprintf(stderr, "profwrap-collector: %s\n", why);
		return 1;
	}
	if (pw_session_path(o->session_dir, "sock", sock_path, sizeof sock_path) ||
	    (s->listen_fd = listen_on(s, sock_path)) < 0)
		return 1;
	map_live_status(s);
	char alive_path[3200];
	int alive_fd = pw_session_path(o->session_dir, PW_SESSION_ALIVE, alive_path, sizeof alive_path) ? -1
		       : open(alive_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (alive_fd >= 0)
		flock(alive_fd, LOCK_EX); /* released when this process ends, however it ends */
	if (o->ready_fd >= 0) {
		(void)!write(o->ready_fd, "R", 1);
		close(o->ready_fd);
	}

	uint64_t end_requested_at = 0, last_producer_at = now_ns(), started = now_ns();
	int had_producer = 0, timeout = DRAIN_MIN_MS;
	struct pollfd pfd[MAX_PRODUCERS + 66];
	while (!stop_requested) {
		size_t n = 0;
		pfd[n++] = (struct pollfd){s->listen_fd, POLLIN, 0};
		pfd[n++] = (struct pollfd){o->control_fd, POLLIN, 0};
		for (size_t i = 0; i < s->npend; i++)
			pfd[n++] = (struct pollfd){s->pend[i].sock, POLLIN, 0};
		for (size_t i = 0; i < s->nprod; i++)
			pfd[n++] = (struct pollfd){s->prod[i]->sock, POLLIN, 0};
		int ready = poll(pfd, n, timeout);
		if (ready < 0 && errno != EINTR)
			break;

		size_t npend = s->npend; /* those polled; accept_all() appends more */
		if (pfd[0].revents & POLLIN)
			accept_all(s);
		if (o->control_fd >= 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			char b[256];
			ssize_t r = read(o->control_fd, b, sizeof b);
			if (r <= 0 && !end_requested_at)
				end_requested_at = now_ns();
		}
		/* Hellos, in the order the connections came (an exec'd image connects after the image it replaced):
		 * pending sockets polled are at pfd[2 .. 2+npend); those accepted just now follow, unpolled. */
		size_t kept = 0, total_pend = s->npend;
		for (size_t i = 0; i < total_pend; i++) {
			short re = i < npend ? pfd[2 + i].revents : 0;
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
				had_producer = 1;
			} else if (p) {
				log_line(s, "too many processes at once; pid %d is not recorded", (int)p->pid);
				pw_producer_finish(&s->d, p, 0);
			}
		}
		s->npend = kept;
		/* Ends: end of file on a producer's connection. Producers are at pfd[2+npend ..). */
		size_t base = 2 + npend;
		size_t nprod_before = n - base;
		for (size_t i = nprod_before; i-- > 0;) {
			if (!(pfd[base + i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char b[64];
			ssize_t r = recv(s->prod[i]->sock, b, sizeof b, MSG_DONTWAIT);
			if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR)))
				continue;
			pw_producer_finish(&s->d, s->prod[i], 0);
			s->prod[i] = s->prod[--s->nprod];
			last_producer_at = now_ns();
		}

		uint64_t moved = 0;
		for (size_t i = 0; i < s->nprod; i++)
			moved += pw_producer_drain(&s->d, s->prod[i]);
		timeout = moved ? DRAIN_MIN_MS : (timeout * 2 > DRAIN_MAX_MS ? DRAIN_MAX_MS : timeout * 2);
		update_live(s);
		if (s->nprod)
			last_producer_at = now_ns();

		uint64_t now = now_ns();
		if (end_requested_at && ((!s->nprod && !s->npend) || now - end_requested_at > (uint64_t)o->grace_ms * 1000000))
			break;
		if (o->detached && !s->nprod && !s->npend &&
		    ((had_producer && now - last_producer_at > (uint64_t)o->linger_ms * 1000000) ||
		     (!had_producer && now - started > (uint64_t)DETACHED_IDLE_START_MS * 1000000)))
			break;
	}

	for (size_t i = 0; i < s->nprod; i++)
		pw_producer_finish(&s->d, s->prod[i], 1);
	s->nprod = 0;
	for (size_t i = 0; i < s->npend; i++)
		close(s->pend[i].sock);
	update_live(s);
	close(s->listen_fd);
	unlink(sock_path);

	char err[512];
	struct pw_render_counts seen;
	int wr;
	if (!had_producer) {
		/* The CLI explains this itself (exec failed, or a static or setuid target). */
		if (o->detached)
			log_line(s, "no process connected; nothing to report");
		rc = PW_SERVE_NOTHING_RECORDED;
	} else if ((wr = pw_render(o->output, s->d.raw_names, s->d.nraw, 0, &seen, err, sizeof err)) < 0) {
		fprintf(stderr, "profwrap-collector: %s\n", err);
	} else {
		rc = 0;
		if (wr > 0 && seen.ranks > 1 && !o->quiet)
			/* one collector for the job, and some of its ranks made no report (one per rank: the last
			 * rank's collector writes the summary; they are silent) */
			fprintf(stderr, "profwrap: no summary.txt: %s; `profwrap merge %s` writes it from the reports there\n",
				err, o->output);
	}
	pw_drain_free(&s->d);
	if (s->live)
		munmap(s->live, sizeof *s->live);
	/* The CLI removes its session directory; a detached collector leaves only the lock, which the next
	 * job's processes must find in place to agree on who starts the next collector. */
	char status_path[3200];
	if (o->detached && pw_session_path(o->session_dir, "status", status_path, sizeof status_path) == 0)
		unlink(status_path);
	if (alive_fd >= 0) {
		unlink(alive_path);
		close(alive_fd);
	}
	return rc;
}
