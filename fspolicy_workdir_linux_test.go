//go:build linux && cgo

package sandboxexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fsWorkdirEnv = "SANDBOXEXEC_TEST_FS_WORKDIR"

// The command starts where the host is (Workdir "") or below it (a relative
// Workdir) as the call's mounts show that place: a denied path reads as
// empty there too, .git is read-only, and the rest of a writable root is
// writable. Found in review: the child kept the host's working directory
// from the copy of the mounts, under the covers, and read the secret, wrote
// .git/hooks, and got EROFS for a new file in the root.
func TestFilesystemPolicyHostWorkdir(t *testing.T) {
	if os.Getenv(fsWorkdirEnv) == "" {
		fsRequireMounts(t)
		// os.Chdir is the whole process's: this test changes it alone, in
		// a test binary of its own.
		lxRerunUnder(t, fsWorkdirEnv, "env")
		return
	}
	fsRequireMounts(t)
	root, _ := fsGitRepo(t)
	dotenv := filepath.Join(root, ".env")
	require.NoError(t, os.WriteFile(dotenv, []byte("SECRET-DOTENV"), 0o644))
	secrets := filepath.Join(root, "secrets")
	require.NoError(t, os.Mkdir(secrets, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "key"), []byte("SECRET-KEY"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "run.sh"), []byte("#!/bin/sh\necho ran\n"), 0o755))
	policy := SandboxPolicy{DenyRead: []string{dotenv, secrets}}
	run := func(t *testing.T, cwd, workdir string, policy SandboxPolicy, body string, args ...string) map[string]string {
		t.Helper()
		require.NoError(t, os.Chdir(cwd))
		out, err := lxRunParams(t, ExecParams{Command: lxPy(t, body, args...), Workdir: workdir}, []string{root}, policy)
		lxDeniedOrNil(t, out, err)
		require.Empty(t, out.Stderr)
		assert.NotContains(t, out.Stdout, "SECRET", "cwd %s, Workdir %q", cwd, workdir)
		return lxResults(out.Stdout)
	}
	readAll := `
def read(p):
    data = open(p).read()
    print(data)
    check(-1 if data else 0)
`
	for _, workdir := range []string{"", "."} {
		res := run(t, root, workdir, policy, readAll+`
attempt("read", lambda: read(".env"))
attempt("proc_cwd", lambda: read("/proc/self/cwd/.env"))
attempt("list", lambda: print(os.listdir("secrets")))
attempt("write", lambda: create("new-file" + sys.argv[1]))
`, workdir)
		assert.Equal(t, "OK", res["read"], "Workdir %q: the denied file reads as empty", workdir)
		assert.Equal(t, "OK", res["proc_cwd"], "Workdir %q", workdir)
		assert.Equal(t, "OK", res["list"], "Workdir %q", workdir)
		assert.Equal(t, "OK", res["write"], "Workdir %q: a new file in the writable root", workdir)
		assert.FileExists(t, filepath.Join(root, "new-file"+workdir))
	}

	// A relative Workdir that is denied, and a host inside the denied
	// directory.
	res := run(t, root, "secrets", policy, readAll+`
attempt("read", lambda: read("key"))
attempt("list", lambda: check(-1 if os.listdir(".") else 0))
`)
	assert.Equal(t, "ENOENT", res["read"])
	assert.Equal(t, "OK", res["list"], "the denied directory lists as empty")
	for _, workdir := range []string{"", "."} {
		res := run(t, secrets, workdir, policy, readAll+`
attempt("read", lambda: read("key"))
attempt("proc_cwd", lambda: read("/proc/self/cwd/key"))
`)
		assert.Equal(t, "ENOENT", res["read"], "Workdir %q", workdir)
		assert.Equal(t, "ENOENT", res["proc_cwd"], "Workdir %q", workdir)
	}

	// A host in .git, or a relative Workdir naming it: read-only, under
	// FullDiskWriteAccess too.
	for _, tc := range []struct{ cwd, workdir string }{
		{filepath.Join(root, ".git"), ""},
		{root, ".git"},
	} {
		res := run(t, tc.cwd, tc.workdir, SandboxPolicy{FullDiskWriteAccess: true}, `
attempt("hook", lambda: create("hooks/pre-commit"))
`)
		assert.Equal(t, "EROFS", res["hook"], "cwd %s, Workdir %q", tc.cwd, tc.workdir)
		lxRequireAbsent(t, filepath.Join(root, ".git", "hooks", "pre-commit"))
	}

	// A relative program is found from where the command starts.
	require.NoError(t, os.Chdir(root))
	out, err := lxRunParams(t, ExecParams{Command: []string{"./run.sh"}}, []string{root}, policy)
	lxRequireOK(t, out, err)
	assert.Equal(t, "ran\n", out.Stdout)
	require.NoError(t, os.Chdir(filepath.Dir(root)))
	out, err = lxRunParams(t, ExecParams{Command: []string{"./run.sh"}, Workdir: filepath.Base(root)}, []string{root}, policy)
	lxRequireOK(t, out, err)
	assert.Equal(t, "ran\n", out.Stdout)

	// A working directory that no longer exists cannot be named: the call
	// fails rather than start in it.
	gone := filepath.Join(lxRealDir(t), "gone")
	require.NoError(t, os.Mkdir(gone, 0o755))
	require.NoError(t, os.Chdir(gone))
	require.NoError(t, os.Remove(gone))
	_, err = lxRun(t, []string{"true"}, []string{root}, policy)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Workdir")
	require.NoError(t, os.Chdir("/"))
}

// A Workdir reached through a magic link (/proc/PID/root, /proc/PID/cwd) is
// refused: it leads to where another process stands, the host's mounts,
// where the call's covers and read-only binds are not. Found in review:
// with Workdir /proc/HOSTPID/root/ROOT/.git the command wrote .git/config,
// through the same path to a denied directory it read the secret, and to a
// directory outside the roots it chmodded a file there, which the read-only
// view refuses. Checked for a fresh child and for a standby.
func TestFilesystemPolicyWorkdirThroughMagicLink(t *testing.T) {
	fsRequireMounts(t)
	root, _ := fsGitRepo(t)
	config := filepath.Join(root, ".git", "config")
	configBefore, err := os.ReadFile(config)
	require.NoError(t, err)
	secrets := lxRealDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "key"), []byte("SECRET-KEY"), 0o600))
	outside := lxRealDir(t)
	file := filepath.Join(outside, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	host := fmt.Sprintf("/proc/%d", os.Getpid())
	require.NoError(t, os.Symlink(host+"/root"+outside, filepath.Join(root, "link")))
	policy := SandboxPolicy{DenyRead: []string{secrets}}
	roots := []string{root}

	for _, standby := range []bool{false, true} {
		if standby {
			sbReady(t, root)
		}
		for _, c := range []struct{ workdir, script string }{
			{host + "/root" + root + "/.git", "echo evil > config"},
			{host + "/root" + secrets, "cat key"},
			{host + "/root" + outside, "chmod 777 file"},
			{filepath.Join(root, "link"), "chmod 777 file"},
			{"/proc/self/root" + outside, "chmod 777 file"},
		} {
			out, err := lxRunParams(t, ExecParams{Command: lxSh(c.script), Workdir: c.workdir}, roots, policy)
			require.Error(t, err, "Workdir %s (standby: %v): %q", c.workdir, standby, out.Stdout)
			if os.Geteuid() == 0 {
				assert.ErrorIs(t, err, syscall.ELOOP)
				assert.Contains(t, err.Error(), "/proc/PID/root")
			} else if !errors.Is(err, syscall.EACCES) {
				// Without CAP_SYS_PTRACE over the host, the child in
				// its user namespace is refused the link before it is
				// one.
				assert.ErrorIs(t, err, syscall.ELOOP)
			}
			assert.NotContains(t, out.Stdout, "SECRET")
		}
	}
	configAfter, err := os.ReadFile(config)
	require.NoError(t, err)
	assert.Equal(t, string(configBefore), string(configAfter), ".git/config")
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode(), "a file outside the roots")

	// An ordinary Workdir, a symlink inside the root to a directory of its
	// own, still works.
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.Symlink("sub", filepath.Join(root, "to-sub")))
	out, err := lxRunParams(t, ExecParams{Command: []string{"pwd"}, Workdir: filepath.Join(root, "to-sub")}, roots, policy)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "sub")+"\n", out.Stdout)
}

// A Workdir with ".." in it starts the command there while the host renames
// files: the host opens it from a kept mount namespace's root with
// RESOLVE_IN_ROOT, which fails a ".." with EAGAIN when any rename or mount
// on the system raced with the walk (found in review: one call in 15 to 20
// failed, with "chdir ...: resource temporarily unavailable", beside a loop
// of renames; a build or an editor on the machine makes them). A call that
// spawns afresh looks the directory up itself, without RESOLVE_IN_ROOT.
func TestFilesystemPolicyWorkdirDotDotWhileRenaming(t *testing.T) {
	requireSandbox(t)
	root := lxRealDir(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a/b/c"), 0o755))
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "x"), nil, 0o644))
	defer repeatUntilStopped(func() {
		_ = os.Rename(filepath.Join(other, "x"), filepath.Join(other, "y"))
		_ = os.Rename(filepath.Join(other, "y"), filepath.Join(other, "x"))
	})()
	wd := root + "/a/b/c/../../../a/b/c/../../../a/b/c/../.."
	failed := 0
	for i := range 200 {
		out, err := lxRunParams(t, ExecParams{Command: lxSh(`pwd`), Workdir: wd}, []string{root}, SandboxPolicy{})
		if err != nil || out.Stdout != filepath.Join(root, "a")+"\n" {
			if failed++; failed <= 3 {
				t.Errorf("call %d: %v, %q", i, err, out.Stdout)
			}
		}
	}
	assert.Zero(t, failed, "of 200 calls")
}
