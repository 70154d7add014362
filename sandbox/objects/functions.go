package objects

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
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
// (PlaceFunctions): any other call is the server's to answer.
func (o *Placer) placedFunction(f rewrite.Func, db string) (phys, logical string, ok bool) {
	switch {
	case f.Schema != "":
		if catalog.PseudoSchema(f.Schema) {
			return "", "", false
		}
		db = f.Schema
	case o.cat.Native(f), catalog.KeywordCall(f):
		return "", "", false
	}
	if db == "" {
		return "", "", false // the server's 1046
	}
	return o.host.RoutineDB(db), db, true
}

// routineKey is the key of the sandbox's routine name of kind PROCEDURE
// or FUNCTION in sandbox database phys.
func routineKey(kind, phys, name string) string { return registry.RoutineKey(kind, phys, name) }

// ResolveFunction is the session resolver's rewrite.FunctionResolver:
// calls of the functions the sandbox has (or had: dropped, the call gets
// the server's 1305 there) name them in its database.
func (o *Placer) ResolveFunction(f rewrite.Func, db string) (string, bool, error) {
	phys, _, ok := o.placedFunction(f, db)
	if !ok {
		return "", false, nil
	}
	if known, _ := o.sb().RoutineKnown(routineKey("FUNCTION", phys, f.Name)); !known {
		return "", false, nil
	}
	return phys, true, nil
}

// PlaceFunctions makes ready the stored functions st calls in the sandbox:
// production's are copied into it when the sandbox has none of that name.
// It reports whether st calls a function of the sandbox's (whose
// statements the proxy does not check for a second run: a replay is
// refused).
func (o *Placer) PlaceFunctions(ctx context.Context, st rewrite.Statement) (bool, error) {
	placed := false
	for _, f := range st.Funcs {
		_, db, ok := o.placedFunction(f, st.DB)
		if !ok {
			continue
		}
		here, err := o.sandboxRoutine(ctx, "FUNCTION", db, f.Name)
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
func (o *Placer) sandboxRoutine(ctx context.Context, kind, db, name string) (bool, error) {
	key := routineKey(kind, o.host.RoutineDB(db), name)
	if known, _ := o.sb().RoutineKnown(key); known {
		return true, nil
	}
	var st routineState
	var err error
	if kind == "FUNCTION" {
		st, err = o.hasFunction(ctx, db, name)
	} else {
		st, err = o.ensureRoutine(ctx, kind, db, name)
	}
	if err != nil || st == routineNone {
		return false, err
	}
	o.sb().NoteRoutine(key, st != routineCopied)
	return true, nil
}

// routineState is what the sandbox has of a routine name.
type routineState int

const (
	routineNone   routineState = iota // nothing: the name is production's, or nobody's
	routineCopied                     // production's, copied now
	routineOwn                        // its own (made there, or dropped: gone there)
)

// ShowsOwnRoutine makes ready SHOW CREATE FUNCTION | PROCEDURE st: it
// shows the sandbox's routine when the sandbox made, altered or dropped
// it (ResolveRoutine), production's otherwise (an untouched copy is
// production's routine).
func (o *Placer) ShowsOwnRoutine(ctx context.Context, st rewrite.Statement) error {
	kind := strings.TrimPrefix(string(st.Kind), "SHOW CREATE ")
	db := st.Routine.DB(st.DB)
	if db == "" {
		return nil
	}
	phys := o.host.RoutineDB(db)
	key := routineKey(kind, phys, st.Routine.Name)
	if known, _ := o.sb().RoutineKnown(key); known {
		return nil
	}
	here, err := o.inSandbox(ctx, kind, phys, st.Routine.Name)
	if err == nil && !here {
		here, err = o.droppedRoutine(ctx, kind, db, st.Routine.Name)
	}
	if err != nil || !here {
		return err
	}
	o.sb().NoteRoutine(key, true)
	return nil
}

// RoutineChanging makes ready CREATE, ALTER or DROP of a routine in the
// sandbox: production's routine of that name is copied first, so that the
// statement meets it as on a copy of the database (CREATE without OR
// REPLACE gets 1304, ALTER changes and DROP drops the copy), and the name
// is the sandbox's from then on.
func (o *Placer) RoutineChanging(ctx context.Context, st rewrite.Statement) error {
	_, kind, _ := strings.Cut(string(st.Kind), " ") // CREATE, DROP or ALTER of a PROCEDURE or FUNCTION
	db := st.Routine.DB(st.DB)
	if db == "" {
		return nil // the server's 1046
	}
	here, err := o.sandboxRoutine(ctx, kind, db, st.Routine.Name)
	if err != nil {
		return err
	}
	if here && strings.HasPrefix(string(st.Kind), "DROP ") {
		if err := o.noteDroppedRoutine(ctx, kind, db, st.Routine.Name); err != nil {
			return err
		}
	}
	if kind == "FUNCTION" {
		o.cat.ForgetFunction(o.host.RoutineDB(db), st.Routine.Name)
	}
	o.sb().NoteRoutine(routineKey(kind, o.host.RoutineDB(db), st.Routine.Name), true)
	return nil
}

// PlaceNeeded copies into the sandbox the stored routines its copies of
// production's triggers call (registry.Sandbox.NeedRoutines). Those it could not
// copy stay listed: until they are, a write firing such a trigger gets the
// server's 1305 in the sandbox.
func (o *Placer) PlaceNeeded(ctx context.Context) error {
	rs := o.sb().TakeNeeded()
	for i, r := range rs {
		if _, err := o.sandboxRoutine(ctx, r.Kind, r.DB, r.Name); err != nil {
			o.sb().NeedRoutines(rs[i:])
			return err
		}
	}
	return nil
}

// sandboxFuncHazard is catalog.Objects.FuncHazard in a sandbox, where
// stored functions are the sandbox's (placedFunction): a loadable function
// reaches beyond it, and a call of one of the server's keyword functions
// may reach a stored function of the name (production's or the
// sandbox's).
func (o *Placer) sandboxFuncHazard(ctx context.Context, f rewrite.Func, db string) (string, error) {
	switch {
	case f.Schema != "" || o.cat.Native(f):
		return "", nil
	case catalog.KeywordCall(f):
		if db == "" {
			return "", nil
		}
		return o.cat.KeywordHazard(ctx, f, db, o.host.RoutineDB(db))
	}
	return o.cat.UDFHazard(ctx, f)
}

// hasFunction reports whether the sandbox has the function name of
// logical database db, copying production's first when the sandbox has
// none. Names production has no function of are looked up in the
// catalog, which keeps what it found for a while.
func (o *Placer) hasFunction(ctx context.Context, db, name string) (routineState, error) {
	prod, err := o.cat.StoredFunction(ctx, db, name)
	if err != nil || prod {
		if err != nil {
			return routineNone, err
		}
		return o.ensureRoutine(ctx, "FUNCTION", db, name)
	}
	if here, err := o.cat.StoredFunction(ctx, o.host.RoutineDB(db), name); err != nil || !here {
		return routineNone, err
	}
	return routineOwn, nil
}
