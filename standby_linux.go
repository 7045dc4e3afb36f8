//go:build linux && cgo

package sandboxexec

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentbox/sandboxexec/internal/cgroup"
	"github.com/agentbox/sandboxexec/internal/linuxspawn"
	"github.com/agentbox/sandboxexec/internal/seccomp"
	"golang.org/x/sys/unix"
)

// After a call on a host with CAP_SYS_ADMIN, a child for the next call of
// the same policy is started in the background (linuxspawn.Standby): it
// clones into its PID and IPC namespaces, joins its cgroup and its kept
// mount namespace (and, under AllowedDomains, a network namespace made for
// it with the proxy's listener), and restricts itself (limits,
// no_new_privs, Landlock, capabilities, seccomp), then waits. The next
// call hands it the command, which leaves it only stdio, the working
// directory and the execve: the clone and the rest are off the call's
// path. A standby is used only while
// everything it was made with is what the call would get (the same
// ruleset, the same kept mount namespace, an untouched TMPDIR); otherwise
// it is discarded and the call spawns as usual, which also happens on any
// failure of the standby. One standby is kept per policy, for a few
// policies, and none past standbyIdle unused. See docs/performance.md.
var standbys = &standbyCache{ready: map[string]*standby{}, making: map[string]*standbyMaking{}, seen: map[string]time.Time{}}

// hostSysAdmin is hasSysAdmin, once: a host that loses CAP_SYS_ADMIN later
// fails its next standby's clone, which stops the standbys.
var hostSysAdmin = sync.OnceValue(hasSysAdmin)

const (
	standbyIdle = 10 * time.Second
	standbyMax  = 4
	seenMax     = 64 // keys remembered in seen
)

// standbyWait bounds how long a call waits for the standby in the making
// for its key (see take); a variable for tests.
var standbyWait = 5 * time.Millisecond

// standbyUsedHook, when not nil, is told whether each call that could
// use a standby did; standbyMakingHook, when not nil, runs before each
// standby is made (tests).
var (
	standbyUsedHook   func(used bool)
	standbyMakingHook func()
)

type standbyCache struct {
	mu     sync.Mutex
	ready  map[string]*standby
	making map[string]*standbyMaking
	// seen is when each recent key's last call came: a standby is made
	// for a key's second call within standbyIdle, not its first, so that
	// calls whose roots change each time (a new temporary directory, say)
	// do not each make one that no call takes.
	seen map[string]time.Time
	trim *time.Timer // pending while ready is not empty
	// offUntil stops the standbys for standbyRetry after one failed where
	// a plain spawn would not have (a seccomp policy around the host
	// refusing a step only a standby takes, say): the calls spawn as
	// before. It was for good: one passing failure (EAGAIN, ENOMEM) made
	// every later call of a long-lived host spawn.
	offUntil time.Time
}

// standbyRetry is how long a standby's failure stops the standbys; a
// variable for tests.
var standbyRetry = time.Minute

// off says the standbys are stopped. c.mu is held.
func (c *standbyCache) off() bool { return time.Now().Before(c.offUntil) }

// stop stops the standbys for standbyRetry. c.mu is held.
func (c *standbyCache) stop() { c.offUntil = time.Now().Add(standbyRetry) }

// standbyMaking is a standby in the making.
type standbyMaking struct {
	done    chan struct{} // closed once it is ready, or failed
	awaited bool          // a call waits for it
}

type standby struct {
	sb      *linuxspawn.Standby
	tmp     *callTMPDIR
	group   *cgroup.Group
	ns      *sharedMountNamespace // nil for none
	masks   string                // the runner's masks.key()
	ruleset int                   // the Landlock ruleset it restricted itself with; -1 for none
	done    func()                // lets go of the ruleset
	made    time.Time
	// listener listens on proxyAddr in the network namespace the standby
	// joined, for the proxy of the call that takes it; -1 for none.
	listener int
}

// standbyCall is what a call that may take a standby needs of it: the key
// of the standbys it may take (what one must have been made with, beyond
// what is checked when it is taken), the command's environment, and
// whether it gets a private TMPDIR.
type standbyCall struct {
	key         string
	env         []string // with the sandbox's variables, but TMPDIR
	needsTMPDIR bool
}

// standbyFor returns the call's standbyCall; ok is false for a call that
// takes no standby: on a host without CAP_SYS_ADMIN (its user namespace is
// made by the child), or without the pids cgroup.
func (r *linuxRunner) standbyFor(env []string) (c standbyCall, ok bool) {
	if !linuxspawn.StandbySupported || pidNamespaceRefused.Load() || !hostSysAdmin() || cgroups() == nil {
		return c, false
	}
	standbys.mu.Lock()
	off := standbys.off()
	standbys.mu.Unlock()
	if off {
		return c, false
	}
	p := r.policy
	c.env = withSandboxEnv(env, "linux", !p.NetworkAccess)
	c.needsTMPDIR = !p.FullDiskWriteAccess && needsPrivateTMPDIR(c.env, r.roots)
	var b strings.Builder
	for _, f := range []bool{p.NetworkAccess, p.FullDiskWriteAccess, p.BestEffort, ipcNamespaceRefused.Load(),
		p.ReadOnlySubpaths == nil, c.needsTMPDIR} {
		b.WriteByte("01"[boolToInt(f)])
	}
	for _, n := range []int64{int64(r.network()), int64(r.abi), int64(p.MaxProcesses), p.MaxFileSize, int64(p.MaxCPUTime), p.MaxAddressSpace} {
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(n, 10))
	}
	// The host's limits as they are now: a standby holds those it was
	// made with, inherited or policy ones capped by the host's hard
	// limits (policyRlimit), and a host that lowered one since would
	// have its command run above it (found in review: RLIMIT_FSIZE
	// lowered to 1 MiB, and the next command had the 8 MiB of the
	// policy's MaxFileSize, or no limit at all).
	for res := range rlimitCount {
		var lim unix.Rlimit
		if unix.Getrlimit(res, &lim) != nil {
			return c, false
		}
		b.WriteByte(' ')
		b.WriteString(strconv.FormatUint(lim.Cur, 10))
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(lim.Max, 10))
		// Where the command's core limit is 0 (see coreLimit), a
		// core_pattern changed to a pipe since fails the call: the spawn
		// says why.
		if res == unix.RLIMIT_CORE && lim.Max == 0 {
			if _, err := coreLimit(); err != nil {
				return c, false
			}
		}
	}
	// Each name ends in a NUL, which none holds, and each list in another
	// (no name is empty): a name that holds the byte between lists cannot
	// make two policies one key (roots /a and DenyRead /b\x01\x01 were
	// roots /a\x01\x01 and /b, which took the first's standby, and wrote
	// to /a where no Landlock ruleset tells them apart; found in review).
	for _, list := range [][]string{r.roots, p.ReadOnlySubpaths, p.DenyRead} {
		for _, s := range list {
			b.WriteString(s)
			b.WriteByte(0)
		}
		b.WriteByte(0)
	}
	c.key = b.String()
	return c, true
}

// rlimitCount is RLIM_NLIMITS: the resources 0 to RLIMIT_RTTIME.
const rlimitCount = unix.RLIMIT_RTTIME + 1

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// startFromStandby starts the call's command in the standby kept for its key,
// if there is one still good for the call; a nil child and error mean the
// call spawns as usual. An error means the command ran and was ended: the
// call fails, rather than run it a second time.
func (r *linuxRunner) startFromStandby(sc standbyCall, req *spawnRequest) (*child, error) {
	used := false
	if standbyUsedHook != nil {
		defer func() { standbyUsedHook(used) }()
	}
	s := standbys.take(sc.key)
	if s == nil {
		return nil, nil
	}
	env := sc.env
	if s.tmp != nil {
		if !s.tmp.unchanged() {
			s.discard()
			return nil, nil
		}
		env = setEnv(env, "TMPDIR", s.tmp.path)
	}
	// Its group was set when it was made: a command that has ended since
	// may have changed it.
	if !r.standbyCurrent(s) || s.group.Refresh() != nil {
		s.discard()
		return nil, nil
	}
	// A failure to enter the directory is the spawn's to report.
	dir, err := namespaceWorkdir(req.dir)
	dirFD := -1
	if err == nil {
		dirFD, err = workdirFD(s.ns, dir)
	}
	if err != nil {
		s.discard()
		return nil, nil
	}
	defer unix.Close(dirFD)
	var proxy callProxy
	drop := func() (*child, error) {
		if proxy != nil {
			proxy.Close()
		}
		s.discard()
		return nil, nil
	}
	if s.listener >= 0 {
		// The proxy serves before the command runs, which then has its
		// listener from the start, as a spawned one does.
		if proxy, err = startCallProxy(r.policy); err == nil {
			env = proxyEnv(env, proxy, proxyAddr)
			err = serveProxy(proxy, s.listener)
			s.listener = -1
		}
		if err != nil {
			return drop()
		}
	}
	var stdio [3]int
	for i, f := range req.stdio {
		stdio[i] = int(f.Fd())
	}
	// Calls that outnumber the CPUs are bound by CPU time, not by the
	// wake-up the spin saves: 8 in flight made 5% more calls a second
	// sleeping (docs/performance.md).
	s.sb.Sleep = callsInFlight.Load() > int32(runtime.NumCPU())
	if r.writesCgroups() {
		s.group.Expose()
	}
	pid, pidfd, err := s.sb.Exec(req.path, req.argv, env, dirFD, stdio)
	if err != nil {
		// The spawn that follows reports what is wrong with the call; a
		// step that only a standby takes failing stops the standbys.
		if se, ok := err.(*linuxspawn.StageError); !ok || (se.Stage != "execve" && se.Stage != "chdir" && se.Err != syscall.ESRCH) {
			standbys.mu.Lock()
			standbys.stop()
			standbys.mu.Unlock()
		}
		return drop()
	}
	used = true
	if r.sendsDescriptors() {
		if s.tmp != nil {
			s.tmp.sentOut = true
		}
		if s.ns != nil {
			mountNamespaces.retire(s.ns)
		}
	}
	s.letGo()
	c, err := adoptChild(pid, pidfd, true, s.group, s.tmp, proxy)
	if err != nil {
		// Out of descriptors: adoptChild has killed and reaped the
		// command, closed its pidfd and removed its cgroup.
		s.tmp.release(false)
		if proxy != nil {
			proxy.Close()
		}
		return nil, err
	}
	return c, nil
}

// standbyCurrent says s still has what the call would get: the same
// Landlock ruleset (its paths unchanged), and the same kept mount
// namespace (the host's mounts unchanged).
func (r *linuxRunner) standbyCurrent(s *standby) bool {
	if r.masks.key() != s.masks || s.ns != nil && !mountNamespaces.stillKept(s.ns) {
		return false
	}
	// The ruleset names its roots by the files it opened, so it is checked
	// on its own: a root replaced while the standby was made (its ruleset
	// built before, its namespace after) is caught here.
	if r.abi > 0 {
		fd, done, err := r.ruleset(s.tmp)
		if err != nil {
			return false
		}
		done()
		// s holds its ruleset open: the same number is the same ruleset.
		if fd != s.ruleset {
			return false
		}
	}
	return true
}

// key names each mask and the file it found.
func (m fsMasks) key() string {
	var b strings.Builder
	for _, list := range [][]string{m.ReadOnly, m.DenyDirs, m.DenyFiles, m.Pinned} {
		b.WriteByte(1)
		for _, p := range list {
			b.WriteString(p)
			if st, ok := m.found[p].Sys().(*syscall.Stat_t); ok {
				b.WriteString("\x00" + strconv.FormatUint(st.Dev, 16) + ":" + strconv.FormatUint(st.Ino, 16))
			}
			b.WriteByte(0)
		}
	}
	return b.String()
}

// makeStandby starts a standby for the calls of r.
func (r *linuxRunner) makeStandby(needsTMPDIR bool) (_ *standby, err error) {
	s := &standby{ruleset: -1, listener: -1, done: func() {}, made: time.Now(), masks: r.masks.key()}
	defer func() {
		if err != nil {
			s.letGo()
			s.closeListener()
			if s.group != nil {
				s.group.Remove()
			}
			s.tmp.release(true)
		}
	}()
	if needsTMPDIR {
		if s.tmp, err = getTMPDIR(); err != nil {
			return nil, err
		}
	}
	if r.abi > 0 {
		if s.ruleset, s.done, err = r.ruleset(s.tmp); err != nil {
			return nil, err
		}
	}
	rlimits, err := r.rlimits()
	if err != nil {
		return nil, err
	}
	attr := linuxspawn.Attr{
		NewPIDNamespace:   true,
		NewIPCNamespace:   !ipcNamespaceRefused.Load(),
		NormalScheduling:  true,
		Pdeathsig:         syscall.SIGKILL,
		Rlimits:           rlimits,
		NoNewPrivs:        true,
		LandlockRulesetFD: s.ruleset,
		PtsRights:         r.ptsRights(),
		DropCapabilities:  true,
		KeepCapabilities:  keptCapabilities,
		// The whole program, carried by the spawning threads: a filter of
		// its own (the tail a spawned child installs) cost 25-35 us at the
		// command's exit and reap on 2 CPUs, where the kernel frees it.
		// It ignores the child's own RLIMIT_CORE; setCoreLimit sets it.
		SeccompFilter: r.bpf,
	}
	m, err := r.mounts(s.tmp.Path())
	if err != nil {
		return nil, err
	}
	if m != nil {
		if s.ns = mountNamespaces.get(m); s.ns == nil || !mountNamespaces.kept(s.ns) {
			return nil, errNoStandby
		}
		attr.MountNamespace = s.ns.fd
	}
	if s.group, err = r.newCgroup(); err != nil || s.group == nil {
		return nil, errNoStandby
	}
	attr.CgroupProcsFD = s.group.ProcsFD()
	if r.network() == seccomp.NetworkLoopback {
		n, err := makeNetns()
		if err != nil {
			return nil, errNoStandby // the call's own spawn reports it
		}
		defer unix.Close(n.ns) // the standby has joined it, or is gone
		s.listener = n.listener
		attr.Network = &linuxspawn.Network{Namespace: n.ns}
	}
	if s.sb, err = linuxspawn.NewStandby(attr); err != nil {
		return nil, err
	}
	if err := setCoreLimit(s.sb.Pid(), rlimits); err != nil {
		s.sb.Close()
		return nil, err
	}
	return s, nil
}

// setCoreLimit gives the waiting standby pid the RLIMIT_CORE of rlimits
// from outside: its filter, in force from the clone on, makes its own
// setting do nothing, as the command's (see seccomp's keepCoreLimit).
func setCoreLimit(pid int, rlimits []linuxspawn.Rlimit) error {
	for _, rl := range rlimits {
		if rl.Resource == unix.RLIMIT_CORE {
			lim := unix.Rlimit{Cur: rl.Cur, Max: rl.Max}
			if err := unix.Prlimit(pid, unix.RLIMIT_CORE, &lim, nil); err != nil {
				return os.NewSyscallError("prlimit", err)
			}
		}
	}
	return nil
}

var errNoStandby = &linuxspawn.StageError{Stage: "standby", Err: syscall.EAGAIN}

// letGo releases what s held for its making: the ruleset and the mount
// namespace, which its child has applied and joined.
func (s *standby) letGo() {
	s.done()
	s.done = func() {}
	if s.ns != nil {
		mountNamespaces.release(s.ns)
		s.ns = nil
	}
}

// closeListener closes the proxy listener of a standby no call will use.
func (s *standby) closeListener() {
	if s.listener >= 0 {
		unix.Close(s.listener)
		s.listener = -1
	}
}

// discard kills s's child and lets go of all it held.
func (s *standby) discard() {
	s.sb.Close()
	s.letGo()
	s.closeListener()
	// Its only process, reaped: the cgroup is empty, and nothing ran in
	// the TMPDIR. Not on the path of the call that found s unfit: a call
	// whose roots hold the host's temporary directory may have filled the
	// TMPDIR, and its emptying takes up to a minute, its removal as much
	// again (found in review: 200,000 files held the call 2.6 s).
	s.group.ReleaseEmpty()
	if t := s.tmp; t != nil {
		afterCall(func() { t.release(true) })
	}
}

// take returns the standby kept for key, if any, which the caller then
// uses or discards. One still in the making is waited for, up to
// standbyWait and by one call only: its clone and set-up are under way, and
// further along than a spawn the call would start (calls of one policy
// that follow each other closely, as in a loop, find it so).
func (c *standbyCache) take(key string) *standby {
	c.mu.Lock()
	s := c.ready[key]
	delete(c.ready, key)
	m := c.making[key]
	if s != nil || m == nil || m.awaited {
		c.mu.Unlock()
		return s
	}
	m.awaited = true
	c.mu.Unlock()
	wait := time.NewTimer(standbyWait)
	select {
	case <-m.done:
	case <-wait.C:
	}
	wait.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	s = c.ready[key]
	delete(c.ready, key)
	return s
}

// refill starts the making of a standby for key, unless one is kept or in
// the making, or key's last call is not recent (see seen).
func (c *standbyCache) refill(key string, r *linuxRunner, needsTMPDIR bool) {
	c.mu.Lock()
	last, again := c.seen[key]
	c.seen[key] = time.Now()
	if again = again && time.Since(last) < standbyIdle; !again && len(c.seen) > seenMax {
		for k, t := range c.seen {
			if time.Since(t) >= standbyIdle || len(c.seen) > seenMax {
				delete(c.seen, k)
			}
		}
	}
	if c.off() || !again || c.ready[key] != nil || c.making[key] != nil {
		c.mu.Unlock()
		return
	}
	m := &standbyMaking{done: make(chan struct{})}
	c.making[key] = m
	c.mu.Unlock()
	hook := standbyMakingHook
	go func() {
		if hook != nil {
			hook()
		}
		s, err := r.makeStandby(needsTMPDIR)
		if err == nil {
			fillSpares()
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		defer close(m.done)
		delete(c.making, key)
		if err != nil {
			// The child failed a step: the host refuses what a standby
			// needs. Anything else (a TMPDIR, a cgroup, a ruleset) is
			// tried again after the next call.
			// A group a command that may write the cgroup file system
			// removed or changed fails its step now and then: that is no
			// refusal.
			var se *linuxspawn.StageError
			if errors.As(err, &se) && err != errNoStandby && se.Stage != "cgroup" {
				c.stop()
			}
			return
		}
		for len(c.ready) >= standbyMax {
			c.dropOldest()
		}
		c.ready[key] = s
		if c.trim == nil {
			c.trim = time.AfterFunc(standbyIdle, c.trimIdle)
		}
	}()
}

// dropOldest discards the standby made first. c.mu is held.
func (c *standbyCache) dropOldest() {
	var oldest string
	for k, s := range c.ready {
		if oldest == "" || s.made.Before(c.ready[oldest].made) {
			oldest = k
		}
	}
	s := c.ready[oldest]
	delete(c.ready, oldest)
	go s.discard()
}

// trimIdle discards the standbys unused for standbyIdle.
func (c *standbyCache) trimIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trim = nil
	c.dropUnused(standbyIdle)
	if len(c.ready) > 0 {
		c.trim = time.AfterFunc(standbyIdle, c.trimIdle)
	}
}

// dropUnused discards the standbys made idle or longer ago, and waits for
// them to be gone. c.mu is held.
func (c *standbyCache) dropUnused(idle time.Duration) {
	var old []*standby
	for k, s := range c.ready {
		if time.Since(s.made) >= idle {
			old = append(old, s)
			delete(c.ready, k)
		}
	}
	for _, s := range old {
		s.discard()
	}
	if len(c.ready) == 0 && len(c.making) == 0 {
		dropSpares()
	}
}
