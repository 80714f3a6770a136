/* The session files of OUT/raw: one per profwrap run (session.txt, session-<rank>-<host>-<pid>.txt) and per
 * preload-only session (session-o-<hash>.txt) that writes into OUT. Each names its session directory, so that
 * salvage takes only the segments of OUT's runs, and is held locked while its run lives. */
#ifndef PW_SESSION_FILES_H
#define PW_SESSION_FILES_H

#define PW_SESSION_DIR_KEY "session_dir="

/* Whether name, a file of OUT/raw, is a session file. */
int pw_is_session_file(const char *name);

/* Creates path anew (0600, whatever had the name removed first) holding text, and locks it (flock LOCK_EX)
 * through the descriptor returned: the run lives while any copy of that descriptor is open (a child that
 * inherits it keeps the lock after the creator is gone). Returns the descriptor, or -1 with errno set. */
int pw_session_file_create(const char *path, const char *text);

/* Writes text over fd's contents in place, the lock kept: written first, then cut to its length, so that a
 * full disk leaves the old contents rather than none. Returns 0, or -1 with errno set. */
int pw_session_file_rewrite(int fd, const char *text);

/* Whether the session file name in the directory dirfd is held by a run that lives. */
int pw_session_file_held(int dirfd, const char *name);

/* The session directories named by the session files of raw_dir, as a NULL-terminated array (empty when
 * there are none) that pw_session_dirs_free frees. Returns NULL when out of memory. */
char **pw_session_dirs(const char *raw_dir);
void pw_session_dirs_free(char **dirs);

#endif
