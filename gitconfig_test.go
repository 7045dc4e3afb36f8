package sandboxexec

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitConfigCases are configuration files and what parseGitConfig finds in
// them; ok false where git reports a bad line.
var gitConfigCases = []struct {
	name, in string
	want     []gitConfigEntry
	ok       bool
}{
	{"plain", "[core]\n\thooksPath = .husky\n", []gitConfigEntry{{"core.hookspath", ".husky", true}}, true},
	{"case", "[Core]\n  HooksPath=.husky\n", []gitConfigEntry{{"core.hookspath", ".husky", true}}, true},
	{"spaces and comment", "  [core]   \n hookspath   =   \"my hooks\"  # a comment\n",
		[]gitConfigEntry{{"core.hookspath", "my hooks", true}}, true},
	{"key on the header's line", "[core] hooksPath = a ; a comment\n", []gitConfigEntry{{"core.hookspath", "a", true}}, true},
	{"quoted comment characters", "[core]\nhooksPath = \"a;b#c\"\n", []gitConfigEntry{{"core.hookspath", "a;b#c", true}}, true},
	{"subsection", "[core \"x\"]\nhooksPath = no\n[core]\nhooksPath = yes\n",
		[]gitConfigEntry{{"core.x.hookspath", "no", true}, {"core.hookspath", "yes", true}}, true},
	{"subsection keeps its case", "[Core \"X y\"]\nk = v\n", []gitConfigEntry{{"core.X y.k", "v", true}}, true},
	{"old subsection", "[core.X]\nhooksPath = no\n", []gitConfigEntry{{"core.x.hookspath", "no", true}}, true},
	{"comments", "# [core]\n; hooksPath = x\n\t# hooksPath = y\n", nil, true},
	{"continued line", "[core]\nhooksPath = a\\\n b\n", []gitConfigEntry{{"core.hookspath", "a b", true}}, true},
	{"escapes", "[core]\nhooksPath = \"a\\\"b\\\\c\\td\\ne\\bf\"\n", []gitConfigEntry{{"core.hookspath", "a\"b\\c\td\ne\bf", true}}, true},
	{"CRLF", "[core]\r\nhooksPath = crlf\r\n", []gitConfigEntry{{"core.hookspath", "crlf", true}}, true},
	{"lone CR", "[core]\nhooksPath = a\rb\r\n", []gitConfigEntry{{"core.hookspath", "a\rb", true}}, true},
	{"BOM", "\xef\xbb\xbf[core]\nhooksPath = bom\n", []gitConfigEntry{{"core.hookspath", "bom", true}}, true},
	{"half a BOM", "\xef\xbb[core]\nhooksPath = x\n", nil, false},
	{"boolean", "[core]\nhooksPath\n", []gitConfigEntry{{"core.hookspath", "", false}}, true},
	{"empty value", "[core]\nhooksPath =\n", []gitConfigEntry{{"core.hookspath", "", true}}, true},
	{"no final newline", "[core]\nhooksPath = x", []gitConfigEntry{{"core.hookspath", "x", true}}, true},
	{"twice", "[core]\nhooksPath = first\nhooksPath = second\n",
		[]gitConfigEntry{{"core.hookspath", "first", true}, {"core.hookspath", "second", true}}, true},
	{"no section", "hooksPath = x\n", []gitConfigEntry{{"hookspath", "x", true}}, true},
	{"submodule", "[core]\n\tworktree = ../../../sub\n\thooksPath=.husky/_\n",
		[]gitConfigEntry{{"core.worktree", "../../../sub", true}, {"core.hookspath", ".husky/_", true}}, true},
	{"dash", "[core]\n\thooks-path = x\n", []gitConfigEntry{{"core.hooks-path", "x", true}}, true},
	{"inner spaces kept", "[core]\nhooksPath = a\"  \"b  c   \n", []gitConfigEntry{{"core.hookspath", "a  b  c", true}}, true},
	{"empty quotes first", "[core]\nhooksPath = \"\" tail \n", []gitConfigEntry{{"core.hookspath", "tail", true}}, true},
	{"NUL ends a value", "[core]\nhooksPath = x\x00y\n", []gitConfigEntry{{"core.hookspath", "x", true}}, true},
	{"include", "[include]\n\tpath = ../shared.gitconfig\n", []gitConfigEntry{{"include.path", "../shared.gitconfig", true}}, true},
	{"unterminated quote", "[core]\nbare = x\nhooksPath = \"open\n", []gitConfigEntry{{"core.bare", "x", true}}, false},
	{"unknown escape", "[core]\nhooksPath = a\\qb\n", nil, false},
	{"comment after key", "[core]\nhooksPath # x\n", nil, false},
	{"empty header", "[]\nhooksPath = x\n", nil, false},
	{"open header", "[core\nhooksPath = x\n", nil, false},
	{"space in header", "[co re]\nhooksPath = x\n", nil, false},
	{"space after subsection", "[core \"x\" ]\nk = v\n", nil, false},
	{"digit first", "[core]\n1k = v\n", nil, false},
	{"header at end", "[core", nil, false},
}

func TestParseGitConfig(t *testing.T) {
	for _, tc := range gitConfigCases {
		got, ok := parseGitConfig([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}

// The host's git reads each case as parseGitConfig does: the same entries,
// and a bad line where it finds one.
func TestParseGitConfigAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: nothing to compare with")
	}
	dir := t.TempDir()
	for i, tc := range gitConfigCases {
		file := filepath.Join(dir, "config"+string(rune('a'+i%26))+strings.Repeat("x", i/26))
		require.NoError(t, os.WriteFile(file, []byte(tc.in), 0o644))
		cmd := exec.Command("git", "config", "--file", file, "--null", "--list")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent")
		out, err := cmd.Output()
		if !tc.ok {
			assert.Error(t, err, "%s: git read it: %q", tc.name, out)
			continue
		}
		require.NoError(t, err, tc.name)
		var fromGit []gitConfigEntry
		for _, rec := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
			if len(rec) == 0 {
				continue
			}
			name, value, hasValue := strings.Cut(string(rec), "\n")
			fromGit = append(fromGit, gitConfigEntry{name, value, hasValue})
		}
		if tc.name == "lone CR" && len(fromGit) == 1 && fromGit[0].value == "a b" {
			// Git before 2.45 turned each space character between words
			// of a value into a space; later ones keep it as it is.
			continue
		}
		assert.Equal(t, fromGit, tc.want, tc.name)
	}
}

// FuzzGitConfig: a configuration file comes from a git directory a command
// may have made where there was none. Whatever it holds, parseGitConfig
// returns, names keys as git does, and reads a value written with git's
// quoting back as it was.
func FuzzGitConfig(f *testing.F) {
	for _, tc := range gitConfigCases {
		f.Add(tc.in, ".husky")
	}
	f.Add("", "a \"quoted\" \\ value\twith\nlines; and # comments ")
	f.Fuzz(func(t *testing.T, data, value string) {
		entries, _ := parseGitConfig([]byte(data))
		for _, e := range entries {
			key := e.name[strings.LastIndexByte(e.name, '.')+1:]
			require.NotEmpty(t, key, "%q", e.name)
			require.True(t, isASCIIAlpha(key[0]), "%q", e.name)
			for i := 0; i < len(key); i++ {
				require.True(t, isGitKeyChar(key[i]) && key[i] == toLowerASCII(key[i]), "%q", e.name)
			}
			require.False(t, e.hasValue == false && e.value != "", "%q", e.name)
			require.NotContains(t, e.value, "\x00")
		}

		if i := strings.IndexByte(value, 0); i >= 0 {
			value = value[:i]
		}
		written := "[core]\n\thooksPath = " + quoteGitConfig(value) + " # set by a test\n"
		entries, ok := parseGitConfig([]byte(written))
		require.True(t, ok, "%q", written)
		require.Equal(t, []gitConfigEntry{{"core.hookspath", value, true}}, entries, "%q", written)
	})
}

// quoteGitConfig quotes a value as git config writes one.
func quoteGitConfig(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`)
	return `"` + r.Replace(v) + `"`
}
