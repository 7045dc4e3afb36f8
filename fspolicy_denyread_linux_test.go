//go:build linux && cgo

package sandboxexec

import (
	"os"
	"path/filepath"
	"testing"

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
