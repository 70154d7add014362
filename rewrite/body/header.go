package body

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// EndsWithEnd reports whether toks, without the ';' that end them, end
// with END or END and a word (a label, FOR, LOOP, …): where a body BEGIN
// … END ends.
func EndsWithEnd(text string, toks []lexer.Token) bool {
	n := len(toks)
	for n > 0 && lexer.PunctAt(text, toks, n-1, ';') {
		n--
	}
	return lexer.Word(text, toks, n-1) == "END" || n > 1 && toks[n-1].Kind == lexer.Ident && lexer.Word(text, toks, n-2) == "END"
}

// Characteristics skips a routine's characteristics from toks[j]: the
// index after them, -1 when a COMMENT has no string.
func Characteristics(text string, toks []lexer.Token, j int) int {
	w := func(j int) string { return lexer.Word(text, toks, j) }
	for {
		n := 0 // the words of the characteristic at j
		switch w(j) {
		case "COMMENT":
			if j+1 >= len(toks) || toks[j+1].Kind != lexer.String {
				return -1
			}
			n = 2
		case "DETERMINISTIC":
			n = 1
		case "LANGUAGE", "CONTAINS", "NO":
			if w(j+1) == "SQL" {
				n = 2
			}
		case "NOT":
			if w(j+1) == "DETERMINISTIC" {
				n = 2
			}
		case "READS", "MODIFIES":
			if w(j+1) == "SQL" && w(j+2) == "DATA" {
				n = 3
			}
		case "SQL":
			if w(j+1) == "SECURITY" && (w(j+2) == "DEFINER" || w(j+2) == "INVOKER") {
				n = 3
			}
		}
		if n == 0 {
			return j
		}
		j += n
	}
}

// compoundStarters are the words that start a compound statement outside a
// stored program (MariaDB runs BEGIN NOT ATOMIC, IF, CASE, LOOP, WHILE,
// REPEAT and FOR blocks sent as statements).
var compoundStarters = map[string]bool{"IF": true, "CASE": true, "LOOP": true, "WHILE": true, "REPEAT": true, "FOR": true}

// IsCompound reports whether the input (tokens toks of text) starts with a
// compound statement: BEGIN NOT ATOMIC, a block keyword, or a label.
func IsCompound(text string, toks []lexer.Token) bool {
	w := func(i int) string { return lexer.Word(text, toks, i) }
	switch {
	case w(0) == "BEGIN" && w(1) == "NOT" && w(2) == "ATOMIC", compoundStarters[w(0)]:
		return true
	case len(toks) > 2 && (toks[0].Kind == lexer.Ident || toks[0].Kind == lexer.Quoted) && lexer.PunctAt(text, toks, 1, ':'):
		return w(2) == "BEGIN" || compoundStarters[w(2)]
	}
	return false
}

// ReturnType reads RETURNS type at toks[i] (a CREATE FUNCTION's, after its
// parameters): the index after the type, -1 when it is not one the engine
// reads — a type name, its length or values in parentheses, and the words
// of signs, character sets and collations (TYPE OF and ROW TYPE OF name a
// table's columns: not read).
func ReturnType(text string, toks []lexer.Token, i int) int {
	w := func(j int) string { return lexer.Word(text, toks, j) }
	if w(i) != "RETURNS" || w(i+1) == "" || w(i+1) == "TYPE" || w(i+1) == "ROW" {
		return -1
	}
	j := i + 2
	name := func(k int) bool {
		return k < len(toks) && (toks[k].Kind == lexer.Ident || toks[k].Kind == lexer.Quoted || toks[k].Kind == lexer.String)
	}
	for j < len(toks) {
		switch word := w(j); {
		case lexer.PunctAt(text, toks, j, '('):
			if j = lexer.Closing(text, toks, j); j == 0 {
				return -1
			}
			j++
		case word == "CHARACTER" && w(j+1) == "SET" && name(j+2):
			j += 3
		case (word == "CHARSET" || word == "COLLATE") && name(j+1):
			j += 2
		case returnTypeWords[word]:
			j++
		default:
			return j
		}
	}
	return j
}

// returnTypeWords are the words a return type may hold after its name.
var returnTypeWords = map[string]bool{"UNSIGNED": true, "SIGNED": true, "ZEROFILL": true, "BINARY": true, "ASCII": true, "UNICODE": true,
	"BYTE": true, "PRECISION": true, "VARYING": true, "VARCHAR": true, "CHAR": true, "VARBINARY": true, "NATIONAL": true}

// OnlyEnd reports whether toks from i are ';' only.
func OnlyEnd(text string, toks []lexer.Token, i int) bool {
	for ; i < len(toks); i++ {
		if !lexer.PunctAt(text, toks, i, ';') {
			return false
		}
	}
	return true
}
