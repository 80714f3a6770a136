/* Fake libcudnn.so.9, the library programs link: as NVIDIA's, a shim. Every cudnn* function it exports
 * finds its implementation by name, at its first call, in a sub-library it opens with dlopen (NVIDIA's spread
 * over libcudnn_graph, _ops, _cnn, _adv, _ext; the fake's all live in libcudnn_graph.so.9, built from
 * cudnn.c) and jumps to it with the caller's arguments untouched. A profiler that answers dlsym with its own
 * wrapper must cope: this shim's lookup of "cudnnBackendExecute" must not get back a wrapper that calls the
 * shim again.
 *
 * The exported names are the sub-library's (cudnn_shim_names.h, made by fakes.mk from its dynamic symbols);
 * the trampolines are x86-64 assembly, because the shim forwards functions of every signature without
 * declaring any. No public CUDA name is called (tests/fakes/README.md). */
#define _GNU_SOURCE
#if !defined(__x86_64__)
#error "the fake libcudnn.so.9's trampolines are x86-64 assembly"
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SUB_LIBRARY "libcudnn_graph.so.9"

static void *sub_library;
static pthread_once_t sub_once = PTHREAD_ONCE_INIT;

static void open_sub_library(void)
{
	sub_library = dlopen(SUB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
}

/* The implementation of name, kept in *slot; a missing one ends the process, as a broken install of the
 * real library does (it prints and aborts). */
__attribute__((visibility("hidden"), used)) void *fake_cudnn_resolve(const char *name, void **slot)
{
	pthread_once(&sub_once, open_sub_library);
	void *fn = sub_library ? dlsym(sub_library, name) : NULL;
	if (!fn) {
		dprintf(2, "fake libcudnn.so.9: %s not found in " SUB_LIBRARY ": %s\n", name, dlerror());
		abort();
	}
	__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	return fn;
}

/* One exported function: jump to its implementation, resolving it first while keeping the argument
 * registers (the six integer ones and xmm0-7) as the caller set them. */
#define FAKE_CUDNN_FORWARD(name)                                                                           \
	__asm__(".data\n"                                                                                  \
		".p2align 3\n"                                                                             \
		"fwd_slot_" #name ":\n"                                                                    \
		"	.quad 0\n"                                                                         \
		".section .rodata\n"                                                                       \
		"fwd_name_" #name ":\n"                                                                    \
		"	.asciz \"" #name "\"\n"                                                            \
		".text\n"                                                                                  \
		".globl " #name "\n"                                                                       \
		".type " #name ", @function\n" #name ":\n"                                                 \
		"	mov fwd_slot_" #name "(%rip), %rax\n"                                              \
		"	test %rax, %rax\n"                                                                 \
		"	jz 1f\n"                                                                           \
		"	jmp *%rax\n"                                                                       \
		"1:	push %rdi\n"                                                                       \
		"	push %rsi\n"                                                                       \
		"	push %rdx\n"                                                                       \
		"	push %rcx\n"                                                                       \
		"	push %r8\n"                                                                        \
		"	push %r9\n"                                                                        \
		"	sub $136, %rsp\n"                                                                  \
		"	movdqu %xmm0, 0(%rsp)\n"                                                           \
		"	movdqu %xmm1, 16(%rsp)\n"                                                          \
		"	movdqu %xmm2, 32(%rsp)\n"                                                          \
		"	movdqu %xmm3, 48(%rsp)\n"                                                          \
		"	movdqu %xmm4, 64(%rsp)\n"                                                          \
		"	movdqu %xmm5, 80(%rsp)\n"                                                          \
		"	movdqu %xmm6, 96(%rsp)\n"                                                          \
		"	movdqu %xmm7, 112(%rsp)\n"                                                         \
		"	lea fwd_name_" #name "(%rip), %rdi\n"                                              \
		"	lea fwd_slot_" #name "(%rip), %rsi\n"                                              \
		"	call fake_cudnn_resolve\n"                                                         \
		"	movdqu 0(%rsp), %xmm0\n"                                                           \
		"	movdqu 16(%rsp), %xmm1\n"                                                          \
		"	movdqu 32(%rsp), %xmm2\n"                                                          \
		"	movdqu 48(%rsp), %xmm3\n"                                                          \
		"	movdqu 64(%rsp), %xmm4\n"                                                          \
		"	movdqu 80(%rsp), %xmm5\n"                                                          \
		"	movdqu 96(%rsp), %xmm6\n"                                                          \
		"	movdqu 112(%rsp), %xmm7\n"                                                         \
		"	add $136, %rsp\n"                                                                  \
		"	pop %r9\n"                                                                         \
		"	pop %r8\n"                                                                         \
		"	pop %rcx\n"                                                                        \
		"	pop %rdx\n"                                                                        \
		"	pop %rsi\n"                                                                        \
		"	pop %rdi\n"                                                                        \
		"	jmp *%rax\n"                                                                       \
		".size " #name ", .-" #name "\n");

#include "cudnn_shim_names.h"
