//go:build linux && cgo

package sandboxexec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fsRequireMounts skips (or, on CI, fails) a test that needs the per-call
// mount namespace.
func fsRequireMounts(t *testing.T) {
	t.Helper()
	lxRequireFeature(t, requireSandbox(t).MountNamespace, "mount namespaces")
}

// fsGitRepo makes a git repository in a new root, with one commit when git
// is installed, or a bare .git directory with a hooks directory otherwise.
func fsGitRepo(t *testing.T) (root string, haveGit bool) {
	t.Helper()
	root = lxRealDir(t)
	if _, err := exec.LookPath("git"); err != nil {
		require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644))
		return root, false
	}
	fsGit(t, root, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(root, "README"), []byte("hello\n"), 0o644))
	fsGit(t, root, "add", "README")
	fsGit(t, root, "commit", "-q", "-m", "first")
	return root, true
}

func fsGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), fsGitEnv...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// fsGitEnv lets git commit without a configured identity, in the host and
// in the sandbox alike.
var fsGitEnv = []string{
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
	"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
	"GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent",
}

func fsMountinfo(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	require.NoError(t, err)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	return lines
}

// The default policy keeps .git read-only inside a writable root: no hook,
// no configuration, no removal or renaming, no metadata change; git reads it
// (status, log), and everything else in the root stays writable.
func TestFilesystemPolicyGitReadOnly(t *testing.T) {
	fsRequireMounts(t)
	root, haveGit := fsGitRepo(t)
	git := filepath.Join(root, ".git")
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
root, git = sys.argv[1], sys.argv[2]
attempt("hook", lambda: create(os.path.join(git, "hooks", "pre-commit")))
attempt("config", lambda: open(os.path.join(git, "config"), "a").write("[core]\n\thooksPath = /tmp\n"))
attempt("truncate", lambda: os.truncate(os.path.join(git, "config"), 0))
attempt("chmod", lambda: os.chmod(os.path.join(git, "config"), 0o777))
attempt("utime", lambda: os.utime(os.path.join(git, "config"), (0, 0)))
attempt("mkdir", lambda: os.mkdir(os.path.join(git, "x")))
attempt("unlink", lambda: os.unlink(os.path.join(git, "config")))
attempt("rmdir", lambda: os.rmdir(git))
attempt("rename", lambda: os.rename(git, os.path.join(root, "moved")))
attempt("link", lambda: os.link(os.path.join(git, "config"), os.path.join(root, "config-link")))
attempt("file", lambda: create(os.path.join(root, "new-file")))
attempt("dir", lambda: os.makedirs(os.path.join(root, "new", "dir")))
attempt("read", lambda: open(os.path.join(git, "config")).read())
`, root, git)
	assert.Equal(t, "EROFS", res["hook"], "%s", out.Stdout)
	assert.Equal(t, "EROFS", res["config"])
	assert.Equal(t, "EROFS", res["truncate"])
	assert.Equal(t, "EROFS", res["chmod"])
	assert.Equal(t, "EROFS", res["utime"])
	assert.Equal(t, "EROFS", res["mkdir"])
	assert.Equal(t, "EROFS", res["unlink"])
	assert.Equal(t, "EBUSY", res["rmdir"], "a mount point cannot be removed")
	assert.Equal(t, "EBUSY", res["rename"], "a mount point cannot be renamed")
	assert.Equal(t, "EXDEV", res["link"], "no hard link out of the read-only mount")
	assert.Equal(t, "OK", res["file"])
	assert.Equal(t, "OK", res["dir"])
	assert.Equal(t, "OK", res["read"])
	lxRequireAbsent(t, filepath.Join(git, "hooks", "pre-commit"))

	// rm -rf empties nothing either.
	out, err := lxRun(t, lxSh(`rm -rf "$1"`, git), []string{root}, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	assert.FileExists(t, filepath.Join(git, "config"))

	if !haveGit {
		t.Log("git is not installed: git status and commit not tried")
		return
	}
	for _, args := range [][]string{{"status", "--short"}, {"log", "--oneline"}, {"diff"}} {
		out, err := lxRun(t, append([]string{"git", "-C", root}, args...), []string{root}, SandboxPolicy{}, WithEnv(append(os.Environ(), fsGitEnv...)))
		lxRequireOK(t, out, err)
	}
	// The host still writes .git during and after the calls.
	done := make(chan error, 1)
	go func() {
		out, err := lxRun(t, lxSh(`while [ ! -e "$1/go" ]; do sleep 0.01; done`, root), []string{root}, SandboxPolicy{})
		if err == nil && out.ExitCode != 0 {
			err = fmt.Errorf("exit %d: %s", out.ExitCode, out.Stderr)
		}
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, os.WriteFile(filepath.Join(git, "hooks", "during-call"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go"), nil, 0o644))
	require.NoError(t, <-done)
	require.NoError(t, os.WriteFile(filepath.Join(git, "hooks", "host-hook"), nil, 0o644))
}

// An empty, non-nil ReadOnlySubpaths protects nothing: git commit works.
func TestFilesystemPolicyOptOut(t *testing.T) {
	requireSandbox(t)
	root, haveGit := fsGitRepo(t)
	if !haveGit {
		t.Skip("git is not installed")
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "more"), []byte("x\n"), 0o644))
	out, err := lxRun(t, lxSh(`git -C "$1" add more && git -C "$1" commit -q -m second && git -C "$1" log --oneline`, root),
		[]string{root}, SandboxPolicy{ReadOnlySubpaths: []string{}}, WithEnv(append(os.Environ(), fsGitEnv...)))
	lxRequireOK(t, out, err)
	assert.Contains(t, out.Stdout, "second")
}

// A worktree's .git is a file naming its git directory, which lives in the
// main repository's: both are read-only, and so is the common directory
// that holds the hooks.
func TestFilesystemPolicyWorktree(t *testing.T) {
	fsRequireMounts(t)
	main, haveGit := fsGitRepo(t)
	if !haveGit {
		t.Skip("git is not installed")
	}
	wt := filepath.Join(lxRealDir(t), "wt")
	fsGit(t, main, "worktree", "add", "-q", wt)
	gitdir := strings.TrimSpace(strings.TrimPrefix(fsGit(t, wt, "rev-parse", "--git-dir"), "gitdir:"))
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(wt, gitdir)
	}
	// The main repository is a writable root too, with its .git left to the
	// worktree's protection alone.
	res, out := lxPyRun(t, []string{wt, main}, SandboxPolicy{ReadOnlySubpaths: []string{".git"}}, `
wt, gitdir, main = sys.argv[1], sys.argv[2], sys.argv[3]
attempt("gitfile", lambda: open(os.path.join(wt, ".git"), "w").write("gitdir: /tmp/evil\n"))
attempt("gitfile_rm", lambda: os.unlink(os.path.join(wt, ".git")))
attempt("gitdir", lambda: create(os.path.join(gitdir, "HEAD.new")))
attempt("common_hook", lambda: create(os.path.join(main, ".git", "hooks", "post-checkout")))
attempt("file", lambda: create(os.path.join(wt, "new-file")))
`, wt, gitdir, main)
	assert.Equal(t, "EROFS", res["gitfile"], "%s", out.Stdout)
	assert.Equal(t, "EBUSY", res["gitfile_rm"])
	assert.Equal(t, "EROFS", res["gitdir"])
	assert.Equal(t, "EROFS", res["common_hook"])
	assert.Equal(t, "OK", res["file"])
	out2, err := lxRun(t, []string{"git", "-C", wt, "status", "--short"}, []string{wt}, SandboxPolicy{}, WithEnv(append(os.Environ(), fsGitEnv...)))
	lxRequireOK(t, out2, err)
}

// A worktree root alone: its git directory is outside every root.
func TestFilesystemPolicyWorktreeAlone(t *testing.T) {
	fsRequireMounts(t)
	main, haveGit := fsGitRepo(t)
	if !haveGit {
		t.Skip("git is not installed")
	}
	wt := filepath.Join(lxRealDir(t), "wt")
	fsGit(t, main, "worktree", "add", "-q", wt)
	res, out := lxPyRun(t, []string{wt}, SandboxPolicy{}, `
attempt("gitfile", lambda: open(os.path.join(sys.argv[1], ".git"), "w").write("gitdir: /tmp/evil\n"))
attempt("common_hook", lambda: create(os.path.join(sys.argv[2], ".git", "hooks", "post-checkout")))
`, wt, main)
	assert.Equal(t, "EROFS", res["gitfile"], "%s", out.Stdout)
	assert.Equal(t, "EROFS", res["common_hook"])
}

// A .git file naming the root itself, its parent or / leaves the root
// writable; the file alone is read-only.
func TestFilesystemPolicyGitdirBounded(t *testing.T) {
	fsRequireMounts(t)
	root := lxRealDir(t)
	for _, gitdir := range []string{".", "..", "/"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))
		res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
attempt("file", lambda: create(os.path.join(sys.argv[1], "f")))
attempt("gitfile", lambda: create(os.path.join(sys.argv[1], ".git")))
`, root)
		assert.Equal(t, "OK", res["file"], "gitdir: %s: %s", gitdir, out.Stdout)
		assert.Equal(t, "EROFS", res["gitfile"], "gitdir: %s", gitdir)
	}
}

// DenyRead: a denied directory reads as empty, a denied file as empty, by
// any way of reaching them, and neither takes a write; a sibling reads as
// before.
func TestFilesystemPolicyDenyRead(t *testing.T) {
	fsRequireMounts(t)
	root, outside := lxRealDir(t), lxRealDir(t)
	secrets := filepath.Join(outside, "secrets")
	require.NoError(t, os.Mkdir(secrets, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "key"), []byte("SECRET-IN-DIR"), 0o644))
	script := filepath.Join(secrets, "run.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho RAN-DENIED-SCRIPT\n"), 0o755))
	file := filepath.Join(outside, "token")
	require.NoError(t, os.WriteFile(file, []byte("SECRET-FILE"), 0o600))
	tool := filepath.Join(outside, "tool")
	require.NoError(t, os.WriteFile(tool, []byte("#!/bin/sh\necho RAN-DENIED-FILE\n"), 0o755))
	sibling := filepath.Join(outside, "sibling")
	require.NoError(t, os.WriteFile(sibling, []byte("visible"), 0o644))
	require.NoError(t, os.Symlink(secrets, filepath.Join(root, "link-dir")))
	require.NoError(t, os.Symlink(file, filepath.Join(root, "link-file")))
	// Denied through a symlink of its own: what it resolves to is denied.
	alias := filepath.Join(lxRealDir(t), "alias")
	require.NoError(t, os.Symlink(outside, alias))
	// Named with a trailing slash, a file is denied all the same; a path
	// below a file, which cannot exist, is ignored, and denies nothing.
	slashed := filepath.Join(outside, "slashed")
	require.NoError(t, os.WriteFile(slashed, []byte("SECRET-SLASHED"), 0o600))
	policy := SandboxPolicy{DenyRead: []string{filepath.Join(alias, "secrets"), file, tool, "/nonexistent/path",
		slashed + "/", sibling + "/x"}}

	for _, tc := range []struct {
		name string
		cmd  []string
	}{
		{"cat", lxSh(`cat "$1"/key "$2" "$3"; true`, secrets, file, slashed)},
		{"ls", lxSh(`ls -a "$1"`, secrets)},
		{"find", lxSh(`find "$1" "$2"`, secrets, file)},
		{"cp", lxSh(`cp -r "$1" "$3/copy" 2>/dev/null; cp "$2" "$3/copy-file"; cat "$3"/copy/* "$3/copy-file" 2>/dev/null; true`, secrets, file, root)},
		{"exec", lxSh(`"$1"; sh "$1"; true`, script)},
		{"symlink", lxSh(`cat "$1"/link-dir/key "$1"/link-file; ls "$1"/link-dir; true`, root)},
		{"proc-root", lxSh(`cat /proc/self/root"$1"/key /proc/self/root"$2"; ls /proc/self/root"$1"; cd /proc/self/cwd && cat "$2"; true`, secrets, file)},
		{"o-path", lxPy(t, `
fd = os.open(sys.argv[1], os.O_PATH)
try:
    print(open("/proc/self/fd/%d" % fd).read())
except OSError as e:
    print("err", e.errno)
fd = os.open(sys.argv[2], os.O_PATH)
print(sorted(os.listdir("/proc/self/fd/%d" % fd)))
`, file, secrets)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := lxRun(t, tc.cmd, []string{root}, policy)
			lxDeniedOrNil(t, out, err)
			for _, secret := range []string{"SECRET-IN-DIR", "SECRET-FILE", "SECRET-SLASHED", "RAN-DENIED-SCRIPT", "key", "run.sh"} {
				assert.NotContains(t, out.Stdout, secret, "stdout %q stderr %q", out.Stdout, out.Stderr)
			}
		})
	}
	res, out := lxPyRun(t, []string{root}, policy, `
secrets, file, sibling, slashed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5]
attempt("dir_listing_empty", lambda: check(-1 if os.listdir(secrets) else 0))
attempt("file_reads_empty", lambda: check(-1 if open(file).read() else 0))
attempt("slashed_reads_empty", lambda: check(-1 if open(slashed).read() else 0))
attempt("write_dir", lambda: create(os.path.join(secrets, "new")))
attempt("write_file", lambda: open(file, "w").write("x"))
attempt("sibling", lambda: check(0 if open(sibling).read() == "visible" else -1))
attempt("exec_file", lambda: os.execv(sys.argv[4], [sys.argv[4]]))
`, secrets, file, sibling, tool, slashed)
	assert.Equal(t, "OK", res["dir_listing_empty"], "%s", out.Stdout)
	assert.Equal(t, "OK", res["file_reads_empty"])
	assert.Equal(t, "OK", res["slashed_reads_empty"], "a file denied with a trailing slash")
	assert.Equal(t, "EROFS", res["write_dir"])
	assert.Equal(t, "EROFS", res["write_file"])
	assert.Equal(t, "OK", res["sibling"])
	assert.Equal(t, "EACCES", res["exec_file"], "a denied file is no program (mode 0444, noexec), for root too")

	// Under FullDiskWriteAccess and with the network too. Under the first,
	// alias, which the command may repoint, is refused
	// (TestFilesystemPolicyDenyReadFullDiskWriteSymlink): secrets is named.
	for _, p := range []SandboxPolicy{
		{FullDiskWriteAccess: true, DenyRead: append([]string{secrets}, policy.DenyRead[1:]...)},
		{NetworkAccess: true, DenyRead: policy.DenyRead},
	} {
		out, err := lxRun(t, lxSh(`cat "$1" "$2"/key; echo x > "$1"`, file, secrets), []string{root}, p)
		lxRequireDenied(t, out, err)
		assert.NotContains(t, out.Stdout, "SECRET")
		assert.Contains(t, out.Stderr, "Read-only file system")
	}
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "SECRET-FILE", string(b), "the host's file is unchanged")
}

// DenyRead entries within one another are each enforced, and the call runs
// (found in review: it failed, unable to mount below the first cover).
func TestFilesystemPolicyDenyReadOverlap(t *testing.T) {
	fsRequireMounts(t)
	root, parent := lxRealDir(t), lxRealDir(t)
	d := filepath.Join(parent, "d")
	require.NoError(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(d, "sub", "g"), []byte("SECRET-G"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(d, "f"), []byte("SECRET-F"), 0o644))
	for _, deny := range [][]string{
		{d, filepath.Join(d, "sub")},
		{filepath.Join(d, "sub"), d},
		{d, filepath.Join(d, "f")},
		{parent, d},
		{parent, filepath.Join(d, "f"), d, filepath.Join(d, "sub")},
	} {
		out, err := lxRun(t, lxSh(`cat "$1"/d/f "$1"/d/sub/g; ls -R "$1"`, parent), []string{root}, SandboxPolicy{DenyRead: deny})
		lxDeniedOrNil(t, out, err)
		assert.NotContains(t, out.Stdout, "SECRET", "%v", deny)
		assert.Contains(t, out.Stderr, "No such file", "%v", deny)
		for _, name := range []string{"sub", "g"} {
			assert.NotContains(t, strings.Split(out.Stdout, "\n"), name, "%v lists %s", deny, name)
		}
	}
}

// Paths are bytes: a newline, a backslash or a byte that is no UTF-8 in a
// root's name or a DenyRead path changes nothing.
func TestFilesystemPolicyOddNames(t *testing.T) {
	fsRequireMounts(t)
	const odd = "odd\n\\\xff name"
	root, outside := filepath.Join(lxRealDir(t), "root "+odd), lxRealDir(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
	file, dir := filepath.Join(outside, "file "+odd), filepath.Join(outside, "dir "+odd)
	require.NoError(t, os.WriteFile(file, []byte("SECRET"), 0o644))
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "key"), []byte("SECRET"), 0o644))
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{DenyRead: []string{file, dir}}, `
root, file, dir = sys.argv[1:4]
attempt("write", lambda: create(os.path.join(root, "f")))
attempt("hook", lambda: create(os.path.join(root, ".git", "hooks", "x")))
attempt("file_empty", lambda: check(-1 if open(file).read() else 0))
attempt("dir_empty", lambda: check(-1 if os.listdir(dir) else 0))
attempt("outside", lambda: create(os.path.join(os.path.dirname(file), "x")))
`, root, file, dir)
	assert.Equal(t, "OK", res["write"], "%s", out.Stdout)
	assert.Equal(t, "EROFS", res["hook"])
	assert.Equal(t, "OK", res["file_empty"])
	assert.Equal(t, "OK", res["dir_empty"])
	assert.Equal(t, lxWriteOutside(), res["outside"])
	assert.FileExists(t, filepath.Join(root, "f"))
}

// ReadOnlySubpaths apply under FullDiskWriteAccess too, where everything
// else can be written.
func TestFilesystemPolicyFullDiskWrite(t *testing.T) {
	fsRequireMounts(t)
	root, _ := fsGitRepo(t)
	outside := lxRealDir(t)
	res, out := lxPyRun(t, nil, SandboxPolicy{FullDiskWriteAccess: true, ReadOnlySubpaths: []string{".git"}}, `
attempt("hook", lambda: create(os.path.join(sys.argv[1], ".git", "hooks", "x")))
attempt("outside", lambda: create(os.path.join(sys.argv[2], "x")))
`, root, outside)
	// Without roots nothing is looked at: roots are where subpaths are.
	assert.Equal(t, "OK", res["hook"], "%s", out.Stdout)
	res, out = lxPyRun(t, []string{root}, SandboxPolicy{FullDiskWriteAccess: true}, `
attempt("hook", lambda: create(os.path.join(sys.argv[1], ".git", "hooks", "y")))
attempt("outside", lambda: create(os.path.join(sys.argv[2], "y")))
attempt("chmod_outside", lambda: os.chmod(os.path.join(sys.argv[2], "y"), 0o600))
`, root, outside)
	assert.Equal(t, "EROFS", res["hook"], "%s", out.Stdout)
	assert.Equal(t, "OK", res["outside"])
	assert.Equal(t, "OK", res["chmod_outside"], "FullDiskWriteAccess keeps metadata writable")
}

// The command cannot undo its mounts: each way to unmount, remount, move,
// or get another mount namespace fails, refused by the layer named.
func TestFilesystemPolicyCannotUndo(t *testing.T) {
	fsRequireMounts(t)
	root, _ := fsGitRepo(t)
	git := filepath.Join(root, ".git")
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
import platform
git = sys.argv[1]
b = lambda s: s.encode()
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
attempt("umount2", lambda: check(libc.umount2(b(git), 2)))
attempt("remount_rw", lambda: check(libc.mount(None, b(git), None, MS_REMOUNT | MS_BIND, None)))
attempt("bind", lambda: check(libc.mount(b(git), b(git + "/hooks"), None, MS_BIND, None)))
attempt("mount_tmpfs", lambda: check(libc.mount(b"tmpfs", b(git), b"tmpfs", 0, None)))
attempt("make_private", lambda: check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None)))
attempt("unshare_mnt", lambda: check(libc.unshare(0x00020000)))
attempt("unshare_user", lambda: check(libc.unshare(0x10000000)))
fd = os.open("/proc/self/ns/mnt", os.O_RDONLY)
attempt("setns", lambda: check(libc.setns(fd, 0x00020000)))
attempt("open_tree", lambda: check(libc.syscall(428, -100, b(git), 1)))
attempt("move_mount", lambda: check(libc.syscall(429, -100, b(git), -100, b"/tmp", 0)))
attempt("fsopen", lambda: check(libc.syscall(430, b"tmpfs", 0)))
attempt("mount_setattr", lambda: check(libc.syscall(442, -100, b(git), 0, None, 0)))
# On descriptors that are no file system context nor mount: EBADF, were
# the calls let through.
attempt("fsconfig", lambda: check(libc.syscall(431, -1, 6, None, None, 0)))
attempt("fsmount", lambda: check(libc.syscall(432, -1, 0, 0)))
attempt("fspick", lambda: check(libc.syscall(433, -100, b(git), 0)))
nr = {"x86_64": 155, "aarch64": 41}.get(platform.machine())
if nr:
    attempt("pivot_root", lambda: check(libc.syscall(nr, b"/", b"/")))
def clone_user():
    pid = check(libc.syscall(clone_nr, 0x10000000 | 17, 0, 0, 0, 0))  # CLONE_NEWUSER | SIGCHLD
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
clone_nr = {"x86_64": 56, "aarch64": 220}.get(platform.machine())
if clone_nr:
    attempt("clone_user", clone_user)
`, git)
	for _, call := range []string{
		// No CAP_SYS_ADMIN after execve (capabilities).
		"umount2", "remount_rw", "bind", "mount_tmpfs", "make_private", "unshare_mnt", "setns", "pivot_root",
		// The seccomp filter.
		"unshare_user", "clone_user", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	} {
		if v, ok := res[call]; ok || (call != "pivot_root" && call != "clone_user") {
			assert.Equal(t, "EPERM", v, "%s: %s", call, out.Stdout)
		}
	}
}

// The host sees nothing of the calls' mounts, and concurrent calls with
// different policies each get their own.
func TestFilesystemPolicyHostUnchanged(t *testing.T) {
	fsRequireMounts(t)
	before := fsMountinfo(t)
	root, _ := fsGitRepo(t)
	secret := filepath.Join(lxRealDir(t), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("SECRET"), 0o644))
	for i := 0; i < 100; i++ {
		out, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{DenyRead: []string{secret}})
		lxRequireOK(t, out, err)
	}
	assert.Equal(t, before, fsMountinfo(t), "the host's mounts changed")

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			deny := i%2 == 0
			p := SandboxPolicy{ReadOnlySubpaths: []string{}}
			if deny {
				p = SandboxPolicy{DenyRead: []string{secret}}
			}
			out, err := lxRun(t, lxSh(`cat "$1"; touch "$2/.git/hooks/c$3" 2>/dev/null && echo WROTE; true`, secret, root, fmt.Sprint(i)), []string{root}, p)
			switch {
			case err != nil:
				errs <- err
			case deny && (strings.Contains(out.Stdout, "SECRET") || strings.Contains(out.Stdout, "WROTE")):
				errs <- fmt.Errorf("call %d (DenyRead, default subpaths) saw %q", i, out.Stdout)
			case !deny && (!strings.Contains(out.Stdout, "SECRET") || !strings.Contains(out.Stdout, "WROTE")):
				errs <- fmt.Errorf("call %d (no protection) saw %q", i, out.Stdout)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Equal(t, before, fsMountinfo(t), "the host's mounts changed")
	// Nothing was created for the policy on the host.
	entries, err := os.ReadDir(filepath.Join(root, ".git", "hooks"))
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, isEven(e.Name()), "a protected call wrote %s", e.Name())
	}
}

// isEven says whether the hook name c<N> came from an even (protected) call.
func isEven(name string) bool {
	var n int
	_, err := fmt.Sscanf(name, "c%d", &n)
	return err == nil && name == fmt.Sprintf("c%d", n) && n%2 == 0
}

// A host that cannot make a mount namespace fails closed when the policy
// needs one, and says how to opt out; each opt-out runs.
func TestFilesystemPolicyFailsClosed(t *testing.T) {
	requireSandbox(t)
	root, _ := fsGitRepo(t)
	sbOff(t) // a standby in the making reads it
	old := forcedMountMode
	forcedMountMode = mountsNone
	t.Cleanup(func() { forcedMountMode = old })
	s := ProbeSandbox()
	assert.False(t, s.MountNamespace)
	assert.False(t, s.NetworkNamespace)
	if os.Geteuid() == 0 {
		assert.False(t, s.Available, "a root host needs the mount namespace")
		assert.Contains(t, s.Detail, "mount namespace")
	}

	_, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{})
	require.ErrorIs(t, err, ErrSandboxUnavailable)
	assert.Contains(t, err.Error(), "ReadOnlySubpaths")
	assert.Contains(t, err.Error(), "BestEffort")
	_, err = lxRun(t, []string{"true"}, []string{lxRealDir(t)}, SandboxPolicy{DenyRead: []string{root}})
	require.ErrorIs(t, err, ErrSandboxUnavailable)

	if os.Geteuid() == 0 {
		// Root also needs it for what lies outside the roots: the advice
		// is what runs (found in review: it advised an empty
		// ReadOnlySubpaths, which only gave the next error).
		for _, p := range []SandboxPolicy{{}, {DenyRead: []string{root}}} {
			_, err = lxRun(t, []string{"true"}, []string{lxRealDir(t), root}, p)
			require.ErrorIs(t, err, ErrSandboxUnavailable)
			assert.Contains(t, err.Error(), "ask for BestEffort, or for FullDiskWriteAccess with an empty ReadOnlySubpaths and no DenyRead")
		}
		_, err = lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{FullDiskWriteAccess: true})
		require.ErrorIs(t, err, ErrSandboxUnavailable)
		assert.Contains(t, err.Error(), "set ReadOnlySubpaths to an empty slice and leave DenyRead empty")
		_, err = lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{ReadOnlySubpaths: []string{}})
		require.ErrorIs(t, err, ErrSandboxUnavailable)
		assert.Contains(t, err.Error(), "metadata")
		out, err := lxRun(t, []string{"true"}, []string{root}, SandboxPolicy{ReadOnlySubpaths: []string{}, FullDiskWriteAccess: true})
		lxRequireOK(t, out, err)
	}
	out, err := lxRun(t, []string{"touch", filepath.Join(root, ".git", "x")}, []string{root}, SandboxPolicy{BestEffort: true})
	lxRequireOK(t, out, err)
}

// Names and paths that no runner could apply are errors that name them,
// and nothing runs.
func TestFilesystemPolicyBadInput(t *testing.T) {
	root := lxRealDir(t)
	marker := filepath.Join(root, "ran")
	for _, tc := range []struct {
		policy SandboxPolicy
		want   string
	}{
		{SandboxPolicy{ReadOnlySubpaths: []string{""}}, "empty name"},
		{SandboxPolicy{ReadOnlySubpaths: []string{"a/b"}}, `"a/b"`},
		{SandboxPolicy{ReadOnlySubpaths: []string{"/etc"}}, `"/etc"`},
		{SandboxPolicy{ReadOnlySubpaths: []string{".."}}, `".."`},
		{SandboxPolicy{DenyRead: []string{"relative/path"}}, `"relative/path"`},
		{SandboxPolicy{DenyRead: []string{""}}, "empty path"},
		{SandboxPolicy{DenyRead: []string{"/"}}, "root directory"},
	} {
		_, err := lxRun(t, []string{"touch", marker}, []string{root}, tc.policy)
		require.Error(t, err, "%+v", tc.policy)
		assert.Contains(t, err.Error(), tc.want)
		lxRequireAbsent(t, marker)
	}
	// A protected name that is a symlink could be replaced: an error.
	require.NoError(t, os.Symlink("/etc", filepath.Join(root, ".git")))
	_, err := lxRun(t, []string{"touch", marker}, []string{root}, SandboxPolicy{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "symlink")
	lxRequireAbsent(t, marker)
}

// Issue 26: nothing outside the writable roots changes, metadata included,
// while it all still works inside them.
func TestFilesystemPolicyMetadataOutsideRoots(t *testing.T) {
	fsRequireMounts(t)
	root, outsideDir := lxRealDir(t), lxRealDir(t)
	outside := filepath.Join(outsideDir, "f")
	inside := filepath.Join(root, "f")
	for _, p := range []string{outside, inside} {
		require.NoError(t, os.WriteFile(p, []byte("data"), 0o644))
	}
	before, err := os.Stat(outside)
	require.NoError(t, err)
	body := `
p = sys.argv[1]
attempt("chmod", lambda: os.chmod(p, 0o777))
attempt("chown", lambda: os.chown(p, 65534, 65534))
attempt("utime", lambda: os.utime(p, (946684800, 946684800)))
attempt("setxattr", lambda: os.setxattr(p, "user.sandboxexec", b"x"))
attempt("removexattr", lambda: os.removexattr(p, "user.sandboxexec"))
attempt("truncate", lambda: os.truncate(p, 0))
attempt("rename", lambda: os.rename(p, p + ".moved"))
`
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, body, outside)
	for _, op := range []string{"chmod", "chown", "utime", "setxattr", "removexattr", "truncate", "rename"} {
		if os.Geteuid() != 0 && op == "chown" {
			assert.Contains(t, []string{"EROFS", "EPERM"}, res[op], "%s: %s", op, out.Stdout)
			continue
		}
		assert.Equal(t, "EROFS", res[op], "%s: %s", op, out.Stdout)
	}
	after, err := os.Stat(outside)
	require.NoError(t, err)
	assert.Equal(t, before.Mode(), after.Mode())
	assert.Equal(t, before.ModTime(), after.ModTime())
	assert.Equal(t, before.Size(), after.Size())
	assert.Equal(t, before.Sys().(*syscall.Stat_t).Uid, after.Sys().(*syscall.Stat_t).Uid)

	// Inside the root all of it works, chown to another user included
	// where the command may (roChownsOthers: root with CAP_SYS_ADMIN).
	require.NoError(t, unix.Setxattr(inside, "user.sandboxexec", []byte("x"), 0))
	insideBody := body
	if !roChownsOthers() {
		insideBody = strings.Replace(body, "65534, 65534", "-1, -1", 1)
	}
	res, out = lxPyRun(t, []string{root}, SandboxPolicy{}, insideBody, inside)
	for _, op := range []string{"chmod", "chown", "utime", "setxattr", "removexattr", "truncate", "rename"} {
		assert.Equal(t, "OK", res[op], "%s: %s", op, out.Stdout)
	}
	if roChownsOthers() {
		moved, err := os.Stat(inside + ".moved")
		require.NoError(t, err)
		assert.Equal(t, uint32(65534), moved.Sys().(*syscall.Stat_t).Uid, "chown inside the root")
		assert.Equal(t, uint32(65534), moved.Sys().(*syscall.Stat_t).Gid)
	}

	// The devices, a pseudo-terminal, and the private TMPDIR are as before.
	out, err = lxRun(t, lxPy(t, `
import pty
attempt("null", lambda: open("/dev/null", "w").write("x"))
attempt("zero", lambda: open("/dev/zero", "rb").read(1))
attempt("pty", lambda: [os.write(pty.openpty()[1], b"x")])
attempt("tmpdir", lambda: create(os.path.join(os.environ["TMPDIR"], "t")))
attempt("tmpdir_chmod", lambda: os.chmod(os.path.join(os.environ["TMPDIR"], "t"), 0o600))
`), []string{root}, SandboxPolicy{})
	lxRequireOK(t, out, err)
	res = lxResults(out.Stdout)
	for _, op := range []string{"null", "zero", "pty", "tmpdir", "tmpdir_chmod"} {
		assert.Equal(t, "OK", res[op], "%s: %s", op, out.Stdout)
	}

	// FullDiskWriteAccess: everything writable, metadata included, as before.
	res, out = lxPyRun(t, []string{root}, SandboxPolicy{FullDiskWriteAccess: true}, `
attempt("chmod", lambda: os.chmod(sys.argv[1], 0o600))
attempt("utime", lambda: os.utime(sys.argv[1], (946684800, 946684800)))
`, outside)
	assert.Equal(t, "OK", res["chmod"], "%s", out.Stdout)
	assert.Equal(t, "OK", res["utime"])
}

// A root inside another root, and a root on a read-only mount, keep their
// own flags: the clone put back on each is the mount as it was.
func TestFilesystemPolicyNestedRoots(t *testing.T) {
	fsRequireMounts(t)
	outer := lxRealDir(t)
	inner := filepath.Join(outer, "inner")
	require.NoError(t, os.Mkdir(inner, 0o755))
	res, out := lxPyRun(t, []string{inner, outer}, SandboxPolicy{}, `
attempt("outer", lambda: create(os.path.join(sys.argv[1], "a")))
attempt("inner", lambda: create(os.path.join(sys.argv[2], "b")))
attempt("inner_chmod", lambda: os.chmod(os.path.join(sys.argv[2], "b"), 0o600))
`, outer, inner)
	assert.Equal(t, "OK", res["outer"], "%s", out.Stdout)
	assert.Equal(t, "OK", res["inner"])
	assert.Equal(t, "OK", res["inner_chmod"])
}

// With / a writable root everything is writable, metadata and TMPDIR
// included (found in review: everything was read-only, the clone of / put
// above the command's root), and the .git of another root still is not.
func TestFilesystemPolicySlashRoot(t *testing.T) {
	fsRequireMounts(t)
	dir, _ := fsGitRepo(t)
	res, out := lxPyRun(t, []string{"/", dir}, SandboxPolicy{}, `
d = sys.argv[1]
attempt("write", lambda: create(os.path.join(d, "f")))
attempt("chmod", lambda: os.chmod(os.path.join(d, "f"), 0o600))
attempt("tmpdir", lambda: create(os.path.join(os.environ.get("TMPDIR", "/tmp"), "sandboxexec-slash-root")))
attempt("hook", lambda: create(os.path.join(d, ".git", "hooks", "x")))
`, dir)
	assert.Equal(t, "OK", res["write"], "%s", out.Stdout)
	assert.Equal(t, "OK", res["chmod"])
	assert.Equal(t, "OK", res["tmpdir"])
	assert.Equal(t, "EROFS", res["hook"])
	os.Remove(filepath.Join(os.TempDir(), "sandboxexec-slash-root"))
}

// A protected path replaced between the policy's resolution and the mount
// (a symlink put in its place) fails the call rather than mount elsewhere.
func TestFilesystemPolicyTargetReplaced(t *testing.T) {
	fsRequireMounts(t)
	root := lxRealDir(t)
	git := filepath.Join(root, ".git")
	require.NoError(t, os.Mkdir(git, 0o755))
	r, err := platformRunner(context.Background(), SandboxLinuxSeccomp, []string{root}, SandboxPolicy{})
	require.NoError(t, err)
	require.NoError(t, os.Rename(git, filepath.Join(root, "elsewhere")))
	require.NoError(t, os.Symlink("/etc", git))
	req, err := prepare(ExecParams{Command: []string{"true"}}, &config{})
	require.NoError(t, err)
	ch, err := r.start(req)
	if err == nil {
		ch.killAll()
		t.Fatal("the call started on a replaced target")
	}
	require.ErrorIs(t, err, ErrSandboxUnavailable)
	assert.Contains(t, err.Error(), git)
	for _, f := range req.stdio {
		f.Close()
	}
}

const fsUnprivilegedEnv = "SANDBOXEXEC_TEST_FS_UNPRIVILEGED"

// A host user's calls get the same protection through a user namespace of
// their own that maps only that user: the command keeps its uid and holds
// no capability.
func TestFilesystemPolicyUnprivilegedHost(t *testing.T) {
	if os.Getenv(fsUnprivilegedEnv) == "1" {
		fsUnprivilegedHost(t)
		return
	}
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the test binary as another user")
	}
	dir := lxNobodyDir(t, "sandboxexec-fs-unprivileged-")
	root := filepath.Join(dir, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("SECRET"), 0o644))
	outside := filepath.Join(dir, "outside")
	require.NoError(t, os.WriteFile(outside, []byte("x"), 0o644))
	vault := filepath.Join(dir, "vault")
	require.NoError(t, os.Mkdir(vault, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(vault, "key"), []byte("SECRET"), 0o644))
	for _, p := range []string{root, filepath.Join(root, ".git"), filepath.Join(root, ".git", "hooks"), secret, outside, vault} {
		require.NoError(t, os.Chown(p, nobody, nobody))
	}
	out := lxRunAsNobody(t, dir, 2*time.Minute, []string{fsUnprivilegedEnv + "=1", "TMPDIR=" + root,
		"SANDBOXEXEC_TEST_ROOT=" + root, "SANDBOXEXEC_TEST_SECRET=" + secret, "SANDBOXEXEC_TEST_OUTSIDE=" + outside,
		"SANDBOXEXEC_TEST_VAULT=" + vault},
		"-test.run=^TestFilesystemPolicyUnprivilegedHost$")
	require.Contains(t, out, "--- PASS: TestFilesystemPolicyUnprivilegedHost", "%s", out)
	after, err := os.Stat(outside)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), after.Mode().Perm(), "the host user's file outside the root kept its mode")
}

func fsUnprivilegedHost(t *testing.T) {
	require.NotEqual(t, 0, os.Geteuid())
	fsRequireMounts(t)
	root, secret, outside := os.Getenv("SANDBOXEXEC_TEST_ROOT"), os.Getenv("SANDBOXEXEC_TEST_SECRET"), os.Getenv("SANDBOXEXEC_TEST_OUTSIDE")
	res, out := lxPyRun(t, []string{root}, SandboxPolicy{DenyRead: []string{secret}}, `
root, secret, outside = sys.argv[1], sys.argv[2], sys.argv[3]
attempt("hook", lambda: create(os.path.join(root, ".git", "hooks", "pre-commit")))
attempt("secret_empty", lambda: check(-1 if open(secret).read() else 0))
attempt("chmod_outside", lambda: os.chmod(outside, 0o777))
attempt("file", lambda: create(os.path.join(root, "file")))
attempt("uid", lambda: check(0 if os.getuid() == 65534 and os.geteuid() == 65534 else -1))
caps = [l.split()[1] for l in open("/proc/self/status") if l.startswith(("CapEff", "CapPrm", "CapBnd", "CapAmb"))]
attempt("no_caps", lambda: check(0 if all(int(c, 16) == 0 for c in caps) else -1))
`, root, secret, outside)
	assert.Equal(t, "EROFS", res["hook"], "%s", out.Stdout)
	assert.Equal(t, "OK", res["secret_empty"])
	assert.Equal(t, "EROFS", res["chmod_outside"])
	assert.Equal(t, "OK", res["file"])
	assert.Equal(t, "OK", res["uid"])
	assert.Equal(t, "OK", res["no_caps"])
	_, err := os.Stat(filepath.Join(root, ".git", "hooks", "pre-commit"))
	assert.True(t, errors.Is(err, os.ErrNotExist))

	// The same from the host's working directory (this process's own; see
	// TestFilesystemPolicyHostWorkdir).
	vault := os.Getenv("SANDBOXEXEC_TEST_VAULT")
	require.NoError(t, os.Chdir(vault))
	out, err = lxRun(t, lxSh(`cat key; ls`), []string{root}, SandboxPolicy{DenyRead: []string{vault}})
	lxDeniedOrNil(t, out, err)
	assert.NotContains(t, out.Stdout, "SECRET")
	assert.NotContains(t, out.Stdout, "key")
	require.NoError(t, os.Chdir(root))
	out, err = lxRun(t, lxSh(`echo x > cwd-file`), []string{root}, SandboxPolicy{DenyRead: []string{secret}})
	lxRequireOK(t, out, err)
	assert.FileExists(t, filepath.Join(root, "cwd-file"))
}

// No set-user-ID or set-group-ID file can be made in a root: it would
// outlive the call, and run as its owner (root, for a root host) for
// whoever starts it later, outside any sandbox (found in review). Every
// call that gives a file its mode refuses those bits (EPERM), openat2,
// whose mode a filter cannot see, is ENOSYS, and other modes work. Each
// policy's calls go through a fresh child, a kept namespace and a standby
// where the host has them; as nobody, through a user namespace.
func TestFilesystemPolicySetIDRefused(t *testing.T) {
	requireSandbox(t)
	body := `
import platform
open("f", "w").close()
os.mkdir("d")
def openat2(path, flags, mode):
    how = (ctypes.c_uint64 * 3)(flags, mode, 0)
    os.close(check(libc.syscall(437, -100, path.encode(), how, 24)))
attempt("chmod_suid", lambda: os.chmod("f", 0o4755))
attempt("chmod_sgid", lambda: os.chmod("f", 0o2755))
attempt("chmod_dir_sgid", lambda: os.chmod("d", 0o2775))
attempt("fchmod", lambda: os.fchmod(os.open("f", os.O_RDONLY), 0o4755))
attempt("fchmodat2", lambda: check(libc.syscall(452, -100, b"f", 0o4755, 0)))
attempt("openat_creat", lambda: os.open("g", os.O_CREAT | os.O_WRONLY, 0o4755))
attempt("openat_tmpfile", lambda: os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o2755))
attempt("mknodat", lambda: os.mknod("h", 0o104755))
attempt("openat2", lambda: openat2("i", os.O_CREAT | os.O_WRONLY, 0o4755))
if platform.machine() == "x86_64":
    attempt("open_creat", lambda: os.close(check(libc.syscall(2, b"j", os.O_CREAT | os.O_WRONLY, 0o4755))))
    attempt("creat", lambda: os.close(check(libc.syscall(85, b"k", 0o6755))))
    attempt("chmod_raw", lambda: check(libc.syscall(90, b"f", 0o4755)))
attempt("chmod_plain", lambda: os.chmod("f", 0o755))
attempt("create_plain", lambda: os.close(os.open("l", os.O_CREAT | os.O_WRONLY, 0o755)))
`
	for _, policy := range []SandboxPolicy{{}, {FullDiskWriteAccess: true}} {
		root := lxRealDir(t)
		var used []bool
		old := standbyUsedHook
		standbyUsedHook = func(u bool) { used = append(used, u) }
		for i := range 3 {
			entries, err := os.ReadDir(root)
			require.NoError(t, err)
			for _, e := range entries {
				require.NoError(t, os.RemoveAll(filepath.Join(root, e.Name())))
			}
			sbSettle(t) // the standby the call before started, where there is one
			out, err := lxRunParams(t, ExecParams{Command: lxPy(t, body), Workdir: root}, []string{root}, policy)
			lxDeniedOrNil(t, out, err)
			require.Empty(t, out.Stderr, "python failed: %s", out.Stderr)
			res := lxResults(out.Stdout)
			for _, op := range []string{"chmod_suid", "chmod_sgid", "chmod_dir_sgid", "fchmod", "openat_creat",
				"openat_tmpfile", "mknodat", "open_creat", "creat", "chmod_raw"} {
				if got, ok := res[op]; ok || !strings.Contains("open_creat creat chmod_raw", op) {
					assert.Equal(t, "EPERM", got, "%+v call %d %s: %s", policy, i, op, out.Stdout)
				}
			}
			assert.Contains(t, []string{"EPERM", "ENOSYS"}, res["fchmodat2"], "%+v call %d: %s", policy, i, out.Stdout)
			assert.Equal(t, "ENOSYS", res["openat2"], "%+v call %d: %s", policy, i, out.Stdout)
			assert.Equal(t, "OK", res["chmod_plain"], "%+v call %d: %s", policy, i, out.Stdout)
			assert.Equal(t, "OK", res["create_plain"], "%+v call %d: %s", policy, i, out.Stdout)
			require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				fi, err := d.Info()
				if err == nil && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
					t.Errorf("%+v call %d: %s is %v", policy, i, p, fi.Mode())
				}
				return err
			}))
		}
		standbyUsedHook = old
		t.Logf("%+v: standby used %v", policy, used)
	}
}

// A set-user-ID or set-group-ID program already in a root (the host's
// build of a system image, a tree it extracted with tar -p) loses those
// bits when a command writes or truncates it, as the kernel does for a
// writer without CAP_FSETID: a root command that kept it rewrote a
// set-user-ID root program, which then ran its text as root for whoever
// started it after the call (found in review). As nobody too, whose
// command is root in its user namespace.
func TestFilesystemPolicySetIDFileRewritten(t *testing.T) {
	requireSandbox(t)
	for _, policy := range []SandboxPolicy{{}, {FullDiskWriteAccess: true}} {
		root := lxRealDir(t)
		for i := range 3 {
			for name, mode := range map[string]uint32{"append": 0o4755, "truncate": 0o4755, "group": 0o2755} {
				p := filepath.Join(root, name)
				require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
				require.NoError(t, unix.Chmod(p, mode))
			}
			sbSettle(t)
			out, err := lxRunParams(t, ExecParams{Command: lxSh(`echo id >> append; echo id > truncate; echo id >> group`),
				Workdir: root}, []string{root}, policy)
			lxRequireOK(t, out, err)
			for _, name := range []string{"append", "truncate", "group"} {
				fi, err := os.Stat(filepath.Join(root, name))
				require.NoError(t, err)
				assert.Zero(t, fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid), "%+v call %d: %s is %v", policy, i, name, fi.Mode())
			}
		}
	}
}
