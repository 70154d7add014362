package lazystress

import (
	"strings"
	"testing"
	"time"
)

func TestCheckProblems(t *testing.T) {
	ok := Check{Rows: 10, IDs: 10, Us: 10, Ws: 10, ProdRows: 2, WantProdRows: 2, ProdV: 5, WantProdV: 5, Sum: 9, WantSum: 9,
		Diff: "1/2/3/0", WantDiff: "1/2/3/0"}
	for _, tc := range []struct {
		name   string
		change func(*Check)
		want   string
	}{
		{"right", func(*Check) {}, ""},
		{"duplicate u", func(c *Check) { c.Us = 9 }, "10 rows but 10 distinct ids, 9 distinct u"},
		{"lost", func(c *Check) { c.Lost = 1 }, "1 rows lost"},
		{"back", func(c *Check) { c.Back = 2 }, "2 deleted rows back"},
		{"unknown", func(c *Check) { c.Unknown = 1 }, "1 rows nobody made"},
		{"wrong", func(c *Check) { c.Wrong = 3 }, "3 rows with other values"},
		{"production sum", func(c *Check) { c.ProdV = 6 }, "production's rows: 2, sum of v 6"},
		{"checksum", func(c *Check) { c.Sum = 8 }, "checksum"},
		{"diff", func(c *Check) { c.Diff = "1/2/4/0" }, "DIFF SUMMARY"},
	} {
		c := ok
		tc.change(&c)
		got := strings.Join(c.Problems(), "; ")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestWantDiff(t *testing.T) {
	s := &sandbox{cfg: Config{Rows: 100}, rows: map[int64]*Row{}}
	changed := Initial(1)
	changed.V++
	same := Initial(2)
	s.set(1, &changed)        // updated
	s.set(2, &same)           // written back as made: no change
	s.set(21, nil)            // deleted
	s.set(101, &Row{ID: 101}) // inserted
	s.set(102, nil)           // inserted, then deleted: nothing
	if got := s.wantDiff(); got != "1/1/1/0" {
		t.Errorf("wantDiff %s, want 1/1/1/0", got)
	}
}

func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := Summarize(ds)
	if l.N != 100 || l.P50 != 51*time.Millisecond || l.P99 != 100*time.Millisecond || l.Max != 100*time.Millisecond {
		t.Errorf("Summarize: %+v", l)
	}
	if n := Over(ds, 90*time.Millisecond); n != 10 {
		t.Errorf("Over 90 ms: %d, want 10", n)
	}
	if l := Summarize(nil); l != (Latency{}) {
		t.Errorf("Summarize(nil): %+v", l)
	}
}
