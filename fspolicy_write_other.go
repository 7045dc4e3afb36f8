//go:build !unix

package sandboxexec

// hostMayWrite is the Unix one's stand-in: no sandbox here has a policy
// whose masks it would change.
func hostMayWrite(string) bool { return false }
