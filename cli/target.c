/* Whether LD_PRELOAD can apply to the command: the file execvp() would run, followed through "#!"
 * interpreters as the kernel does. It cannot when no dynamic loader starts the program (an ELF file without
 * a program interpreter: statically linked), or when the loader runs in secure mode (AT_SECURE: the exec
 * changes the process's user or group id, or gives it file capabilities), where it ignores a preload path
 * with a slash in it. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli.h"

/* The kernel follows at most this many interpreters (BINPRM_MAX_RECURSION) and reads this much of a file
 * for "#!" (BINPRM_BUF_SIZE). */
#define MAX_INTERPRETERS 4
#define SHEBANG_MAX 256

/* As execvp: file itself when it names a path, else the first executable regular file of that name in
 * PATH (libc's default path when PATH is unset). Returns 0 with path set, -1 when none is found. */
static int find_command(const char *file, char *path, size_t size)
{
	if (strchr(file, '/'))
		return snprintf(path, size, "%s", file) < (int)size ? 0 : -1;
	const char *dirs = getenv("PATH");
	if (!dirs)
		dirs = "/bin:/usr/bin";
	while (1) {
		size_t len = strcspn(dirs, ":");
		struct stat st;
		/* an empty entry is the current directory */
		if (snprintf(path, size, "%.*s%s%s", (int)len, dirs, len ? "/" : "", file) < (int)size &&
		    access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
		if (!dirs[len])
			return -1;
		dirs += len + 1;
	}
}

/* Whether an ELF file has a program interpreter (PT_INTERP), or is a shared object with a name (DT_SONAME:
 * the dynamic loader itself, run as `ld.so PROGRAM`, applies LD_PRELOAD). 1: the loader applies it, 0: the
 * file is statically linked, -1: not an ELF file of this machine's byte order, or unreadable. */
static int elf_dynamic(int fd)
{
	union {
		unsigned char ident[EI_NIDENT];
		Elf32_Ehdr e32;
		Elf64_Ehdr e64;
	} h;
	if (pread(fd, &h, sizeof h, 0) < (ssize_t)sizeof h.e32 || memcmp(h.ident, ELFMAG, SELFMAG) != 0)
		return -1;
	int is64 = h.ident[EI_CLASS] == ELFCLASS64;
	unsigned char native = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
	if ((!is64 && h.ident[EI_CLASS] != ELFCLASS32) || h.ident[EI_DATA] != native)
		return -1;
	uint64_t phoff = is64 ? h.e64.e_phoff : h.e32.e_phoff;
	unsigned phnum = is64 ? h.e64.e_phnum : h.e32.e_phnum;
	unsigned phentsize = is64 ? h.e64.e_phentsize : h.e32.e_phentsize;
	unsigned type = is64 ? h.e64.e_type : h.e32.e_type;
	if (phentsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || phnum > 4096)
		return -1;
	uint64_t dyn_off = 0, dyn_size = 0;
	for (unsigned i = 0; i < phnum; i++) {
		union {
			Elf32_Phdr p32;
			Elf64_Phdr p64;
		} ph;
		if (pread(fd, &ph, phentsize < sizeof ph ? phentsize : sizeof ph, (off_t)(phoff + (uint64_t)i * phentsize)) <
		    (ssize_t)(is64 ? sizeof ph.p64 : sizeof ph.p32))
			return -1;
		unsigned pt = is64 ? ph.p64.p_type : ph.p32.p_type;
		if (pt == PT_INTERP)
			return 1;
		if (pt == PT_DYNAMIC) {
			dyn_off = is64 ? ph.p64.p_offset : ph.p32.p_offset;
			dyn_size = is64 ? ph.p64.p_filesz : ph.p32.p_filesz;
		}
	}
	if (type != ET_DYN || !dyn_size)
		return 0;
	/* A static PIE is ET_DYN with a PT_DYNAMIC too, but no DT_SONAME. */
	size_t entsize = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	for (uint64_t k = 0; (k + 1) * entsize <= dyn_size && k < 4096; k++) {
		union {
			Elf32_Dyn d32;
			Elf64_Dyn d64;
		} d;
		if (pread(fd, &d, entsize, (off_t)(dyn_off + k * entsize)) < (ssize_t)entsize)
			return 0;
		int64_t tag = is64 ? d.d64.d_tag : d.d32.d_tag;
		if (tag == DT_NULL)
			break;
		if (tag == DT_SONAME)
			return 1;
	}
	return 0;
}

/* Why the loader runs path in secure mode, as what follows "it", into why; 0 when it does not. Set-user-ID and
 * set-group-ID bits count where the kernel honours them (not on a nosuid mount, not under no_new_privs) and
 * change an id. */
static int secure_mode(const char *path, const struct stat *st, char *why, size_t size)
{
	static const char secure[] = "(the loader ignores LD_PRELOAD in secure mode)";
	struct statvfs vfs;
	int honoured = !(statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID)) && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1;
	if (honoured && (st->st_mode & S_ISUID) && st->st_uid != getuid()) {
		snprintf(why, size, "is set-user-ID to uid %u and you are uid %u %s", (unsigned)st->st_uid,
			 (unsigned)getuid(), secure);
		return 1;
	}
	if (honoured && (st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP) && st->st_gid != getgid()) {
		snprintf(why, size, "is set-group-ID to gid %u and your group is gid %u %s", (unsigned)st->st_gid,
			 (unsigned)getgid(), secure);
		return 1;
	}
	/* File capabilities raise a user's capabilities (root has them all: no change, no secure mode). */
	if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0) {
		snprintf(why, size, "has file capabilities %s", secure);
		return 1;
	}
	return 0;
}

/* Whether LD_PRELOAD cannot apply to path (depth interpreters deep); why is then what follows "it" in the
 * message, "is statically linked ...". */
static int check_file(const char *path, int depth, char *why, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return 0; /* not readable here: the exec says what it says */
	}
	if (secure_mode(path, &st, why, size)) {
		close(fd);
		return 1;
	}
	char head[SHEBANG_MAX + 1];
	ssize_t n = pread(fd, head, SHEBANG_MAX, 0);
	int script = n > 2 && head[0] == '#' && head[1] == '!';
	int dynamic = script ? 1 : elf_dynamic(fd);
	close(fd);
	if (dynamic == 0) {
		snprintf(why, size, "is statically linked (no ELF program interpreter)");
		return 1;
	}
	if (!script || depth >= MAX_INTERPRETERS)
		return 0;
	/* "#!interpreter [argument]": the interpreter is what runs */
	head[n] = 0;
	char *interp = head + 2 + strspn(head + 2, " \t");
	interp[strcspn(interp, " \t\n")] = 0;
	char inner[768];
	if (!*interp || !check_file(interp, depth + 1, inner, sizeof inner))
		return 0;
	snprintf(why, size, "runs with the interpreter %s, which %s", interp, inner);
	return 1;
}

int pw_target_check(const char *file, char *why, size_t size)
{
	char path[PATH_MAX], reason[1024];
	if (find_command(file, path, sizeof path) < 0 || !check_file(path, 0, reason, sizeof reason))
		return 0;
	snprintf(why, size, "LD_PRELOAD cannot apply to %s: it %s; it runs unprofiled", path, reason);
	return 1;
}
