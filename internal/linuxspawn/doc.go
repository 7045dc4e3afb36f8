// Package linuxspawn starts a child process on Linux with its restrictions
// (session, stdio, working directory, resource limits, parent-death signal,
// no_new_privs, Landlock and seccomp) applied between clone and execve, in C,
// so that no Go code and no library code runs in the child and the command
// is confined from its first instruction.
//
// The child is cloned with CLONE_VM|CLONE_VFORK on a stack of its own, as
// posix_spawn does, so the cost of a spawn does not grow with the size of the
// host's heap. It is cloned from one of a few long-lived threads that the
// package creates in C (so never the main thread, nor a thread Go runs
// goroutines on) and that carry the seccomp filter and the shrunk capability
// bounding set, so that each is applied once per thread rather than once per
// child. The package is empty on other systems and without cgo.
package linuxspawn
