//go:build linux && cgo

package sandboxexec

// Real-kernel tests of SandboxLinuxSeccomp: every command below runs under
// the actual Landlock ruleset, seccomp filter and PID namespace, and every
// denial is checked by the errno the command saw.
//
// These tests change package state (forcedLandlockABI, pidNamespaceRefused)
// and so none of them calls t.Parallel.

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentbox/sandboxexec/internal/linuxspawn"
)

func TestLinuxSandboxEnv(t *testing.T) {
	requireSandbox(t)
	root := lxRealDir(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "SANDBOXEXEC_NETWORK_DISABLED=0", "TMPDIR=/tmp"}
	script := `echo "net=${SANDBOXEXEC_NETWORK_DISABLED-unset} sb=${SANDBOXEXEC_SANDBOX-unset} tmp=$TMPDIR"`

	out, err := lxRun(t, lxSh(script), []string{root, "/tmp"}, SandboxPolicy{}, WithEnv(env))
	lxRequireOK(t, out, err)
	assert.Equal(t, "net=1 sb=linux tmp=/tmp\n", out.Stdout)

	// An inherited value would claim a restriction that is not there.
	env[1] = "SANDBOXEXEC_NETWORK_DISABLED=1"
	out, err = lxRun(t, lxSh(script), []string{root, "/tmp"}, SandboxPolicy{NetworkAccess: true}, WithEnv(env))
	lxRequireOK(t, out, err)
	assert.Equal(t, "net=unset sb=linux tmp=/tmp\n", out.Stdout)

	// Nor may one claim a sandbox.
	out, err = ProcessExecToolCall(context.Background(), ExecParams{Command: lxSh(script)}, SandboxNone, nil, SandboxPolicy{},
		WithEnv(append(env, "SANDBOXEXEC_SANDBOX=linux")))
	require.NoError(t, err)
	assert.Equal(t, "net=unset sb=unset tmp=/tmp\n", out.Stdout)
}

func TestLinuxDenialClassification(t *testing.T) {
	s := requireSandbox(t)
	roots := []string{t.TempDir()}
	var denied *SandboxDeniedError

	for _, code := range []int{3, 126} {
		out, err := lxRun(t, lxSh("exit "+strconv.Itoa(code)), roots, SandboxPolicy{})
		require.NoError(t, err, "exit %d", code)
		assert.Equal(t, code, out.ExitCode)
	}

	// A timeout never counts, even with a denial message in the output.
	out, err := lxRunParams(t, ExecParams{
		Command:   lxSh(`echo "sh: x: Permission denied" >&2; exec sleep 5`),
		TimeoutMs: ptrU64Linux(200),
	}, roots, SandboxPolicy{})
	require.NoError(t, err)
	assert.True(t, out.TimedOut)
	assert.False(t, errors.As(err, &denied))

	// A seccomp kill: an x32 system call is of a foreign ABI, which the
	// filter answers by killing the process with SIGSYS.
	if runtime.GOARCH == "amd64" {
		out, err = lxRun(t, lxPy(t, `libc.syscall(0x40000000 | 39)
print("survived")`), roots, SandboxPolicy{})
		lxRequireDeniedSignal(t, out, err)
		assert.NotContains(t, out.Stdout, "survived")
	}

	// A shell whose child died of SIGSYS says "Bad system call".
	out, err = lxRun(t, lxSh(`sh -c 'kill -SYS $$'; exit $?`), roots, SandboxPolicy{})
	lxRequireDenied(t, out, err)
	assert.Equal(t, 128+int(syscall.SIGSYS), out.ExitCode)
	assert.Empty(t, out.Signal)
	assert.Contains(t, out.Stderr, "Bad system call")

	// A command that signals itself. With a PID namespace the command is
	// pid 1 of it, and pid 1 ignores a signal it has no handler for when
	// it comes from inside its namespace: the shell survives its own
	// kill -SYS. Without the namespace it dies of it, and that is a denial.
	if s.PIDNamespace {
		out, err = lxRun(t, lxSh(`kill -SYS $$; echo "survived as pid $$"`), roots, SandboxPolicy{})
		t.Logf("sh -c 'kill -SYS $$' as pid 1 of its namespace: exit %d, signal %q, stdout %q, err %v",
			out.ExitCode, out.Signal, out.Stdout, err)
	}
	t.Run("self-signal without PID namespace", func(t *testing.T) {
		lxWithoutPIDNamespace(t)
		out, err := lxRun(t, lxSh(`kill -SYS $$; echo survived`), roots, SandboxPolicy{})
		lxRequireDeniedSignal(t, out, err)
		assert.Empty(t, out.Stdout)
	})
}

// A step of the child that confines the command and fails is
// ErrSandboxUnavailable; a mistake the plain runner would report too keeps
// that runner's error.
func TestLinuxSpawnErrorKinds(t *testing.T) {
	req := &spawnRequest{path: "/bin/prog", dir: "/work"}
	for _, stage := range []string{"close_range", "cgroup", "setrlimit", "pdeathsig", "scheduling", "no_new_privs",
		"landlock_restrict_self", "capabilities", "seccomp"} {
		err := spawnError(req, &linuxspawn.StageError{Stage: stage, Err: syscall.EPERM}, false)
		assert.ErrorIs(t, err, ErrSandboxUnavailable, stage)
		assert.ErrorContains(t, err, stage)
	}
	for _, stage := range []string{"setsid", "dup2", "signals", "clone", "stack"} {
		for _, namespaces := range []bool{false, true} {
			err := spawnError(req, &linuxspawn.StageError{Stage: stage, Err: syscall.ENOMEM}, namespaces)
			assert.NotErrorIs(t, err, ErrSandboxUnavailable, stage)
			assert.ErrorIs(t, err, syscall.ENOMEM, stage)
		}
	}
	// A mount or network namespace clone refuses at call time, though the
	// probe had it (found in review: a plain start error).
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS} {
		err := spawnError(req, &linuxspawn.StageError{Stage: "clone", Err: errno}, true)
		assert.ErrorIs(t, err, ErrSandboxUnavailable, "%v", errno)
		assert.ErrorContains(t, err, "namespace")
		err = spawnError(req, &linuxspawn.StageError{Stage: "clone", Err: errno}, false)
		assert.NotErrorIs(t, err, ErrSandboxUnavailable, "%v", errno)
	}
	err := spawnError(req, &linuxspawn.StageError{Stage: "execve", Err: syscall.ENOENT}, false)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "/bin/prog")
	err = spawnError(req, &linuxspawn.StageError{Stage: "chdir", Err: syscall.ENOENT}, false)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "/work")
}
