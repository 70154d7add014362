// Package model holds, for tests, models of how MariaDB reads a literal or
// a name and of how the mariadb CLI (client/mysql.cc: add_line and
// read_and_execute, MariaDB 10.11, reading UTF-8 or a single-byte
// character set) splits a script into statements and its own commands.
package model

import (
	"encoding/hex"
	"strings"
)

// Mode is the part of sql_mode that changes how text is read.
type Mode struct{ ANSIQuotes, NoBackslashEscapes bool }

// Modes are every combination.
var Modes = []Mode{{}, {ANSIQuotes: true}, {NoBackslashEscapes: true}, {true, true}}

// ReadString reads the string literal text starts with as the server reads
// it in mode m: its value, its length in text, and whether it is one.
func ReadString(text string, m Mode) (string, int, bool) {
	for _, intro := range []string{"_utf8mb4 X'", "_binary X'"} {
		if rest, ok := strings.CutPrefix(text, intro); ok {
			end := strings.IndexByte(rest, '\'')
			b, err := hex.DecodeString(rest[:max(end, 0)])
			return string(b), len(intro) + end + 1, end >= 0 && err == nil
		}
	}
	if !strings.HasPrefix(text, "'") {
		return "", 0, false
	}
	var b strings.Builder
	for i := 1; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\'' && i+1 < len(text) && text[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == '\'':
			return b.String(), i + 1, true
		case c == '\\' && !m.NoBackslashEscapes && i+1 < len(text):
			i++
			b.WriteByte(unescape(text[i]))
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// unescape is the byte \c stands for in a string.
func unescape(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'Z':
		return 0x1a
	}
	return c
}

// ReadIdent reads the back-quoted name text starts with.
func ReadIdent(text string) (string, int, bool) {
	if !strings.HasPrefix(text, "`") {
		return "", 0, false
	}
	var b strings.Builder
	for i := 1; i < len(text); i++ {
		switch {
		case text[i] == '`' && i+1 < len(text) && text[i+1] == '`':
			b.WriteByte('`')
			i++
		case text[i] == '`':
			return b.String(), i + 1, true
		default:
			b.WriteByte(text[i])
		}
	}
	return "", 0, false
}

// cliCommands are the mariadb CLI's command names, which a line starting a
// statement may run without a delimiter.
var cliCommands = []string{"?", "clear", "connect", "delimiter", "edit", "ego", "exit", "go", "help", "nopager", "notee",
	"nowarning", "pager", "print", "prompt", "quit", "rehash", "source", "status", "system", "tee", "use", "charset", "warnings"}

// CLIRead splits script as the mariadb CLI does (delimiter ';', the server
// status flag NO_BACKSLASH_ESCAPES as nbe): the client commands it would
// run (a `\` command, or a command word starting a statement) and the
// statements it would send.
func CLIRead(script string, nbe bool) (cmds, stmts []string) {
	var buf strings.Builder
	var inString byte
	mlComment := false
	for _, line := range strings.Split(strings.TrimSuffix(script, "\n"), "\n") {
		if buf.Len() == 0 && inString == 0 && !mlComment {
			if w := strings.Fields(line); len(w) > 0 && isCommand(w[0]) && (!strings.Contains(line, ";") || strings.EqualFold(w[0], "delimiter")) {
				cmds = append(cmds, line)
				continue
			}
		}
		var out strings.Builder
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case c == ' ' && out.Len() == 0 && buf.Len() == 0:
			case !mlComment && c == '\\' && inString != '`' && !(inString != 0 && nbe):
				i++
				if i >= len(line) {
					break
				}
				if inString != 0 || line[i] == 'N' {
					out.WriteByte('\\')
					out.WriteByte(line[i])
					continue
				}
				cmds = append(cmds, line[i-1:])
			case !mlComment && inString == 0 && c == ';':
				buf.WriteString(out.String())
				out.Reset()
				stmts = append(stmts, buf.String())
				buf.Reset()
			case !mlComment && inString == 0 && (c == '#' || c == '-' && i+1 < len(line) && line[i+1] == '-' &&
				(i+2 >= len(line) || isSpace(line[i+2]) || buf.Len() == 0 && out.Len() == 0)):
				i = len(line)
			case inString == 0 && c == '/' && strings.HasPrefix(line[i:], "/*") && !strings.HasPrefix(line[i:], "/*!") &&
				!strings.HasPrefix(line[i:], "/*M!"):
				i++
				mlComment = true
			case mlComment && c == '*' && strings.HasPrefix(line[i:], "*/"):
				i++
				mlComment = false
			default:
				if c == inString {
					inString = 0
				} else if !mlComment && inString == 0 && (c == '\'' || c == '"' || c == '`') {
					inString = c
				}
				if !mlComment {
					out.WriteByte(c)
				}
			}
		}
		if out.Len() > 0 || buf.Len() > 0 {
			buf.WriteString(out.String() + "\n")
		}
	}
	return cmds, stmts
}

func isCommand(w string) bool {
	for _, c := range cliCommands {
		if strings.EqualFold(w, c) {
			return true
		}
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}
