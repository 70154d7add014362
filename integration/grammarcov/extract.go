package main

import (
	"bufio"
	"bytes"
	"os"
	"strings"
)

// mysqltestCommands are the words that start a mysqltest command rather than
// an SQL statement (the test language's own statements).
var mysqltestCommands = map[string]bool{
	"append_file": true, "assert": true, "cat_file": true, "change_user": true, "character_set": true,
	"chmod": true, "connect": true, "connection": true, "copy_file": true, "copy_files_wildcard": true,
	"dec": true, "die": true, "diff_files": true, "dirty_close": true, "disconnect": true, "echo": true,
	"end": true, "end_timer": true, "error": true, "eval": true, "evalp": true, "exec": true,
	"exec_in_background": true, "execw": true, "exit": true, "file_exists": true, "force-cpdir": true,
	"force-rmdir": true, "horizontal_results": true, "if": true, "inc": true, "let": true, "list_files": true,
	"list_files_append_file": true, "list_files_write_file": true, "lowercase_result": true, "mkdir": true,
	"move_file": true, "output": true, "partially_sorted_result": true, "perl": true, "ping": true,
	"query_horizontal": true, "query_vertical": true, "real_sleep": true, "reap": true, "remove_file": true,
	"remove_files_wildcard": true, "replace_column": true, "replace_numeric_round": true, "replace_regex": true,
	"replace_result": true, "require": true, "reset_connection": true, "result_format": true, "rmdir": true,
	"save_master_pos": true, "send_eval": true, "send_quit": true, "send_shutdown": true, "shutdown_server": true,
	"skip": true, "sleep": true, "sorted_result": true, "source": true, "start_timer": true,
	"sync_slave_with_master": true, "sync_with_master": true, "system": true, "vertical_results": true,
	"wait_for_slave_to_stop": true, "while": true, "write_file": true, "write_line": true,
}

// sqlPrefixes are mysqltest commands whose argument is an SQL statement.
var sqlPrefixes = []string{"query", "send"}

// extractFile returns the SQL statements of a mysqltest file: the text
// between delimiters that is no mysqltest command, without the delimiter.
// Statements naming a mysqltest $variable are left out (their text is
// only known when the test runs).
func extractFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return extract(data), nil
}

func extract(data []byte) []string {
	var out []string
	delim := ";"
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	heredoc := "" // the terminator of a perl / write_file block being skipped
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if heredoc != "" {
			if trimmed == heredoc {
				heredoc = ""
			}
			continue
		}
		if cur.Len() == 0 {
			switch {
			case trimmed == "", strings.HasPrefix(trimmed, "#"):
				continue
			case strings.HasPrefix(trimmed, "--"):
				cmd := strings.TrimSpace(strings.TrimPrefix(trimmed, "--"))
				if d, ok := delimiterCommand(cmd); ok {
					delim = d
				} else if h, ok := heredocStart(cmd); ok {
					heredoc = h
				}
				continue
			case strings.HasPrefix(trimmed, "}"):
				trimmed = strings.TrimSpace(strings.TrimPrefix(trimmed, "}"))
				if trimmed == "" {
					continue
				}
				line = trimmed
			}
			if w := firstWord(trimmed); mysqltestCommands[strings.ToLower(w)] {
				if h, ok := heredocStart(trimmed); ok {
					heredoc = h
					continue
				}
			}
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		for {
			text := cur.String()
			i := strings.Index(text, delim)
			if i < 0 {
				break
			}
			stmt := strings.TrimSpace(text[:i])
			rest := text[i+len(delim):]
			cur.Reset()
			if strings.TrimSpace(rest) != "" {
				cur.WriteString(strings.TrimLeft(rest, " \t"))
			}
			if d, ok := delimiterCommand(stmt); ok {
				delim = d
				continue
			}
			if s, ok := sqlStatement(stmt); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// sqlStatement returns the SQL of one mysqltest statement, ok=false for a
// test-language command or a statement with $variables.
func sqlStatement(stmt string) (string, bool) {
	if stmt == "" || strings.HasPrefix(stmt, "#") || strings.HasPrefix(stmt, "--") || strings.HasPrefix(stmt, "{") ||
		strings.HasPrefix(stmt, "}") {
		return "", false
	}
	w := strings.ToLower(firstWord(stmt))
	for _, p := range sqlPrefixes {
		if w == p {
			stmt = strings.TrimSpace(stmt[len(p):])
			w = strings.ToLower(firstWord(stmt))
		}
	}
	if mysqltestCommands[w] || strings.HasPrefix(w, "disable_") || strings.HasPrefix(w, "enable_") {
		return "", false
	}
	if strings.Contains(stmt, "$") {
		return "", false
	}
	return stmt, true
}

// delimiterCommand reads "delimiter X" (the mysqltest command).
func delimiterCommand(s string) (string, bool) {
	f := strings.Fields(s)
	if len(f) == 2 && strings.EqualFold(f[0], "delimiter") {
		if d := strings.TrimSuffix(f[1], ";"); d != "" {
			return d, true
		}
		return ";", true
	}
	return "", false
}

// heredocStart reads the commands that take the following lines up to a
// terminator (perl, write_file, append_file): the terminator, EOF unless
// given.
func heredocStart(s string) (string, bool) {
	f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(s), ";"))
	if len(f) == 0 {
		return "", false
	}
	switch strings.ToLower(f[0]) {
	case "perl":
		if len(f) > 1 {
			return f[1], true
		}
		return "EOF", true
	case "write_file", "append_file":
		if len(f) > 2 {
			return f[2], true
		}
		return "EOF", true
	}
	return "", false
}

func firstWord(s string) string {
	end := 0
	for end < len(s) {
		c := s[end]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ';' {
			break
		}
		end++
	}
	return s[:end]
}
