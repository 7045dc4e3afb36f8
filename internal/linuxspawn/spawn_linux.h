//go:build linux && cgo

#ifndef LINUXSPAWN_H
#define LINUXSPAWN_H

#include <stdint.h>
#include <sys/types.h>

enum {
	LS_STAGE_NONE = 0,
	LS_STAGE_STACK,
	LS_STAGE_CLONE,
	LS_STAGE_USERNS,
	LS_STAGE_NETWORK,
	LS_STAGE_CGROUP,
	LS_STAGE_SETSID,
	LS_STAGE_DUP2,
	LS_STAGE_CLOSE_RANGE,
	LS_STAGE_MOUNT,
	LS_STAGE_CHDIR,
	LS_STAGE_SETRLIMIT,
	LS_STAGE_PDEATHSIG,
	LS_STAGE_SCHEDULING,
	LS_STAGE_NO_NEW_PRIVS,
	LS_STAGE_LANDLOCK,
	LS_STAGE_CAPABILITIES,
	LS_STAGE_SIGNALS,
	LS_STAGE_SECCOMP,
	LS_STAGE_EXECVE,
};

// openat2 (Linux 5.6), for C libraries older than the kernel: the number is
// the same on every architecture.
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#define K_RESOLVE_NO_MAGICLINKS 0x02
#define K_RESOLVE_NO_SYMLINKS 0x04

struct k_open_how {
	uint64_t flags, mode, resolve;
};

// ls_mount_target is a path the child mounts on, with the identity the
// parent found there: a path that names another file by then (replaced by a
// symlink, say) fails the spawn rather than mount in the wrong place.
struct ls_mount_target {
	const char *path;
	uint64_t dev, ino;
};

enum {
	LS_MOUNT_WRITABLE = 0, // kept writable under read_only_rest
	LS_MOUNT_READ_ONLY,    // bound read-only over itself
	LS_MOUNT_DENY_DIR,     // an empty read-only directory over it
	LS_MOUNT_DENY_FILE,    // an empty read-only file over it
	LS_MOUNT_PIN,          // bound over itself as it is, before the three above
	LS_MOUNT_KINDS,
};

struct ls_rlimit {
	int resource;
	uint64_t cur, max;
};

// ls_req is one spawn: filled by the parent, read by the child, and the
// result written back by ls_start (or by the child, for stage and err).
struct ls_req {
	const char *path;
	char *const *argv;
	char *const *envp;
	const char *dir; // NULL: keep the parent's
	int dir_fd;      // above 0: dir, opened by the parent (see ls_child_chdir)
	int stdio[3];    // negative: closed in the child
	int cgroup_fd;   // negative: none
	int pdeathsig;   // 0: none
	int no_new_privs;
	int landlock_fd; // negative: none
	uint64_t pts_rights; // with landlock_fd and a mount namespace: for its own /dev/pts
	int drop_caps;
	uint64_t keep_caps; // with drop_caps: the capabilities kept
	int bounding_inherited; // with drop_caps: the bounding set is already keep_caps
	int new_pidns;
	int new_ipcns;
	int new_userns; // with uid_map and gid_map, written by the child
	const char *uid_map, *gid_map;
	int new_netns;  // only loopback, up
	int proxy_port; // with new_netns and proxy_sock: listen on 127.0.0.1:proxy_port
	int proxy_sock; // the listener is sent there (SCM_RIGHTS); negative: none
	int join_netns; // a network namespace to setns into instead; negative: none
	int new_mntns;
	int join_mntns; // a mount namespace to setns into instead; negative: none
	int ns_sock;    // ls_probe_mounts sends its mount namespace there; negative: none
	int read_only_rest; // every mount read-only but the LS_MOUNT_WRITABLE targets
	int *trees;         // with read_only_rest: room for nmounts[LS_MOUNT_WRITABLE] descriptors
	int probe_tmpfs;    // make the denied paths' tmpfs even without any
	const struct ls_mount_target *mounts[LS_MOUNT_KINDS];
	int nmounts[LS_MOUNT_KINDS];
	const void *tail_filter;      // installed after filter, by the child itself
	unsigned short tail_filter_len;
	int normal_scheduling;
	int want_pidfd; // clone with CLONE_PIDFD
	const struct ls_rlimit *rlimits;
	int nrlimits;
	const void *filter;      // struct sock_filter[filter_len]
	unsigned short filter_len; // 0: none
	pid_t parent_pid;

	// A standby (standby_linux.c): the child takes path, argv, envp, dir and
	// stdio only once sb_go is set. sb_state is 2 while it prepares, 1 once
	// it waits, and 0 (written by the kernel, CLONE_CHILD_CLEARTID) once it
	// has execve'd or exited; sb_execing says it got as far as execve.
	int standby;
	volatile int sb_state;
	volatile int sb_go;
	volatile int sb_execing;
	int sb_sleep; // ls_standby_exec sleeps through the execve, not spins
	char *sb_stack;
	int sb_host_pidfd; // the host's, polled by a waiting standby; negative: none

	// Results.
	volatile int stage;
	volatile int err;
	volatile int mount_kind, mount_index; // with LS_STAGE_MOUNT: the target
	int pid;
	int pidfd; // with want_pidfd, else -1
};

// ls_raw makes a system call and returns its result, or -errno. On x86_64
// and arm64 it touches no memory but its arguments' (errno included): a
// standby runs beside the thread that cloned it, whose C library state
// (errno) it shares. Elsewhere it goes through syscall(3), and there is no
// standby.
#if defined(__x86_64__) || defined(__aarch64__)
#define LS_RAW_PURE 1
static inline long ls_raw(long n, long a, long b, long c, long d, long e, long f) {
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
#else
long ls_raw(long n, long a, long b, long c, long d, long e, long f);
#endif
#define LS_SC0(n) ls_raw(n, 0, 0, 0, 0, 0, 0)
#define LS_SC1(n, a) ls_raw(n, (long)(a), 0, 0, 0, 0, 0)
#define LS_SC2(n, a, b) ls_raw(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define LS_SC3(n, a, b, c) ls_raw(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define LS_SC4(n, a, b, c, d) ls_raw(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

// The child's steps that a spawned child and a standby share
// (spawn_linux.c), in ls_raw calls. Each ends the child on failure, with
// r->stage and r->err set.
__attribute__((noreturn)) void ls_child_fail(struct ls_req *r, int stage, long err);
long ls_child_check(struct ls_req *r, int stage, long ret);
void ls_child_join(struct ls_req *r);           // cgroup, setsid
void ls_child_stdio(struct ls_req *r);          // r->stdio at 0, 1, 2
void ls_child_chdir(struct ls_req *r);          // r->dir_fd or r->dir, with no magic link on the way
void ls_child_restrict(struct ls_req *r);       // limits, pdeathsig, scheduling, no_new_privs, Landlock, capabilities
void ls_child_reset_handlers(struct ls_req *r); // every caught signal back to its default
void ls_child_unblock(struct ls_req *r);        // an empty signal mask
void ls_child_seccomp(struct ls_req *r);        // filter and tail_filter, where the child installs them

// ls_clone clones fn on stack with flags and the namespaces r asks for,
// with every signal blocked across the clone, so that no handler of the
// host runs in the child. It returns the pid, or -1 with *err set.
int ls_clone(int (*fn)(void *), char *stack, int flags, struct ls_req *r, int *pidfd, volatile int *ctid, int *err);

int ls_start(struct ls_req *r);
int ls_standby_start(struct ls_req *r);
int ls_standby_exec(struct ls_req *r);
void ls_standby_discard(struct ls_req *r);
int ls_standby_supported(void);
char *ls_get_stack(void);
void ls_put_stack(char *stack);
size_t ls_stack_size(void);
int ls_probe_mounts(struct ls_req *r);
struct ls_pool;
struct ls_pool *ls_pool_new(int drop_bounding, uint64_t keep, const void *filter,
			    unsigned short filter_len, int *nthreads, int *stage, int *err);
int ls_pool_start(struct ls_pool *p, struct ls_req *r);
int ls_prepare_thread(int drop_bounding, uint64_t keep, const void *filter,
		      unsigned short filter_len, int *stage);

#endif
