/* profwrap-collector: started by the CLI (or, in preload-only mode, by the first profiled process of a job)
 * to serve one session. Not meant to be run by hand; `profwrap report DIR` re-renders reports. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/pw_rank.h"
#include "serve.h"

static void usage(FILE *f)
{
	fputs("usage: profwrap-collector --serve --session-dir DIR --output DIR [--detached] [--control-fd FD]\n"
	      "                          [--ready-fd FD]\n"
	      "                          [--linger-ms MS] [--grace-ms MS] [--quiet]\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"serve", no_argument, 0, 's'},	      {"session-dir", required_argument, 0, 'd'},
		{"output", required_argument, 0, 'o'}, {"detached", no_argument, 0, 'D'},
		{"control-fd", required_argument, 0, 'c'}, {"linger-ms", required_argument, 0, 'l'},
		{"grace-ms", required_argument, 0, 'g'}, {"quiet", no_argument, 0, 'q'},
		{"ready-fd", required_argument, 0, 'r'},
		{"help", no_argument, 0, 'h'},	      {0, 0, 0, 0},
	};
	struct pw_serve_opts o = {.control_fd = -1, .ready_fd = -1, .linger_ms = 1500, .grace_ms = 2000};
	int serve = 0, c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int v = optarg ? pw_parse_nonneg_int(optarg) : 0;
		switch (c) {
		case 's':
			serve = 1;
			break;
		case 'd':
			o.session_dir = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'D':
			o.detached = 1;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'c':
		case 'r':
		case 'l':
		case 'g':
			if (v < 0) {
				fprintf(stderr, "profwrap-collector: --%s needs a non-negative integer, not '%s'\n",
					c == 'c' ? "control-fd" : c == 'r' ? "ready-fd" : c == 'l' ? "linger-ms" : "grace-ms", optarg);
				return 2;
			}
			if (c == 'c')
				o.control_fd = v;
			else if (c == 'r')
				o.ready_fd = v;
			else if (c == 'l')
				o.linger_ms = (uint32_t)v;
			else
				o.grace_ms = (uint32_t)v;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!serve || !o.session_dir || !o.output || optind != argc) {
		usage(stderr);
		return 2;
	}
	return pw_serve(&o);
}
