package rewrite

import (
	"strings"
	"testing"
)

func TestServerWide(t *testing.T) {
	e := NewEngine(0)
	for _, c := range []struct {
		sql  string
		want string // substring of the reason; "" for none
	}{
		{"SHOW ENGINE INNODB STATUS", "SHOW ENGINE"},
		{"show engine innodb mutex", "SHOW ENGINE"},
		{"SHOW EXPLAIN FOR 12", "SHOW EXPLAIN"},
		{"SHOW ANALYZE FOR 12", "SHOW ANALYZE"},
		{"EXPLAIN FOR CONNECTION 12", "FOR CONNECTION"},
		{"EXPLAIN FORMAT=JSON FOR CONNECTION 12", "FOR CONNECTION"},
		{"SHOW TABLE_STATISTICS", "TABLE_STATISTICS"},
		{"SHOW INDEX_STATISTICS", "INDEX_STATISTICS"},
		{"SHOW USER_STATISTICS", "USER_STATISTICS"},
		{"SHOW CLIENT_STATISTICS", "CLIENT_STATISTICS"},
		{"SHOW OPEN TABLES", "SHOW OPEN"},
		{"SHOW BINLOG EVENTS", "SHOW BINLOG"},
		{"SHOW RELAYLOG 'x' EVENTS", "SHOW RELAYLOG"},
		{"SHOW FULL PROCESSLIST", "SHOW PROCESSLIST"},
		{"SELECT 1; SHOW /* c */ ENGINE INNODB STATUS", "SHOW ENGINE"},
		{"/*!100000 SHOW ENGINE INNODB STATUS */", "SHOW ENGINE"},
		{"SHOW TABLES", ""},
		{"SHOW FULL TABLES FROM app", ""},
		{"SHOW TABLE STATUS", ""},
		{"SHOW ENGINES", ""},
		{"SHOW DATABASES", ""},
		{"SHOW GLOBAL STATUS", ""},
		{"SELECT 'SHOW ENGINE INNODB STATUS'", ""},
		{"SELECT 1 /* SHOW ENGINE INNODB STATUS */", ""},
		{"SELECT 1 -- EXPLAIN FOR CONNECTION 5\n", ""},
		{"SELECT `for`, `connection` FROM t", ""},
	} {
		got := e.Analyze(c.sql, Options{Server: Server{Flavor: MariaDB, Version: 101100}}).ServerWide()
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%q: ServerWide() = %q, want %q", c.sql, got, c.want)
		}
	}
}

func TestShowProcessList(t *testing.T) {
	e := NewEngine(0)
	for sql, full := range map[string]bool{"SHOW PROCESSLIST": false, "show full processlist;": true} {
		a := e.Analyze(sql, Options{})
		if len(a.Statements) != 1 || a.Statements[0].Kind != "SHOW PROCESSLIST" || a.Statements[0].Show == nil ||
			a.Statements[0].Show.What != "PROCESSLIST" || a.Statements[0].Show.Full != full {
			t.Errorf("%q: %+v", sql, a.Statements)
		}
	}
}
