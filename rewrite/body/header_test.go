package body

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// at is f of text's tokens and the index of the token starting with
// from, printed by the caller.
func at(text, from string) (string, []lexer.Token, int) {
	toks := lexer.Lex(text, lexer.Options{})
	for i, t := range toks {
		if text[t.Start:t.End] == from {
			return text, toks, i
		}
	}
	return text, toks, len(toks)
}

func TestHeader(t *testing.T) {
	for text, want := range map[string]bool{"BEGIN SELECT 1; END;;": true, "BEGIN END lbl": true, "BEGIN SELECT 1": false, "END": true} {
		if got := EndsWithEnd(text, lexer.Lex(text, lexer.Options{})); got != want {
			t.Errorf("EndsWithEnd(%q) = %v", text, got)
		}
	}
	for text, want := range map[string]bool{"BEGIN NOT ATOMIC END": true, "IF 1 THEN END IF": true, "l: LOOP END LOOP": true,
		"l: SELECT 1": false, "BEGIN": false, "SELECT 1": false} {
		if got := IsCompound(text, lexer.Lex(text, lexer.Options{})); got != want {
			t.Errorf("IsCompound(%q) = %v", text, got)
		}
	}
	for _, c := range []struct {
		text, from string
		want       int
	}{
		{"RETURNS INT BEGIN", "RETURNS", 2},
		{"RETURNS VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin BINARY DETERMINISTIC", "RETURNS", 11},
		{"RETURNS TYPE OF t.c", "RETURNS", -1},
		{"RETURNS DECIMAL(10", "RETURNS", -1},
		{"RETURNS INT UNSIGNED", "RETURNS", 3},
	} {
		text, toks, i := at(c.text, c.from)
		if got := ReturnType(text, toks, i); got != c.want {
			t.Errorf("ReturnType(%q) = %d, want %d", c.text, got, c.want)
		}
	}
	for _, c := range []struct {
		text, from string
		want       int
	}{
		{"DETERMINISTIC NO SQL SQL SECURITY INVOKER COMMENT 'x' BEGIN", "DETERMINISTIC", 8},
		{"NOT DETERMINISTIC CONTAINS SQL LANGUAGE SQL READS SQL DATA BEGIN", "NOT", 9},
		{"MODIFIES SQL DATA BEGIN", "MODIFIES", 3},
		{"COMMENT x", "COMMENT", -1},
	} {
		text, toks, i := at(c.text, c.from)
		if got := Characteristics(text, toks, i); got != c.want {
			t.Errorf("Characteristics(%q) = %d, want %d", c.text, got, c.want)
		}
	}
	text, toks, i := at("END ; ;", ";")
	if !OnlyEnd(text, toks, i) || OnlyEnd(text, toks, 0) {
		t.Error("OnlyEnd")
	}
}
