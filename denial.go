package sandboxexec

import "strings"

// denialPhrases are what commands print when the sandbox refused them
// something, in lower case.
var denialPhrases = []string{
	"operation not permitted",
	"permission denied",
	"read-only file system",
	"bad system call",
}

// likelySandboxDenial is the one rule every sandboxed runner uses to call a
// failure a denial: the command did not time out, exited non-zero, and either
// died of SIGSYS (a seccomp kill), or was refused a host by the call's proxy,
// or said, on stdout or stderr, something that a denied system call makes
// programs say. An exit code alone (2, 126, 127, or any other) is never
// enough.
func likelySandboxDenial(out ExecToolCallOutput) bool {
	if out.TimedOut || out.ExitCode == 0 {
		return false
	}
	if out.Signal == "SIGSYS" || len(out.DeniedHosts) > 0 {
		return true
	}
	for _, text := range []string{out.Stderr, out.Stdout} {
		lower := strings.ToLower(text)
		for _, p := range denialPhrases {
			if strings.Contains(lower, p) {
				return true
			}
		}
	}
	return false
}
