package sandboxexec

import (
	"fmt"
	"strings"
)

// denialPhrases are what commands print when the sandbox refused them
// something, in lower case.
var denialPhrases = []string{
	"operation not permitted",
	"permission denied",
	"read-only file system",
	"bad system call",
}

// likelySandboxDenial is the one rule every sandboxed runner uses to call a
// failure a denial: see denialReason.
func likelySandboxDenial(out ExecToolCallOutput) bool { return denialReason(out) != "" }

// denialReason says why out looks like the sandbox's doing, or "" where it
// does not: the command did not time out, exited non-zero, and either died
// of SIGSYS (a seccomp kill), or was refused a host by the call's proxy, or
// said, on stdout or stderr, something that a denied system call makes
// programs say. An exit code alone (2, 126, 127, or any other) is never
// enough.
func denialReason(out ExecToolCallOutput) string {
	if out.TimedOut || out.ExitCode == 0 {
		return ""
	}
	if out.Signal == "SIGSYS" {
		return "a system call the sandbox refuses"
	}
	if n := len(out.DeniedHosts); n > 0 {
		if n == 1 {
			return "the proxy refused " + out.DeniedHosts[0]
		}
		return fmt.Sprintf("the proxy refused %s and %d more", out.DeniedHosts[0], n-1)
	}
	for _, s := range []struct{ name, text string }{{"stderr", out.Stderr}, {"stdout", out.Stdout}} {
		lower := strings.ToLower(s.text)
		for _, p := range denialPhrases {
			if strings.Contains(lower, p) {
				return fmt.Sprintf("its %s says %q", s.name, p)
			}
		}
	}
	return ""
}
