package forms

import (
	"fmt"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions for the parser

	"github.com/sqlfork/sqlfork-proxy/rewrite/ident"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// read runs a reader on each text and compares what it returns, printed,
// with want.
func read(t *testing.T, name string, cases map[string]string, f func(text string, toks []lexer.Token) []any) {
	t.Helper()
	for text, want := range cases {
		if got := fmt.Sprint(f(text, lexer.Lex(text, lexer.Options{}))...); got != want {
			t.Errorf("%s(%q) = %s, want %s", name, text, got, want)
		}
	}
}

// sitesIn is a reader, for read, of the tables f finds in a text in the
// database app, and whether it read the text.
func sitesIn(f func(text string, toks []lexer.Token, db string) ([]ident.Site, bool)) func(string, []lexer.Token) []any {
	return func(text string, toks []lexer.Token) []any {
		sites, ok := f(text, toks, "app")
		return []any{sites, " ", ok}
	}
}

func TestTables(t *testing.T) {
	read(t, "MaintenanceTables", map[string]string{
		"CHECK TABLE t, db.u FOR UPGRADE":                 "[{12 13 0 app.t false false false 0 0} {15 19 0 db.u true false false 0 0}] true",
		"REPAIR NO_WRITE_TO_BINLOG TABLE t QUICK USE_FRM": "[{32 33 0 app.t false true false 0 0}] true",
		"OPTIMIZE TABLES `a`":                             "[{16 19 0 app.a false true false 0 0}] true",
		"CHECKSUM TABLE t EXTENDED":                       "[{15 16 0 app.t false false false 0 0}] true",
		"CHECK TABLE t + 1":                               "[] false",
		"ANALYZE TABLE":                                   "[] false",
	}, sitesIn(MaintenanceTables))
	read(t, "KeyCacheTables", map[string]string{
		"CACHE INDEX t1, t2 (i) IN c": "[{12 14 0 app.t1 false false false 0 0} {16 18 0 app.t2 false false false 0 0}] false",
		"LOAD INDEX INTO CACHE t1 IGNORE LEAVES, db.t2 INDEX (ALL)": "[{22 24 0 app.t1 false false false 0 0} " +
			"{40 45 0 db.t2 true false false 0 0}] true",
		"CACHE INDEX t IN":                           "[{12 13 0 app.t false false false 0 0}] false",
		"LOAD INDEX INTO CACHE t PARTITION (p1, p2)": "[{22 23 0 app.t false false false 0 0}] true",
	}, sitesIn(KeyCacheTables))
	read(t, "TableDDL", map[string]string{
		"CREATE OR REPLACE TEMPORARY TABLE IF NOT EXISTS db.t (a INT)": "{48 52 0 db.t true true false 0 0} CREATE TABLE true true",
		"ALTER TABLE t ADD COLUMN a INT":                               "{12 13 0 app.t false true false 0 0} ALTER TABLE false true",
		"ALTER ONLINE IGNORE TABLE t FORCE":                            "{26 27 0 app.t false true false 0 0} ALTER TABLE false true",
		"CREATE TABLE t LIKE u":                                        "{0 0 0 . false false false 0 0}  false false",
		"CREATE TABLE t (a INT) ENGINE=CONNECT":                        "{0 0 0 . false false false 0 0}  false false",
	}, func(text string, toks []lexer.Token) []any {
		s, k, temp, ok := TableDDL(text, toks, "app")
		return []any{s, " ", k, " ", temp, " ", ok}
	})
	if !Unreserved("RANK") || Unreserved("SELECT") {
		t.Error("Unreserved")
	}
}

func TestSession(t *testing.T) {
	read(t, "ImmediateLiteral", map[string]string{
		"EXECUTE IMMEDIATE 'SELECT 1'":  "true",
		"EXECUTE IMMEDIATE CONCAT('a')": "false",
		"EXECUTE IMMEDIATE 'x' USING 1": "true",
		"EXECUTE s":                     "false",
	}, func(text string, toks []lexer.Token) []any { return []any{ImmediateLiteral(text, toks)} })
	read(t, "Privileges", map[string]string{
		"GRANT ALL ON *.* TO u": "true", "REVOKE ALL ON db.* FROM u": "true", "CREATE USER u": "true",
		"ALTER ROLE r": "true", "SET PASSWORD = 'x'": "true", "SET DEFAULT ROLE r FOR u": "true",
		"SET x = 1": "false", "RENAME USER a TO b": "true", "DROP TABLE t": "false",
	}, func(text string, toks []lexer.Token) []any { return []any{Privileges(text, toks)} })
	read(t, "DatabaseDDL", map[string]string{
		"CREATE DATABASE IF NOT EXISTS d CHARACTER SET = utf8mb4": "d true true",
		"ALTER SCHEMA DEFAULT COLLATE utf8mb4_bin":                " false true",
		"CREATE DATABASE d (x)":                                   " false false",
		"ALTER DATABASE d UPGRADE DATA DIRECTORY NAME":            "d false true",
	}, func(text string, toks []lexer.Token) []any {
		n, ine, ok := DatabaseDDL(text, toks)
		return []any{n, " ", ine, " ", ok}
	})
}

func TestUnparsed(t *testing.T) {
	read(t, "Unparsed", map[string]string{
		"SELECT a INTO OUTFILE '/x'":  "SELECT true it writes a file on the database server",
		"((SELECT 1 FOR UPDATE":       "SELECT true it is a locking read, which must first fork the tables it locks",
		"SELECT NEXTVAL(s)":           "SELECT true it changes a sequence",
		"SHOW ENGINE INNODB STATUS x": "SHOW true it shows what the whole server holds, every sandbox's statements included",
		"BEGIN WORK, READ ONLY":       "BEGIN true ",
		"BEGIN x":                     "BEGIN false ",
		"UPDATE t SET a = 1 x":        "UPDATE false ",
		"1 +":                         " false ",
	}, func(text string, toks []lexer.Token) []any {
		u := Unparsed{Text: text, Toks: toks}
		u.First = u.FirstWord()
		hazard := ""
		for i := range u.Toks {
			if h := u.Hazard(i); h != "" && hazard == "" {
				hazard = h
			}
		}
		return []any{u.First, " ", u.ReadLike(), " ", hazard}
	})
	if !IsWriteKeyword("insert") || IsWriteKeyword("SELECT") {
		t.Error("IsWriteKeyword")
	}
	read(t, "ServerErrors", map[string]string{
		"GET DIAGNOSTICS CONDITION 1 @a = f()": "[1054]",
		"SET default_storage_engine = .a.b":    "[1232]",
		"SET x = (SELECT 1)":                   "[]",
		"SELECT 1":                             "[]",
	}, func(text string, toks []lexer.Token) []any { return []any{ServerErrors(text, toks)} })
}

func TestShowColumnsSite(t *testing.T) {
	p := parser.New()
	for text, want := range map[string]string{
		"SHOW COLUMNS FROM t FROM db":  "{18 27 0 db.t true false false 0 0} true",
		"SHOW FULL COLUMNS IN t IN db": "{21 28 0 db.t true false false 0 0} true",
		"SHOW COLUMNS FROM db.t":       "{0 0 0 . false false false 0 0} false",
		"SHOW INDEX FROM t FROM db":    "{0 0 0 . false false false 0 0} false",
	} {
		stmts, _, err := p.Parse(text, "", "")
		if err != nil {
			t.Fatal(err)
		}
		s, ok := ShowColumnsSite(text, lexer.Lex(text, lexer.Options{}), stmts[0].(*ast.ShowStmt), sqlname.Table{DB: "db", Name: "t"})
		if got := fmt.Sprint(s, " ", ok); got != want {
			t.Errorf("ShowColumnsSite(%q) = %s, want %s", text, got, want)
		}
	}
}
