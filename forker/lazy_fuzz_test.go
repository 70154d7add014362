package forker

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// lazyNamed is a lazy fork of a table whose key column is key and whose
// other column is col.
func lazyNamed(key, col string) Lazy {
	cp := Capture{
		Fork: sqlname.Table{DB: "_sqlfork_1_app", Name: "t"}, Side: sqlname.Table{DB: "_sqlfork_1", Name: "c_ab"},
		Trigger: "_sqlfork_ab", Marker: "_sqlfork_existed",
		Shape: Shape{Columns: []Column{{Name: key, Type: "int(11)", DataType: "int"}, {Name: col, Type: "varchar(10)", DataType: "varchar"}},
			Key: []string{key}, KeyKind: "primary", Transactional: true},
	}
	return Lazy{Src: sqlname.Table{DB: "app", Name: "t"}, Capture: cp, Staging: sqlname.Table{DB: "_sqlfork_1", Name: "fc_ab"},
		Fn: sqlname.Table{DB: "_sqlfork_1", Name: "fillc_ab"}, Up: sqlname.Table{DB: "_sqlfork_1", Name: "upc_ab"}, Yield: "sqlfork:y"}
}

// shapeOf is the texts generated for l, each as its tokens: a quoted
// identifier as "`", every other token as its text.
func shapeOf(l Lazy) string {
	var out []string
	for _, text := range []string{l.fillFunction(), l.upProcedure(), l.stagedBody([]string{"5", "7"}, "9")} {
		for _, tk := range lexer.Lex(text, lexer.Options{}) {
			if tk.Kind == lexer.Quoted {
				out = append(out, "`")
				continue
			}
			out = append(out, text[tk.Start:tk.End])
		}
		out = append(out, "\n")
	}
	return strings.Join(out, " ")
}

// FuzzLazyNamesQuoted: column names, whatever they hold, stay quoted
// identifiers in the fill function, the copy-up procedure and the
// copy-up block: the generated statements lex as they do for plain names.
func FuzzLazyNamesQuoted(f *testing.F) {
	for _, s := range [][2]string{{"id", "v"}, {"a`b", "c"}, {"sqlfork_k", "sqlfork_hi"}, {"x'); DROP TABLE t; --", "`"}, {"*/", "/*"}, {"\"", "\\"}} {
		f.Add(s[0], s[1])
	}
	want := shapeOf(lazyNamed("a", "b"))
	f.Fuzz(func(t *testing.T, key, col string) {
		if key == "" || col == "" || !utf8.ValidString(key) || !utf8.ValidString(col) || strings.EqualFold(key, col) ||
			strings.ContainsRune(key+col, 0) {
			return
		}
		if got := shapeOf(lazyNamed(key, col)); got != want {
			t.Fatalf("names %q, %q change the generated SQL's tokens:\n%s\nwant\n%s", key, col, got, want)
		}
	})
}
