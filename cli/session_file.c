/* The run's session file (session_file.h). */
#define _GNU_SOURCE
#include "session_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collector/lib/session_files.h"

/* Characters no POSIX shell treats specially in a word. */
#define SHELL_SAFE "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./_-"

/* One character inside $'...'. */
static void put_escaped(FILE *f, unsigned char c)
{
	switch (c) {
	case '\n':
		fputs("\\n", f);
		break;
	case '\t':
		fputs("\\t", f);
		break;
	case '\\':
	case '\'':
		fputc('\\', f);
		fputc(c, f);
		break;
	default:
		if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

/* arg as one shell word: bare, in '...', or in $'...' with escapes when it holds control characters (a newline
 * must neither end the session file's line nor cut the report's Command). */
static void put_shell_word(FILE *f, const char *arg)
{
	int control = 0;
	for (const unsigned char *p = (const unsigned char *)arg; *p; p++)
		control |= *p < 0x20 || *p == 0x7f;
	if (*arg && strspn(arg, SHELL_SAFE) == strlen(arg)) {
		fputs(arg, f);
		return;
	}
	fputs(control ? "$'" : "'", f);
	for (const char *p = arg; *p; p++) {
		if (control)
			put_escaped(f, (unsigned char)*p);
		else if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

/* The lines written at the start: the command, shell-quoted, the session directory, this pid and the host. */
static char *session_head(char *const *command, const char *session_dir, const char *host)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fputs("command=", f);
	for (int i = 0; command[i]; i++) {
		if (i)
			fputc(' ', f);
		put_shell_word(f, command[i]);
	}
	fprintf(f, "\n%s%s\ncli_pid=%d\nhost=%s\n", PW_SESSION_DIR_KEY, session_dir, (int)getpid(), host);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

int pw_cli_session_start(struct pw_cli_session *s, const char *out, int job_rank, char *const *command,
			 const char *session_dir)
{
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	host[strcspn(host, "\n")] = 0;
	if (job_rank >= 0) {
		char safe[256];
		snprintf(safe, sizeof safe, "%s", host);
		for (char *h = safe; *h; h++)
			if (*h == '/')
				*h = '_';
		snprintf(s->path, sizeof s->path, "%s/raw/session-%d-%s-%d.txt", out, job_rank, safe, (int)getpid());
	} else {
		snprintf(s->path, sizeof s->path, "%s/raw/session.txt", out);
	}
	s->head = session_head(command, session_dir, host);
	s->fd = s->head ? pw_session_file_create(s->path, s->head) : -1;
	if (s->fd >= 0)
		return 0;
	fprintf(stderr, "profwrap: cannot write %s: %s\n", s->path, s->head ? strerror(errno) : "out of memory");
	free(s->head);
	s->head = NULL;
	return 1;
}

void pw_cli_session_end(struct pw_cli_session *s, pid_t target, int status)
{
	char *text = NULL;
	if (asprintf(&text, "%starget_pid=%d\ntarget_status=%d\n", s->head, (int)target, status) < 0)
		return;
	pw_session_file_rewrite(s->fd, text);
	free(text);
}

void pw_cli_session_close(struct pw_cli_session *s, int remove)
{
	if (remove)
		unlink(s->path);
	close(s->fd);
	s->fd = -1;
	free(s->head);
	s->head = NULL;
}
