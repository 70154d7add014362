package session

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// Stored functions in a sandbox. A call of a stored function in a sandbox
// names the sandbox's function: the call is rewritten to the sandbox's
// database for the function's (rewrite.FunctionResolver), like a table
// reference. A function production has and the sandbox has not is copied
// first, as a CALLed procedure is (copyRoutine): production's definition
// planned as a sandbox's CREATE FUNCTION, its body's tables forked and its
// text rewritten, functions it calls copied in turn. So the function's
// reads see the sandbox and its writes land in forks. CREATE, DROP and the
// calls of functions the sandbox made act on the sandbox's database only;
// a function neither has gets the server's 1305 there, as it would
// directly. The server's own functions are never placed, and loadable
// functions (UDF), which the proxy cannot confine, are refused.

// placedFunction is the sandbox database a call of f, in a statement whose
// current database is db, may name: ok false for the server's own
// functions (and MariaDB's pseudo-schemas' spellings of them) and with no
// database. Only calls of a function the sandbox has are placed
// (placeFunctions): any other call is the server's to answer.
func (s *Session) placedFunction(f rewrite.Func, db string) (phys, logical string, ok bool) {
	switch {
	case f.Schema != "":
		if catalog.PseudoSchema(f.Schema) {
			return "", "", false
		}
		db = f.Schema
	case s.m.catalog.Native(f), catalog.KeywordCall(f):
		return "", "", false
	}
	if db == "" {
		return "", "", false // the server's 1046
	}
	return s.routineDB(db), db, true
}

// routineKey is the key of the sandbox's routine name of kind PROCEDURE
// or FUNCTION in sandbox database phys.
func routineKey(kind, phys, name string) string {
	return kind + "\x00" + phys + "\x00" + strings.ToLower(name)
}

// ResolveFunction implements rewrite.FunctionResolver: calls of the
// functions the sandbox has (or had: dropped, the call gets the server's
// 1305 there) name them in its database.
func (r resolver) ResolveFunction(f rewrite.Func, db string) (string, bool, error) {
	phys, _, ok := r.s.placedFunction(f, db)
	if !ok {
		return "", false, nil
	}
	if known, _ := r.s.sb.RoutineKnown(routineKey("FUNCTION", phys, f.Name)); !known {
		return "", false, nil
	}
	return phys, true, nil
}

// placeFunctions makes ready the stored functions st calls in the sandbox:
// production's are copied into it when the sandbox has none of that name.
// It reports whether st calls a function of the sandbox's (whose
// statements the proxy does not check for a second run: a replay is
// refused).
func (s *Session) placeFunctions(ctx context.Context, st rewrite.Statement) (bool, error) {
	placed := false
	for _, f := range st.Funcs {
		_, db, ok := s.placedFunction(f, st.DB)
		if !ok {
			continue
		}
		here, err := s.sandboxRoutine(ctx, "FUNCTION", db, f.Name)
		if err != nil {
			return placed, err
		}
		placed = placed || here
	}
	return placed, nil
}

// sandboxRoutine reports whether the routine name of kind PROCEDURE or
// FUNCTION of logical database db is the sandbox's: one it made, copied
// or dropped, or production's, copied now. Once it is, production's is
// never copied for it again: a routine the sandbox dropped stays dropped
// there (for other proxy processes too: noteDroppedRoutine).
func (s *Session) sandboxRoutine(ctx context.Context, kind, db, name string) (bool, error) {
	key := routineKey(kind, s.routineDB(db), name)
	if known, _ := s.sb.RoutineKnown(key); known {
		return true, nil
	}
	var st routineState
	var err error
	if kind == "FUNCTION" {
		st, err = s.hasFunction(ctx, db, name)
	} else {
		st, err = s.ensureRoutine(ctx, kind, db, name)
	}
	if err != nil || st == routineNone {
		return false, err
	}
	s.sb.NoteRoutine(key, st != routineCopied)
	return true, nil
}

// routineState is what the sandbox has of a routine name.
type routineState int

const (
	routineNone   routineState = iota // nothing: the name is production's, or nobody's
	routineCopied                     // production's, copied now
	routineOwn                        // its own (made there, or dropped: gone there)
)

// showsOwnRoutine makes ready SHOW CREATE FUNCTION | PROCEDURE st: it
// shows the sandbox's routine when the sandbox made, altered or dropped
// it (ResolveRoutine), production's otherwise (an untouched copy is
// production's routine).
func (s *Session) showsOwnRoutine(ctx context.Context, st rewrite.Statement) error {
	kind := strings.TrimPrefix(string(st.Kind), "SHOW CREATE ")
	db := st.Routine.DB(st.DB)
	if db == "" {
		return nil
	}
	phys := s.routineDB(db)
	key := routineKey(kind, phys, st.Routine.Name)
	if known, _ := s.sb.RoutineKnown(key); known {
		return nil
	}
	here, err := s.inSandbox(ctx, kind, phys, st.Routine.Name)
	if err == nil && !here {
		here, err = s.m.droppedRoutine(ctx, s.sb, kind, db, st.Routine.Name)
	}
	if err != nil || !here {
		return err
	}
	s.sb.NoteRoutine(key, true)
	return nil
}

// routineChanging makes ready CREATE, ALTER or DROP of a routine in the
// sandbox: production's routine of that name is copied first, so that the
// statement meets it as on a copy of the database (CREATE without OR
// REPLACE gets 1304, ALTER changes and DROP drops the copy), and the name
// is the sandbox's from then on.
func (s *Session) routineChanging(ctx context.Context, st rewrite.Statement) error {
	_, kind, _ := strings.Cut(string(st.Kind), " ") // CREATE, DROP or ALTER of a PROCEDURE or FUNCTION
	db := st.Routine.DB(st.DB)
	if db == "" {
		return nil // the server's 1046
	}
	here, err := s.sandboxRoutine(ctx, kind, db, st.Routine.Name)
	if err != nil {
		return err
	}
	if here && strings.HasPrefix(string(st.Kind), "DROP ") {
		if err := s.m.noteDroppedRoutine(ctx, s.sb, kind, db, st.Routine.Name); err != nil {
			return err
		}
	}
	if kind == "FUNCTION" {
		s.m.catalog.ForgetFunction(s.routineDB(db), st.Routine.Name)
	}
	s.sb.NoteRoutine(routineKey(kind, s.routineDB(db), st.Routine.Name), true)
	return nil
}

// placeNeeded copies into the sandbox the stored routines its copies of
// production's triggers call (Sandbox.needRoutines). Those it could not
// copy stay listed: until they are, a write firing such a trigger gets the
// server's 1305 in the sandbox.
func (s *Session) placeNeeded(ctx context.Context) error {
	rs := s.sb.TakeNeeded()
	for i, r := range rs {
		if _, err := s.sandboxRoutine(ctx, r.Kind, r.DB, r.Name); err != nil {
			s.sb.NeedRoutines(rs[i:])
			return err
		}
	}
	return nil
}

// ensure is Manager.ensure of t in the session's sandbox, with the stored
// routines the triggers it copied call placed there.
func (s *Session) ensure(ctx context.Context, t rewrite.Table, mode forker.Mode) (*sandbox.Entry, bool, error) {
	e, made, err := s.m.fk.Ensure(ctx, s.sb, t, mode, s.readable())
	if err == nil {
		err = s.placeNeeded(ctx)
	}
	return e, made, err
}

// sandboxFuncHazard is funcHazard in a sandbox, where stored functions are
// the sandbox's (placedFunction): a loadable function reaches beyond it,
// and a call of one of the server's keyword functions may reach a stored
// function of the name (production's or the sandbox's).
func (s *Session) sandboxFuncHazard(ctx context.Context, f rewrite.Func, db string) (string, error) {
	switch {
	case f.Schema != "" || s.m.catalog.Native(f):
		return "", nil
	case catalog.KeywordCall(f):
		if db == "" {
			return "", nil
		}
		return s.m.catalog.KeywordHazard(ctx, f, db, s.routineDB(db))
	}
	return s.m.catalog.UDFHazard(ctx, f)
}

// hasFunction reports whether the sandbox has the function name of
// logical database db, copying production's first when the sandbox has
// none. Names production has no function of are looked up in the
// catalog, which keeps what it found for a while.
func (s *Session) hasFunction(ctx context.Context, db, name string) (routineState, error) {
	prod, err := s.m.catalog.StoredFunction(ctx, db, name)
	if err != nil || prod {
		if err != nil {
			return routineNone, err
		}
		return s.ensureRoutine(ctx, "FUNCTION", db, name)
	}
	if here, err := s.m.catalog.StoredFunction(ctx, s.routineDB(db), name); err != nil || !here {
		return routineNone, err
	}
	return routineOwn, nil
}
