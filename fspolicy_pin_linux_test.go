//go:build linux && cgo

package sandboxexec

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fsHookRepo makes root a repository whose .git is a file naming gitdir
// (relative to root), or a directory for gitdir ".git", with a commit
// where git is installed, so that a test can run the host's git commit
// and see whether a hook ran. It returns the file a pre-commit hook would
// create, and whether git is there.
func fsHookRepo(t *testing.T, root, gitdir string) (marker string, haveGit bool) {
	t.Helper()
	marker = filepath.Join(lxRealDir(t), "hook-ran")
	if _, err := exec.LookPath("git"); err != nil {
		require.NoError(t, os.MkdirAll(filepath.Join(root, gitdir, "hooks"), 0o755))
		if gitdir != ".git" {
			require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))
		}
		return marker, false
	}
	if gitdir == ".git" {
		fsGit(t, root, "init", "-q")
	} else {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, gitdir)), 0o755))
		fsGit(t, root, "init", "-q", "--separate-git-dir="+filepath.Join(root, gitdir))
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "README"), []byte("hello\n"), 0o644))
	fsGit(t, root, "add", "README")
	fsGit(t, root, "commit", "-q", "-m", "first")
	return marker, true
}

// fsRequireNoHookRan commits on the host, where git is installed, and
// requires that no hook the command may have left ran.
func fsRequireNoHookRan(t *testing.T, root, marker string, haveGit bool) {
	t.Helper()
	if haveGit {
		require.NoError(t, os.WriteFile(filepath.Join(root, "more"), []byte(time.Now().String()+"\n"), 0o644))
		fsGit(t, root, "add", "more")
		fsGit(t, root, "commit", "-q", "-m", "host")
	}
	lxRequireAbsent(t, marker)
}

// fsHookScript is what the hook a command writes does: leave the marker.
func fsHookScript(marker string) string {
	return "#!/bin/sh\ntouch '" + marker + "'\n"
}

// A git directory inside the root, named by the .git file (git init
// --separate-git-dir), stays at its path: each directory between the root
// and it is a mount point, which the command can neither rename nor
// remove (found in review: "mv meta meta_orig; mkdir meta; cp -a
// meta_orig/repo.git meta/" and a hook written there, which the host's
// next git commit ran). The directory stays writable otherwise, and
// what lies outside the roots stays read-only.
func TestFilesystemPolicySeparateGitdirPinned(t *testing.T) {
	fsRequireMounts(t)
	root, outside := lxRealDir(t), lxRealDir(t)
	marker, haveGit := fsHookRepo(t, root, "meta/repo.git")
	meta := filepath.Join(root, "meta")
	gitdir := filepath.Join(meta, "repo.git")
	// The attempt found in review.
	o, err := lxRun(t, lxSh(`cd "$1" && mv meta meta_orig && mkdir meta && cp -a meta_orig/repo.git meta/ &&
printf '%s' "$2" > meta/repo.git/hooks/pre-commit && chmod +x meta/repo.git/hooks/pre-commit`, root, fsHookScript(marker)),
		[]string{root}, SandboxPolicy{})
	lxDeniedOrNil(t, o, err)
	assert.NotZero(t, o.ExitCode)
	assert.Contains(t, o.Stderr, "busy")
	fsRequireNoHookRan(t, root, marker, haveGit)
	lxRequireAbsent(t, filepath.Join(root, "meta_orig"))
	lxRequireAbsent(t, filepath.Join(gitdir, "hooks", "pre-commit"))

	res, out := lxPyRun(t, []string{root}, SandboxPolicy{}, `
root, meta, gitdir, outside = sys.argv[1:5]
attempt("hook", lambda: create(os.path.join(gitdir, "hooks", "pre-commit")))
attempt("rename_parent", lambda: os.rename(meta, os.path.join(root, "meta_orig")))
attempt("rename_gitdir", lambda: os.rename(gitdir, os.path.join(meta, "old.git")))
attempt("beside", lambda: create(os.path.join(meta, "notes")))
attempt("beside_mkdir", lambda: os.makedirs(os.path.join(meta, "sub", "dir")))
attempt("beside_rename", lambda: os.rename(os.path.join(meta, "notes"), os.path.join(meta, "sub", "notes")))
attempt("beside_chmod", lambda: os.chmod(os.path.join(meta, "sub", "notes"), 0o600))
attempt("outside", lambda: create(os.path.join(outside, "x")))
`, root, meta, gitdir, outside)
	assert.Equal(t, "EROFS", res["hook"], "%s", out.Stdout)
	assert.Equal(t, "EBUSY", res["rename_parent"], "a mount point cannot be renamed")
	assert.Equal(t, "EBUSY", res["rename_gitdir"])
	assert.Equal(t, "OK", res["beside"], "Landlock lets the command write in a pinned directory")
	assert.Equal(t, "OK", res["beside_mkdir"])
	assert.Equal(t, "OK", res["beside_rename"])
	assert.Equal(t, "OK", res["beside_chmod"])
	assert.Equal(t, lxWriteOutside(), res["outside"])
}

// A .git file whose git directory is named through a symlink inside a
// writable root fails the call, naming the link, and nothing runs: the
// command could repoint the link ("ln -sfn evil gd.new && mv -T gd.new
// gd") to a git directory of its own, whose hooks the host's git would
// run. A symlink outside the roots is read-only, and fine.
func TestFilesystemPolicyGitdirSymlink(t *testing.T) {
	fsRequireMounts(t)
	root, elsewhere := lxRealDir(t), lxRealDir(t)
	marker, haveGit := fsHookRepo(t, root, "gd")
	// Move the git directory out, and leave a link to it in the root.
	real := filepath.Join(elsewhere, "repo.git")
	require.NoError(t, os.Rename(filepath.Join(root, "gd"), real))
	require.NoError(t, os.Symlink(real, filepath.Join(root, "gd")))
	ran := filepath.Join(root, "ran")
	o, err := lxRun(t, lxSh(`cd "$1" && touch ran && cp -a gd/. evil && printf '%s' "$2" > evil/hooks/pre-commit &&
chmod +x evil/hooks/pre-commit && ln -sfn evil gd.new && mv -T gd.new gd`, root, fsHookScript(marker)),
		[]string{root}, SandboxPolicy{})
	require.Error(t, err, "%+v", o)
	assert.Contains(t, err.Error(), "the symlink "+filepath.Join(root, "gd"))
	assert.Contains(t, err.Error(), "ReadOnlySubpaths")
	lxRequireAbsent(t, ran)
	target, err := os.Readlink(filepath.Join(root, "gd"))
	require.NoError(t, err)
	assert.Equal(t, real, target)
	fsRequireNoHookRan(t, root, marker, haveGit)

	// Its commondir, likewise.
	require.NoError(t, os.Remove(filepath.Join(root, "gd")))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+real+"\n"), 0o644))
	require.NoError(t, os.Symlink(real, filepath.Join(root, "common")))
	require.NoError(t, os.WriteFile(filepath.Join(real, "commondir"), []byte(filepath.Join(root, "common")+"\n"), 0o644))
	o, err = lxRun(t, lxSh(`touch "$1"`, ran), []string{root}, SandboxPolicy{})
	require.Error(t, err, "%+v", o)
	assert.Contains(t, err.Error(), "commondir")
	assert.Contains(t, err.Error(), "the symlink "+filepath.Join(root, "common"))
	lxRequireAbsent(t, ran)
	require.NoError(t, os.Remove(filepath.Join(real, "commondir")))

	// Through a symlink outside the roots: the call runs, and the git
	// directory it leads to is read-only.
	link := filepath.Join(lxRealDir(t), "link")
	require.NoError(t, os.Symlink(real, link))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+link+"\n"), 0o644))
	res, out := lxPyRun(t, []string{root, elsewhere}, SandboxPolicy{}, `
attempt("hook", lambda: create(os.path.join(sys.argv[1], "hooks", "pre-commit")))
attempt("rename", lambda: os.rename(sys.argv[1], sys.argv[1] + ".old"))
`, real)
	assert.Equal(t, "EROFS", res["hook"], "%s", out.Stdout)
	assert.Equal(t, "EBUSY", res["rename"])
	fsRequireNoHookRan(t, root, marker, haveGit)
}

// A denied path inside a root stays covered from one call to the next:
// the directories between the root and it are mount points, which the
// command cannot rename (found in review: a first call renamed config to
// cfg2, and the next, finding nothing at config/prod.env, read
// cfg2/prod.env).
func TestFilesystemPolicyDenyReadParentPinned(t *testing.T) {
	fsRequireMounts(t)
	root := lxRealDir(t)
	config := filepath.Join(root, "config")
	secret := filepath.Join(config, "prod.env")
	vault := filepath.Join(root, "a", "b", "vault")
	require.NoError(t, os.MkdirAll(vault, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(vault, "key"), []byte("SECRET-IN-VAULT"), 0o644))
	require.NoError(t, os.MkdirAll(config, 0o755))
	require.NoError(t, os.WriteFile(secret, []byte("SECRET-PROD"), 0o644))
	policy := SandboxPolicy{DenyRead: []string{secret, vault}}
	res, out := lxPyRun(t, []string{root}, policy, `
root, config, a, secret = sys.argv[1:5]
attempt("rename_config", lambda: os.rename(config, os.path.join(root, "cfg2")))
attempt("rename_a", lambda: os.rename(a, os.path.join(root, "a2")))
attempt("rename_b", lambda: os.rename(os.path.join(a, "b"), os.path.join(a, "b2")))
attempt("unlink", lambda: os.unlink(secret))
attempt("reads_empty", lambda: check(-1 if open(secret).read() else 0))
attempt("beside", lambda: create(os.path.join(config, "dev.env")))
`, root, config, filepath.Join(root, "a"), secret)
	assert.Equal(t, "EBUSY", res["rename_config"], "%s", out.Stdout)
	assert.Equal(t, "EBUSY", res["rename_a"])
	assert.Equal(t, "EBUSY", res["rename_b"])
	assert.Equal(t, "EBUSY", res["unlink"])
	assert.Equal(t, "OK", res["reads_empty"])
	assert.Equal(t, "OK", res["beside"])

	o, err := lxRun(t, lxSh(`cd "$1" && mv config cfg2; mv a a2; true`, root), []string{root}, policy)
	lxRequireOK(t, o, err)
	// The next call, with the same policy.
	o, err = lxRun(t, lxSh(`cat "$1"/cfg2/prod.env "$1"/config/prod.env "$1"/a2/b/vault/key "$1"/a/b/vault/key; true`, root),
		[]string{root}, policy)
	lxRequireOK(t, o, err)
	assert.NotContains(t, o.Stdout, "SECRET")
	assert.FileExists(t, secret)
	assert.DirExists(t, vault)
}

// Under FullDiskWriteAccess every directory is writable, so each one above
// a protected path is pinned, up to /: none can be renamed to move the
// protection away, and the rest is written as before.
func TestFilesystemPolicyFullDiskWritePinned(t *testing.T) {
	fsRequireMounts(t)
	root, _ := fsGitRepo(t)
	dir := lxRealDir(t)
	secret := filepath.Join(dir, "sub", "token")
	require.NoError(t, os.MkdirAll(filepath.Dir(secret), 0o755))
	require.NoError(t, os.WriteFile(secret, []byte("SECRET-TOKEN"), 0o644))
	policy := SandboxPolicy{FullDiskWriteAccess: true, DenyRead: []string{secret}}
	res, out := lxPyRun(t, []string{root}, policy, `
root, dir, secret = sys.argv[1:4]
attempt("rename_root", lambda: os.rename(root, root + ".old"))
attempt("rename_root_parent", lambda: os.rename(os.path.dirname(root), os.path.dirname(root) + ".old"))
attempt("rename_dir", lambda: os.rename(dir, dir + ".old"))
attempt("rename_sub", lambda: os.rename(os.path.dirname(secret), os.path.dirname(secret) + ".old"))
attempt("write_sub", lambda: create(os.path.join(os.path.dirname(secret), "f")))
attempt("write_root", lambda: create(os.path.join(root, "f")))
attempt("hook", lambda: create(os.path.join(root, ".git", "hooks", "x")))
`, root, dir, secret)
	assert.Equal(t, "EBUSY", res["rename_root"], "%s", out.Stdout)
	assert.Equal(t, "EBUSY", res["rename_root_parent"])
	assert.Equal(t, "EBUSY", res["rename_dir"])
	assert.Equal(t, "EBUSY", res["rename_sub"])
	assert.Equal(t, "OK", res["write_sub"])
	assert.Equal(t, "OK", res["write_root"])
	assert.Equal(t, "EROFS", res["hook"])
	o, err := lxRun(t, lxSh(`cat "$1"`, secret), []string{root}, policy)
	lxRequireOK(t, o, err)
	assert.Empty(t, o.Stdout)
}

// A root inside another root is a mount point, as the outer one is: the
// command cannot rename it away and make a repository of its own at its
// path (found in review: with roots A and A/b, "mv A/b A/b_orig; mkdir -p
// A/b/.git/hooks" and a hook there, which the host's git then ran).
func TestFilesystemPolicyNestedRootPinned(t *testing.T) {
	fsRequireMounts(t)
	outer := lxRealDir(t)
	inner := filepath.Join(outer, "b")
	require.NoError(t, os.Mkdir(inner, 0o755))
	marker, haveGit := fsHookRepo(t, inner, ".git")
	o, err := lxRun(t, lxSh(`mv "$1/b" "$1/b_orig" && mkdir -p "$1/b/.git/hooks" && printf '%s' "$2" > "$1/b/.git/hooks/pre-commit" &&
chmod +x "$1/b/.git/hooks/pre-commit"`, outer, fsHookScript(marker)), []string{outer, inner}, SandboxPolicy{})
	lxDeniedOrNil(t, o, err)
	assert.NotZero(t, o.ExitCode)
	assert.Contains(t, o.Stderr, "busy")
	fsRequireNoHookRan(t, inner, marker, haveGit)
	lxRequireAbsent(t, filepath.Join(outer, "b_orig"))
	lxRequireAbsent(t, filepath.Join(inner, ".git", "hooks", "pre-commit"))

	res, out := lxPyRun(t, []string{outer, inner}, SandboxPolicy{}, `
outer, inner = sys.argv[1:3]
attempt("hook", lambda: create(os.path.join(inner, ".git", "hooks", "pre-commit")))
attempt("rename_inner", lambda: os.rename(inner, os.path.join(outer, "b_orig")))
attempt("write_inner", lambda: create(os.path.join(inner, "f")))
attempt("rename_in_inner", lambda: os.rename(os.path.join(inner, "f"), os.path.join(inner, "g")))
attempt("write_outer", lambda: create(os.path.join(outer, "f")))
`, outer, inner)
	assert.Equal(t, "EROFS", res["hook"], "%s", out.Stdout)
	assert.Equal(t, "EBUSY", res["rename_inner"], "a mount point cannot be renamed")
	assert.Equal(t, "OK", res["write_inner"])
	assert.Equal(t, "OK", res["rename_in_inner"])
	assert.Equal(t, "OK", res["write_outer"])

	// A nested root with nothing to protect in it is pinned too.
	plain := filepath.Join(outer, "plain")
	require.NoError(t, os.Mkdir(plain, 0o755))
	res, out = lxPyRun(t, []string{outer, plain}, SandboxPolicy{}, `
attempt("rename", lambda: os.rename(sys.argv[1], sys.argv[1] + ".old"))
attempt("write", lambda: create(os.path.join(sys.argv[1], "f")))
`, plain)
	assert.Equal(t, "EBUSY", res["rename"], "%s", out.Stdout)
	assert.Equal(t, "OK", res["write"])
}
