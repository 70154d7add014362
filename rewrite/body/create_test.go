package body

import (
	"fmt"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

func TestCreate(t *testing.T) {
	for text, want := range map[string]string{
		"CREATE PROCEDURE p() BEGIN END":                        "PROCEDURE 2",
		"CREATE OR REPLACE DEFINER = CURRENT_USER() FUNCTION f": "FUNCTION 9",
		"CREATE DEFINER = 'u'@'h' AGGREGATE FUNCTION f":         "FUNCTION 7",
		"CREATE DEFINER = `u` TRIGGER tr":                       "TRIGGER 5",
		"CREATE DEFINER = (x) EVENT e":                          " 0",
		"CREATE TABLE t (a INT)":                                " 0",
		"SELECT 1":                                              " 0",
	} {
		toks := lexer.Lex(text, lexer.Options{})
		k, next := CreateAt(text, toks, 0)
		if got := fmt.Sprint(k, " ", next); got != want {
			t.Errorf("CreateAt(%q) = %s, want %s", text, got, want)
		}
	}
	toks := lexer.Lex("CREATE TRIGGER tr", lexer.Options{})
	if !CreatesTrigger("CREATE TRIGGER tr", toks, 0) || CreatesRoutine("CREATE TRIGGER tr", toks, 0) != "" {
		t.Error("CREATE TRIGGER")
	}
	toks = lexer.Lex("CREATE FUNCTION f", lexer.Options{})
	if CreatesTrigger("CREATE FUNCTION f", toks, 0) || CreatesRoutine("CREATE FUNCTION f", toks, 0) != "FUNCTION" {
		t.Error("CREATE FUNCTION")
	}
}

func TestSettings(t *testing.T) {
	for _, c := range []struct {
		text string
		lo   lexer.Options
		want string
	}{
		{"SET STATEMENT max_statement_time = 1 FOR CREATE PROCEDURE p() BEGIN END", lexer.Options{}, "6 [max_statement_time]"},
		{"SET STATEMENT sql_mode = 'TRADITIONAL' FOR CREATE PROCEDURE p() BEGIN END", lexer.Options{}, "6 [sql_mode]"},
		{"SET STATEMENT sql_mode = 'ANSI' FOR CREATE PROCEDURE p() BEGIN END", lexer.Options{}, "0 []"},
		{"SET STATEMENT sql_mode = DEFAULT FOR CREATE PROCEDURE p() BEGIN END", lexer.Options{}, "0 []"},
		{"SET STATEMENT sql_mode = '' FOR CREATE PROCEDURE p() BEGIN END", lexer.Options{ANSIQuotes: true}, "0 []"},
		{"SET STATEMENT max_statement_time = 1 FOR SELECT 1", lexer.Options{}, "0 []"},
		{"CREATE PROCEDURE p() BEGIN END", lexer.Options{}, "0 []"},
	} {
		toks := lexer.Lex(c.text, c.lo)
		at, vars := Settings(c.text, toks, 0, c.lo)
		if got := fmt.Sprint(at, " ", vars); got != c.want {
			t.Errorf("Settings(%q) = %s, want %s", c.text, got, c.want)
		}
	}
}
