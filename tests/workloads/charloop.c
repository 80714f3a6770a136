/* A workload of stdio's character calls, with known figures: it copies IN to OUT one byte at a time, the
 * first third with getc/putc, the second with fgetc/fputc (pushing every 500th byte back with ungetc and
 * reading it again), the rest with the inline getc_unlocked/putc_unlocked under flockfile, and after every
 * 1,000th byte writes "<>" with fputs (a recorded call amid character calls); then copies stdin to stdout
 * with getchar/putchar, reads the numbers of NUMBERS with fscanf to the end, and writes their count and sum
 * to stdout with dprintf. Every byte of IN, stdin and NUMBERS is read and every byte of OUT and stdout is
 * written, so the files' sizes are the figures a report must give.
 *
 * usage: charloop IN OUT NUMBERS */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void put_checked(int c, FILE *out, long *copied)
{
	if (c == EOF)
		die("write");
	if (++*copied % 1000 == 0 && fputs("<>", out) == EOF)
		die("fputs");
}

static void copy_file(FILE *in, FILE *out, long size)
{
	long copied = 0;
	int c;
	while (copied < size / 3 && (c = getc(in)) != EOF)
		put_checked(putc(c, out), out, &copied);
	while (copied < 2 * (size / 3) && (c = fgetc(in)) != EOF) {
		if (copied % 500 == 0) {
			if (ungetc(c, in) == EOF)
				die("ungetc");
			c = fgetc(in);
		}
		put_checked(fputc(c, out), out, &copied);
	}
	flockfile(in);
	flockfile(out);
	while ((c = getc_unlocked(in)) != EOF)
		put_checked(putc_unlocked(c, out), out, &copied);
	funlockfile(out);
	funlockfile(in);
}

static void sum_numbers(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die(path);
	long v, n = 0, sum = 0;
	while (fscanf(f, "%ld", &v) == 1)
		n++, sum += v;
	fclose(f);
	if (fflush(stdout) == EOF || dprintf(1, "numbers %ld sum %ld\n", n, sum) < 0)
		die("dprintf");
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: charloop IN OUT NUMBERS\n");
		return 2;
	}
	FILE *in = fopen(argv[1], "r"), *out = fopen(argv[2], "w");
	struct stat st;
	if (!in || !out || fstat(fileno(in), &st) < 0)
		die("open");
	copy_file(in, out, (long)st.st_size);
	if (fclose(in) || fclose(out))
		die("close");
	int c;
	while ((c = getchar()) != EOF)
		if (putchar(c) == EOF)
			die("putchar");
	sum_numbers(argv[3]);
	return 0;
}
