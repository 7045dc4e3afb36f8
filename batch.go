package sandboxexec

import (
	"fmt"
	"strings"
)

// cmdSpecial is what cmd.exe, which Windows runs every batch file through,
// reads as syntax even inside double quotes, or what Go's quoting, made for
// CommandLineToArgvW, cannot protect: a quote ends Go's quoting in cmd.exe's
// eyes, % and ! expand variables, ^ escapes, & | < > ( ) join, redirect or
// group commands, and CR, LF and NUL end the command line.
const cmdSpecial = "\"%!^&|<>()\r\n\x00"

// isBatchFile says whether Windows runs path through cmd.exe: its name ends
// in .bat or .cmd, in any case, once the trailing dots and spaces that
// Windows strips from a file name are gone ("x.bat." runs as "x.bat").
func isBatchFile(path string) bool {
	name := strings.ToLower(strings.TrimRight(path, ". "))
	return strings.HasSuffix(name, ".bat") || strings.HasSuffix(name, ".cmd")
}

// checkBatchArgs refuses a batch file (npm, npx and pnpm are .cmd shims) an
// argument that cmd.exe could read as commands: cmd.exe parses the command
// line otherwise than the CommandLineToArgvW rules Go escapes for, so
// `x&calc` would run calc (BatBadBut; Rust's CVE-2024-24576). Arguments are
// refused, not escaped: no escaping passes every such string to a batch
// file intact. argv[0] is the program's own name.
func checkBatchArgs(path string, argv []string) error {
	if !isBatchFile(path) {
		return nil
	}
	for i := 1; i < len(argv); i++ {
		if j := strings.IndexAny(argv[i], cmdSpecial); j >= 0 {
			return fmt.Errorf("sandboxexec: refused: %s is a batch file, run by cmd.exe, which could "+
				"read command argument %d as commands (it contains %q)", path, i, argv[i][j])
		}
	}
	return nil
}

// batchCommandLine is the command line that runs the batch file script (an
// absolute path) with argv's arguments, which checkBatchArgs let through.
// Windows runs a batch file as `cmd.exe /c <command line>`, and cmd.exe
// runs the command line's first word as it finds it, not the file the
// caller resolved: a bare name such as `npm` it looks up in the working
// directory first, and a path it parses as syntax (`C:\a&calc&\..\x.cmd`
// names an existing file and runs calc). So the line names script, quoted,
// in place of argv[0]. And cmd.exe strips the first and the last quote of a
// /c line that holds more than two, which broke a quoted script path with a
// quoted argument (golang/go#17149): the line is wrapped in one more pair
// of quotes for it to strip. Inside quotes cmd.exe still expands % and, with
// delayed expansion, !, so a script path holding either is refused.
func batchCommandLine(script string, argv []string) (string, error) {
	if j := strings.IndexAny(script, cmdSpecialQuoted); j >= 0 {
		return "", fmt.Errorf("sandboxexec: refused: the path of the batch file %s contains %q, which "+
			"cmd.exe, which runs it, could read as syntax even in quotes", script, script[j])
	}
	var b strings.Builder
	b.WriteString(`""`)
	b.WriteString(script)
	b.WriteByte('"')
	for _, arg := range argv[min(1, len(argv)):] {
		b.WriteByte(' ')
		b.WriteString(quoteBatchArg(arg))
	}
	b.WriteByte('"')
	return b.String(), nil
}

// cmdSpecialQuoted is what cmd.exe reads as syntax inside double quotes.
const cmdSpecialQuoted = "\"%!\r\n\x00"

// quoteBatchArg quotes arg as Go's syscall.EscapeArg does for an argument
// without a double quote (checkBatchArgs refuses those): in quotes if it is
// empty or holds a space or tab, with the backslashes that end it doubled
// before the closing quote.
func quoteBatchArg(arg string) string {
	if arg == "" {
		return `""`
	}
	if !strings.ContainsAny(arg, " \t") {
		return arg
	}
	trailing := len(arg) - len(strings.TrimRight(arg, `\`))
	return `"` + arg + strings.Repeat(`\`, trailing) + `"`
}
