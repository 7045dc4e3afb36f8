//go:build !linux && !darwin

package sandboxexec

import "fmt"

// PlatformSandbox reports SandboxNone: this OS has no sandbox this package
// can apply.
func PlatformSandbox() SandboxType { return SandboxNone }

func platformRunner(t SandboxType, _ []string, _ SandboxPolicy) (runner, error) {
	return nil, fmt.Errorf("%w: %v is not available on this OS", ErrSandboxUnavailable, t)
}
