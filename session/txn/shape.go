package txn

import "github.com/sqlfork/sqlfork-proxy/rewrite"

// Shape is what the statements of one input do to the open transaction
// and to the session's settings, as planning reads them (Add).
type Shape struct {
	// Begin marks BEGIN / START TRANSACTION; End an input in which the
	// open transaction ends other than by a BEGIN at its start (COMMIT or
	// ROLLBACK, which with AND CHAIN or completion_type CHAIN start a new
	// one at once, or a BEGIN after other statements); Control other
	// transaction statements (SAVEPOINT, ROLLBACK TO …); DDL an input
	// holding DDL, which commits implicitly.
	Begin, End, Control, DDL bool
	// UseDB: the input may change the current database; Vars: sql_mode,
	// the character set or the transaction settings.
	UseDB, Vars bool
}

// Settings reports an input that may change the session's settings or
// its current database.
func (s Shape) Settings() bool { return s.UseDB || s.Vars }

// Add adds what st, statement i of the input, does.
func (s *Shape) Add(i int, st rewrite.Statement) {
	switch {
	case st.Kind == rewrite.KindBegin:
		s.Begin = true
		s.End = s.End || i > 0
	case st.Kind == rewrite.KindCommit || st.Kind == rewrite.KindRollback:
		s.End = true
	case st.Class == rewrite.ClassTransaction:
		s.Control = true
	case st.Kind == rewrite.KindUse:
		s.UseDB = true
	}
	// CREATE and DROP TEMPORARY TABLE leave the transaction open;
	// CREATE, ALTER and DROP of routines and triggers commit it.
	s.DDL = s.DDL || st.Class == rewrite.ClassDDL && !st.Temporary || st.Class == rewrite.ClassRoutine && st.Kind != rewrite.KindCall
	s.Vars = s.Vars || st.ChangesLexing || st.ChangesIsolation || SetsAccess(st)
}
