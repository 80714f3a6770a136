#define _GNU_SOURCE
#include "pw_record.h"

#include <string.h>

const struct pw_event_info pw_events[PW_EV_COUNT] = {
#define PW_X(id, dom, name, kind) [PW_EV_##id] = {name, PW_DOM_##dom, kind},
	PW_EVENT_LIST(PW_X)
#undef PW_X
};

const char *const pw_domain_names[PW_DOM_COUNT] = {
#define PW_X(id, str) [PW_DOM_##id] = str,
	PW_DOMAIN_LIST(PW_X)
#undef PW_X
};

int pw_domain_from_name(const char *name, size_t len)
{
	for (int d = 0; d < PW_DOM_COUNT; d++)
		if (strlen(pw_domain_names[d]) == len && memcmp(pw_domain_names[d], name, len) == 0)
			return d;
	return -1;
}

size_t pw_range_fold(const char *name, size_t len, char *buf, size_t size)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n + 1 < size; i++) {
		if (name[i] >= '0' && name[i] <= '9') {
			if (n == 0 || buf[n - 1] != '#')
				buf[n++] = '#';
		} else {
			buf[n++] = name[i];
		}
	}
	if (size)
		buf[n] = 0;
	return n;
}
