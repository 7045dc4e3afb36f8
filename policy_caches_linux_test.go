//go:build linux && cgo

package sandboxexec

// A call's confinement is its own policy's, whatever the caches hold
// (standbys, kept mount namespaces, Landlock rulesets, the pool of private
// TMPDIRs): calls of many policies run one after the other and at once,
// the world changes between them, and each command reports what it can do.

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// cfProbe prints one line per probe, label=value, and exits 0.
const cfProbe = `
import os, sys, socket, glob, errno, time
ident, A, B, S, S2, OUT = sys.argv[1:7]
def w(label, d):
    p = os.path.join(d, "cf-" + ident)
    try:
        with open(p, "w") as f:
            f.write("x")
        os.unlink(p)
        print(label + "=W")
    except OSError as e:
        print(label + "=" + errno.errorcode.get(e.errno, str(e.errno)))
def r(label, p):
    try:
        with open(p) as f:
            print(label + "=" + ("SECRET" if "secret" in f.read() else "EMPTY"))
    except OSError as e:
        print(label + "=" + errno.errorcode.get(e.errno, str(e.errno)))
w("A", A)
w("Asub", A + "/sub")
w("Agit", A + "/.git")
w("B", B)
w("Bgit", B + "/.git")
w("out", OUT)
r("S", S)
r("S2", S2)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.close()
    print("net=OK")
except OSError as e:
    print("net=" + errno.errorcode.get(e.errno, str(e.errno)))
print("proxy=" + ("yes" if os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy") else "no"))
pm = "none"
try:
    for line in open("/proc/self/cgroup").read().splitlines():
        n, ctl, path = line.split(":", 2)
        if "pids" in ctl.split(","):
            pm = open("/sys/fs/cgroup/pids" + path + "/pids.max").read().strip()
        elif n == "0" and pm == "none" and os.path.exists("/sys/fs/cgroup" + path + "/pids.max"):
            pm = open("/sys/fs/cgroup" + path + "/pids.max").read().strip()
except Exception as e:
    pm = "err"
print("pidsmax=" + pm)
import resource
print("fsize=" + str(resource.getrlimit(resource.RLIMIT_FSIZE)[0]))
tmp = os.environ.get("TMPDIR", "")
if tmp and os.path.isdir(tmp):
    ents = os.listdir(tmp)
    print("tmpstart=" + str(len(ents)))
    mark = os.path.join(tmp, "mark-" + ident)
    try:
        open(mark, "w").close()
        time.sleep(0.005)
        others = [e for e in os.listdir(tmp) if e != "mark-" + ident]
        print("tmpothers=" + str(len(others)))
    except OSError as e:
        print("tmpw=" + errno.errorcode.get(e.errno, str(e.errno)))
    # Every other private TMPDIR of this host: none writable.
    bad = 0
    for d in glob.glob(os.path.join(os.path.dirname(tmp), "sandboxexec-call-*")):
        if os.path.realpath(d) == os.path.realpath(tmp):
            continue
        p = os.path.join(d, "cf-intruder-" + ident)
        try:
            open(p, "w").close()
            os.unlink(p)
            bad += 1
        except OSError:
            pass
    print("othertmpw=" + str(bad))
else:
    print("tmpstart=none")
`

type cfPolicy struct {
	name   string
	roots  []string
	policy SandboxPolicy
	want   map[string]string
}

type cfWorld struct {
	A, B, L, S, S2, Out string
}

func cfSetup(t *testing.T) cfWorld {
	base := lxRealDir(t)
	w := cfWorld{
		A:   filepath.Join(base, "A"),
		B:   filepath.Join(base, "B"),
		L:   filepath.Join(base, "L"),
		S:   filepath.Join(base, "secret"),
		Out: filepath.Join(base, "out"),
	}
	w.S2 = filepath.Join(w.A, "secret2")
	for _, d := range []string{w.A, w.A + "/sub", w.A + "/.git", w.B, w.B + "/.git", w.Out} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(w.S, []byte("secret"), 0o644))
	require.NoError(t, os.WriteFile(w.S2, []byte("secret"), 0o644))
	require.NoError(t, os.Symlink(w.B, w.L))
	return w
}

func cfPolicies(w cfWorld) []cfPolicy {
	// base: what a policy with no roots gets.
	mk := func(name string, roots []string, p SandboxPolicy, set map[string]string) cfPolicy {
		want := map[string]string{
			"A": "EROFS", "Asub": "EROFS", "Agit": "EROFS", "B": "EROFS", "Bgit": "EROFS", "out": "EROFS",
			"S": "SECRET", "S2": "SECRET", "net": "EPERM", "proxy": "no", "pidsmax": "1024",
			"fsize": "-1", "tmpstart": "0", "tmpothers": "0", "othertmpw": "0",
		}
		if set["tmpstart"] == "none" {
			want["tmpothers"] = ""
		}
		for k, v := range set {
			want[k] = v
		}
		return cfPolicy{name, roots, p, want}
	}
	return []cfPolicy{
		mk("P1 A deny S", []string{w.A}, SandboxPolicy{DenyRead: []string{w.S}},
			map[string]string{"A": "W", "Asub": "W", "S": "EMPTY"}),
		mk("P2 B no ROS net", []string{w.B}, SandboxPolicy{ReadOnlySubpaths: []string{}, NetworkAccess: true},
			map[string]string{"B": "W", "Bgit": "W", "net": "OK"}),
		mk("P3 L->B", []string{w.L}, SandboxPolicy{},
			map[string]string{"B": "W"}),
		mk("P4 A/sub deny S2", []string{w.A + "/sub"}, SandboxPolicy{DenyRead: []string{w.S2}},
			map[string]string{"Asub": "W", "S2": "EMPTY"}),
		mk("P5 A,B maxproc", []string{w.A, w.B}, SandboxPolicy{MaxProcesses: 77},
			map[string]string{"A": "W", "Asub": "W", "B": "W", "pidsmax": "77"}),
		mk("P6 fulldisk deny S", []string{w.A}, SandboxPolicy{FullDiskWriteAccess: true, DenyRead: []string{w.S}},
			map[string]string{"A": "W", "Asub": "W", "B": "W", "Bgit": "W", "out": "W", "S": "EMPTY", "tmpstart": "none", "othertmpw": ""}),
		mk("P7 A no ROS", []string{w.A}, SandboxPolicy{ReadOnlySubpaths: []string{}},
			map[string]string{"A": "W", "Asub": "W", "Agit": "W"}),
		mk("P8 A domains", []string{w.A}, SandboxPolicy{AllowedDomains: []string{"example.com"}},
			map[string]string{"A": "W", "Asub": "W", "net": "OK", "proxy": "yes"}),
		mk("P9 A besteffort", []string{w.A}, SandboxPolicy{BestEffort: true},
			map[string]string{"A": "W", "Asub": "W"}),
		mk("P10 B fsize", []string{w.B}, SandboxPolicy{MaxFileSize: 4096},
			map[string]string{"B": "W", "fsize": "4096"}),
		mk("P11 A,A/sub deny S,S2", []string{w.A, w.A + "/sub"}, SandboxPolicy{DenyRead: []string{w.S, w.S2}},
			map[string]string{"A": "W", "Asub": "W", "S": "EMPTY", "S2": "EMPTY"}),
		mk("P12 none", nil, SandboxPolicy{}, map[string]string{"tmpstart": "none", "othertmpw": ""}),
		mk("P13 B deny A", []string{w.B}, SandboxPolicy{DenyRead: []string{w.A}},
			map[string]string{"B": "W", "S2": "ENOENT", "Asub": "ENOENT", "Agit": "ENOENT", "A": "EROFS"}),
	}
}

// cfCheck runs p once and returns a description of every mismatch.
func cfCheck(t *testing.T, w cfWorld, p cfPolicy, ident string, opts ...Option) []string {
	ctx, cancel := context.WithTimeout(context.Background(), lxCallLimit)
	defer cancel()
	cmd := []string{lxPython(t), "-c", cfProbe, ident, w.A, w.B, w.S, w.S2, w.Out}
	out, err := ProcessExecToolCall(ctx, ExecParams{Command: cmd}, SandboxLinuxSeccomp, p.roots, p.policy, opts...)
	if err != nil {
		return []string{fmt.Sprintf("%s: error %v (%+v)", p.name, err, out)}
	}
	got := lxResults(out.Stdout)
	var bad []string
	for k, v := range p.want {
		if v == "" {
			continue
		}
		if got[k] != v {
			bad = append(bad, fmt.Sprintf("%s: %s=%s, want %s", p.name, k, got[k], v))
		}
	}
	if out.ExitCode != 0 || out.Stderr != "" {
		bad = append(bad, fmt.Sprintf("%s: exit %d stderr %q", p.name, out.ExitCode, out.Stderr))
	}
	sort.Strings(bad)
	return bad
}

// TestPolicyCachesSequential checks the expectations one by one, each
// policy twice in a row and then a third time (the standby).
func TestPolicyCachesSequential(t *testing.T) {
	fsRequireMounts(t)
	w := cfSetup(t)
	for _, p := range cfPolicies(w) {
		for i := 0; i < 3; i++ {
			sbSettle(t)
			for _, b := range cfCheck(t, w, p, fmt.Sprintf("seq%d", i)) {
				t.Error(b)
			}
		}
	}
}

// TestPolicyCachesConcurrent runs the policies at random from several
// goroutines at once.
func TestPolicyCachesConcurrent(t *testing.T) {
	fsRequireMounts(t)
	w := cfSetup(t)
	ps := cfPolicies(w)
	var mu sync.Mutex
	fails := map[string]int{}
	var calls, used atomic.Int64
	old := standbyUsedHook
	standbyUsedHook = func(u bool) {
		if u {
			used.Add(1)
		}
	}
	defer func() { standbyUsedHook = old }()
	deadline := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			for i := 0; time.Now().Before(deadline); i++ {
				// Runs of the same policy, so that standbys are made and
				// taken, mixed with others.
				p := ps[rng.Intn(len(ps))]
				n := 1 + rng.Intn(3)
				for j := 0; j < n; j++ {
					calls.Add(1)
					for _, b := range cfCheck(t, w, p, fmt.Sprintf("g%d-%d-%d", g, i, j)) {
						mu.Lock()
						fails[b]++
						mu.Unlock()
					}
				}
			}
		}(g)
	}
	wg.Wait()
	t.Logf("%d calls, %d from a standby", calls.Load(), used.Load())
	for b, n := range fails {
		t.Errorf("%dx %s", n, b)
	}
}

// cfTry prints label=W or label=NO for a write of a new file in each dir,
// and label=SECRET/EMPTY/NO for a read of each "r:" path.
const cfTry = `
for a in "$@"; do
	case "$a" in
	r:*) p=${a#r:}; c=$(cat "$p" 2>/dev/null) && { [ "$c" = secret ] && echo "$p=SECRET" || echo "$p=EMPTY"; } || echo "$p=NO";;
	*) (echo x > "$a/cf-probe") 2>/dev/null && { rm -f "$a/cf-probe"; echo "$a=W"; } || echo "$a=NO";;
	esac
done
`

// Between calls of one policy (a standby ready for the next), the world
// changes; each next call must see the policy as the world now makes it.
func TestPolicyCachesWorldChanges(t *testing.T) {
	fsRequireMounts(t)
	sbRequire(t)
	base := lxRealDir(t)
	A, B, C := filepath.Join(base, "A"), filepath.Join(base, "B"), filepath.Join(base, "C")
	for _, d := range []string{A, B, C, B + "/g1", B + "/g2", base + "/deny"} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	var usedAny int
	step := func(roots []string, p SandboxPolicy, want map[string]string, opts ...Option) {
		t.Helper()
		for i := 0; i < 3; i++ {
			sbSettle(t)
			var args []string
			for k := range want {
				args = append(args, k)
			}
			sort.Strings(args)
			used := false
			old := standbyUsedHook
			standbyUsedHook = func(u bool) { used = u }
			out, err := lxRun(t, lxSh(cfTry, args...), roots, p, opts...)
			standbyUsedHook = old
			if used {
				usedAny++
			}
			require.NoError(t, err)
			got := lxResults(out.Stdout)
			for k, v := range want {
				key := strings.TrimPrefix(k, "r:")
				if got[key] != v {
					t.Errorf("call %d (standby %v): %s=%s, want %s", i, used, key, got[key], v)
				}
			}
		}
	}
	roots := []string{A, B}
	p := SandboxPolicy{DenyRead: []string{base + "/deny/s"}}
	require.NoError(t, os.WriteFile(base+"/deny/s", []byte("secret"), 0o644))

	// a) A/.git names B/g1, then B/g2.
	require.NoError(t, os.WriteFile(A+"/.git", []byte("gitdir: "+B+"/g1\n"), 0o644))
	step(roots, p, map[string]string{A: "W", B: "W", B + "/g1": "NO", B + "/g2": "W", "r:" + base + "/deny/s": "EMPTY"})
	require.NoError(t, os.WriteFile(A+"/.git", []byte("gitdir: "+B+"/g2\n"), 0o644))
	step(roots, p, map[string]string{A: "W", B: "W", B + "/g1": "W", B + "/g2": "NO", "r:" + base + "/deny/s": "EMPTY"})

	// b) the denied file replaced by a rename over it.
	require.NoError(t, os.WriteFile(base+"/deny/s.new", []byte("secret"), 0o644))
	require.NoError(t, os.Rename(base+"/deny/s.new", base+"/deny/s"))
	step(roots, p, map[string]string{A: "W", B: "W", B + "/g2": "NO", "r:" + base + "/deny/s": "EMPTY"})

	// c) root B turned into a symlink to C.
	require.NoError(t, os.Rename(B, base+"/B.old"))
	require.NoError(t, os.Symlink(C, B))
	step(roots, p, map[string]string{A: "W", C: "W", base + "/B.old": "NO", "r:" + base + "/deny/s": "EMPTY"})
	require.NoError(t, os.Remove(B))
	require.NoError(t, os.Rename(base+"/B.old", B))
	step(roots, p, map[string]string{A: "W", B: "W", C: "NO", B + "/g2": "NO"})

	// d) a tmpfs mounted on the denied file's directory, with a new secret.
	require.NoError(t, unix.Mount("tmpfs", base+"/deny", "tmpfs", 0, "size=1m"))
	require.NoError(t, os.WriteFile(base+"/deny/s", []byte("secret"), 0o644))
	step(roots, p, map[string]string{A: "W", "r:" + base + "/deny/s": "EMPTY"})
	require.NoError(t, unix.Unmount(base+"/deny", 0))
	step(roots, p, map[string]string{A: "W", "r:" + base + "/deny/s": "EMPTY"})

	// e) a tmpfs mounted under a root (writable in it), then unmounted.
	require.NoError(t, os.MkdirAll(A+"/mnt", 0o755))
	require.NoError(t, unix.Mount("tmpfs", A+"/mnt", "tmpfs", 0, "size=1m"))
	step(roots, p, map[string]string{A: "W", A + "/mnt": "W"})
	require.NoError(t, unix.Mount("", A+"/mnt", "", unix.MS_REMOUNT|unix.MS_RDONLY, ""))
	step(roots, p, map[string]string{A: "W", A + "/mnt": "NO"})
	require.NoError(t, unix.Unmount(A+"/mnt", 0))
	step(roots, p, map[string]string{A: "W", A + "/mnt": "W"})

	// f) .git made a directory in A, then removed.
	require.NoError(t, os.Remove(A+"/.git"))
	require.NoError(t, os.Mkdir(A+"/.git", 0o755))
	step(roots, p, map[string]string{A: "W", A + "/.git": "NO", B + "/g2": "W"})
	require.NoError(t, os.Remove(A+"/.git"))
	require.NoError(t, os.Mkdir(A+"/.git", 0o755)) // another inode
	step(roots, p, map[string]string{A: "W", A + "/.git": "NO"})

	// g) TMPDIR per call: inside root A (no private one), then none.
	require.NoError(t, os.MkdirAll(A+"/tmp", 0o755))
	env := append(os.Environ(), "TMPDIR="+A+"/tmp")
	step(roots, p, map[string]string{A + "/tmp": "W"}, WithEnv(env))
	step(roots, p, map[string]string{A + "/tmp": "W", A: "W"})

	// h) the host's os.TempDir() changed.
	newTmp := filepath.Join(base, "hosttmp")
	require.NoError(t, os.MkdirAll(newTmp, 0o755))
	t.Setenv("TMPDIR", newTmp)
	step(roots, p, map[string]string{A: "W", newTmp: "NO"})
	t.Logf("%d calls took a standby", usedAny)
}
