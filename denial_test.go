package sandboxexec

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSandboxDeniedErrorSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		out  ExecToolCallOutput
		want string // "" for no denial
	}{
		{ExecToolCallOutput{ExitCode: 0, Stderr: "permission denied"}, ""},
		{ExecToolCallOutput{ExitCode: TimeoutExitCode, TimedOut: true, Stderr: "permission denied"}, ""},
		{ExecToolCallOutput{ExitCode: 126}, ""},
		{ExecToolCallOutput{ExitCode: 159, Signal: "SIGSYS"},
			"sandboxexec: command killed by SIGSYS, likely denied by the sandbox: a system call the sandbox refuses"},
		{ExecToolCallOutput{ExitCode: 56, DeniedHosts: []string{"example.com:443"}},
			"sandboxexec: command exited with code 56, likely denied by the sandbox: the proxy refused example.com:443"},
		{ExecToolCallOutput{ExitCode: 1, DeniedHosts: []string{"a.test:80", "b.test:80", "c.test:443"}},
			"sandboxexec: command exited with code 1, likely denied by the sandbox: the proxy refused a.test:80 and 2 more"},
		{ExecToolCallOutput{ExitCode: 2, Stderr: "sh: 1: cannot create ../x: Read-only file system\n"},
			`sandboxexec: command exited with code 2, likely denied by the sandbox: its stderr says "read-only file system"`},
		{ExecToolCallOutput{ExitCode: 1, Stdout: "touch: Permission denied"},
			`sandboxexec: command exited with code 1, likely denied by the sandbox: its stdout says "permission denied"`},
	} {
		assert.Equal(t, tc.want != "", likelySandboxDenial(tc.out), "%+v", tc.out)
		if tc.want != "" {
			assert.Equal(t, tc.want, (&SandboxDeniedError{Output: tc.out}).Error())
		}
	}
}
