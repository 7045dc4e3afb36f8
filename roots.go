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
//
// A root reached through a symlink that lies inside a writable root is an
// error too: a command could have made that symlink in an earlier call, to
// turn the root into any directory it names (roots /work and /work/cache,
// with /work/cache made a link to the home directory).
func canonicalRoots(roots []string) ([]string, error) {
	out := make([]string, 0, len(roots))
	seen := make(map[string]bool, len(roots))
	type link struct{ root, dir, name string }
	var links []link // every symlink met, and the directory it is in
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
		n := len(links)
		real, err := resolvePath(root, func(dir, name string) {
			links = append(links, link{root, dir, name})
		})
		if errors.Is(err, fs.ErrNotExist) {
			links = links[:n]
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
	if seen[string(filepath.Separator)] {
		return out, nil // everything is writable: no symlink can widen that
	}
	for _, l := range links {
		for _, real := range out {
			if pathWithin(l.dir, real) {
				return nil, fmt.Errorf("sandboxexec: writable root %q goes through the symlink %s, "+
					"which is inside the writable root %s, where a command may have made it: "+
					"give the directory it points to instead", l.root, filepath.Join(l.dir, l.name), real)
			}
		}
	}
	return out, nil
}

// resolvePath is filepath.EvalSymlinks for an absolute path, which also
// calls link with each symlink it follows: the directory holding it (itself
// resolved) and its name.
func resolvePath(path string, link func(dir, name string)) (string, error) {
	if filepath.VolumeName(path) != "" {
		// Windows, where no sandbox uses the roots (CreateSeatbeltCommand
		// only formats them), and where paths resolve differently.
		return filepath.EvalSymlinks(path)
	}
	const maxLinks = 40 // Linux's limit (ELOOP)
	resolved := string(filepath.Separator)
	rest := path
	for n := 0; rest != ""; {
		var name string
		name, rest, _ = strings.Cut(rest, string(filepath.Separator))
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if n++; n > maxLinks {
			return "", &fs.PathError{Op: "lstat", Path: path, Err: errors.New("too many levels of symbolic links")}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		link(resolved, name)
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		rest = target + string(filepath.Separator) + rest
	}
	return resolved, nil
}

// pathWithin reports whether path is dir or lies below it; both are clean
// and absolute.
func pathWithin(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// withWritableTMPDIR points TMPDIR at the first writable root when the
// temporary directory the command would use (TMPDIR, else /tmp) is not below
// one: many tools fail without a writable temporary directory. (On macOS
// TMPDIR is a per-user directory under /var/folders.)
func withWritableTMPDIR(env, roots []string) []string {
	if len(roots) == 0 {
		return env
	}
	tmp := "/tmp"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && v != "" {
			tmp = v
		}
	}
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		for _, root := range roots {
			if pathWithin(real, root) {
				return env
			}
		}
	}
	return setEnv(env, "TMPDIR", roots[0])
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
