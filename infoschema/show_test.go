package infoschema

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestShowProbe: the SHOW asking the server for its definitions lists the
// same database with a pattern no name matches.
func TestShowProbe(t *testing.T) {
	like := "u%"
	for _, c := range []struct {
		sh   rewrite.Show
		db   string
		want string
	}{
		{rewrite.Show{What: "TABLES"}, "app", "SHOW TABLES FROM `app` LIKE '" + noSuchName + "'"},
		{rewrite.Show{What: "TABLES", Full: true, Like: &like}, "a`b", "SHOW FULL TABLES FROM `a``b` LIKE '" + noSuchName + "'"},
		{rewrite.Show{What: "TABLE STATUS", Where: "Engine = 'InnoDB'"}, "app", "SHOW TABLE STATUS FROM `app` LIKE '" + noSuchName + "'"},
		{rewrite.Show{What: "DATABASES"}, "", "SHOW DATABASES LIKE '" + noSuchName + "'"},
		{rewrite.Show{What: "PROCEDURE STATUS"}, "", "SHOW PROCEDURE STATUS LIKE '" + noSuchName + "'"},
	} {
		if got := ShowProbe(&c.sh, c.db); got != c.want {
			t.Errorf("%+v: %s, want %s", c.sh, got, c.want)
		}
	}
	if len(noSuchName) <= 64 || strings.ContainsAny(noSuchName, "%_\\'") {
		t.Errorf("%q could match a name", noSuchName)
	}
}

// TestShowSQLWithDefs: with the server's definitions, the query selects the
// information_schema columns they name (their org names), labelled as the
// server labels them, the name column as the statement's.
func TestShowSQLWithDefs(t *testing.T) {
	def := func(name, org string) []byte {
		return wire.AppendColumnDef(nil, wire.ColumnNames{Catalog: "def", Schema: "information_schema", Table: "TABLES",
			OrgTable: "TABLES", Name: name, OrgName: org}, []byte{0x0c, 8, 0, 64, 0, 0, 0, 253, 1, 0x10, 0, 0, 0})
	}
	defs := [][]byte{def("Name", "TABLE_NAME"), def("Engine", "ENGINE"), def("Max_index_length", "MAX_INDEX_LENGTH"), def("Temporary", "TEMPORARY")}
	q, ok, err := ShowSQL(&rewrite.Show{What: "TABLE STATUS"}, "app", "", defs)
	want := "SELECT `TABLE_NAME` AS `Name`, `ENGINE` AS `Engine`, `MAX_INDEX_LENGTH` AS `Max_index_length`, `TEMPORARY` AS `Temporary` " +
		"FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app' ORDER BY BINARY `Name`"
	if !ok || err != nil || q != want {
		t.Errorf("got %q, %v, %v\nwant %q", q, ok, err, want)
	}
	like := "o%"
	q, _, _ = ShowSQL(&rewrite.Show{What: "TABLES", Like: &like}, "app", "", [][]byte{def("Tables_in_app (xxx)", "TABLE_NAME")})
	if want := "SELECT `TABLE_NAME` AS `Tables_in_app (o%)` FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME LIKE 'o%' " +
		"ORDER BY BINARY `Tables_in_app (o%)`"; q != want {
		t.Errorf("got %q\nwant %q", q, want)
	}
}
