/* Parts of the names of the files the collector writes, shared by ingest (raw traces named by host) and the
 * reports (launcher-<host>.*): below both, depending on neither. */
#ifndef PW_FILE_NAMES_H
#define PW_FILE_NAMES_H

#include <stddef.h>

/* A host name (len bytes, not NUL-terminated) as part of a file name: at most 64 bytes of [A-Za-z0-9._-],
 * anything else as '_', "unknown" when empty. Writes a NUL-terminated string into buf. */
void pw_host_file_part(char *buf, size_t size, const char *host, size_t len);

#endif
