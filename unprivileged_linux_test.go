//go:build linux && cgo

package sandboxexec

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const unprivilegedEnv = "SANDBOXEXEC_TEST_UNPRIVILEGED"

// nobody is the user the unprivileged host runs as.
const nobody = 65534

// TestLinuxUnprivilegedHost re-runs this test binary as an unprivileged user,
// the way most agents run: without CAP_SYS_ADMIN there is no PID namespace,
// without CAP_SETPCAP the bounding set cannot shrink, and there is usually
// no pids cgroup to be had. The sandbox must hold all the same: writes only
// below the root (the directory outside is world-writable, so only Landlock
// stops the write), no network, no capabilities, and a timeout still kills
// the command on time.
func TestLinuxUnprivilegedHost(t *testing.T) {
	if os.Getenv(unprivilegedEnv) == "1" {
		unprivilegedHost(t)
		return
	}
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the test binary as another user")
	}
	dir := lxNobodyDir(t, "sandboxexec-unprivileged-")
	root, outside := filepath.Join(dir, "root"), filepath.Join(dir, "outside")
	require.NoError(t, os.Mkdir(root, 0o755))
	require.NoError(t, os.Chown(root, nobody, nobody))
	require.NoError(t, os.Mkdir(outside, 0o777))
	require.NoError(t, os.Chmod(outside, 0o777))
	out := lxRunAsNobody(t, dir, 2*time.Minute, []string{unprivilegedEnv + "=1", "TMPDIR=" + root,
		"SANDBOXEXEC_TEST_ROOT=" + root, "SANDBOXEXEC_TEST_OUTSIDE=" + outside}, "-test.run=^TestLinuxUnprivilegedHost$")
	assert.Contains(t, out, "--- PASS: TestLinuxUnprivilegedHost")
	t.Logf("the unprivileged host:\n%s", out)
}

func unprivilegedHost(t *testing.T) {
	require.NotEqual(t, 0, os.Geteuid())
	root, outside := os.Getenv("SANDBOXEXEC_TEST_ROOT"), os.Getenv("SANDBOXEXEC_TEST_OUTSIDE")
	s := requireSandbox(t)
	t.Logf("ProbeSandbox as uid %d: %+v", os.Geteuid(), s)
	assert.False(t, s.PIDNamespace, "no PID namespace without CAP_SYS_ADMIN")

	out, err := lxRun(t, lxSh(`grep -E '^Cap(Eff|Bnd)' /proc/self/status
echo in > "$1/f" && echo out > "$2/f"`, root, outside), []string{root}, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	assert.Contains(t, out.Stdout, "CapEff:\t0000000000000000")
	assert.Contains(t, out.Stderr, lxWriteOutsideText())
	assert.FileExists(t, filepath.Join(root, "f"))
	lxRequireAbsent(t, filepath.Join(outside, "f"))

	out, err = lxRun(t, []string{"bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9 && echo connected"},
		[]string{root}, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	assert.NotContains(t, out.Stdout, "connected")

	// A TMPDIR of the call's own (the command's, /tmp, is not below the
	// root), which the command takes its own permissions away from: the
	// host, not root, still empties or removes it (found in review: it
	// stayed).
	out, err = lxRun(t, lxSh(`mkdir -p "$TMPDIR/a/b" && touch "$TMPDIR/a/b/f" &&
chmod 0 "$TMPDIR/a/b" "$TMPDIR/a" && chmod 500 "$TMPDIR" && printf '%s' "$TMPDIR"`),
		[]string{root}, SandboxPolicy{}, WithEnv([]string{"PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp"}))
	lxRequireOK(t, out, err)
	require.Equal(t, root, filepath.Dir(out.Stdout), "the call's TMPDIR is made in the host's")
	lxRequireEmptyOrAbsent(t, out.Stdout)
	// The same below a path longer than PATH_MAX, which a walk by path
	// cannot name (found in review: the directory stayed for good).
	out, err = lxRun(t, lxPy(t, `
os.chdir(os.environ["TMPDIR"])
print(os.environ["TMPDIR"], end="")
for i in range(100):
    os.mkdir("d" * 50)
    os.chdir("d" * 50)
os.mkdir("locked")
open("locked/f", "w").close()
os.chmod("locked", 0)
os.chmod(".", 0o500)
`), []string{root}, SandboxPolicy{}, WithEnv([]string{"PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp"}))
	lxRequireOK(t, out, err)
	require.Equal(t, root, filepath.Dir(out.Stdout))
	lxRequireEmptyOrAbsent(t, out.Stdout)

	// AllowedDomains through a user namespace; where none can be made, the
	// call fails closed.
	plain, _ := npServers(t)
	out, err = lxRun(t, lxPy(t, `
import urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
`, npLocalhost(plain.URL)+"/u"), []string{root}, npPolicy)
	if s.NetworkNamespace {
		lxRequireOK(t, out, err)
		assert.Equal(t, "hello from /u\n", out.Stdout)
	} else {
		require.ErrorIs(t, err, ErrSandboxUnavailable)
		assert.Contains(t, err.Error(), "network namespace")
	}

	start := time.Now()
	out, err = lxRunParams(t, ExecParams{Command: []string{"sleep", "30"}, TimeoutMs: ptrU64Linux(200)},
		[]string{root}, SandboxPolicy{})
	require.NoError(t, err)
	assert.True(t, out.TimedOut)
	assert.Less(t, time.Since(start), 5*time.Second)
}

// The tests of the filesystem and network policies, run again by
// TestUnprivilegedHostPolicies as the user nobody; left out: the wrapper
// that re-runs as nobody itself, and the Go client that
// TestNetworkProxyClients starts inside the sandbox.
const (
	unprivilegedSuites     = "^(TestFilesystemPolicy|TestNetworkProxy)"
	unprivilegedSuitesSkip = "^(TestFilesystemPolicyUnprivilegedHost|TestNetworkProxyGoClient)$"
)

// unprivilegedMustPass must each pass as nobody, whatever else skips.
var unprivilegedMustPass = []string{
	"TestFilesystemPolicyGitReadOnly", "TestFilesystemPolicyDenyRead", "TestFilesystemPolicyCannotUndo",
	"TestFilesystemPolicyHostUnchanged", "TestNetworkProxyClients", "TestNetworkProxyNothingElse",
	"TestNetworkProxySOCKS5", "TestNetworkProxyCallsApart", "TestNetworkProxyGoneWithItsCall",
}

// A host user's calls take another path than root's: the mounts are made
// in a user namespace that maps that user alone, and the network namespace
// by the child itself, which hands the proxy's listener back over
// SCM_RIGHTS, where root has one made ahead. So the policy tests run again
// as nobody, and every one of them must pass there: a skip counts as a
// failure unless it is for a missing tool (which skips as root too).
func TestUnprivilegedHostPolicies(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the test binary as another user; as a host user, the policy tests run as that user")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	listed, err := exec.Command(exe, "-test.list", unprivilegedSuites).Output()
	require.NoError(t, err)
	skip := regexp.MustCompile(unprivilegedSuitesSkip)
	var want []string
	for _, name := range strings.Fields(string(listed)) {
		if !skip.MatchString(name) {
			want = append(want, name)
		}
	}
	require.Subset(t, want, unprivilegedMustPass)

	start := time.Now()
	out := lxRunAsNobody(t, lxNobodyDir(t, "sandboxexec-unprivileged-suites-"), 5*time.Minute, nil,
		"-test.run="+unprivilegedSuites, "-test.skip="+unprivilegedSuitesSkip)
	took := time.Since(start)
	results, logged := goTestResults(out)
	var passed int
	var skipped, bad []string
	for _, name := range want {
		switch {
		case results[name] == "PASS":
			passed++
		case results[name] == "SKIP" && strings.Contains(logged[name], " is not installed"):
			skipped = append(skipped, name+": "+strings.TrimSpace(logged[name]))
		case results[name] == "SKIP":
			bad = append(bad, name+" skipped as nobody: "+strings.TrimSpace(logged[name]))
		default:
			bad = append(bad, name+" did not run as nobody")
		}
	}
	t.Logf("as nobody in %s: %d of %d tests passed; skipped for a missing tool: %q", took.Round(time.Millisecond), passed, len(want), skipped)
	for _, name := range unprivilegedMustPass {
		assert.Equal(t, "PASS", results[name], "%s as nobody:\n%s", name, logged[name])
	}
	if len(bad) > 0 {
		t.Errorf("as nobody, %d of %d tests did not pass:\n%s\n\nthe run:\n%s", len(bad), len(want), strings.Join(bad, "\n"), out)
	}
}

// goTestResults reads the -test.v output of a test binary: the result
// (PASS, FAIL or SKIP) of each top-level test, and what it printed.
func goTestResults(out string) (results, logged map[string]string) {
	results, logged = map[string]string{}, map[string]string{}
	var name string
	var text strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if run, ok := strings.CutPrefix(line, "=== RUN   "); ok && !strings.Contains(run, "/") {
			name = run
			text.Reset()
			continue
		}
		if status, rest, ok := strings.Cut(strings.TrimPrefix(line, "--- "), ": "); ok && strings.HasPrefix(line, "--- ") {
			if test, _, _ := strings.Cut(rest, " "); test == name {
				results[name], logged[name] = status, text.String()
				continue
			}
		}
		text.WriteString(line + "\n")
	}
	return results, logged
}

// TestLinuxFullDiskWriteHostUnreachable: under FullDiskWriteAccess, with
// the network allowed (or below Landlock ABI 4, where no network right is
// handled) and no scopes (below ABI 6), a ruleset handled nothing and the
// command got no Landlock domain, and with it no ptrace scope: a host
// user's command (no PID or user namespace there) read the host's
// /proc/PID/environ, the secrets the call leaves out of its environment,
// and opened its mem for writing (found in review). It still writes and
// renames anywhere the user can.
func TestLinuxFullDiskWriteHostUnreachable(t *testing.T) {
	const env = "SANDBOXEXEC_TEST_FULL_DISK_HOST"
	if os.Getenv(env) == "1" {
		outside := os.Getenv("SANDBOXEXEC_TEST_OUTSIDE")
		for _, abi := range []int{3, 5} {
			lxSetABI(t, abi)
			for _, network := range []bool{false, true} {
				out, err := lxRun(t, lxSh(`tr '\0' '\n' < /proc/$PPID/environ | grep SANDBOXEXEC_TEST_SECRET
(exec 3<>/proc/$PPID/mem) && echo mem-opened
mkdir -p "$1/a" "$1/b" && echo in > "$1/a/f" && mv "$1/a/f" "$1/b/f" && ln "$1/b/f" "$1/a/g" && echo moved`, outside),
					nil, SandboxPolicy{FullDiskWriteAccess: true, NetworkAccess: network})
				lxDeniedOrNil(t, out, err)
				assert.NotContains(t, out.Stdout, "hunter2", "ABI %d, network %v: the host's environment read", abi, network)
				assert.NotContains(t, out.Stdout, "mem-opened", "ABI %d, network %v: the host's memory opened", abi, network)
				assert.Contains(t, out.Stdout, "moved", "ABI %d, network %v: %s", abi, network, out.Stderr)
				require.NoError(t, os.RemoveAll(filepath.Join(outside, "a")))
				require.NoError(t, os.RemoveAll(filepath.Join(outside, "b")))
			}
		}
		return
	}
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the test binary as another user")
	}
	dir := lxNobodyDir(t, "sandboxexec-fulldisk-")
	outside := filepath.Join(dir, "outside")
	require.NoError(t, os.Mkdir(outside, 0o777))
	require.NoError(t, os.Chmod(outside, 0o777))
	out := lxRunAsNobody(t, dir, time.Minute, []string{env + "=1", "SANDBOXEXEC_TEST_SECRET=hunter2",
		"SANDBOXEXEC_TEST_OUTSIDE=" + outside}, "-test.run=^TestLinuxFullDiskWriteHostUnreachable$")
	assert.Contains(t, out, "--- PASS: TestLinuxFullDiskWriteHostUnreachable")
	t.Logf("the unprivileged host:\n%s", out)
}
