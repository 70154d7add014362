package body

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/recovery"
)

// CreateAt reads CREATE [OR REPLACE] [DEFINER = …] [AGGREGATE]
// PROCEDURE | FUNCTION | TRIGGER | EVENT | PACKAGE at toks[i]: kind is the
// routine's kind ("" for any other statement), next the index after it.
func CreateAt(text string, toks []lexer.Token, i int) (kind string, next int) {
	w := func(j int) string { return lexer.Word(text, toks, j) }
	if w(i) != "CREATE" {
		return "", 0
	}
	j := i + 1
	if w(j) == "OR" && w(j+1) == "REPLACE" {
		j += 2
	}
	if w(j) == "DEFINER" && lexer.PunctAt(text, toks, j+1, '=') {
		j += 2
		switch {
		case w(j) == "CURRENT_USER":
			j++
			if lexer.PunctAt(text, toks, j, '(') && lexer.PunctAt(text, toks, j+1, ')') {
				j += 2
			}
		case j < len(toks) && (toks[j].Kind == lexer.Ident || toks[j].Kind == lexer.String || toks[j].Kind == lexer.Quoted):
			j++
			if j < len(toks) && toks[j].Kind == lexer.Variable {
				j++ // @host
			}
		default:
			return "", 0
		}
	}
	if w(j) == "AGGREGATE" {
		j++
	}
	switch k := w(j); k {
	case "PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "PACKAGE":
		return k, j + 1
	}
	return "", 0
}

// CreatesTrigger reports whether toks[i] starts a CREATE TRIGGER.
func CreatesTrigger(text string, toks []lexer.Token, i int) bool {
	k, _ := CreateAt(text, toks, i)
	return k == "TRIGGER"
}

// Settings reads, at toks[i], SET STATEMENT var = value[, …] FOR
// before a CREATE (recovery.SetStatementPrefix): at is the index of the statement
// it applies to and vars the variables it sets; at is i and vars nil when
// there is no such prefix, or when it sets sql_mode to a value under which
// the server would read a routine's body otherwise than the proxy does.
// The server reads the CREATE under the session's sql_mode, but stores the
// routine with the one SET STATEMENT gives, and reads the body again under
// it on every call: that value may hold no mode that changes how a text is
// lexed or parsed, and the session may have none either.
func Settings(text string, toks []lexer.Token, i int, lo lexer.Options) (at int, vars []string) {
	if lexer.Word(text, toks, i) != "SET" || lexer.Word(text, toks, i+1) != "STATEMENT" {
		return i, nil
	}
	end, vars, ok := recovery.SetStatementPrefix(text, toks, i+2)
	if !ok || lexer.Word(text, toks, end+1) != "CREATE" {
		return i, nil
	}
	for j := i + 2; j < end; j++ {
		if lexer.Word(text, toks, j) != "SQL_MODE" {
			continue
		}
		v := toks[j+2] // setStatementPrefix: the name, '=', one literal or word
		mode := ""
		switch v.Kind {
		case lexer.String:
			mode = lexer.Unquote(text[v.Start:v.End], !lo.NoBackslashEscapes)
		case lexer.Ident:
			mode = text[v.Start:v.End]
		default:
			return i, nil
		}
		if lo.ANSIQuotes || lo.NoBackslashEscapes || strings.EqualFold(mode, "DEFAULT") {
			return i, nil
		}
		for _, m := range strings.Split(strings.ToUpper(mode), ",") {
			if readingModes[strings.TrimSpace(m)] {
				return i, nil
			}
		}
	}
	return end + 1, vars
}

// readingModes are the sql_mode flags (and the modes that include them)
// under which the server lexes or parses a text otherwise than under the
// default mode.
var readingModes = map[string]bool{"ANSI_QUOTES": true, "NO_BACKSLASH_ESCAPES": true, "IGNORE_SPACE": true,
	"PIPES_AS_CONCAT": true, "HIGH_NOT_PRECEDENCE": true, "ANSI": true, "ORACLE": true, "MSSQL": true, "DB2": true,
	"POSTGRESQL": true, "MAXDB": true, "SIMULTANEOUS_ASSIGNMENT": true}

// CreatesRoutine is "PROCEDURE" or "FUNCTION" when toks[i] starts a CREATE
// PROCEDURE or a CREATE [AGGREGATE] FUNCTION the engine reads, "" otherwise.
// An aggregate function is a stored function of the same name space whose
// body fetches the group's rows (FETCH GROUP NEXT ROW, a statement that
// reaches no table): read, placed and called like any stored function.
func CreatesRoutine(text string, toks []lexer.Token, i int) string {
	switch k, _ := CreateAt(text, toks, i); k {
	case "PROCEDURE", "FUNCTION":
		return k
	}
	return ""
}
