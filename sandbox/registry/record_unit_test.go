package registry_test

import (
	"strings"
	"testing"
	"time"
)

// TestFirstRecordStatements: a sandbox's first record is its row, under
// its life lock (and, for a named one, whose id comes back with its name,
// the schemas' lock), and this process as its holder; the row says all a
// renewal would, so none follows (issue 27: fewer statements per fork).
// A change mark the row does not hold is written by the renewal.
func TestFirstRecordStatements(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sandbox     string // "" for an anonymous one
		changed     bool   // a write noted before the first record
		locks       int    // GET_LOCKs taken
		renewals    int    // UPDATEs of the sandbox's row
		wantChanged bool
	}{
		{name: "anonymous", locks: 1},
		{name: "named", sandbox: "pool", locks: 2},
		{name: "anonymous, changed", changed: true, locks: 1, renewals: 2, wantChanged: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProc(t)
			sb, err := p.reg.NewSandbox(tc.sandbox, "u")
			if err != nil {
				t.Fatal(err)
			}
			if err := p.reg.Attach(sb); err != nil {
				t.Fatal(err)
			}
			if tc.changed {
				sb.NoteWrite(time.Now())
			}
			p.up.ClearLog()
			p.persist(sb)
			if n := p.up.Count(`^SELECT GET_LOCK`); n != tc.locks {
				t.Errorf("%d GET_LOCKs, want %d: %q", n, tc.locks, p.up.Matching(`LOCK`))
			}
			if n := p.up.Count(`^SELECT RELEASE_LOCK`); n != tc.locks {
				t.Errorf("%d RELEASE_LOCKs, want %d", n, tc.locks)
			}
			if n := p.up.Count(`^UPDATE .*sandboxes`); n != tc.renewals {
				t.Errorf("%d UPDATEs of the row, want %d: %q", n, tc.renewals, p.up.Matching(`sandboxes`))
			}
			row := p.query("SELECT kept, expires_at, lease_until, changed_at FROM `_sqlfork_meta`.sandboxes WHERE id = '" + sb.ID + "'")
			if len(row) != 1 || *row[0][0] != "0" || row[0][1] != nil || row[0][2] == nil || (row[0][3] != nil) != tc.wantChanged {
				t.Errorf("registry row %q", strings.Join(strs(row), " "))
			}
			if p.count("holders", sb.ID) != 1 {
				t.Error("not recorded as holder")
			}
		})
	}
}

func strs(rows [][]*string) []string {
	var out []string
	for _, r := range rows {
		for _, v := range r {
			if v == nil {
				out = append(out, "NULL")
			} else {
				out = append(out, *v)
			}
		}
	}
	return out
}
