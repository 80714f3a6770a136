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


size_t pw_raw_name_group(const char *name)
{
	size_t n = strlen(name);
	if (n < 5 || strcmp(name + n - 4, ".pwt") != 0)
		return 0;
	if (strncmp(name, "launcher-", 9) == 0) {
		const char *last = strrchr(name, '-');
		return last > name + 8 ? (size_t)(last - name) + 1 : 0;
	}
	size_t digits = strspn(name, "0123456789");
	return digits && name[digits] == '-' ? digits + 1 : 0;
}
