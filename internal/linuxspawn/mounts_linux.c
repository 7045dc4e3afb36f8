//go:build linux && cgo

// The child's mount namespace: run by child_main, in the child, after the
// clone that made the namespace and before chdir, so that the working
// directory is looked up through the new mounts. System calls only, as
// everywhere in the child.
//
// Every mount is private first, so that nothing made here reaches the host
// and nothing the host mounts later reaches the command (with a slave mount
// a host's new mount would arrive writable). Then, with read_only_rest, the
// writable roots are cloned as they are, every mount is made read-only, and
// the clones are put back on the roots; then the pinned directories (those
// between a writable root and what is protected below it, and the roots
// inside other roots) are bound over themselves as they are, so that no
// rename or rmdir can move what is mounted below them; then protected
// subpaths are bound read-only over themselves, and denied paths are
// covered by an empty read-only directory or file of a tmpfs made for the
// purpose. Every namespace gets a devpts of its own on /dev/pts. Each target
// is opened without following symlinks and checked against the identity the
// parent resolved, and each mount is made on that descriptor, not on a
// path looked up again.

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "spawn_linux.h"

// The new mount API (Linux 5.2, mount_setattr 5.12); the
// numbers are the same on every architecture. For C libraries older than
// the kernel features.
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

#define K_OPEN_TREE_CLONE 1
#define K_OPEN_TREE_CLOEXEC O_CLOEXEC
#define K_MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#define K_MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#define K_FSOPEN_CLOEXEC 0x00000001
#define K_FSCONFIG_SET_STRING 1
#define K_FSCONFIG_CMD_CREATE 6
#define K_FSMOUNT_CLOEXEC 0x00000001
#define K_MOUNT_ATTR_RDONLY 0x00000001
#define K_MOUNT_ATTR_NOSUID 0x00000002
#define K_MOUNT_ATTR_NODEV 0x00000004
#define K_MOUNT_ATTR_NOEXEC 0x00000008
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#define K_STATX_MNT_ID 0x00001000U

struct k_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static int set_attr(int fd, const char *path, unsigned flags, uint64_t attr) {
	struct k_mount_attr a = {.attr_set = attr};
	return (int)syscall(SYS_mount_setattr, fd, path, flags, &a, sizeof a);
}

// open_target opens t with O_PATH, no symlink on the way, and checks that it
// is the file the parent found there. It returns the descriptor or -errno.
static int open_target(const struct ls_mount_target *t) {
	struct k_open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW, .resolve = K_RESOLVE_NO_SYMLINKS};
	struct stat st;
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, t->path, &how, sizeof how);
	if (fd < 0 && errno == ENOSYS)
		fd = open(t->path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	if ((uint64_t)st.st_dev != t->dev || (uint64_t)st.st_ino != t->ino || S_ISLNK(st.st_mode)) {
		close(fd);
		return -ESTALE; // replaced since the parent looked
	}
	return fd;
}

// clone_onto attaches tree (a detached mount) onto the target fd.
static int clone_onto(int tree, int target) {
	return (int)syscall(SYS_move_mount, tree, "", target, "",
			    K_MOVE_MOUNT_F_EMPTY_PATH | K_MOVE_MOUNT_T_EMPTY_PATH);
}

static int failed(struct ls_req *r, int kind, int index, int err) {
	r->mount_kind = kind;
	r->mount_index = index;
	return err;
}

// devices are the device nodes a root command can open outside the
// writable roots: those Landlock lets it write (internal/landlock's
// devices), and /dev/tty. For root every other mount is nodev: it owns
// every device node (and keeps CAP_DAC_OVERRIDE), and a disk read below its
// file system gives up any file on it, those DenyRead covers too, as a
// console gives up what is typed on it (found in review). Other users own
// none. /dev/ptmx is the one at /dev/pts: bound alone, it would not find
// its pseudo-terminals, which it looks for at "pts" beside it on its mount.
static const char *const devices[][2] = {
    {"/dev/null", NULL}, {"/dev/zero", NULL}, {"/dev/full", NULL}, {"/dev/random", NULL},
    {"/dev/urandom", NULL}, {"/dev/tty", NULL}, {"/dev/pts", NULL}, {"/dev/ptmx", "/dev/pts/ptmx"},
};

// allow_devices binds each of devices that is there, a character device or
// a directory of them, over itself (or its source over it) without nodev.
static int allow_devices(void) {
	struct k_mount_attr a = {.attr_clr = K_MOUNT_ATTR_NODEV};
	struct stat st;
	size_t i;
	int fd, tree, err = 0;

	for (i = 0; err == 0 && i < sizeof devices / sizeof devices[0]; i++) {
		const char *src = devices[i][1] ? devices[i][1] : devices[i][0];
		if ((fd = open(devices[i][0], O_PATH | O_CLOEXEC | O_NOFOLLOW)) < 0) {
			if (errno == ENOENT)
				continue;
			return errno;
		}
		if (fstatat(fd, "", &st, AT_EMPTY_PATH) < 0) {
			err = errno;
		} else if (S_ISCHR(st.st_mode) || S_ISDIR(st.st_mode)) {
			tree = (int)syscall(SYS_open_tree, AT_FDCWD, src, K_OPEN_TREE_CLONE | K_OPEN_TREE_CLOEXEC | AT_RECURSIVE);
			if (tree < 0 && errno != ENOENT)
				err = errno;
			if (tree >= 0) {
				if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0 ||
				    clone_onto(tree, fd) < 0)
					err = errno;
				close(tree);
			}
		}
		close(fd);
	}
	return err;
}

// kernel_fs are the file systems whose files are the kernel's controls
// (sysctls, cgroups, devices, tracing, servers' control files), not
// storage. One mounted below a writable root, as a chroot's /proc, /sys or
// /dev is, would hand a root command what the read-only rest keeps from it:
// a write to the chroot's /proc/sys sets the host's sysctls (found in
// review). A devpts there would hand a host user's command the user's
// terminals, which the namespace's own devpts keeps from it (see
// private_ptys). seal_kernel_mounts makes each read-only like the rest.
static const char *const kernel_fs[] = {
    "proc",     "sysfs",       "cgroup",  "cgroup2",   "devtmpfs", "debugfs",    "tracefs", "securityfs", "bpf",
    "configfs", "efivarfs",    "pstore",  "binfmt_misc", "fusectl", "selinuxfs", "smackfs", "mqueue",     "nfsd",
    "rpc_pipefs", "devpts",    "resctrl", "xenfs",
};

static int is_kernel_fs(const char *type) {
	size_t i;
	for (i = 0; i < sizeof kernel_fs / sizeof kernel_fs[0]; i++)
		if (strcmp(type, kernel_fs[i]) == 0)
			return 1;
	return 0;
}

// below_root says path lies strictly below one of the writable roots
// (canonical paths, none of them "/").
static int below_root(const struct ls_req *r, const char *path) {
	const struct ls_mount_target *w = r->mounts[LS_MOUNT_WRITABLE];
	int i;
	for (i = 0; i < r->nmounts[LS_MOUNT_WRITABLE]; i++) {
		size_t n = strlen(w[i].path);
		if (strncmp(path, w[i].path, n) == 0 && path[n] == '/')
			return 1;
	}
	return 0;
}

// mount_id is the ID (as the mount table shows it) of the mount fd lies
// on, or 0 where the kernel does not say (statx's STATX_MNT_ID, Linux 5.8,
// older than mount_setattr).
static uint64_t mount_id(int fd) {
	struct statx stx;
	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, K_STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & K_STATX_MNT_ID))
		return 0;
	return stx.stx_mnt_id;
}

// mount_parent is the parent of the mount id in the namespace's mount
// table, or 0 where the table has no such mount.
static uint64_t mount_parent(uint64_t id) {
	char buf[512];
	uint64_t num[2] = {0, 0}, parent = 0;
	int field = 0, fd;
	ssize_t n, i;

	if ((fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	while (parent == 0 && (n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < n && parent == 0; i++) {
			if (buf[i] == '\n') {
				if (field >= 2 && num[0] == id)
					parent = num[1];
				num[0] = num[1] = 0, field = 0;
			} else if (buf[i] == ' ') {
				field++;
			} else if (field < 2 && buf[i] >= '0' && buf[i] <= '9') {
				num[field] = num[field] * 10 + (uint64_t)(buf[i] - '0');
			}
		}
	}
	close(fd);
	return parent;
}

// seal_mount makes the mount id, which the mount table showed at path, with
// every mount below it, read-only, nosuid, nodev and noexec. The table
// gives a path, and a command of another call may rename what leads to it
// (a directory of a writable root that holds the mount) between the look
// and the open (found in review: a proc below a root was left writable,
// and another call's command could rename two directories to swap their
// mounts). So the mount reached there must be id, or one stacked on it
// (which hides it and what is below it for good: no command can unmount);
// for anything else, or nothing, it returns EAGAIN and the caller reads
// the table again: a mount the host removed is no longer in it.
static int seal_mount(const char *path, uint64_t id) {
	struct k_open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW, .resolve = K_RESOLVE_NO_SYMLINKS};
	uint64_t at;
	int depth, err = 0, fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	if (fd < 0 && errno == ENOSYS)
		fd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? EAGAIN : errno;
	if ((at = mount_id(fd)) == 0) {
		close(fd);
		return ENOSYS;
	}
	for (depth = 0; at != id && at != 0 && depth < 16; depth++)
		at = mount_parent(at);
	if (at != id)
		err = EAGAIN;
	else if (set_attr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE,
			  K_MOUNT_ATTR_RDONLY | K_MOUNT_ATTR_NOSUID | K_MOUNT_ATTR_NODEV | K_MOUNT_ATTR_NOEXEC) < 0)
		err = errno;
	close(fd);
	return err;
}

static int bind_self(int fd, unsigned attr);

// cover_unsearchable puts a nodev clone of the directory on path that the
// child may not search (the first that refuses a lookup) over it, so that
// a devpts below it is nodev once its owner opens it, to the command too
// (found in review: a command read a bind below such a directory). The
// copies are nodev, and seal_pass skips them. A path hidden (ENOENT and
// its kin) needs nothing; one that resolves now, EAGAIN.
static int cover_unsearchable(const char *path) {
	char name[256];
	const char *p = path;
	size_t n;
	int next, err, dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (dir < 0)
		return errno;
	for (;;) {
		while (*p == '/')
			p++;
		for (n = 0; p[n] != 0 && p[n] != '/'; n++)
			;
		if (n == 0 || n >= sizeof name) {
			close(dir);
			return n == 0 ? EAGAIN : ENAMETOOLONG;
		}
		memcpy(name, p, n);
		name[n] = 0;
		p += n;
		if ((next = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			err = errno == EACCES ? bind_self(dir, K_MOUNT_ATTR_NODEV) : errno;
			close(dir);
			return err == ENOENT || err == ENOTDIR || err == ELOOP ? 0 : err;
		}
		close(dir);
		dir = next;
	}
}

// seal_pass seals each mount of a kernel_fs below a writable root once,
// and every devpts mount outside them: another devpts than the namespace's
// own (see private_ptys) holds the user's other terminals, bound one by one
// where a container runtime puts its terminal (/dev/console) or an LXC its
// /dev/ttyN. A host user's command, whose namespace is not nodev, opened
// such a bind and read what was typed there (found in review).
// It reads the namespace's own mount table, a line of which is "ID PARENT
// MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER", the point
// with space, tab, newline and backslash escaped as \ooo; into a buffer of
// the stack, since the child may not allocate. A point too long for it
// that may lie below a root fails closed. It returns EAGAIN when a mount
// was not where the table said (see seal_mount), once it has been through
// the table.
static int seal_pass(struct ls_req *r) {
	char buf[1024], point[PATH_MAX], type[32], opt[2] = {0, 0}, tok[8];
	size_t np = 0, nt = 0, flen = 0, nk = 0;
	int field = 0, after = -1, esc = 0, overflow = 0, again = 0, nodev = 0, fd, err = 0;
	unsigned oct = 0;
	uint64_t id = 0;
	char first = 0;
	ssize_t n, i;

	if ((fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) < 0)
		return errno;
	while (err == 0 && (n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		for (i = 0; i < n && err == 0; i++) {
			char c = buf[i];
			if (c == '\n') {
				point[np] = type[nt] = 0;
				int in_root = after >= 1 && is_kernel_fs(type) && below_root(r, point);
				// One nodev already is as sealed for this (root's rest
				// is nodev whole; cover_unsearchable's copies).
				int terminals = after >= 1 && !in_root && !nodev && strcmp(type, "devpts") == 0;
				if (in_root || terminals) {
					err = overflow ? ENAMETOOLONG : seal_mount(point, id);
					// One already read-only is as the rest is: the
					// roots' first mounts, below their clones, which
					// the tree's read-only covers.
					if (err == EAGAIN && in_root && !(opt[0] == 'r' && opt[1] == 'o'))
						again = 1;
					// A devpts hidden below another mount stays hidden;
					// one below a directory the child may not search
					// (EACCES) is covered: see cover_unsearchable.
					if (terminals && err == EACCES && (err = cover_unsearchable(point)) == EAGAIN)
						again = 1; // reachable now: sealed by the next pass
					if (err == EAGAIN)
						err = 0;
				}
				np = nt = flen = nk = 0;
				field = 0, after = -1, esc = overflow = nodev = 0;
				id = 0, opt[0] = opt[1] = 0;
			} else if (c == ' ' || (c == ',' && after < 0 && field == 5)) {
				if (after < 0 && field == 5) {
					nodev |= nk == 5 && memcmp(tok, "nodev", 5) == 0;
					nk = 0;
					if (c == ',')
						continue;
				}
				if (after >= 0)
					after++;
				else if (field >= 6 && flen == 1 && first == '-')
					after = 0;
				else
					field++;
				flen = 0;
			} else {
				if (after < 0 && field == 5 && flen < 2)
					opt[flen] = c;
				if (after < 0 && field == 5)
					tok[nk < sizeof tok - 1 ? nk++ : nk] = c;
				if (flen++ == 0)
					first = c;
				if (after < 0 && field == 0 && c >= '0' && c <= '9') {
					id = id * 10 + (uint64_t)(c - '0');
				} else if (after == 0 && nt < sizeof type - 1) {
					type[nt++] = c;
				} else if (after < 0 && field == 4) {
					if (esc > 0) {
						oct = oct * 8 + (unsigned)(c - '0');
						if (++esc <= 3)
							continue;
						c = (char)oct, esc = 0;
					} else if (c == '\\') {
						esc = 1, oct = 0;
						continue;
					}
					if (np < sizeof point - 1)
						point[np++] = c;
					else
						overflow = 1;
				}
			}
		}
	}
	close(fd);
	return err == 0 && again ? EAGAIN : err;
}

// seal_kernel_mounts seals each mount of a kernel_fs below a writable root,
// and each devpts mount (see seal_pass), reading the table again while a
// mount was not where it said; a sealed
// mount stays so (no command can change it), so a pass that found each
// where it said leaves none unsealed. One moved out of the table's sight
// (below a directory of another call's root) is not in it: see
// docs/linux.md. A command that keeps moving them fails the call.
static int seal_kernel_mounts(struct ls_req *r) {
	int pass, err = EAGAIN;
	for (pass = 0; err == EAGAIN && pass < 8; pass++)
		err = seal_pass(r);
	return err == EAGAIN ? EBUSY : err;
}

// keep_roots_writable makes every mount read-only (and, for root, nodev)
// but the writable roots: each is cloned as it is (its submounts too, with
// their own flags, but nodev for root and kernel interfaces sealed), the
// whole tree is made read-only, the clones are put back on the roots,
// parents first (the parent sorts them), so that a root inside another is
// put back on top of it. ls_setup_mounts then allows the devices again.
static int keep_roots_writable(struct ls_req *r) {
	const struct ls_mount_target *w = r->mounts[LS_MOUNT_WRITABLE];
	int n = r->nmounts[LS_MOUNT_WRITABLE];
	int *trees = r->trees;
	int i, k, fd, err = 0, root = geteuid() == 0;

	for (i = 0; i < n; i++) {
		if ((fd = open_target(&w[i])) < 0) {
			err = -fd;
		} else {
			trees[i] = (int)syscall(SYS_open_tree, fd, "",
						K_OPEN_TREE_CLONE | K_OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
			// A device node in a root (a chroot's /dev/sda) would give a
			// root command the disk below every file DenyRead covers.
			if (trees[i] < 0) {
				err = errno;
			} else if (root && set_attr(trees[i], "", AT_EMPTY_PATH | AT_RECURSIVE, K_MOUNT_ATTR_NODEV) < 0) {
				err = errno;
				close(trees[i]);
			}
			close(fd);
		}
		if (err != 0) {
			for (k = 0; k < i; k++)
				close(trees[k]);
			return failed(r, LS_MOUNT_WRITABLE, i, err);
		}
	}
	if (set_attr(AT_FDCWD, "/", AT_RECURSIVE, K_MOUNT_ATTR_RDONLY | (root ? K_MOUNT_ATTR_NODEV : 0)) < 0)
		err = failed(r, -1, -1, errno);
	for (i = 0; i < n; i++) {
		if (err == 0 && (fd = open_target(&w[i])) < 0)
			err = failed(r, LS_MOUNT_WRITABLE, i, -fd);
		if (err == 0) {
			if (clone_onto(trees[i], fd) < 0)
				err = failed(r, LS_MOUNT_WRITABLE, i, errno);
			close(fd);
		}
		close(trees[i]);
	}
	if (err == 0 && (err = seal_kernel_mounts(r)) != 0)
		err = failed(r, -1, -1, err);
	return err;
}

// private_ptys puts a devpts of the namespace's own on /dev/pts. The host's
// holds every terminal of the machine (for a host user, each of its own),
// which a command could open and read, taking what is typed there, a sudo
// password included (found in review). The command's own terminals, the
// ones it makes through /dev/ptmx, are in this one; those it was given are
// open already. Landlock's rules for the host's /dev/pts do not reach it:
// the child adds its own (see allow_own_ptys).
static int private_ptys(void) {
	int fs, mnt, fd, err = 0;

	if ((fd = open("/dev/pts", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : errno;
	if ((fs = (int)syscall(SYS_fsopen, "devpts", K_FSOPEN_CLOEXEC)) < 0) {
		err = errno;
		close(fd);
		return err;
	}
	if (syscall(SYS_fsconfig, fs, K_FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0 ||
	    syscall(SYS_fsconfig, fs, K_FSCONFIG_SET_STRING, "mode", "0620", 0) < 0 ||
	    syscall(SYS_fsconfig, fs, K_FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (mnt = (int)syscall(SYS_fsmount, fs, K_FSMOUNT_CLOEXEC, K_MOUNT_ATTR_NOSUID | K_MOUNT_ATTR_NOEXEC)) < 0) {
		err = errno;
	} else {
		if (clone_onto(mnt, fd) < 0)
			err = errno;
		close(mnt);
	}
	close(fs);
	close(fd);
	return err;
}

// bind_self binds the tree below fd over itself, with attr set on every
// mount of it (none: as they are).
static int bind_self(int fd, unsigned attr) {
	int err = 0;
	int tree = (int)syscall(SYS_open_tree, fd, "",
				K_OPEN_TREE_CLONE | K_OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return errno;
	if ((attr != 0 && set_attr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, attr) < 0) || clone_onto(tree, fd) < 0)
		err = errno;
	close(tree);
	return err;
}

// cover puts a read-only view of src, in the mount mnt, over fd.
static int cover(int mnt, const char *src, int fd, unsigned attr) {
	int err = 0;
	int tree = (int)syscall(SYS_open_tree, mnt, src, K_OPEN_TREE_CLONE | K_OPEN_TREE_CLOEXEC);
	if (tree < 0)
		return errno;
	if (set_attr(tree, "", AT_EMPTY_PATH, attr) < 0 || clone_onto(tree, fd) < 0)
		err = errno;
	close(tree);
	return err;
}

// empty_tmpfs makes a small detached tmpfs holding an empty directory "dir"
// and an empty file "file", which every denied path gets a read-only view
// of, and returns its mount descriptor or -errno.
static int empty_tmpfs(void) {
	int fs, mnt = -1, fd, err;

	if ((fs = (int)syscall(SYS_fsopen, "tmpfs", K_FSOPEN_CLOEXEC)) < 0)
		return -errno;
	if (syscall(SYS_fsconfig, fs, K_FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
	    syscall(SYS_fsconfig, fs, K_FSCONFIG_SET_STRING, "nr_inodes", "4", 0) < 0 ||
	    syscall(SYS_fsconfig, fs, K_FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (mnt = (int)syscall(SYS_fsmount, fs, K_FSMOUNT_CLOEXEC, 0)) < 0) {
		err = errno;
		close(fs);
		return -err;
	}
	close(fs);
	if (mkdirat(mnt, "dir", 0555) < 0 ||
	    (fd = openat(mnt, "file", O_CREAT | O_EXCL | O_RDONLY | O_CLOEXEC, 0444)) < 0) {
		err = errno;
		close(mnt);
		return -err;
	}
	close(fd);
	return mnt;
}

// ls_setup_mounts returns 0 or an errno, with the target that failed in
// r->mount_kind and r->mount_index (-1 for a step of no target).
int ls_setup_mounts(struct ls_req *r) {
	const unsigned ro = K_MOUNT_ATTR_RDONLY | K_MOUNT_ATTR_NOSUID | K_MOUNT_ATTR_NODEV;
	int i, j, k, fd, err, mnt;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return failed(r, -1, -1, errno);
	if (r->read_only_rest && (err = keep_roots_writable(r)) != 0)
		return err;
	// keep_roots_writable has sealed other devpts mounts with the rest.
	if (!r->read_only_rest && (err = seal_kernel_mounts(r)) != 0)
		return failed(r, -1, -1, err);
	if ((err = private_ptys()) != 0)
		return failed(r, -1, -1, err);
	// After the devpts of its own: /dev/ptmx is bound from its ptmx.
	if (r->read_only_rest && geteuid() == 0 && (err = allow_devices()) != 0)
		return failed(r, -1, -1, err);
	// Pins first, parents first (the parent sorts them), then what they
	// lead to: each mount then sits on the pin above it, which no rename
	// or rmdir can move (EBUSY).
	for (j = 0; j < 2; j++) {
		k = j == 0 ? LS_MOUNT_PIN : LS_MOUNT_READ_ONLY;
		for (i = 0; i < r->nmounts[k]; i++) {
			if ((fd = open_target(&r->mounts[k][i])) < 0)
				return failed(r, k, i, -fd);
			err = bind_self(fd, k == LS_MOUNT_PIN ? 0 : ro);
			close(fd);
			if (err != 0)
				return failed(r, k, i, err);
		}
	}
	if (r->nmounts[LS_MOUNT_DENY_DIR] + r->nmounts[LS_MOUNT_DENY_FILE] == 0 && !r->probe_tmpfs)
		return 0;
	if ((mnt = empty_tmpfs()) < 0)
		return failed(r, -1, -1, -mnt);
	for (k = LS_MOUNT_DENY_DIR; k <= LS_MOUNT_DENY_FILE; k++) {
		for (i = 0; i < r->nmounts[k]; i++) {
			if ((fd = open_target(&r->mounts[k][i])) < 0) {
				close(mnt);
				return failed(r, k, i, -fd);
			}
			err = cover(mnt, k == LS_MOUNT_DENY_DIR ? "dir" : "file", fd, ro | K_MOUNT_ATTR_NOEXEC);
			close(fd);
			if (err != 0) {
				close(mnt);
				return failed(r, k, i, err);
			}
		}
	}
	close(mnt);
	return 0;
}
