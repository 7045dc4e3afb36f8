//go:build linux && cgo

package sandboxexec

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fsDenyReadDotDotEnv = "SANDBOXEXEC_TEST_DENYREAD_DOTDOT"

// A DenyRead path with ".." after a directory of a writable root
// ("ROOT/sub/../secret"): where sub is missing (or a file) the path
// names nothing and was skipped, and the command made sub and read the
// secret by the very path DenyRead names; where sub exists, an earlier
// call's command could remove it, for the same end in the next call
// (found in review). Such a path is refused, as one through a symlink
// in a root is; one whose ".." leaves a directory outside the roots, which
// the command cannot change, still covers what it leads to.
func TestFilesystemPolicyDenyReadDotDotInRoot(t *testing.T) {
	if os.Getenv(fsDenyReadDotDotEnv) == "1" {
		testDenyReadDotDotInRoot(t, os.Getenv("SANDBOXEXEC_TEST_ROOT"))
		return
	}
	requireSandbox(t)
	testDenyReadDotDotInRoot(t, filepath.Join(lxRealDir(t), "root"))
	if os.Geteuid() == 0 {
		lxRerunAsNobody(t, fsDenyReadDotDotEnv)
	}
}

func testDenyReadDotDotInRoot(t *testing.T, root string) {
	require.NoError(t, os.MkdirAll(root, 0o755))
	secret := filepath.Join(root, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("SECRET"), 0o600))
	// sub missing, a file, or a directory the command may remove.
	for _, kind := range []string{"missing", "file", "dir"} {
		t.Run(kind, func(t *testing.T) {
			sub := filepath.Join(root, "sub-"+kind)
			switch kind {
			case "file":
				require.NoError(t, os.WriteFile(sub, nil, 0o644))
			case "dir":
				require.NoError(t, os.Mkdir(sub, 0o755))
			}
			deny := sub + "/../secret"
			out, err := lxRun(t, lxSh(`rm -rf "$1"; mkdir "$1" && cat "$1/../secret"`, sub), []string{root},
				SandboxPolicy{DenyRead: []string{deny}})
			assert.NotContains(t, out.Stdout, "SECRET", "the command read %s through %s", secret, deny)
			require.Error(t, err, "output: %+v", out)
			assert.Contains(t, err.Error(), "DenyRead path")
			os.RemoveAll(sub)
		})
	}
	// Outside the roots, ".." is the kernel's: the command cannot change
	// what it leaves.
	outside := filepath.Dir(root)
	out, err := lxRun(t, lxSh(`cat "$1"`, secret), []string{root},
		SandboxPolicy{DenyRead: []string{filepath.Join(outside, "..", filepath.Base(outside)) + "/" + filepath.Base(root) + "/secret"}})
	lxRequireOK(t, out, err)
	assert.Empty(t, out.Stdout)
}

const fsDenyReadFullDiskLinkEnv = "SANDBOXEXEC_TEST_DENYREAD_FULLDISK_LINK"

// Under FullDiskWriteAccess the command may write anywhere its user may,
// so a symlink outside the roots is no more fixed than one inside: a
// DenyRead path through one (~/.aws -> a dotfiles directory) was
// followed, the command repointed the link, and the next call covered
// what it pointed to then and left the secret readable (found in review).
// Such a path is refused there, as one through a symlink in a root is,
// and so is a ".." after a name the command may change.
func TestFilesystemPolicyDenyReadFullDiskWriteSymlink(t *testing.T) {
	if os.Getenv(fsDenyReadFullDiskLinkEnv) == "1" {
		testDenyReadFullDiskWriteSymlink(t, os.Getenv("SANDBOXEXEC_TEST_ROOT"))
		return
	}
	fsRequireMounts(t)
	testDenyReadFullDiskWriteSymlink(t, filepath.Join(lxRealDir(t), "root"))
	if os.Geteuid() == 0 {
		lxRerunAsNobody(t, fsDenyReadFullDiskLinkEnv)
	}
}

func testDenyReadFullDiskWriteSymlink(t *testing.T, base string) {
	root, vault, decoy := filepath.Join(base, "root"), filepath.Join(base, "vault"), filepath.Join(base, "decoy")
	for _, d := range []string{root, vault, decoy} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(vault, "key"), []byte("SECRET"), 0o600))
	link := filepath.Join(base, "aws") // outside the root
	require.NoError(t, os.Symlink(vault, link))
	policy := SandboxPolicy{FullDiskWriteAccess: true, DenyRead: []string{link}}
	// The first call repoints the link, the second reads the vault.
	out1, err1 := lxRun(t, lxSh(`ln -sfn "$2" "$1.new" && mv -T "$1.new" "$1"`, link, decoy), []string{root}, policy)
	out2, err2 := lxRun(t, lxSh(`cat "$1/key"`, vault), []string{root}, policy)
	assert.NotContains(t, out2.Stdout, "SECRET", "the second call read the vault the link named")
	require.Error(t, err1, "output: %+v", out1)
	assert.Contains(t, err1.Error(), "DenyRead path")
	require.Error(t, err2, "output: %+v", out2)
	// The directory it leads to, named directly: covered.
	out, err := lxRun(t, lxSh(`ls -A "$1"; cat "$1/key" || true`, vault), []string{root},
		SandboxPolicy{FullDiskWriteAccess: true, DenyRead: []string{vault}})
	lxRequireOK(t, out, err)
	assert.Empty(t, out.Stdout)
	assert.Contains(t, out.Stderr, "No such file")
	// ".." after a directory the command may remove, outside the roots.
	sub := filepath.Join(base, "sub")
	out, err = lxRun(t, lxSh(`mkdir -p "$1" && cat "$1/../vault/key"`, sub), []string{root},
		SandboxPolicy{FullDiskWriteAccess: true, DenyRead: []string{sub + "/../vault"}})
	assert.NotContains(t, out.Stdout, "SECRET")
	require.Error(t, err, "output: %+v", out)
}

const fsDenyReadFullDiskOwnedEnv = "SANDBOXEXEC_TEST_DENYREAD_FULLDISK_OWNED"

// Under FullDiskWriteAccess a symlink in a directory the host user cannot
// write, by its mode, was followed: but the command may chmod a directory
// it owns, or rename one, whoever owns it, out of a directory it may
// write, and make it anew with a link of its own. Either way the next call
// covered the decoy and read the vault (found in review, as nobody: root
// may write every directory, and its links were refused already).
func TestFilesystemPolicyDenyReadFullDiskWriteOwnedDir(t *testing.T) {
	if os.Getenv(fsDenyReadFullDiskOwnedEnv) == "1" {
		testDenyReadFullDiskWriteOwnedDir(t, os.Getenv("SANDBOXEXEC_TEST_ROOT"))
		return
	}
	fsRequireMounts(t)
	if os.Geteuid() != 0 {
		testDenyReadFullDiskWriteOwnedDir(t, lxRealDir(t))
		return
	}
	// As nobody, with held, a directory of root's, in nobody's base.
	dir := lxNobodyDir(t, "sandboxexec-nobody-")
	base := filepath.Join(dir, "base")
	require.NoError(t, os.Mkdir(base, 0o755))
	require.NoError(t, os.Chown(base, nobody, nobody))
	require.NoError(t, os.Mkdir(filepath.Join(base, "held"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(base, "vault"), filepath.Join(base, "held", "aws")))
	out := lxRunAsNobody(t, dir, time.Minute, []string{fsDenyReadFullDiskOwnedEnv + "=1", "SANDBOXEXEC_TEST_ROOT=" + base},
		"-test.run=^"+t.Name()+"$")
	assert.Contains(t, out, "--- PASS: "+t.Name())
	t.Logf("as nobody:\n%s", out)
}

func testDenyReadFullDiskWriteOwnedDir(t *testing.T, base string) {
	root, vault, decoy := filepath.Join(base, "root"), filepath.Join(base, "vault"), filepath.Join(base, "decoy")
	for _, d := range []string{root, vault, decoy} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(vault, "key"), []byte("SECRET"), 0o600))
	attacks := map[string]string{
		// A directory of the host user's, which it made read-only.
		"own": `chmod u+w "$1" && ln -sfn "$2" "$1/aws.new" && mv -T "$1/aws.new" "$1/aws" && chmod u-w "$1"`,
		// A directory of root's in one the host user may write.
		"held": `mv "$1" "$1.old" && mkdir "$1" && ln -s "$2" "$1/aws" && chmod 555 "$1"`,
	}
	for name, attack := range attacks {
		t.Run(name, func(t *testing.T) {
			links := filepath.Join(base, name)
			require.NoError(t, os.MkdirAll(links, 0o755))
			if err := os.Symlink(vault, filepath.Join(links, "aws")); err != nil && !os.IsExist(err) {
				t.Skipf("cannot make the link: %v", err) // held, not running as nobody
			}
			if name == "own" {
				require.NoError(t, os.Chmod(links, 0o555))
				defer os.Chmod(links, 0o755)
			} else {
				defer os.Chmod(links, 0o755) // the attack's, for the clean-up
			}
			policy := SandboxPolicy{FullDiskWriteAccess: true, DenyRead: []string{filepath.Join(links, "aws")}}
			out1, err1 := lxRun(t, lxSh(attack, links, decoy), []string{root}, policy)
			out2, err2 := lxRun(t, lxSh(`cat "$1/key"`, vault), []string{root}, policy)
			assert.NotContains(t, out2.Stdout, "SECRET", "the second call read the vault the link named: %+v", out2)
			require.Error(t, err1, "output: %+v", out1)
			assert.Contains(t, err1.Error(), "DenyRead path")
			require.Error(t, err2, "output: %+v", out2)
		})
	}
}

// The ".." of TestFilesystemPolicyDenyReadDotDotInRoot in the target of a
// symlink outside the roots (OUT/link -> ROOT/sub/.., sub missing): the
// path named nothing and was skipped, and the command made sub and read
// ROOT/secret by the very path DenyRead names (found in review). Refused.
func TestFilesystemPolicyDenyReadLinkDotDotInRoot(t *testing.T) {
	requireSandbox(t)
	base := lxRealDir(t)
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "secret"), []byte("SECRET"), 0o600))
	for name, target := range map[string]string{"absolute": root + "/sub/..", "relative": "../root/sub/.."} {
		t.Run(name, func(t *testing.T) {
			link := filepath.Join(outside, name)
			require.NoError(t, os.Symlink(target, link))
			deny := filepath.Join(link, "secret")
			out, err := lxRun(t, lxSh(`mkdir -p "$1/sub" && cat "$2"`, root, deny), []string{root},
				SandboxPolicy{DenyRead: []string{deny}})
			assert.NotContains(t, out.Stdout, "SECRET", "the command read the secret through %s", deny)
			require.Error(t, err, "output: %+v", out)
			assert.Contains(t, err.Error(), "DenyRead path")
			os.RemoveAll(filepath.Join(root, "sub"))
		})
	}
}
