//go:build darwin

package sandboxexec

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seatbeltRun runs a shell script in root under Seatbelt, with root and
// the other roots writable.
func seatbeltRun(t *testing.T, root string, policy SandboxPolicy, script string, args ...string) (ExecToolCallOutput, error) {
	t.Helper()
	return seatbeltRunRoots(t, []string{root}, policy, script, args...)
}

func seatbeltRunRoots(t *testing.T, roots []string, policy SandboxPolicy, script string, args ...string) (ExecToolCallOutput, error) {
	t.Helper()
	params := ExecParams{Command: append([]string{"/bin/sh", "-c", script, "sh"}, args...), Workdir: roots[0]}
	return ProcessExecToolCall(context.Background(), params, SandboxMacosSeatbelt, roots, policy)
}

// seatbeltGitRoot is a new git repository with one commit, canonical.
func seatbeltGitRoot(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, args := range [][]string{
		{"init", "-q"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init"},
	} {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	return root
}

// Every way of changing .git fails with EPERM; git can still read it, and
// the rest of the root stays writable.
func TestSeatbeltReadOnlyGit(t *testing.T) {
	requireSeatbelt(t)
	root := seatbeltGitRoot(t)
	for name, script := range map[string]string{
		"hook":   `echo '#!/bin/sh' > .git/hooks/pre-commit`,
		"config": `echo '[core] fsmonitor = x' >> .git/config`,
		"rm":     `rm -rf .git`,
		"mv":     `mv .git moved`,
		"chmod":  `chmod 777 .git/config`,
		"mkdir":  `mkdir .git/new`,
		// Its parent is a writable root too: moving the root would carry
		// .git to a path no rule names.
		"mv root": `mv "$1" "$1.moved"`,
	} {
		t.Run(name, func(t *testing.T) {
			out, err := seatbeltRunRoots(t, []string{root, filepath.Dir(root)}, SandboxPolicy{}, script, root)
			assert.NotEqual(t, 0, out.ExitCode, "stdout %q", out.Stdout)
			assert.Contains(t, out.Stderr, "Operation not permitted")
			var denied *SandboxDeniedError
			assert.True(t, errors.As(err, &denied), "want a SandboxDeniedError, got %v", err)
		})
	}
	assert.NoFileExists(t, filepath.Join(root, ".git", "hooks", "pre-commit"))
	assert.DirExists(t, filepath.Join(root, ".git", "objects"))

	out, err := seatbeltRun(t, root, SandboxPolicy{},
		`git status --porcelain && git log --oneline | wc -l && mkdir -p new/dir && echo x > new/dir/f && echo ok`)
	require.NoError(t, err, "stderr: %s", out.Stderr)
	assert.True(t, strings.HasSuffix(out.Stdout, "ok\n"), "stdout %q", out.Stdout)

	// The host can still write .git during and after the call.
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "description"), []byte("host\n"), 0o644))
}

// With an empty ReadOnlySubpaths a commit works; under FullDiskWriteAccess
// .git stays read-only by default.
func TestSeatbeltReadOnlyOptOut(t *testing.T) {
	requireSeatbelt(t)
	root := seatbeltGitRoot(t)
	commit := `git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m second && echo ok`
	out, err := seatbeltRun(t, root, SandboxPolicy{ReadOnlySubpaths: []string{}}, commit)
	require.NoError(t, err, "stderr: %s", out.Stderr)
	assert.Equal(t, "ok\n", out.Stdout)

	out, _ = seatbeltRun(t, root, SandboxPolicy{FullDiskWriteAccess: true}, `echo x > .git/hooks/post-commit`)
	assert.NotEqual(t, 0, out.ExitCode)
	assert.NoFileExists(t, filepath.Join(root, ".git", "hooks", "post-commit"))
}

// A denied directory and a denied file refuse reading, listing, running and
// writing with EPERM, also through a symlink in the root, with and without
// network; a sibling stays readable. (Seatbelt cannot make a directory read
// as empty, as Linux does.)
func TestSeatbeltDenyRead(t *testing.T) {
	requireSeatbelt(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	secrets := filepath.Join(outside, "secrets")
	require.NoError(t, os.Mkdir(secrets, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "key"), []byte("SECRET\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "run.sh"), []byte("#!/bin/sh\necho ran\n"), 0o755))
	single := filepath.Join(outside, "token")
	require.NoError(t, os.WriteFile(single, []byte("TOKEN\n"), 0o600))
	sibling := filepath.Join(outside, "public")
	require.NoError(t, os.WriteFile(sibling, []byte("public\n"), 0o644))
	require.NoError(t, os.Symlink(secrets, filepath.Join(root, "link")))

	for _, network := range []bool{false, true} {
		policy := SandboxPolicy{DenyRead: []string{secrets, single}, NetworkAccess: network, FullDiskWriteAccess: network}
		for name, script := range map[string]string{
			"cat":        `cat "$1/key"`,
			"ls":         `ls "$1"`,
			"find":       `find "$1"`,
			"cp":         `cp "$1/key" copy`,
			"exec":       `"$1/run.sh"`,
			"sh script":  `sh "$1/run.sh"`,
			"symlink":    `cat link/key`,
			"file":       `cat "$2"`,
			"write":      `echo x > "$1/new"`,
			"write file": `echo x >> "$2"`,
			"mv":         `mv "$1" "$1.moved"`,
			"mv parent":  `mv "$(dirname "$1")" "$(dirname "$1").moved"`,
		} {
			out, _ := seatbeltRun(t, root, policy, script, secrets, single)
			assert.NotEqual(t, 0, out.ExitCode, "%s (network %v): stdout %q", name, network, out.Stdout)
			assert.NotContains(t, out.Stdout, "SECRET", name)
			assert.NotContains(t, out.Stdout, "TOKEN", name)
			assert.NotContains(t, out.Stdout, "ran", name)
		}
		out, err := seatbeltRun(t, root, policy, `cat "$1"`, sibling)
		require.NoError(t, err, "stderr: %s", out.Stderr)
		assert.Equal(t, "public\n", out.Stdout)
	}
	data, err := os.ReadFile(filepath.Join(secrets, "key"))
	require.NoError(t, err)
	assert.Equal(t, "SECRET\n", string(data))
	assert.NoFileExists(t, filepath.Join(root, "copy"))
}

// The profile of AllowedDomains is one this macOS accepts.
func TestSeatbeltProxyProfileAccepted(t *testing.T) {
	requireSeatbelt(t)
	require.NoError(t, seatbeltProxyUsable(context.Background()))
}
