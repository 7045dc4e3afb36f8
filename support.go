package sandboxexec

// MinLandlockABI is the lowest Landlock ABI with which SandboxLinuxSeccomp
// enforces its filesystem rules without a gap: ABI 3 is the first to cover
// truncate(2). On an older kernel the call fails with ErrSandboxUnavailable
// unless the policy asks for BestEffort. Rights of later ABIs (TCP rules at
// 4, device ioctl at 5, signal and abstract-socket scoping at 6) are used
// whenever the kernel has them.
const MinLandlockABI = 3

// SandboxSupport is what this machine can enforce, for diagnostics and tests.
type SandboxSupport struct {
	// Sandbox is PlatformSandbox().
	Sandbox SandboxType
	// Available says the zero SandboxPolicy can be enforced in full.
	Available bool
	// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock
	// (always 0 off Linux).
	LandlockABI int
	// Seccomp says the seccomp filter can be built and loaded (Linux).
	Seccomp bool
	// PIDNamespace says each sandboxed call runs in a PID namespace and an
	// IPC namespace of its own, so that nothing it starts outlives it and
	// it cannot reach the host's System V IPC objects or POSIX message
	// queues (Linux, with CAP_SYS_ADMIN).
	PIDNamespace bool
	// Detail says what is missing, when anything is.
	Detail string
}

// ProbeSandbox reports what the platform sandbox can enforce here.
func ProbeSandbox() SandboxSupport { return probeSandbox() }
