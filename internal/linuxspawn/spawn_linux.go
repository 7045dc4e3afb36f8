//go:build linux && cgo

package linuxspawn

/*
#include <stdlib.h>
#include "spawn_linux.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// Attr describes the child to start.
//
// The descriptors in Stdio, CgroupProcsFD and LandlockRulesetFD must stay
// open until Start returns. A descriptor of an *os.File is best taken with
// its Fd method, which also puts it in blocking mode, as a child expects.
type Attr struct {
	Path string   // program passed to execve: absolute, or relative to Dir (the child chdirs first)
	Argv []string // argv, Argv[0] included
	Env  []string // "K=V" entries, the whole environment (nil: empty)
	Dir  string   // working directory; "" keeps the parent's
	// DirFD, if above 0, is the working directory, opened (O_PATH) by the
	// caller, which the child enters with fchdir in place of Dir: a child
	// that makes no mount namespace of its own cannot look Dir up (see
	// ls_child_chdir), and one that joins MountNamespace would look it up
	// there as the caller can, through the namespace's root.
	DirFD int
	// Stdio are the descriptors placed at 0, 1, 2 in the child; they may
	// coincide with 0, 1, 2 or with each other. A negative one leaves that
	// descriptor closed in the child.
	Stdio [3]int
	// NewPIDNamespace clones with CLONE_NEWPID: the command is pid 1 of a
	// new pid namespace, so when it exits or is killed the kernel kills
	// every process left in it. It needs CAP_SYS_ADMIN.
	NewPIDNamespace bool
	// NewIPCNamespace clones with CLONE_NEWIPC: System V IPC objects and
	// POSIX message queues of the host are out of the command's reach, and
	// the ones it makes die with the namespace. It needs CAP_SYS_ADMIN.
	NewIPCNamespace bool
	// NormalScheduling moves the child out of a real-time scheduling
	// policy (SCHED_FIFO, SCHED_RR) and a real-time I/O class inherited
	// from the host, to SCHED_OTHER and best-effort I/O.
	NormalScheduling bool
	// PidFD, if not nil, gets a pidfd of the child (close-on-exec), made by
	// the clone itself (CLONE_PIDFD, Linux 5.2), or -1 when Start fails.
	PidFD *int
	// Pdeathsig, if not 0, is the signal the child gets when the thread
	// that started it exits (PR_SET_PDEATHSIG).
	Pdeathsig syscall.Signal
	// CgroupProcsFD, if not -1, is a cgroup.procs file the child writes
	// "0" to, to move itself into that cgroup before anything else.
	CgroupProcsFD int
	// Rlimits are set in the child, in order.
	Rlimits []Rlimit
	// NoNewPrivs sets PR_SET_NO_NEW_PRIVS in the child. DropCapabilities
	// and SeccompFilter set it too.
	NoNewPrivs bool
	// LandlockRulesetFD, if not -1, is a Landlock ruleset the child
	// restricts itself with (after NoNewPrivs).
	LandlockRulesetFD int
	// PtsRights are the rights the child adds to LandlockRulesetFD, before
	// it restricts itself, for the devpts of its own that a mount namespace
	// (Mounts or MountNamespace) has on /dev/pts: the ruleset's rules, made
	// from the host's paths, do not reach it. Each such child adds a rule
	// to the ruleset, which keeps it (see landlock.Cache).
	PtsRights uint64
	// DropCapabilities empties the child's capability sets but for
	// KeepCapabilities (a mask of 1<<CAP_*), the bounding set included, so
	// that a root command cannot regain the rest at execve. A host without
	// CAP_SETPCAP cannot shrink the bounding set; no_new_privs, which this
	// sets, then still keeps execve from granting anything beyond the
	// permitted set.
	DropCapabilities bool
	KeepCapabilities uint64
	// SeccompFilter, if not nil, is a classic BPF program (struct
	// sock_filter, 8 bytes each, in host byte order) the child runs under
	// from the clone on, with no_new_privs (see Start). The steps before
	// execve must get past it, and so must what the spawning threads that
	// carry it do: clone, wait4, futex, mmap, rt_sigprocmask, and the
	// setuid family when the host calls it (glibc runs it on every thread,
	// and aborts the process when a thread's result differs).
	SeccompFilter []byte
	// SeccompTailFilter, if not nil, is a second program the child
	// installs itself after SeccompFilter, as its last step before execve:
	// what the mount steps need and the command must not have (the new
	// mount API, user namespaces) goes there, out of the filter that the
	// spawning threads carry from the clone on.
	SeccompTailFilter []byte
	// Mounts, if not nil, gives the child a mount namespace of its own
	// (CLONE_NEWNS), set up before Dir is entered; see Mounts.
	Mounts *Mounts
	// MountNamespace, if above 0, is a mount namespace (a descriptor of
	// it) made by MakeMountNamespace, which the child joins where Mounts
	// would have made one: Mounts must be nil. It needs CAP_SYS_ADMIN.
	MountNamespace int
	// namespaceOnly makes the mount namespace of Mounts and returns it
	// instead of a child, and its root in namespaceRoot (see
	// MakeMountNamespace).
	namespaceOnly bool
	namespaceRoot int
	// standby, if not nil, makes a standby of a instead of a child that
	// execs (see NewStandby), which it fills in.
	standby *Standby
	// Network, if not nil, gives the child a network namespace of its own
	// (CLONE_NEWNET) with only the loopback interface, up; see Network.
	// Without CAP_SYS_ADMIN it needs Mounts with UserNamespace.
	Network *Network
}

// Network is the network namespace of a child.
type Network struct {
	// ProxyPort, if not 0, is a TCP port the child listens on at
	// 127.0.0.1 in its namespace before execve; the listener is handed to
	// the caller (Listener), whose connections come from that namespace
	// while it serves them from its own.
	ProxyPort int
	// Listener is set by a Start that succeeded with a ProxyPort: the
	// listening socket's descriptor (close-on-exec), which the caller
	// owns. -1 otherwise.
	Listener int
	// Namespace, if above 0, is a network namespace (a descriptor of it)
	// that the caller has made and set up, which the child joins instead
	// of making one; ProxyPort and Listener are then left alone. It needs
	// CAP_SYS_ADMIN over the namespace, so no Mounts.UserNamespace.
	Namespace int
}

// Mounts is the mount namespace of a child. Every mount in it is made
// private, so that nothing propagates between it and the host's. Each
// Target is checked, in the child, to be the file it names (same device
// and inode, no symlink on the way) before anything is mounted on it;
// one that is not fails the Start with a *StageError of stage "mount".
type Mounts struct {
	// UserNamespace also clones with CLONE_NEWUSER, for a host without
	// CAP_SYS_ADMIN: the child maps its uid and gid to themselves, and
	// nothing else (setgroups is denied). DropCapabilities then drops the
	// bounding set in the child, which a new user namespace fills again.
	UserNamespace bool
	UID, GID      int
	// ReadOnlyRest makes every mount read-only but for Writable, which
	// keep the flags they had (their submounts too).
	ReadOnlyRest bool
	Writable     []Target
	// ReadOnly are bound read-only (and nosuid, nodev) over themselves.
	ReadOnly []Target
	// DenyDirs get an empty read-only directory over them, DenyFiles an
	// empty read-only file (noexec, nosuid, nodev).
	DenyDirs, DenyFiles []Target
	// Pinned are bound over themselves as they are (a writable directory
	// stays writable), in order, after Writable and before ReadOnly,
	// DenyDirs and DenyFiles: a directory that is a mount point cannot be
	// renamed or removed (EBUSY), so that the path to what lies below it
	// stays put. Give parents first; none may lie below a ReadOnly or
	// denied target.
	Pinned []Target
}

// Target is a path to mount on, and the identity it had when the caller
// looked (from stat(2)).
type Target struct {
	Path     string
	Dev, Ino uint64
}

// Rlimit is one resource limit (a RLIMIT_* resource) set in the child.
type Rlimit struct {
	Resource int
	Cur, Max uint64
}

// StageError is a failure inside the child before or at execve, or of the
// clone that would have made it ("clone", "stack").
type StageError struct {
	Stage string // "userns", "network", "cgroup", "setsid", "dup2", "close_range", "mount", "chdir", "setrlimit", "pdeathsig", "scheduling", "no_new_privs", "landlock_restrict_self", "signals", "seccomp", "execve", "clone", "stack"
	Err   syscall.Errno
	// Path is, for stage "mount", the Target that failed ("" for a step
	// of the namespace's own).
	Path string
}

func (e *StageError) Error() string {
	if e.Path != "" {
		return e.Stage + " " + e.Path + ": " + e.Err.Error()
	}
	return e.Stage + ": " + e.Err.Error()
}

// Unwrap returns Err, so that errors.Is(err, fs.ErrNotExist) and the like
// work.
func (e *StageError) Unwrap() error { return e.Err }

var stageNames = [...]string{
	C.LS_STAGE_NONE:         "",
	C.LS_STAGE_STACK:        "stack",
	C.LS_STAGE_CLONE:        "clone",
	C.LS_STAGE_USERNS:       "userns",
	C.LS_STAGE_NETWORK:      "network",
	C.LS_STAGE_CGROUP:       "cgroup",
	C.LS_STAGE_SETSID:       "setsid",
	C.LS_STAGE_DUP2:         "dup2",
	C.LS_STAGE_CLOSE_RANGE:  "close_range",
	C.LS_STAGE_MOUNT:        "mount",
	C.LS_STAGE_CHDIR:        "chdir",
	C.LS_STAGE_SETRLIMIT:    "setrlimit",
	C.LS_STAGE_PDEATHSIG:    "pdeathsig",
	C.LS_STAGE_SCHEDULING:   "scheduling",
	C.LS_STAGE_NO_NEW_PRIVS: "no_new_privs",
	C.LS_STAGE_LANDLOCK:     "landlock_restrict_self",
	C.LS_STAGE_CAPABILITIES: "capabilities",
	C.LS_STAGE_SIGNALS:      "signals",
	C.LS_STAGE_SECCOMP:      "seccomp",
	C.LS_STAGE_EXECVE:       "execve",
}

// maxFilterLen is BPF_MAXINSNS, the most instructions a seccomp program may
// have.
const maxFilterLen = 4096

// Start clones the child, which becomes the leader of a new session (setsid,
// so it has no controlling terminal and its process group can be killed
// whole), applies a in this order: cgroup, setsid, stdio (every other
// descriptor made close-on-exec), Dir, Rlimits, Pdeathsig, NormalScheduling,
// NoNewPrivs, LandlockRulesetFD, capabilities, signal handlers reset to
// default and mask emptied; and execve's. It returns the child's pid once the
// execve succeeded. If any step in the child failed, the child has exited and
// been reaped, and Start returns a *StageError. Start never leaves a zombie
// on failure.
//
// The command gets Stdio and no other descriptor, not even one the host
// left open without close-on-exec (os/exec would pass that on): the sandbox
// checks files and sockets when they are opened, not when they are used.
//
// Pdeathsig belongs to the thread that cloned the child: the kernel sends it
// when that thread exits. So a Start with Pdeathsig clones from one of a few
// threads that live as long as the process, and the signal comes only when
// the host dies, whichever goroutine (locked to a thread or not) called.
//
// A SeccompFilter is installed, with no_new_privs, on the threads a Start
// with that filter clones from (a few per distinct filter, for the first
// few filters), and the child inherits both at clone: it is filtered from
// its first instruction, and the filter is prepared once rather than at
// every spawn. With DropCapabilities, those threads also shrink their
// bounding set to KeepCapabilities once, and the child inherits it. Past
// those few filters and capability sets, the child does both itself (the
// filter as its last step before execve). The rest of the host is neither
// filtered nor loses a capability.
func Start(a *Attr) (pid int, err error) {
	if a.PidFD != nil {
		*a.PidFD = -1
	}
	if a.Pdeathsig == 0 && a.SeccompFilter == nil && !a.DropCapabilities {
		return start(a, nil)
	}
	if err := check(a); err != nil {
		return 0, err
	}
	want := threadState{filter: string(a.SeccompFilter), dropBounding: a.DropCapabilities}
	if a.DropCapabilities {
		want.keep = a.KeepCapabilities
	}
	p, err := poolFor(want)
	if err != nil {
		return 0, err
	}
	return start(a, p)
}

// start spawns from one of p's threads, or from the calling thread when p is
// nil. What of a the spawning thread carries, the child inherits at clone
// and does not apply again.
func start(a *Attr, p *pool) (pid int, err error) {
	var thread threadState
	if p != nil {
		thread = p.state
	}
	if err := check(a); err != nil {
		return 0, err
	}

	// Everything the child reads lives in one C block, laid out as
	// [request | argv pointers | envp pointers | rlimits | filter |
	// tail filter | mount targets | room for the writable trees |
	// strings].
	const word = unsafe.Sizeof(uintptr(0))
	reqSize := align(C.sizeof_struct_ls_req, 8)
	argvSize := uintptr(len(a.Argv)+1) * word
	envSize := uintptr(len(a.Env)+1) * word
	rlSize := align(uintptr(len(a.Rlimits))*C.sizeof_struct_ls_rlimit, 8)
	filterSize := align(uintptr(len(a.SeccompFilter)), 8)
	tailSize := align(uintptr(len(a.SeccompTailFilter)), 8)
	kinds := a.Mounts.byKind()
	var nTargets int
	for _, ts := range kinds {
		nTargets += len(ts)
	}
	mountSize := uintptr(nTargets) * C.sizeof_struct_ls_mount_target
	treesSize := align(uintptr(len(kinds[C.LS_MOUNT_WRITABLE]))*C.sizeof_int, 8)
	strSize := uintptr(len(a.Path) + 1 + len(a.Dir) + 1)
	for _, ts := range kinds {
		for _, t := range ts {
			strSize += uintptr(len(t.Path) + 1)
		}
	}
	strSize += 2 * uintptr(len(idMapLine(1<<31, 1<<31))+1)
	for _, s := range a.Argv {
		strSize += uintptr(len(s) + 1)
	}
	for _, s := range a.Env {
		strSize += uintptr(len(s) + 1)
	}
	total := reqSize + argvSize + envSize + rlSize + filterSize + tailSize + mountSize + treesSize + strSize
	base := C.calloc(1, C.size_t(total))
	if base == nil {
		return 0, errors.New("linuxspawn: out of memory")
	}
	defer func() {
		if a.standby == nil || a.standby.req == nil {
			C.free(base)
		}
	}()
	mem := unsafe.Slice((*byte)(base), total)

	r := (*C.struct_ls_req)(base)
	off := reqSize
	argv, envp := off, off+argvSize
	rls := envp + envSize
	filter := rls + rlSize
	tail := filter + filterSize
	targets := tail + tailSize
	trees := targets + mountSize
	strs := trees + treesSize

	putString := func(s string) uintptr {
		p := strs
		copy(mem[p:], s)
		mem[p+uintptr(len(s))] = 0
		strs += uintptr(len(s) + 1)
		return p
	}
	putArray := func(at uintptr, ss []string) {
		ptrs := unsafe.Slice((*uintptr)(unsafe.Add(base, at)), len(ss)+1)
		for i, s := range ss {
			ptrs[i] = uintptr(base) + putString(s)
		}
		ptrs[len(ss)] = 0
	}
	putArray(argv, a.Argv)
	putArray(envp, a.Env)
	r.argv = (**C.char)(unsafe.Add(base, argv))
	r.envp = (**C.char)(unsafe.Add(base, envp))
	r.path = (*C.char)(unsafe.Add(base, putString(a.Path)))
	if a.Dir != "" {
		r.dir = (*C.char)(unsafe.Add(base, putString(a.Dir)))
	}
	r.dir_fd = C.int(a.DirFD)
	if n := len(a.Rlimits); n > 0 {
		cr := unsafe.Slice((*C.struct_ls_rlimit)(unsafe.Add(base, rls)), n)
		for i, rl := range a.Rlimits {
			cr[i].resource = C.int(rl.Resource)
			cr[i].cur = C.uint64_t(rl.Cur)
			cr[i].max = C.uint64_t(rl.Max)
		}
		r.rlimits = &cr[0]
		r.nrlimits = C.int(n)
	}
	if a.SeccompFilter != nil && thread.filter != string(a.SeccompFilter) {
		copy(mem[filter:], a.SeccompFilter)
		r.filter = unsafe.Add(base, filter)
		r.filter_len = C.ushort(len(a.SeccompFilter) / 8)
	}
	if len(a.SeccompTailFilter) > 0 {
		copy(mem[tail:], a.SeccompTailFilter)
		r.tail_filter = unsafe.Add(base, tail)
		r.tail_filter_len = C.ushort(len(a.SeccompTailFilter) / 8)
	}
	if m := a.Mounts; m != nil {
		r.new_mntns = 1
		r.read_only_rest = boolInt(m.ReadOnlyRest)
		r.trees = (*C.int)(unsafe.Add(base, trees))
		if m.UserNamespace {
			r.new_userns = 1
			r.uid_map = (*C.char)(unsafe.Add(base, putString(idMapLine(m.UID, m.UID))))
			r.gid_map = (*C.char)(unsafe.Add(base, putString(idMapLine(m.GID, m.GID))))
		}
		ct := unsafe.Slice((*C.struct_ls_mount_target)(unsafe.Add(base, targets)), nTargets)
		for kind, ts := range kinds {
			if len(ts) == 0 {
				continue
			}
			r.mounts[kind] = &ct[0]
			r.nmounts[kind] = C.int(len(ts))
			for i, t := range ts {
				ct[i].path = (*C.char)(unsafe.Add(base, putString(t.Path)))
				ct[i].dev = C.uint64_t(t.Dev)
				ct[i].ino = C.uint64_t(t.Ino)
			}
			ct = ct[len(ts):]
		}
	}
	for i, fd := range a.Stdio {
		r.stdio[i] = C.int(fd)
	}
	r.cgroup_fd = C.int(a.CgroupProcsFD)
	r.pdeathsig = C.int(a.Pdeathsig)
	// Spawning threads set no_new_privs with the filter; a child that
	// installs its own (past the pools) must end up the same.
	r.no_new_privs = boolInt(a.NoNewPrivs || a.DropCapabilities || a.SeccompFilter != nil)
	r.landlock_fd = C.int(a.LandlockRulesetFD)
	r.pts_rights = C.uint64_t(a.PtsRights)
	r.drop_caps = boolInt(a.DropCapabilities)
	r.keep_caps = C.uint64_t(a.KeepCapabilities)
	// A new user namespace fills the bounding set again.
	r.bounding_inherited = boolInt(thread.dropBounding && thread.keep == a.KeepCapabilities &&
		(a.Mounts == nil || !a.Mounts.UserNamespace))
	r.new_pidns = boolInt(a.NewPIDNamespace)
	r.new_ipcns = boolInt(a.NewIPCNamespace)
	r.normal_scheduling = boolInt(a.NormalScheduling)
	r.want_pidfd = boolInt(a.PidFD != nil)
	r.proxy_sock = -1
	var proxyRecv int = -1
	r.join_netns = -1
	if n := a.Network; n != nil && n.Namespace > 0 {
		r.join_netns = C.int(n.Namespace)
	} else if n != nil {
		n.Listener = -1
		r.new_netns = 1
		r.proxy_port = C.int(n.ProxyPort)
		if n.ProxyPort != 0 {
			pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				return 0, fmt.Errorf("linuxspawn: socketpair for the proxy's listener: %w", err)
			}
			defer syscall.Close(pair[0])
			defer syscall.Close(pair[1])
			r.proxy_sock = C.int(pair[1])
			proxyRecv = pair[0]
		}
	}

	r.join_mntns = -1
	if a.MountNamespace > 0 {
		r.join_mntns = C.int(a.MountNamespace)
	}
	r.ns_sock = -1
	nsRecv := -1
	if a.namespaceOnly {
		pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return 0, fmt.Errorf("linuxspawn: socketpair for the mount namespace: %w", err)
		}
		defer syscall.Close(pair[0])
		defer syscall.Close(pair[1])
		r.ns_sock = C.int(pair[1])
		nsRecv = pair[0]
	}

	r.standby = boolInt(a.standby != nil)
	var failed C.int
	switch {
	case a.standby != nil && p == nil:
		failed = C.ls_standby_start(r)
	case a.namespaceOnly:
		failed = C.ls_probe_mounts(r)
	case p != nil:
		failed = p.start(r)
	default:
		failed = C.ls_start(r)
	}
	if failed != 0 {
		stage := int(r.stage)
		name := "unknown"
		if stage > 0 && stage < len(stageNames) {
			name = stageNames[stage]
		}
		e := &StageError{Stage: name, Err: syscall.Errno(r.err)}
		if stage == C.LS_STAGE_MOUNT {
			kind, i := int(r.mount_kind), int(r.mount_index)
			if kind >= 0 && kind < len(kinds) && i >= 0 && i < len(kinds[kind]) {
				e.Path = kinds[kind][i].Path
			}
		}
		return 0, e
	}
	if nsRecv >= 0 {
		// Sent by the child before it exited, which ls_probe_mounts
		// waited for: the namespace, then its root.
		ns, err := receiveFD(nsRecv)
		if err != nil {
			return 0, fmt.Errorf("linuxspawn: the mount namespace: %w", err)
		}
		root, err := receiveFD(nsRecv)
		if err != nil {
			syscall.Close(ns)
			return 0, fmt.Errorf("linuxspawn: the mount namespace's root: %w", err)
		}
		a.namespaceRoot = root
		return ns, nil
	}
	if a.standby != nil {
		a.standby.req, a.standby.pid, a.standby.pidfd = r, int(r.pid), int(r.pidfd)
		return int(r.pid), nil
	}
	if a.PidFD != nil {
		*a.PidFD = int(r.pidfd)
	}
	if proxyRecv >= 0 {
		// Sent by the child before its execve, which Start waited for.
		fd, err := receiveFD(proxyRecv)
		if err != nil {
			// The command runs without what it was promised: end it,
			// leaving no zombie, as for any failed Start.
			syscall.Kill(int(r.pid), syscall.SIGKILL)
			var ws syscall.WaitStatus
			for {
				if _, werr := syscall.Wait4(int(r.pid), &ws, 0, nil); werr != syscall.EINTR {
					break
				}
			}
			if a.PidFD != nil {
				syscall.Close(*a.PidFD)
				*a.PidFD = -1
			}
			return 0, fmt.Errorf("linuxspawn: the proxy's listener: %w", err)
		}
		a.Network.Listener = fd
	}
	return int(r.pid), nil
}

// receiveFD reads the one descriptor a message on sock carries, without
// waiting.
func receiveFD(sock int) (int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, syscall.CmsgSpace(4))
	_, oobn, flags, _, err := syscall.Recvmsg(sock, buf, oob, syscall.MSG_DONTWAIT|syscall.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, err
	}
	if flags&syscall.MSG_CTRUNC != 0 && oobn == 0 {
		// The kernel drops a descriptor it cannot install here and says
		// only that: at the open-file limit, the one reason it can be.
		return -1, fmt.Errorf("the descriptor sent was dropped: %w", syscall.EMFILE)
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("no descriptor in the message (%v)", err)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return -1, fmt.Errorf("not one descriptor in the message (%v)", err)
	}
	return fds[0], nil
}

func check(a *Attr) error {
	if a.Path == "" && a.standby == nil {
		return errors.New("linuxspawn: empty Path")
	}
	if strings.IndexByte(a.Path, 0) >= 0 {
		return errors.New("linuxspawn: Path contains a NUL byte")
	}
	if strings.IndexByte(a.Dir, 0) >= 0 {
		return errors.New("linuxspawn: Dir contains a NUL byte")
	}
	for i, s := range a.Argv {
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("linuxspawn: Argv[%d] contains a NUL byte", i)
		}
	}
	for i, s := range a.Env {
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("linuxspawn: Env[%d] contains a NUL byte", i)
		}
	}
	if a.Pdeathsig < 0 {
		return fmt.Errorf("linuxspawn: bad Pdeathsig %d", int(a.Pdeathsig))
	}
	if a.SeccompFilter != nil {
		n := len(a.SeccompFilter)
		if n == 0 || n%8 != 0 || n/8 > maxFilterLen {
			return fmt.Errorf("linuxspawn: seccomp filter of %d bytes: want 1 to %d instructions of 8 bytes", n, maxFilterLen)
		}
	}
	if a.SeccompTailFilter != nil {
		n := len(a.SeccompTailFilter)
		if n == 0 || n%8 != 0 || n/8 > maxFilterLen {
			return fmt.Errorf("linuxspawn: seccomp tail filter of %d bytes: want 1 to %d instructions of 8 bytes", n, maxFilterLen)
		}
	}
	if n := a.Network; n != nil && (n.ProxyPort < 0 || n.ProxyPort > 65535) {
		return fmt.Errorf("linuxspawn: bad proxy port %d", n.ProxyPort)
	}
	if a.MountNamespace > 0 && a.Mounts != nil {
		return errors.New("linuxspawn: a mount namespace to join and Mounts of the child's own")
	}
	if n := a.Network; n != nil && n.Namespace > 0 && a.Mounts != nil && a.Mounts.UserNamespace {
		return errors.New("linuxspawn: a network namespace to join needs no user namespace of the child's own")
	}
	if m := a.Mounts; m != nil {
		for _, ts := range m.byKind() {
			for _, t := range ts {
				if !strings.HasPrefix(t.Path, "/") || strings.IndexByte(t.Path, 0) >= 0 {
					return fmt.Errorf("linuxspawn: mount target %q is not an absolute path without NUL", t.Path)
				}
			}
		}
		// An id past 32 bits is none, and would outgrow the room start
		// makes for the map lines.
		if m.UserNamespace && (m.UID < 0 || m.GID < 0 || uint64(m.UID) > math.MaxUint32 || uint64(m.GID) > math.MaxUint32) {
			return fmt.Errorf("linuxspawn: bad user namespace ids %d, %d", m.UID, m.GID)
		}
	}
	if len(a.Rlimits) > 1<<16 {
		return errors.New("linuxspawn: too many Rlimits")
	}
	return nil
}

// byKind is m's targets by the child's LS_MOUNT_* kind; all empty for nil.
func (m *Mounts) byKind() [C.LS_MOUNT_KINDS][]Target {
	var k [C.LS_MOUNT_KINDS][]Target
	if m != nil {
		k[C.LS_MOUNT_WRITABLE] = m.Writable
		k[C.LS_MOUNT_READ_ONLY] = m.ReadOnly
		k[C.LS_MOUNT_DENY_DIR] = m.DenyDirs
		k[C.LS_MOUNT_DENY_FILE] = m.DenyFiles
		k[C.LS_MOUNT_PIN] = m.Pinned
	}
	return k
}

// idMapLine maps one id to another, as uid_map and gid_map take it.
func idMapLine(inside, outside int) string {
	return strconv.Itoa(inside) + " " + strconv.Itoa(outside) + " 1\n"
}

func align(n, to uintptr) uintptr { return (n + to - 1) &^ (to - 1) }

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// MakeMountNamespace makes the mount namespace Start would give a child
// with m, in a child that sets it up and exits, and returns descriptors
// (close-on-exec) of it, for Attr.MountNamespace, and of its root (O_PATH),
// through which paths can be looked up in it. What is mounted in it stays
// as it was made: the host's later mounts do not reach it. m.UserNamespace
// is refused: a namespace owned by a user namespace of its own cannot be
// joined without entering that too.
func MakeMountNamespace(m Mounts) (ns, root int, err error) {
	if m.UserNamespace {
		return -1, -1, errors.New("linuxspawn: MakeMountNamespace with a user namespace")
	}
	a := &Attr{Path: "/", Stdio: [3]int{-1, -1, -1}, CgroupProcsFD: -1, LandlockRulesetFD: -1,
		Mounts: &m, namespaceOnly: true}
	if ns, err = start(a, nil); err != nil {
		return -1, -1, err
	}
	return ns, a.namespaceRoot, nil
}

// ProbeMounts reports whether this process can give a child a mount
// namespace set up as m asks (m's targets are left out, but a ReadOnlyRest
// with no Writable, and the tmpfs that denied paths are covered from, are
// made), by cloning one that does only that and exits (with every signal
// blocked, as Start's children start).
func ProbeMounts(m Mounts) error { return ProbeNamespaces(m, false) }

// ProbeNamespaces is ProbeMounts that, with network, also gives the child a
// network namespace and brings its loopback interface up.
func ProbeNamespaces(m Mounts, network bool) error {
	probe := Mounts{UserNamespace: m.UserNamespace, UID: m.UID, GID: m.GID, ReadOnlyRest: true}
	a := &Attr{Path: "/", Mounts: &probe}
	if err := check(a); err != nil {
		return err
	}
	r := (*C.struct_ls_req)(C.calloc(1, C.sizeof_struct_ls_req))
	if r == nil {
		return errors.New("linuxspawn: out of memory")
	}
	defer C.free(unsafe.Pointer(r))
	var maps []unsafe.Pointer
	defer func() {
		for _, p := range maps {
			C.free(p)
		}
	}()
	r.new_mntns = 1
	r.read_only_rest = 1
	r.probe_tmpfs = 1
	r.proxy_sock = -1
	r.ns_sock = -1
	r.new_netns = boolInt(network)
	if m.UserNamespace {
		uid, gid := C.CString(idMapLine(m.UID, m.UID)), C.CString(idMapLine(m.GID, m.GID))
		maps = append(maps, unsafe.Pointer(uid), unsafe.Pointer(gid))
		r.new_userns = 1
		r.uid_map, r.gid_map = uid, gid
	}
	if C.ls_probe_mounts(r) != 0 {
		return &StageError{Stage: stageNames[int(r.stage)], Err: syscall.Errno(r.err)}
	}
	return nil
}
