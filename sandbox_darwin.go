package sandboxexec

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/agentbox/sandboxexec/internal/probe"
)

func platformSandbox() SandboxType { return SandboxMacosSeatbelt }

func platformRunner(ctx context.Context, t SandboxType, writableRoots []string, policy SandboxPolicy) (runner, error) {
	if t != SandboxMacosSeatbelt {
		return nil, fmt.Errorf("%w: %v is not available on macOS", ErrSandboxUnavailable, t)
	}
	if err := seatbeltUsable(ctx); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSandboxUnavailable, err)
	}
	r, err := newSeatbeltRunner(writableRoots, policy)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// seatbeltUsable checks that sandbox-exec can apply this package's profiles
// here: with a writable root and without network, and with network. It
// cannot where this process already runs in a sandbox (under another
// agent's): it then prints "sandbox_apply: Operation not permitted" and
// exits 71 without running the command; nor where this macOS rejects a rule
// of the profile (exit 65). Either would otherwise read as the command's
// failure, and as a denial, on every call. The answer is kept, unless the
// check could not be made just then (no process or descriptor to be had,
// or sandbox-exec took longer than seatbeltCheckTime): the next call asks
// again. A call waits for the check until ctx is done at most.
func seatbeltUsable(ctx context.Context) error {
	_, err := seatbeltChecked.Get(ctx, func() (struct{}, error) { return struct{}{}, checkSeatbelt() })
	return err
}

var seatbeltChecked probe.Result[struct{}]

// seatbeltCheckTime bounds each of the check's two runs of /usr/bin/true.
const seatbeltCheckTime = 5 * time.Second

func checkSeatbelt() error {
	fi, err := os.Stat(seatbeltExecutable)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", seatbeltExecutable)
	}
	for _, policy := range []SandboxPolicy{{}, {NetworkAccess: true}} {
		argv, err := CreateSeatbeltCommand([]string{"/usr/bin/true"}, []string{os.TempDir()}, policy)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), seatbeltCheckTime)
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
		cancel()
		if ctx.Err() != nil {
			return fmt.Errorf("%s did not run /usr/bin/true within %v: %w", seatbeltExecutable, seatbeltCheckTime, ctx.Err())
		}
		if err != nil {
			if _, ran := err.(*exec.ExitError); !ran {
				return fmt.Errorf("%s: %w", seatbeltExecutable, err) // fork or exec failed
			}
			return fmt.Errorf("%s cannot apply the profile here (is this process sandboxed already?): %v: %s",
				seatbeltExecutable, err, bytes.TrimSpace(out))
		}
	}
	return nil
}

func probeSandbox() SandboxSupport {
	s := SandboxSupport{Sandbox: SandboxMacosSeatbelt, Available: true}
	if err := seatbeltUsable(context.Background()); err != nil {
		s.Available, s.Detail = false, err.Error()
	}
	return s
}
