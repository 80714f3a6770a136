/* The parts of file names that ingest and the reports share (file_names.h). */
#include "file_names.h"

#include <ctype.h>
#include <string.h>

void pw_host_file_part(char *buf, size_t size, const char *host, size_t len)
{
	if (!host || !len) {
		host = "unknown";
		len = strlen(host);
	}
	size_t n = 0;
	for (size_t i = 0; i < len && n + 1 < size && n < 64; i++)
		buf[n++] = (isalnum((unsigned char)host[i]) || host[i] == '.' || host[i] == '-' || host[i] == '_')
				   ? host[i]
				   : '_';
	if (size)
		buf[n] = 0;
}

