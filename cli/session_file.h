/* The run's session file, raw/session.txt (raw/session-<rank>-<host>-<pid>.txt for one rank of a job): written
 * when the run starts, with its command and session directory, and again with how its target ended; held
 * locked while the run lives (collector/lib/session_files.h). */
#ifndef PW_CLI_SESSION_FILE_H
#define PW_CLI_SESSION_FILE_H

#include <sys/types.h>

struct pw_cli_session {
	int fd; /* locked; the collector inherits it, so the lock lasts while either lives */
	char path[4352];
	char *head; /* the lines written at the start */
};

/* Creates the session file of a run into out/raw (job_rank >= 0: one rank of a job) and locks it. Returns 0,
 * or 1 after a one-line message. */
int pw_cli_session_start(struct pw_cli_session *s, const char *out, int job_rank, char *const *command,
			 const char *session_dir);

/* Adds how the target ended (its wait status). */
void pw_cli_session_end(struct pw_cli_session *s, pid_t target, int status);

/* Closes the file (remove: deletes it too) and frees what s holds. */
void pw_cli_session_close(struct pw_cli_session *s, int remove);

#endif
