//go:build darwin

package sandboxexec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func requireSeatbelt(t *testing.T) {
	t.Helper()
	if err := seatbeltUsable(context.Background()); err != nil {
		if os.Getenv("SANDBOXEXEC_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("SANDBOXEXEC_REQUIRE_SANDBOX=1 but: %v", err)
		}
		t.Skip(err)
	}
	s := ProbeSandbox()
	require.True(t, s.Available, s.Detail)
}

// Temporary files work with the default policy: TMPDIR, under /var/folders,
// is not writable, so the command gets one of its own (bash writes
// here-documents to temporary files).
func TestSeatbeltTempFiles(t *testing.T) {
	requireSeatbelt(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	params := ExecParams{Command: []string{"/bin/bash", "-c", "cat <<EOF\nheredoc\nEOF\nf=$(mktemp) && echo x > \"$f\" && case \"$f\" in \"$TMPDIR\"/*) echo in-tmpdir;; esac"}}
	out, err := ProcessExecToolCall(context.Background(), params, SandboxMacosSeatbelt, []string{root}, SandboxPolicy{})
	require.NoError(t, err, "stderr: %s", out.Stderr)
	assert.Equal(t, "heredoc\nin-tmpdir\n", out.Stdout)
}

func TestSeatbeltPlatform(t *testing.T) {
	assert.Equal(t, SandboxMacosSeatbelt, PlatformSandbox())
	_, err := ProcessExecToolCall(context.Background(), ExecParams{Command: []string{"/usr/bin/true"}},
		SandboxLinuxSeccomp, nil, SandboxPolicy{})
	assert.ErrorIs(t, err, ErrSandboxUnavailable)
}

func TestSeatbeltWriteInsideRoot(t *testing.T) {
	requireSeatbelt(t)
	root := t.TempDir() // below /var/folders, which is /private/var/folders
	target := filepath.Join(root, "sub", "inside.txt")
	// Writes inside the root (found through the /var -> /private/var link),
	// and to /dev/null, which the base policy allows.
	params := ExecParams{
		Command: []string{"/bin/sh", "-c", `mkdir sub && echo written > sub/inside.txt && cat sub/inside.txt && echo $SANDBOXEXEC_SANDBOX $SANDBOXEXEC_NETWORK_DISABLED && echo x > /dev/null`},
		Workdir: root,
	}
	out, err := ProcessExecToolCall(context.Background(), params, SandboxMacosSeatbelt, []string{root}, SandboxPolicy{})
	require.NoError(t, err, "stderr: %s", out.Stderr)
	assert.Equal(t, 0, out.ExitCode, "stderr: %s", out.Stderr)
	assert.Equal(t, "written\nseatbelt 1\n", out.Stdout)
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "written\n", string(data))
}

func TestSeatbeltWriteOutsideRootFails(t *testing.T) {
	requireSeatbelt(t)
	root := t.TempDir()
	realRoot, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	name := fmt.Sprintf("sandboxexec-probe-%d-%d", os.Getpid(), time.Now().UnixNano())

	var outside []string
	if home, err := os.UserHomeDir(); err == nil {
		if realHome, err := filepath.EvalSymlinks(home); err == nil && !strings.HasPrefix(realRoot+"/", realHome+"/") {
			outside = append(outside, filepath.Join(realHome, name))
		}
	}
	outside = append(outside, filepath.Join("/private/tmp", name), filepath.Join("/tmp", name+"-via-link"))
	for _, path := range outside {
		t.Run(path, func(t *testing.T) {
			t.Cleanup(func() { os.Remove(path) })
			params := ExecParams{Command: []string{"/bin/sh", "-c", `echo leaked > "$1"`, "sh", path}}
			out, err := ProcessExecToolCall(context.Background(), params, SandboxMacosSeatbelt, []string{root}, SandboxPolicy{})
			assert.NotEqual(t, 0, out.ExitCode)
			var denied *SandboxDeniedError
			assert.True(t, errors.As(err, &denied), "want a SandboxDeniedError, got %v (stderr %q)", err, out.Stderr)
			_, statErr := os.Lstat(path)
			assert.True(t, errors.Is(statErr, os.ErrNotExist), "%s was written", path)
		})
	}
}

func TestSeatbeltFullDiskWrite(t *testing.T) {
	requireSeatbelt(t)
	path := filepath.Join("/private/tmp", fmt.Sprintf("sandboxexec-full-%d-%d", os.Getpid(), time.Now().UnixNano()))
	t.Cleanup(func() { os.Remove(path) })
	params := ExecParams{Command: []string{"/bin/sh", "-c", `echo ok > "$1"`, "sh", path}}
	out, err := ProcessExecToolCall(context.Background(), params, SandboxMacosSeatbelt, nil, SandboxPolicy{FullDiskWriteAccess: true})
	require.NoError(t, err, "stderr: %s", out.Stderr)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "ok\n", string(data))
}

// seatbeltListen accepts connections on 127.0.0.1 and counts them.
func seatbeltListen(t *testing.T) (port string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	ch := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			ch <- struct{}{}
		}
	}()
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, ch
}

// seatbeltConnectScript opens a TCP connection through bash's /dev/tcp,
// which needs no other program.
const seatbeltConnectScript = `exec 3<>/dev/tcp/127.0.0.1/"$1" && echo connected`

func TestSeatbeltNetworkDenied(t *testing.T) {
	requireSeatbelt(t)
	port, accepted := seatbeltListen(t)
	params := ExecParams{Command: []string{"/bin/bash", "-c", seatbeltConnectScript, "bash", port}}
	out, err := ProcessExecToolCall(context.Background(), params, SandboxMacosSeatbelt, nil, SandboxPolicy{})
	assert.NotEqual(t, 0, out.ExitCode, "stdout %q", out.Stdout)
	assert.NotContains(t, out.Stdout, "connected")
	var denied *SandboxDeniedError
	assert.True(t, errors.As(err, &denied), "want a SandboxDeniedError, got %v (stderr %q)", err, out.Stderr)
	select {
	case <-accepted:
		t.Fatal("the listener accepted a connection from the sandbox")
	case <-time.After(200 * time.Millisecond):
	}
}

func TestSeatbeltNetworkAllowed(t *testing.T) {
	requireSeatbelt(t)
	port, accepted := seatbeltListen(t)
	params := ExecParams{Command: []string{"/bin/bash", "-c", seatbeltConnectScript + ` && echo "[$SANDBOXEXEC_NETWORK_DISABLED]"`, "bash", port}}
	out, err := ProcessExecToolCall(context.Background(), params, SandboxMacosSeatbelt, nil, SandboxPolicy{NetworkAccess: true})
	require.NoError(t, err, "stderr: %s", out.Stderr)
	assert.Equal(t, "connected\n[]\n", out.Stdout)
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("no connection reached the listener")
	}
}

func TestSeatbeltTimeoutKillsTree(t *testing.T) {
	requireSeatbelt(t)
	// The shell starts a background sleep and a foreground one; both must be
	// gone when the call returns.
	timeout := uint64(1000)
	params := ExecParams{
		Command:   []string{"/bin/sh", "-c", `/bin/sleep 60 & echo $!; echo $$; /bin/sleep 60`},
		TimeoutMs: &timeout,
	}
	start := time.Now()
	out, err := ProcessExecToolCall(context.Background(), params, SandboxMacosSeatbelt, nil, SandboxPolicy{})
	require.NoError(t, err)
	assert.True(t, out.TimedOut)
	assert.Equal(t, TimeoutExitCode, out.ExitCode)
	assert.Less(t, time.Since(start), 20*time.Second)

	fields := strings.Fields(out.Stdout)
	require.Len(t, fields, 2, "stdout %q", out.Stdout)
	for _, f := range fields {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		deadline := time.Now().Add(5 * time.Second)
		for {
			// The orphans are reaped by launchd soon after they die.
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process %d outlived the call", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
