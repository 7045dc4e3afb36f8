//go:build linux && cgo

package sandboxexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentbox/sandboxexec"
)

// The README's quick start: a tool call as the model sent it, run in this
// OS's sandbox with the project as its one writable root. The write in the
// project works; the one beside it is refused, and the call says that the
// sandbox likely made the command fail.
func Example_quickStart() {
	project, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(project)
	defer os.Remove(filepath.Join(filepath.Dir(project), "pwned"))

	var params sandboxexec.ExecParams
	call := fmt.Sprintf(`{"command": ["sh", "-c", "echo built > out.txt && cat out.txt && echo x > ../pwned"],
		"workdir": %q, "timeout": 10000}`, project)
	if err := json.Unmarshal([]byte(call), &params); err != nil {
		fmt.Println(err) // names the bad field
		return
	}
	out, err := sandboxexec.ProcessExecToolCall(context.Background(), params,
		sandboxexec.PlatformSandbox(), // or sandboxexec.SandboxNone
		[]string{project},             // writable roots
		sandboxexec.SandboxPolicy{},   // no network; .git read-only
	)
	var denied *sandboxexec.SandboxDeniedError
	switch {
	case errors.As(err, &denied):
		fmt.Printf("denied by the sandbox: stdout %q\n", out.Stdout)
	case err != nil:
		fmt.Println("not run:", err) // ErrSandboxUnavailable, a bad root, ...
	default:
		fmt.Printf("exit code %d: stdout %q\n", out.ExitCode, out.Stdout)
	}
	// Output:
	// denied by the sandbox: stdout "built\n"
}
