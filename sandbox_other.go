//go:build !darwin && !(linux && cgo)

package sandboxexec

import (
	"context"
	"fmt"
	"runtime"
)

// platformSandbox is SandboxNone where this OS has no sandbox this package
// can apply, but SandboxLinuxSeccomp on Linux without cgo: a call under it
// then fails, rather than running the command unconfined.
func platformSandbox() SandboxType {
	if runtime.GOOS == "linux" {
		return SandboxLinuxSeccomp
	}
	return SandboxNone
}

func platformRunner(_ context.Context, t SandboxType, _ []string, _ SandboxPolicy) (runner, error) {
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

// plainCallOver is called once a SandboxNone call is over; nothing here
// keeps state that an unconfined command could have changed.
func plainCallOver() {}
