/*
 * Preloaded into linux.uml (Debian 12's UML 6.1) so that guest processes keep their whole
 * FPU/vector state on hosts whose XSAVE area is larger than the 832 bytes UML 6.1 knows
 * (AVX-512, AMX: about 11 KiB).  See harness/lab/xstate.py for the why and the tests.
 *
 * UML saves a guest process's FPU state with PTRACE_GETREGSET(NT_X86_XSTATE) into a buffer
 * of its own fixed size (832 bytes, or on some builds the CPU's full XSAVE size, 2,696 bytes
 * with AVX-512 and PKRU) and restores it with PTRACE_SETREGSET.  The host kernel truncates the
 * GET but refuses any SET that is not exactly its own XSAVE size (EFAULT), so the guest dies
 * at its first process.  Here every XSTATE GET reads the full area into a per-pid buffer and
 * hands UML as much of it as UML's buffer holds; every SET lays UML's bytes (up to the host's
 * size) over that pid's last full area and writes the host's size.  The state above 832 bytes (AVX-512, AMX) is thus restored as it
 * was at the last stop, which is exactly what a page fault (UML runs a stub signal handler in
 * the process, which resets the FPU) needs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#define SLOTS 4096
#define MAX_AREA (64 * 1024)

struct slot {
	pid_t pid;
	size_t len;
	unsigned char *area;
};

static struct slot slots[SLOTS];
typedef long (*ptrace_fn)(int, pid_t, void *, void *);
static ptrace_fn real_ptrace;

static struct slot *slot_of(pid_t pid)
{
	size_t i = (size_t)pid % SLOTS;
	for (size_t n = 0; n < SLOTS; n++, i = (i + 1) % SLOTS) {
		if (slots[i].pid == pid || slots[i].pid == 0) {
			slots[i].pid = pid;
			return &slots[i];
		}
	}
	/* table full (never with the lab's few hundred processes): take the home slot */
	i = (size_t)pid % SLOTS;
	slots[i].pid = pid;
	slots[i].len = 0;
	return &slots[i];
}

/* Read the pid's full XSAVE area into its slot; the kernel sets iov_len to its real size. */
static long read_full(pid_t pid, struct slot *s)
{
	if (s->area == NULL && (s->area = malloc(MAX_AREA)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	struct iovec full = {s->area, MAX_AREA};
	long r = real_ptrace(PTRACE_GETREGSET, pid, (void *)(long)NT_X86_XSTATE, &full);
	if (r == 0)
		s->len = full.iov_len;
	return r;
}

long ptrace(enum __ptrace_request request, ...)
{
	va_list ap;
	va_start(ap, request);
	pid_t pid = va_arg(ap, pid_t);
	void *addr = va_arg(ap, void *);
	void *data = va_arg(ap, void *);
	va_end(ap);
	if (real_ptrace == NULL)
		real_ptrace = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
	if ((long)addr != NT_X86_XSTATE || (request != PTRACE_GETREGSET && request != PTRACE_SETREGSET))
		return real_ptrace((int)request, pid, addr, data);

	struct iovec *iov = data;
	struct slot *s = slot_of(pid);
	if (request == PTRACE_GETREGSET) {
		long r = read_full(pid, s);
		if (r != 0)
			return r;
		size_t n = iov->iov_len < s->len ? iov->iov_len : s->len;
		memcpy(iov->iov_base, s->area, n);
		iov->iov_len = n;
		return 0;
	}
	/* a pid UML never read (a new process): start from its current full state */
	if (s->len == 0 && read_full(pid, s) != 0)
		return -1;
	/* UML's buffer may also be larger than the host's area (a UML sized for every feature the
	 * CPU has, on a host kernel that enables fewer): the bytes past the host's size were never
	 * filled by a GET and name no state the host keeps, so only the host's size is written. */
	size_t n = iov->iov_len < s->len ? iov->iov_len : s->len;
	memcpy(s->area, iov->iov_base, n);
	struct iovec full = {s->area, s->len};
	return real_ptrace(PTRACE_SETREGSET, pid, (void *)(long)NT_X86_XSTATE, &full);
}
