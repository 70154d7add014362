package kind

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions for the parser

	"github.com/sqlfork/sqlfork-proxy/rewrite/corpus"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

func TestOf(t *testing.T) {
	p := parser.New()
	for sql, want := range map[string]struct {
		k Kind
		c Class
	}{
		"SELECT 1":                        {Select, ClassRead},
		"SHOW WARNINGS":                   {ShowWarnings, ClassRead},
		"SHOW COUNT(*) ERRORS":            {ShowCount, ClassRead},
		"SHOW FULL TABLES":                {Show, ClassRead},
		"SHOW CREATE TABLE t":             {ShowCreateTable, ClassRead},
		"REPLACE INTO t VALUES (1)":       {Replace, ClassWrite},
		"DELETE FROM t":                   {Delete, ClassWrite},
		"CREATE TABLE t (a INT)":          {CreateTable, ClassDDL},
		"DROP VIEW v":                     {DropView, ClassDDL},
		"DROP TABLE t":                    {DropTable, ClassDDL},
		"ROLLBACK TO SAVEPOINT s":         {RollbackToSavepoint, ClassTransaction},
		"BEGIN":                           {Begin, ClassTransaction},
		"SET GLOBAL x = 1":                {SetGlobal, ClassSession},
		"SET @a = 1":                      {Set, ClassSession},
		"USE db":                          {Use, ClassSession},
		"CALL p()":                        {Call, ClassRoutine},
		"CREATE SEQUENCE s":               {CreateSequence, ClassDDL},
		"TRUNCATE TABLE t":                {TruncateTable, ClassDDL},
		"LOCK TABLES t READ":              {LockTables, ClassSession},
		"CREATE INDEX i ON t (a)":         {CreateIndex, ClassDDL},
		"RENAME TABLE a TO b":             {RenameTable, ClassDDL},
		"ALTER DATABASE d CHARSET latin1": {AlterDatabase, ClassDDL},
	} {
		stmts, _, err := p.Parse(sql, "", "")
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if k, c := Of(stmts[0]), ClassOf(stmts[0]); k != want.k || c != want.c {
			t.Errorf("%s: %q %v, want %q %v", sql, k, c, want.k, want.c)
		}
	}
	// Every corpus statement the parser reads has a class.
	for _, cs := range corpus.Cases() {
		stmts, _, err := p.Parse(cs.SQL, "", "")
		if err != nil {
			continue
		}
		for _, s := range stmts {
			_ = Of(s)
			if c := ClassOf(s); c.String() == "" {
				t.Errorf("%q: no class", cs.SQL)
			}
		}
	}
}

func TestWords(t *testing.T) {
	for sql, want := range map[string]Kind{
		"SHOW BINLOG EVENTS":     "SHOW BINLOG EVENTS",
		"START TRANSACTION":      Begin,
		"ROLLBACK WORK":          Rollback,
		"SELECT 1":               "",
		"SHOW RELAYLOG EVENTS x": "SHOW RELAYLOG EVENTS",
	} {
		if got := OfText(sql, lexer.Options{}); got != want {
			t.Errorf("OfText(%q) = %q, want %q", sql, got, want)
		}
	}
	for sql, want := range map[string]Class{
		"XA START 'x'":                                       ClassOther,
		"GET DIAGNOSTICS @n = NUMBER":                        ClassSession,
		"SIGNAL SQLSTATE '45000'":                            ClassSession,
		"SHOW CREATE FUNCTION f":                             ClassRead,
		"SHOW PROCEDURE CODE p":                              ClassRead,
		"INSTALL PLUGIN x SONAME 'y'":                        ClassOther,
		"CHANGE MASTER TO master_host = 'h'":                 ClassOther,
		"BACKUP STAGE START":                                 ClassOther,
		"SELECT (1)":                                         -1,
		"SIGNAL x - 1":                                       ClassSession,
		"SIGNAL x - y":                                       -1,
		"RESET MASTER TO 100":                                ClassOther,
		"RESET QUERY CACHE, SLAVE 'c' ALL":                   ClassOther,
		"FLUSH LOCAL SLOW LOGS, USER_RESOURCES":              ClassOther,
		"FLUSH TABLES WITH READ LOCK AND DISABLE CHECKPOINT": ClassOther,
		"FLUSH TABLES t":                                     -1,
		"FLUSH LOGS, TABLE t":                                -1,
		"PURGE BINARY LOGS BEFORE '2020-11-17'":              ClassOther,
		"PURGE MASTER LOGS BEFORE x":                         -1,
		"START SLAVE 'c' SQL_THREAD":                         ClassOther,
		"STOP ALL SLAVES":                                    ClassOther,
		"BACKUP UNLOCK":                                      ClassOther,
		"BACKUP UNLOCK t":                                    -1,
	} {
		toks := lexer.Lex(sql, lexer.Options{})
		k, c := Nameless(sql, toks)
		if want < 0 && k != "" || want >= 0 && (k == "" || c != want) {
			t.Errorf("Nameless(%q) = %q %v, want class %v", sql, k, c, want)
		}
	}
	for sql, want := range map[string]Kind{
		"ALTER ONLINE TABLE db.t ANALYZE PARTITION p": "ANALYZE PARTITION",
		"ALTER TABLE t REPAIR PARTITION p":            "REPAIR PARTITION",
		"ALTER TABLE t ADD COLUMN a INT":              "",
		"ALTER VIEW v AS SELECT 1":                    "",
	} {
		if got := PartitionMaintenance(sql, lexer.Lex(sql, lexer.Options{})); got != want {
			t.Errorf("PartitionMaintenance(%q) = %q, want %q", sql, got, want)
		}
	}
	if Maintenance("CHECK") != CheckTable || Maintenance("SELECT") != "" || FirstWord("CHECK TABLE") != "CHECK" || FirstWord("X") != "X" {
		t.Error("Maintenance, FirstWord")
	}
	if !ShowStatus.IsShow() || Select.IsShow() || Class(42).String() != "class(42)" || ClassDDL.String() != "ddl" {
		t.Error("IsShow, Class.String")
	}
}
