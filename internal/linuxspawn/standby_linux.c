//go:build linux && cgo

// Standbys: a child cloned ahead of its command, which takes every step of
// the spawn that does not depend on the command (cgroup, session, mount
// namespace, limits, no_new_privs, Landlock, capabilities, signal handlers),
// and then waits for ls_standby_exec to hand it the command, its stdio and
// its working directory. The call that uses it pays for the last steps and
// the execve only; the clone and the rest were paid for beforehand, off the
// call's path.
//
// A standby shares the host's memory (CLONE_VM) and descriptor table
// (CLONE_FILES) while it waits, without suspending the thread that cloned it
// as a vfork child would. So it never touches the C library's per-thread
// state (errno is the cloning thread's): every step is a raw system call.
// It unshares the descriptor table before it touches a descriptor of its
// own. The kernel clears sb_state and wakes its waiters when the standby's
// execve lets go of the shared memory, or when it exits
// (CLONE_CHILD_CLEARTID), so the caller learns of either without a
// descriptor.

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn_linux.h"

#if defined(__x86_64__) || defined(__aarch64__)
#define HAVE_RAW 1
#endif

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_RT 1
#define IOPRIO_CLASS_BE 2
#define IOPRIO_WHO_PROCESS 1
#define KSIGSETSIZE ((_NSIG - 1) / 8)

int ls_standby_supported(void) {
#ifdef HAVE_RAW
	return 1;
#else
	return 0;
#endif
}

#ifdef HAVE_RAW

// raw makes a system call and returns its result, -errno on failure,
// touching no memory but its arguments'.
static long raw(long n, long a, long b, long c, long d, long e, long f) {
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#else
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
#endif
}

#define SC0(n) raw(n, 0, 0, 0, 0, 0, 0)
#define SC1(n, a) raw(n, (long)(a), 0, 0, 0, 0, 0)
#define SC2(n, a, b) raw(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define SC3(n, a, b, c) raw(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SC4(n, a, b, c, d) raw(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

__attribute__((noreturn)) static void sb_fail(struct ls_req *r, int stage, long err) {
	r->err = (int)err;
	r->stage = stage;
	for (;;)
		SC1(SYS_exit_group, 127);
}

// sb_check fails the standby at stage when ret is an error.
static long sb_check(struct ls_req *r, int stage, long ret) {
	if (ret < 0)
		sb_fail(r, stage, -ret);
	return ret;
}

static void sb_futex_wake(volatile int *addr) {
	SC3(SYS_futex, addr, FUTEX_WAKE, 1);
}

// sb_prepare takes the child's steps that do not depend on the command, in
// the order child_main takes them.
static void sb_prepare(struct ls_req *r) {
	long ret;
	int i;

	if (r->cgroup_fd >= 0) {
		do {
			ret = SC3(SYS_write, r->cgroup_fd, "0", 1);
		} while (ret == -EINTR);
		if (ret != 1)
			sb_fail(r, LS_STAGE_CGROUP, ret < 0 ? -ret : EIO);
	}
	sb_check(r, LS_STAGE_SETSID, SC0(SYS_setsid));
	if (r->join_mntns >= 0)
		sb_check(r, LS_STAGE_MOUNT, SC2(SYS_setns, r->join_mntns, CLONE_NEWNS));
	for (i = 0; i < r->nrlimits; i++) {
		uint64_t rl[2] = {r->rlimits[i].cur, r->rlimits[i].max};
		sb_check(r, LS_STAGE_SETRLIMIT, SC4(SYS_prlimit64, 0, r->rlimits[i].resource, rl, 0));
	}
	if (r->pdeathsig > 0) {
		sb_check(r, LS_STAGE_PDEATHSIG, SC2(SYS_prctl, PR_SET_PDEATHSIG, r->pdeathsig));
		if (!r->new_pidns && SC0(SYS_getppid) != r->parent_pid)
			sb_fail(r, LS_STAGE_PDEATHSIG, ESRCH);
	}
	if (r->normal_scheduling) {
		long policy = sb_check(r, LS_STAGE_SCHEDULING, SC1(SYS_sched_getscheduler, 0));
		policy &= ~(long)SCHED_RESET_ON_FORK;
		if (policy == SCHED_FIFO || policy == SCHED_RR) {
			int normal = 0; // struct sched_param
			sb_check(r, LS_STAGE_SCHEDULING, SC3(SYS_sched_setscheduler, 0, SCHED_OTHER, &normal));
		}
		long ioprio = SC2(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
		if (ioprio != -ENOSYS) {
			sb_check(r, LS_STAGE_SCHEDULING, ioprio);
			if ((ioprio >> IOPRIO_CLASS_SHIFT) == IOPRIO_CLASS_RT)
				sb_check(r, LS_STAGE_SCHEDULING,
					 SC3(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_CLASS_BE << IOPRIO_CLASS_SHIFT | 4));
		}
	}
	if (r->no_new_privs)
		sb_check(r, LS_STAGE_NO_NEW_PRIVS, SC2(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1));
	if (r->landlock_fd >= 0)
		sb_check(r, LS_STAGE_LANDLOCK, SC2(SYS_landlock_restrict_self, r->landlock_fd, 0));
	if (r->drop_caps) {
		struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
		if (!r->bounding_inherited) {
			for (i = 0; i < 64; i++) {
				if (r->keep_caps & (1ULL << i))
					continue;
				ret = SC2(SYS_prctl, PR_CAPBSET_DROP, i);
				if (ret == -EINVAL || ret == -EPERM)
					break;
				sb_check(r, LS_STAGE_CAPABILITIES, ret);
			}
		}
		ret = raw(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0);
		if (ret != -EINVAL)
			sb_check(r, LS_STAGE_CAPABILITIES, ret);
		sb_check(r, LS_STAGE_CAPABILITIES, SC2(SYS_capget, &hdr, data));
		for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
			uint32_t keep = (uint32_t)(r->keep_caps >> (32 * i));
			data[i].effective &= keep;
			data[i].permitted &= keep;
			data[i].inheritable = 0;
		}
		sb_check(r, LS_STAGE_CAPABILITIES, SC2(SYS_capset, &hdr, data));
	}
	// Every handler back to the default, the ignored ones kept; the mask
	// stays full until the command is at hand.
	for (i = 1; i < _NSIG; i++) {
		unsigned long old[8], act[8];
		if (i == SIGKILL || i == SIGSTOP)
			continue;
		memset(act, 0, sizeof act);
		ret = SC4(SYS_rt_sigaction, i, act, old, KSIGSETSIZE);
		if (ret == -EINVAL)
			continue;
		sb_check(r, LS_STAGE_SIGNALS, ret);
		if (old[0] == (unsigned long)SIG_IGN) {
			act[0] = (unsigned long)SIG_IGN;
			sb_check(r, LS_STAGE_SIGNALS, SC4(SYS_rt_sigaction, i, act, 0, KSIGSETSIZE));
		}
	}
}

// sb_stdio places r->stdio at 0, 1, 2, as child_main does.
static void sb_stdio(struct ls_req *r) {
	int i, src[3];

	for (i = 0; i < 3; i++) {
		src[i] = r->stdio[i];
		if (src[i] >= 0 && src[i] < 3 && src[i] != i)
			src[i] = (int)sb_check(r, LS_STAGE_DUP2, SC3(SYS_fcntl, src[i], F_DUPFD_CLOEXEC, 3));
	}
	for (i = 0; i < 3; i++) {
		if (src[i] < 0)
			SC1(SYS_close, i);
		else if (src[i] == i)
			sb_check(r, LS_STAGE_DUP2, SC3(SYS_fcntl, i, F_SETFD, 0));
		else
			sb_check(r, LS_STAGE_DUP2, SC3(SYS_dup3, src[i], i, 0));
	}
}

static int standby_main(void *arg) {
	struct ls_req *r = arg;

	sb_prepare(r);
	SC2(SYS_prctl, PR_SET_NAME, "sandboxexec-sb");
	__atomic_store_n(&r->sb_state, 1, __ATOMIC_SEQ_CST);
	sb_futex_wake(&r->sb_state);
	// The parent-death signal is the spawning thread's, and comes only if
	// that thread was still there at the prctl: a host that exits as a
	// standby starts would leave it waiting, holding the host's
	// descriptors. So a standby also looks at the host each second.
	while (__atomic_load_n(&r->sb_go, __ATOMIC_ACQUIRE) == 0) {
		struct timespec second = {1, 0}, now = {0, 0};
		if (SC4(SYS_futex, &r->sb_go, FUTEX_WAIT, 0, &second) == -ETIMEDOUT && r->sb_host_pidfd >= 0) {
			struct pollfd host = {r->sb_host_pidfd, POLLIN, 0};
			if (raw(SYS_ppoll, (long)&host, 1, (long)&now, 0, KSIGSETSIZE, 0) != 0)
				SC1(SYS_exit_group, 0);
		}
	}

	// A descriptor table of its own, with nothing of the host's but what
	// closes at execve, before stdio is put in place.
	sb_check(r, LS_STAGE_CLOSE_RANGE,
		 SC3(SYS_close_range, 3, ~0U, CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC));
	sb_stdio(r);
	if (r->dir != NULL)
		sb_check(r, LS_STAGE_CHDIR, SC1(SYS_chdir, r->dir));
	{
		unsigned long empty[8];
		memset(empty, 0, sizeof empty);
		sb_check(r, LS_STAGE_SIGNALS, SC4(SYS_rt_sigprocmask, SIG_SETMASK, empty, 0, KSIGSETSIZE));
	}
	if (r->filter_len > 0) {
		struct sock_fprog prog = {.len = r->filter_len, .filter = (struct sock_filter *)r->filter};
		sb_check(r, LS_STAGE_SECCOMP, SC3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog));
	}
	r->sb_execing = 1;
	sb_fail(r, LS_STAGE_EXECVE, -SC3(SYS_execve, r->path, r->argv, r->envp));
	return 0;
}

#endif // HAVE_RAW

// release lets go of what the host kept for a standby that no longer waits.
static void release(struct ls_req *r) {
	if (r->sb_host_pidfd >= 0)
		close(r->sb_host_pidfd);
	r->sb_host_pidfd = -1;
	ls_put_stack(r->sb_stack);
	r->sb_stack = NULL;
}

// reap waits for the standby to be gone and lets go of what it held.
static void reap(struct ls_req *r) {
	int status;

	while (waitpid(r->pid, &status, __WALL) < 0 && errno == EINTR)
		;
	if (r->pidfd >= 0)
		close(r->pidfd);
	r->pidfd = -1;
	release(r);
}

// wait_state waits while r->sb_state is from, and returns what it became.
static int wait_state(struct ls_req *r, int from) {
	int s;

	while ((s = __atomic_load_n(&r->sb_state, __ATOMIC_ACQUIRE)) == from)
		syscall(SYS_futex, &r->sb_state, FUTEX_WAIT, from, NULL, NULL, 0);
	return s;
}

// ls_standby_start clones a standby from the calling thread (a spawning
// thread's, through ls_pool_start) and waits until it is ready. It returns 0
// with r->pid, r->pidfd (with want_pidfd) and r->sb_stack set, or -1 with
// r->stage and r->err set and nothing left (the child reaped).
int ls_standby_start(struct ls_req *r) {
#ifdef HAVE_RAW
	unsigned long all[8], old[8];
	int flags, pid, err, pidfd = -1;

	r->stage = LS_STAGE_NONE;
	r->err = 0;
	r->pid = 0;
	r->pidfd = -1;
	r->sb_go = 0;
	r->sb_execing = 0;
	r->sb_state = 2;
	r->sb_stack = ls_get_stack();
	if (r->sb_stack == NULL) {
		r->stage = LS_STAGE_STACK;
		r->err = errno;
		return -1;
	}
	r->sb_host_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	r->parent_pid = getpid();
	flags = CLONE_VM | CLONE_FILES | CLONE_CHILD_CLEARTID | SIGCHLD;
	if (r->new_pidns)
		flags |= CLONE_NEWPID;
	if (r->new_ipcns)
		flags |= CLONE_NEWIPC;
	if (r->want_pidfd)
		flags |= CLONE_PIDFD;
	memset(all, 0xff, sizeof all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, all, old, KSIGSETSIZE);
	pid = clone(standby_main, r->sb_stack + ls_stack_size(), flags, r, &pidfd, NULL, &r->sb_state);
	err = errno;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, KSIGSETSIZE);
	if (pid < 0) {
		release(r);
		r->stage = LS_STAGE_CLONE;
		r->err = err;
		return -1;
	}
	r->pid = pid;
	r->pidfd = pidfd;
	if (wait_state(r, 2) != 1) {
		reap(r);
		if (r->stage == LS_STAGE_NONE) {
			r->stage = LS_STAGE_CLONE;
			r->err = ESRCH;
		}
		return -1;
	}
	return 0;
#else
	r->stage = LS_STAGE_CLONE;
	r->err = ENOSYS;
	return -1;
#endif
}

// ls_standby_exec hands a ready standby its command (path, argv, envp, dir
// and stdio, set in r) and waits until it has execve'd. It returns 0, or -1
// with r->stage and r->err set (the standby reaped): a standby that was
// gone before it got the command fails with stage LS_STAGE_NONE and ESRCH.
int ls_standby_exec(struct ls_req *r) {
	if (__atomic_load_n(&r->sb_state, __ATOMIC_ACQUIRE) == 1) {
		__atomic_store_n(&r->sb_go, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &r->sb_go, FUTEX_WAKE, 1, NULL, NULL, 0);
		wait_state(r, 1);
	}
	if (r->stage == LS_STAGE_NONE && r->sb_execing) {
		// The standby's stack is free once its execve let go of this
		// memory; the command is the caller's to wait for.
		release(r);
		return 0;
	}
	reap(r);
	if (r->stage == LS_STAGE_NONE) {
		r->err = ESRCH;
	}
	return -1;
}

// ls_standby_discard kills a standby that was never handed a command, and
// reaps it.
void ls_standby_discard(struct ls_req *r) {
	if (r->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
	else
		kill(r->pid, SIGKILL);
	reap(r);
}
