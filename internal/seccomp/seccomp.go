//go:build linux && cgo

// Package seccomp compiles the sandbox's seccomp filter, once per variant, to
// a raw BPF program (struct sock_filter entries) that the child installs just
// before execve. The filter allows everything except the calls listed here,
// clone with CLONE_PARENT or CLONE_NEWUSER, unshare with CLONE_NEWUSER, and
// set-user-ID or set-group-ID modes (see denySetID), which fail with EPERM;
// clone3 and openat2 fail with ENOSYS, and a change of the parent-death
// signal away from SIGKILL does nothing; a system call of another
// architecture (or x32) kills the process. A program for a command with a
// file size limit also refuses what would pass it (see denyFileGrowth).
package seccomp

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/agentbox/sandboxexec/internal/probe"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// AlwaysDenied are refused whatever the policy: they let a process read or
// steer others (ptrace, process_vm_*), bypass seccomp's view of system calls
// (io_uring), or reach the kernel in ways no tool call needs.
var AlwaysDenied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"bpf", "perf_event_open", "userfaultfd",
	"keyctl", "add_key", "request_key",
	"init_module", "finit_module", "delete_module",
	"kexec_load", "kexec_file_load",
	// A file handle opened through a descriptor on a bind mount (a
	// container's volume, a btrfs subvolume) reaches the whole file system
	// behind it, and Landlock checks the open against the mount's rules.
	"open_by_handle_at",
}

// MountAPI, the new mount API, is refused too: fsconfig's
// FSCONFIG_CMD_CREATE sets a filesystem up before any hook Landlock has (an
// overlay empties and remakes its work directory, which could be
// anywhere), and nothing made here can be mounted in a Landlock domain
// anyway. It is in the tail of a split program (see Split). open_tree_attr
// (Linux 6.15) is open_tree with mount attributes.
var MountAPI = []string{"fsopen", "fsconfig", "fsmount", "fspick", "open_tree", "move_mount", "mount_setattr", "open_tree_attr"}

// fSetDeleg is fcntl's F_SETDELEG (F_LINUX_SPECIFIC_BASE + 16, Linux
// 6.19), which x/sys/unix may not have yet.
const fSetDeleg = 1024 + 16

// The parent-death signal is what kills the command, and with it its PID
// namespace, when the host dies (even by SIGKILL). prctl(PR_SET_PDEATHSIG)
// with any other signal (0 clears it) returns success and changes nothing:
// refusing it would break every program that asks a child of its own to die
// with it (Go's os/exec Pdeathsig, Python launchers), which is harmless
// here, since everything the command starts dies with the call anyway.
const keptPdeathsig = unix.SIGKILL

// DeniedIoctls are requests that a file open for reading only (which
// Landlock lets the command open anywhere) is enough for, and that change
// more than metadata outside the roots: terminal input (TIOCSTI,
// TIOCLINUX); btrfs subvolumes and snapshots, made in or removed from any
// directory, or made read-only, with only the directory's permission bits
// checked; fscrypt, whose policy locks an empty directory to a key
// (ENOKEY for what is made in it) and whose keys, removed, lock what the
// host unlocked; fs-verity, which makes a file read-only for good; and the
// loop devices' setup requests, which detach the host's (Landlock, from ABI
// 5 only, refuses a device's ioctls, and a root command opens any device for
// reading).
var DeniedIoctls = []uint64{
	unix.TIOCSTI, unix.TIOCLINUX,
	unix.LOOP_SET_FD, unix.LOOP_CLR_FD, unix.LOOP_SET_STATUS, unix.LOOP_SET_STATUS64,
	0x4c06, // LOOP_CHANGE_FD, which x/sys lacks
	unix.LOOP_SET_CAPACITY, unix.LOOP_SET_DIRECT_IO,
	unix.LOOP_SET_BLOCK_SIZE, unix.LOOP_CONFIGURE,
	unix.LOOP_CTL_ADD, unix.LOOP_CTL_REMOVE, unix.LOOP_CTL_GET_FREE,
	btrfsIoctl(iow, 1, 4096),  // BTRFS_IOC_SNAP_CREATE
	btrfsIoctl(iow, 14, 4096), // BTRFS_IOC_SUBVOL_CREATE
	btrfsIoctl(iow, 15, 4096), // BTRFS_IOC_SNAP_DESTROY
	btrfsIoctl(iow, 19, 8),    // BTRFS_IOC_DEFAULT_SUBVOL
	btrfsIoctl(iow, 23, 4096), // BTRFS_IOC_SNAP_CREATE_V2
	btrfsIoctl(iow, 24, 4096), // BTRFS_IOC_SUBVOL_CREATE_V2
	btrfsIoctl(iow, 26, 8),    // BTRFS_IOC_SUBVOL_SETFLAGS
	btrfsIoctl(iowr, 37, 200), // BTRFS_IOC_SET_RECEIVED_SUBVOL
	btrfsIoctl(iowr, 37, 192), // its 32-bit layout
	btrfsIoctl(iow, 63, 4096), // BTRFS_IOC_SNAP_DESTROY_V2
	unix.FS_IOC_SET_ENCRYPTION_POLICY,
	unix.FS_IOC_ADD_ENCRYPTION_KEY,
	unix.FS_IOC_REMOVE_ENCRYPTION_KEY,
	unix.FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS,
	unix.FS_IOC_ENABLE_VERITY,
}

// The direction bits of _IOW and _IOWR as this architecture encodes them,
// taken from requests x/sys knows (FS_IOC_ENABLE_VERITY is _IOW('f', 133,
// 128 bytes), FS_IOC_ADD_ENCRYPTION_KEY _IOWR('f', 23, 80 bytes)); x/sys
// has no btrfs requests.
const (
	iow  = unix.FS_IOC_ENABLE_VERITY - (128<<16 | 'f'<<8 | 133)
	iowr = unix.FS_IOC_ADD_ENCRYPTION_KEY - (80<<16 | 'f'<<8 | 23)
)

// btrfsIoctl is the request number of btrfs ioctl nr (type 0x94) whose
// argument has this size.
func btrfsIoctl(dir, nr, size uint64) uint64 { return dir | size<<16 | 0x94<<8 | nr }

// DeniedNetworkCalls are refused when the policy has no network. socket and
// socketpair are refused for every family but AF_UNIX, and for datagram
// UNIX sockets (SOCK_DGRAM, and SOCK_RAW, which AF_UNIX makes one), so
// stream socketpair-based tools work while no socket can reach a server (a
// pathname UNIX socket included, since connect is refused).
// sendto is refused only with a destination (see Program): send(2) on a
// socketpair is sendto without one.
var DeniedNetworkCalls = []string{
	"connect", "bind", "listen", "accept", "accept4",
	"sendmmsg", "recvmmsg",
	"getsockopt", "setsockopt", "getpeername", "getsockname", "shutdown",
}

// part is which rules a program holds.
type part int

const (
	whole part = iota
	head       // all but the tail's
	tail       // MountAPI, user namespaces from clone and unshare, openat2, RLIMIT_CORE
	parts
)

// programs are compiled once per policy (network mode, file size limit or
// not) and part; a compilation that failed only for want of a descriptor
// or memory is tried again by the next call.
var programs [networks][2][parts]probe.Result[[]byte]

// Network is what a program lets the command do with sockets.
type Network int

const (
	// NetworkAllowed leaves sockets alone.
	NetworkAllowed Network = iota
	// NetworkDenied allows stream UNIX sockets from socketpair only (see
	// NetworkDenied's list).
	NetworkDenied
	// NetworkLoopback is for a command in a network namespace of its own,
	// with only a loopback interface (where a proxy listens): IPv4 and IPv6
	// sockets of every kind, and nothing else but NetworkDenied's
	// socketpairs. No UNIX socket can be made with socket(2), so none can
	// connect to the host's pathname sockets, which the namespace does not
	// hide.
	NetworkLoopback
	networks
)

func program(n Network, fileSizeLimited bool, p part) ([]byte, error) {
	if n < 0 || n >= networks {
		return nil, fmt.Errorf("seccomp: unknown network mode %d", int(n))
	}
	limited := 0
	if fileSizeLimited {
		limited = 1
	}
	return programs[n][limited][p].Get(context.Background(), func() ([]byte, error) { return compile(n, fileSizeLimited, p) })
}

// Program returns the BPF program for the policy: its network mode, and
// whether the command has a file size limit (RLIMIT_FSIZE) for the program
// to back (see denyFileGrowth). The bytes are shared: callers must not
// modify them. An error that probe.Temporary accepts says only that this
// attempt failed.
func Program(n Network, fileSizeLimited bool) ([]byte, error) {
	return program(n, fileSizeLimited, whole)
}

// Split returns Program's rules in two programs, for a child that sets
// itself up before its execve: head has every rule but those the set-up
// needs to break (MountAPI, clone and unshare with CLONE_NEWUSER, openat2,
// and setting RLIMIT_CORE, which Program makes do nothing), and can be in
// force from the clone on; tail has those, and is installed by the child
// last. Together they refuse what Program refuses, with the same errors.
func Split(n Network, fileSizeLimited bool) (headProgram, tailProgram []byte, err error) {
	if headProgram, err = program(n, fileSizeLimited, head); err != nil {
		return nil, nil, err
	}
	if tailProgram, err = program(n, fileSizeLimited, tail); err != nil {
		return nil, nil, err
	}
	return headProgram, tailProgram, nil
}

// Available reports whether this kernel and libseccomp can build and load
// the filter (it is built, not loaded, here; loading happens in the child).
func Available() error {
	if _, err := Program(NetworkDenied, false); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: the kernel has no seccomp: %w", err)
	}
	return nil
}

// keepCoreLimit keeps RLIMIT_CORE at the 1 byte the child set: a command
// that lowered its soft limit to 0 had its crash handed to a core_pattern
// pipe's helper, which runs as root outside the sandbox (the kernel takes
// only exactly 1 as "none" for a pipe; found in review). Setting it
// succeeds and changes nothing: a program that asks for 0 (ssh-agent,
// test suites) means "no core dump", which 1 gives, and some exit when
// refused. Asking for the old limit as well is refused: the filter cannot
// fill it in. In the tail of a split program (see Split).
func keepCoreLimit(rule func(string, libseccomp.ScmpAction, ...libseccomp.ScmpCondition) error) error {
	ignore := libseccomp.ActErrno.SetReturnCode(0)
	newLimit, err := libseccomp.MakeCondition(2, libseccomp.CompareNotEqual, 0)
	if err != nil {
		return fmt.Errorf("seccomp: prlimit64 condition: %w", err)
	}
	// The resource is an unsigned int: its low 32 bits.
	core := func(arg uint) (libseccomp.ScmpCondition, error) {
		return libseccomp.MakeCondition(arg, libseccomp.CompareMaskedEqual, 0xffffffff, unix.RLIMIT_CORE)
	}
	setCore, err := core(0)
	if err != nil {
		return fmt.Errorf("seccomp: setrlimit condition: %w", err)
	}
	if err := rule("setrlimit", ignore, setCore); err != nil {
		return err
	}
	prlimitCore, err := core(1)
	if err != nil {
		return fmt.Errorf("seccomp: prlimit64 condition: %w", err)
	}
	self, err := libseccomp.MakeCondition(0, libseccomp.CompareEqual, 0)
	if err != nil {
		return fmt.Errorf("seccomp: prlimit64 condition: %w", err)
	}
	for _, withOld := range []bool{false, true} {
		op, act := libseccomp.CompareEqual, ignore
		if withOld {
			op, act = libseccomp.CompareNotEqual, libseccomp.ActErrno.SetReturnCode(int16(unix.EPERM))
		}
		old, err := libseccomp.MakeCondition(3, op, 0)
		if err != nil {
			return fmt.Errorf("seccomp: prlimit64 condition: %w", err)
		}
		if err := rule("prlimit64", act, self, prlimitCore, newLimit, old); err != nil {
			return err
		}
	}
	return nil
}

func compile(n Network, fileSizeLimited bool, p part) ([]byte, error) {
	f, err := libseccomp.NewFilter(libseccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("seccomp: new filter: %w", err)
	}
	defer f.Release()
	if err := f.SetBadArchAction(libseccomp.ActKillProcess); err != nil {
		return nil, fmt.Errorf("seccomp: bad-arch action: %w", err)
	}
	// A binary tree of system call numbers rather than a list: the kernel
	// walks the filter for every system call number when it installs it
	// (to find the ones it can allow without running it), and then for each
	// call that needs its arguments looked at. libseccomp before 2.5 has
	// only the list, which is as correct.
	_ = f.SetOptimize(2)
	eperm := libseccomp.ActErrno.SetReturnCode(int16(unix.EPERM))
	rule := func(name string, act libseccomp.ScmpAction, conds ...libseccomp.ScmpCondition) error {
		call, err := syscallNumber(name)
		if err != nil {
			// A call this architecture lacks cannot be made; nothing to deny.
			return nil
		}
		if len(conds) == 0 {
			err = f.AddRule(call, act)
		} else {
			err = f.AddRuleConditional(call, act, conds)
		}
		if err != nil {
			return fmt.Errorf("seccomp: rule for %s: %w", name, err)
		}
		return nil
	}
	deny := func(name string, conds ...libseccomp.ScmpCondition) error {
		return rule(name, eperm, conds...)
	}
	if p != head {
		if err := denyNamespaceSetup(deny); err != nil {
			return nil, err
		}
		// openat2 passes its mode in memory, where a filter cannot look
		// (see denySetID): ENOSYS, on which the C library and Go fall back
		// to openat. A child that sets up mounts enters its working
		// directory with it, before the tail.
		if err := rule("openat2", libseccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS))); err != nil {
			return nil, err
		}
		// After the child's own limits: a head in force from the clone
		// on would keep the host's.
		if err := keepCoreLimit(rule); err != nil {
			return nil, err
		}
	}
	if p == tail {
		return export(f)
	}
	if err := denySetID(deny); err != nil {
		return nil, err
	}
	if fileSizeLimited {
		if err := denyFileGrowth(rule); err != nil {
			return nil, err
		}
	}
	for _, name := range AlwaysDenied {
		if err := deny(name); err != nil {
			return nil, err
		}
	}
	for _, req := range DeniedIoctls {
		// The kernel reads ioctl's request as 32 bits; compare only those.
		c, err := libseccomp.MakeCondition(1, libseccomp.CompareMaskedEqual, 0xffffffff, req)
		if err != nil {
			return nil, fmt.Errorf("seccomp: ioctl condition: %w", err)
		}
		if err := deny("ioctl", c); err != nil {
			return nil, err
		}
	}
	// clone3 passes its flags in memory, where a filter cannot look, and
	// CLONE_INTO_CGROUP would let a root command (which keeps
	// CAP_DAC_OVERRIDE; Landlock does not check cgroup migration) start a
	// process outside the call's pids cgroup. ENOSYS makes glibc fall back
	// to clone, whose flags are in a register and carry no cgroup.
	if err := rule("clone3", libseccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS))); err != nil {
		return nil, err
	}
	// CLONE_PARENT makes the new process a child of the command's parent,
	// the host: when the call kills it, its zombie is the host's, which
	// never waits for it, and a command could pile them up against the
	// host user's process limit. (Init of a PID namespace is refused it by
	// the kernel; a command without one is not.)
	c, err := libseccomp.MakeCondition(cloneFlagsArg(), libseccomp.CompareMaskedEqual, unix.CLONE_PARENT, unix.CLONE_PARENT)
	if err != nil {
		return nil, fmt.Errorf("seccomp: clone condition: %w", err)
	}
	if err := deny("clone", c); err != nil {
		return nil, err
	}
	// prlimit64 sets another process's limits where it names a pid: the
	// host's, or another call's command (without a PID namespace, the
	// same user's processes are in reach), whose RLIMIT_CPU of a second
	// SIGKILLs it and whose RLIMIT_NPROC of 0 stops it forking (found in
	// review). Reading them (no new limit), and setting the caller's own
	// (pid 0, as setrlimit does), stay. Rlimits are the process's, not a
	// thread's, so pid 0 is all a command needs.
	otherPid, err := libseccomp.MakeCondition(0, libseccomp.CompareNotEqual, 0)
	if err != nil {
		return nil, fmt.Errorf("seccomp: prlimit64 condition: %w", err)
	}
	newLimit, err := libseccomp.MakeCondition(2, libseccomp.CompareNotEqual, 0)
	if err != nil {
		return nil, fmt.Errorf("seccomp: prlimit64 condition: %w", err)
	}
	if err := deny("prlimit64", otherPid, newLimit); err != nil {
		return nil, err
	}
	// A lease (fcntl F_SETLEASE) makes every other open of the file, an
	// execve of it too, wait until the holder lets go, up to
	// /proc/sys/fs/lease-break-time (45 s), and a command may take one on
	// any file it can read and owns (a root host's command: the host's
	// programs and git configuration). Found in review: a command that
	// leased a program held a concurrent call that ran it, before that
	// call's timeout had started. The command is an int: its low 32 bits.
	// F_SETDELEG (Linux 6.19) takes a delegation, a lease by another name
	// that a directory can hold too, whose break makes opens and changes
	// wait alike.
	for _, name := range []string{"fcntl", "fcntl64"} {
		for _, cmd := range []uint64{unix.F_SETLEASE, fSetDeleg} {
			lease, err := libseccomp.MakeCondition(1, libseccomp.CompareMaskedEqual, 0xffffffff, cmd)
			if err != nil {
				return nil, fmt.Errorf("seccomp: fcntl condition: %w", err)
			}
			if err := deny(name, lease); err != nil {
				return nil, err
			}
		}
	}
	// prctl's option is an int: compare its low 32 bits; the signal is an
	// unsigned long, checked whole by the kernel.
	option, err := libseccomp.MakeCondition(0, libseccomp.CompareMaskedEqual, 0xffffffff, unix.PR_SET_PDEATHSIG)
	if err != nil {
		return nil, fmt.Errorf("seccomp: prctl condition: %w", err)
	}
	signal, err := libseccomp.MakeCondition(1, libseccomp.CompareNotEqual, uint64(keptPdeathsig))
	if err != nil {
		return nil, fmt.Errorf("seccomp: prctl condition: %w", err)
	}
	if err := rule("prctl", libseccomp.ActErrno.SetReturnCode(0), option, signal); err != nil {
		return nil, err
	}
	if n == NetworkLoopback {
		// Every family but AF_INET (2) and AF_INET6 (10): one condition
		// per rule on the family, which libseccomp takes everywhere.
		for _, c := range [][2]uint64{
			{uint64(libseccomp.CompareLess), unix.AF_INET},
			{uint64(libseccomp.CompareGreater), unix.AF_INET6},
		} {
			cond, err := libseccomp.MakeCondition(0, libseccomp.ScmpCompareOp(c[0]), c[1])
			if err != nil {
				return nil, fmt.Errorf("seccomp: socket condition: %w", err)
			}
			if err := deny("socket", cond); err != nil {
				return nil, err
			}
		}
		for family := uint64(unix.AF_INET + 1); family < unix.AF_INET6; family++ {
			cond, err := libseccomp.MakeCondition(0, libseccomp.CompareEqual, family)
			if err != nil {
				return nil, fmt.Errorf("seccomp: socket condition: %w", err)
			}
			if err := deny("socket", cond); err != nil {
				return nil, err
			}
		}
	}
	if n == NetworkDenied {
		c, err := libseccomp.MakeCondition(0, libseccomp.CompareNotEqual, unix.AF_UNIX)
		if err != nil {
			return nil, fmt.Errorf("seccomp: socket condition: %w", err)
		}
		if err := deny("socket", c); err != nil {
			return nil, err
		}
	}
	if n != NetworkAllowed {
		// A datagram UNIX socket needs no connect to reach a pathname
		// socket: sendmsg with a destination does it, and sendmsg cannot be
		// filtered by address. So no datagram UNIX sockets, from socket or
		// socketpair; the type's low four bits are the type, the rest
		// flags, and AF_UNIX turns SOCK_RAW into SOCK_DGRAM. socketpair is
		// for AF_UNIX only: another family that has it (TIPC) would be a
		// socket this filter never saw made.
		isUnix, err := libseccomp.MakeCondition(0, libseccomp.CompareEqual, unix.AF_UNIX)
		if err != nil {
			return nil, fmt.Errorf("seccomp: socket condition: %w", err)
		}
		notUnix, err := libseccomp.MakeCondition(0, libseccomp.CompareNotEqual, unix.AF_UNIX)
		if err != nil {
			return nil, fmt.Errorf("seccomp: socket condition: %w", err)
		}
		if err := deny("socketpair", notUnix); err != nil {
			return nil, err
		}
		for _, datagram := range []uint64{unix.SOCK_DGRAM, unix.SOCK_RAW} {
			kind, err := libseccomp.MakeCondition(1, libseccomp.CompareMaskedEqual, 0xf, datagram)
			if err != nil {
				return nil, fmt.Errorf("seccomp: socket condition: %w", err)
			}
			if n == NetworkDenied {
				if err := deny("socket", isUnix, kind); err != nil {
					return nil, err
				}
			}
			if err := deny("socketpair", kind); err != nil {
				return nil, err
			}
		}
	}
	if n == NetworkDenied {
		for _, name := range DeniedNetworkCalls {
			if err := deny(name); err != nil {
				return nil, err
			}
		}
		// sendto's destination is its fifth argument, a pointer: send(2),
		// which Python's socket.send and sendall use, passes none.
		withDestination, err := libseccomp.MakeCondition(4, libseccomp.CompareNotEqual, 0)
		if err != nil {
			return nil, fmt.Errorf("seccomp: sendto condition: %w", err)
		}
		if err := deny("sendto", withDestination); err != nil {
			return nil, err
		}
	}
	return export(f)
}

// cloneFlagsArg is the argument of clone that holds its flags: the first,
// but on s390x the second.
func cloneFlagsArg() uint {
	if runtime.GOARCH == "s390x" {
		return 1
	}
	return 0
}

// denyNamespaceSetup refuses MountAPI and user namespaces. A user namespace
// gives the command every capability over namespaces of its own, and with
// them whatever the kernel does for such a holder without a path hook
// Landlock sees (a filesystem's setup, above), and a wide attack surface;
// Docker's default profile refuses it too. A nested sandbox that needs one
// (bubblewrap, Chromium's) fails.
func denyNamespaceSetup(deny func(string, ...libseccomp.ScmpCondition) error) error {
	for _, name := range MountAPI {
		if err := deny(name); err != nil {
			return err
		}
	}
	c, err := libseccomp.MakeCondition(cloneFlagsArg(), libseccomp.CompareMaskedEqual, unix.CLONE_NEWUSER, unix.CLONE_NEWUSER)
	if err != nil {
		return fmt.Errorf("seccomp: clone condition: %w", err)
	}
	if err := deny("clone", c); err != nil {
		return err
	}
	newUser, err := libseccomp.MakeCondition(0, libseccomp.CompareMaskedEqual, unix.CLONE_NEWUSER, unix.CLONE_NEWUSER)
	if err != nil {
		return fmt.Errorf("seccomp: unshare condition: %w", err)
	}
	return deny("unshare", newUser)
}

// syscallFromName is libseccomp's table of names, which a test replaces.
var syscallFromName = libseccomp.GetSyscallFromName

// unifiedCalls are the calls of the filter from Linux 5.1 on, which have
// one number on every architecture but alpha, ia64 and mips, for a
// libseccomp older than the kernel that does not know them by name: their
// rules were left out while the kernel had the calls (found in review:
// libseccomp before 2.5.5 does not know fchmodat2, in Linux 6.6, which
// then set a set-user-ID mode). The library is the one the host loads at
// run time, not the one it was built with.
var unifiedCalls = map[string]libseccomp.ScmpSyscall{
	"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
	"clone3": 435, "openat2": 437, "mount_setattr": 442, "fchmodat2": 452, "open_tree_attr": 467,
}

// syscallNumber is name's number on this architecture, from libseccomp or
// else unifiedCalls.
func syscallNumber(name string) (libseccomp.ScmpSyscall, error) {
	call, err := syscallFromName(name)
	if n, ok := unifiedCalls[name]; err != nil && ok && !strings.HasPrefix(runtime.GOARCH, "mips") {
		return n, nil
	}
	return call, err
}

// setIDModeArgs are the calls that give a file its mode, and which
// argument holds it; the open family's flags are the argument before.
var setIDModeArgs = []struct {
	name string
	mode uint
	open bool // only with O_CREAT or O_TMPFILE in the flags
}{
	{"chmod", 1, false}, {"fchmod", 1, false}, {"fchmodat", 2, false}, {"fchmodat2", 2, false},
	{"mknod", 1, false}, {"mknodat", 2, false}, {"creat", 1, false},
	{"open", 2, true}, {"openat", 3, true},
}

// oTmpfile is O_TMPFILE less O_DIRECTORY, the bit that tells it apart.
const oTmpfile = unix.O_TMPFILE &^ unix.O_DIRECTORY

// denySetID refuses set-user-ID and set-group-ID modes, as systemd's
// RestrictSUIDSGID= does: such a file, left in a writable root, would run
// as its owner (root, for a root host) for whoever starts it later,
// outside any sandbox (found in review).
func denySetID(deny func(string, ...libseccomp.ScmpCondition) error) error {
	for _, c := range setIDModeArgs {
		for _, bit := range []uint64{unix.S_ISUID, unix.S_ISGID} {
			mode, err := libseccomp.MakeCondition(c.mode, libseccomp.CompareMaskedEqual, bit, bit)
			if err != nil {
				return fmt.Errorf("seccomp: %s condition: %w", c.name, err)
			}
			if !c.open {
				if err := deny(c.name, mode); err != nil {
					return err
				}
				continue
			}
			for _, create := range []uint64{unix.O_CREAT, oTmpfile} {
				flags, err := libseccomp.MakeCondition(c.mode-1, libseccomp.CompareMaskedEqual, create, create)
				if err != nil {
					return fmt.Errorf("seccomp: %s condition: %w", c.name, err)
				}
				if err := deny(c.name, flags, mode); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// The fallocate modes and the ioctls that call fallocate (struct
// space_resv, 48 bytes: FS_IOC_RESVSP and FS_IOC_RESVSP64 with
// FALLOC_FL_KEEP_SIZE, FS_IOC_ZERO_RANGE with it and FALLOC_FL_ZERO_RANGE)
// that denyFileGrowth refuses; x/sys has neither the modes nor the ioctls.
const (
	fallocKeepSize    = 0x01
	fallocPunchHole   = 0x02
	fallocInsertRange = 0x20
)

var growthIoctls = []uint64{
	iow | 48<<16 | 'X'<<8 | 40, // FS_IOC_RESVSP
	iow | 48<<16 | 'X'<<8 | 42, // FS_IOC_RESVSP64
	iow | 48<<16 | 'X'<<8 | 57, // FS_IOC_ZERO_RANGE
}

// denyFileGrowth refuses, with EOPNOTSUPP (what a file system without the
// mode answers, on which programs fall back to writing), the ways to give
// a file blocks or size that the kernel does not hold to RLIMIT_FSIZE,
// which it checks only where the size grows by a write or a truncate:
// fallocate with FALLOC_FL_KEEP_SIZE (not to punch a hole), which
// allocates past the end of the file and leaves its size alone, and the
// ioctls that do the same; and FALLOC_FL_INSERT_RANGE, which grows the
// size by holes that mmap then fills. Found in review: with a 1 MiB limit,
// a command allocated 4 MiB of blocks to a file of size 0, and made a file
// of 8 MiB, written through mmap. The mode is an int: its low 32 bits.
func denyFileGrowth(rule func(string, libseccomp.ScmpAction, ...libseccomp.ScmpCondition) error) error {
	unsupported := libseccomp.ActErrno.SetReturnCode(int16(unix.EOPNOTSUPP))
	for _, m := range [][2]uint64{
		{fallocKeepSize | fallocPunchHole, fallocKeepSize},
		{fallocInsertRange, fallocInsertRange},
	} {
		mode, err := libseccomp.MakeCondition(1, libseccomp.CompareMaskedEqual, 0xffffffff&m[0], m[1])
		if err != nil {
			return fmt.Errorf("seccomp: fallocate condition: %w", err)
		}
		if err := rule("fallocate", unsupported, mode); err != nil {
			return err
		}
	}
	for _, req := range growthIoctls {
		c, err := libseccomp.MakeCondition(1, libseccomp.CompareMaskedEqual, 0xffffffff, req)
		if err != nil {
			return fmt.Errorf("seccomp: ioctl condition: %w", err)
		}
		if err := rule("ioctl", unsupported, c); err != nil {
			return err
		}
	}
	return nil
}

// export writes the program through a pipe: ExportBPFMem needs libseccomp
// 2.6, and a program (at most 32 KiB) fits in a pipe's buffer.
func export(f *libseccomp.ScmpFilter) ([]byte, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	defer r.Close()
	err = f.ExportBPF(w)
	w.Close()
	if err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	bpf, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	if len(bpf) == 0 || len(bpf)%8 != 0 {
		return nil, fmt.Errorf("seccomp: export produced %d bytes, not a BPF program", len(bpf))
	}
	return bpf, nil
}
