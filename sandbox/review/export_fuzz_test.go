package review

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/quote/model"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/tabledef"
)

// FuzzExportText: whatever names and values a sandbox holds — a database,
// a table, a column, a comment, a row's value — the export's statements
// (rows, ALTER TABLE planned from SHOW CREATE TABLE, notes) are read by the
// mariadb CLI, in either NO_BACKSLASH_ESCAPES state, as exactly those
// statements and no command of its own, and by the server as one statement
// each, writing the table it was built for.
func FuzzExportText(f *testing.F) {
	for _, s := range [][4]string{
		{"app", "t", "c", "v"},
		{"app", "x\n\\! touch pwned\nDELETE FROM app.secrets; #", "INT#", "it's"},
		{"a`b", "msg\nCOLUMN z INT PARTITION BY HASH(id)(PARTITION a/*", "*/DATA DIRECTORY='/tmp',PARTITION b)#", `\'; DROP TABLE t; --`},
		{"中文", "t\r", "-- c", "\x00\xff"},
		{"d", "delimiter //", "system ls", "\\! ls\n"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	e := rewrite.NewEngine(64)
	f.Fuzz(func(t *testing.T, db, table, column, value string) {
		for _, n := range []string{db, table, column} {
			if !validName(n) || strings.EqualFold(n, "id") {
				t.Skip()
			}
		}
		target := rewrite.Table{DB: db, Name: table}
		stmts, notes := fuzzExport(t, target, column, value)
		script := adminapi.ExportText(append(commentLines(notes), stmts...))
		for _, nbe := range []bool{false, true} {
			cmds, read := model.CLIRead(script, nbe)
			if len(cmds) > 0 || len(read) != len(stmts) {
				t.Fatalf("the CLI reads commands %q and %d statements of %d in:\n%s", cmds, len(read), len(stmts), script)
			}
			for i, s := range read {
				if s != stmts[i] {
					t.Fatalf("the CLI reads statement %d as %q, not %q", i, s, stmts[i])
				}
			}
		}
		for _, s := range stmts {
			a := e.Analyze(s, rewrite.Options{CaseSensitiveNames: true})
			if len(a.Statements) != 1 || len(a.Statements[0].Writes) != 1 || a.Statements[0].Writes[0] != target {
				t.Fatalf("the server reads %q as %+v", s, a.Statements)
			}
		}
	})
}

// validName reports a name MariaDB takes for a database, table or column.
func validName(n string) bool {
	return n != "" && utf8.RuneCountInString(n) <= 64 && utf8.ValidString(n) && !strings.ContainsRune(n, 0) &&
		!strings.HasSuffix(n, " ")
}

// fuzzExport builds an export of target, a table of one key and one other
// column, with one row inserted, one updated and one deleted holding
// value, the column added by the sandbox with value as its comment, and a
// note naming all of them.
func fuzzExport(t *testing.T, target rewrite.Table, column, value string) (stmts, notes []string) {
	cols := []forker.Column{{Name: "id", DataType: "int", Type: "int(11)"},
		{Name: column, DataType: "varchar", Type: "varchar(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", Charset: "utf8mb4", Collation: "utf8mb4_bin"}}
	dt := &diffTable{logical: target, fork: forker.Shape{Columns: cols, Key: []string{"id"}}, key: []string{"id"}, change: "forked", method: methodCapture}
	lit := quote.String(value)
	et := &exportTable{td: &tableDiff{t: dt, rows: []diffRow{
		{op: "insert", keyLits: []string{"1"}, afterLits: []string{"1", lit}},
		{op: "update", keyLits: []string{"2"}, afterLits: []string{"2", lit}},
		{op: "delete", keyLits: []string{"3"}},
	}}}
	from, err := tabledef.Parse("CREATE TABLE " + quote.Ident(target.Name) + " (\n  `id` int(11) NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB")
	if err != nil {
		t.Fatal(err)
	}
	to, err := tabledef.Parse("CREATE TABLE " + quote.Ident(target.Name) + " (\n  `id` int(11) NOT NULL,\n  " + quote.Ident(column) +
		" varchar(10) DEFAULT NULL COMMENT " + serverString(value) + ",\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB COMMENT=" + serverString(value))
	if err != nil {
		t.Fatalf("the server's CREATE TABLE text: %v", err)
	}
	pre, post, _ := tabledef.Alter(from, to)
	if len(pre) == 0 {
		t.Fatal("no ALTER for a column added")
	}
	stmts = append(stmts, "ALTER TABLE "+target.Quoted()+" "+strings.Join(append(pre, post...), ", "))
	d := &differ{}
	for _, op := range []string{"insert", "update", "delete"} {
		stmts = append(stmts, d.dml(et, op)...)
	}
	notes = []string{"not exported: " + target.String() + "." + column + " = " + value}
	return stmts, notes
}

// serverString writes s as SHOW CREATE TABLE writes a comment or a
// default (append_unescaped, whatever the sql_mode): quoted, the quote
// doubled, a backslash and control bytes escaped with a backslash.
func serverString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `''`, "\x00", `\0`, "\n", `\n`, "\r", `\r`, "\x1a", `\Z`)
	return "'" + r.Replace(s) + "'"
}
