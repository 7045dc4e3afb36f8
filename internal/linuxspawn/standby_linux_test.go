//go:build linux && cgo

package linuxspawn

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// standbyAttr is what the sandbox gives a standby: a PID and an IPC
// namespace where the host may make them, a seccomp filter carried by the
// spawning thread, and the rest of the steps.
func standbyAttr(t *testing.T) Attr {
	t.Helper()
	if !StandbySupported {
		t.Skip("no standby on this architecture")
	}
	root := os.Geteuid() == 0
	return Attr{
		NewPIDNamespace:   root,
		NewIPCNamespace:   root,
		NormalScheduling:  true,
		Pdeathsig:         syscall.SIGKILL,
		CgroupProcsFD:     -1,
		NoNewPrivs:        true,
		LandlockRulesetFD: -1,
		DropCapabilities:  true,
		SeccompFilter:     seccompFilter(t, "mount"),
		Rlimits:           []Rlimit{{Resource: unix.RLIMIT_CORE, Cur: 0, Max: 0}},
	}
}

// execStandby runs script in s, and returns its output and exit status.
func execStandby(t *testing.T, s *Standby, dir string, script string) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	dirFD := -1
	if dir != "" {
		dirFD, err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		require.NoError(t, err)
		defer unix.Close(dirFD)
	}
	pid, pidfd, err := s.Exec("/bin/sh", []string{"sh", "-c", script}, append(testEnv, "X=from-exec"), dirFD,
		[3]int{-1, int(w.Fd()), int(w.Fd())})
	w.Close()
	require.NoError(t, err)
	defer unix.Close(pidfd)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return string(out), wait(t, pid).ExitCode()
}

func TestStandby(t *testing.T) {
	a := standbyAttr(t)
	dir := t.TempDir()
	a.LandlockRulesetFD = landlockRuleset(t, dir)
	s, err := NewStandby(a)
	require.NoError(t, err)
	defer s.Close()
	// The standby waits: it has not run anything yet.
	time.Sleep(20 * time.Millisecond)
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", s.Pid()))
	require.NoError(t, err)
	assert.Equal(t, "sandboxexec-sb\n", string(comm))

	outside := t.TempDir()
	out, code := execStandby(t, s, dir, fmt.Sprintf(`echo "pwd=$(pwd) x=$X"
ls -l /proc/self/fd | grep -c -- '->' ; ulimit -c
while IFS= read -r l; do case "$l" in CapEff*|NoNewPrivs*|Seccomp:*|SigBlk*) echo "$l";; esac; done </proc/self/status
echo in > f && echo wrote-inside; echo out > %s/f && echo wrote-outside
[ $$ = 1 ] && echo pid1; exit 3`, outside))
	assert.Equal(t, 3, code, out)
	assert.Contains(t, out, "pwd="+dir+" x=from-exec\n")
	// stdout, stderr and ls's own directory: nothing of the host's.
	assert.Contains(t, out, "\n3\n0\n")
	assert.Contains(t, out, "CapEff:\t0000000000000000")
	assert.Contains(t, out, "NoNewPrivs:\t1")
	assert.Contains(t, out, "Seccomp:\t2")
	assert.Contains(t, out, "SigBlk:\t0000000000000000")
	assert.Contains(t, out, "wrote-inside")
	assert.NotContains(t, out, "wrote-outside")
	if a.NewPIDNamespace {
		assert.Contains(t, out, "pid1")
	}
	_, err = os.Stat(filepath.Join(outside, "f"))
	assert.True(t, errors.Is(err, os.ErrNotExist))

	// Used up.
	_, _, err = s.Exec("/bin/true", []string{"true"}, nil, -1, [3]int{-1, -1, -1})
	assert.Error(t, err)
	s.Close()
	assert.Empty(t, zombies(t))
}

// A caller that sleeps through the hand-off (Sleep) gets the same: the
// command's output and status, or the execve's error.
func TestStandbySleepingHandOff(t *testing.T) {
	s, err := NewStandby(standbyAttr(t))
	require.NoError(t, err)
	defer s.Close()
	s.Sleep = true
	out, code := execStandby(t, s, "", `echo "x=$X"; exit 3`)
	assert.Equal(t, 3, code, out)
	assert.Equal(t, "x=from-exec\n", out)

	s, err = NewStandby(standbyAttr(t))
	require.NoError(t, err)
	defer s.Close()
	s.Sleep = true
	_, _, err = s.Exec("/nonexistent/cmd", []string{"cmd"}, nil, -1, [3]int{-1, -1, -1})
	var se *StageError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "execve", se.Stage)
	assert.Empty(t, zombies(t))
}

func TestStandbyExecFails(t *testing.T) {
	s, err := NewStandby(standbyAttr(t))
	require.NoError(t, err)
	defer s.Close()
	_, _, err = s.Exec("/nonexistent/cmd", []string{"cmd"}, nil, -1, [3]int{-1, -1, -1})
	var se *StageError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "execve", se.Stage)
	assert.Equal(t, syscall.ENOENT, se.Err)

	s, err = NewStandby(standbyAttr(t))
	require.NoError(t, err)
	defer s.Close()
	notDir, err := unix.Open("/etc/passwd", unix.O_PATH|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(notDir)
	_, _, err = s.Exec("/bin/true", []string{"true"}, nil, notDir, [3]int{-1, -1, -1})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "chdir", se.Stage)
	assert.Empty(t, zombies(t))
}

func TestStandbyKilledBeforeUse(t *testing.T) {
	s, err := NewStandby(standbyAttr(t))
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, syscall.Kill(s.Pid(), syscall.SIGKILL))
	time.Sleep(50 * time.Millisecond)
	_, _, err = s.Exec("/bin/true", []string{"true"}, nil, -1, [3]int{-1, -1, -1})
	var se *StageError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, syscall.ESRCH, se.Err)
	assert.Empty(t, zombies(t))
}

func TestStandbyClose(t *testing.T) {
	before := openFDs(t)
	for i := 0; i < 20; i++ {
		s, err := NewStandby(standbyAttr(t))
		require.NoError(t, err)
		pid := s.Pid()
		s.Close()
		s.Close()
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH)
	}
	assert.Empty(t, zombies(t))
	assert.Equal(t, before, openFDs(t))
}

func TestStandbyRefusesNamespaces(t *testing.T) {
	a := standbyAttr(t)
	a.Mounts = &Mounts{}
	_, err := NewStandby(a)
	assert.Error(t, err)
	a = standbyAttr(t)
	a.Network = &Network{ProxyPort: 3128}
	_, err = NewStandby(a)
	assert.Error(t, err, "a network namespace of its own")
}

// A standby joins the network namespace it is given before it waits: the
// command is in it, and the caller's namespace is its own still.
func TestStandbyJoinsNetworkNamespace(t *testing.T) {
	requireRoot(t)
	ns, inode := newNetworkNamespace(t)
	a := standbyAttr(t)
	a.Network = &Network{Namespace: ns}
	s, err := NewStandby(a)
	require.NoError(t, err)
	defer s.Close()
	unix.Close(ns) // joined: the standby holds it
	before, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	out, code := execStandby(t, s, "", "readlink /proc/self/ns/net; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
	assert.Equal(t, 0, code, out)
	assert.Equal(t, inode+"\nlo\n", out)
	after, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	assert.Equal(t, before, after)
}

// newNetworkNamespace makes a network namespace from a thread that does
// not come back to the runtime, and returns a descriptor of it and its
// name (net:[inode]).
func newNetworkNamespace(t *testing.T) (int, string) {
	t.Helper()
	type made struct {
		fd  int
		err error
	}
	c := make(chan made, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			c <- made{-1, err}
			return
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		c <- made{fd, err}
	}()
	m := <-c
	require.NoError(t, m.err)
	name, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", m.fd))
	require.NoError(t, err)
	return m.fd, name
}

// The host's descriptors that the standby shared while it waited do not
// reach the command, and one the host opens while it waits neither.
func TestStandbyHostDescriptors(t *testing.T) {
	s, err := NewStandby(standbyAttr(t))
	require.NoError(t, err)
	defer s.Close()
	f, err := os.Open("/dev/null")
	require.NoError(t, err)
	defer f.Close()
	// Not close-on-exec, as a careless host might leave it.
	_, err = unix.FcntlInt(f.Fd(), unix.F_SETFD, 0)
	require.NoError(t, err)
	out, code := execStandby(t, s, "", "exec 9</dev/null; ls /proc/self/fd | tr '\\n' ' '")
	assert.Equal(t, 0, code)
	// stdin is closed: ls's directory takes 0.
	assert.Equal(t, "0 1 2 9 ", out)
}

const standbyHostEnv = "LINUXSPAWN_TEST_STANDBY_HOST"

// A standby whose host exits without a parent-death signal for it (the
// spawning thread gone before the standby's prctl) exits too, within a
// second or two: it would otherwise hold the host's descriptors.
func TestStandbyOutlivesNoHost(t *testing.T) {
	if os.Getenv(standbyHostEnv) != "" {
		a := standbyAttr(t)
		a.Pdeathsig = 0
		s, err := NewStandby(a)
		require.NoError(t, err)
		fmt.Println("standby", s.Pid())
		os.Exit(0)
	}
	standbyAttr(t) // skips where there is none
	cmd := exec.Command(os.Args[0], "-test.run=^TestStandbyOutlivesNoHost$", "-test.count=1")
	cmd.Env = append(os.Environ(), standbyHostEnv+"=1")
	cmd.WaitDelay = 10 * time.Second // a standby left holds the output pipe
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var pid int
	_, err = fmt.Sscanf(string(out), "standby %d", &pid)
	require.NoError(t, err, "%s", out)
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := readStat(pid)
		if err != nil || st.state == "Z" {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the standby %d outlived its host by 5 s", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const standbyNoSetpcapEnv = "LINUXSPAWN_TEST_STANDBY_NO_SETPCAP"

// On a root host without CAP_SETPCAP, CAP_SYS_ADMIN stays in the bounding
// set, so a standby cannot keep it as the guard that keeps commands out of
// its /proc/PID/mem (the host's memory): without Landlock to refuse that,
// the standby is refused.
func TestStandbyRefusedWithoutGuard(t *testing.T) {
	keep := uint64(1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_FOWNER)
	if os.Getenv(standbyNoSetpcapEnv) != "" {
		a := standbyAttr(t)
		a.KeepCapabilities = keep
		s, err := NewStandby(a)
		var se *StageError
		if errors.As(err, &se) && se.Stage == "capabilities" && se.Err == syscall.EPERM {
			fmt.Println("refused")
			return
		}
		require.NoError(t, err)
		defer s.Close()
		c := shAttr(t, fmt.Sprintf(`head -c 1 /proc/%d/environ >/dev/null && echo memory-read
exec 3</proc/%d/mem && echo mem-opened`, s.Pid(), s.Pid()))
		c.Pdeathsig = syscall.SIGKILL
		c.DropCapabilities = true
		c.KeepCapabilities = keep
		out, _, err := run(t, c)
		require.NoError(t, err)
		fmt.Print(out)
		return
	}
	standbyAttr(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	cmd := exec.Command(setpriv, "--bounding-set", "-setpcap", os.Args[0],
		"-test.run=^TestStandbyRefusedWithoutGuard$", "-test.count=1")
	cmd.Env = append(os.Environ(), standbyNoSetpcapEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.NotContains(t, string(out), "memory-read")
	assert.NotContains(t, string(out), "mem-opened")
	assert.Contains(t, string(out), "refused")
}
