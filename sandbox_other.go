//go:build !darwin && !(linux && cgo)

package sandboxexec

import (
	"fmt"
	"runtime"
)

// PlatformSandbox reports SandboxNone where this OS has no sandbox this
// package can apply. On Linux it reports SandboxLinuxSeccomp even in a build
// without cgo, which cannot apply it: a call under it then fails with
// ErrSandboxUnavailable, rather than running the command unconfined.
func PlatformSandbox() SandboxType {
	if runtime.GOOS == "linux" {
		return SandboxLinuxSeccomp
	}
	return SandboxNone
}

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
	return SandboxSupport{Sandbox: PlatformSandbox(), Detail: "no sandbox on " + unavailableWhy()}
}
