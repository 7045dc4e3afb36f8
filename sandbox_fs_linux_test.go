//go:build linux && cgo

package sandboxexec

// Landlock and the roots: what a command can write, link, rename and
// truncate, and how roots are resolved and validated.

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLinuxReadEtcPasswd(t *testing.T) {
	requireSandbox(t)
	out, err := lxRun(t, []string{"cat", "/etc/passwd"}, []string{t.TempDir()}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Contains(t, out.Stdout, "root:")
	assert.False(t, out.TimedOut)
}

func TestLinuxWriteInsideRoot(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	script := `set -e
cd "$1"
echo hello > a
mv a b
mkdir d
echo x > d/f
mv d/f d/g
ln -s b link
cat link
rm link d/g
rmdir d
mkdir -p keep/sub
echo kept > keep/sub/file
rm b`
	out, err := lxRun(t, lxSh(script, root), []string{root}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, "hello\n", out.Stdout)
	b, err := os.ReadFile(filepath.Join(root, "keep", "sub", "file"))
	require.NoError(t, err)
	assert.Equal(t, "kept\n", string(b))
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "keep", entries[0].Name())

	res, _ := lxPyRun(t, []string{root}, SandboxPolicy{}, `
p = sys.argv[1]
attempt("create", lambda: create(p + "/f"))
attempt("rename", lambda: os.rename(p + "/f", p + "/g"))
attempt("truncate", lambda: os.truncate(p + "/g", 1))
attempt("mkdir", lambda: os.mkdir(p + "/d"))
attempt("remove", lambda: os.remove(p + "/g"))
attempt("rmdir", lambda: os.rmdir(p + "/d"))
attempt("mkfifo", lambda: os.mkfifo(p + "/fifo"))
`, root)
	for _, l := range []string{"create", "rename", "truncate", "mkdir", "remove", "rmdir", "mkfifo"} {
		assert.Equal(t, "OK", res[l], l)
	}
}

func TestLinuxWriteOutsideDenied(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	outsideDir := t.TempDir() // the test's own, not a root
	etcPath := "/etc/sandboxexec-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(lxSeq.Add(1), 10)
	t.Cleanup(func() { os.RemoveAll(etcPath); os.RemoveAll(etcPath + ".d") })

	for name, target := range map[string]string{
		"tempdir": filepath.Join(outsideDir, "f"),
		"etc":     etcPath,
	} {
		t.Run(name, func(t *testing.T) {
			res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
p = sys.argv[1]
attempt("create", lambda: create(p))
attempt("excl", lambda: os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)))
attempt("mkdir", lambda: os.mkdir(p + ".d"))
attempt("mkfifo", lambda: os.mkfifo(p))
attempt("symlink", lambda: os.symlink("/etc/passwd", p))
`, target)
			for _, l := range []string{"create", "excl", "mkdir", "mkfifo", "symlink"} {
				assert.Equal(t, lxWriteOutside(), res[l], "%s: %s", l, out.Stdout)
			}
			lxRequireAbsent(t, target)
			lxRequireAbsent(t, target+".d")

			// The same through a shell: exit 2 and "Permission denied",
			// which the call reports as a denial.
			out, err := lxRun(t, lxSh(`echo x > "$1"`, target), []string{root}, SandboxPolicy{})
			lxRequireDenied(t, out, err)
			assert.Equal(t, 2, out.ExitCode)
			assert.Contains(t, out.Stderr, lxWriteOutsideText())
			lxRequireAbsent(t, target)
		})
	}
}

func TestLinuxTruncateOutsideDenied(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	keep := filepath.Join(t.TempDir(), "keep")
	require.NoError(t, os.WriteFile(keep, []byte("precious"), 0o666))

	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
p = sys.argv[1]
attempt("truncate", lambda: os.truncate(p, 0))
attempt("truncate_grow", lambda: os.truncate(p, 1 << 20))
attempt("open_trunc", lambda: os.close(os.open(p, os.O_WRONLY | os.O_TRUNC)))
attempt("open_rdwr", lambda: os.close(os.open(p, os.O_RDWR)))
attempt("append", lambda: os.close(os.open(p, os.O_WRONLY | os.O_APPEND)))
attempt("unlink", lambda: os.unlink(p))
attempt("rename", lambda: os.rename(p, p + ".renamed"))
def read():
    with open(p) as f:
        assert f.read() == "precious"
attempt("read", read)
`, keep)
	for _, l := range []string{"truncate", "truncate_grow", "open_trunc", "open_rdwr", "append", "unlink", "rename"} {
		assert.Equal(t, lxWriteOutside(), res[l], "%s: %s", l, out.Stdout)
	}
	assert.Equal(t, "OK", res["read"])
	b, err := os.ReadFile(keep)
	require.NoError(t, err)
	assert.Equal(t, "precious", string(b))
	lxRequireAbsent(t, keep+".renamed")
}

func TestLinuxSymlinkOutOfRoot(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	outside := t.TempDir()
	target := filepath.Join(outside, "target")
	require.NoError(t, os.WriteFile(target, []byte("orig"), 0o666))
	require.NoError(t, os.Symlink(target, filepath.Join(root, "filelink")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "dirlink")))

	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
root, outside = sys.argv[1], sys.argv[2]
attempt("file_link", lambda: create(root + "/filelink"))
attempt("dir_link", lambda: create(root + "/dirlink/new"))
attempt("dir_link_mkdir", lambda: os.mkdir(root + "/dirlink/newdir"))
attempt("own_symlink", lambda: os.symlink(outside, root + "/mine"))
attempt("own_link_write", lambda: create(root + "/mine/new2"))
attempt("own_link_trunc", lambda: os.truncate(root + "/mine/target", 0))
`, root, outside)
	assert.Equal(t, "OK", res["own_symlink"], out.Stdout) // a symlink is just a file in the root
	for _, l := range []string{"file_link", "dir_link", "dir_link_mkdir", "own_link_write", "own_link_trunc"} {
		assert.Equal(t, lxWriteOutside(), res[l], "%s: %s", l, out.Stdout)
	}
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "orig", string(b))
	lxRequireAbsent(t, filepath.Join(outside, "new"))
	lxRequireAbsent(t, filepath.Join(outside, "newdir"))
	lxRequireAbsent(t, filepath.Join(outside, "new2"))
}

func TestLinuxLinkAndRenameOutOfRoot(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	outside := t.TempDir()
	src := filepath.Join(root, "f")
	require.NoError(t, os.WriteFile(src, []byte("data"), 0o666))
	outsideFile := filepath.Join(outside, "theirs")
	require.NoError(t, os.WriteFile(outsideFile, []byte("theirs"), 0o666))
	crossDeviceOrDenied := func(t *testing.T, text string) {
		t.Helper()
		assert.True(t, strings.Contains(text, lxWriteOutsideText()) || strings.Contains(text, "Invalid cross-device link"),
			"want EACCES or EXDEV, got %q", text)
	}

	t.Run("ln", func(t *testing.T) {
		out, err := lxRun(t, []string{"ln", src, filepath.Join(outside, "hard")}, []string{root}, SandboxPolicy{})
		lxDeniedOrNil(t, out, err)
		assert.NotEqual(t, 0, out.ExitCode)
		crossDeviceOrDenied(t, out.Stderr)
		lxRequireAbsent(t, filepath.Join(outside, "hard"))
	})
	t.Run("mv", func(t *testing.T) {
		out, err := lxRun(t, []string{"mv", src, filepath.Join(outside, "moved")}, []string{root}, SandboxPolicy{})
		lxDeniedOrNil(t, out, err)
		assert.NotEqual(t, 0, out.ExitCode)
		crossDeviceOrDenied(t, out.Stderr)
		lxRequireAbsent(t, filepath.Join(outside, "moved"))
		b, err := os.ReadFile(src)
		require.NoError(t, err, "the source must survive a failed move")
		assert.Equal(t, "data", string(b))
	})
	t.Run("syscalls", func(t *testing.T) {
		res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
src, out, theirs = sys.argv[1], sys.argv[2], sys.argv[3]
attempt("link_out", lambda: os.link(src, out + "/hard"))
attempt("rename_out", lambda: os.rename(src, out + "/moved"))
attempt("link_in", lambda: os.link(theirs, os.path.dirname(src) + "/stolen_link"))
attempt("rename_in", lambda: os.rename(theirs, os.path.dirname(src) + "/stolen"))
`, src, outside, outsideFile)
		// A hard link into the root would make the outside file writable
		// through its new name in the root: Landlock (refer, ABI 2) refuses
		// a link or rename that would give the file more rights.
		for _, l := range []string{"link_out", "rename_out", "link_in", "rename_in"} {
			assert.Contains(t, []string{lxWriteOutside(), "EXDEV"}, res[l], "%s: %s", l, out.Stdout)
		}
		lxRequireAbsent(t, filepath.Join(root, "stolen_link"))
		lxRequireAbsent(t, filepath.Join(outside, "hard"))
		lxRequireAbsent(t, filepath.Join(outside, "moved"))
		lxRequireAbsent(t, filepath.Join(root, "stolen"))
		b, err := os.ReadFile(outsideFile)
		require.NoError(t, err)
		assert.Equal(t, "theirs", string(b))
	})
}

// Many writable roots each stay writable, metadata too, in the call's
// read-only view of the host (no limit of the mount set-up's own).
func TestLinuxManyRoots(t *testing.T) {
	requireSandbox(t)
	parent := lxRealDir(t)
	roots := make([]string, 100)
	for i := range roots {
		roots[i] = filepath.Join(parent, "root"+strconv.Itoa(i))
		require.NoError(t, os.Mkdir(roots[i], 0o755))
	}
	out, err := lxRun(t, lxSh(`for r; do echo x > "$r/f" && chmod 600 "$r/f" || exit 1; done`, roots...), roots, SandboxPolicy{})
	lxRequireOK(t, out, err)
	for _, r := range roots {
		fi, err := os.Stat(filepath.Join(r, "f"))
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
	}
}

func TestLinuxRootsValidation(t *testing.T) {
	requireSandbox(t)
	writeScript := `
for p in sys.argv[1:]:
    attempt(p, lambda: create(p))
`
	t.Run("missing root is skipped", func(t *testing.T) {
		root := t.TempDir()
		missing := filepath.Join(t.TempDir(), "does", "not", "exist")
		outside := filepath.Join(t.TempDir(), "f")

		res, out := lxPyRun(t, []string{missing}, SandboxPolicy{}, writeScript, outside)
		assert.Equal(t, lxWriteOutside(), res[outside], out.Stdout)
		lxRequireAbsent(t, outside)

		inRoot := filepath.Join(root, "f")
		res, out = lxPyRun(t, []string{missing, root}, SandboxPolicy{}, writeScript, inRoot, outside)
		assert.Equal(t, "OK", res[inRoot], out.Stdout)
		assert.Equal(t, lxWriteOutside(), res[outside], out.Stdout)
		lxRequireAbsent(t, outside)
	})
	for name, bad := range map[string]func(t *testing.T) string{
		"relative root": func(t *testing.T) string { return "relative/dir" },
		"dotdot root":   func(t *testing.T) string { return t.TempDir() + "/../x" },
		"file root": func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "file")
			require.NoError(t, os.WriteFile(f, nil, 0o644))
			return f
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			marker := filepath.Join(root, "marker")
			out, err := lxRun(t, []string{"touch", marker}, []string{root, bad(t)}, SandboxPolicy{})
			require.Error(t, err)
			assert.False(t, errors.Is(err, ErrSandboxUnavailable), "a bad root is the caller's mistake: %v", err)
			var denied *SandboxDeniedError
			assert.False(t, errors.As(err, &denied))
			assert.Equal(t, ExecToolCallOutput{}, out)
			lxRequireAbsent(t, marker)
		})
	}
}

// Where its temporary directory is not below a writable root, the command
// gets one of its own, writable, outside the roots (the go command ignores
// a go.mod in the temporary directory), empty at the start, and emptied or
// removed once the call is over (see tmpdir_pool_linux_test.go for its
// reuse).
func TestLinuxPrivateTMPDIR(t *testing.T) {
	requireSandbox(t)
	root := lxRealDir(t)
	hostTmp, err := filepath.EvalSymlinks(os.TempDir())
	require.NoError(t, err)
	script := `printf '%s\n' "$TMPDIR"; ls -A "$TMPDIR"; f=$(mktemp) && echo x >"$f" && mkdir -p "$TMPDIR/a/b" && echo kept >"$TMPDIR/a/b/c" && echo wrote`
	env := []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp"}
	for range 2 {
		out, err := lxRun(t, lxSh(script), []string{root}, SandboxPolicy{}, WithEnv(env))
		lxRequireOK(t, out, err)
		tmp, rest, _ := strings.Cut(out.Stdout, "\n")
		assert.Equal(t, "wrote\n", rest, "nothing of an earlier call's; stderr: %s", out.Stderr)
		assert.True(t, strings.HasPrefix(tmp, filepath.Join(hostTmp, "sandboxexec-")), "TMPDIR %q", tmp)
		lxRequireEmptyOrAbsent(t, tmp)
	}
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing left in the root")

	// Below a root, with FullDiskWriteAccess, or without roots (nothing is
	// written), TMPDIR stays.
	for _, tc := range []struct {
		roots  []string
		policy SandboxPolicy
	}{
		{[]string{root, "/tmp"}, SandboxPolicy{}},
		{[]string{root}, SandboxPolicy{FullDiskWriteAccess: true}},
		{nil, SandboxPolicy{}},
	} {
		out, err := lxRun(t, lxSh(`printf '%s' "$TMPDIR"`), tc.roots, tc.policy, WithEnv(env))
		lxRequireOK(t, out, err)
		assert.Equal(t, "/tmp", out.Stdout, "%v %+v", tc.roots, tc.policy)
	}

	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Log("no go command here: its go.mod check is not tried")
		return
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644))
	out, err := lxRunParams(t, ExecParams{Command: []string{goBin, "env", "GOMOD"}, Workdir: root}, []string{root}, SandboxPolicy{},
		WithEnv(append(env, "GOTOOLCHAIN=local", "HOME="+root, "GOFLAGS=")))
	lxRequireOK(t, out, err)
	assert.Equal(t, filepath.Join(root, "go.mod")+"\n", out.Stdout, "stderr: %s", out.Stderr)
}

func TestLinuxWorkdirAndLookup(t *testing.T) {
	requireSandbox(t)
	root := lxRealDir(t)
	roots := []string{root}

	out, err := lxRunParams(t, ExecParams{Command: []string{"pwd"}, Workdir: root}, roots, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, root+"\n", out.Stdout)

	out, err = lxRunParams(t, ExecParams{Command: []string{"pwd"}, Workdir: "/etc"}, roots, SandboxPolicy{})
	lxRequireOK(t, out, err)
	assert.Equal(t, "/etc\n", out.Stdout, "a read-only workdir is fine")

	var denied *SandboxDeniedError
	_, err = lxRunParams(t, ExecParams{Command: []string{"pwd"}, Workdir: filepath.Join(root, "missing")}, roots, SandboxPolicy{})
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.False(t, errors.As(err, &denied))

	_, err = lxRun(t, []string{"sandboxexec-no-such-program-x"}, roots, SandboxPolicy{})
	require.Error(t, err)
	assert.ErrorIs(t, err, exec.ErrNotFound)
	assert.False(t, errors.As(err, &denied))
}

// Rulesets are cached per policy; a root that is replaced (removed and made
// again) or moved away between calls must get the rules its path now names:
// writable again in the first case, not writable at its old place in the
// second.
func TestLinuxRootReplacedOrMovedBetweenCalls(t *testing.T) {
	requireSandbox(t)
	base := lxRealDir(t)
	root := filepath.Join(base, "root")
	require.NoError(t, os.Mkdir(root, 0o755))
	write := func(dir string) (ExecToolCallOutput, error) {
		return lxRun(t, lxSh(`echo hi > "$1/f"`, dir), []string{root}, SandboxPolicy{})
	}
	out, err := write(root)
	lxRequireOK(t, out, err)

	require.NoError(t, os.RemoveAll(root))
	require.NoError(t, os.Mkdir(root, 0o755))
	out, err = write(root)
	lxRequireOK(t, out, err)

	// Move the root away and put another directory in its place: the
	// moved one is no longer a writable root.
	moved := filepath.Join(base, "moved")
	require.NoError(t, os.Rename(root, moved))
	require.NoError(t, os.Mkdir(root, 0o755))
	out, err = write(root)
	lxRequireOK(t, out, err)
	out, err = lxRun(t, lxSh(`echo hi > "$1/g"`, moved), []string{root}, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	lxRequireAbsent(t, filepath.Join(moved, "g"))
}

// A command that may write in a root must not be able to widen the next
// call's roots: with roots /p and /p/cache (not made yet), a command that
// makes /p/cache a symlink to a directory outside gets, in the next call, an
// error, not that directory.
func TestLinuxNestedRootSymlinkedOut(t *testing.T) {
	requireSandbox(t)
	base := lxRealDir(t)
	project := filepath.Join(base, "project")
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.Mkdir(project, 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	roots := []string{project, filepath.Join(project, "cache")}
	pwned := filepath.Join(outside, "pwned")

	out, err := lxRun(t, lxSh(`echo x > "$1"`, pwned), roots, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	out, err = lxRun(t, lxSh(`ln -s "$1" "$2/cache"`, outside, project), roots, SandboxPolicy{})
	lxRequireOK(t, out, err)

	out, err = lxRun(t, lxSh(`echo x > "$1"`, pwned), roots, SandboxPolicy{})
	require.ErrorContains(t, err, "goes through the symlink "+filepath.Join(project, "cache"))
	assert.False(t, errors.Is(err, ErrSandboxUnavailable), "the roots are the caller's: %v", err)
	assert.Equal(t, ExecToolCallOutput{}, out, "nothing ran")
	lxRequireAbsent(t, pwned)
}

// Where the host's temporary directory is missing, a call that needs a
// TMPDIR of its own says which directory it could not make it in.
func TestLinuxHostTMPDIRMissing(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	missing := filepath.Join(root, "missing")
	t.Setenv("TMPDIR", missing)
	_, err := lxRun(t, []string{"true"}, []string{t.TempDir()}, SandboxPolicy{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "host's temporary directory "+missing)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.NotErrorIs(t, err, ErrSandboxUnavailable)
}
