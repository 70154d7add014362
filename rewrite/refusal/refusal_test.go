package refusal

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

func TestRefusal(t *testing.T) {
	r := Refuse(wire.ErUnknown, "no %s", "way")
	if code, state, msg := r.MySQLError(); code != wire.ErUnknown || state != wire.State(wire.ErUnknown) || msg != "sqlfork-proxy: no way" {
		t.Errorf("Refuse = %d %s %q", code, state, msg)
	}
	if r.Error() != "1105 (HY000): sqlfork-proxy: no way" {
		t.Errorf("Error = %q", r.Error())
	}
	if s := ServerRefusal(wire.ErParse, "near %q", "x"); s.Message != `near "x"` || s.Code != wire.ErParse {
		t.Errorf("ServerRefusal = %+v", s)
	}
	if !ServerSyntaxError(wire.ErParse) || ServerSyntaxError(wire.ErUnknown) {
		t.Error("ServerSyntaxError")
	}
	r.ServerErrors = []uint16{wire.ErBadField}
	if !r.ServerRejects(wire.ErParse) || !r.ServerRejects(wire.ErBadField) || r.ServerRejects(wire.ErUnknown) {
		t.Error("ServerRejects")
	}
}
