/* A workload that reads a file through io_uring, with the system calls made directly (no liburing): it sets
 * up a ring with syscall(__NR_io_uring_setup), reads FILE in 64 KiB pieces with IORING_OP_READ, and prints
 * the bytes the ring read, which neither read() nor the kernel's rchar sees.
 *
 * usage: uring FILE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PIECE 65536

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static void *map(int fd, size_t len, off_t what)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, what);
	return p == MAP_FAILED ? NULL : p;
}

static int ring_setup(struct ring *r)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -1;
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq = map(r->fd, sq_len > cq_len ? sq_len : cq_len, IORING_OFF_SQ_RING);
	char *cq = (p.features & IORING_FEAT_SINGLE_MMAP) ? sq : map(r->fd, cq_len, IORING_OFF_CQ_RING);
	r->sqes = map(r->fd, p.sq_entries * sizeof(struct io_uring_sqe), IORING_OFF_SQES);
	if (!sq || !cq || !r->sqes)
		return -1;
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* Reads len bytes of fd at off through the ring; returns what the kernel says it read, or -errno. */
static int ring_read(struct ring *r, int fd, char *buf, unsigned len, off_t off)
{
	unsigned tail = *r->sq_tail, i = tail & *r->sq_mask;
	struct io_uring_sqe *sqe = &r->sqes[i];
	memset(sqe, 0, sizeof *sqe);
	sqe->opcode = IORING_OP_READ;
	sqe->fd = fd;
	sqe->addr = (unsigned long)buf;
	sqe->len = len;
	sqe->off = (unsigned long long)off;
	r->sq_array[i] = i;
	atomic_store_explicit((_Atomic unsigned *)r->sq_tail, tail + 1, memory_order_release);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -1;
	unsigned head = *r->cq_head;
	if (head == atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire))
		return -1;
	int res = r->cqes[head & *r->cq_mask].res;
	atomic_store_explicit((_Atomic unsigned *)r->cq_head, head + 1, memory_order_release);
	return res;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: uring FILE\n");
		return 2;
	}
	struct ring r;
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ring_setup(&r) < 0) {
		perror("uring: set-up");
		return 1;
	}
	static char buf[PIECE];
	long long total = 0;
	int n;
	while ((n = ring_read(&r, fd, buf, PIECE, total)) > 0)
		total += n;
	if (n < 0) {
		fprintf(stderr, "uring: read: %s\n", strerror(-n));
		return 1;
	}
	printf("uring read %lld bytes\n", total);
	return 0;
}
