package session

import (
	"context"
	"errors"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/rewrite/setvar"
	"github.com/sqlfork/sqlfork-proxy/sandbox/globals"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// A sandbox is a private server: SET GLOBAL of a variable that has a
// session scope sets the sandbox's global (globals.Set), never
// production's. The value is evaluated and checked by the server on the
// client's own connection with SET STATEMENT name = <value> FOR SELECT
// @@SESSION.name, which leaves the session as it was; the connections that
// join the sandbox afterwards start with it as their session value
// (joinGlobals), as on a server; reads of @@GLOBAL.name in the sandbox get
// it (resolver.Global), and so does SHOW GLOBAL VARIABLES (globalsShow).

// sysVar is what information_schema.SYSTEM_VARIABLES says of a variable.
type sysVar struct {
	scope, typ string
	// def is the compiled default (DEFAULT_VALUE), nil when unknown.
	def *string
}

// Variable scopes, as information_schema.SYSTEM_VARIABLES names them.
const (
	scopeGlobal      = "GLOBAL"
	scopeSessionOnly = "SESSION ONLY"
)

// beyondSession are variables with a session scope whose session value
// still reaches past the session — into the binary log and replication,
// the server's logs, or its debugging — which a sandbox's global, applied
// to its sessions, must not change (prefixes end with '_').
var beyondSession = []string{"binlog_", "gtid_", "wsrep_", "debug", "pseudo_", "server_id", "sql_log_bin", "sql_log_off",
	"skip_replication", "log_slow_", "slow_query_log", "log_queries_not_using_indexes", "long_query_time",
	"min_examined_row_limit", "log_warnings", "profiling", "rand_seed", "insert_id", "last_insert_id", "timestamp"}

// reachesBeyond reports whether the session value of name reaches past
// the session (beyondSession).
func reachesBeyond(name string) bool {
	for _, p := range beyondSession {
		if name == p || strings.HasSuffix(p, "_") && strings.HasPrefix(name, p) || p == "debug" && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// globalBuiltins are the functions a SET GLOBAL value may call in a
// sandbox: the proxy evaluates the value itself, so it must not write or
// call what could (stored functions).
var globalBuiltins = map[string]bool{
	"concat": true, "concat_ws": true, "replace": true, "lower": true, "upper": true, "lcase": true, "ucase": true,
	"trim": true, "ltrim": true, "rtrim": true, "substring": true, "substr": true, "left": true, "right": true,
	"if": true, "ifnull": true, "nullif": true, "coalesce": true, "greatest": true, "least": true, "cast": true,
	"convert": true, "floor": true, "ceil": true, "ceiling": true, "round": true, "truncate": true, "abs": true,
	"power": true, "pow": true, "length": true, "char_length": true, "lpad": true, "rpad": true, "mod": true, "char": true,
}

// planSetGlobal plans a SET GLOBAL in a sandbox, which the session
// answers itself (setGlobals).
func (s *Session) planSetGlobal(ctx context.Context, a *rewrite.Analysis, prepared bool, p *Plan) (*Plan, error) {
	st := a.Statements[0]
	if prepared {
		return nil, rewrite.Refuse(wire.ErUnsupportedPS, "SET GLOBAL in a sandbox is answered by the proxy (the sandbox keeps the "+
			"value) and cannot be prepared; send it as a plain query")
	}
	if st.Outside != "" {
		if err := s.unknownEngine(ctx, st); err != nil {
			return nil, err
		}
		return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "%s", st.Outside)
	}
	as, ok := a.Assignments()
	if !ok {
		return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "this form of SET GLOBAL changes the whole server, which a sandbox "+
			"cannot hold; in a sandbox only SET GLOBAL name = value of variables that have a session scope is kept (by the sandbox); "+
			"run it on a direct connection")
	}
	if len(st.Reads)+len(st.Writes) > 0 || st.Unprovable != "" {
		return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "a SET GLOBAL value that reads a table is not supported in a "+
			"sandbox; read it into a user variable first (SELECT … INTO @v) and SET GLOBAL name = @v")
	}
	for _, f := range st.Funcs {
		if f.Schema != "" || !globalBuiltins[strings.ToLower(f.Name)] {
			return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "a SET GLOBAL value in a sandbox may not call %s (the proxy "+
				"evaluates it and calls only string and arithmetic built-ins); compute it into a user variable first "+
				"(SET @v = …) and SET GLOBAL name = @v", quote.Ident(f.Name))
		}
	}
	for _, a := range as {
		if !isASCII(a.Value) {
			// The text read may be decoded from the client's character
			// set; the value is sent again in the proxy's own statement.
			return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "a SET GLOBAL value in a sandbox must be ASCII text; "+
				"write other characters as X'…' or with CHAR()")
		}
	}
	p.answer = func(ctx context.Context) (*Reply, error) { return asServer(s.setGlobals(ctx, as)) }
	return p, nil
}

// setGlobals runs the SET statement as (at least one of them global) in
// the sandbox: each global is looked up, checked and evaluated first,
// then the other assignments run on the client's connection, and only
// then are the globals the sandbox's. The answer is OK with the
// warnings the evaluations and the rest left.
func (s *Session) setGlobals(ctx context.Context, as []setvar.Assignment) (*Reply, error) {
	infos := make([]sysVar, len(as))
	for i, a := range as {
		if a.Scope != setvar.Global {
			continue
		}
		v, err := s.globalInfo(ctx, a.Name)
		if err != nil {
			return nil, err
		}
		infos[i] = v
	}
	var vals []globals.Value
	var warns []Diag
	var rest []setvar.Assignment
	for i, a := range as {
		if a.Scope != setvar.Global {
			rest = append(rest, a)
			continue
		}
		v, w, err := s.evalGlobal(ctx, a, infos[i])
		if err != nil {
			return nil, err
		}
		vals, warns = append(vals, v), append(warns, w...)
	}
	if len(rest) > 0 {
		if _, err := s.up.Query(ctx, setvar.Text(rest)); err != nil {
			return nil, err
		}
		s.varsKnown = false // the session's settings may have changed
		w, err := s.warnings(ctx)
		if err != nil {
			return nil, err
		}
		warns = append(warns, w...)
	}
	err := s.m.reg.WithConn(ctx, func(c SideConn) error { return s.m.reg.SaveGlobals(ctx, c, s.sb, vals) })
	if err != nil {
		return nil, err
	}
	s.log.Debug("sandbox globals set", zap.String("sandbox", s.sb.Name), zap.Int("variables", len(vals)))
	return &Reply{Warnings: warns}, nil
}

// globalInfo looks the variable name up (on a side connection: the
// client's session counts nothing of it) and refuses what a sandbox
// cannot hold, with the server's own errors for what the server refuses.
func (s *Session) globalInfo(ctx context.Context, name string) (sysVar, error) {
	lower := strings.ToLower(name)
	var rows [][]*string
	if globals.ValidName(lower) {
		err := s.m.reg.WithConn(ctx, func(c SideConn) error {
			var err error
			rows, err = c.Query(ctx, "SELECT VARIABLE_SCOPE, VARIABLE_TYPE, DEFAULT_VALUE FROM information_schema.SYSTEM_VARIABLES "+
				"WHERE VARIABLE_NAME = "+quote.String(strings.ToUpper(lower)))
			return err
		})
		if err != nil {
			return sysVar{}, err
		}
	}
	if len(rows) != 1 || len(rows[0]) != 3 || rows[0][0] == nil || rows[0][1] == nil {
		return sysVar{}, rewrite.ServerRefusal(wire.ErUnknownSystemVariable, "Unknown system variable '%s'", name)
	}
	v := sysVar{scope: *rows[0][0], typ: *rows[0][1], def: rows[0][2]}
	switch {
	case lower == "sql_log_bin": // the server's own answer
		return v, rewrite.ServerRefusal(wire.ErIncorrectGlobalLocalVar, "Variable '%s' is a SESSION variable", lower)
	case v.scope == scopeSessionOnly:
		return v, rewrite.ServerRefusal(wire.ErLocalVariable, "Variable '%s' is a SESSION variable and can't be used with SET GLOBAL", lower)
	case v.scope == scopeGlobal:
		return v, globalOnly(lower)
	case reachesBeyond(lower):
		return v, rewrite.Refuse(wire.ErOptionPreventsStatement, "SET GLOBAL %s: the variable's session value still reaches beyond "+
			"the session (the binary log, replication, the server's logs or debugging), so a sandbox cannot keep it as its own; "+
			"it is refused in a sandbox — set it on a direct connection", lower)
	}
	return v, nil
}

// globalOnly refuses SET GLOBAL of name, a variable without a session
// scope of its own.
func globalOnly(name string) error {
	return rewrite.Refuse(wire.ErOptionPreventsStatement, "SET GLOBAL %s: the variable has no session scope, so it acts on the "+
		"whole server (production and every sandbox), which a sandbox cannot hold; it is refused in a sandbox — set it on "+
		"production through a direct connection, or leave it out", name)
}

// evalGlobal evaluates the value of a, a global assignment of a variable
// described by info, as the server would set it: the value it reads back
// and the warnings the server gave. DEFAULT is the compiled default
// (production's global when the server names none).
func (s *Session) evalGlobal(ctx context.Context, a setvar.Assignment, info sysVar) (globals.Value, []Diag, error) {
	name := strings.ToLower(a.Name)
	v := globals.Value{Name: name, Type: globals.Type(info.typ)}
	expr := a.Value
	if a.Default {
		expr = "@@GLOBAL." + name
		if info.def != nil {
			expr = globals.Value{Name: name, Type: v.Type, Text: info.def}.Literal()
		}
	}
	q := "SET STATEMENT " + name + " = " + expr + " FOR SELECT @@SESSION." + name
	if res, err := s.m.engine.Analyze(q, s.options()).Rewrite(globalsOnly{s}); err == nil {
		q = res.SQL // the sandbox's own globals the value reads
	}
	r, err := s.up.Query(ctx, q)
	var me *mysql.MyError
	if isServerError(err) && errors.As(err, &me) && me.Code == wire.ErSetStatementNotSupported {
		r, err = s.evalSaved(ctx, name, expr)
	}
	if isServerError(err) && errors.As(err, &me) && me.Code == wire.ErVariableIsReadonly {
		// Its session value is the global's (max_user_connections):
		// the variable acts as a global only.
		return v, nil, globalOnly(name)
	}
	if err != nil {
		return v, nil, err
	}
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
		return v, nil, rewrite.Refuse(wire.ErUnknown, "the server's answer for @@%s has no value; run it on a direct connection", name)
	}
	v.Text = r.Rows[0][0]
	w, err := s.warnings(ctx)
	return v, w, err
}

// evalSaved evaluates a variable SET STATEMENT cannot set (autocommit,
// character_set_client, …): SET SESSION, read back, then the session's
// value set again. Outside a transaction only, where setting autocommit
// back commits nothing.
func (s *Session) evalSaved(ctx context.Context, name, expr string) (*Result, error) {
	if s.up.Status()&wire.StatusInTrans != 0 {
		return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "SET GLOBAL %s in a sandbox is evaluated on the session, which "+
			"cannot be done inside a transaction; COMMIT or ROLLBACK first", name)
	}
	saved, err := s.up.Query(ctx, "SELECT @@SESSION."+name)
	if err != nil {
		return nil, err
	}
	if len(saved.Rows) != 1 || len(saved.Rows[0]) != 1 {
		return nil, rewrite.Refuse(wire.ErUnknown, "the server's answer for @@%s has no value; run it on a direct connection", name)
	}
	if _, err := s.up.Query(ctx, "SET SESSION "+name+" = "+expr); err != nil {
		return nil, err
	}
	r, err := s.up.Query(ctx, "SELECT @@SESSION."+name)
	typ, _ := s.varType(ctx, name)
	old := globals.Value{Name: name, Type: typ, Text: saved.Rows[0][0]}
	if _, rerr := s.up.Query(ctx, "SET SESSION "+name+" = "+old.Literal()); rerr != nil {
		return nil, rerr
	}
	return r, err
}

// varType is the type of the variable name (globalInfo's look-up).
func (s *Session) varType(ctx context.Context, name string) (globals.Type, error) {
	v, err := s.globalInfo(ctx, name)
	return globals.Type(v.typ), err
}

// warnings are the warnings of the last statement on the client's
// connection.
func (s *Session) warnings(ctx context.Context) ([]Diag, error) {
	r, err := s.up.Query(ctx, "SHOW WARNINGS")
	if err != nil {
		return nil, err
	}
	var out []Diag
	for _, row := range r.Rows {
		if len(row) != 3 || row[0] == nil || row[1] == nil || row[2] == nil {
			continue
		}
		d := Diag{Level: *row[0], Message: *row[2]}
		var code uint64
		for _, c := range *row[1] {
			code = code*10 + uint64(c-'0')
		}
		d.Code = uint16(code)
		out = append(out, d)
	}
	return out, nil
}

// joinGlobals gives the client's session the sandbox's globals once per
// binding (a connection that joins it, an ATTACH, a reset connection), as
// a server gives a new session its globals: SET SESSION of each. A
// connection already in the sandbox when a SET GLOBAL ran keeps its
// values.
func (s *Session) joinGlobals(ctx context.Context) error {
	if s.sb == nil || s.up == nil || s.joined == s.sb {
		return nil
	}
	s.joined = s.sb
	q := globals.Statement(s.sb.Globals().All())
	if q == "" {
		return nil
	}
	if _, err := s.up.Query(ctx, q); err != nil {
		if !isServerError(err) {
			return err
		}
		s.log.Warn("the sandbox's globals could not be given to a connection", zap.String("sandbox", s.sb.Name), zap.Error(err))
	}
	s.varsKnown = false
	return nil
}

// asServer is an answer the session made by running statements on the
// client's connection, a server error among them given to the client as
// the server worded it (without the proxy's prefix).
func asServer(r *Reply, err error) (*Reply, error) {
	var me *mysql.MyError
	if isServerError(err) && errors.As(err, &me) {
		return nil, rewrite.ServerRefusal(me.Code, "%s", me.Message)
	}
	return r, err
}

// globalsOnly is a resolver that maps no table and reads the sandbox's
// globals (a SET GLOBAL value that reads one).
type globalsOnly struct{ s *Session }

// Resolve implements rewrite.Resolver: no table is mapped.
func (g globalsOnly) Resolve(t rewrite.Table, write bool) (rewrite.Table, bool, error) {
	return t, false, nil
}

// Global implements rewrite.GlobalResolver.
func (g globalsOnly) Global(name string) (string, bool) { return resolver{s: g.s}.Global(name) }

// Global implements rewrite.GlobalResolver: a read of @@GLOBAL.name of a
// variable the sandbox set.
func (r resolver) Global(name string) (string, bool) {
	if r.s.sb == nil {
		return "", false
	}
	v, ok := r.s.sb.Globals().Get(name)
	if !ok {
		return "", false
	}
	return v.ReadExpr(), true
}

// globalsShow answers SHOW GLOBAL VARIABLES [LIKE … | WHERE …] (sql, as
// sent) in a sandbox that set globals: the server's answer with the
// sandbox's values in place of production's. (A WHERE on Value compares
// production's.)
func (s *Session) globalsShow(ctx context.Context, sql string) (*Reply, error) {
	r, err := s.up.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	for _, row := range r.Rows {
		if len(row) != 2 || row[0] == nil {
			continue
		}
		if v, ok := s.sb.Globals().Get(strings.ToLower(*row[0])); ok {
			row[1] = v.ShowText()
		}
	}
	return &Reply{Defs: r.Columns, Rows: r.Rows}, nil
}
