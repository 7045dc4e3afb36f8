//go:build linux && cgo

// Standbys: a child cloned ahead of its command, which takes every step of
// the spawn that does not depend on the command (network namespace,
// cgroup, session, mount namespace, limits, no_new_privs, Landlock,
// capabilities, signal handlers), and then waits for ls_standby_exec to hand
// it the command, its stdio and its working directory. The call that uses it
// pays for the last steps and the execve only; the clone and the rest were
// paid for beforehand, off the call's path.
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
#include <linux/futex.h>
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

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define KSIGSETSIZE ((_NSIG - 1) / 8)

int ls_standby_supported(void) {
#ifdef LS_RAW_PURE
	return 1;
#else
	return 0;
#endif
}

#ifdef LS_RAW_PURE

static int standby_main(void *arg) {
	struct ls_req *r = arg;

	// The steps that do not depend on the command, in child_main's order.
	if (r->join_netns >= 0)
		ls_child_check(r, LS_STAGE_NETWORK, LS_SC2(SYS_setns, r->join_netns, CLONE_NEWNET));
	ls_child_join(r);
	if (r->join_mntns >= 0)
		ls_child_check(r, LS_STAGE_MOUNT, LS_SC2(SYS_setns, r->join_mntns, CLONE_NEWNS));
	ls_child_restrict(r);
	ls_child_reset_handlers(r);
	LS_SC2(SYS_prctl, PR_SET_NAME, "sandboxexec-sb");
	// The filters now, off the call's path: what is left (the wait, stdio,
	// the directory, the signal mask, execve) gets past them.
	ls_child_seccomp(r);
	r->filter_len = 0;
	r->tail_filter_len = 0;

	__atomic_store_n(&r->sb_state, 1, __ATOMIC_SEQ_CST);
	LS_SC3(SYS_futex, &r->sb_state, FUTEX_WAKE, 1);
	// The parent-death signal is the spawning thread's, and comes only if
	// that thread was still there at the prctl: a host that exits as a
	// standby starts would leave it waiting, holding the host's
	// descriptors. So a standby also looks at the host each second.
	while (__atomic_load_n(&r->sb_go, __ATOMIC_ACQUIRE) == 0) {
		struct timespec second = {1, 0}, now = {0, 0};
		if (LS_SC4(SYS_futex, &r->sb_go, FUTEX_WAIT, 0, &second) == -ETIMEDOUT && r->sb_host_pidfd >= 0) {
			struct pollfd host = {r->sb_host_pidfd, POLLIN, 0};
			if (ls_raw(SYS_ppoll, (long)&host, 1, (long)&now, 0, KSIGSETSIZE, 0) != 0)
				LS_SC1(SYS_exit_group, 0);
		}
	}

	// A descriptor table of its own, with nothing of the host's but what
	// closes at execve, before stdio is put in place.
	ls_child_check(r, LS_STAGE_CLOSE_RANGE,
		       LS_SC3(SYS_close_range, 3, ~0U, CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC));
	ls_child_stdio(r);
	ls_child_chdir(r);
	ls_child_unblock(r);
	ls_child_seccomp(r);
	r->sb_execing = 1;
	ls_child_fail(r, LS_STAGE_EXECVE, -LS_SC3(SYS_execve, r->path, r->argv, r->envp));
}

#endif // LS_RAW_PURE

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

// spin_state spins, yielding, while r->sb_state is from, for up to
// budget_ns. A caller that sleeps through a standby's execve is woken by it
// (the kernel clears sb_state at the execve's point of no return), often
// onto the CPU where the command goes on running, behind it: the caller's
// work after the hand-off then waits for the command. Spinning keeps the
// caller on its own CPU; yielding lets the standby have it where it was
// woken there (one CPU).
static void spin_state(struct ls_req *r, int from, long budget_ns) {
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (__atomic_load_n(&r->sb_state, __ATOMIC_ACQUIRE) == from) {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > budget_ns)
			return;
	}
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
#ifdef LS_RAW_PURE
	int pid, err, pidfd = -1;

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
	pid = ls_clone(standby_main, r->sb_stack, CLONE_VM | CLONE_FILES | CLONE_CHILD_CLEARTID | SIGCHLD, r, &pidfd,
		       &r->sb_state, &err);
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
		if (!r->sb_sleep)
			spin_state(r, 1, 1000000); // 1 ms: a few times the usual hand-off
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
