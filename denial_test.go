package sandboxexec

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSandboxDeniedErrorSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		out     ExecToolCallOutput
		offline bool
		want    string // "" for no denial
	}{
		{ExecToolCallOutput{ExitCode: 0, Stderr: "permission denied"}, false, ""},
		{ExecToolCallOutput{ExitCode: TimeoutExitCode, TimedOut: true, Stderr: "permission denied"}, false, ""},
		{ExecToolCallOutput{ExitCode: 126}, false, ""},
		{ExecToolCallOutput{ExitCode: 159, Signal: "SIGSYS"}, false,
			"sandboxexec: command killed by SIGSYS, likely denied by the sandbox: a system call the sandbox refuses"},
		{ExecToolCallOutput{ExitCode: 56, DeniedHosts: []string{"example.com:443"}}, false,
			"sandboxexec: command exited with code 56, likely denied by the sandbox: the proxy refused example.com:443"},
		{ExecToolCallOutput{ExitCode: 1, DeniedHosts: []string{"a.test:80", "b.test:80", "c.test:443"}}, false,
			"sandboxexec: command exited with code 1, likely denied by the sandbox: the proxy refused a.test:80 and 2 more"},
		{ExecToolCallOutput{ExitCode: 2, Stderr: "sh: 1: cannot create ../x: Read-only file system\n"}, false,
			`sandboxexec: command exited with code 2, likely denied by the sandbox: its stderr says "read-only file system"`},
		{ExecToolCallOutput{ExitCode: 1, Stdout: "touch: Permission denied"}, false,
			`sandboxexec: command exited with code 1, likely denied by the sandbox: its stdout says "permission denied"`},
		// A failed name lookup is the sandbox's only where the policy
		// gives no network.
		{ExecToolCallOutput{ExitCode: 6, Stderr: "curl: (6) Could not resolve host: example.com\n"}, false, ""},
		{ExecToolCallOutput{ExitCode: 6, Stderr: "curl: (6) Could not resolve host: example.com\n"}, true,
			`sandboxexec: command exited with code 6, likely denied by the sandbox: its stderr says "could not resolve host", and the sandbox lets it resolve no names`},
		{ExecToolCallOutput{ExitCode: 1, Stdout: "<urlopen error [Errno -3] Temporary failure in name resolution>"}, true,
			`sandboxexec: command exited with code 1, likely denied by the sandbox: its stdout says "temporary failure in name resolution", and the sandbox lets it resolve no names`},
		{ExecToolCallOutput{ExitCode: 1, Stderr: "getaddrinfo EAI_AGAIN registry.npmjs.org"}, true,
			`sandboxexec: command exited with code 1, likely denied by the sandbox: its stderr says "eai_again", and the sandbox lets it resolve no names`},
		{ExecToolCallOutput{ExitCode: 0, Stderr: "Could not resolve host: example.com"}, true, ""},
		// A denial phrase is named before a failed lookup, stderr first.
		{ExecToolCallOutput{ExitCode: 1, Stderr: "Could not resolve host", Stdout: "Permission denied"}, true,
			`sandboxexec: command exited with code 1, likely denied by the sandbox: its stdout says "permission denied"`},
	} {
		assert.Equal(t, tc.want != "", likelySandboxDenial(tc.out, tc.offline), "%+v", tc.out)
		if tc.want != "" {
			assert.Equal(t, tc.want, (&SandboxDeniedError{Output: tc.out, offline: tc.offline}).Error())
		}
	}
}
