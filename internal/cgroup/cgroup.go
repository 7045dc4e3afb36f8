//go:build linux

// Package cgroup gives each sandboxed call a pids cgroup of its own: a hard
// limit on how many processes and threads the command may have at once (a
// fork bomb stops at it), and a list of every process the call started,
// whatever session or process group it moved to, so that all can be killed.
//
// It uses the pids controller where this process may create cgroups below
// its own: cgroup v1's pids hierarchy, or cgroup v2 when the pids controller
// is enabled for the children of this process's cgroup. Elsewhere Open
// fails and the caller falls back to rlimits. A Manager's cgroups live in a
// directory of its own, which it keeps locked (see Manager).
package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Manager creates cgroups below a directory of its own, and keeps a few
// empty ones for reuse: making and removing a cgroup costs the host about
// as much CPU as the rest of a sandboxed spawn.
//
// Each host (process) has its directory, <own cgroup>/sandboxexec/<pid>-<start
// time>, and holds an exclusive flock on it for as long as it lives; its
// call cgroups are made inside. The kernel drops the lock when the host
// dies, however it dies, so a host that finds another's directory unlocked
// knows its owner is gone, whatever PID namespace either runs in.
type Manager struct {
	dir  string // absolute: this host's directory, where call cgroups go
	v2   bool
	lock int // descriptor of dir, flocked; open for the process's life
	next atomic.Uint64

	mu   sync.Mutex
	idle []*Group // empty groups, ready for New

	// exposures counts the commands, ended, that could have written this
	// host's cgroup files (see Distrust); resetAt is its value when the
	// directories were last set again (see resetDirs), and dirFD their
	// files, kept open (-1 when not): [0] the directory all hosts share,
	// [1] this host's. Under mu.
	exposures atomic.Uint64
	resetAt   uint64
	dirFD     [2][len(dirSettings)]int
}

// Dir is the directory below which this host's groups, and other hosts',
// are made: a command that may write there may write their files.
func (m *Manager) Dir() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return filepath.Dir(m.dir)
}

// PoolSize is how many empty groups a Manager keeps for reuse.
const PoolSize = 8

// Open finds a pids controller this process can use and makes the
// directory its call cgroups go in.
func Open() (*Manager, error) {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	if dir, ok := findV1(string(mounts), string(own)); ok {
		return newManager(dir, false)
	}
	if dir, ok := findV2(string(mounts), string(own)); ok {
		return newManager(dir, true)
	}
	return nil, errors.New("no pids cgroup controller this process can use")
}

func newManager(own string, v2 bool) (*Manager, error) {
	parent := filepath.Join(own, "sandboxexec")
	if err := mkdirCgroup(parent, v2); err != nil {
		return nil, err
	}
	m := &Manager{v2: v2, lock: -1}
	for d := range m.dirFD {
		for i := range m.dirFD[d] {
			m.dirFD[d][i] = -1
		}
	}
	// What an unconfined command (or another host's) did to the shared
	// directory before this host opened it is set right by the first New.
	m.Distrust()
	if err := m.lockDir(parent); err != nil {
		return nil, err
	}
	// Prove it works end to end once, so that a call never finds out late.
	g, err := m.New(1)
	if err != nil {
		m.close()
		return nil, err
	}
	g.Remove()
	sweep(parent, filepath.Base(m.dir), v2)
	return m, nil
}

// mkdirCgroup makes dir (or finds it made) and, on cgroup v2, hands the pids
// controller down to its children; dir has no processes, so that is
// allowed.
func mkdirCgroup(dir string, v2 bool) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return err
	}
	if v2 {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+pids"), 0); err != nil {
			return fmt.Errorf("enable pids below %s: %w", dir, err)
		}
	}
	return nil
}

// lockDir makes this host's directory in parent and locks it. A host
// sweeping at that moment may take the lock first (the directory is empty
// and unlocked for an instant) and remove it: then another is made, under
// another name.
func (m *Manager) lockDir(parent string) error {
	var err error
	for try := 0; try < 10; try++ {
		dir := filepath.Join(parent, fmt.Sprintf("%d-%x", os.Getpid(), time.Now().UnixNano()))
		if err = mkdirCgroup(dir, m.v2); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// The shared directory removed (by a command that may
				// write the cgroup file system): made again.
				if err = mkdirCgroup(parent, m.v2); err != nil {
					return err
				}
				continue
			}
			return err
		}
		var fd int
		if fd, err = tryLock(dir); err != nil {
			continue
		}
		var locked, named unix.Stat_t
		if unix.Fstat(fd, &locked) == nil && unix.Stat(dir, &named) == nil && locked.Ino == named.Ino {
			m.dir, m.lock = dir, fd
			return nil
		}
		unix.Close(fd)
		err = fmt.Errorf("%s was removed as it was made", dir)
	}
	return err
}

// tryLock opens dir and takes its exclusive lock without waiting; it
// returns the locked descriptor.
func tryLock(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		return -1, &os.PathError{Op: "flock", Path: dir, Err: err}
	}
	return fd, nil
}

func (m *Manager) close() {
	m.mu.Lock()
	m.closeDirFiles()
	m.mu.Unlock()
	unix.Close(m.lock)
	os.Remove(m.dir)
}

// sweep removes what hosts that are gone left in parent: a host killed
// before it could remove its call cgroups leaves them behind, perhaps with
// processes in them. A host's directory whose lock can be taken has no
// host. Other entries (cgroups of another version of this package) are
// left alone: nothing says their host is gone.
func sweep(parent, own string, v2 bool) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == own || strings.Count(e.Name(), "-") != 1 {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		fd, err := tryLock(dir)
		if err != nil {
			continue // its host lives (or it is gone already)
		}
		groups, _ := os.ReadDir(dir)
		for _, g := range groups {
			if g.IsDir() {
				groupAt(nil, filepath.Join(dir, g.Name()), v2).Remove()
			}
		}
		os.Remove(dir)
		unix.Close(fd)
	}
}

// findV1 returns this process's directory in a cgroup v1 pids hierarchy.
func findV1(mountinfo, own string) (string, bool) {
	var mnt string
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, pf := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(pf) < 3 || pf[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(pf[2], ",") {
			if opt == "pids" && f[3] == "/" {
				mnt = f[4]
			}
		}
	}
	if mnt == "" {
		return "", false
	}
	for _, line := range strings.Split(own, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 {
			for _, c := range strings.Split(parts[1], ",") {
				if c == "pids" {
					return filepath.Join(mnt, parts[2]), true
				}
			}
		}
	}
	return "", false
}

// findV2 returns this process's directory in the cgroup v2 hierarchy when
// the pids controller is available there.
func findV2(mountinfo, own string) (string, bool) {
	var mnt string
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, pf := strings.Fields(pre), strings.Fields(post)
		if len(f) >= 5 && len(pf) >= 1 && pf[0] == "cgroup2" && f[3] == "/" {
			mnt = f[4]
		}
	}
	if mnt == "" {
		return "", false
	}
	for _, line := range strings.Split(own, "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			dir := filepath.Join(mnt, rest)
			ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
			if err == nil && hasWord(string(ctl), "pids") {
				return dir, true
			}
		}
	}
	return "", false
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// Group is one call's cgroup.
type Group struct {
	m       *Manager
	dir     string
	v2      bool
	maxPids int // what pids.max was last set to
	// exposures is the manager's count when the group's settings were
	// last set; exposed says its own command could write them.
	exposures uint64
	exposed   bool
	// procs is cgroup.procs, open for the child to write "0" to; limit is
	// pids.max, and freeze cgroup.freeze (v2 only). They stay open while
	// the group is kept for reuse: an open and a close of a cgroup file
	// cost the host more than the rest of New, and 7 times a write through
	// a descriptor. -1 when closed. procsIno is cgroup.procs' inode: a kept
	// group is used again only while the path still names it.
	procs, limit, freeze int
	procsIno             uint64
}

// groupAt is the group of dir, with no file open.
func groupAt(m *Manager, dir string, v2 bool) *Group {
	return &Group{m: m, dir: dir, v2: v2, procs: -1, limit: -1, freeze: -1}
}

// New returns an empty group that allows at most maxPids tasks (processes
// and threads) at once: one kept by Release when there is one, otherwise a
// new one.
func (m *Manager) New(maxPids int) (*Group, error) {
	exposures := m.exposures.Load()
	m.resetDirs(exposures) // a new group's limits are below them
	m.mu.Lock()
	var g *Group
	if n := len(m.idle); n > 0 {
		g, m.idle = m.idle[n-1], m.idle[:n-1]
	}
	m.mu.Unlock()
	if g != nil {
		if err := g.prepare(maxPids); err == nil {
			return g, nil
		}
		// Removed or broken behind our back: start afresh.
		g.Remove()
	}
	dir, err := m.mkdirGroup()
	if err != nil {
		return nil, err
	}
	g = groupAt(m, dir, m.v2)
	g.exposures = exposures
	if err := g.prepare(maxPids); err != nil {
		g.Remove()
		return nil, err
	}
	return g, nil
}

// mkdirGroup makes a new group's directory in this host's. Should that be
// gone (removed behind this host's back, by hand or by a sweep of another
// version of this package), the host makes itself another, rather than
// fail every later call. A name taken (a command that may write the cgroup
// file system made the next ones) is skipped.
func (m *Manager) mkdirGroup() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var err error
	for try := 0; try < 100; try++ {
		dir := filepath.Join(m.dir, strconv.FormatUint(m.next.Add(1), 10))
		err = os.Mkdir(dir, 0o755)
		switch {
		case errors.Is(err, fs.ErrExist):
			m.skipTaken()
			continue
		case !errors.Is(err, fs.ErrNotExist):
			return dir, err
		}
		old, oldLock := m.dir, m.lock
		if err := m.lockDir(filepath.Dir(old)); err != nil {
			return "", err
		}
		unix.Close(oldLock)
		m.closeDirFiles()
	}
	return "", err
}

// skipTaken moves the next group's name past every name taken in this
// host's directory. m.mu is held.
func (m *Manager) skipTaken() {
	entries, _ := os.ReadDir(m.dir)
	for _, e := range entries {
		if n, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && n > m.next.Load() {
			m.next.Store(n)
		}
	}
}

// prepare opens the group's files, unless they are open still, and sets
// its limit (where it changed, or may have: see Expose).
func (g *Group) prepare(maxPids int) error {
	if g.procs >= 0 {
		// A group removed behind this host's back (and perhaps made
		// again) takes no process through the descriptor kept.
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(g.dir, "cgroup.procs"), &st); err != nil || st.Ino != g.procsIno {
			return fmt.Errorf("cgroup %s was removed", g.dir)
		}
	} else if err := g.open(); err != nil {
		g.closeFiles()
		return err
	}
	return g.setLimits(maxPids)
}

// open opens the group's files. Raw descriptors: an *os.File would register
// the (pollable) cgroup files with the netpoller, which costs more than the
// open itself.
func (g *Group) open() error {
	for _, f := range []struct {
		fd   *int
		name string
	}{{&g.procs, "cgroup.procs"}, {&g.limit, "pids.max"}, {&g.freeze, "cgroup.freeze"}} {
		if f.name == "cgroup.freeze" && !g.v2 {
			continue
		}
		path := filepath.Join(g.dir, f.name)
		mode := unix.O_RDWR // read before it is written: see setFile
		if f.fd == &g.procs {
			mode = unix.O_WRONLY
		}
		fd, err := unix.Open(path, mode|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT && f.name == "cgroup.freeze" { // before Linux 5.2
			continue
		}
		if err != nil {
			return &os.PathError{Op: "open", Path: path, Err: err}
		}
		*f.fd = fd
	}
	var st unix.Stat_t
	if err := unix.Fstat(g.procs, &st); err != nil {
		return &os.PathError{Op: "fstat", Path: filepath.Join(g.dir, "cgroup.procs"), Err: err}
	}
	g.procsIno = st.Ino
	return nil
}

// closeFiles closes what open opened.
func (g *Group) closeFiles() {
	for _, fd := range []*int{&g.procs, &g.limit, &g.freeze} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// setLimits writes pids.max where it is not maxPids, or where a command that
// could write it has ended since it was written: then also the settings
// such a command could have changed to stop later calls (cgroup.freeze),
// here and in the directories above (see resetDirs).
func (g *Group) setLimits(maxPids int) error {
	m, n := g.m, g.m.exposures.Load()
	if g.maxPids == maxPids && g.exposures == n {
		return nil
	}
	if g.exposures != n {
		m.resetDirs(n)
		if err := setFile(g.freeze, "0", g.dir, "cgroup.freeze"); err != nil {
			return err
		}
	}
	if err := setFile(g.limit, strconv.Itoa(maxPids), g.dir, "pids.max"); err != nil {
		return err
	}
	g.maxPids, g.exposures = maxPids, n
	return nil
}

// setFile makes the cgroup file open as fd (read and write) hold value
// (nothing where fd is -1: a file this kernel does not have); dir and name
// say which, for the error. It reads first, and writes only a file that
// differs: a write of a cgroup v1 file takes the lock every cgroup change
// of the machine takes (a process moved into a group, a group made), and
// on a call's path it cost 1-2% of a spawn where it was not needed. A value
// "+ctl" is met where ctl is among the file's words (subtree_control).
func setFile(fd int, value, dir, name string) error {
	if fd < 0 {
		return nil
	}
	var buf [128]byte
	if n, err := unix.Pread(fd, buf[:], 0); err == nil {
		have := strings.TrimSpace(string(buf[:n]))
		if have == value || strings.HasPrefix(value, "+") && slices.Contains(strings.Fields(have), value[1:]) {
			return nil
		}
	}
	if _, err := unix.Pwrite(fd, []byte(value), 0); err != nil {
		return &os.PathError{Op: "write", Path: filepath.Join(dir, name), Err: err}
	}
	return nil
}

// dirSettings are what resetDirs writes in a directory, and to which file;
// all but the first on cgroup v2 only.
var dirSettings = [...]struct{ name, value string }{
	{"pids.max", "max"},
	{"cgroup.freeze", "0"},
	{"cgroup.subtree_control", "+pids"},
	{"cgroup.max.descendants", "max"},
	{"cgroup.max.depth", "max"},
}

// resetDirs sets the directory all hosts share and this host's, which this
// package made, as it made them (no limit of their own, not frozen, the
// pids controller handed down), once for each count of exposures: a later
// call's group is below them. It does what it can: a file it cannot write
// (the directory gone: mkdirGroup makes another; one another user made)
// fails no call, since only the group's own limit, which setLimits writes,
// confines a command.
func (m *Manager) resetDirs(exposures uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if exposures <= m.resetAt {
		return
	}
	m.resetAt = exposures
	// A host directory removed and made again under its name is not the
	// one locked: another host would take it for a dead host's, and sweep
	// its calls' groups. This host takes another.
	var locked, named unix.Stat_t
	if unix.Fstat(m.lock, &locked) != nil || unix.Stat(m.dir, &named) != nil || locked.Ino != named.Ino || locked.Dev != named.Dev {
		if oldLock := m.lock; m.lockDir(filepath.Dir(m.dir)) == nil {
			unix.Close(oldLock)
			m.closeDirFiles()
			for _, g := range m.idle { // in the old directory, unlocked
				g.Remove()
			}
			m.idle = nil
		}
	}
	for d, dir := range []string{filepath.Dir(m.dir), m.dir} {
		for i, set := range dirSettings {
			if i > 0 && !m.v2 {
				break
			}
			fd := &m.dirFD[d][i]
			// A kept descriptor of a directory removed (and perhaps made
			// again) writes nowhere: it is opened anew once.
			for try := 0; try < 2; try++ {
				if *fd < 0 {
					if *fd, _ = unix.Open(filepath.Join(dir, set.name), unix.O_RDWR|unix.O_CLOEXEC, 0); *fd < 0 {
						*fd = -1
						break
					}
				}
				if setFile(*fd, set.value, dir, set.name) == nil {
					break
				}
				unix.Close(*fd)
				*fd = -1
			}
		}
	}
}

// closeDirFiles closes the files resetDirs opened. m.mu is held, or m is
// not shared yet.
func (m *Manager) closeDirFiles() {
	for d := range m.dirFD {
		for i, fd := range m.dirFD[d] {
			if fd >= 0 {
				unix.Close(fd)
			}
			m.dirFD[d][i] = -1
		}
	}
}

// Distrust says a command that could write this host's cgroup files (the
// cgroup file system was writable to it) has ended: the settings of every
// group set before, and of the directories above them, are written again
// at their next use (New, Refresh), so that what it changed reaches no
// later call. What it changes in another call's group while both run does
// (see docs/linux.md).
func (m *Manager) Distrust() { m.exposures.Add(1) }

// Expose says the group's command can write this host's cgroup files: the
// manager is distrusted (see Distrust) when the group is released, or
// before, at Over.
func (g *Group) Expose() { g.exposed = true }

// Over says the group's call has returned while its processes may live on
// (a tracer holds its command; the group is released once it lets go): an
// exposed group's manager is distrusted now, and again at the release.
func (g *Group) Over() {
	if g.exposed && g.m != nil {
		g.m.Distrust()
	}
}

// Refresh writes the group's settings again where a command that could
// have changed them has ended since they were written (see Distrust): for
// a group set well before its call starts.
func (g *Group) Refresh() error {
	if g.m == nil || g.exposures == g.m.exposures.Load() {
		return nil
	}
	return g.setLimits(g.maxPids)
}

// ended distrusts the manager once an exposed group's command has ended
// (see Expose), before the group can be used again.
func (g *Group) ended() {
	if g.exposed && g.m != nil {
		g.exposed = false
		g.m.Distrust()
	}
}

// ProcsFD is the descriptor of the open cgroup.procs file. It stays open
// until the group is removed (Release and ReleaseEmpty keep it with the
// group).
func (g *Group) ProcsFD() int { return g.procs }

// Release is Remove for a group whose call is over: an empty group is kept
// for a later New while the pool has room.
func (g *Group) Release() {
	if g.Empty() && g.keep() {
		return
	}
	g.Remove()
}

// ReleaseEmpty is Release for a group the caller knows to be empty, without
// reading it: the init of a PID namespace is reaped only after every other
// process of the namespace was, and each task leaves its pids cgroup when it
// is reaped.
func (g *Group) ReleaseEmpty() {
	if !g.keep() {
		g.Remove()
	}
}

// keep puts the group in its manager's pool if there is room. The group
// is empty: an exposed one's command has ended.
func (g *Group) keep() bool {
	m := g.m
	if m == nil {
		return false
	}
	g.ended()
	m.mu.Lock()
	defer m.mu.Unlock()
	// One made before this host took another directory (see resetDirs)
	// is in a directory no lock keeps.
	if len(m.idle) >= PoolSize || filepath.Dir(g.dir) != m.dir {
		return false
	}
	m.idle = append(m.idle, g)
	return true
}

// Kill sends SIGKILL to every process in the group, until it is empty, a
// short bound passes (a process forking as fast as it is killed cannot
// outgrow pids.max, so the loop ends), or no process in it may be killed by
// this one.
func (g *Group) Kill() {
	if g.v2 {
		if err := os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0); err == nil {
			return
		}
	}
	g.KillEach(nil)
}

// KillEach is Kill by signals alone, also where cgroup.kill is offered:
// each time it lists the group's processes it calls seen, if not nil, with
// them, before it kills them. Every process that lives in the group from
// the first listing on is seen, unless it ends by itself between two
// listings: one forked after a listing is alive at the next, where
// cgroup.kill kills it unlisted.
func (g *Group) KillEach(seen func(pids []int)) {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		pids, err := g.pids()
		if err != nil || len(pids) == 0 {
			return
		}
		if seen != nil {
			seen(pids)
		}
		killed := false
		for _, pid := range pids {
			killed = syscall.Kill(pid, syscall.SIGKILL) != syscall.EPERM || killed
		}
		if !killed {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// Empty reports whether no task is left in the group (false when that
// cannot be read). It reads the pids controller's counter: reading
// cgroup.procs makes cgroup v1 build and sort a pid list, which costs as
// much as the rest of a release.
func (g *Group) Empty() bool {
	b, err := readRaw(filepath.Join(g.dir, "pids.current"))
	return err == nil && strings.TrimSpace(string(b)) == "0"
}

// Pids lists the processes in the group (not the zombies: cgroup.procs
// lists none), nil when that cannot be read.
func (g *Group) Pids() []int {
	pids, _ := g.pids()
	return pids
}

func (g *Group) pids() ([]int, error) {
	b, err := readRaw(filepath.Join(g.dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, line := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(line); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// readRaw reads a small cgroup file through a raw descriptor, kept out of
// the netpoller as in New.
func readRaw(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

// Remove deletes the group; processes still in it are killed first, and
// so are the cgroups made inside it (a command that may write the cgroup
// file system can make them and move into them, out of the group's own
// cgroup.procs). It gives up on a group this process may not remove.
func (g *Group) Remove() {
	defer g.ended() // its processes killed, if it could
	g.closeFiles()
	for i := 0; i < 100; i++ {
		err := os.Remove(g.dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) {
			return
		}
		g.Kill()
		g.removeChildren()
		time.Sleep(time.Millisecond)
	}
}

// removeChildren removes the cgroups inside the group, each as Remove does.
func (g *Group) removeChildren() {
	entries, _ := os.ReadDir(g.dir)
	for _, e := range entries {
		if e.IsDir() {
			groupAt(nil, filepath.Join(g.dir, e.Name()), g.v2).Remove()
		}
	}
}
