package sandboxexec

import (
	"os"
	"strings"
	"testing"
)

// The README's quick start is Example_quickStart, which the tests run: the
// two must not drift apart. They differ only in how project is made (a
// path to fill in, a temporary directory), so the code is compared from
// the line that declares params.
func TestReadmeQuickStartIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "## Quick start\n\n```go\n")
	if !ok {
		t.Fatal("README.md: no ```go block under ## Quick start")
	}
	block, _, _ = strings.Cut(block, "```\n")
	example, err := os.ReadFile("example_quickstart_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(example), "func Example_quickStart() {\n")
	if !ok {
		t.Fatal("example_quickstart_test.go: no Example_quickStart")
	}
	body, _, _ = strings.Cut(body, "\t// Output:\n")
	var lines []string
	for _, l := range strings.SplitAfter(body, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t")) // the function's indentation
	}
	body = strings.Join(lines, "")
	const from = "var params sandboxexec.ExecParams\n"
	_, want, ok1 := strings.Cut(body, from)
	_, got, ok2 := strings.Cut(block, from)
	if !ok1 || !ok2 {
		t.Fatalf("%q missing from the README's quick start or from Example_quickStart", from)
	}
	if got != want {
		t.Errorf("README.md's quick start differs from Example_quickStart from %q on:\nREADME:\n%s\nexample:\n%s", from, got, want)
	}
}
