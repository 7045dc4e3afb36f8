//go:build !linux

package sandboxexec

import "os"

// capturePipe returns the pipe one of the child's output streams is read
// from.
func capturePipe() (r, w *os.File, err error) { return os.Pipe() }

// tailPipe is Linux's: elsewhere the stream is read through.
type tailPipe struct{}

func (*tailPipe) splice(uintptr, *capture, []byte) (ended bool) { return false }
func (*tailPipe) close()                                        {}

// pipeHolds answers otherwise: one buffer, as much as a pipe holds here
// unless its writer asks for more.
func pipeHolds(_ uintptr, otherwise int) int { return otherwise }
