package forms

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// ImmediateLiteral reports whether toks hold EXECUTE IMMEDIATE 'text'
// [USING v[, …]] with every v a literal or a variable.
func ImmediateLiteral(text string, toks []lexer.Token) bool {
	if len(toks) < 3 || toks[2].Kind != lexer.String || text[toks[2].Start] != '\'' && text[toks[2].Start] != '"' {
		return false
	}
	if len(toks) == 3 {
		return true
	}
	if lexer.Word(text, toks, 3) != "USING" || len(toks) == 4 {
		return false
	}
	arg := true // a value is expected
	for i := 4; i < len(toks); i++ {
		switch t := toks[i]; {
		case arg && (t.Kind == lexer.Variable || t.Kind == lexer.Number || t.Kind == lexer.String):
			arg = false
		case arg && lexer.PunctAt(text, toks, i, '-') && i+1 < len(toks) && toks[i+1].Kind == lexer.Number:
		case !arg && lexer.PunctAt(text, toks, i, ','):
			arg = true
		default:
			return false
		}
	}
	return !arg
}

// Privileges reports the account and privilege statements: GRANT,
// REVOKE, CREATE / ALTER / DROP / RENAME USER or ROLE, SET PASSWORD, SET
// DEFAULT ROLE.
func Privileges(text string, toks []lexer.Token) bool {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	switch word(0) {
	case "GRANT", "REVOKE":
		return true
	case "CREATE", "ALTER", "DROP", "RENAME":
		i := 1
		if word(0) == "CREATE" && word(1) == "OR" && word(2) == "REPLACE" {
			i = 3
		}
		return word(i) == "USER" || word(i) == "ROLE"
	case "SET":
		return word(1) == "PASSWORD" || word(1) == "DEFAULT" && word(2) == "ROLE"
	}
	return false
}

// DatabaseDDL reads CREATE DATABASE | SCHEMA [IF NOT EXISTS] name and ALTER
// DATABASE | SCHEMA [name] followed by options (words, literals, '=',
// DEFAULT): the name and IF NOT EXISTS.
func DatabaseDDL(text string, toks []lexer.Token) (name string, ifNotExists, ok bool) {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	i := 2
	if word(i) == "IF" && word(i+1) == "NOT" && word(i+2) == "EXISTS" {
		ifNotExists = true
		i += 3
	}
	if word(0) == "CREATE" || i < len(toks) && toks[i].Kind == lexer.Quoted || i < len(toks) && toks[i].Kind == lexer.Ident &&
		!databaseOptions[word(i)] {
		if i >= len(toks) || toks[i].Kind != lexer.Ident && toks[i].Kind != lexer.Quoted {
			return "", false, false
		}
		name = lexer.IdentText(text, toks[i])
		i++
	}
	for ; i < len(toks); i++ {
		switch t := toks[i]; t.Kind {
		case lexer.Ident, lexer.Quoted, lexer.String, lexer.Number:
		case lexer.Punct:
			if text[t.Start] != '=' {
				return "", false, false
			}
		default:
			return "", false, false
		}
	}
	return name, ifNotExists, true
}

// databaseOptions are the words that start an option of ALTER DATABASE
// (which may leave out the database's name).
var databaseOptions = map[string]bool{"DEFAULT": true, "CHARACTER": true, "CHARSET": true, "COLLATE": true, "COMMENT": true,
	"UPGRADE": true}
