package sandboxexec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// canonicalRoots turns writable roots into the canonical directories a
// sandbox matches against: each must be absolute, free of NUL bytes and ".."
// components; symlinks are resolved (Seatbelt and Landlock both see the real
// path); a root that does not exist is skipped; one that is not a directory,
// or cannot be resolved (a symlink loop), is an error. Duplicates are dropped.
func canonicalRoots(roots []string) ([]string, error) {
	out := make([]string, 0, len(roots))
	seen := make(map[string]bool, len(roots))
	for _, root := range roots {
		if strings.IndexByte(root, 0) >= 0 {
			return nil, fmt.Errorf("sandboxexec: writable root %q contains a NUL byte", strings.SplitN(root, "\x00", 2)[0])
		}
		if !filepath.IsAbs(root) {
			return nil, fmt.Errorf("sandboxexec: writable root %q is not an absolute path", root)
		}
		for _, part := range strings.Split(root, string(filepath.Separator)) {
			if part == ".." {
				return nil, fmt.Errorf("sandboxexec: writable root %q has a \"..\" component", root)
			}
		}
		real, err := filepath.EvalSymlinks(root)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sandboxexec: writable root: %w", err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("sandboxexec: writable root: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("sandboxexec: writable root %q is not a directory", root)
		}
		if !seen[real] {
			seen[real] = true
			out = append(out, real)
		}
	}
	return out, nil
}

// setEnv sets key in env, replacing every earlier entry for it.
func setEnv(env []string, key, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// Variables a sandboxed runner sets in the command's environment, so that
// scripts and test suites can tell where they run.
const (
	// EnvSandbox names the sandbox: "linux" or "seatbelt".
	EnvSandbox = "SANDBOXEXEC_SANDBOX"
	// EnvNetworkDisabled is "1" when the policy gives no network.
	EnvNetworkDisabled = "SANDBOXEXEC_NETWORK_DISABLED"
)
