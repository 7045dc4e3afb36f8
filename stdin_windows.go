package sandboxexec

import (
	"io"
	"os"
)

// confinedStdin is never asked for on Windows, where every call is
// unconfined.
func confinedStdin(f *os.File, _ bool) (*os.File, *stdinCopier, func(), error) {
	return f, nil, nil, nil
}

func copyFromFD(io.Writer, int, *os.File) {}

func closeFD(int) {}
