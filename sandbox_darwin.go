package sandboxexec

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	proxyPort := 0
	if len(policy.AllowedDomains) > 0 {
		if err := seatbeltProxyUsable(ctx); err != nil {
			return nil, fmt.Errorf("%w: AllowedDomains: %v", ErrSandboxUnavailable, err)
		}
		// A stand-in: each start listens anew and puts its own port in.
		proxyPort = 9
	}
	r, err := newSeatbeltRunner(writableRoots, policy, proxyPort)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// seatbeltUsable checks that sandbox-exec can apply this package's profiles
// here: with a writable root and without network, and with network, each
// with the rules of the filesystem policy. It cannot where this process
// already runs in a sandbox (under another agent's): it then prints
// "sandbox_apply: Operation not permitted" and exits 71 without running the
// command; nor where this macOS rejects a rule of the profile (exit 65).
// Either would otherwise read as the command's failure, and as a denial, on
// every call. The answer is kept, unless the check could not be made just
// then (no process or descriptor to be had, or sandbox-exec took longer
// than seatbeltCheckTime): the next call asks again. A call waits for the
// check until ctx is done at most.
func seatbeltUsable(ctx context.Context) error {
	_, err := seatbeltChecked.Get(ctx, func() (struct{}, error) {
		return struct{}{}, checkSeatbelt(seatbeltCheckProfiles(false))
	})
	return err
}

// seatbeltProxyUsable is seatbeltUsable for the profile of AllowedDomains,
// checked apart so that a macOS that rejects only its rule fails only the
// calls that need it.
func seatbeltProxyUsable(ctx context.Context) error {
	_, err := seatbeltProxyChecked.Get(ctx, func() (struct{}, error) {
		return struct{}{}, checkSeatbelt(seatbeltCheckProfiles(true))
	})
	return err
}

var seatbeltChecked, seatbeltProxyChecked probe.Result[struct{}]

// seatbeltCheckTime bounds each of the check's runs of /usr/bin/true.
const seatbeltCheckTime = 5 * time.Second

// seatbeltCheckProfiles are the argvs the check runs: every kind of rule a
// call's profile may hold. The paths need not exist: Seatbelt only matches
// them.
func seatbeltCheckProfiles(proxy bool) [][]string {
	tmp := os.TempDir()
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	masked := seatbeltParams{
		roots:         []string{tmp},
		readOnlyDirs:  []string{filepath.Join(tmp, "sandboxexec-check", ".git")},
		readOnlyFiles: []string{filepath.Join(tmp, "sandboxexec-check", ".hg")},
		denyDirs:      []string{filepath.Join(tmp, "sandboxexec-check", "secrets")},
		denyFiles:     []string{filepath.Join(tmp, "sandboxexec-check", "secret")},
		pinned:        []string{filepath.Join(tmp, "sandboxexec-check")},
	}
	var policies []SandboxPolicy
	var params []seatbeltParams
	if proxy {
		masked.proxyPort = 9 // the port is only matched
		policies = []SandboxPolicy{{AllowedDomains: []string{"example.com"}}}
		params = []seatbeltParams{masked}
	} else {
		policies = []SandboxPolicy{{}, {NetworkAccess: true, FullDiskWriteAccess: true}}
		params = []seatbeltParams{{roots: []string{tmp}}, masked}
	}
	var out [][]string
	for i, policy := range policies {
		out = append(out, append(seatbeltArgv(params[i], policy), "--", "/usr/bin/true"))
	}
	return out
}

func checkSeatbelt(argvs [][]string) error {
	fi, err := os.Stat(seatbeltExecutable)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", seatbeltExecutable)
	}
	for _, argv := range argvs {
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

// plainCallOver is called once a SandboxNone call is over; nothing here
// keeps state that an unconfined command could have changed.
func plainCallOver() {}
