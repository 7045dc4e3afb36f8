package sandboxexec

import "fmt"

// PlatformSandbox reports SandboxMacosSeatbelt.
func PlatformSandbox() SandboxType { return SandboxMacosSeatbelt }

func platformRunner(t SandboxType, writableRoots []string, policy SandboxPolicy) (runner, error) {
	return nil, fmt.Errorf("%w: %v is not implemented yet", ErrSandboxUnavailable, t)
}
