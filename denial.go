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

// offlinePhrases are what clients print when a name lookup fails. Where the
// policy gives no network that is the sandbox's doing, though no phrase
// above shows it: glibc's getaddrinfo reports its refused socket as
// EAI_AGAIN. With network, a name that does not exist prints the same.
var offlinePhrases = []string{
	"could not resolve host",               // curl, git
	"temporary failure in name resolution", // EAI_AGAIN: python, ssh, wget
	"eai_again",                            // node
}

// likelySandboxDenial is the one rule every sandboxed runner uses to call a
// failure a denial: see denialReason.
func likelySandboxDenial(out ExecToolCallOutput, offline bool) bool {
	return denialReason(out, offline) != ""
}

// denialReason says why out looks like the sandbox's doing, or "" where it
// does not: the command did not time out, exited non-zero, and either died
// of SIGSYS (a seccomp kill), or was refused a host by the call's proxy, or
// said, on stdout or stderr, something that a denied system call makes
// programs say, or, offline (the policy gives no network), that a name
// lookup failed. An exit code alone (2, 126, 127, or any other) is never
// enough.
func denialReason(out ExecToolCallOutput, offline bool) string {
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
	// A denial's own words first, on either stream, then a failed lookup.
	streams := []struct{ name, text string }{{"stderr", strings.ToLower(out.Stderr)}, {"stdout", strings.ToLower(out.Stdout)}}
	for _, s := range streams {
		for _, p := range denialPhrases {
			if strings.Contains(s.text, p) {
				return fmt.Sprintf("its %s says %q", s.name, p)
			}
		}
	}
	for _, s := range streams {
		for _, p := range offlinePhrases {
			if offline && strings.Contains(s.text, p) {
				return fmt.Sprintf("its %s says %q, and the sandbox lets it resolve no names", s.name, p)
			}
		}
	}
	return ""
}
