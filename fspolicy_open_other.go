//go:build !linux

package sandboxexec

import (
	"os"
	"syscall"
)

// openRegular opens the regular file at path for reading. What is not one
// is not opened, unless the path is swapped between the look and the open
// (then it is not read): the open does not wait, nor take a terminal.
func openRegular(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errNotRegular(path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errNotRegular(path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openDir opens the directory at path for listing; what is not one is
// not opened, unless the path is swapped between the look and the open.
func openDir(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ENOTDIR}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ENOTDIR}
	}
	return f, nil
}
