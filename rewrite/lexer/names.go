package lexer

import "unicode/utf8"

// ColumnName is the name of the column a column reference's text (name,
// t.name or db.t.name, any quoted) names, when the text is ASCII, as
// information_schema's names are.
func ColumnName(text string, ansiQuotes bool) (string, bool) {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return "", false
		}
	}
	toks := Lex(text, Options{ANSIQuotes: ansiQuotes})
	for i, t := range toks {
		name := t.Kind == Ident || t.Kind == Quoted
		if i%2 == 0 && !name || i%2 == 1 && !PunctAt(text, toks, i, '.') {
			return "", false
		}
	}
	if len(toks)%2 == 0 {
		return "", false
	}
	return IdentText(text, toks[len(toks)-1]), true
}

// functionKeywords are the names MariaDB's lexer reads as a function's
// keyword when "(" follows them at once (sql_functions of its lex.h), or
// after spaces only under IGNORE_SPACE, and its grammar then takes for no
// table's name: `CREATE TABLE count(a INT)` is a syntax error. The other
// names of sql_functions (ADDDATE, LAST_VALUE, SESSION_USER, SUBDATE,
// SYSDATE, SYSTEM_USER, TRIM_ORACLE) are keywords the grammar also takes
// for a name, so `CREATE TABLE adddate(a INT)` makes a table (MariaDB
// 10.11, main.parser).
var functionKeywords = map[string]bool{"BIT_AND": true, "BIT_OR": true, "BIT_XOR": true, "CAST": true,
	"COUNT": true, "CUME_DIST": true, "CURDATE": true, "CURTIME": true, "DATE_ADD": true, "DATE_SUB": true, "DENSE_RANK": true,
	"EXTRACT": true, "FIRST_VALUE": true, "GROUP_CONCAT": true, "JSON_ARRAYAGG": true, "JSON_OBJECTAGG": true, "LAG": true,
	"LEAD": true, "MAX": true, "MEDIAN": true, "MID": true, "MIN": true, "NOW": true, "NTH_VALUE": true,
	"NTILE": true, "POSITION": true, "PERCENT_RANK": true, "PERCENTILE_CONT": true, "PERCENTILE_DISC": true, "RANK": true,
	"ROW_NUMBER": true, "STD": true, "STDDEV": true, "STDDEV_POP": true, "STDDEV_SAMP": true,
	"SUBSTR": true, "SUBSTRING": true, "SUM": true, "TRIM": true, "VARIANCE": true, "VAR_POP": true, "VAR_SAMP": true}

// FunctionKeyword reports whether w (upper case) is one of functionKeywords.
func FunctionKeyword(w string) bool { return functionKeywords[w] }

// CallParen reports whether the server reads "(" as following the word
// that ends at text[end] at once, as its lexer does to tell a function's
// keyword (functionKeywords) from a name: right there, or, under
// IGNORE_SPACE (ignoreSpace), after whitespace only — not after a comment,
// so text is the client's, not the normalized one.
func CallParen(text string, end int, ignoreSpace bool) bool {
	if ignoreSpace {
		for end < len(text) && IsSpace(text[end]) { // the lexer's MY_LEX_SKIP bytes
			end++
		}
	}
	return end < len(text) && text[end] == '('
}
