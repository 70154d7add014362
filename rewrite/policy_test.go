package rewrite

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

func TestPolicyCheck(t *testing.T) {
	e := NewEngine(0)
	p := &Policy{DenyClasses: []Class{ClassDDL}, DenyMultiStatements: true, InternalSchemas: []string{"_sqlfork"}}
	tests := []struct {
		sql    string
		code   uint16 // 0: allowed
		msg    string
		reason string
	}{
		{"SELECT * FROM users", 0, "", ""},
		{"DROP TABLE users", wire.ErOptionPreventsStatement, "DROP TABLE (ddl) statements are denied by the deny-statements guardrail", ReasonDenyStatements},
		{"SELECT 1; SELECT 2", wire.ErOptionPreventsStatement, "multi-statement", ReasonDenyMultiStatements},
		{"SELECT * FROM _sqlfork.sessions", wire.ErDBAccessDenied, "internal database `_sqlfork`", ""},
		{"SHOW TABLES FROM `_SQLFORK`", wire.ErDBAccessDenied, "internal database", ""},
		{"USE _sqlfork", wire.ErDBAccessDenied, "internal database", ""},
		{"SELECT '_sqlfork' AS word", 0, "", ""},
		{"INSERT INTO t VALUES (1) /* _sqlfork */", 0, "", ""},
	}
	for _, tt := range tests {
		err := p.Check(e.Analyze(tt.sql, Options{DB: "app"}))
		var r *Refusal
		if tt.code == 0 {
			if err != nil {
				t.Errorf("%s: refused: %v", tt.sql, err)
			}
			continue
		}
		if !errors.As(err, &r) || r.Code != tt.code || !strings.Contains(r.Message, tt.msg) || r.Reason != tt.reason {
			t.Errorf("%s: got %v, want %d containing %q (reason %q)", tt.sql, err, tt.code, tt.msg, tt.reason)
		}
	}
	if err := p.Check(e.Analyze("SELECT 1", Options{DB: "_sqlfork"})); err == nil {
		t.Error("current database _sqlfork not refused")
	}
}

func TestPolicyTimeoutAndRows(t *testing.T) {
	e := NewEngine(0)
	p := &Policy{StatementTimeout: 1500 * time.Millisecond}
	tests := []struct {
		sql    string
		flavor Flavor
		want   string
	}{
		{"SELECT * FROM t", MariaDB, "SET STATEMENT max_statement_time=1.5 FOR SELECT * FROM t"},
		{"UPDATE t SET a = 1", MariaDB, "SET STATEMENT max_statement_time=1.5 FOR UPDATE t SET a = 1"},
		{"BEGIN", MariaDB, "BEGIN"},
		{"SELECT 1; SELECT 2", MariaDB, "SELECT 1; SELECT 2"},
		{"/* c */ select a from t", MySQL, "/* c */ select /*+ MAX_EXECUTION_TIME(1500) */ a from t"},
		{"UPDATE t SET a = 1", MySQL, "UPDATE t SET a = 1"},
	}
	for _, tt := range tests {
		if got := p.WithTimeout(tt.sql, e.Analyze(tt.sql, Options{}), tt.flavor); got != tt.want {
			t.Errorf("%q: got %q want %q", tt.sql, got, tt.want)
		}
	}
}

func TestPolicyInternalPrefix(t *testing.T) {
	e := NewEngine(0)
	p := &Policy{InternalPrefix: "_sqlfork"}
	for _, c := range []struct {
		sql, db string
		refused bool
	}{
		{"SELECT * FROM users", "app", false},
		{"SELECT * FROM _sqlfork_meta.sandboxes", "app", true},
		{"SELECT * FROM `_SQLFORK_ab12cd34_app`.users", "app", true},
		{"SELECT * FROM users", "_sqlfork_meta", true},
		{"SELECT '_sqlfork_meta' AS s", "app", false},
		{"DROP DATABASE _sqlfork_0123abcd_app", "", true},
	} {
		err := p.Check(e.Analyze(c.sql, Options{DB: c.db}))
		if (err != nil) != c.refused {
			t.Errorf("%q in %q: refused=%v, want %v (%v)", c.sql, c.db, err != nil, c.refused, err)
		}
		var r *Refusal
		if err != nil && (!errors.As(err, &r) || r.Code != wire.ErDBAccessDenied) {
			t.Errorf("%q: error %v, want 1044", c.sql, err)
		}
	}
}

func TestSplitStatements(t *testing.T) {
	for in, want := range map[string][]string{
		"SANDBOX LIST":                               {"SANDBOX LIST"},
		"SELECT 1; SANDBOX STATUS;":                  {"SELECT 1", "SANDBOX STATUS"},
		"SELECT ';' ; /* ; */ SELECT `a;b` -- ;\n;;": {"SELECT ';'", "/* ; */ SELECT `a;b` -- ;"},
		"  ; ": nil,
	} {
		got := SplitStatements(in, Options{})
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("SplitStatements(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShowStatements(t *testing.T) {
	e := NewEngine(0)
	for _, c := range []struct {
		sql  string
		want string
	}{
		{"SHOW TABLES", "TABLES false  <nil> "},
		{"show full tables from `app` like 'u%'", "TABLES true app u% "},
		{"SHOW TABLES IN other WHERE Tables_in_other <> 'x'", "TABLES false other <nil> Tables_in_other <> 'x'"},
		{"SHOW TABLE STATUS LIKE 'users';", "TABLE STATUS false  users "},
		{"SHOW COLUMNS FROM users", "nil"},
	} {
		st := e.Analyze(c.sql, Options{DB: "app"}).Statements[0]
		got := "nil"
		if s := st.Show; s != nil {
			like := "<nil>"
			if s.Like != nil {
				like = *s.Like
			}
			got = fmt.Sprintf("%s %v %s %s %s", s.What, s.Full, s.DB, like, s.Where)
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.sql, got, c.want)
		}
	}
}

// TestIsSandboxStatement: a text whose first word is SANDBOX is the
// proxy's, alone or followed by anything; a word that starts so is not.
func TestIsSandboxStatement(t *testing.T) {
	for sql, want := range map[string]bool{
		"SANDBOX": true, " sandbox;": true, "SANDBOX LIST": true, "SANDBOX/* c */LIST": true, "SANDBOX#": true, "\tSandbox\nDIFF": true,
		"SANDBOXES": false, "SELECT 1": false, "SANDBO": false, "/* c */ SANDBOX LIST": false,
	} {
		if got := IsSandboxStatement(sql); got != want {
			t.Errorf("IsSandboxStatement(%q) = %v, want %v", sql, got, want)
		}
	}
}
