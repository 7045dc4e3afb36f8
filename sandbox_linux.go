//go:build linux && cgo

package sandboxexec

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/sandboxexec/internal/cgroup"
	"github.com/agentbox/sandboxexec/internal/landlock"
	"github.com/agentbox/sandboxexec/internal/linuxspawn"
	"github.com/agentbox/sandboxexec/internal/probe"
	"github.com/agentbox/sandboxexec/internal/seccomp"
)

func platformSandbox() SandboxType { return SandboxLinuxSeccomp }

func platformRunner(_ context.Context, t SandboxType, writableRoots []string, policy SandboxPolicy) (runner, error) {
	if t != SandboxLinuxSeccomp {
		return nil, fmt.Errorf("%w: %v is not available on Linux", ErrSandboxUnavailable, t)
	}
	roots, rootInfos, err := canonicalRootInfos(writableRoots)
	if err != nil {
		return nil, err
	}
	masks, err := resolveMasksIn(roots, policy, hostMayWrite)
	if err != nil {
		return nil, err
	}
	r := &linuxRunner{roots: roots, rootInfos: rootInfos, policy: policy, masks: masks}
	if err := r.masks.pin(roots, rootInfos, !r.readOnlyView()); err != nil {
		return nil, err
	}
	if err := r.checkKernel(); err != nil {
		return nil, err
	}
	return r, nil
}

// linuxRunner starts the command through linuxspawn, which applies
// no_new_privs, the Landlock ruleset and the seccomp filter in the child
// between clone and execve: no code of this library runs beside the command,
// and the host is never restricted.
type linuxRunner struct {
	roots []string
	// rootInfos is what the call found at each root as it resolved it,
	// which the ruleset cache takes instead of a stat of its own.
	rootInfos []fs.FileInfo
	policy    SandboxPolicy
	masks     fsMasks
	abi       int    // Landlock ABI to use; 0 for none (best effort only)
	bpf       []byte // nil for none (best effort only)
	// bpfHead and bpfTail are bpf split for a child that sets up a mount
	// namespace (see seccomp.Split); nil where bpf is.
	bpfHead, bpfTail []byte
}

// kernelLandlockABI is probed once; forcedLandlockABI, when not -1, replaces
// it so that tests can play an older kernel.
var (
	kernelLandlockABI = sync.OnceValues(landlock.ABI)
	forcedLandlockABI = -1
	// forcedNoSeccomp, set by tests, has checkKernel find no seccomp (a
	// kernel without it, under BestEffort).
	forcedNoSeccomp bool
)

func landlockABI() (int, error) {
	if forcedLandlockABI >= 0 {
		if forcedLandlockABI == 0 {
			return 0, errors.New("Landlock disabled for a test")
		}
		return forcedLandlockABI, nil
	}
	return kernelLandlockABI()
}

// checkKernel fails closed: without Landlock at MinLandlockABI and a seccomp
// filter, nothing runs unless the policy asked for best effort.
func (r *linuxRunner) checkKernel() error {
	abi, abiErr := landlockABI()
	if abiErr == nil && abi < MinLandlockABI && !r.policy.BestEffort {
		abiErr = fmt.Errorf("Landlock ABI %d is below the %d this sandbox needs (kernel %s)", abi, MinLandlockABI, kernelRelease())
	}
	if abiErr == nil || r.policy.BestEffort {
		r.abi = abi
	}
	bpf, seccompErr := seccomp.Program(r.network(), r.policy.MaxFileSize > 0)
	if forcedNoSeccomp {
		bpf, seccompErr = nil, errors.New("seccomp disabled for a test")
	}
	if seccompErr == nil {
		r.bpfHead, r.bpfTail, seccompErr = seccomp.Split(r.network(), r.policy.MaxFileSize > 0)
	}
	if seccompErr == nil {
		r.bpf = bpf
	}
	switch {
	case abiErr != nil && !r.policy.BestEffort:
		return fmt.Errorf("%w: %v", ErrSandboxUnavailable, abiErr)
	case seccompErr != nil && probe.Temporary(seccompErr):
		// Best effort too: it leaves out what the kernel lacks, not what
		// this moment lacks (a descriptor to export the program through).
		return fmt.Errorf("%w: for now: %w", ErrSandboxUnavailable, seccompErr)
	case seccompErr != nil && !r.policy.BestEffort:
		return fmt.Errorf("%w: %v", ErrSandboxUnavailable, seccompErr)
	case r.abi == 0 && r.bpf == nil:
		return fmt.Errorf("%w: neither Landlock (%v) nor seccomp (%v) is available", ErrSandboxUnavailable, abiErr, seccompErr)
	}
	return nil
}

// network is the seccomp program's network mode for the policy.
func (r *linuxRunner) network() seccomp.Network {
	switch {
	case r.policy.NetworkAccess:
		return seccomp.NetworkAllowed
	case len(r.policy.AllowedDomains) > 0:
		return seccomp.NetworkLoopback
	}
	return seccomp.NetworkDenied
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// rulesets keeps the Landlock rulesets of the policies used last: an agent
// makes call after call with the same roots.
var rulesets = landlock.NewCache(8)

// keptCapabilities are what a root command keeps: the file-access ones, so
// that root still reads everywhere and writes in writable roots it does not
// own (Landlock confines the writes). Everything else (the clock, the
// hostname, mounts, raw network, modules, other users' processes) is dropped,
// from the bounding set too; CAP_DAC_READ_SEARCH as well, which reads
// nothing CAP_DAC_OVERRIDE does not, and opens files by handle (see
// seccomp's AlwaysDenied); and CAP_FSETID, with which a write to a
// set-user-ID or set-group-ID program in a root (the host's, made before
// the call) left its bits in place: its new text would run as root after
// the call (found in review). Without it the kernel clears them.
const keptCapabilities = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE |
	1<<unix.CAP_FOWNER

// pidNamespaceRefused and ipcNamespaceRefused are set once the kernel
// refuses CLONE_NEWPID or CLONE_NEWIPC (no CAP_SYS_ADMIN, a kernel built
// without one, systemd's RestrictNamespaces=). Calls then go without: they
// fall back to killing the process group, or share the host's System V IPC.
var pidNamespaceRefused, ipcNamespaceRefused atomic.Bool

// userIPCNamespaceRefused is ipcNamespaceRefused for a child that makes a
// user namespace, in which an IPC namespace needs no CAP_SYS_ADMIN of the
// host's: a host user's call without one is refused it, and that says
// nothing of the next call's.
var userIPCNamespaceRefused atomic.Bool

// startInNamespaces starts attr with the namespaces it asks for or, when the
// kernel refuses them, with as many as it allows, the PID namespace first,
// and remembers the refusal. A full namespace quota (ENOSPC) is no refusal:
// a command, this host's or another's, can fill it by keeping namespaces of
// its own alive, and calls that then went without theirs would reach the
// host's processes and IPC objects. The call fails instead.
func startInNamespaces(attr *linuxspawn.Attr) (int, error) {
	pid, err := linuxspawn.Start(attr)
	refusal, refused := cloneRefusal(err)
	wanted := [2]bool{attr.NewPIDNamespace, attr.NewIPCNamespace}
	tried := map[[2]bool]bool{wanted: true}
	for _, next := range [][2]bool{{wanted[0], false}, {false, wanted[1]}, {false, false}} {
		if !refused {
			break
		}
		if refusal == syscall.ENOSPC {
			return -1, fmt.Errorf("%w: no room for a new namespace: the namespace quota is full "+
				"(/proc/sys/user/max_pid_namespaces, max_ipc_namespaces), or PID namespaces nest "+
				"too deep: %v", ErrSandboxUnavailable, err)
		}
		if tried[next] {
			continue
		}
		tried[next] = true
		attr.NewPIDNamespace, attr.NewIPCNamespace = next[0], next[1]
		pid, err = linuxspawn.Start(attr)
		refusal, refused = cloneRefusal(err)
	}
	if err == nil {
		if wanted[0] && !attr.NewPIDNamespace {
			pidNamespaceRefused.Store(true)
		}
		if wanted[1] && !attr.NewIPCNamespace {
			if attr.Mounts != nil && attr.Mounts.UserNamespace {
				userIPCNamespaceRefused.Store(true)
			} else {
				ipcNamespaceRefused.Store(true)
			}
		}
	}
	return pid, err
}

// cloneRefusal says whether err is clone refusing a namespace, and how.
func cloneRefusal(err error) (syscall.Errno, bool) {
	var stage *linuxspawn.StageError
	if !errors.As(err, &stage) || stage.Stage != "clone" {
		return 0, false
	}
	switch stage.Err {
	case syscall.EPERM, syscall.EINVAL, syscall.ENOSPC:
		return stage.Err, true
	}
	return 0, false
}

func (r *linuxRunner) start(req *spawnRequest) (_ *child, err error) {
	sc, useStandby := r.standbyFor(req.env)
	if useStandby {
		if c, err := r.startFromStandby(sc, req); c != nil || err != nil {
			standbys.refill(sc.key, r, sc.needsTMPDIR)
			return c, err
		}
		defer func() {
			if err == nil {
				standbys.refill(sc.key, r, sc.needsTMPDIR)
			}
		}()
	}
	rlimits, err := r.rlimits()
	if err != nil {
		return nil, err
	}
	env, tmp, err := r.environ(req.env)
	if err != nil {
		return nil, err
	}
	if tmp != nil {
		tmp.sentOut = r.sendsDescriptors()
	}
	defer func() {
		if err != nil {
			tmp.release(false)
		}
	}()
	var proxy callProxy
	if r.network() == seccomp.NetworkLoopback {
		if proxy, err = startCallProxy(r.policy); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				proxy.Close()
			}
		}()
		env = proxyEnv(env, proxy, proxyAddr)
	}
	ruleset := -1
	if r.abi > 0 {
		fd, done, err := r.ruleset(tmp)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSandboxUnavailable, err)
		}
		ruleset = fd
		defer done()
	}
	attr := &linuxspawn.Attr{
		Path:              req.path,
		Argv:              req.argv,
		Env:               env,
		Dir:               req.dir,
		NewPIDNamespace:   !pidNamespaceRefused.Load(),
		NewIPCNamespace:   !ipcNamespaceRefused.Load(),
		NormalScheduling:  true,
		Pdeathsig:         syscall.SIGKILL,
		CgroupProcsFD:     -1,
		Rlimits:           rlimits,
		NoNewPrivs:        true,
		LandlockRulesetFD: ruleset,
		PtsRights:         r.ptsRights(),
		DropCapabilities:  true,
		KeepCapabilities:  keptCapabilities,
		// The tail is installed by the child last, after its own steps
		// (see seccomp.Split): the mount API its mounts need, and a core
		// limit it sets that the command may not change.
		SeccompFilter:     r.bpfHead,
		SeccompTailFilter: r.bpfTail,
	}
	for i, f := range req.stdio {
		attr.Stdio[i] = int(f.Fd())
	}
	if attr.Mounts, err = r.mounts(tmp.Path()); err != nil {
		return nil, err
	}
	if attr.Mounts != nil {
		if attr.Dir, err = namespaceWorkdir(req.dir); err != nil {
			return nil, err
		}
		req.dir = attr.Dir // for spawnError
	}
	var spare readyNetns
	if proxy != nil {
		attr.Network = &linuxspawn.Network{ProxyPort: proxyPort}
		if attr.Mounts == nil || !attr.Mounts.UserNamespace {
			var ok bool
			if spare, ok = takeNetns(); ok {
				attr.Network = &linuxspawn.Network{Namespace: spare.ns, Listener: spare.listener}
				defer func() {
					unix.Close(spare.ns) // the child has joined it, or failed
					if spare.listener >= 0 {
						unix.Close(spare.listener)
					}
				}()
			}
		}
	}
	var shared *sharedMountNamespace
	// A command that can send a descriptor out of its call gets a namespace
	// of its own, made by the child, which no other call joins (see
	// mountNamespaceCache.retire).
	if m := attr.Mounts; m != nil && !r.sendsDescriptors() {
		if shared = mountNamespaces.get(m); shared != nil {
			defer mountNamespaces.release(shared)
			attr.Mounts, attr.MountNamespace = nil, shared.fd
		}
	}
	if attr.Mounts == nil && attr.Dir != "" {
		// A child that makes no mount namespace runs under a seccomp filter
		// that refuses openat2 from the clone on: the directory is opened
		// here, as the child would see it.
		if attr.DirFD, err = workdirFD(shared, attr.Dir); err != nil {
			return nil, spawnError(req, err, false)
		}
		defer unix.Close(attr.DirFD)
	}
	if attr.Mounts != nil && attr.Mounts.UserNamespace {
		// A PID namespace stays for hosts with CAP_SYS_ADMIN, as
		// ProbeSandbox says, though the user namespace would allow one.
		// An IPC namespace does not: without one, calls in flight together
		// share the user's System V IPC objects, which no Landlock right
		// covers, and a command attached, read and wrote another call's
		// shared memory (found in review). A kernel that refuses it here
		// leaves it out, as startInNamespaces does for root.
		attr.NewPIDNamespace = false
		attr.NewIPCNamespace = !userIPCNamespaceRefused.Load()
		if os.Geteuid() != 0 {
			// The command's uid is not 0 in its user namespace: execve
			// leaves it no capability, and none is kept before.
			attr.KeepCapabilities = 0
		}
	}
	group, err := r.newCgroup()
	if err != nil {
		return nil, err
	}
	if group != nil {
		if r.writesCgroups() {
			group.Expose()
		}
		attr.CgroupProcsFD = group.ProcsFD()
	} else {
		attr.Rlimits = append(attr.Rlimits, policyRlimit(unix.RLIMIT_NPROC, r.maxProcesses()))
	}

	pidfd := -1
	if pidfdUsable() {
		attr.PidFD = &pidfd
	}
	pid, err := startInNamespaces(attr)
	if err != nil {
		if group != nil {
			group.Remove()
		}
		return nil, spawnError(req, err, attr.Mounts != nil || attr.MountNamespace > 0 || attr.Network != nil)
	}
	if proxy != nil {
		spare.listener = -1 // serveProxy's now
		if err := serveProxy(proxy, attr.Network.Listener); err != nil {
			// The command runs, and could reach nothing: end it.
			abandon(pid, pidfd)
			if group != nil {
				group.Remove()
			}
			return nil, err
		}
	}
	return adoptChild(pid, pidfd, attr.NewPIDNamespace, group, tmp, proxy)
}

// adoptChild makes the child of the call of a command that runs: pid and
// pidfd, in its own PID namespace or not, in group (nil for none), with tmp
// as its TMPDIR (nil for none) and the call's proxy (nil for none), each of
// which the child releases once the call is over.
func adoptChild(pid, pidfd int, newPIDNamespace bool, group *cgroup.Group, tmp *callTMPDIR, proxy callProxy) (*child, error) {
	c, err := newChild(pid, pidfd)
	if err != nil {
		if group != nil {
			group.Remove()
		}
		return nil, err
	}
	if proxy != nil {
		c.deniedHosts = proxy.Denied
	}
	c.killAll = func() { killGroup(pid) }
	c.killsGroup, c.namespaceInit = !newPIDNamespace, newPIDNamespace
	if newPIDNamespace {
		// The namespace dies with its init, the command, so killing that is
		// killing everything.
		c.killAll = c.killCommand
	}
	if group != nil && !newPIDNamespace {
		// The cgroup reaches what left the process group; without a PID
		// namespace it is what kills a setsid'd descendant. (With one, the
		// kernel kills the namespace when its init, the command, dies.)
		c.killAll = func() {
			if hostAdoptsOrphans() {
				// Each process the kill finds is watched before it is
				// killed, those forked as it runs too (which cgroup.kill
				// would kill unseen), and the group's members with them:
				// the zombies a member holds are handed to the host when
				// it dies, whatever their group.
				group.KillEach(func(pids []int) { c.watchEscaped(pids, group.Pids) })
				killGroup(pid)
				return
			}
			killGroup(pid)
			group.Kill()
		}
	}
	if tmp != nil {
		// Reaped, the init of a PID namespace leaves none of the call's.
		c.release = func() { tmp.releaseLater(newPIDNamespace && c.reaped.Load()) }
	}
	if group != nil {
		release := group.Release
		if newPIDNamespace {
			// The namespace's init is reaped only after every other process
			// in it: then the group is empty without a look.
			release = group.ReleaseEmpty
		}
		c.release = func() {
			tmp.releaseLater(c.reaped.Load() && (newPIDNamespace || group.Empty()))
			if c.reaped.Load() {
				release()
				return
			}
			// A tracer keeps the command from being reaped (see reapBy),
			// and in the group, which cannot be removed or reused before.
			group.Over()
			go func() {
				for !c.reaped.Load() {
					time.Sleep(100 * time.Millisecond)
				}
				release()
			}()
		}
	}
	if proxy != nil {
		release := c.release
		c.release = func() {
			proxy.Close()
			if release != nil {
				release()
			}
		}
	}
	return c, nil
}

func (r *linuxRunner) maxProcesses() uint64 {
	if r.policy.MaxProcesses > 0 {
		return min(uint64(r.policy.MaxProcesses), pidMaxLimit)
	}
	return DefaultMaxProcesses
}

// pidMaxLimit is the most processes Linux allows at all (PID_MAX_LIMIT),
// and the most pids.max accepts: a larger MaxProcesses binds no more, and
// is not the caller's mistake.
const pidMaxLimit = 32768 << (7 * (bits.UintSize / 64)) // 4 Mi on 64-bit

// rlimits are the policy's limits other than the process count, and
// RLIMIT_CORE (see coreLimit).
func (r *linuxRunner) rlimits() ([]linuxspawn.Rlimit, error) {
	core, err := coreLimit()
	if err != nil {
		return nil, err
	}
	rl := []linuxspawn.Rlimit{{Resource: unix.RLIMIT_CORE, Cur: core, Max: core}}
	if r.policy.MaxFileSize > 0 {
		rl = append(rl, policyRlimit(unix.RLIMIT_FSIZE, uint64(r.policy.MaxFileSize)))
	}
	if d := r.policy.MaxCPUTime; d > 0 {
		// Rounded up without adding to d, which overflowed near
		// math.MaxInt64 into a limit of 2^64 - 9,223,372,035 s.
		secs := uint64(d / time.Second)
		if d%time.Second != 0 {
			secs++
		}
		rl = append(rl, policyRlimit(unix.RLIMIT_CPU, secs))
	}
	if r.policy.MaxAddressSpace > 0 {
		rl = append(rl, policyRlimit(unix.RLIMIT_AS, uint64(r.policy.MaxAddressSpace)))
	}
	if soft, hard, ok := hostNofileBeforeGo(); ok {
		rl = append(rl, linuxspawn.Rlimit{Resource: unix.RLIMIT_NOFILE, Cur: soft, Max: hard})
	}
	return rl, nil
}

// coreLimit is the command's RLIMIT_CORE: 1 byte, so that it dumps no
// core. A core_pattern that pipes dumps to a helper (systemd-coredump,
// apport) runs it as root outside the sandbox, writing outside the roots,
// and the kernel ignores the limit for pipes except that 1 means none; a
// file dump needs a page at least. A host whose hard limit is 0 (CIS
// benchmarks set it) cannot raise it to 1 without CAP_SYS_RESOURCE: its
// command gets 0, which stops a file dump as well, unless core_pattern is
// a pipe, which 0 does not stop: then the call fails and says so (found in
// an adopter's review: every call failed, as "setrlimit failed").
//
// The limit is raised only where 0 does not do: CAP_SYS_RESOURCE raises
// it only in the initial user namespace, and a rootless container's root,
// which has it in its own, failed every call in the child's setrlimit
// (found in review).
func coreLimit() (uint64, error) {
	var host unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_CORE, &host) != nil || host.Max >= 1 {
		return 1, nil
	}
	pattern, err := os.ReadFile(corePatternFile)
	if err != nil {
		if coreRaisable() {
			return 1, nil
		}
		return 0, fmt.Errorf("%w: the host's hard RLIMIT_CORE is 0, and core_pattern cannot be read to tell whether a limit of 0 stops core dumps: %w",
			ErrSandboxUnavailable, err)
	}
	// The kernel tells a pipe by the first byte alone (" |x" is a file);
	// the file reads with a newline after it.
	limit, err := coreLimitFor(strings.TrimSuffix(string(pattern), "\n"))
	if err != nil && coreRaisable() {
		return 1, nil
	}
	return limit, err
}

// coreRaisable says the command's hard RLIMIT_CORE can be raised above
// the host's: CAP_SYS_RESOURCE in the initial user namespace, where
// setrlimit asks for it.
func coreRaisable() bool {
	if !hasCapability(unix.CAP_SYS_RESOURCE) {
		return false
	}
	m, err := os.ReadFile("/proc/self/uid_map")
	return err == nil && slices.Equal(strings.Fields(string(m)), []string{"0", "0", "4294967295"})
}

// corePatternFile is where coreLimit reads core_pattern; a variable for
// tests.
var corePatternFile = "/proc/sys/kernel/core_pattern"

// coreLimitFor is coreLimit for a host whose hard limit is 0 and which
// cannot raise it, with core_pattern pattern.
func coreLimitFor(pattern string) (uint64, error) {
	if strings.HasPrefix(pattern, "|") {
		return 0, fmt.Errorf("%w: the host's hard RLIMIT_CORE is 0, so the sandbox cannot set the 1 byte that keeps "+
			"a crashing command from reaching the core dump helper core_pattern names (%q), which runs outside the sandbox; "+
			"raise the hard limit to at least 1 (ulimit -Hc 1), or run with CAP_SYS_RESOURCE in the initial user namespace", ErrSandboxUnavailable, pattern)
	}
	return 0, nil
}

// policyRlimit is the limit v of the policy on resource, soft and hard,
// or the host's own hard limit where that is lower: a limit of the policy
// only ever lowers. Above it, a root host with CAP_SYS_RESOURCE gave the
// command more than the host had (a MaxFileSize of 1 TiB past the 1 GiB
// its service manager set), and any other host failed every call in the
// child's setrlimit, as a sandbox unavailable (found in review; a host
// user's RLIMIT_NPROC below DefaultMaxProcesses did so with no limit in
// the policy at all).
func policyRlimit(resource int, v uint64) linuxspawn.Rlimit {
	var host unix.Rlimit
	if unix.Getrlimit(resource, &host) == nil && host.Max < v {
		v = host.Max
	}
	return linuxspawn.Rlimit{Resource: resource, Cur: v, Max: v}
}

// hostNofileBeforeGo gives the RLIMIT_NOFILE this process started with,
// where Go may have raised its soft limit at start (to the hard limit, or,
// in newer releases, to one less: go.dev/issue/46279). Go gives that limit
// back to the children os/exec starts, as the plain runner's; a sandboxed
// command, started without it, would keep the raised one, and a program that sizes a table
// by the limit, or loops over every descriptor it allows, or uses select,
// would run differently than it does unsandboxed. Go keeps the original to
// itself: a process os/exec starts tells it, once.
func hostNofileBeforeGo() (soft, hard uint64, ok bool) {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Max == 0 || lim.Max == unix.RLIM_INFINITY || lim.Cur < lim.Max-1 {
		return 0, 0, false
	}
	soft, err := nofileBeforeGo.Get(context.Background(), func() (uint64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "/bin/sh", "-c", "ulimit -Sn").Output()
		if ctx.Err() != nil {
			return 0, ctx.Err() // Temporary: asked again by a later call
		}
		if err != nil {
			return 0, err
		}
		return strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	})
	if err != nil || soft >= lim.Cur {
		// No shell, or Go gave os/exec nothing back (the host set the
		// limit itself, or another process did through prlimit).
		return 0, 0, false
	}
	return soft, lim.Max, true
}

var nofileBeforeGo probe.Result[uint64]

// cgroupManager is the pids cgroup manager, opened by the first call that
// can open it, or found not to be had.
var cgroupManager probe.Result[*cgroup.Manager]

// openCgroups returns the pids cgroup manager, or nil where this process
// cannot create pids cgroups. An error says only that it could not be
// opened just now (out of descriptors): a call then fails, rather than
// going without the cgroup that kills what escapes its process group.
func openCgroups() (*cgroup.Manager, error) {
	m, err := cgroupManager.Get(context.Background(), cgroup.Open)
	if err != nil && !probe.Temporary(err) {
		return nil, nil
	}
	return m, err
}

// plainCallOver is called once a SandboxNone call is over: its command
// could write the cgroup files (a root host's can), so the sandbox's groups
// are set again before their next use (see cgroup.Manager.Distrust). A host
// that has run no sandboxed call has no groups to set.
func plainCallOver() {
	if m, ok := cgroupManager.Peek(); ok && m != nil {
		m.Distrust()
	}
}

// cgroups is openCgroups' manager, nil on any error.
func cgroups() *cgroup.Manager {
	m, _ := openCgroups()
	return m
}

// newCgroup gives the call its own pids cgroup, or nil where there is none
// to be had (the process limit then falls back to RLIMIT_NPROC).
func (r *linuxRunner) newCgroup() (*cgroup.Group, error) {
	m, err := openCgroups()
	if err != nil {
		return nil, fmt.Errorf("%w: pids cgroup, for now: %w", ErrSandboxUnavailable, err)
	}
	if m == nil {
		return nil, nil
	}
	g, err := m.New(int(r.maxProcesses()))
	if err != nil {
		return nil, fmt.Errorf("%w: pids cgroup: %v", ErrSandboxUnavailable, err)
	}
	return g, nil
}

// writesCgroups says the command may write this host's cgroup files: the
// file system is writable to it (no read-only view, a root above or in
// the groups' directory), or nothing but the mounts would stop it (no
// Landlock). Its group is then exposed (see cgroup.Group.Expose).
func (r *linuxRunner) writesCgroups() bool {
	if !r.readOnlyView() || r.abi == 0 {
		return true
	}
	m := cgroups()
	if m == nil {
		return false
	}
	dir := m.Dir()
	return slices.ContainsFunc(r.roots, func(root string) bool { return pathWithin(dir, root) || pathWithin(root, dir) })
}

// sendsDescriptors says the command can send a descriptor to a process
// outside its call: over a pathname UNIX socket (SCM_RIGHTS), which only
// NetworkAccess lets it connect or listen on (AllowedDomains makes no UNIX
// socket but socketpair's), or any policy where there is no seccomp filter
// to refuse the others one (BestEffort on a kernel without it: a network
// namespace hides no pathname socket). Whoever holds it keeps it for as long as it
// lives, so a later call must get neither the command's TMPDIR nor its
// mount namespace (see mountNamespaceCache.retire). A descriptor of the
// TMPDIR, opened through the call's writable mount of it, lets its holder
// chmod, chown, set xattrs and inode flags there, which no Landlock right
// covers (found in review: another call's command made a later call's
// TMPDIR and files in it world-writable).
func (r *linuxRunner) sendsDescriptors() bool {
	return r.policy.NetworkAccess || r.bpf == nil
}

// environ adds the sandbox's variables, and a TMPDIR the command may write
// to: tmp, when it is one of the call's own (see takeTMPDIR).
func (r *linuxRunner) environ(env []string) (_ []string, tmp *callTMPDIR, err error) {
	env = withSandboxEnv(env, "linux", !r.policy.NetworkAccess)
	if r.policy.FullDiskWriteAccess {
		return env, nil, nil
	}
	return takeTMPDIR(env, r.roots)
}

// ptsRights are the rights the child adds to the ruleset for the devpts
// of its mount namespace's own (see linuxspawn.Attr.PtsRights).
func (r *linuxRunner) ptsRights() uint64 {
	return landlock.DeviceRights(r.abi, landlock.Rules{FullDiskWrite: r.policy.FullDiskWriteAccess})
}

// ruleset is the Landlock ruleset of the call, with tmp among its writable
// roots where there is one: then it comes from tmp's own cache, which it
// keeps for the calls that get tmp after this one, since a root that no
// other call has would only push a shared ruleset out of the shared cache.
func (r *linuxRunner) ruleset(tmp *callTMPDIR) (fd int, done func(), err error) {
	rules := landlock.Rules{
		WritableRoots: r.roots,
		FullDiskWrite: r.policy.FullDiskWriteAccess,
		// In a network namespace of the call's own, TCP reaches only its
		// loopback, where the proxy listens.
		DenyNetwork: r.network() == seccomp.NetworkDenied,
		Seen:        r.seen(tmp),
	}
	if tmp == nil {
		return rulesets.Get(r.abi, rules)
	}
	rules.WritableRoots = append(slices.Clip(r.roots), tmp.path)
	return tmp.rulesets.Get(r.abi, rules)
}

// seen says what the call found at a root, or at tmp's path (checked as it
// was taken: see pristine), for landlock.Rules.Seen.
func (r *linuxRunner) seen(tmp *callTMPDIR) func(string) (dev, ino uint64, ok bool) {
	return func(path string) (dev, ino uint64, ok bool) {
		if tmp != nil && path == tmp.path && tmp.made.ino != 0 {
			return tmp.made.dev, tmp.made.ino, true
		}
		if i := slices.Index(r.roots, path); i >= 0 && i < len(r.rootInfos) {
			if st, ok := r.rootInfos[i].Sys().(*syscall.Stat_t); ok {
				return uint64(st.Dev), st.Ino, true
			}
		}
		return 0, 0, false
	}
}

// namespaceWorkdir is the absolute directory a child with a mount namespace
// starts in: dir, or the host's working directory for "", with a relative
// dir joined to it. The child inherits the host's working directory as it
// was in the copy of the mounts, below the covers and read-only binds made
// after the copy: kept or used as the base of a relative chdir, it would
// read a denied directory and write a protected one, and be read-only in a
// writable root. Named, it is looked up through the new mounts. A working
// directory that cannot be named (removed) fails the call.
func namespaceWorkdir(dir string) (string, error) {
	if filepath.IsAbs(dir) {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("sandboxexec: workdir: the host's working directory, where the command would start, "+
			"cannot be named (%w); give an absolute Workdir", err)
	}
	if dir == "" {
		return wd, nil
	}
	// Not filepath.Join: ".." in dir is the kernel's to resolve, as chdir
	// would from wd, not cleaned away against a wd that holds a symlink.
	return wd + "/" + dir, nil
}

// workdirFD opens dir (O_PATH), the working directory of a command in ns, a
// kept mount namespace (nil for the host's own), looked up as the command's
// chdir would: from ns's root, and with no "magic link" on the way
// (/proc/PID/root, /proc/PID/cwd, /proc/PID/fd/N), which leads to where
// another process stands, the host's mounts among them, where the call's
// covers and read-only binds are not. A failure is the child's stage
// "chdir" would be. The descriptor is above 2, clear of the stdio the
// child puts in place first.
func workdirFD(ns *sharedMountNamespace, dir string) (int, error) {
	at, how := unix.AT_FDCWD, unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	if ns != nil {
		at, how.Resolve = ns.root, how.Resolve|unix.RESOLVE_IN_ROOT
	}
	fd, err := unix.Openat2(at, dir, &how)
	for try := 0; err == unix.EAGAIN && try < 16; try++ {
		// RESOLVE_IN_ROOT refuses a ".." that any rename or mount on the
		// system raced with, so that it cannot climb out: again.
		fd, err = unix.Openat2(at, dir, &how)
	}
	if err == unix.ENOSYS && ns == nil {
		// Linux before 5.6, which has no Landlock either (BestEffort).
		fd, err = unix.Open(dir, int(how.Flags), 0)
	}
	if err == nil && fd <= 2 {
		var above int
		above, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
		unix.Close(fd)
		fd = above
	}
	if errno, ok := err.(syscall.Errno); ok {
		return -1, &linuxspawn.StageError{Stage: "chdir", Err: errno}
	} else if err != nil {
		return -1, err
	}
	return fd, nil
}

// spawnError turns a failure in the child into the error the plain runner
// would give for the same mistake, or, for a restriction the kernel refused
// (every step that confines the command), into ErrSandboxUnavailable: the
// command did not run. namespaces says the clone asked for a mount or
// network namespace, which the call cannot go without: clone refusing it
// (a quota filled, a seccomp profile or sysctl changed since the probe)
// is such a refusal.
func spawnError(req *spawnRequest, err error, namespaces bool) error {
	var stage *linuxspawn.StageError
	if !errors.As(err, &stage) {
		return fmt.Errorf("sandboxexec: start %s: %w", req.path, err)
	}
	if _, refused := cloneRefusal(err); namespaces && (refused || stage.Stage == "clone" && stage.Err == syscall.EUSERS) {
		return fmt.Errorf("%w: clone refused the call's mount or network namespace: %v", ErrSandboxUnavailable, stage)
	}
	switch stage.Stage {
	case "execve":
		return fmt.Errorf("sandboxexec: %w", &os.PathError{Op: "exec", Path: req.path, Err: stage.Err})
	case "chdir":
		if errors.Is(stage.Err, syscall.ELOOP) {
			return fmt.Errorf("sandboxexec: workdir %s: a symlink loop, or a path through /proc/PID/root, "+
				"/proc/PID/cwd or /proc/PID/fd, which would lead out of the sandbox's view of the files: %w",
				req.dir, &os.PathError{Op: "chdir", Path: req.dir, Err: stage.Err})
		}
		return fmt.Errorf("sandboxexec: workdir: %w", &os.PathError{Op: "chdir", Path: req.dir, Err: stage.Err})
	case "mount":
		if errors.Is(stage.Err, syscall.ESTALE) {
			return fmt.Errorf("%w: %s changed while the call was set up (replaced, or made a symlink): not mounted on",
				ErrSandboxUnavailable, stage.Path)
		}
		return fmt.Errorf("%w: mount namespace: %v", ErrSandboxUnavailable, stage)
	case "userns":
		return fmt.Errorf("%w: user namespace: %v", ErrSandboxUnavailable, stage)
	case "close_range", "cgroup", "setrlimit", "pdeathsig", "scheduling", "no_new_privs", "landlock_restrict_self", "capabilities", "seccomp":
		return fmt.Errorf("%w: %s failed in the child: %v", ErrSandboxUnavailable, stage.Stage, stage.Err)
	}
	return fmt.Errorf("sandboxexec: start %s: %w", req.path, err)
}

// hasSysAdmin says whether this process may make namespaces: root in a
// container usually has no CAP_SYS_ADMIN.
func hasSysAdmin() bool { return hasCapability(unix.CAP_SYS_ADMIN) }

// hasCapability says whether this thread has capability c in effect.
func hasCapability(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

func probeSandbox() SandboxSupport {
	s := SandboxSupport{Sandbox: SandboxLinuxSeccomp}
	var missing []string
	abi, err := landlockABI()
	s.LandlockABI = abi
	if err != nil {
		missing = append(missing, err.Error())
	} else if abi < MinLandlockABI {
		missing = append(missing, fmt.Sprintf("Landlock ABI %d is below %d", abi, MinLandlockABI))
	}
	if err := seccomp.Available(); err != nil {
		missing = append(missing, err.Error())
	} else {
		s.Seccomp = true
	}
	admin := hasSysAdmin()
	s.PIDNamespace = admin && !pidNamespaceRefused.Load()
	s.IPCNamespace = admin && !ipcNamespaceRefused.Load()
	s.MountNamespace = mountNamespaceSupported()
	s.NetworkNamespace = networkNamespaceSupported()
	// A failure that says only "not now" fails calls rather than run
	// them without their group.
	m, err := openCgroups()
	s.ProcessLimit = m != nil || err != nil || os.Geteuid() != 0
	if os.Geteuid() == 0 && !s.MountNamespace {
		missing = append(missing, "no mount namespace, without which a root command could change metadata outside the writable roots")
	}
	if _, err := coreLimit(); err != nil {
		missing = append(missing, strings.TrimPrefix(err.Error(), ErrSandboxUnavailable.Error()+": "))
	}
	s.Available = len(missing) == 0
	s.Detail = strings.Join(missing, "; ")
	return s
}
