//go:build !linux

// Command benchtable compares the Linux sandbox with os/exec and bubblewrap;
// see main.go. Elsewhere it only says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "benchtable: Linux only (it measures SandboxLinuxSeccomp beside os/exec and bubblewrap)")
	os.Exit(2)
}
