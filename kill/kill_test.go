package kill

import (
	"errors"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// oneUser is a Directory with one connection of user alice: greeting id
// 1<<31|5, upstream thread 5.
type oneUser struct{}

func (oneUser) Threads(user string) map[uint32]bool {
	if user == "alice" {
		return map[uint32]bool{5: true}
	}
	return nil
}

func (oneUser) KillTarget(user string, id uint64) (uint32, bool) {
	if user == "alice" && (id == 5 || id == 1<<31|5) {
		return 5, true
	}
	return 0, false
}

// TestKillerStatements: KILL of one's own connection is translated to its
// upstream thread; a target written as an expression is evaluated on the
// client's connection as MariaDB evaluates it, unless it reads a table or
// calls a stored function (1970, as the server answers); what could reach
// other users' connections is refused.
func TestKillerStatements(t *testing.T) {
	k := New(oneUser{})
	var asked []string
	eval := func(q string) (*string, error) {
		asked = append(asked, q)
		v := map[string]string{
			"SELECT CAST((2 + 3) AS SIGNED)":                         "5",
			"SELECT CAST((CONNECTION_ID()) AS SIGNED)":               "5",
			"SELECT CAST(((('x' IN ( SELECT 1)) MOD 44)) AS SIGNED)": "0",
		}[q]
		return &v, nil
	}
	tests := []struct {
		sql, want string
		code      uint16
		evaluated bool
	}{
		{sql: "KILL 5", want: "KILL CONNECTION 5"},
		{sql: "KILL QUERY 2147483653", want: "KILL QUERY 5"},
		{sql: "KILL 6", code: wire.ErNoSuchThread},
		{sql: "KILL QUERY 2 + 3", want: "KILL QUERY 5", evaluated: true},
		{sql: "KILL HARD CONNECTION_ID()", want: "KILL CONNECTION 5", evaluated: true},
		{sql: "KILL  (('x' IN ( SELECT 1)) MOD 44);", code: wire.ErNoSuchThread, evaluated: true},
		{sql: "KILL ( SELECT 1 ) + LASTVAL(s)", code: wire.ErSubqueriesNotSupported},
		{sql: "KILL LASTVAL(s)", code: wire.ErSubqueriesNotSupported},
		{sql: "KILL f(1)", code: wire.ErSubqueriesNotSupported},
		{sql: "KILL (SELECT id FROM t)", code: wire.ErSubqueriesNotSupported},
		{sql: "KILL USER bob", code: wire.ErUnknown},
		{sql: "KILL QUERY ID 7", code: wire.ErUnknown},
		{sql: "KILL 5; SELECT 1", code: wire.ErUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			asked = nil
			stmt, ok, err := k.Statement("alice", tt.sql, rewrite.Options{DB: "app"}, false, eval)
			if !ok {
				t.Fatal("not taken for a KILL")
			}
			var r *rewrite.Refusal
			switch {
			case tt.code != 0 && (!errors.As(err, &r) || r.Code != tt.code):
				t.Errorf("err %v, want code %d", err, tt.code)
			case tt.code == 0 && (err != nil || stmt != tt.want):
				t.Errorf("%q, %v; want %q", stmt, err, tt.want)
			case tt.evaluated != (len(asked) == 1):
				t.Errorf("evaluated %q", asked)
			}
		})
	}
	if _, ok, _ := k.Statement("alice", "SELECT 'skill'", rewrite.Options{}, false, eval); ok {
		t.Error("a SELECT taken for a KILL")
	}
	if _, _, err := k.Statement("alice", "KILL 5", rewrite.Options{}, true, eval); err == nil {
		t.Error("a prepared KILL accepted")
	}
}
