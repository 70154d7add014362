package capture_test

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// TestInsertIDVar: the variable of a fork's last insert id is read only
// when every trigger of the fork is the proxy's and its AFTER INSERT one
// sets it.
func TestInsertIDVar(t *testing.T) {
	const sets = "BEGIN INSERT INTO x VALUES (NEW.`id`); SET @`_sqlfork_0011_id` = NEW.`id`; END"
	ours := func(suffix, timing, event, body string) []*string {
		return sessiontest.Row("_sqlfork_0011"+suffix, timing, event, body)
	}
	for _, tc := range []struct {
		name     string
		triggers [][]*string
		want     string
	}{
		{"capture's", [][]*string{ours("_ai", "AFTER", "INSERT", sets), ours("_au", "AFTER", "UPDATE", "BEGIN END"),
			ours("_ad", "AFTER", "DELETE", "INSERT INTO x")}, "_sqlfork_0011_id"},
		{"a cascade's beside", [][]*string{ours("_ai", "AFTER", "INSERT", sets), sessiontest.Row("_SQLFORK_77_bd", "BEFORE", "DELETE", "INSERT")},
			"_sqlfork_0011_id"},
		{"an older proxy's body", [][]*string{ours("_ai", "AFTER", "INSERT", "INSERT INTO x VALUES (NEW.`id`)")}, ""},
		{"production's beside", [][]*string{ours("_ai", "AFTER", "INSERT", sets), sessiontest.Row("audit", "BEFORE", "INSERT", "SET @a = 1")}, ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			_, en := e.fork("t", true)
			e.up.On(`^SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_STATEMENT FROM information_schema\.TRIGGERS WHERE ` +
				`EVENT_OBJECT_SCHEMA = '` + en.Phys.DB + `' AND EVENT_OBJECT_TABLE = 't'$`).Rows(tc.triggers...)
			got, err := e.tracker(capture.Config{}).InsertIDVar(e.ctx, e.conn, en.Phys)
			if err != nil || got != tc.want {
				t.Errorf("InsertIDVar = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
