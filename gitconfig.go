package sandboxexec

import "bytes"

// gitConfigEntry is one variable of a git configuration file, named as git
// compares names: section and key lower-cased, a subsection as written
// ("core.hookspath", "submodule.Lib.path"). A name without "=" is a
// boolean, with no value.
type gitConfigEntry struct {
	name, value string
	hasValue    bool
}

// parseGitConfig reads a configuration file as git's own parser does
// (config.c: git_parse_source), so that what the policy protects is what
// the host's git will read: a value it would find must not be missed
// because this parser is stricter, nor one made up because it is looser.
// It stops where git would report a bad line, with ok false: git refuses
// to run on such a file, so nothing after the error is ever used.
// Includes ([include], [includeIf]) are entries like any other; they are
// not followed. As git does since 2.45, space characters between the words
// of a value are kept as they are; before, each was made a space, which
// only a value with a tab or a carriage return between words tells apart.
func parseGitConfig(data []byte) (entries []gitConfigEntry, ok bool) {
	r := gitConfigReader{data: data}
	if len(data) > 0 && data[0] == utf8BOM[0] {
		if !bytes.HasPrefix(data, utf8BOM) {
			return nil, false // git reads a BOM's first bytes as its own, then fails
		}
		r.pos = len(utf8BOM)
	}
	var section []byte // "core." once a [core] header is read
	comment := false
	for {
		c := r.next()
		switch {
		case c == '\n' && r.eof:
			return entries, true
		case c == '\n':
			comment = false
		case comment || isGitSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			name, ok := r.sectionHeader()
			if !ok || len(name) == 0 {
				return entries, false
			}
			section = append(name, '.')
		case isASCIIAlpha(c):
			e, ok := r.variable(c)
			if !ok {
				return entries, false
			}
			e.name = string(section) + e.name
			entries = append(entries, e)
		default:
			return entries, false
		}
	}
}

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// gitConfigReader hands out a file's bytes as git's get_next_char does:
// "\r\n" reads as "\n", and the end of the file as one more "\n", with eof
// set.
type gitConfigReader struct {
	data []byte
	pos  int
	eof  bool
}

func (r *gitConfigReader) next() byte {
	if r.pos >= len(r.data) {
		r.eof = true
		return '\n'
	}
	c := r.data[r.pos]
	r.pos++
	if c == '\r' && r.pos < len(r.data) && r.data[r.pos] == '\n' {
		r.pos++
		return '\n'
	}
	return c
}

// sectionHeader reads what follows "[" up to "]": a section name, lower-
// cased, with its subsection, as written, after a dot ([core "x"] is
// "core.x"). git's get_base_var.
func (r *gitConfigReader) sectionHeader() ([]byte, bool) {
	var name []byte
	for {
		c := r.next()
		switch {
		case r.eof:
			return nil, false
		case c == ']':
			return name, true
		case isGitSpace(c):
			return r.subsection(name, c)
		case !isGitKeyChar(c) && c != '.':
			return nil, false
		}
		name = append(name, toLowerASCII(c))
	}
}

// subsection reads ` "name"]` after a section's name; c is the space that
// ended the name. git's get_extended_base_var.
func (r *gitConfigReader) subsection(name []byte, c byte) ([]byte, bool) {
	for {
		if c == '\n' {
			return nil, false
		}
		if c = r.next(); !isGitSpace(c) {
			break
		}
	}
	if c != '"' {
		return nil, false
	}
	name = append(name, '.')
	for {
		c := r.next()
		if c == '\n' {
			return nil, false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = r.next(); c == '\n' {
				return nil, false
			}
		}
		name = append(name, c)
	}
	return name, r.next() == ']'
}

// variable reads a key, whose first letter is c, and its value if "="
// follows. git's get_value.
func (r *gitConfigReader) variable(c byte) (gitConfigEntry, bool) {
	key := []byte{toLowerASCII(c)}
	for {
		c = r.next()
		if r.eof || !isGitKeyChar(c) {
			break
		}
		key = append(key, toLowerASCII(c))
	}
	for c == ' ' || c == '\t' {
		c = r.next()
	}
	if c == '\n' {
		return gitConfigEntry{name: string(key)}, true
	}
	if c != '=' {
		return gitConfigEntry{}, false
	}
	value, ok := r.value()
	return gitConfigEntry{name: string(key), value: value, hasValue: true}, ok
}

// value reads a value up to the end of its line: quotes keep spaces and
// comment characters, a backslash escapes \\, \", \n, \t, \b or the line's
// end, spaces around it go, "#" or ";" outside quotes starts a comment.
// git's parse_value. Git hands the value on as a C string: a NUL byte ends
// it.
func (r *gitConfigReader) value() (string, bool) {
	var v []byte
	quote, comment := false, false
	trim := 0 // where trailing spaces began; 0 for none
	for {
		c := r.next()
		if c == '\n' {
			if quote {
				return "", false
			}
			if trim > 0 {
				v = v[:trim]
			}
			if i := bytes.IndexByte(v, 0); i >= 0 {
				v = v[:i]
			}
			return string(v), true
		}
		if comment {
			continue
		}
		if isGitSpace(c) && !quote {
			if trim == 0 {
				trim = len(v)
			}
			if len(v) > 0 {
				v = append(v, c)
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		trim = 0
		switch c {
		case '\\':
			switch c = r.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
		case '"':
			quote = !quote
			continue
		}
		v = append(v, c)
	}
}

// The character classes of git's own ctype (git-compat-util.h): ASCII
// only, and its space is these four.
func isGitSpace(c byte) bool   { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isASCIIAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isGitKeyChar(c byte) bool { return isASCIIAlpha(c) || '0' <= c && c <= '9' || c == '-' }
func toLowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
