package sandboxexec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// canonicalRoots turns writable roots into the canonical directories a
// sandbox matches against: each must be absolute, free of NUL bytes and ".."
// components; symlinks are resolved (Seatbelt and Landlock both see the real
// path); a root that does not exist is skipped; one that is not a directory,
// or cannot be resolved (a symlink loop), is an error. Duplicates are dropped.
//
// A root reached through a symlink that lies inside a writable root is an
// error too, unless where it leads is below another root reached without
// one (then it adds nothing): a command could have made that
// symlink in an earlier call, to turn the root into any directory it names
// (roots /work and /work/cache, with /work/cache made a link to the home
// directory, or to /).
func canonicalRoots(roots []string) ([]string, error) {
	out, _, err := canonicalRootInfos(roots)
	return out, err
}

// canonicalRootInfos is canonicalRoots that also returns what it found at
// each root it returns.
func canonicalRootInfos(roots []string) ([]string, []fs.FileInfo, error) {
	type link struct{ dir, name string }
	type resolved struct {
		root, real string
		fi         fs.FileInfo
		links      []link // the symlinks met, and the directories they are in
	}
	var all []resolved
	for _, root := range roots {
		if strings.IndexByte(root, 0) >= 0 {
			return nil, nil, fmt.Errorf("sandboxexec: writable root %q contains a NUL byte", strings.SplitN(root, "\x00", 2)[0])
		}
		if !filepath.IsAbs(root) {
			return nil, nil, fmt.Errorf("sandboxexec: writable root %q is not an absolute path", root)
		}
		for _, part := range strings.Split(root, string(filepath.Separator)) {
			if part == ".." {
				return nil, nil, fmt.Errorf("sandboxexec: writable root %q has a \"..\" component", root)
			}
		}
		r := resolved{root: root}
		real, fi, err := resolvePathInfo(root, func(dir, name string) {
			r.links = append(r.links, link{dir, name})
		})
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil && fi == nil {
			fi, err = os.Stat(real)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("sandboxexec: writable root: %w", err)
		}
		if !fi.IsDir() {
			return nil, nil, fmt.Errorf("sandboxexec: writable root %q is not a directory", root)
		}
		r.real, r.fi = real, fi
		all = append(all, r)
	}
	// suspect names, for each root, a symlink on its way that lies inside
	// some root, and that root; clean roots have none.
	suspect := make([]string, len(all))
	var clean []string
	for i, r := range all {
		for _, l := range r.links {
			for _, other := range all {
				if suspect[i] == "" && (pathWithin(l.dir, other.real) || sameFileAbove(l.dir, other.fi)) {
					suspect[i] = fmt.Sprintf("the symlink %s, which is inside the writable root %s",
						filepath.Join(l.dir, l.name), other.real)
				}
			}
		}
		if suspect[i] == "" {
			clean = append(clean, r.real)
		}
	}
	out := make([]string, 0, len(all))
	infos := make([]fs.FileInfo, 0, len(all))
	seen := make(map[string]bool, len(all))
	for i, r := range all {
		if suspect[i] != "" && !slices.ContainsFunc(clean, func(c string) bool { return pathWithin(r.real, c) }) {
			return nil, nil, fmt.Errorf("sandboxexec: writable root %q goes through %s, "+
				"where a command may have made it: give the directory it points to instead", r.root, suspect[i])
		}
		if !seen[r.real] {
			seen[r.real] = true
			out = append(out, r.real)
			infos = append(infos, r.fi)
		}
	}
	return out, infos, nil
}

// resolvePath is filepath.EvalSymlinks for an absolute path, which also
// calls link with each symlink it follows: the directory holding it (itself
// resolved) and its name.
func resolvePath(path string, link func(dir, name string)) (string, error) {
	real, _, err := resolvePathInfo(path, link)
	return real, err
}

// resolvePathInfo is resolvePath that also returns what it found at the
// resolved path (nil where it did not look: "/", a path ending in "..", a
// Windows path), which saves a caller the stat.
func resolvePathInfo(path string, link func(dir, name string)) (string, fs.FileInfo, error) {
	return resolvePathSteps(path, link, nil)
}

// errNoStepsLeft is resolvePathSteps' error once its budget is spent.
var errNoStepsLeft = errors.New("sandboxexec: no lookups left")

// resolvePathSteps is resolvePathInfo that takes from *steps (where steps
// is not nil) for each name it looks up, one and one more for each 64
// bytes of the path looked up, and stops with errNoStepsLeft once none is
// left: a path of 1 MiB ("/usr/.." again and again) is 150,000 lookups,
// and the kernel walks each lookup's path from the top, a name at a time
// (found in review: 700 values, from d to d/d/.../d 700 deep, were 4.4 s
// to resolve, as many lookups of shallow paths 0.4 s).
func resolvePathSteps(path string, link func(dir, name string), steps *int) (string, fs.FileInfo, error) {
	return resolvePathUp(path, link, nil, steps)
}

// resolvePathUp is resolvePathSteps that also calls up, where it is not
// nil, with each directory a ".." steps back from, and with the name that
// is missing (or no directory) where a ".." is left to follow it: which
// directory a ".." leaves is whatever is at that name when the path is
// followed, later.
func resolvePathUp(path string, link func(dir, name string), up func(dir string), steps *int) (string, fs.FileInfo, error) {
	if filepath.VolumeName(path) != "" {
		// Windows, where no sandbox uses the roots (CreateSeatbeltCommand
		// only formats them), and where paths resolve differently.
		real, err := filepath.EvalSymlinks(path)
		return real, nil, err
	}
	var last fs.FileInfo
	const maxLinks = 40 // Linux's limit (ELOOP)
	resolved := string(filepath.Separator)
	rest := path
	for n := 0; rest != ""; {
		var name string
		var more bool // a separator follows name: it must be a directory
		name, rest, more = strings.Cut(rest, string(filepath.Separator))
		switch name {
		case "", ".":
			continue
		case "..":
			if up != nil {
				up(resolved)
			}
			resolved, last = filepath.Dir(resolved), nil
			continue
		}
		next := filepath.Join(resolved, name)
		if steps != nil {
			if *steps -= 1 + len(next)/64; *steps < 0 {
				return "", nil, errNoStepsLeft
			}
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if up != nil && hasDotDot(rest) {
				up(next)
			}
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if more && !fi.IsDir() {
				if up != nil && hasDotDot(rest) {
					up(next)
				}
				// As the kernel: "file/.." is an error, not the file's directory.
				return "", nil, &fs.PathError{Op: "lstat", Path: path, Err: syscall.ENOTDIR}
			}
			resolved, last = next, fi
			continue
		}
		if n++; n > maxLinks {
			return "", nil, &fs.PathError{Op: "lstat", Path: path, Err: errors.New("too many levels of symbolic links")}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		link(resolved, name)
		if filepath.IsAbs(target) {
			resolved, last = string(filepath.Separator), nil
		}
		if more {
			target += string(filepath.Separator) + rest
		}
		rest = target
	}
	return resolved, last, nil
}

// hasDotDot says the path p has a ".." component.
func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(p, string(filepath.Separator)), "..")
}

// sameFileAbove reports whether dir, or a directory above it, is the
// directory root, by identity rather than by name: one directory can have
// several (a bind mount's, a case-insensitive file system's, macOS's
// /System/Volumes/Data), and a symlink inside a root must be found under
// whichever of them the caller gave (found in review).
func sameFileAbove(dir string, root fs.FileInfo) bool {
	for {
		if fi, err := os.Stat(dir); err == nil && os.SameFile(fi, root) {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// pathWithin reports whether path is dir or lies below it; both are clean
// and absolute. It allocates nothing: a policy resolution asks it for each
// pair of thousands of paths (found in review: dir+"/" made 4,000 masks
// 1.2 s to resolve, 8 in 10 of it allocating).
func pathWithin(path, dir string) bool {
	return path == dir || dir == string(filepath.Separator) ||
		len(path) > len(dir) && path[len(dir)] == filepath.Separator && strings.HasPrefix(path, dir)
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

// withSandboxEnv sets the variables that tell the command where it runs:
// EnvSandbox to sandbox, and EnvNetworkDisabled when noNetwork. A sandbox
// this process runs in confines the command too: where the host's own
// environment says so, its values count as well (its sandbox's name under
// SandboxNone, no network whatever the policy). Any other value of theirs,
// inherited or given, goes: it would claim a sandbox, or a restriction,
// that is not there. Names compare as the OS compares them.
func withSandboxEnv(env []string, sandbox string, noNetwork bool) []string {
	if sandbox == "" {
		sandbox = os.Getenv(EnvSandbox)
	}
	noNetwork = noNetwork || os.Getenv(EnvNetworkDisabled) == "1"
	out := env[:0:0]
	for _, kv := range env {
		if name, _ := envName(kv); name != EnvSandbox && name != EnvNetworkDisabled {
			out = append(out, kv)
		}
	}
	if sandbox != "" {
		out = append(out, EnvSandbox+"="+sandbox)
	}
	if noNetwork {
		out = append(out, EnvNetworkDisabled+"=1")
	}
	return out
}

// Variables a sandboxed runner sets in the command's environment, so that
// scripts and test suites can tell where they run. Under SandboxNone the
// command has neither, unless the host's own environment (os.Environ) has
// them, as when the host runs in a sandbox that set them: the command, in
// that sandbox too, then gets the host's values, which the library takes
// as they are. No value given through WithEnv can claim a sandbox or a
// network restriction that the call or its host does not have.
const (
	// EnvSandbox names the sandbox: "linux" or "seatbelt".
	EnvSandbox = "SANDBOXEXEC_SANDBOX"
	// EnvNetworkDisabled is "1" unless the policy has NetworkAccess: under
	// AllowedDomains too, where the command reaches the network only through
	// the call's proxy, so a test suite that skips its network tests on it
	// skips them there as well.
	EnvNetworkDisabled = "SANDBOXEXEC_NETWORK_DISABLED"
)
