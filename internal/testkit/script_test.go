package testkit

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestScript: a statement gets the last added answer that matches it and
// has answers left; one nothing matches fails, and is listed.
func TestScript(t *testing.T) {
	ctx := context.Background()
	s := NewScript()
	s.Prefix("SELECT ").Rows(Row("any", nil))
	s.Exact("SELECT 1").Rows(Row(1))
	s.Match(`^SELECT 1$`).Fail(errors.New("boom")).Times(1)
	s.Exact("DELETE FROM t").Affected(3)
	for _, tc := range []struct {
		sql      string
		rows     [][]*string
		affected uint64
		err      string
	}{
		{sql: "SELECT 1", err: "boom"},
		{sql: "SELECT 1", rows: [][]*string{Row("1")}},
		{sql: "SELECT 2", rows: [][]*string{Row("any", nil)}},
		{sql: "DELETE FROM t", affected: 3},
		{sql: "UPDATE t SET a = 1", err: "testkit: no scripted answer for UPDATE t SET a = 1"},
	} {
		rows, qerr := s.Query(ctx, tc.sql)
		n, eerr := s.Exec(ctx, tc.sql)
		if tc.sql == "SELECT 1" && tc.err != "" {
			eerr = qerr // the one failure is spent by Query
		}
		for _, err := range []error{qerr, eerr} {
			if got := errString(err); got != tc.err {
				t.Errorf("%s: error %q, want %q", tc.sql, got, tc.err)
			}
		}
		if tc.err != "" {
			continue
		}
		if len(rows) != len(tc.rows) || len(rows) > 0 && !slices.EqualFunc(rows[0], tc.rows[0], func(a, b *string) bool {
			return a == nil && b == nil || a != nil && b != nil && *a == *b
		}) {
			t.Errorf("%s: rows %v, want %v", tc.sql, rows, tc.rows)
		}
		if n != tc.affected {
			t.Errorf("%s: affected %d, want %d", tc.sql, n, tc.affected)
		}
	}
	var u *Unscripted
	if _, err := s.Exec(ctx, "BOGUS"); !errors.As(err, &u) || u.SQL != "BOGUS" {
		t.Errorf("unscripted error %v", err)
	}
	if got := s.Unscripted(); !slices.Equal(got, []string{"UPDATE t SET a = 1", "UPDATE t SET a = 1", "BOGUS"}) {
		t.Errorf("Unscripted = %q", got)
	}
	if got := s.Matching(`^SELECT 1$`); len(got) != 4 {
		t.Errorf("Matching = %q", got)
	}
	if err := s.Close(); err != nil || s.Closes() != 1 {
		t.Errorf("Close: %v, %d", err, s.Closes())
	}
	s.ClearLog()
	if len(s.Log()) != 0 || len(s.Unscripted()) != 0 {
		t.Error("ClearLog left statements")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Query(cctx, "SELECT 1"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
