package dynamic

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

func TestRead(t *testing.T) {
	for sql, want := range map[string]string{
		"PREPARE s FROM CONCAT('SELECT ', @c);":       "CONCAT('SELECT ', @c)",
		"EXECUTE IMMEDIATE @q USING 1":                "@q",
		"EXECUTE IMMEDIATE UPPER(@a) = 'x' OR NOT @b": "UPPER(@a) = 'x' OR NOT @b",
		"PREPARE s FROM 'SELECT 1'":                   "",
		"PREPARE s FROM f(@a)":                        "",
		"EXECUTE IMMEDIATE CONCAT(@a":                 "",
		"EXECUTE IMMEDIATE @a /* c */":                "",
		"SELECT 1":                                    "",
	} {
		d, ok := Read(sql, lexer.Options{})
		if got := ""; ok {
			got = d.Expr
			if got != want {
				t.Errorf("Read(%q) = %q, want %q", sql, got, want)
			}
		} else if want != "" {
			t.Errorf("Read(%q) = nothing, want %q", sql, want)
		}
	}
	d, _ := Read(`PREPARE s FROM @q`, lexer.Options{})
	v := `it's \ x`
	if got := d.With(&v); got != `PREPARE s FROM 'it''s \\ x'` {
		t.Errorf("With = %s", got)
	}
	if got := d.With(nil); got != "PREPARE s FROM NULL" {
		t.Errorf("With(nil) = %s", got)
	}
}

func TestTexts(t *testing.T) {
	for sql, want := range map[string]string{
		"EXECUTE IMMEDIATE 'SELECT 1';": "SELECT 1",
		"EXECUTE IMMEDIATE 'SELECT ?'":  "",
		"EXECUTE IMMEDIATE '/*!1*/ 1'":  "",
		"EXECUTE IMMEDIATE 'é'":         "",
		"EXECUTE IMMEDIATE @a":          "",
		"EXECUTE IMMEDIATE 'a' 'b'":     "",
	} {
		if got, ok := LiteralText(sql, lexer.Options{}, "EXECUTE", "IMMEDIATE"); got != want || ok != (want != "") {
			t.Errorf("LiteralText(%q) = %q, %v", sql, got, ok)
		}
	}
	if got, ok := LiteralText("PREPARE `s` FROM \"SELECT 2\"", lexer.Options{}, "PREPARE", "", "FROM"); !ok || got != "SELECT 2" {
		t.Errorf("LiteralText of PREPARE = %q, %v", got, ok)
	}
	if !BareExecute("EXECUTE s;", lexer.Options{}) || BareExecute("EXECUTE s USING @a", lexer.Options{}) || BareExecute("EXECUTE IMMEDIATE", lexer.Options{}) {
		t.Error("BareExecute")
	}
	for text, want := range map[string]bool{"PREPARE s FROM 'x'": true, "DEALLOCATE PREPARE s": true, "DROP PREPARE s": true, "DROP TABLE t": false, "SELECT 1": false} {
		if got := Unpreparable(text, lexer.Options{}); got != want {
			t.Errorf("Unpreparable(%q) = %v", text, got)
		}
	}
}
