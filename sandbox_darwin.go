package sandboxexec

import (
	"fmt"
	"os"
)

// PlatformSandbox reports SandboxMacosSeatbelt.
func PlatformSandbox() SandboxType { return SandboxMacosSeatbelt }

func platformRunner(t SandboxType, writableRoots []string, policy SandboxPolicy) (runner, error) {
	if t != SandboxMacosSeatbelt {
		return nil, fmt.Errorf("%w: %v is not available on macOS", ErrSandboxUnavailable, t)
	}
	fi, err := os.Stat(seatbeltExecutable)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSandboxUnavailable, err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("%w: %s is not executable", ErrSandboxUnavailable, seatbeltExecutable)
	}
	r, err := newSeatbeltRunner(writableRoots, policy)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func probeSandbox() SandboxSupport {
	s := SandboxSupport{Sandbox: SandboxMacosSeatbelt, Available: true}
	if fi, err := os.Stat(seatbeltExecutable); err != nil || fi.IsDir() {
		s.Available, s.Detail = false, seatbeltExecutable+" is missing"
	}
	return s
}
