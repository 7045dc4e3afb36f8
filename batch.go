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
