/* Parts of the names of the files the collector writes, shared by ingest (raw traces named by host) and the
 * reports (launcher-<host>.*): below both, depending on neither. */
#ifndef PW_FILE_NAMES_H
#define PW_FILE_NAMES_H

#include <stddef.h>

/* A host name (len bytes, not NUL-terminated) as part of a file name: at most 64 bytes of [A-Za-z0-9._-],
 * anything else as '_', "unknown" when empty. Writes a NUL-terminated string into buf. */
void pw_host_file_part(char *buf, size_t size, const char *host, size_t len);

/* The report a raw trace goes to, by its name ("<rank>-<host>-<pid>[.<image>].pwt", "launcher-<host>-<pid>..."):
 * the length of its "<rank>-" or "launcher-<host>-" prefix, which the traces of one report share; 0 for a
 * name of neither form. */
size_t pw_raw_name_group(const char *name);

#endif
