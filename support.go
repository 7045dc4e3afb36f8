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
	// (always 0 off Linux, and in a build without cgo, which has no
	// sandbox: Detail says so).
	LandlockABI int
	// Seccomp says the seccomp filter can be built and loaded (Linux).
	Seccomp bool
	// PIDNamespace says each sandboxed call runs in a PID namespace of its
	// own, so nothing it starts outlives it (Linux, with CAP_SYS_ADMIN).
	PIDNamespace bool
	// IPCNamespace says each sandboxed call runs in an IPC namespace of its
	// own: the host's System V IPC objects, and the POSIX message queues
	// that mq_open finds by name, are out of its reach (Linux, with
	// CAP_SYS_ADMIN; without, a call that gets a user namespace gets one
	// in it). A mounted mqueue filesystem (/dev/mqueue) still lets it open
	// the host's queues for reading, and so take their messages.
	IPCNamespace bool
	// MountNamespace says a call can get a mount namespace of its own
	// (Linux: as root, or through a user namespace), which ReadOnlySubpaths
	// and DenyRead need, and which keeps a root command from changing
	// anything outside the writable roots, metadata included.
	MountNamespace bool
	// NetworkNamespace says a call can get a network namespace of its own
	// (Linux), which AllowedDomains needs.
	NetworkNamespace bool
	// ProcessLimit says SandboxPolicy.MaxProcesses (DefaultMaxProcesses
	// where it is zero) binds (Linux): each call has a pids cgroup, or else
	// the host's user is not root, whom RLIMIT_NPROC does not bind. A root
	// host that may not make pids cgroups runs every call without a
	// process limit.
	ProcessLimit bool
	// Detail says what is missing, when anything is.
	Detail string
}

// ProbeSandbox reports what the platform sandbox can enforce here.
func ProbeSandbox() SandboxSupport { return probeSandbox() }
