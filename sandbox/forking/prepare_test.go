package forking

import (
	"regexp"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
)

// TestForkClearsOnlyWhatMayBeLeft: a fork clears the leftover of a crash
// (a table of its name) only in a database that was there before it; one
// it made just now holds none (issue 27: fewer statements per fork).
func TestForkClearsOnlyWhatMayBeLeft(t *testing.T) {
	for _, tc := range []struct {
		name       string
		schemas    bool // the sandbox's databases exist before its first fork
		wantClears int  // DROP TABLE IF EXISTS of the fork sent
	}{
		{name: "first fork of the sandbox", wantClears: 0},
		{name: "database already there", schemas: true, wantClears: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "copy", nil)
			sb := r.sandbox("")
			if tc.schemas {
				r.exec("CREATE DATABASE IF NOT EXISTS " + quote.Ident(r.phys(sb, "t").DB))
			}
			r.up.ClearLog()
			e, made, err := r.fk.Ensure(r.ctx, sb, tbl("t"), forker.Full, nil)
			if err != nil || !made || r.row(sb, "t") != "fork" || !r.has(sb, "t") {
				t.Fatalf("Ensure = %+v, %v, %v; registry %q", e, made, err, r.row(sb, "t"))
			}
			if n := r.count(`^DROP TABLE IF EXISTS ` + regexp.QuoteMeta(r.phys(sb, "t").Quoted()) + `$`); n != tc.wantClears {
				t.Errorf("%d DROP TABLE IF EXISTS, want %d: %q", n, tc.wantClears, r.up.Matching(`^DROP `))
			}
		})
	}
}
