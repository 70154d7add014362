package session_test

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/session"
)

// TestInsertIDPlanned: the plan of INSERT or REPLACE … SELECT into a
// sandbox's table, its last statement, reads the table's last insert id;
// ON DUPLICATE KEY UPDATE, … VALUES, one calling LAST_INSERT_ID and a
// statement before another do not.
func TestInsertIDPlanned(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	s, _, _ := e.transparentApp()
	for sql, want := range map[string]bool{
		"INSERT INTO t (id, a) SELECT id, a FROM u":                                true,
		"REPLACE INTO t (id, a) SELECT id + 10, a FROM t WHERE id BETWEEN 1 AND 2": true,
		"SELECT 1; INSERT IGNORE INTO t (id, a) SELECT id, a FROM u":               true,
		"INSERT INTO t (id, a) SELECT id, a FROM u ON DUPLICATE KEY UPDATE a = 1":  false,
		"INSERT INTO t (id, a) VALUES (1, 2)":                                      false,
		"INSERT INTO t (id, a) SELECT LAST_INSERT_ID(id), a FROM u":                false,
		"INSERT INTO t (id, a) SELECT id, a FROM u; SELECT 1":                      false,
		"SELECT * FROM t": false,
	} {
		if got := e.mustPlan(s, sql).ReadsInsertID(); got != want {
			t.Errorf("%s: ReadsInsertID %v, want %v", sql, got, want)
		}
	}
}
