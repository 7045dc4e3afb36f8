//go:build !darwin && !(linux && cgo)

package sandboxexec

import (
	"fmt"
	"runtime"
)

// PlatformSandbox reports SandboxNone: this OS (or, on Linux, a build without
// cgo) has no sandbox this package can apply.
func PlatformSandbox() SandboxType { return SandboxNone }

func platformRunner(t SandboxType, _ []string, _ SandboxPolicy) (runner, error) {
	return nil, fmt.Errorf("%w: %v is not available on %s", ErrSandboxUnavailable, t, unavailableWhy())
}

func unavailableWhy() string {
	if runtime.GOOS == "linux" {
		return "linux without cgo (the Linux sandbox needs cgo and libseccomp)"
	}
	return runtime.GOOS
}

func probeSandbox() SandboxSupport {
	return SandboxSupport{Sandbox: SandboxNone, Detail: "no sandbox on " + unavailableWhy()}
}
