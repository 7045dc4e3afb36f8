//go:build linux && cgo

package landlock

import (
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/agentbox/sandboxexec/internal/linuxspawn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// This test starts its child through linuxspawn, which needs cgo.

// The ruleset denies the network on its own, without the seccomp filter that
// refuses the same calls first in the sandbox: TCP connect and bind (ABI 4)
// and, from ABI 6, connecting to an abstract UNIX socket outside.
func TestRulesetAloneDeniesNetwork(t *testing.T) {
	abi := kernelABI(t)
	if abi < 4 {
		t.Skipf("Landlock ABI %d has no network rights", abi)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer tcp.Close()
	abstract, err := net.Listen("unix", "@sandboxexec-landlock-test-"+strconv.Itoa(os.Getpid()))
	require.NoError(t, err)
	defer abstract.Close()

	fd, err := Build(abi, Rules{DenyNetwork: true})
	require.NoError(t, err)
	defer unix.Close(fd)
	script := `
import errno, socket, sys
def attempt(label, family, kind, addr, op):
    s = socket.socket(family, kind)
    try:
        getattr(s, op)(addr)
        print(label + "=OK")
    except OSError as e:
        print(label + "=" + errno.errorcode[e.errno])
attempt("connect", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", int(sys.argv[1])), "connect")
attempt("bind", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0), "bind")
attempt("abstract", socket.AF_UNIX, socket.SOCK_STREAM, "\0" + sys.argv[2][1:], "connect")
`
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	pid, err := linuxspawn.Start(&linuxspawn.Attr{
		Path:              python,
		Argv:              []string{"python3", "-c", script, strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port), abstract.Addr().String()},
		Env:               []string{"PATH=/usr/bin:/bin"},
		Stdio:             [3]int{int(null.Fd()), int(w.Fd()), int(w.Fd())},
		CgroupProcsFD:     -1,
		NoNewPrivs:        true,
		LandlockRulesetFD: fd,
	})
	w.Close()
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	var ws unix.WaitStatus
	_, err = unix.Wait4(pid, &ws, 0, nil)
	require.NoError(t, err)

	assert.Contains(t, string(out), "connect=EACCES", "output: %s", out)
	assert.Contains(t, string(out), "bind=EACCES", "output: %s", out)
	if abi >= 6 {
		assert.Contains(t, string(out), "abstract=EPERM", "output: %s", out)
	}
}
