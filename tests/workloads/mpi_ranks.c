/* An MPI workload with known figures. Each iteration makes, on every rank: Allreduce (1024 ints), Barrier,
 * Bcast from root 0 (256 doubles), a ring Send/Recv of 1000 ints (even ranks send first), an Isend/Irecv
 * pair completed by Waitall, Allgather, Alltoall, Reduce_scatter_block, Scan, Sendrecv, Reduce to root 0,
 * Allgatherv, Alltoallv, Reduce_scatter, and an Irecv/Isend pair completed by Waitany then Wait. Odd
 * iterations use MPI_IN_PLACE for Allgather, Allgatherv and Alltoall (the send count and type are then
 * garbage, as MPI allows), and receive with an explicit source and MPI_STATUS_IGNORE where even iterations
 * receive from MPI_ANY_SOURCE (Recv and Irecv) with a status; the receive buffers are larger than what
 * arrives, so bytes taken from the status and from the buffer's size differ.
 *
 * Every rank checks what it received and prints one JSON line (one write) with its own counters, computed
 * as profwrap records MPI calls (common/pw_record.h, PW_K_MPI_*): per call the count, the bytes, and for
 * point-to-point calls the peers; and the bytes it read from a file of its own. A test compares them with
 * the reports exactly, and the lines with and without profwrap.
 *
 * usage: mpi_ranks [--iters N] [--read-bytes B] [--slow-rank R --delay-ms D] [--init-thread]
 *   --read-bytes B   each rank writes a file of B x (rank + 1) bytes in the current directory, reads it back
 *                    with read(2) in 4096-byte chunks, and removes it
 *   --slow-rank R    rank R sleeps D ms (--delay-ms) before each Allreduce: the others wait for it there
 *   --init-thread    MPI_Init_thread(MPI_THREAD_FUNNELED) instead of MPI_Init */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum call {
	C_INIT, C_INIT_THREAD, C_FINALIZE, C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_ALLGATHER, C_ALLGATHERV,
	C_ALLTOALL, C_ALLTOALLV, C_REDUCE_SCATTER, C_REDUCE_SCATTER_BLOCK, C_SCAN, C_SEND, C_RECV, C_ISEND,
	C_IRECV, C_SENDRECV, C_WAIT, C_WAITALL, C_WAITANY, C_COUNT
};

static const char *const call_names[C_COUNT] = {
	"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce",
	"MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Reduce_scatter",
	"MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Sendrecv",
	"MPI_Wait", "MPI_Waitall", "MPI_Waitany",
};

#define MAX_RANKS 64
#define PEER_SLOTS (MAX_RANKS + 1) /* peer -1 (any source) and 0..MAX_RANKS-1 */

static struct {
	long count;
	long long bytes;
	long peers[PEER_SLOTS];
} calls[C_COUNT];

static int rank, size, failures;

static void note(enum call c, long long bytes)
{
	calls[c].count++;
	calls[c].bytes += bytes;
}

static void note_peer(enum call c, long long bytes, int peer)
{
	note(c, bytes);
	calls[c].peers[peer + 1]++;
}

static void expect(int ok, const char *what, int iter)
{
	if (!ok) {
		fprintf(stderr, "mpi_ranks: rank %d iteration %d: wrong %s\n", rank, iter, what);
		failures++;
	}
}

static void die(const char *what)
{
	perror(what);
	MPI_Abort(MPI_COMM_WORLD, 2);
	exit(2);
}

static char file_path[64];
static long reads;

/* Writes a file of n bytes and reads it back in 4096-byte chunks (counted in reads, the last one at the end of
 * the file); returns the bytes read. */
static long long read_own_file(long long n)
{
	char *path = file_path, buf[4096];
	snprintf(file_path, sizeof file_path, "mpi_ranks.%d.dat", rank);
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0)
		die("open for writing");
	memset(buf, 'a' + rank % 26, sizeof buf);
	for (long long left = n; left > 0;) {
		size_t chunk = left < (long long)sizeof buf ? (size_t)left : sizeof buf;
		if (write(fd, buf, chunk) != (ssize_t)chunk)
			die("write");
		left -= (long long)chunk;
	}
	close(fd);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open for reading");
	long long got = 0;
	ssize_t k;
	while (reads++, (k = read(fd, buf, sizeof buf)) > 0)
		got += k;
	if (k < 0)
		die("read");
	close(fd);
	unlink(path);
	return got;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void iteration(int it, int slow_rank, long delay_ms)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int in_place = it % 2 == 1;
	MPI_Status st;

	/* Allreduce: 1024 ints. */
	static int ar_in[1024], ar_out[1024];
	for (int i = 0; i < 1024; i++)
		ar_in[i] = rank + i + it;
	if (rank == slow_rank)
		sleep_ms(delay_ms);
	MPI_Allreduce(ar_in, ar_out, 1024, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	note(C_ALLREDUCE, 1024 * sizeof(int));
	expect(ar_out[7] == size * (7 + it) + size * (size - 1) / 2, "Allreduce result", it);

	MPI_Barrier(MPI_COMM_WORLD);
	note(C_BARRIER, 0);

	/* Bcast from root 0: 256 doubles; every rank counts what the root sends. */
	static double bc[256];
	for (int i = 0; i < 256; i++)
		bc[i] = rank == 0 ? i * 0.5 + it : -1;
	MPI_Bcast(bc, 256, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	note(C_BCAST, 256 * sizeof(double));
	expect(bc[255] == 255 * 0.5 + it, "Bcast result", it);

	/* Ring: 1000 ints to next, received into a buffer of 1024 (from any source with a status on even
	 * iterations: 4000 bytes and the actual source; from prev, status ignored, on odd ones: the buffer's
	 * 4096 bytes). */
	static int ring_out[1000], ring_in[1024];
	for (int i = 0; i < 1000; i++)
		ring_out[i] = rank * 1000 + i;
	for (int turn = 0; turn < 2; turn++) {
		if ((rank % 2 == 0) == (turn == 0)) {
			MPI_Send(ring_out, 1000, MPI_INT, next, 1, MPI_COMM_WORLD);
			note_peer(C_SEND, 1000 * sizeof(int), next);
		} else if (!in_place) {
			MPI_Recv(ring_in, 1024, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
			int n = -1;
			MPI_Get_count(&st, MPI_INT, &n);
			expect(n == 1000 && st.MPI_SOURCE == prev, "Recv status", it);
			note_peer(C_RECV, 1000 * sizeof(int), st.MPI_SOURCE);
		} else {
			MPI_Recv(ring_in, 1024, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			note_peer(C_RECV, 1024 * sizeof(int), prev);
		}
	}
	expect(ring_in[999] == prev * 1000 + 999, "Recv data", it);

	/* Isend/Irecv pair, Waitall: 500 doubles each way; the Irecv buffer is 600. */
	static double nb_out[500], nb_in[600];
	for (int i = 0; i < 500; i++)
		nb_out[i] = rank + i * 0.25;
	MPI_Request req[2];
	int src = in_place ? prev : MPI_ANY_SOURCE;
	MPI_Irecv(nb_in, 600, MPI_DOUBLE, src, 2, MPI_COMM_WORLD, &req[0]);
	note_peer(C_IRECV, 600 * sizeof(double), src == MPI_ANY_SOURCE ? -1 : src);
	MPI_Isend(nb_out, 500, MPI_DOUBLE, next, 2, MPI_COMM_WORLD, &req[1]);
	note_peer(C_ISEND, 500 * sizeof(double), next);
	MPI_Status sts[2]; /* not MPI_STATUSES_IGNORE: gcc 12 takes MPICH's (MPI_Status *)1 for an empty array */
	MPI_Waitall(2, req, sts);
	note(C_WAITALL, 0);
	expect(nb_in[499] == prev + 499 * 0.25, "Isend/Irecv data", it);

	/* Allgather: 16 ints per rank (in place: the rank's block is already in the receive buffer). */
	static int ag[MAX_RANKS * 16], ag_out[16];
	for (int i = 0; i < 16; i++)
		ag[rank * 16 + i] = ag_out[i] = rank * 100 + i + it;
	if (in_place)
		MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, 16, MPI_INT, MPI_COMM_WORLD);
	else
		MPI_Allgather(ag_out, 16, MPI_INT, ag, 16, MPI_INT, MPI_COMM_WORLD);
	note(C_ALLGATHER, 16 * sizeof(int));
	expect(ag[prev * 16 + 15] == prev * 100 + 15 + it, "Allgather result", it);

	/* Alltoall: 8 doubles to every rank, itself included. */
	static double a2a_out[MAX_RANKS * 8], a2a_in[MAX_RANKS * 8];
	for (int j = 0; j < size; j++)
		for (int i = 0; i < 8; i++)
			a2a_out[j * 8 + i] = a2a_in[j * 8 + i] = rank * 1000 + j * 10 + i;
	if (in_place)
		MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a2a_in, 8, MPI_DOUBLE, MPI_COMM_WORLD);
	else
		MPI_Alltoall(a2a_out, 8, MPI_DOUBLE, a2a_in, 8, MPI_DOUBLE, MPI_COMM_WORLD);
	note(C_ALLTOALL, 8LL * sizeof(double) * size);
	expect(a2a_in[prev * 8 + 7] == prev * 1000 + rank * 10 + 7, "Alltoall result", it);

	/* Reduce_scatter_block: 32 ints per rank, of a vector of 32 x size. */
	static int rsb_in[MAX_RANKS * 32], rsb_out[32];
	for (int i = 0; i < 32 * size; i++)
		rsb_in[i] = i;
	MPI_Reduce_scatter_block(rsb_in, rsb_out, 32, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	note(C_REDUCE_SCATTER_BLOCK, 32LL * sizeof(int) * size);
	expect(rsb_out[3] == size * (rank * 32 + 3), "Reduce_scatter_block result", it);

	/* Scan: 64 long longs. */
	static long long sc_in[64], sc_out[64];
	for (int i = 0; i < 64; i++)
		sc_in[i] = rank + 1;
	MPI_Scan(sc_in, sc_out, 64, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	note(C_SCAN, 64 * sizeof(long long));
	expect(sc_out[63] == (long long)(rank + 1) * (rank + 2) / 2, "Scan result", it);

	/* Sendrecv: 100 shorts to next, from prev into a buffer of 128 (status on even iterations). */
	static short sr_out[100], sr_in[128];
	for (int i = 0; i < 100; i++)
		sr_out[i] = (short)(rank * 100 + i);
	if (!in_place) {
		MPI_Sendrecv(sr_out, 100, MPI_SHORT, next, 3, sr_in, 128, MPI_SHORT, prev, 3, MPI_COMM_WORLD, &st);
		note_peer(C_SENDRECV, 100 * sizeof(short) + 100 * sizeof(short), next);
	} else {
		MPI_Sendrecv(sr_out, 100, MPI_SHORT, next, 3, sr_in, 128, MPI_SHORT, prev, 3, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		note_peer(C_SENDRECV, 100 * sizeof(short) + 128 * sizeof(short), next);
	}
	expect(sr_in[99] == prev * 100 + 99, "Sendrecv data", it);

	/* Reduce to root 0: 128 floats. */
	static float rd_in[128], rd_out[128];
	for (int i = 0; i < 128; i++)
		rd_in[i] = 1.0f;
	MPI_Reduce(rd_in, rd_out, 128, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
	note(C_REDUCE, 128 * sizeof(float));
	expect(rank != 0 || rd_out[127] == (float)size, "Reduce result", it);

	/* Allgatherv: rank i contributes i + 1 ints. */
	static int agv[MAX_RANKS * (MAX_RANKS + 1) / 2], agv_out[MAX_RANKS], agv_counts[MAX_RANKS],
		agv_displs[MAX_RANKS];
	for (int j = 0, d = 0; j < size; j++) {
		agv_counts[j] = j + 1;
		agv_displs[j] = d;
		d += j + 1;
	}
	for (int i = 0; i <= rank; i++)
		agv[agv_displs[rank] + i] = agv_out[i] = rank * 10 + i + it;
	if (in_place)
		MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, agv, agv_counts, agv_displs, MPI_INT,
			       MPI_COMM_WORLD);
	else
		MPI_Allgatherv(agv_out, rank + 1, MPI_INT, agv, agv_counts, agv_displs, MPI_INT, MPI_COMM_WORLD);
	note(C_ALLGATHERV, (rank + 1) * (long long)sizeof(int));
	expect(agv[agv_displs[prev] + prev] == prev * 10 + prev + it, "Allgatherv result", it);

	/* Alltoallv: j + 1 chars to rank j; rank + 1 from each. */
	static char a2v_out[MAX_RANKS * (MAX_RANKS + 1) / 2], a2v_in[MAX_RANKS * MAX_RANKS];
	static int sc[MAX_RANKS], sd[MAX_RANKS], rc[MAX_RANKS], rdsp[MAX_RANKS];
	long long a2v_bytes = 0;
	for (int j = 0, d = 0; j < size; j++) {
		sc[j] = j + 1;
		sd[j] = d;
		d += j + 1;
		rc[j] = rank + 1;
		rdsp[j] = j * (rank + 1);
		a2v_bytes += j + 1;
		for (int i = 0; i <= j; i++)
			a2v_out[sd[j] + i] = (char)(rank + 1);
	}
	MPI_Alltoallv(a2v_out, sc, sd, MPI_CHAR, a2v_in, rc, rdsp, MPI_CHAR, MPI_COMM_WORLD);
	note(C_ALLTOALLV, a2v_bytes);
	expect(a2v_in[prev * (rank + 1) + rank] == (char)(prev + 1), "Alltoallv result", it);

	/* Reduce_scatter: rank i gets 2 (i + 1) doubles of the reduced vector. */
	static double rs_in[MAX_RANKS * (MAX_RANKS + 1)], rs_out[2 * MAX_RANKS];
	static int rs_counts[MAX_RANKS];
	long long rs_total = 0;
	for (int j = 0; j < size; j++) {
		rs_counts[j] = 2 * (j + 1);
		rs_total += rs_counts[j];
	}
	for (long long i = 0; i < rs_total; i++)
		rs_in[i] = 1.0;
	MPI_Reduce_scatter(rs_in, rs_out, rs_counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	note(C_REDUCE_SCATTER, rs_total * (long long)sizeof(double));
	expect(rs_out[2 * rank + 1] == size, "Reduce_scatter result", it);

	/* Waitany then Wait: 64 ints each way. */
	static int wa_out[64], wa_in[64];
	for (int i = 0; i < 64; i++)
		wa_out[i] = rank + i;
	MPI_Irecv(wa_in, 64, MPI_INT, prev, 4, MPI_COMM_WORLD, &req[0]);
	note_peer(C_IRECV, 64 * sizeof(int), prev);
	MPI_Isend(wa_out, 64, MPI_INT, next, 4, MPI_COMM_WORLD, &req[1]);
	note_peer(C_ISEND, 64 * sizeof(int), next);
	int idx = -1;
	MPI_Waitany(2, req, &idx, MPI_STATUS_IGNORE);
	note(C_WAITANY, 0);
	expect(idx == 0 || idx == 1, "Waitany index", it);
	MPI_Wait(&req[idx == 0 ? 1 : 0], MPI_STATUS_IGNORE);
	note(C_WAIT, 0);
	expect(wa_in[63] == prev + 63, "Waitany/Wait data", it);
}

int main(int argc, char **argv)
{
	long iters = 5, delay_ms = 0;
	long long read_bytes = 0;
	int slow_rank = -1, init_thread = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--init-thread") == 0) {
			init_thread = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "mpi_ranks: %s needs a value\n", a);
			return 2;
		}
		if (strcmp(a, "--iters") == 0)
			iters = atol(v);
		else if (strcmp(a, "--read-bytes") == 0)
			read_bytes = atoll(v);
		else if (strcmp(a, "--slow-rank") == 0)
			slow_rank = atoi(v);
		else if (strcmp(a, "--delay-ms") == 0)
			delay_ms = atol(v);
		else {
			fprintf(stderr, "usage: mpi_ranks [--iters N] [--read-bytes B] [--slow-rank R --delay-ms D] "
					"[--init-thread]\n");
			return 2;
		}
		i++;
	}

	if (init_thread) {
		int provided = -1;
		MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
		note(C_INIT_THREAD, 0);
	} else {
		MPI_Init(&argc, &argv);
		note(C_INIT, 0);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2 || size > MAX_RANKS) {
		if (rank == 0)
			fprintf(stderr, "mpi_ranks: needs 2 to %d ranks, not %d\n", MAX_RANKS, size);
		MPI_Finalize();
		return 2;
	}

	long long got = read_bytes > 0 ? read_own_file(read_bytes * (rank + 1)) : 0;
	for (int it = 0; it < iters; it++)
		iteration(it, slow_rank, delay_ms);
	note(C_FINALIZE, 0); /* made after the line is printed */

	static char line[16384];
	size_t n = 0;
#define OUT(...) (n += (size_t)snprintf(line + n, n < sizeof line ? sizeof line - n : 0, __VA_ARGS__))
	OUT("{\"rank\":%d,\"size\":%d,\"ok\":%s,\"file\":\"%s\",\"reads\":%ld,\"read_bytes\":%lld,\"calls\":{", rank,
	    size, failures ? "false" : "true", file_path, reads, got);
	for (int c = 0, first = 1; c < C_COUNT; c++) {
		if (!calls[c].count)
			continue;
		OUT("%s\"%s\":{\"count\":%ld,\"bytes\":%lld", first ? "" : ",", call_names[c], calls[c].count,
		    calls[c].bytes);
		first = 0;
		int any = 0;
		for (int p = 0; p < PEER_SLOTS; p++) {
			if (!calls[c].peers[p])
				continue;
			OUT("%s\"%d\":%ld", any ? "," : ",\"peers\":{", p - 1, calls[c].peers[p]);
			any = 1;
		}
		OUT("%s}", any ? "}" : "");
	}
	OUT("}}\n");
	if (n >= sizeof line) {
		fprintf(stderr, "mpi_ranks: line too long\n");
		return 2;
	}
	if (write(1, line, n) != (ssize_t)n)
		return 2;
	MPI_Finalize();
	return failures ? 1 : 0;
}
