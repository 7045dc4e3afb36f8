package sandboxexec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noneHelperEnv makes the test binary, run as a command, write the file
// its first argument names and print the file its second names: a command
// that works the same on every platform.
const noneHelperEnv = "SANDBOXEXEC_TEST_NONE_HELPER"

func TestNonePolicyHelperProcess(t *testing.T) {
	if os.Getenv(noneHelperEnv) != "1" {
		return
	}
	args := os.Args[len(os.Args)-2:]
	if err := os.WriteFile(args[0], []byte("written\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	data, err := os.ReadFile(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	os.Stdout.Write(data)
	os.Exit(0)
}

// noneHelper is the helper's command, writing write and printing read.
func noneHelper(t *testing.T, write, read string) (ExecParams, Option) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return ExecParams{Command: []string{exe, "-test.run=TestNonePolicyHelperProcess", "--", write, read}},
		WithEnv(append(os.Environ(), noneHelperEnv+"=1"))
}

// SandboxNone ignores ReadOnlySubpaths and DenyRead, as it ignores the
// writable roots, on every platform (Windows' PlatformSandbox is
// SandboxNone): the command writes .git and reads the denied file.
func TestNoneIgnoresFilesystemPolicy(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	secrets := t.TempDir()
	secret := filepath.Join(secrets, "key")
	require.NoError(t, os.WriteFile(secret, []byte("SECRET\n"), 0o600))
	hook := filepath.Join(root, ".git", "hook")

	params, env := noneHelper(t, hook, secret)
	for _, policy := range []SandboxPolicy{
		{},
		{ReadOnlySubpaths: []string{".git"}, DenyRead: []string{secrets, secret}},
		{FullDiskWriteAccess: true, NetworkAccess: true, DenyRead: []string{secrets}},
	} {
		require.NoError(t, os.RemoveAll(hook))
		out, err := ProcessExecToolCall(context.Background(), params, SandboxNone, []string{root}, policy, env)
		require.NoError(t, err, "%+v: stderr %s", policy, out.Stderr)
		assert.Equal(t, 0, out.ExitCode, "%+v: stderr %s", policy, out.Stderr)
		assert.Equal(t, "SECRET\n", out.Stdout, "%+v", policy)
		assert.FileExists(t, hook, "%+v", policy)
	}
}

// The policy is still checked under SandboxNone: a bad name or path is an
// error that names it, and AllowedDomains, which only a sandbox that
// confines the network can apply, fails with ErrSandboxUnavailable; nothing
// runs in either case.
func TestNoneRefusesBadPolicy(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(root, "ran")
	params, env := noneHelper(t, marker, marker)
	for _, tc := range []struct {
		policy      SandboxPolicy
		want        string
		unavailable bool
	}{
		{policy: SandboxPolicy{ReadOnlySubpaths: []string{"a/b"}}, want: `"a/b"`},
		{policy: SandboxPolicy{ReadOnlySubpaths: []string{""}}, want: "empty name"},
		{policy: SandboxPolicy{DenyRead: []string{"relative"}}, want: `"relative"`},
		{policy: SandboxPolicy{AllowedDomains: []string{"example.com"}}, want: "AllowedDomains", unavailable: true},
		{policy: SandboxPolicy{AllowedDomains: []string{"example.com"}, NetworkAccess: true}, want: "exclude each other"},
	} {
		out, err := ProcessExecToolCall(context.Background(), params, SandboxNone, []string{root}, tc.policy, env)
		require.Error(t, err, "%+v", tc.policy)
		assert.ErrorContains(t, err, tc.want, "%+v", tc.policy)
		if tc.unavailable {
			assert.ErrorIs(t, err, ErrSandboxUnavailable, "%+v", tc.policy)
		} else {
			assert.NotErrorIs(t, err, ErrSandboxUnavailable, "%+v", tc.policy)
		}
		assert.Equal(t, ExecToolCallOutput{}, out)
		assert.NoFileExists(t, marker, "%+v ran the command", tc.policy)
	}
}
