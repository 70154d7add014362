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

// TestPlain: a refusal's message without the proxy's prefix; a message
// without it (the server's own error) as it is.
func TestPlain(t *testing.T) {
	if got := Refuse(1105, "no %s", "way").Plain(); got != "no way" {
		t.Errorf("Plain of the proxy's refusal = %q", got)
	}
	if got := (&Refusal{Code: 1064, Message: "You have an error"}).Plain(); got != "You have an error" {
		t.Errorf("Plain of the server's error = %q", got)
	}
}
