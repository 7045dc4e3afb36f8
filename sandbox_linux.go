package sandboxexec

import "fmt"

// PlatformSandbox reports SandboxLinuxSeccomp.
func PlatformSandbox() SandboxType { return SandboxLinuxSeccomp }

func platformRunner(t SandboxType, writableRoots []string, policy SandboxPolicy) (runner, error) {
	return nil, fmt.Errorf("%w: %v is not implemented yet", ErrSandboxUnavailable, t)
}
