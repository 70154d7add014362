package session

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/objects"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// confined refuses, in a sandbox, what no fork can hold or what would
// show or reach beyond the sandbox.
func (s *Session) confined(ctx context.Context, a *rewrite.Analysis) error {
	return s.confinedIn(ctx, a, false)
}

// confinedIn is confined for the statements of a client's input, or of a
// sandbox procedure's body (body), where table maintenance stays refused:
// the tables a body names are forked as the body's reads and writes.
func (s *Session) confinedIn(ctx context.Context, a *rewrite.Analysis, body bool) error {
	for i, st := range a.Statements {
		if st.Outside != "" {
			if !body { // a body's SET is the server's to check when it runs
				if err := s.unknownEngine(ctx, st); err != nil {
					return err
				}
			}
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s", st.Outside)
		}
		if why := infoschema.ServerWide(infoschema.OwnConnOnly(st)); why != "" {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s, which a sandbox must not see; run it on a direct connection", why)
		}
		if t, ok := systemDDL(st); ok {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s changes %s, a table of the server's own schema %s, whose "+
				"definitions a sandbox does not hold; it is refused in a sandbox (run it on a direct connection)", st.Kind, t, quote.Ident(t.DB))
		}
		if err := xaPrepared(st); err != nil {
			return err
		}
		if st.Kind == rewrite.KindXa && !body {
			if err := xaAllowed(a, st); err != nil {
				return err
			}
			continue
		}
		if rewrite.DatabaseStatement(st) && !body {
			continue // the sandbox's own databases (databases.go)
		}
		if reason := outsideTables(st); reason != "" && !objects.RoutineStatement(st) && !sandboxTrigger(st) && (body || !maintains(a, i)) {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s changes the server outside any table, which a sandbox cannot contain; "+
				"it is refused in a sandbox (run it on a direct connection or SANDBOX DETACH in explicit mode)", reason)
		}
		if st.Kind == rewrite.KindCall && st.Routine != nil {
			if err := s.objs().CheckCall(ctx, st); err != nil {
				return err
			}
		}
		if err := s.confinedTrigger(ctx, st); err != nil {
			return err
		}
		if st.Kind == rewrite.KindCompound && !body {
			// An anonymous block's statements run at once, under the
			// rules of a sandbox procedure's body.
			for _, b := range a.CompoundBody() {
				if err := s.bodyAllowed(b); err != nil {
					return err
				}
				if err := s.confinedIn(ctx, b, true); err != nil {
					return err
				}
			}
		}
		if (st.Kind == rewrite.KindCreateProcedure || st.Kind == rewrite.KindCreateFunction) && st.Routine != nil {
			// The body's statements are the sandbox's statements too.
			for _, b := range st.Routine.Body {
				if err := s.bodyAllowed(b); err != nil {
					return err
				}
				if err := s.confinedIn(ctx, b, true); err != nil {
					return err
				}
			}
		}
	}
	if why, err := s.objs().Hazard(ctx, a, s.sb); err != nil {
		return err
	} else if why != "" {
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "this statement cannot be confined to the sandbox: %s", why)
	}
	return nil
}

// bodyAllowed refuses, in a sandbox's procedure body, what the proxy does
// for a statement of the client's around the statement itself, which a
// body's statements never get when the procedure runs: SHOW statements (the
// proxy answers them itself, without its own databases and other
// connections) but SHOW STATUS and SHOW VARIABLES (which name no table or
// database, and which the server answers for the client's too), changes of the isolation level (the server keeps them past
// the CALL, unseen by the proxy, which forks tables read under SERIALIZABLE
// first), connection attributes (the caller's own are made for each
// statement reading them), and what the user's guardrails deny.
func (s *Session) bodyAllowed(b *rewrite.Analysis) error {
	for _, st := range b.Statements {
		switch {
		case st.Show == nil && bodyShows[st.Kind]:
		case st.Show != nil || st.Kind.IsShow():
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s in a sandbox's procedure body is not supported: the proxy answers "+
				"SHOW itself, for the sandbox, when the client sends it; run it outside the procedure", st.Kind)
		case st.ChangesIsolation || st.Serializable:
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "a sandbox's procedure body may not change the isolation level "+
				"(the proxy would not see it); set it with SET SESSION TRANSACTION ISOLATION LEVEL before the CALL")
		}
		for _, t := range st.Reads {
			if _, ok := infoschema.OwnConnView(t); ok {
				return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s in a sandbox's procedure body is not supported; "+
					"read it outside the procedure", t.Quoted())
			}
		}
	}
	return s.checkGuardrails(b)
}

// mutates says why a statement would change production ("" if it would
// not).
func mutates(st rewrite.Statement) string {
	switch {
	case st.Class == rewrite.ClassWrite || st.Class == rewrite.ClassDDL:
		return string(st.Kind) + " (a " + st.Class.String() + " statement)"
	case len(st.Writes) > 0:
		return "a statement that writes " + st.Writes[0].String()
	}
	if r := outsideTables(st); r != "" {
		return r
	}
	return ""
}

// maintains reports whether the i-th statement of a is table maintenance
// — CHECK, ANALYZE, OPTIMIZE, REPAIR or CHECKSUM TABLE — of tables a
// sandbox can hold (none of the server's own schemas): in a sandbox it runs
// on the sandbox's copies of them (forkFor), and changes nothing outside
// them.
func maintains(a *rewrite.Analysis, i int) bool {
	if a.Maintenance(i) == "" {
		return false
	}
	st := a.Statements[i]
	for _, list := range [][]rewrite.Table{st.Reads, st.Writes} {
		for _, t := range list {
			if infoschema.Virtual(t) || strings.EqualFold(t.DB, "mysql") || strings.EqualFold(t.DB, "sys") {
				return false
			}
		}
	}
	return len(st.Reads)+len(st.Writes) > 0
}

// systemDDL returns the table of the server's own schemas (mysql, sys,
// performance_schema, information_schema) that st, DDL, changes.
func systemDDL(st rewrite.Statement) (rewrite.Table, bool) {
	if st.Class != rewrite.ClassDDL {
		return rewrite.Table{}, false
	}
	for _, t := range st.Writes {
		if t = sandbox.WithDB(t, st.DB); sandbox.IsSystemSchema(t.DB) {
			return t, true
		}
	}
	return rewrite.Table{}, false
}

// outsideTables says why a statement changes state no fork can hold.
func outsideTables(st rewrite.Statement) string {
	switch {
	case st.Kind == rewrite.KindKill:
		return "KILL"
	case st.Class == rewrite.ClassOther && st.Kind != rewrite.KindDo:
		return "this statement (administrative or privilege statement)"
	case st.Class == rewrite.ClassRoutine:
		return "a stored-routine statement"
	case st.Class == rewrite.ClassDDL && len(st.Writes) == 0:
		return string(st.Kind)
	case st.Kind == rewrite.KindSetGlobal:
		return "SET GLOBAL here (a sandbox keeps the globals of variables that have a session scope only for a SET GLOBAL sent " +
			"alone as a plain query, not with other statements, in a stored program or a prepared statement)"
	}
	return ""
}
