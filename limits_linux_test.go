//go:build linux && cgo

package sandboxexec

// The policy's resource limits on the real kernel: each binds, within the
// host's own hard limits, and none can be passed from inside the call.
// Like reliability_linux_test.go these tests change package state, so none
// calls t.Parallel.

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestReliabilityResourceLimits(t *testing.T) {
	requireSandbox(t)
	const python = "/usr/bin/python3"
	_, pyErr := os.Stat(python)

	t.Run("MaxFileSize", func(t *testing.T) {
		root := lxRealDir(t)
		f := filepath.Join(root, "f")
		policy := SandboxPolicy{MaxFileSize: 1_000_000}
		out, _, err := relCall(t, ExecParams{
			Command: lxSh(`head -c 2000000 /dev/zero > "$1"; echo "status $?"`, f),
		}, []string{root}, policy)
		relRequireOK(t, out, err)
		assert.Equal(t, fmt.Sprintf("status %d\n", 128+int(syscall.SIGXFSZ)), out.Stdout, "head dies of SIGXFSZ")
		fi, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, int64(1_000_000), fi.Size())

		if pyErr != nil {
			t.Logf("no %s: EFBIG not checked", python)
			return
		}
		// Python ignores SIGXFSZ, so its write fails with EFBIG instead.
		g := filepath.Join(root, "g")
		out, _, err = relCall(t, ExecParams{Command: []string{python, "-c", `
import errno, sys
try:
    with open(sys.argv[1], "wb") as f:
        f.write(b"\0" * 2000000)
    print("written")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
`, g}}, []string{root}, policy)
		relRequireOK(t, out, err)
		assert.Equal(t, "EFBIG\n", out.Stdout)
		fi, err = os.Stat(g)
		require.NoError(t, err)
		assert.Equal(t, int64(1_000_000), fi.Size())
	})

	t.Run("MaxCPUTime", func(t *testing.T) {
		out, elapsed, err := relCall(t, ExecParams{
			Command:   lxSh(`while :; do :; done`),
			TimeoutMs: relU64(10_000),
		}, []string{t.TempDir()}, SandboxPolicy{MaxCPUTime: time.Second})
		require.NoError(t, err)
		t.Logf("ended by %s (exit %d) after %v", out.Signal, out.ExitCode, elapsed.Round(time.Millisecond))
		assert.False(t, out.TimedOut, "the CPU limit ends it, not the timeout")
		assert.Contains(t, []string{"SIGXCPU", "SIGKILL"}, out.Signal)
		assert.Less(t, elapsed, 5*time.Second, "1 s of CPU, stretched on a loaded machine")
	})

	t.Run("MaxCPUTime of a child", func(t *testing.T) {
		// The same loop in a process that is not the namespace's init,
		// which ignores a SIGXCPU it has no handler for.
		out, elapsed, err := relCall(t, ExecParams{
			Command:   lxSh(`sh -c 'while :; do :; done'; echo "status $?"`),
			TimeoutMs: relU64(10_000),
		}, []string{t.TempDir()}, SandboxPolicy{MaxCPUTime: time.Second})
		require.NoError(t, err)
		assert.False(t, out.TimedOut)
		assert.Contains(t, []string{
			fmt.Sprintf("status %d\n", 128+int(syscall.SIGXCPU)),
			fmt.Sprintf("status %d\n", 128+int(syscall.SIGKILL)),
		}, out.Stdout)
		assert.Less(t, elapsed, 5*time.Second, "1 s of CPU, stretched on a loaded machine")
	})

	t.Run("MaxAddressSpace", func(t *testing.T) {
		if pyErr != nil {
			t.Skipf("no %s", python)
		}
		policy := SandboxPolicy{MaxAddressSpace: 64 << 20}
		out, _, err := relCall(t, ExecParams{Command: []string{python, "-c", "x = bytearray(256*1024*1024)"}},
			[]string{t.TempDir()}, policy)
		require.NoError(t, err)
		assert.Equal(t, 1, out.ExitCode)
		assert.Contains(t, out.Stderr, "MemoryError")

		// And the limit leaves room for a small allocation.
		out, _, err = relCall(t, ExecParams{Command: []string{python, "-c", "x = bytearray(8*1024*1024); print(len(x))"}},
			[]string{t.TempDir()}, policy)
		relRequireOK(t, out, err)
		assert.Equal(t, "8388608\n", out.Stdout)
	})

	t.Run("negative limits", func(t *testing.T) {
		for _, policy := range []SandboxPolicy{
			{MaxProcesses: -1},
			{MaxFileSize: -1},
			{MaxCPUTime: -time.Nanosecond},
			{MaxAddressSpace: -1 << 40},
		} {
			root := t.TempDir()
			flag := filepath.Join(root, "ran")
			out, _, err := relCall(t, ExecParams{Command: lxSh(`: > "$1"`, flag)}, []string{root}, policy)
			require.Error(t, err, "%+v", policy)
			assert.Contains(t, err.Error(), "negative", "%+v", policy)
			assert.Equal(t, ExecToolCallOutput{}, out, "%+v", policy)
			lxRequireAbsent(t, flag)
		}
	})
}

const hostLimitsEnv = "SANDBOXEXEC_TEST_HOST_LIMITS"

// The limits of a policy only lower the host's: a value above the host's
// own hard limit gives the command that. Above it, a root host with
// CAP_SYS_RESOURCE raised it for the command, past what was set for the
// host, and any other host failed every call (found in review: a host
// user whose RLIMIT_NPROC was below DefaultMaxProcesses could run no call,
// limits or not). MaxCPUTime near math.MaxInt64 is rounded up without
// overflow. Run under prlimit, as root and as a host user.
func TestResourceLimitsWithinHostLimits(t *testing.T) {
	if os.Getenv(hostLimitsEnv) == "1" {
		resourceLimitsWithinHost(t)
		return
	}
	requireSandbox(t)
	var cpu unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_CPU, &cpu))
	r := &linuxRunner{policy: SandboxPolicy{MaxCPUTime: math.MaxInt64}}
	rlimits, err := r.rlimits()
	require.NoError(t, err)
	for _, rl := range rlimits {
		if rl.Resource == unix.RLIMIT_CPU {
			assert.Equal(t, min(cpu.Max, math.MaxInt64/uint64(time.Second)+1), rl.Max, "MaxCPUTime of math.MaxInt64")
		}
	}
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	relProcessLimitAsProbed(t)
	lowered := []string{"prlimit", "--fsize=16777216", "--cpu=3600", "--nproc=300"}
	lxRerunUnder(t, hostLimitsEnv, lowered...)
	if os.Geteuid() != 0 {
		return
	}
	dir := lxNobodyDir(t, "sandboxexec-host-limits-")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	host := exec.CommandContext(ctx, lowered[0], append(lowered[1:], filepath.Join(dir, "host.test"),
		"-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")...)
	host.Dir = dir
	home := filepath.Join(dir, "home")
	host.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+home, hostLimitsEnv+"=1")
	host.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := host.CombinedOutput()
	require.NoError(t, err, "as nobody:\n%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "%s", out)
	t.Logf("as nobody:\n%s", out)
}

func resourceLimitsWithinHost(t *testing.T) {
	requireSandbox(t)
	hard := func(resource int) uint64 {
		var lim unix.Rlimit
		require.NoError(t, unix.Getrlimit(resource, &lim))
		require.NotEqual(t, uint64(unix.RLIM_INFINITY), lim.Max, "run under prlimit")
		return lim.Max
	}
	fsize, cpu, nproc := hard(unix.RLIMIT_FSIZE), hard(unix.RLIMIT_CPU), hard(unix.RLIMIT_NPROC)
	// limits reads the command's own hard limits, from /proc/self/limits.
	limits := func(policy SandboxPolicy) map[string]string {
		out, err := lxRun(t, []string{"cat", "/proc/self/limits"}, []string{t.TempDir()}, policy)
		lxRequireOK(t, out, err)
		got := map[string]string{}
		for _, line := range strings.Split(out.Stdout, "\n") {
			f := strings.Fields(line)
			for _, name := range []string{"Max file size", "Max cpu time", "Max processes"} {
				if strings.HasPrefix(line, name) && len(f) >= 5 {
					got[name] = f[len(strings.Fields(name))+1]
				}
			}
		}
		return got
	}
	big := limits(SandboxPolicy{MaxFileSize: int64(fsize) * 4, MaxCPUTime: time.Duration(cpu) * 4 * time.Second, MaxProcesses: int(nproc) * 4})
	assert.Equal(t, strconv.FormatUint(fsize, 10), big["Max file size"], "a MaxFileSize above the host's")
	assert.Equal(t, strconv.FormatUint(cpu, 10), big["Max cpu time"], "a MaxCPUTime above the host's")
	small := limits(SandboxPolicy{MaxFileSize: 1 << 20, MaxCPUTime: 1500 * time.Millisecond})
	assert.Equal(t, "1048576", small["Max file size"], "a MaxFileSize below the host's")
	assert.Equal(t, "2", small["Max cpu time"], "rounded up to whole seconds")
	if cgroups() == nil {
		// RLIMIT_NPROC is the process limit, DefaultMaxProcesses above
		// the host's too.
		assert.Equal(t, strconv.FormatUint(nproc, 10), big["Max processes"], "a MaxProcesses above the host's")
		assert.Equal(t, strconv.FormatUint(nproc, 10), limits(SandboxPolicy{})["Max processes"], "DefaultMaxProcesses above the host's")
	}
	t.Logf("as uid %d, host's hard limits %d B, %d s, %d processes: %v", os.Geteuid(), fsize, cpu, nproc, big)
	relProcessLimitAsProbed(t)
}

// relProcessLimitAsProbed checks that ProbeSandbox's ProcessLimit tells
// whether MaxProcesses binds: a root host without a pids cgroup has no
// process limit (RLIMIT_NPROC does not bind root), and is told so.
func relProcessLimitAsProbed(t *testing.T) {
	out, err := lxRun(t, []string{"python3", "-c", `
import os, time
n = 0
try:
    for i in range(20):
        if os.fork() == 0:
            time.sleep(1)
            os._exit(0)
        n += 1
except OSError:
    pass
print(n)
`}, []string{t.TempDir()}, SandboxPolicy{MaxProcesses: 8})
	lxRequireOK(t, out, err)
	forks := strings.TrimSpace(out.Stdout)
	if ProbeSandbox().ProcessLimit {
		assert.Equal(t, "7", forks, "8 processes, python's included")
	} else {
		assert.Equal(t, "20", forks, "ProcessLimit false, and MaxProcesses does not bind")
	}
}

// MaxFileSize holds against what gives a file blocks or size without a
// write or a truncate, which the kernel does not hold to RLIMIT_FSIZE:
// fallocate with FALLOC_FL_KEEP_SIZE and the ioctl that does it
// (FS_IOC_RESVSP64) allocate past the end, FALLOC_FL_INSERT_RANGE grows
// the size by a hole that mmap fills (found in review: 4 MiB of blocks,
// and a file of 8 MiB written, under a limit of 1 MiB). Punching a hole,
// which frees blocks, still works, and a call without the limit keeps
// them all.
func TestMaxFileSizeHoldsAgainstFallocate(t *testing.T) {
	requireSandbox(t)
	const limit = 1 << 20
	body := `
import fcntl, mmap, struct
d, limit, resvsp64 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
def fd_of(name, data=b""):
    fd = os.open(os.path.join(d, name), os.O_RDWR | os.O_CREAT, 0o644)
    if data:
        os.write(fd, data)
    return fd
def keep_size():
    check(libc.fallocate(fd_of("keep"), 1, 0, 4 * limit))
def resvsp():
    # struct space_resv: l_type, l_whence, l_start, l_len, l_sysid, l_pid, l_pad[4]
    fcntl.ioctl(fd_of("resv"), resvsp64, struct.pack("=hhxxxxqqii16x", 0, 0, 0, 4 * limit, 0, 0))
def insert():
    fd = fd_of("insert", b"x" * 8192)
    check(libc.fallocate(fd, 0x20, 0, 8 * limit))
    size = os.fstat(fd).st_size
    m = mmap.mmap(fd, size)
    for off in range(0, size, 4096):
        m[off] = 1
    m.close()
def punch():
    check(libc.fallocate(fd_of("punch", b"x" * 8192), 3, 0, 4096))
attempt("keep_size", keep_size)
attempt("resvsp", resvsp)
attempt("insert", insert)
attempt("punch", punch)
`
	// FS_IOC_RESVSP64 is _IOW('X', 42, struct space_resv), 48 bytes; _IOW's
	// direction bits taken from a request x/sys has.
	resvsp64 := strconv.Itoa(unix.FS_IOC_ENABLE_VERITY - (128<<16 | 'f'<<8 | 133) | 48<<16 | 'X'<<8 | 42)
	usage := func(root, name string) int64 {
		var st unix.Stat_t
		require.NoError(t, unix.Stat(filepath.Join(root, name), &st))
		return max(st.Size, st.Blocks*512)
	}
	// What the file system allows without the limit (ext4 all of it; tmpfs
	// no reservation nor insertion) is what the limit must refuse.
	freeRoot := lxRealDir(t)
	free, _ := lxPyRun(t, []string{freeRoot}, SandboxPolicy{}, body, freeRoot, strconv.Itoa(limit), resvsp64)
	require.Equal(t, "OK", free["keep_size"], "without MaxFileSize: %v", free)
	require.Equal(t, "OK", free["punch"], "without MaxFileSize: %v", free)
	root := lxRealDir(t)
	res, _ := lxPyRun(t, []string{root}, SandboxPolicy{MaxFileSize: limit}, body, root, strconv.Itoa(limit), resvsp64)
	for op, was := range free {
		want := map[bool]string{true: "ENOTSUP", false: was}[was == "OK" && op != "punch"]
		assert.Equal(t, want, res[op], "%s with MaxFileSize (without: %s)", op, was)
	}
	for _, name := range []string{"keep", "resv", "insert"} {
		assert.LessOrEqual(t, usage(root, name), int64(limit), "%s: blocks or size past MaxFileSize", name)
	}
}

// What a host whose hard RLIMIT_CORE is 0 gets for each core_pattern.
func TestCoreLimitFor(t *testing.T) {
	// " |x" is a file the kernel names so: it tells a pipe by the first
	// byte alone.
	for _, pattern := range []string{"core", "/var/crash/core.%e.%p", "@/run/systemd/coredump.socket", "", " |/usr/bin/x"} {
		limit, err := coreLimitFor(pattern)
		require.NoError(t, err, pattern)
		assert.Equal(t, uint64(0), limit, pattern)
	}
	_, err := coreLimitFor("|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h")
	require.ErrorIs(t, err, ErrSandboxUnavailable)
	assert.ErrorContains(t, err, "ulimit -Hc 1")
	assert.ErrorContains(t, err, "systemd-coredump")
}

const coreZeroEnv = "SANDBOXEXEC_TEST_CORE_ZERO"

// A host whose hard RLIMIT_CORE is 0 (CIS benchmarks set it) runs its
// commands with no core dump, as root and as a host user; every call failed
// before, in the child's setrlimit.
func TestCoreLimitZeroHost(t *testing.T) {
	if os.Getenv(coreZeroEnv) == "1" {
		coreLimitZeroHost(t)
		return
	}
	requireSandbox(t)
	lxRerunUnder(t, coreZeroEnv, "env")
	if os.Geteuid() == 0 {
		lxRerunAsNobody(t, coreZeroEnv)
	}
	// A rootless container's root: CAP_SYS_RESOURCE in its own user
	// namespace only, which raises no limit (found in review: every call
	// failed, "setrlimit failed in the child").
	if err := exec.Command("unshare", "-Ur", "true").Run(); err != nil {
		t.Logf("no user namespace to rerun in: %v", err)
		return
	}
	lxRerunUnder(t, coreZeroEnv, "unshare", "-Ur", "--fork")
}

func coreLimitZeroHost(t *testing.T) {
	requireSandbox(t)
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0}))
	root := os.Getenv("SANDBOXEXEC_TEST_ROOT")
	if root == "" {
		root = t.TempDir()
	}
	pattern, err := os.ReadFile(corePatternFile)
	require.NoError(t, err)
	out, err := lxRun(t, []string{"cat", "/proc/self/limits"}, []string{root}, SandboxPolicy{})
	pipe := strings.HasPrefix(string(pattern), "|")
	if pipe && !coreRaisable() {
		require.ErrorIs(t, err, ErrSandboxUnavailable)
		assert.ErrorContains(t, err, "ulimit -Hc 1")
		return
	}
	lxRequireOK(t, out, err)
	if !pipe && !coreRaisable() {
		// The same host with a helper on a pipe, which a limit of 0 does
		// not stop: calls and the probe refuse, a standby made before too.
		again, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{})
		lxRequireOK(t, again, err)
		sbSettle(t)
		was := corePatternFile
		corePatternFile = filepath.Join(t.TempDir(), "core_pattern")
		defer func() { corePatternFile = was }()
		require.NoError(t, os.WriteFile(corePatternFile, []byte("|/usr/share/apport/apport -p%p -s%s -c%c\n"), 0o644))
		_, err = lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{})
		require.ErrorIs(t, err, ErrSandboxUnavailable)
		assert.ErrorContains(t, err, "apport")
		probe := ProbeSandbox()
		assert.False(t, probe.Available)
		assert.Contains(t, probe.Detail, "ulimit -Hc 1")
	}
	// 1 only where 0 does not stop a dump, and the host may raise it.
	want := "0"
	if pipe {
		want = "1"
	}
	var line string
	for _, l := range strings.Split(out.Stdout, "\n") {
		if strings.HasPrefix(l, "Max core file size") {
			line = l
		}
	}
	assert.Equal(t, []string{"Max", "core", "file", "size", want, want, "bytes"}, strings.Fields(line), out.Stdout)
}
