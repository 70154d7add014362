package rewrite

import "testing"

// TestWorkNoiseWord: COMMIT WORK and ROLLBACK WORK [TO [SAVEPOINT] sp], whose
// WORK the parser does not take, are read as the transaction statements
// they are (sent as written).
func TestWorkNoiseWord(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	for sql, kinds := range map[string]string{
		"ROLLBACK WORK TO SAVEPOINT a":       "ROLLBACK TO SAVEPOINT",
		"ROLLBACK WORK TO a":                 "ROLLBACK TO SAVEPOINT",
		"ROLLBACK WORK AND CHAIN NO RELEASE": "ROLLBACK",
		"COMMIT WORK AND NO CHAIN":           "COMMIT",
	} {
		wantRewrite(t, e, sql, opts, mapsNothingResolver{}, sql, kinds)
	}
}
