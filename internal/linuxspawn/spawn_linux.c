//go:build linux && cgo

// The child side of Start. Everything the child touches is prepared by the
// parent before the clone; the child makes system calls only, never returns
// to Go, and reports a failed step through the request it shares with the
// parent (CLONE_VM), which the parent reads once the vfork has released it.
// The steps a standby shares (ls_child_*) are ls_raw calls, which leave
// errno alone; the rest (namespaces, mounts, chdir) go through thin libc
// wrappers that do not allocate or lock, whose errno is the calling
// thread's, suspended until the child has execve'd or exited.

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn_linux.h"

// From linux/ioprio.h, which older C libraries' kernel headers lack.
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_RT 1
#define IOPRIO_CLASS_BE 2
#define IOPRIO_WHO_PROCESS 1

// For C libraries older than the kernel feature (Linux 5.11; Landlock,
// without which nothing runs here, came in 5.13).
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#define K_LANDLOCK_RULE_PATH_BENEATH 1

struct k_landlock_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

// The kernel's struct sigaction is read and written as an array of words:
// the handler is its first word everywhere but on MIPS, where the flags come
// first; an all-zero struct means SIG_DFL, no flags, empty mask.
#if defined(__mips__)
#define KSA_HANDLER 1
#else
#define KSA_HANDLER 0
#endif
#define KSIGSETSIZE ((_NSIG - 1) / 8)

#define CHILD_STACK_SIZE (64 * 1024)

struct rlimit64_k {
	uint64_t cur, max;
};

#ifndef LS_RAW_PURE
long ls_raw(long n, long a, long b, long c, long d, long e, long f) {
	long ret = syscall(n, a, b, c, d, e, f);
	return ret < 0 ? -errno : ret;
}
#endif

void ls_child_fail(struct ls_req *r, int stage, long err) {
	r->err = (int)err;
	r->stage = stage;
	for (;;)
		LS_SC1(SYS_exit_group, 127);
}

#define fail ls_child_fail

long ls_child_check(struct ls_req *r, int stage, long ret) {
	if (ret < 0)
		fail(r, stage, -ret);
	return ret;
}

// cloexec_above_stdio marks every descriptor above 2 close-on-exec, and
// returns 0 or an errno. Where close_range cannot do it (a seccomp policy of
// an older container runtime refuses the call), it walks /proc/self/fd, in
// system calls only, as everything in the child.
static int cloexec_above_stdio(void) {
	struct dirent64_k {
		uint64_t ino;
		int64_t off;
		unsigned short reclen;
		unsigned char type;
		char name[];
	};
	char buf[2048] __attribute__((aligned(8)));
	long n, off;
	int dir, fd, err = 0;

	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return 0;
	dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return errno;
	while (err == 0 && (n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
		for (off = 0; off < n && err == 0;) {
			struct dirent64_k *d = (struct dirent64_k *)(buf + off);
			const char *p = d->name;
			off += d->reclen;
			if (*p < '0' || *p > '9')
				continue; // . and ..
			for (fd = 0; *p >= '0' && *p <= '9'; p++)
				fd = fd * 10 + (*p - '0');
			if (fd > 2 && fd != dir && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 && errno != EBADF)
				err = errno;
		}
	}
	if (err == 0 && n < 0)
		err = errno;
	close(dir);
	return err;
}

// reset_scheduling moves the child out of a real-time scheduling policy or
// I/O class it inherited from the host: a command that never blocks would
// otherwise starve the host's threads of the same priority, the one that
// enforces the timeout included. Leaving them needs no privilege.
static void reset_scheduling(struct ls_req *r) {
	long policy = ls_child_check(r, LS_STAGE_SCHEDULING, LS_SC1(SYS_sched_getscheduler, 0));
	policy &= ~(long)SCHED_RESET_ON_FORK;
	if (policy == SCHED_FIFO || policy == SCHED_RR) {
		struct sched_param normal = {0};
		ls_child_check(r, LS_STAGE_SCHEDULING, LS_SC3(SYS_sched_setscheduler, 0, SCHED_OTHER, &normal));
	}
	long ioprio = LS_SC2(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
	if (ioprio == -ENOSYS)
		return; // a kernel without block I/O has no I/O class to leave
	ls_child_check(r, LS_STAGE_SCHEDULING, ioprio);
	if ((ioprio >> IOPRIO_CLASS_SHIFT) == IOPRIO_CLASS_RT)
		ls_child_check(r, LS_STAGE_SCHEDULING,
			       LS_SC3(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_CLASS_BE << IOPRIO_CLASS_SHIFT | 4));
}

// drop_bounding_set removes every capability but keep from the calling
// thread's bounding set, so that no execve after it can grant the rest. It
// returns 0 or an errno. Without CAP_SETPCAP the bounding set cannot
// shrink, which is left at that: the child sets no_new_privs whenever it
// drops capabilities, and under it execve grants nothing beyond the
// permitted set, which capset trims (root's included).
static int drop_bounding_set(uint64_t keep) {
	int i;

	for (i = 0; i < 64; i++) {
		if (keep & (1ULL << i))
			continue;
		long ret = LS_SC2(SYS_prctl, PR_CAPBSET_DROP, i);
		if (ret == -EINVAL || ret == -EPERM)
			return 0; // past the last capability, or no CAP_SETPCAP
		if (ret < 0)
			return (int)-ret;
	}
	return 0;
}

// drop_capabilities keeps only r->keep_caps: in the bounding set (unless
// the cloning thread had already shrunk its own, which the child inherits),
// and in the permitted and effective sets; the inheritable and ambient sets
// are emptied. The permitted set keeps CAP_SYS_ADMIN too, where the child
// has it and the bounding set no longer does, so that the execve drops it:
// until then the child has a capability its command lacks, and no command
// may open its /proc/PID/mem or fd/ (which needs the target's permitted
// set to be within the opener's). Those are the host's memory and, for a
// standby, which waits for seconds, its descriptor table: Landlock refuses
// such opens across domains, but a kernel without it does not (found in
// review, under BestEffort). A host without CAP_SETPCAP cannot take
// CAP_SYS_ADMIN out of the bounding set, and a root command would then get
// it back at execve: the guard cannot be kept, and the child has no more
// than its command. A standby without Landlock, which would wait so for
// seconds, is refused rather than left open to any command of the host.
static void drop_capabilities(struct ls_req *r) {
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	uint64_t guard = 0;
	int i, err;

	if (!r->bounding_inherited && (err = drop_bounding_set(r->keep_caps)) != 0)
		fail(r, LS_STAGE_CAPABILITIES, err);
	if (!(r->keep_caps & (1ULL << CAP_SYS_ADMIN)) && LS_SC2(SYS_prctl, PR_CAPBSET_READ, CAP_SYS_ADMIN) == 0)
		guard = 1ULL << CAP_SYS_ADMIN;
	// Ambient capabilities exist since Linux 4.3; EINVAL before.
	long ret = ls_raw(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0);
	if (ret != -EINVAL)
		ls_child_check(r, LS_STAGE_CAPABILITIES, ret);
	ls_child_check(r, LS_STAGE_CAPABILITIES, LS_SC2(SYS_capget, &hdr, data));
	if (r->standby && r->landlock_fd < 0 && guard == 0 && !(r->keep_caps & (1ULL << CAP_SYS_ADMIN)) &&
	    (data[CAP_SYS_ADMIN / 32].permitted & (1U << (CAP_SYS_ADMIN % 32))))
		fail(r, LS_STAGE_CAPABILITIES, EPERM);
	for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		uint32_t keep = (uint32_t)(r->keep_caps >> (32 * i));
		data[i].effective &= keep;
		data[i].permitted &= keep | (uint32_t)(guard >> (32 * i));
		data[i].inheritable = 0;
	}
	ls_child_check(r, LS_STAGE_CAPABILITIES, LS_SC2(SYS_capset, &hdr, data));
}

void ls_child_join(struct ls_req *r) {
	if (r->cgroup_fd >= 0) {
		long n;
		do {
			n = LS_SC3(SYS_write, r->cgroup_fd, "0", 1);
		} while (n == -EINTR);
		if (n != 1)
			fail(r, LS_STAGE_CGROUP, n < 0 ? -n : EIO);
	}
	ls_child_check(r, LS_STAGE_SETSID, LS_SC0(SYS_setsid));
}

// ls_child_stdio first moves every source that sits below 3 and is not
// already in place out of the way (close-on-exec, so the copies vanish at
// execve), so that no dup3 clobbers a source a later one needs.
void ls_child_stdio(struct ls_req *r) {
	int i, src[3];

	for (i = 0; i < 3; i++) {
		src[i] = r->stdio[i];
		if (src[i] >= 0 && src[i] < 3 && src[i] != i)
			src[i] = (int)ls_child_check(r, LS_STAGE_DUP2, LS_SC3(SYS_fcntl, src[i], F_DUPFD_CLOEXEC, 3));
	}
	for (i = 0; i < 3; i++) {
		if (src[i] < 0)
			LS_SC1(SYS_close, i);
		else if (src[i] == i)
			ls_child_check(r, LS_STAGE_DUP2, LS_SC3(SYS_fcntl, i, F_SETFD, 0));
		else
			ls_child_check(r, LS_STAGE_DUP2, LS_SC3(SYS_dup3, src[i], i, 0));
	}
}

// ls_child_chdir enters the working directory: r->dir_fd, which the parent
// opened, or else r->dir, looked up with no "magic link" on the way
// (/proc/PID/root, /proc/PID/cwd, /proc/PID/fd/N): one leads to where
// another process stands, the host's mounts among them, where the call's
// covers and read-only binds are not, and a fresh child still holds every
// capability here. Only a child that makes its own mount namespace looks
// dir up itself, before the tail of its seccomp filter, which refuses
// openat2 (ENOSYS): there is no plain chdir to fall back on.
void ls_child_chdir(struct ls_req *r) {
	struct k_open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = K_RESOLVE_NO_MAGICLINKS};
	long fd;

	if (r->dir_fd > 0) {
		ls_child_check(r, LS_STAGE_CHDIR, LS_SC1(SYS_fchdir, r->dir_fd));
		return;
	}
	if (r->dir == NULL)
		return;
	fd = LS_SC4(SYS_openat2, AT_FDCWD, r->dir, &how, sizeof how);
	ls_child_check(r, LS_STAGE_CHDIR, fd);
	ls_child_check(r, LS_STAGE_CHDIR, LS_SC1(SYS_fchdir, fd));
	LS_SC1(SYS_close, fd);
}

// allow_own_ptys adds to the ruleset the rules the command's own
// pseudo-terminals need where the child's mount namespace has a devpts of
// its own (see private_ptys), which rules made from the host's paths do not
// reach: /dev/pts, and its ptmx, which a root command's namespace binds over
// /dev/ptmx. The kernel merges a rule for a file the ruleset has already.
static void allow_own_ptys(struct ls_req *r) {
	static const char *const paths[] = {"/dev/pts", "/dev/pts/ptmx"};
	struct k_landlock_path_beneath rule;
	long fd, ret;
	int i;

	for (i = 0; i < 2; i++) {
		fd = LS_SC4(SYS_openat, AT_FDCWD, paths[i], O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd == -ENOENT)
			continue;
		ls_child_check(r, LS_STAGE_LANDLOCK, fd);
		rule.allowed_access = r->pts_rights;
		rule.parent_fd = (int32_t)fd;
		ret = LS_SC4(SYS_landlock_add_rule, r->landlock_fd, K_LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
		LS_SC1(SYS_close, fd);
		ls_child_check(r, LS_STAGE_LANDLOCK, ret);
	}
}

void ls_child_restrict(struct ls_req *r) {
	int i;

	for (i = 0; i < r->nrlimits; i++) {
		struct rlimit64_k rl = {r->rlimits[i].cur, r->rlimits[i].max};
		ls_child_check(r, LS_STAGE_SETRLIMIT, LS_SC4(SYS_prlimit64, 0, r->rlimits[i].resource, &rl, 0));
	}
	if (r->pdeathsig > 0) {
		ls_child_check(r, LS_STAGE_PDEATHSIG, LS_SC2(SYS_prctl, PR_SET_PDEATHSIG, r->pdeathsig));
		// The parent may have died before the prctl: then it was
		// reparented. In a new pid namespace the parent is outside and
		// getppid is 0 whatever happens, so there is nothing to check.
		if (!r->new_pidns && LS_SC0(SYS_getppid) != r->parent_pid)
			fail(r, LS_STAGE_PDEATHSIG, ESRCH);
	}
	if (r->normal_scheduling)
		reset_scheduling(r);
	if (r->no_new_privs)
		ls_child_check(r, LS_STAGE_NO_NEW_PRIVS, LS_SC2(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1));
	if (r->landlock_fd >= 0 && r->pts_rights != 0 && (r->new_mntns || r->join_mntns >= 0))
		allow_own_ptys(r);
	if (r->landlock_fd >= 0)
		ls_child_check(r, LS_STAGE_LANDLOCK, LS_SC2(SYS_landlock_restrict_self, r->landlock_fd, 0));
	if (r->drop_caps)
		drop_capabilities(r);
}

// ls_child_reset_handlers sets the default action of every signal the
// parent (the Go runtime) catches, every signal still blocked: no handler
// of the host ever runs in the child. It comes before the seccomp filter,
// which may deny rt_sigaction.
void ls_child_reset_handlers(struct ls_req *r) {
	int i;

	for (i = 1; i < _NSIG; i++) {
		unsigned long old[8], act[8];
		if (i == SIGKILL || i == SIGSTOP)
			continue;
		// One call sets the default and returns what was there; the
		// rare ignored signal is put back (still blocked, so nothing
		// can be delivered in between).
		memset(act, 0, sizeof act);
		long ret = LS_SC4(SYS_rt_sigaction, i, act, old, KSIGSETSIZE);
		if (ret == -EINVAL)
			continue;
		ls_child_check(r, LS_STAGE_SIGNALS, ret);
		if (old[KSA_HANDLER] == (unsigned long)SIG_IGN) {
			act[KSA_HANDLER] = (unsigned long)SIG_IGN;
			ls_child_check(r, LS_STAGE_SIGNALS, LS_SC4(SYS_rt_sigaction, i, act, 0, KSIGSETSIZE));
		}
	}
}

void ls_child_unblock(struct ls_req *r) {
	unsigned long empty[8];

	memset(empty, 0, sizeof empty);
	ls_child_check(r, LS_STAGE_SIGNALS, LS_SC4(SYS_rt_sigprocmask, SIG_SETMASK, empty, 0, KSIGSETSIZE));
}

void ls_child_seccomp(struct ls_req *r) {
	if (r->filter_len > 0) {
		struct sock_fprog prog = {.len = r->filter_len, .filter = (struct sock_filter *)r->filter};
		ls_child_check(r, LS_STAGE_SECCOMP, LS_SC3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog));
	}
	if (r->tail_filter_len > 0) {
		struct sock_fprog prog = {.len = r->tail_filter_len, .filter = (struct sock_filter *)r->tail_filter};
		ls_child_check(r, LS_STAGE_SECCOMP, LS_SC3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog));
	}
}

// write_file writes s to path, a file of /proc/self, and returns 0 or an
// errno.
static int write_file(const char *path, const char *s) {
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n, len = (ssize_t)strlen(s);
	if (fd < 0)
		return errno;
	do {
		n = write(fd, s, (size_t)len);
	} while (n < 0 && errno == EINTR);
	int err = n == len ? 0 : n < 0 ? errno : EIO;
	close(fd);
	return err;
}

int ls_setup_mounts(struct ls_req *r);

// send_fd sends fd on the socket sock (SCM_RIGHTS), and returns 0 or an
// errno.
static int send_fd(int sock, int fd) {
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct msghdr msg;
	struct iovec iov;
	char byte = 0;

	memset(&msg, 0, sizeof msg);
	memset(&ctl, 0, sizeof ctl);
	iov.iov_base = &byte;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof ctl.buf;
	ctl.h.cmsg_level = SOL_SOCKET;
	ctl.h.cmsg_type = SCM_RIGHTS;
	ctl.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&ctl.h), &fd, sizeof(int));
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) != 1)
		return errno ? errno : EIO;
	return 0;
}

// setup_network brings up the loopback interface of the child's new network
// namespace, which has nothing else, and, with a proxy_sock, listens on
// 127.0.0.1:proxy_port there and sends the listener to the parent, which
// serves it from the host's namespace. It returns 0 or an errno.
static int setup_network(struct ls_req *r) {
	struct ifreq ifr;
	struct sockaddr_in addr;
	int s, one = 1, err = 0;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return errno;
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		err = errno;
	ifr.ifr_flags |= IFF_UP;
	if (err == 0 && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		err = errno;
	close(s);
	if (err != 0 || r->proxy_sock < 0)
		return err;

	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return errno;
	memset(&addr, 0, sizeof addr);
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)r->proxy_port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(s, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(s, 128) < 0) {
		err = errno;
		close(s);
		return err;
	}
	err = send_fd(r->proxy_sock, s);
	close(s);
	return err;
}

static int child_main(void *arg) {
	struct ls_req *r = arg;
	int err;

	// A user namespace of the child's own maps only the host's uid and
	// gid, which the command keeps; the capabilities it gives the child
	// over its namespaces are for the mounts below, and do not survive the
	// execve of a command whose uid is not 0 (nor, for root, the drop
	// below). setgroups must be refused before an unprivileged gid_map.
	if (r->new_userns) {
		if ((err = write_file("/proc/self/setgroups", "deny")) != 0 ||
		    (err = write_file("/proc/self/uid_map", r->uid_map)) != 0 ||
		    (err = write_file("/proc/self/gid_map", r->gid_map)) != 0)
			fail(r, LS_STAGE_USERNS, err);
	}

	if (r->new_netns && (err = setup_network(r)) != 0)
		fail(r, LS_STAGE_NETWORK, err);
	if (r->join_netns >= 0 && setns(r->join_netns, CLONE_NEWNET) < 0)
		fail(r, LS_STAGE_NETWORK, errno);

	ls_child_join(r);
	ls_child_stdio(r);

	// Nothing else of the host's reaches the command: a descriptor the
	// host left open without close-on-exec would give it a file or socket
	// that no check of the sandbox ever sees. Close-on-exec rather than
	// closed, because the ruleset is still needed.
	if ((err = cloexec_above_stdio()) != 0)
		fail(r, LS_STAGE_CLOSE_RANGE, err);

	if (r->new_mntns && (err = ls_setup_mounts(r)) != 0)
		fail(r, LS_STAGE_MOUNT, err);
	if (r->join_mntns >= 0 && setns(r->join_mntns, CLONE_NEWNS) < 0)
		fail(r, LS_STAGE_MOUNT, errno);

	ls_child_chdir(r);

	ls_child_restrict(r);
	// Signals: the handlers are the parent's (the Go runtime's); reset
	// every one that is caught to the default, then unblock all; a signal
	// that arrives from here on has its default action, as it would in the
	// command.
	ls_child_reset_handlers(r);
	ls_child_unblock(r);
	ls_child_seccomp(r);

	fail(r, LS_STAGE_EXECVE, -LS_SC3(SYS_execve, r->path, r->argv, r->envp));
}

// Child stacks are kept for reuse, a few at most, to save the mmap, the
// guard page's mprotect and the munmap of each spawn.
#define STACK_CACHE 8
static pthread_mutex_t stack_mu = PTHREAD_MUTEX_INITIALIZER;
static char *stack_cache[STACK_CACHE];
static int stack_cached;

size_t ls_stack_size(void) {
	return CHILD_STACK_SIZE + (size_t)sysconf(_SC_PAGESIZE);
}

// get_stack returns the lowest address of a child stack (whose lowest page
// is a guard page), or NULL with errno set.
char *ls_get_stack(void) {
	size_t size = ls_stack_size();
	char *stack = NULL;

	pthread_mutex_lock(&stack_mu);
	if (stack_cached > 0)
		stack = stack_cache[--stack_cached];
	pthread_mutex_unlock(&stack_mu);
	if (stack != NULL)
		return stack;

	stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return NULL;
	if (mprotect(stack, size - CHILD_STACK_SIZE, PROT_NONE) < 0) {
		int err = errno;
		munmap(stack, size);
		errno = err;
		return NULL;
	}
	return stack;
}

void ls_put_stack(char *stack) {
	pthread_mutex_lock(&stack_mu);
	if (stack_cached < STACK_CACHE) {
		stack_cache[stack_cached++] = stack;
		stack = NULL;
	}
	pthread_mutex_unlock(&stack_mu);
	if (stack != NULL)
		munmap(stack, ls_stack_size());
}

int ls_clone(int (*fn)(void *), char *stack, int flags, struct ls_req *r, int *pidfd, volatile int *ctid, int *err) {
	unsigned long all[8], old[8];
	int pid;

	if (r->new_pidns)
		flags |= CLONE_NEWPID;
	if (r->new_ipcns)
		flags |= CLONE_NEWIPC;
	if (r->new_userns)
		flags |= CLONE_NEWUSER;
	if (r->new_mntns)
		flags |= CLONE_NEWNS;
	if (r->new_netns)
		flags |= CLONE_NEWNET;
	if (r->want_pidfd)
		flags |= CLONE_PIDFD;
	// This is pthread_sigmask, made directly: glibc's would leave its own
	// two internal signals (SIGCANCEL, SIGSETXID) unblocked.
	memset(all, 0xff, sizeof all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, all, old, KSIGSETSIZE);
	pid = clone(fn, stack + ls_stack_size(), flags, r, pidfd, NULL, ctid);
	*err = errno;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, KSIGSETSIZE);
	return pid;
}

int ls_start(struct ls_req *r) {
	int pid, err, status, pidfd = -1;
	char *stack;

	r->stage = LS_STAGE_NONE;
	r->err = 0;
	r->mount_kind = r->mount_index = -1;
	r->pid = 0;
	r->pidfd = -1;

	stack = ls_get_stack();
	if (stack == NULL) {
		r->stage = LS_STAGE_STACK;
		r->err = errno;
		return -1;
	}

	r->parent_pid = getpid();
	// With CLONE_PIDFD the kernel stores the pidfd where the parent_tid
	// argument points: a pidfd made in the same step as the child, which
	// no reaper of the host can get ahead of.
	pid = ls_clone(child_main, stack, CLONE_VM | CLONE_VFORK | SIGCHLD, r, &pidfd, NULL, &err);
	ls_put_stack(stack);

	if (pid < 0) {
		r->stage = LS_STAGE_CLONE;
		r->err = err;
		return -1;
	}
	if (r->stage != LS_STAGE_NONE) {
		// The child has exited (it only gets here by _exit after
		// recording the failure): reap it.
		if (pidfd >= 0)
			close(pidfd);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		return -1;
	}
	r->pid = pid;
	r->pidfd = pidfd;
	return 0;
}

// probe_main is the child of ls_probe_mounts: the namespace steps alone.
static int probe_main(void *arg) {
	struct ls_req *r = arg;
	int err;

	if (r->new_userns) {
		if ((err = write_file("/proc/self/setgroups", "deny")) != 0 ||
		    (err = write_file("/proc/self/uid_map", r->uid_map)) != 0 ||
		    (err = write_file("/proc/self/gid_map", r->gid_map)) != 0)
			fail(r, LS_STAGE_USERNS, err);
	}
	if (r->new_netns && (err = setup_network(r)) != 0)
		fail(r, LS_STAGE_NETWORK, err);
	if ((err = ls_setup_mounts(r)) != 0)
		fail(r, LS_STAGE_MOUNT, err);
	if (r->ns_sock >= 0) {
		// The namespace, and its root, through which the parent can
		// look at what is mounted in it.
		const char *what[2] = {"/proc/self/ns/mnt", "/"};
		int i, flags[2] = {O_RDONLY | O_CLOEXEC, O_PATH | O_DIRECTORY | O_CLOEXEC};
		for (i = 0; i < 2; i++) {
			int fd = open(what[i], flags[i]);
			if (fd < 0 || (err = send_fd(r->ns_sock, fd)) != 0)
				fail(r, LS_STAGE_MOUNT, fd < 0 ? errno : err);
			close(fd);
		}
	}
	_exit(0);
}

// ls_probe_mounts clones a child into the namespaces r asks for, which sets
// up r's mounts, sends its mount namespace and its root to r->ns_sock where
// that is not negative, and exits; it returns 0 when all went well, else -1 with
// r->stage and r->err set.
int ls_probe_mounts(struct ls_req *r) {
	int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | CLONE_NEWNS, pid, status, err;
	char *stack;

	r->stage = LS_STAGE_NONE;
	r->err = 0;
	r->mount_kind = r->mount_index = -1;
	if ((stack = ls_get_stack()) == NULL) {
		r->stage = LS_STAGE_STACK;
		r->err = errno;
		return -1;
	}
	pid = ls_clone(probe_main, stack, flags, r, NULL, NULL, &err);
	ls_put_stack(stack);
	if (pid < 0) {
		r->stage = LS_STAGE_CLONE;
		r->err = err;
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r->stage != LS_STAGE_NONE)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		r->stage = LS_STAGE_MOUNT;
		r->err = EIO;
		return -1;
	}
	return 0;
}

// ls_prepare_thread puts on the calling thread only what every child it
// clones from then on inherits: a bounding set shrunk to keep (with
// drop_bounding), and no_new_privs with the seccomp filter (with
// filter_len > 0, and no TSYNC). Each is then done once per thread, not at
// every spawn: shrinking the bounding set takes a system call per
// capability, and installing a filter prepares and compiles it. It returns
// 0, or an errno with *stage set to the step that failed.
int ls_prepare_thread(int drop_bounding, uint64_t keep, const void *filter,
		      unsigned short filter_len, int *stage) {
	struct sock_fprog prog = {
	    .len = filter_len,
	    .filter = (struct sock_filter *)filter,
	};
	int err;

	// Before the filter, which may refuse prctl.
	if (drop_bounding && (err = drop_bounding_set(keep)) != 0) {
		*stage = LS_STAGE_CAPABILITIES;
		return err;
	}
	if (filter_len == 0)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		*stage = LS_STAGE_NO_NEW_PRIVS;
		return errno;
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		*stage = LS_STAGE_SECCOMP;
		return errno;
	}
	return 0;
}
