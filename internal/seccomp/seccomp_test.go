//go:build linux && cgo

package seccomp

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"github.com/agentbox/sandboxexec/internal/linuxspawn"
	"github.com/agentbox/sandboxexec/internal/probe"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestProgramBuildsAndIsCached(t *testing.T) {
	for _, deny := range []Network{NetworkAllowed, NetworkDenied, NetworkLoopback} {
		p1, err := Program(deny, false)
		require.NoError(t, err)
		require.NotEmpty(t, p1)
		require.Zero(t, len(p1)%8, "a BPF program is whole 8-byte instructions")
		p2, err := Program(deny, false)
		require.NoError(t, err)
		require.Equal(t, &p1[0], &p2[0], "the program is built once per variant")
		t.Logf("network mode %d: %d instructions", deny, len(p1)/8)
	}
	open, _ := Program(NetworkAllowed, false)
	closed, _ := Program(NetworkDenied, false)
	require.Greater(t, len(closed), len(open), "the network rules add instructions")
}

func TestAvailable(t *testing.T) {
	require.NoError(t, Available())
}

// A compilation that fails for want of a descriptor is not kept: once
// descriptors are free again, the program compiles. (Kept, it made every
// later strict call fail, and best-effort ones run without seccomp.)
func TestProgramAfterRunningOutOfDescriptors(t *testing.T) {
	programs[NetworkDenied][0][whole] = probe.Result[[]byte]{}
	fillers := fillDescriptorTable(t)
	_, err := Program(NetworkDenied, false)
	require.ErrorIs(t, err, unix.EMFILE)
	for _, fd := range fillers {
		unix.Close(fd)
	}
	bpf, err := Program(NetworkDenied, false)
	require.NoError(t, err, "the failure for want of descriptors was kept")
	require.NotEmpty(t, bpf)
}

// fillDescriptorTable lowers the soft RLIMIT_NOFILE to just above the
// descriptors in use, for the test's duration, and opens descriptors until
// none is left.
func fillDescriptorTable(t *testing.T) []int {
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	highest := 0
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil {
			highest = max(highest, fd)
		}
	}
	low := lim
	low.Cur = uint64(highest + 16)
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &low))
	var fds []int
	t.Cleanup(func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
		unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	})
	for {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == unix.EMFILE {
			return fds
		}
		require.NoError(t, err)
		fds = append(fds, fd)
	}
}

// Split's two programs together hold Program's rules: the head leaves out
// what a child's namespace set-up needs, the tail is that alone.
func TestSplit(t *testing.T) {
	for _, denyNetwork := range []Network{NetworkAllowed, NetworkDenied, NetworkLoopback} {
		for _, limited := range []bool{false, true} {
			whole, err := Program(denyNetwork, limited)
			require.NoError(t, err)
			head, tail, err := Split(denyNetwork, limited)
			require.NoError(t, err)
			require.Less(t, len(head), len(whole), "the head leaves rules out")
			require.Less(t, len(tail), len(head), "the tail is small: the child installs it at every spawn")
			require.Zero(t, len(head)%8)
			require.Zero(t, len(tail)%8)
			if limited {
				// The file size rules are in the head, which a child that
				// makes namespaces has from its clone on.
				unlimitedHead, _, err := Split(denyNetwork, false)
				require.NoError(t, err)
				require.Greater(t, len(head), len(unlimitedHead), "the file size rules add instructions")
			}
		}
	}
}

const oldLibseccompEnv = "SECCOMP_TEST_FCHMODAT2"

// A libseccomp older than the kernel does not know its newest calls by
// name (fchmodat2, Linux 6.6, before libseccomp 2.5.5): their rules are
// still in the program, by number (found in review: fchmodat2 set a
// set-user-ID mode). Compiled with a table that knows none of
// unifiedCalls, the program is the one the whole table gives, and a child
// under it gets EPERM from fchmodat2 with S_ISUID, leaving the mode alone.
func TestProgramWithOldLibseccomp(t *testing.T) {
	if path := os.Getenv(oldLibseccompEnv); path != "" {
		p, _ := unix.BytePtrFromString(path)
		atFDCWD := unix.AT_FDCWD
		_, _, e := unix.Syscall6(452, uintptr(atFDCWD), uintptr(unsafe.Pointer(p)), 0o4755, 0, 0, 0)
		fmt.Printf("fchmodat2=%d\n", int(e))
		os.Exit(0)
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("fchmodat2 is 452 where unifiedCalls apply; the child is checked on amd64 and arm64")
	}
	full, err := compile(NetworkDenied, false, whole)
	require.NoError(t, err)
	old := syscallFromName
	syscallFromName = func(name string) (libseccomp.ScmpSyscall, error) {
		if _, ok := unifiedCalls[name]; ok {
			return 0, fmt.Errorf("libseccomp: no call %s", name)
		}
		return old(name)
	}
	defer func() { syscallFromName = old }()
	bpf, err := compile(NetworkDenied, false, whole)
	require.NoError(t, err)
	require.Equal(t, full, bpf, "the program lost rules")

	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o755))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	pid, err := linuxspawn.Start(&linuxspawn.Attr{
		Path: os.Args[0], Argv: []string{os.Args[0], "-test.run=^" + t.Name() + "$"},
		Env:   []string{oldLibseccompEnv + "=" + file},
		Stdio: [3]int{-1, int(w.Fd()), int(w.Fd())}, CgroupProcsFD: -1, LandlockRulesetFD: -1,
		NoNewPrivs: true, SeccompFilter: bpf,
	})
	w.Close()
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	var ws unix.WaitStatus
	_, err = unix.Wait4(pid, &ws, 0, nil)
	require.NoError(t, err)
	require.Contains(t, string(out), fmt.Sprintf("fchmodat2=%d\n", int(unix.EPERM)), "%s", out)
	fi, err := os.Stat(file)
	require.NoError(t, err)
	require.Zero(t, fi.Mode()&os.ModeSetuid)
}
