//go:build linux

// Package cgroup gives each sandboxed call a pids cgroup of its own: a hard
// limit on how many processes and threads the command may have at once (a
// fork bomb stops at it), and a list of every process the call started,
// whatever session or process group it moved to, so that all can be killed.
//
// It uses the pids controller where this process may create cgroups below
// its own: cgroup v1's pids hierarchy, or cgroup v2 when the pids controller
// is enabled for the children of this process's cgroup. Elsewhere Open
// fails and the caller falls back to rlimits.
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Manager creates cgroups below one parent directory.
type Manager struct {
	parent string // absolute directory the call cgroups are created in
	v2     bool
	token  string // "<pid>-<start time>": names this process's groups
	next   atomic.Uint64
}

// sweep removes the groups of hosts that are gone: a host killed before it
// could remove its groups leaves them behind, perhaps with processes in
// them. A group is stale when its pid is dead, or is this process's own
// (a restarted container's host often gets the same pid) with another start
// time.
func (m *Manager) sweep() {
	entries, err := os.ReadDir(m.parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), m.token+"-") {
			continue
		}
		pidText, _, ok := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 {
			continue
		}
		if pid == os.Getpid() || syscall.Kill(pid, 0) == syscall.ESRCH {
			(&Group{dir: filepath.Join(m.parent, e.Name()), v2: m.v2}).Remove()
		}
	}
}

// Open finds a pids controller this process can use and makes (or reuses)
// the directory its call cgroups go in.
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
	if err := os.Mkdir(parent, 0o755); err != nil && !os.IsExist(err) {
		return nil, err
	}
	if v2 {
		// Children of parent get the pids controller only if parent hands it
		// down; parent has no processes, so this is allowed.
		if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+pids"), 0); err != nil {
			return nil, fmt.Errorf("enable pids below %s: %w", parent, err)
		}
	}
	m := &Manager{parent: parent, v2: v2, token: fmt.Sprintf("%d-%x", os.Getpid(), time.Now().UnixNano())}
	m.sweep()
	// Prove it works end to end once, so that a call never finds out late.
	g, err := m.New(1)
	if err != nil {
		return nil, err
	}
	g.Remove()
	return m, nil
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
	dir   string
	v2    bool
	procs *os.File // cgroup.procs, open for the child to write "0" to
}

// New creates a cgroup that allows at most maxPids tasks (processes and
// threads) at once.
func (m *Manager) New(maxPids int) (*Group, error) {
	dir := filepath.Join(m.parent, fmt.Sprintf("%s-%d", m.token, m.next.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	g := &Group{dir: dir, v2: m.v2}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(maxPids)), 0); err != nil {
		g.Remove()
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
	if err != nil {
		g.Remove()
		return nil, err
	}
	g.procs = f
	return g, nil
}

// ProcsFD is the descriptor of the open cgroup.procs file.
func (g *Group) ProcsFD() int { return int(g.procs.Fd()) }

// CloseProcs closes cgroup.procs once the child has joined.
func (g *Group) CloseProcs() {
	if g.procs != nil {
		g.procs.Close()
		g.procs = nil
	}
}

// Kill sends SIGKILL to every process in the group, until it is empty or a
// short bound passes (a process forking as fast as it is killed cannot
// outgrow pids.max, so the loop ends).
func (g *Group) Kill() {
	if g.v2 {
		if err := os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0); err == nil {
			return
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		pids := g.pids()
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond)
	}
}

// Empty reports whether no process is left in the group.
func (g *Group) Empty() bool { return len(g.pids()) == 0 }

func (g *Group) pids() []int {
	f, err := os.Open(filepath.Join(g.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var pids []int
	s := bufio.NewScanner(f)
	for s.Scan() {
		if pid, err := strconv.Atoi(s.Text()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Remove deletes the group; processes still in it are killed first.
func (g *Group) Remove() {
	g.CloseProcs()
	for i := 0; i < 100; i++ {
		err := os.Remove(g.dir)
		if err == nil || os.IsNotExist(err) {
			return
		}
		g.Kill()
		time.Sleep(time.Millisecond)
	}
}
