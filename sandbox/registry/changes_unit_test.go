package registry

import (
	"testing"
	"time"
)

// TestChanges: what a sandbox's marks say it holds that production does
// not, and how marks from several processes merge.
func TestChanges(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	for _, tc := range []struct {
		name       string
		mk         changeMarks
		tables     bool
		want       string
		wantLegacy string // with tables forked, made or dropped
	}{
		{name: "never wrote", want: ChangesNone, wantLegacy: ChangesUnpromoted},
		{name: "wrote", mk: changeMarks{changed: at(1)}, want: ChangesUnpromoted, wantLegacy: ChangesUnpromoted},
		{name: "promoted whole after its write", mk: changeMarks{changed: at(1), promoted: at(2), clean: at(2)}, want: ChangesPromoted,
			wantLegacy: ChangesPromoted},
		{name: "wrote during the promote", mk: changeMarks{changed: at(3), promoted: at(2), clean: at(2)}, want: ChangesUnpromoted,
			wantLegacy: ChangesUnpromoted},
		{name: "promoted in part", mk: changeMarks{changed: at(1), promoted: at(2)}, want: ChangesUnpromoted, wantLegacy: ChangesUnpromoted},
		{name: "promoted, never wrote through this process", mk: changeMarks{promoted: at(2), clean: at(2)}, want: ChangesPromoted,
			wantLegacy: ChangesPromoted},
		{name: "reset after a promote", mk: changeMarks{changed: at(1), promoted: at(2), clean: at(3)}, want: ChangesNone, wantLegacy: ChangesNone},
		{name: "wrote after a reset", mk: changeMarks{changed: at(4), promoted: at(2), clean: at(3)}, want: ChangesUnpromoted,
			wantLegacy: ChangesUnpromoted},
	} {
		if got := tc.mk.changes(false); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if got := tc.mk.changes(true); got != tc.wantLegacy {
			t.Errorf("%s, with tables: %s, want %s", tc.name, got, tc.wantLegacy)
		}
	}
	// A write here, a clean promote through another process later: the
	// registry must hear of the next write again.
	mk := changeMarks{changed: at(1), saved: true}
	mk.newest(changeMarks{promoted: at(2), clean: at(2)})
	if mk.saved || mk.changes(true) != ChangesPromoted {
		t.Errorf("after another process's promote: %+v, %s", mk, mk.changes(true))
	}
	// A write through another process after this one's promote.
	mk.newest(changeMarks{changed: at(3), saved: true})
	if !mk.saved || mk.changes(true) != ChangesUnpromoted {
		t.Errorf("after another process's write: %+v, %s", mk, mk.changes(true))
	}
}

// TestNoteWrite: a write is news to the registry once after each clean
// promote.
func TestNoteWrite(t *testing.T) {
	sb := &Sandbox{}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	if !sb.NoteWrite(now) {
		t.Fatal("the first write is not saved")
	}
	sb.marks.saved = true
	if sb.NoteWrite(now.Add(time.Second)) {
		t.Error("a second write is saved again")
	}
	sb.marks.clean, sb.marks.saved = now.Add(2*time.Second), false
	if !sb.NoteWrite(now.Add(3 * time.Second)) {
		t.Error("the first write after a clean promote is not saved")
	}
}
