package sandboxexec

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIsBatchFile(t *testing.T) {
	for path, want := range map[string]bool{
		`C:\tools\npm.cmd`:   true,
		`C:\tools\build.bat`: true,
		`x.BAT`:              true,
		`x.Cmd`:              true,
		`.\x.bat`:            true,
		`x.bat.`:             true, // Windows strips trailing dots and spaces
		`x.bat `:             true,
		`x.cmd. . `:          true,
		`C:\tools\node.exe`:  false,
		`x.bat.exe`:          false,
		`x.batch`:            false,
		`xbat`:               false,
		`bat`:                false,
		``:                   false,
		`C:\x.cmd\y.com`:     false,
	} {
		assert.Equal(t, want, isBatchFile(path), "%q", path)
	}
}

func TestCheckBatchArgs(t *testing.T) {
	refused := []string{
		"x&calc", "x|calc", "a>b", "a<b", "(x)", "a)", "x^", "%PATH%", "%",
		"!x!", `a"b`, `"`, "a\rb", "a\nb", "a\x00b",
		`" & calc & "`, `\"&calc`, `x" "&calc`,
	}
	for _, arg := range refused {
		err := checkBatchArgs(`C:\tools\npm.cmd`, []string{"npm", "install", arg})
		if assert.Error(t, err, "%q", arg) {
			assert.Contains(t, err.Error(), "sandboxexec: refused: C:\\tools\\npm.cmd is a batch file")
			assert.Contains(t, err.Error(), "command argument 2")
		}
		assert.Error(t, checkBatchArgs(`x.bat. `, []string{"x", arg}), "%q, trailing dot and space", arg)
		assert.NoError(t, checkBatchArgs(`C:\tools\node.exe`, []string{"node", arg}),
			"%q: a program that is not a batch file parses its own command line", arg)
	}
	allowed := []string{"", "install", "hello world", `C:\Program Files\x`, `trailing\`,
		"a=b", "a,b;c", "tab\there", "@scope/pkg", "*.go", "?", "~", "$HOME", "'single'", "é"}
	for _, arg := range allowed {
		assert.NoError(t, checkBatchArgs(`C:\tools\npm.cmd`, []string{"npm", arg}), "%q", arg)
	}
}

func TestBatchCommandLine(t *testing.T) {
	for _, tc := range []struct {
		script string
		argv   []string
		want   string
	}{
		{`C:\tools\npm.cmd`, []string{"npm"}, `""C:\tools\npm.cmd""`},
		{`C:\tools\npm.cmd`, []string{"npm", "install", "left-pad"}, `""C:\tools\npm.cmd" install left-pad"`},
		// A quoted script and a quoted argument: cmd.exe strips the outer
		// pair only (golang/go#17149).
		{`C:\Program Files\nodejs\npm.cmd`, []string{"npm", "run", "a b"},
			`""C:\Program Files\nodejs\npm.cmd" run "a b""`},
		// argv[0] is not on the line: cmd.exe would look it up, or parse it.
		{`C:\tools\x.bat`, []string{`x&calc&\..\x.bat`, "y"}, `""C:\tools\x.bat" y"`},
		// Parentheses and & are literal inside quotes.
		{`C:\Program Files (x86)\a&b\x.bat`, []string{"x"}, `""C:\Program Files (x86)\a&b\x.bat""`},
		{`C:\x.bat`, []string{"x", "", `a b\`, `C:\dir\`, "tab\there"},
			`""C:\x.bat" "" "a b\\" C:\dir\ "tab` + "\t" + `here""`},
	} {
		got, err := batchCommandLine(tc.script, tc.argv)
		if assert.NoError(t, err, "%q %q", tc.script, tc.argv) {
			assert.Equal(t, tc.want, got, "%q %q", tc.script, tc.argv)
		}
	}
	for _, script := range []string{`C:\100%\x.bat`, `C:\%PATH%\x.bat`, `C:\wow!\x.cmd`, `C:\a"b\x.bat`} {
		_, err := batchCommandLine(script, []string{"x"})
		if assert.Error(t, err, "%q", script) {
			assert.Contains(t, err.Error(), "sandboxexec: refused: the path of the batch file")
		}
	}
}
