package rewrite

import "testing"

// countsKnown knows ROW_COUNT() 3 and FOUND_ROWS() 5.
type countsKnown struct {
	mapsNothingResolver
	foundOnly bool
}

func (c countsKnown) PreviousCounts() (int64, bool, int64, bool) { return 3, !c.foundOnly, 5, true }

// TestCountsReps: the first statement's calls of ROW_COUNT() and
// FOUND_ROWS() are sent as the values the resolver knows (FOUND_ROWS()
// only, when it knows only that), in every
// spelling the server reads as the built-in; qualified calls (stored
// functions), calls with arguments, string literals, later statements and
// definitions keep theirs.
func TestCountsReps(t *testing.T) {
	const rc, fr = "GREATEST(3, -9223372036854775807 - 1)", "GREATEST(-9223372036854775807 - 1, 5)"
	e := NewEngine(0)
	for _, c := range []struct{ in, want string }{
		{"SELECT ROW_COUNT(), found_rows ( ), `ROW_COUNT`()", "SELECT " + rc + ", " + fr + ", " + rc},
		{"SET @a = ROW_COUNT() + 1", "SET @a = " + rc + " + 1"},
		{"INSERT INTO t (a) SELECT FOUND_ROWS() FROM u", "INSERT INTO t (a) SELECT " + fr + " FROM u"},
		{"SELECT 'ROW_COUNT()', ROW_COUNT(1), FOUND_ROWS /* c */ ()", "SELECT 'ROW_COUNT()', ROW_COUNT(1), " + fr},
		{"SELECT ROW_COUNT(); SELECT ROW_COUNT()", "SELECT " + rc + "; SELECT ROW_COUNT()"},
		{"CREATE VIEW v AS SELECT ROW_COUNT() AS r", "CREATE VIEW v AS SELECT ROW_COUNT() AS r"},
		{"BEGIN NOT ATOMIC SELECT ROW_COUNT(); END", "BEGIN NOT ATOMIC SELECT ROW_COUNT(); END"},
		{"PREPARE s FROM 'SELECT ROW_COUNT()'", "PREPARE s FROM 'SELECT ROW_COUNT()'"},
	} {
		res, err := e.Analyze(c.in, Options{DB: "d"}).Rewrite(countsKnown{})
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if res.SQL != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, res.SQL, c.want)
		}
	}
	// FOUND_ROWS() only, after a statement that set ROW_COUNT().
	if res, err := e.Analyze("SELECT ROW_COUNT(), FOUND_ROWS()", Options{DB: "d"}).Rewrite(countsKnown{foundOnly: true}); err != nil ||
		res.SQL != "SELECT ROW_COUNT(), "+fr {
		t.Errorf("FOUND_ROWS() only: %v %v", res, err)
	}
	// A resolver that knows none leaves them.
	if res, err := e.Analyze("SELECT ROW_COUNT()", Options{DB: "d"}).Rewrite(mapsNothingResolver{}); err != nil || res.SQL != "SELECT ROW_COUNT()" {
		t.Errorf("no counts known: %v %v", res, err)
	}
}

// TestInsertSelect: INSERT and REPLACE … SELECT are marked, but not with
// ON DUPLICATE KEY UPDATE, nor … VALUES or … SET.
func TestInsertSelect(t *testing.T) {
	e := NewEngine(0)
	for in, want := range map[string]bool{
		"INSERT INTO t (id) SELECT id FROM u":                             true,
		"INSERT IGNORE INTO t SELECT * FROM u UNION SELECT * FROM w":      true,
		"REPLACE INTO t (id) SELECT id FROM u WHERE id BETWEEN 1 AND 2":   true,
		"INSERT INTO t (id) SELECT id FROM u ON DUPLICATE KEY UPDATE a=1": false,
		"INSERT INTO t (id) VALUES (1), (2)":                              false,
		"INSERT INTO t SET id = 1":                                        false,
		"SELECT 1":                                                        false,
	} {
		a := e.Analyze(in, Options{DB: "d"})
		if len(a.Statements) != 1 || a.Statements[0].InsertSelect != want {
			t.Errorf("%s: InsertSelect %v, want %v", in, len(a.Statements) == 1 && a.Statements[0].InsertSelect, want)
		}
	}
}
