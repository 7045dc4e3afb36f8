//go:build linux && cgo

package linuxspawn

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	seccomp "github.com/seccomp/libseccomp-golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

var testEnv = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"}

// baseAttr is an Attr for argv with stdin on the null device and stdout
// and stderr on out.
func baseAttr(t testing.TB, out *os.File, argv ...string) *Attr {
	t.Helper()
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	t.Cleanup(func() { null.Close() })
	path := argv[0]
	if !strings.Contains(path, "/") {
		path, err = exec.LookPath(path)
		require.NoError(t, err)
	}
	return &Attr{
		Path:              path,
		Argv:              argv,
		Env:               testEnv,
		Stdio:             [3]int{int(null.Fd()), int(out.Fd()), int(out.Fd())},
		CgroupProcsFD:     -1,
		LandlockRulesetFD: -1,
	}
}

// run starts a, waits for it, and returns its combined output and status.
// Its pipe's write end is placed at the stdio slots that hold -2.
func run(t testing.TB, a *Attr) (string, *os.ProcessState, error) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	for i, fd := range a.Stdio {
		if fd == -2 {
			a.Stdio[i] = int(w.Fd())
		}
	}
	pid, err := Start(a)
	w.Close()
	if err != nil {
		return "", nil, err
	}
	out, rerr := io.ReadAll(r)
	require.NoError(t, rerr)
	state := wait(t, pid)
	return string(out), state, nil
}

func wait(t testing.TB, pid int) *os.ProcessState {
	t.Helper()
	p, err := os.FindProcess(pid)
	require.NoError(t, err)
	state, err := p.Wait()
	require.NoError(t, err)
	return state
}

func shAttr(t testing.TB, script string) *Attr {
	a := baseAttr(t, os.Stderr, "/bin/sh", "-c", script)
	a.Stdio[1], a.Stdio[2] = -2, -2
	return a
}

func runSh(t testing.TB, script string) (string, *os.ProcessState) {
	t.Helper()
	out, state, err := run(t, shAttr(t, script))
	require.NoError(t, err)
	return out, state
}

// zombies lists this process's children that are zombies.
func zombies(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	self := os.Getpid()
	var zs []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err == nil && st.ppid == self && st.state == "Z" {
			zs = append(zs, pid)
		}
	}
	return zs
}

type procStat struct {
	state                      string
	ppid, pgrp, session, ttyNr int
}

func parseStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("bad stat %q", s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 5 {
		return procStat{}, fmt.Errorf("bad stat %q", s)
	}
	var st procStat
	st.state = f[0]
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgrp, _ = strconv.Atoi(f[2])
	st.session, _ = strconv.Atoi(f[3])
	st.ttyNr, _ = strconv.Atoi(f[4])
	return st, nil
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(b))
}

// statusField returns the value of a "Name:\tvalue" line of a
// /proc/PID/status text.
func statusField(status, name string) string {
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func TestEchoAndExitCodes(t *testing.T) {
	a := baseAttr(t, os.Stderr, "echo", "hello", "world")
	a.Stdio[1] = -2
	out, state, err := run(t, a)
	require.NoError(t, err)
	assert.Equal(t, "hello world\n", out)
	assert.Equal(t, 0, state.ExitCode())

	out, state = runSh(t, "echo out; echo err >&2; exit 3")
	assert.Equal(t, "out\nerr\n", out)
	assert.Equal(t, 3, state.ExitCode())
}

func TestEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "script"), []byte("#!/bin/sh\necho \"$FOO $(pwd)\"\n"), 0o755))
	a := baseAttr(t, os.Stderr, "/bin/sh")
	a.Path = "./script" // relative to Dir
	a.Argv = []string{"script"}
	a.Env = append(a.Env, "FOO=bar")
	a.Dir = dir
	a.Stdio[1] = -2
	out, state, err := run(t, a)
	require.NoError(t, err)
	assert.Equal(t, "bar "+dir+"\n", out)
	assert.Equal(t, 0, state.ExitCode())
}

func TestStageErrors(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	require.NoError(t, os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644))

	cases := []struct {
		name  string
		edit  func(a *Attr)
		stage string
		errno syscall.Errno
		is    error
	}{
		{"not found", func(a *Attr) { a.Path = filepath.Join(dir, "missing") }, "execve", syscall.ENOENT, fs.ErrNotExist},
		{"not executable", func(a *Attr) { a.Path = noexec }, "execve", syscall.EACCES, fs.ErrPermission},
		{"missing dir", func(a *Attr) { a.Dir = filepath.Join(dir, "nodir") }, "chdir", syscall.ENOENT, fs.ErrNotExist},
		{"bad stdio", func(a *Attr) { a.Stdio[1] = 1 << 20 }, "dup2", syscall.EBADF, nil},
		{"bad rlimit", func(a *Attr) {
			a.Rlimits = []Rlimit{{Resource: unix.RLIMIT_NOFILE, Cur: 10, Max: 5}}
		}, "setrlimit", syscall.EINVAL, nil},
		{"bad landlock fd", func(a *Attr) { a.NoNewPrivs = true; a.LandlockRulesetFD = 1 << 20 }, "landlock_restrict_self", syscall.EBADF, nil},
		{"bad seccomp program", func(a *Attr) { a.SeccompFilter = make([]byte, 8) }, "seccomp", syscall.EINVAL, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := baseAttr(t, os.Stderr, "/bin/true")
			c.edit(a)
			pid, err := Start(a)
			assert.Zero(t, pid)
			var se *StageError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, c.stage, se.Stage)
			assert.Equal(t, c.errno, se.Err)
			assert.Equal(t, c.stage+": "+c.errno.Error(), err.Error())
			if c.is != nil {
				assert.ErrorIs(t, err, c.is)
			}
			assert.Empty(t, zombies(t), "zombie children left")
		})
	}
}

// With PidFD, Start hands back a pidfd of the child, made by the clone: it
// signals the child, and polls readable once the child has exited. A Start
// that fails leaves -1 and no descriptor behind. Through a spawning thread
// (Pdeathsig) as from the calling one.
func TestPidFD(t *testing.T) {
	for _, pdeathsig := range []syscall.Signal{0, syscall.SIGKILL} {
		a := baseAttr(t, os.Stderr, "/bin/sleep", "30")
		a.Pdeathsig = pdeathsig
		pidfd := 99
		a.PidFD = &pidfd
		pid, err := Start(a)
		require.NoError(t, err)
		require.GreaterOrEqual(t, pidfd, 0, "pdeathsig %d", pdeathsig)
		flags, err := unix.FcntlInt(uintptr(pidfd), unix.F_GETFD, 0)
		require.NoError(t, err)
		assert.NotZero(t, flags&unix.FD_CLOEXEC, "close-on-exec")
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		require.NoError(t, err)
		assert.Zero(t, n, "not readable while the child runs")
		require.NoError(t, unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0))
		n, err = unix.Poll(fds, 5000)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "readable once the child has exited")
		assert.Equal(t, syscall.SIGKILL, wait(t, pid).Sys().(syscall.WaitStatus).Signal())
		unix.Close(pidfd)

		for _, path := range []string{"/nonexistent", "/bin/\x00true"} { // fails in the child; in Start
			a = baseAttr(t, os.Stderr, "/bin/true")
			a.Path = path
			a.Pdeathsig = pdeathsig
			pidfd = 99
			a.PidFD = &pidfd
			before := openFDs(t)
			_, err = Start(a)
			require.Error(t, err)
			assert.Equal(t, -1, pidfd, "%q", path)
			assert.Equal(t, before, openFDs(t), "descriptors left by the failed Start of %q", path)
		}
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

func TestBadAttr(t *testing.T) {
	for _, n := range []int{0, 7, 12, 8 * 4097} {
		a := baseAttr(t, os.Stderr, "/bin/true")
		a.SeccompFilter = make([]byte, n)
		_, err := Start(a)
		require.Error(t, err, "filter of %d bytes", n)
		var se *StageError
		assert.False(t, errors.As(err, &se))
	}
	a := baseAttr(t, os.Stderr, "/bin/true")
	a.Argv = []string{"a\x00b"}
	_, err := Start(a)
	assert.Error(t, err)
	// An id past 32 bits is refused, not a panic as its map line
	// outgrows the room made for it.
	a = baseAttr(t, os.Stderr, "/bin/true")
	a.Mounts = &Mounts{UserNamespace: true, UID: 1 << 40, GID: 1 << 40}
	_, err = Start(a)
	assert.Error(t, err)
}

func TestSessionLeader(t *testing.T) {
	a := baseAttr(t, os.Stderr, "cat", "/proc/self/stat")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	a.Stdio[1] = int(w.Fd())
	pid, err := Start(a)
	w.Close()
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	wait(t, pid)
	st, err := parseStat(string(out))
	require.NoError(t, err)
	assert.Equal(t, pid, st.session, "session id")
	assert.Equal(t, pid, st.pgrp, "process group")
	assert.Equal(t, os.Getpid(), st.ppid)
	assert.Zero(t, st.ttyNr, "controlling terminal")
}

func TestSignalsReset(t *testing.T) {
	// Make sure the host catches and blocks something.
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1, syscall.SIGHUP)
	defer signal.Stop(ch)
	self, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	require.NotEqual(t, "0000000000000000", statusField(string(self), "SigCgt"))
	// An ignored signal stays ignored, as across os/exec.
	signal.Ignore(syscall.SIGUSR2)
	defer signal.Reset(syscall.SIGUSR2)

	a := baseAttr(t, os.Stderr, "cat", "/proc/self/status")
	a.Stdio[1] = -2
	out, _, err := run(t, a)
	require.NoError(t, err)
	assert.Equal(t, "0000000000000000", statusField(out, "SigBlk"))
	assert.Equal(t, "0000000000000000", statusField(out, "SigCgt"))
	// Ignored is what the host ignores (SIGUSR2, and whatever it inherited
	// ignored, such as make's signals 32 and 33), nothing more.
	self, err = os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	ign, err := strconv.ParseUint(statusField(out, "SigIgn"), 16, 64)
	require.NoError(t, err)
	assert.NotZero(t, ign&(1<<(syscall.SIGUSR2-1)), "SIGUSR2 stays ignored")
	assert.Equal(t, statusField(string(self), "SigIgn"), statusField(out, "SigIgn"))
	assert.Equal(t, "0", statusField(out, "NoNewPrivs"))
	assert.Equal(t, "0", statusField(out, "Seccomp"))

	a = baseAttr(t, os.Stderr, "cat", "/proc/self/status")
	a.Stdio[1] = -2
	a.NoNewPrivs = true
	out, _, err = run(t, a)
	require.NoError(t, err)
	assert.Equal(t, "1", statusField(out, "NoNewPrivs"))
}

// TestStdioShuffle places the sources at 0 and 1 of the host, swapped and in
// place (close-on-exec there), so that a naive dup2 sequence would clobber
// one or lose the other.
func TestStdioShuffle(t *testing.T) {
	ar, aw, err := os.Pipe()
	require.NoError(t, err)
	defer ar.Close()
	br, bw, err := os.Pipe()
	require.NoError(t, err)
	defer br.Close()

	save0, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 3)
	require.NoError(t, err)
	save1, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	require.NoError(t, err)
	require.NoError(t, unix.Dup3(int(aw.Fd()), 0, unix.O_CLOEXEC))
	require.NoError(t, unix.Dup3(int(bw.Fd()), 1, unix.O_CLOEXEC))
	aw.Close()
	bw.Close()

	run := func(stdio [3]int, script string) error {
		a := baseAttr(t, os.Stderr, "/bin/sh", "-c", script)
		a.Stdio = stdio
		pid, err := Start(a)
		if err == nil {
			_, err = syscall.Wait4(pid, nil, 0, nil)
		}
		return err
	}
	// 0 and 1 swapped, 2 a copy of the host's 0.
	err1 := run([3]int{1, 0, 0}, "echo one; echo zero >&0; echo two >&2")
	// All in place, though close-on-exec in the host.
	var err2 error
	if err1 == nil {
		err2 = run([3]int{0, 1, 1}, "echo zero >&0; echo one; echo two >&2")
	}

	require.NoError(t, unix.Dup3(save0, 0, 0))
	require.NoError(t, unix.Dup3(save1, 1, 0))
	unix.Close(save0)
	unix.Close(save1)
	require.NoError(t, err1)
	require.NoError(t, err2)

	a, err := io.ReadAll(ar)
	require.NoError(t, err)
	b, err := io.ReadAll(br)
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\nzero\n", string(a))
	assert.Equal(t, "zero\none\ntwo\n", string(b))
}

// The child gets its three stdio descriptors and nothing else: neither the
// host's close-on-exec descriptors nor one it left open without that flag.
func TestNoFDLeak(t *testing.T) {
	f, err := os.Open("/proc/self/status") // close-on-exec, as Go opens all
	require.NoError(t, err)
	defer f.Close()
	inheritable, err := unix.Open("/proc/self/status", unix.O_RDONLY, 0)
	require.NoError(t, err)
	defer unix.Close(inheritable)
	out, _ := runSh(t, "ls /proc/$$/fd; :")
	assert.ElementsMatch(t, []string{"0", "1", "2"}, strings.Fields(out))
}

func TestRlimits(t *testing.T) {
	a := shAttr(t, "ulimit -n; ulimit -Hn")
	a.Rlimits = []Rlimit{
		{Resource: unix.RLIMIT_NOFILE, Cur: 100, Max: 200},
		{Resource: unix.RLIMIT_NOFILE, Cur: 64, Max: 128},
	}
	out, _, err := run(t, a)
	require.NoError(t, err)
	assert.Equal(t, "64\n128\n", out)
}

func TestPdeathsigOutlivesCallingThread(t *testing.T) {
	// A goroutine that ends locked to its thread makes the thread exit; the
	// child must not take that for its parent's death.
	type result struct {
		pid int
		err error
	}
	ch := make(chan result)
	go func() {
		runtime.LockOSThread()
		a := baseAttr(t, os.Stderr, "sleep", "60")
		a.Pdeathsig = syscall.SIGKILL
		pid, err := Start(a)
		ch <- result{pid, err}
	}()
	res := <-ch
	require.NoError(t, res.err)
	done := make(chan *os.ProcessState)
	go func() { done <- wait(t, res.pid) }()
	select {
	case state := <-done:
		t.Fatalf("the child died with its caller's thread: %v", state)
	case <-time.After(300 * time.Millisecond):
	}
	syscall.Kill(res.pid, syscall.SIGKILL)
	<-done
}

// TestPdeathsigHostDies re-runs this test binary as a host that starts a
// child with Pdeathsig and prints its pid; killing the host kills the child.
func TestPdeathsigHostDies(t *testing.T) {
	if os.Getenv("LINUXSPAWN_TEST_HOST") == "1" {
		a := baseAttr(t, os.Stderr, "sleep", "60")
		a.Pdeathsig = syscall.SIGKILL
		pid, err := Start(a)
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString(strconv.Itoa(pid) + "\n")
		time.Sleep(time.Minute)
		return
	}
	host := exec.Command(os.Args[0], "-test.run=^TestPdeathsigHostDies$")
	host.Env = append(os.Environ(), "LINUXSPAWN_TEST_HOST=1")
	out, err := host.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, host.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, 0), "the child runs while the host lives")

	require.NoError(t, host.Process.Kill())
	host.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := readStat(pid)
		if err != nil || st.state == "Z" {
			return // gone, or dead and waiting for init to reap it
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the child outlived its host")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCgroup(t *testing.T) {
	root := "/sys/fs/cgroup"
	if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
		root = "/sys/fs/cgroup/unified"
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(root, &sfs); err != nil || sfs.Type != unix.CGROUP2_SUPER_MAGIC {
		t.Skip("no cgroup2 hierarchy")
	}
	name := fmt.Sprintf("linuxspawn-test-%d", os.Getpid())
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup: %v", err)
	}
	defer os.Remove(dir)
	procs, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
	require.NoError(t, err)
	defer procs.Close()

	a := baseAttr(t, os.Stderr, "cat", "/proc/self/cgroup")
	a.Stdio[1] = -2
	a.CgroupProcsFD = int(procs.Fd())
	out, _, err := run(t, a)
	require.NoError(t, err)
	assert.Contains(t, out, "0::/"+name+"\n")
}

func landlockRuleset(t *testing.T, writable string) int {
	t.Helper()
	access := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_DIR)
	attr := unix.LandlockRulesetAttr{Access_fs: access}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		t.Skipf("landlock_create_ruleset: %v", e)
	}
	t.Cleanup(func() { unix.Close(int(fd)) })
	dir, err := unix.Open(writable, unix.O_PATH|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(dir)
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(dir)}
	_, _, e = unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	require.Zero(t, e, "landlock_add_rule")
	return int(fd)
}

func TestLandlock(t *testing.T) {
	inside, outside := t.TempDir(), t.TempDir()
	a := shAttr(t, fmt.Sprintf("echo in > %s/f && echo wrote-inside; echo out > %s/f && echo wrote-outside; exit 0", inside, outside))
	a.NoNewPrivs = true
	a.LandlockRulesetFD = landlockRuleset(t, inside)
	out, state, err := run(t, a)
	require.NoError(t, err)
	assert.Equal(t, 0, state.ExitCode())
	assert.Contains(t, out, "wrote-inside")
	assert.NotContains(t, out, "wrote-outside")
	assert.Contains(t, out, "Permission denied")
	b, err := os.ReadFile(filepath.Join(inside, "f"))
	require.NoError(t, err)
	assert.Equal(t, "in\n", string(b))
	_, err = os.Stat(filepath.Join(outside, "f"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	// The host is not restricted.
	require.NoError(t, os.WriteFile(filepath.Join(outside, "g"), []byte("host"), 0o644))
}

func seccompFilter(t *testing.T, denied ...string) []byte {
	t.Helper()
	f, err := seccomp.NewFilter(seccomp.ActAllow)
	require.NoError(t, err)
	defer f.Release()
	for _, name := range denied {
		sc, err := seccomp.GetSyscallFromName(name)
		require.NoError(t, err)
		require.NoError(t, f.AddRule(sc, seccomp.ActErrno.SetReturnCode(int16(unix.EPERM))))
	}
	mfd, err := unix.MemfdCreate("bpf", unix.MFD_CLOEXEC)
	require.NoError(t, err)
	mf := os.NewFile(uintptr(mfd), "bpf")
	defer mf.Close()
	require.NoError(t, f.ExportBPF(mf))
	_, err = mf.Seek(0, io.SeekStart)
	require.NoError(t, err)
	b, err := io.ReadAll(mf)
	require.NoError(t, err)
	require.NotEmpty(t, b)
	return b
}

func TestSeccomp(t *testing.T) {
	dir := t.TempDir()
	script := fmt.Sprintf("mkdir %s/d && echo made; grep ^Seccomp: /proc/self/status; exit 0", dir)
	a := shAttr(t, script)
	a.NoNewPrivs = true
	a.SeccompFilter = seccompFilter(t, "mkdir", "mkdirat")
	out, _, err := run(t, a)
	require.NoError(t, err)
	assert.Contains(t, out, "Operation not permitted")
	assert.NotContains(t, out, "made")
	assert.Contains(t, out, "Seccomp:\t2")
	_, err = os.Stat(filepath.Join(dir, "d"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	// Without the filter the same script works, and so does the host.
	out, _ = runSh(t, script)
	assert.Contains(t, out, "made")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "host"), 0o755))
	// The filter went on spawning threads, never on the main thread, whose
	// state reads as the process's.
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	assert.Contains(t, string(status), "\nSeccomp:\t0\n")
	assert.Contains(t, string(status), "\nNoNewPrivs:\t0\n")
}

// Filters are carried by spawning threads for the first few distinct ones
// and installed by the child past them: each child gets its own filter, and
// only it, either way.
func TestSeccompManyFilters(t *testing.T) {
	calls := []string{"mkdir", "rmdir", "symlink", "link", "rename", "chmod", "truncate"}
	require.Greater(t, len(calls), maxRestrictedPools+1)
	for round := 0; round < 2; round++ {
		for i, denied := range calls {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644))
			require.NoError(t, os.Mkdir(filepath.Join(dir, "e"), 0o755))
			// Each script tries every call; only the filter's one fails.
			script := fmt.Sprintf(`cd %s || exit 9
mkdir d 2>/dev/null && echo mkdir=ok || echo mkdir=denied
rmdir e 2>/dev/null && echo rmdir=ok || echo rmdir=denied
ln -s f s 2>/dev/null && echo symlink=ok || echo symlink=denied
ln f l 2>/dev/null && echo link=ok || echo link=denied
mv l m 2>/dev/null && echo rename=ok || echo rename=denied
chmod 600 f 2>/dev/null && echo chmod=ok || echo chmod=denied
truncate -s 0 f 2>/dev/null && echo truncate=ok || echo truncate=denied
grep ^NoNewPrivs: /proc/self/status`, dir)
			a := shAttr(t, script)
			// A filter sets no_new_privs, whether a spawning thread
			// carries it or the child installs it.
			// libseccomp names the *at and renameat2 variants separately.
			deny := map[string][]string{
				"mkdir": {"mkdir", "mkdirat"}, "rmdir": {"rmdir", "unlinkat"},
				"symlink": {"symlink", "symlinkat"}, "link": {"link", "linkat"},
				"rename": {"rename", "renameat", "renameat2"}, "chmod": {"chmod", "fchmodat", "fchmod", "fchmodat2"},
				"truncate": {"truncate", "ftruncate"},
			}[denied]
			a.SeccompFilter = seccompFilter(t, deny...)
			out, _, err := run(t, a)
			require.NoError(t, err, "filter %d", i)
			assert.Contains(t, out, denied+"=denied", "round %d: %s", round, out)
			assert.Contains(t, out, "NoNewPrivs:\t1", "round %d, filter %d", round, i)
			for _, other := range calls {
				if other != denied && !(denied == "link" && other == "rename") {
					assert.Contains(t, out, other+"=ok", "round %d, %s denied: %s", round, denied, out)
				}
			}
		}
	}
}

// TestSpawnThreadsPerFilter re-runs this test binary with GOMAXPROCS set
// and counts the threads that carry the filter of its one spawn: a few on a
// small host, as many as GOMAXPROCS in between, and never more than 8 on a
// large one. They block the signals that Go's threads handle.
func TestSpawnThreadsPerFilter(t *testing.T) {
	if os.Getenv("LINUXSPAWN_TEST_THREADS") == "1" {
		a := shAttr(t, "exit 0")
		a.NoNewPrivs = true
		a.SeccompFilter = seccompFilter(t, "mkdir", "mkdirat")
		_, _, err := run(t, a)
		require.NoError(t, err)
		tasks, err := os.ReadDir("/proc/self/task")
		require.NoError(t, err)
		filtered, open := 0, 0
		for _, task := range tasks {
			b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
			if err != nil || !strings.Contains(string(b), "\nSeccomp:\t2\n") {
				continue
			}
			filtered++
			// The process's signals are for Go's threads.
			_, blk, _ := strings.Cut(string(b), "\nSigBlk:\t")
			mask, err := strconv.ParseUint(blk[:16], 16, 64)
			require.NoError(t, err)
			for _, sig := range []syscall.Signal{syscall.SIGCHLD, syscall.SIGURG, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPROF} {
				if mask&(1<<(sig-1)) == 0 {
					open++
				}
			}
		}
		fmt.Printf("filtered=%d unblocked=%d\n", filtered, open)
		return
	}
	for procs, want := range map[int]int{1: 2, 3: 3, 8: 8, 32: 8} {
		host := exec.Command(os.Args[0], "-test.run=^TestSpawnThreadsPerFilter$", "-test.count=1")
		host.Env = append(os.Environ(), "LINUXSPAWN_TEST_THREADS=1", fmt.Sprintf("GOMAXPROCS=%d", procs))
		out, err := host.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), fmt.Sprintf("filtered=%d unblocked=0\n", want), "GOMAXPROCS=%d", procs)
	}
}

func TestNewPIDNamespace(t *testing.T) {
	a := shAttr(t, "echo $$; sleep 60 & exit 0")
	a.NewPIDNamespace = true
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	a.Stdio[1], a.Stdio[2] = int(w.Fd()), int(w.Fd())
	pid, err := Start(a)
	w.Close()
	if err != nil {
		var se *StageError
		if errors.As(err, &se) && se.Stage == "clone" && se.Err == syscall.EPERM {
			t.Skip("CLONE_NEWPID not permitted")
		}
		require.NoError(t, err)
	}
	state := wait(t, pid)
	assert.Equal(t, 0, state.ExitCode())
	// The background sleep holds the pipe: EOF comes only when it is gone.
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		b, err := io.ReadAll(r)
		ch <- res{b, err}
	}()
	select {
	case got := <-ch:
		require.NoError(t, got.err)
		assert.Equal(t, "1\n", string(got.b))
	case <-time.After(10 * time.Second):
		t.Fatal("the backgrounded sleep outlived the namespace's init")
	}
}

func TestConcurrent(t *testing.T) {
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, w, err := os.Pipe()
			if err != nil {
				errs <- err
				return
			}
			defer r.Close()
			pid, err := Start(&Attr{
				Path:              "/bin/sh",
				Argv:              []string{"sh", "-c", "echo $0", strconv.Itoa(i)},
				Env:               testEnv,
				Stdio:             [3]int{-1, int(w.Fd()), int(w.Fd())},
				CgroupProcsFD:     -1,
				LandlockRulesetFD: -1,
				NoNewPrivs:        i%2 == 0,
			})
			w.Close()
			if err != nil {
				errs <- err
				return
			}
			out, err := io.ReadAll(r)
			if err != nil {
				errs <- err
				return
			}
			p, _ := os.FindProcess(pid)
			state, err := p.Wait()
			if err != nil {
				errs <- err
				return
			}
			if got, want := string(out), fmt.Sprintf("%d\n", i); got != want || state.ExitCode() != 0 {
				errs <- fmt.Errorf("child %d: output %q, exit %d", i, got, state.ExitCode())
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// bigHeap, when set, keeps a large live heap in the host during a benchmark.
var bigHeap []byte

func withBigHeap(b *testing.B, f func(b *testing.B)) {
	const size = 1 << 30 << (strconv.IntSize / 64) // 2 GiB, 1 GiB where int has 32 bits
	bigHeap = make([]byte, size)
	for i := 0; i < size; i += 4096 {
		bigHeap[i] = 1
	}
	defer func() {
		bigHeap = nil
		runtime.GC()
	}()
	b.ResetTimer()
	f(b)
}

func startTrue(b *testing.B) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	fd := int(null.Fd())
	pid, err := Start(&Attr{
		Path:              "/bin/true",
		Argv:              []string{"true"},
		Env:               testEnv,
		Stdio:             [3]int{fd, fd, fd},
		CgroupProcsFD:     -1,
		LandlockRulesetFD: -1,
	})
	null.Close()
	if err != nil {
		b.Fatal(err)
	}
	p, _ := os.FindProcess(pid)
	if _, err := p.Wait(); err != nil {
		b.Fatal(err)
	}
}

func osExecTrue(b *testing.B) {
	cmd := exec.Command("/bin/true")
	cmd.Env = testEnv
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
}

func benchStartTrue(b *testing.B) {
	for i := 0; i < b.N; i++ {
		startTrue(b)
	}
}

func benchOSExecTrue(b *testing.B) {
	for i := 0; i < b.N; i++ {
		osExecTrue(b)
	}
}

// benchInterleaved alternates the two spawns and reports the median of
// each and their ratio, which a busy machine skews less than two separate
// benchmarks do.
func benchInterleaved(b *testing.B) {
	var ts, to []time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		startTrue(b)
		t1 := time.Now()
		osExecTrue(b)
		ts = append(ts, t1.Sub(t0))
		to = append(to, time.Since(t1))
	}
	ms, mo := median(ts), median(to)
	b.ReportMetric(float64(ms.Nanoseconds()), "start-ns")
	b.ReportMetric(float64(mo.Nanoseconds()), "osexec-ns")
	b.ReportMetric(float64(ms)/float64(mo), "ratio")
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func BenchmarkStartTrue(b *testing.B)          { benchStartTrue(b) }
func BenchmarkOSExecTrue(b *testing.B)         { benchOSExecTrue(b) }
func BenchmarkStartTrueBigHeap(b *testing.B)   { withBigHeap(b, benchStartTrue) }
func BenchmarkOSExecTrueBigHeap(b *testing.B)  { withBigHeap(b, benchOSExecTrue) }
func BenchmarkInterleaved(b *testing.B)        { benchInterleaved(b) }
func BenchmarkInterleavedBigHeap(b *testing.B) { withBigHeap(b, benchInterleaved) }

// Callers beyond a pool's threads wait as goroutines: a caller inside the
// pool holds a thread of its own until its child has exec'd, and Go keeps
// every thread it ever made.
func TestPoolCallersWaitAsGoroutines(t *testing.T) {
	threads := func() int {
		tasks, err := os.ReadDir("/proc/self/task")
		require.NoError(t, err)
		return len(tasks)
	}
	reap := func(pid int) {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		require.NoError(t, err)
	}
	a := baseAttr(t, os.Stderr, "/bin/true")
	a.Pdeathsig = syscall.SIGKILL
	pid, err := Start(a) // the pool's threads start
	require.NoError(t, err)
	reap(pid)

	before := threads()
	const n = 64
	pids := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pid, err := Start(a)
			assert.NoError(t, err)
			pids <- pid
		}()
	}
	wg.Wait()
	close(pids)
	for pid := range pids {
		if pid > 0 {
			reap(pid) // here, not concurrently: a blocked wait holds a thread too
		}
	}
	grown := threads() - before
	t.Logf("%d concurrent Starts grew the process by %d threads", n, grown)
	assert.LessOrEqual(t, grown, ThreadsPerPool()+8)
}

func TestDropCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to have capabilities to drop")
	}
	hostStatus, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	// More distinct sets than get threads of their own: the first few
	// children inherit their bounding set from their spawning thread, the
	// rest shrink their own. Each round, every child gets its set, and only
	// it.
	masks := []uint64{1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_CHOWN}
	for i := 0; len(masks) < maxRestrictedPools+2; i++ {
		masks = append(masks, 1<<unix.CAP_CHOWN|1<<(unix.CAP_KILL+i))
	}
	for round := 0; round < 2; round++ {
		for _, keep := range masks {
			a := shAttr(t, "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs)' /proc/self/status")
			a.DropCapabilities = true
			a.KeepCapabilities = keep
			out, _, err := run(t, a)
			require.NoError(t, err)
			want := fmt.Sprintf("%016x", keep)
			// no_new_privs comes with the drop: where the bounding set
			// cannot shrink, it is what keeps execve from granting more.
			assert.Equal(t, "CapInh:\t0000000000000000\nCapPrm:\t"+want+"\nCapEff:\t"+want+
				"\nCapBnd:\t"+want+"\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\n", out, "round %d", round)
		}
	}

	// The host keeps its own, bounding set included.
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	capLines := func(b []byte) []string {
		var caps []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "Cap") {
				caps = append(caps, line)
			}
		}
		return caps
	}
	assert.Equal(t, capLines(hostStatus), capLines(status))
	assert.NotContains(t, string(status), fmt.Sprintf("CapBnd:\t%016x", masks[0]))
}
