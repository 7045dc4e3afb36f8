package sandboxexec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each fuzz target runs its seed corpus as an ordinary test; run one for
// real with, e.g.:
//
//	go test -run '^$' -fuzz FuzzCapture -fuzztime 5s

func FuzzExecParamsJSON(f *testing.F) {
	for _, seed := range []string{
		`{"command":["ls","-l"],"workdir":"/tmp","timeout":500}`,
		`{"command":[]}`,
		`{"command":null,"workdir":null,"timeout":null}`,
		`{"command":["a\u0000b","\ud800","<&>"],"workdir":"\u00e9"}`,
		`{"COMMAND":["x"],"Timeout":0,"extra":{"a":[1,2]}}`,
		`{"command":["x"],"command":["y"]}`,
		`{"timeout":"500","timeout":null}`,
		`{"command":true,"Command":["ls"]}`,
		`{"timeout":18446744073709551615}`,
		`{"timeout":18446744073709551616}`,
		`{"timeout":"500"}`,
		`{"timeout":1e3}`,
		`{"timeout":-0}`,
		`{"command":"ls"}`,
		`{"command":[1]}`,
		"{\"command\":[\"\xff\xfe\"]}",
		`[]`,
		`null`,
		`"x"`,
		``,
		`{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p, direct ExecParams
		err := json.Unmarshal(data, &p)
		// A direct call agrees, on the value and on whether data is one.
		directErr := direct.UnmarshalJSON(data)
		require.Equal(t, err == nil, directErr == nil, "json.Unmarshal: %v; UnmarshalJSON: %v; %q", err, directErr, data)
		if err != nil {
			return
		}
		require.Equal(t, p, direct, "%q", data)
		// What decodes decodes as plain encoding/json would have it.
		var plain struct {
			Command []string
			Workdir string
			Timeout *uint64
		}
		require.NoError(t, json.Unmarshal(data, &plain), "encoding/json refuses %q", data)
		require.Equal(t, plain.Command, p.Command, "%q", data)
		require.Equal(t, plain.Workdir, p.Workdir, "%q", data)
		require.Equal(t, plain.Timeout, p.TimeoutMs, "%q", data)
		enc, err := json.Marshal(p)
		require.NoError(t, err)
		var q ExecParams
		require.NoError(t, json.Unmarshal(enc, &q), "re-decoding %s", enc)
		require.Equal(t, p, q, "round trip through %s", enc)
		if p.TimeoutMs != nil {
			_, _ = p.timeout() // must not panic or overflow
		}
	})
}

// captureLimits are the limits FuzzCapture picks from: the degenerate ones,
// an odd one, and a few ordinary sizes.
var captureLimits = []int{0, 1, 2, 7, 64, 1000}

func FuzzCapture(f *testing.F) {
	f.Add([]byte(""), []byte(""), uint8(0))
	f.Add([]byte("hello"), []byte{1}, uint8(3))
	f.Add([]byte("hello, world"), []byte{0, 3, 0, 1}, uint8(3))
	f.Add(bytes.Repeat([]byte("0123456789"), 30), []byte{7, 13, 64, 1, 200}, uint8(4))
	f.Add(bytes.Repeat([]byte("é€😀\xff"), 400), []byte{255, 1, 2}, uint8(5))
	f.Add([]byte("ab"), []byte{0}, uint8(1))
	f.Add([]byte("abc"), []byte{2}, uint8(2))
	f.Fuzz(func(t *testing.T, data, chunking []byte, limitIndex uint8) {
		// Past a few times the largest limit, longer inputs only slow the
		// fuzzer down (minimizing them is quadratic).
		data, chunking = data[:min(len(data), 4096)], chunking[:min(len(chunking), 512)]
		limit := captureLimits[int(limitIndex)%len(captureLimits)]
		c := newCapture(limit)

		// Write data in chunks of the sizes chunking gives (a 0 writes an
		// empty chunk), then what is left in one write.
		off := 0
		write := func(chunk []byte) {
			if n, err := c.Write(chunk); n != len(chunk) || err != nil {
				t.Fatalf("Write(%d bytes) = %d, %v", len(chunk), n, err)
			}
			off += len(chunk)
		}
		for _, size := range chunking {
			write(data[off:min(off+int(size), len(data))])
		}
		write(data[off:])

		require.Equal(t, int64(len(data)), c.total)
		head, tail := capturedRaw(c)
		if len(data) <= limit {
			require.Zero(t, c.omitted())
			require.Equal(t, string(data), string(head)+string(tail))
			require.Equal(t, strings.ToValidUTF8(string(data), "\uFFFD"), c.String())
			return
		}
		headLen := limit / 2
		tailLen := limit - headLen
		omitted := len(data) - limit
		require.Equal(t, string(data[:headLen]), string(head), "kept head")
		require.Equal(t, string(data[len(data)-tailLen:]), string(tail), "kept tail")
		require.Equal(t, int64(omitted), c.omitted())
		marker := fmt.Sprintf("\n[... sandboxexec: %d of %d bytes omitted ...]\n", omitted, len(data))
		want := string(data[:headLen]) + marker + string(data[len(data)-tailLen:])
		require.Equal(t, strings.ToValidUTF8(want, "\uFFFD"), c.String())
	})
}

// capturedRaw is what c kept, as raw bytes: the head, and the tail put back
// in stream order. It reads the ring independently of String.
func capturedRaw(c *capture) (head, tail []byte) {
	tail = make([]byte, 0, c.ringUsed)
	// The ring's oldest byte sits ringUsed bytes before ringNext.
	for i := 0; i < c.ringUsed; i++ {
		tail = append(tail, c.ring[(c.ringNext-c.ringUsed+i+2*len(c.ring))%len(c.ring)])
	}
	return c.head, tail
}

// oracleSecretWords are the words that make filterSecrets drop a variable,
// in any case; written out again so that the oracle does not share the
// implementation's list.
var oracleSecretWords = []string{"KEY", "SECRET", "TOKEN", "PASSWORD"}

// nameLooksSecret is the oracle for filterSecrets: whether some run of
// runes in name equals one of secretWords under Unicode case folding.
func nameLooksSecret(name string) bool {
	runes := []rune(name)
	for _, w := range oracleSecretWords {
		n := len([]rune(w))
		for i := 0; i+n <= len(runes); i++ {
			if strings.EqualFold(string(runes[i:i+n]), w) {
				return true
			}
		}
	}
	return false
}

func FuzzFilterSecrets(f *testing.F) {
	for _, seed := range []string{
		"",
		"PATH=/usr/bin\nHOME=/root\nOPENAI_API_KEY=sk-1\nmonkey=1\nGITHUB_TOKEN=x\nDB_Password=y\nMy_Secret\nTERM=xterm",
		"=\n==\nKEY\nK=EY\nSECRE=T\nKE Y=1\nx=KEY",
		"PAſSWORD=1\n\u212aEY=1\nſECRET=1\ntoKen=1\nKEYBOARD=1\nTOKENIZER=1",
		"\xff\xfeKEY=\xff\nK\xffEY=1\nLANG=C.UTF-8",
		"A=1\nA=1\nB=2\nA=1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		env := strings.Split(joined, "\n")
		orig := append([]string(nil), env...)
		var want []string
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			if !nameLooksSecret(name) {
				want = append(want, kv)
			}
		}
		got := filterSecrets(env)
		require.Equal(t, want, nilIfEmpty(got))
		require.Equal(t, orig, env, "the input is left as it was")
	})
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// FuzzResolvePath builds a directory tree from the fuzzer's layout (one
// entry per line: "name/" a directory, "name" a file, "name->target" a
// symlink, an absolute target taken below the tree) and checks that
// resolvePath agrees with filepath.EvalSymlinks on a path through it.
// canonicalRoots then must give clean absolute directories, or an error.
func FuzzResolvePath(f *testing.F) {
	for _, seed := range [][2]string{
		{"x/\nx/y/\nrel->x/y\nup->/rel/..", "up/y"},
		{"file\nback->file/..\nx/", "back/x"},
		{"a->b\nb->a", "a"},
		{"d/\ndot->.\nd/l->../d", "dot/dot/d/l/l/.."},
		{"x/\nfile", "x/../file/.."},
		{"file\nl->file\nd/\ndl->d", "l/"},
		{"d/\ndl->d/", "dl/"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, layout, path string) {
		if strings.IndexByte(layout, 0) >= 0 || strings.IndexByte(path, 0) >= 0 || len(layout) > 512 || len(path) > 256 {
			return
		}
		base := realDir(t, "tree")
		inside := func(name string) (string, bool) {
			name = strings.Trim(name, "/")
			for _, part := range strings.Split(name, "/") {
				if part == "" || part == "." || part == ".." {
					return "", false
				}
			}
			return filepath.Join(base, name), true
		}
		for _, entry := range strings.Split(layout, "\n") {
			if name, target, ok := strings.Cut(entry, "->"); ok {
				if p, ok := inside(name); ok {
					if filepath.IsAbs(target) {
						target = base + target
					}
					os.Symlink(target, p)
				}
			} else if p, ok := inside(entry); ok && strings.HasSuffix(entry, "/") {
				os.Mkdir(p, 0o755)
			} else if ok {
				os.WriteFile(p, nil, 0o644)
			}
		}
		full := base + "/" + path
		want, wantErr := filepath.EvalSymlinks(full)
		got, gotInfo, err := resolvePathInfo(full, func(dir, name string) {
			require.True(t, filepath.IsAbs(dir), dir)
		})
		switch {
		case err != nil && strings.Contains(err.Error(), "too many levels of symbolic links"):
			// Linux's limit of 40 follows, where Go allows 255.
		case wantErr != nil:
			require.Error(t, err, "%s resolves to %s; EvalSymlinks: %v", full, got, wantErr)
			require.Equal(t, errors.Is(wantErr, fs.ErrNotExist), errors.Is(err, fs.ErrNotExist), "%s: %v, EvalSymlinks: %v", full, err, wantErr)
		default:
			require.NoError(t, err, full)
			require.Equal(t, want, got, full)
			if gotInfo != nil {
				fi, err := os.Stat(got)
				require.NoError(t, err)
				require.True(t, os.SameFile(fi, gotInfo), "%s: the info returned is not of %s", full, got)
			}
		}

		roots, err := canonicalRoots([]string{full, base})
		if err != nil {
			return
		}
		for _, r := range roots {
			require.True(t, filepath.IsAbs(r) && filepath.Clean(r) == r, r)
			fi, err := os.Stat(r)
			require.NoError(t, err)
			require.True(t, fi.IsDir(), r)
		}
	})
}
