// Package kill answers KILL and KILL QUERY for the proxy's users: it finds
// the upstream thread a statement names, among the user's own connections
// only (Directory), and reads the few statements that name one by
// evaluating an expression.
package kill

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Proxy users share one upstream account, so the upstream would let any of
// them kill any other's statements. The proxy answers KILL itself: a
// client names a connection by the id its greeting carried (what drivers
// cancel with) or by its upstream thread id (CONNECTION_ID()), only
// connections of its own proxy user are found, and the matching upstream
// thread is killed on the client's own upstream connection. Passthrough
// sessions too: the wall between proxy users holds in every mode.

// Killer translates KILL statements and COM_PROCESS_KILL for one proxy
// process. It is safe for concurrent use.
type Killer struct {
	engine *rewrite.Engine
	dir    Directory
}

// New returns a Killer that finds connections in dir.
func New(dir Directory) *Killer {
	return &Killer{engine: rewrite.NewEngine(256), dir: dir}
}

// Evaluator runs a query on the client's own upstream connection and
// returns the first value of its answer (nil for NULL). The Killer uses it
// to evaluate a KILL's target expression (which reads no table and calls
// no stored function) as the server would.
type Evaluator func(query string) (*string, error)

// Statement reads sql, sent by a connection of user as a statement or
// for preparing: ok is false when it is no KILL; otherwise the client gets
// err, or stmt runs upstream in its place (KILL of the upstream thread).
// A target written as an expression is evaluated with eval.
func (k *Killer) Statement(user, sql string, opts rewrite.Options, prepared bool, eval Evaluator) (stmt string, ok bool, err error) {
	if k == nil || !mentionsKill(sql) {
		return "", false, nil
	}
	a := k.engine.Analyze(sql, opts)
	kills := 0
	var target *rewrite.Kill
	for _, st := range a.Statements {
		if st.Kind == rewrite.KindKill {
			kills++
			target = st.Kill
		}
	}
	switch {
	case kills == 0:
		return "", false, nil
	case len(a.Statements) > 1:
		return "", true, rewrite.Refuse(wire.ErUnknown, "send KILL alone, not with other statements")
	case prepared:
		return "", true, rewrite.Refuse(wire.ErUnknown, "KILL cannot be prepared through the proxy; send it as a statement")
	case target == nil:
		if target, err = k.evaluate(sql, opts, eval); err != nil {
			return "", true, err
		}
	}
	stmt, err = k.ID(user, target.ID, target.Query)
	return stmt, true, err
}

// killExpr reads KILL [HARD | SOFT] [CONNECTION | QUERY] <expression>:
// whether it kills the statement only, and the expression's text.
var killExpr = regexp.MustCompile(`(?is)^\s*KILL\s+(?:(?:HARD|SOFT)\s+)?(?:(CONNECTION|QUERY)\s+)?(.*?)\s*;?\s*$`)

// evaluate finds the connection a KILL names with an expression, as
// MariaDB does: an expression that reads a table (a sequence's LASTVAL
// included) or calls a stored function is refused (1970); another is
// evaluated on the client's own connection — it cannot change anything —
// and taken as an integer. KILL USER and KILL QUERY ID stay refused: they
// could reach other proxy users' connections.
func (k *Killer) evaluate(sql string, opts rewrite.Options, eval Evaluator) (*rewrite.Kill, error) {
	m := killExpr.FindStringSubmatch(sql)
	unsupported := rewrite.Refuse(wire.ErUnknown, "only KILL [CONNECTION | QUERY] <connection id or expression> is supported "+
		"through the proxy (KILL USER and KILL QUERY ID could reach other users' connections)")
	if m == nil || m[2] == "" || eval == nil {
		return nil, unsupported
	}
	switch w := strings.ToUpper(strings.Fields(m[2])[0]); {
	case w == "USER", w == "ID" && strings.EqualFold(m[1], "QUERY"):
		return nil, unsupported
	}
	query := "SELECT CAST((" + m[2] + ") AS SIGNED)"
	a := k.engine.Analyze(query, opts)
	if len(a.Statements) != 1 || a.Statements[0].Kind != rewrite.KindSelect {
		return nil, unsupported
	}
	if st := a.Statements[0]; len(st.Reads) > 0 || st.Unprovable != "" || !builtinsOnly(st.Funcs) {
		return nil, rewrite.ServerRefusal(wire.ErSubqueriesNotSupported, "KILL does not support subqueries or stored functions")
	}
	v, err := eval(query)
	if err != nil {
		return nil, err
	}
	var id int64
	if v != nil {
		id, _ = strconv.ParseInt(*v, 10, 64)
	}
	return &rewrite.Kill{Query: strings.EqualFold(m[1], "QUERY"), ID: uint64(id)}, nil
}

// builtinsOnly reports whether every function of funcs is one of the
// server's own that a KILL's target may call; a name the proxy cannot tell
// from a stored function's counts as stored (refused, as the server
// refuses stored functions).
func builtinsOnly(funcs []rewrite.Func) bool {
	for _, f := range funcs {
		if f.Schema != "" || !killBuiltins[strings.ToLower(f.Name)] {
			return false
		}
	}
	return true
}

// killBuiltins are functions a KILL's target expression may call.
var killBuiltins = map[string]bool{
	"connection_id": true, "abs": true, "floor": true, "ceil": true, "ceiling": true, "round": true, "truncate": true,
	"mod": true, "greatest": true, "least": true, "if": true, "ifnull": true, "coalesce": true, "nullif": true,
	"cast": true, "convert": true, "conv": true, "length": true, "char_length": true, "concat": true,
	"substring": true, "substr": true, "left": true, "right": true, "lower": true, "upper": true, "hex": true,
	"unhex": true, "sign": true, "pow": true, "power": true,
}

// ID translates a KILL of connection id (its statement only, for query)
// by a connection of user: the statement to run upstream, or 1094 when id
// names none of user's live connections.
func (k *Killer) ID(user string, id uint64, query bool) (string, error) {
	up, ok := uint32(0), false
	if k.dir != nil {
		up, ok = k.dir.KillTarget(user, id)
	}
	if !ok {
		return "", rewrite.ServerRefusal(wire.ErNoSuchThread, "Unknown thread id: %d", id)
	}
	if query {
		return fmt.Sprintf("KILL QUERY %d", up), nil
	}
	return fmt.Sprintf("KILL CONNECTION %d", up), nil
}

// mentionsKill reports whether sql holds "kill" in any letter case: a
// statement without it is no KILL, whatever its comments.
func mentionsKill(sql string) bool {
	for i := 0; i+4 <= len(sql); i++ {
		if sql[i]|0x20 == 'k' && sql[i+1]|0x20 == 'i' && sql[i+2]|0x20 == 'l' && sql[i+3]|0x20 == 'l' {
			return true
		}
	}
	return false
}

// natives and keywords are the server's own functions (catalog.NativeFunctions, KeywordFunctions).
var natives, keywords = func() (map[string]bool, map[string]bool) {
	n, k := make(map[string]bool, len(catalog.NativeFunctions())), make(map[string]bool, len(catalog.KeywordFunctions()))
	for _, f := range catalog.NativeFunctions() {
		n[f] = true
	}
	for _, f := range catalog.KeywordFunctions() {
		k[f] = true
	}
	return n, k
}()

// PlainStatement reports whether st is read for sure as a plain read: a
// statement of class read that writes nothing (no sequence either), takes
// no locks, reaches nothing outside the tables, and calls no function but
// the server's own (a stored or loadable function may write).
func PlainStatement(st rewrite.Statement) bool {
	if st.Class != rewrite.ClassRead || len(st.Writes) > 0 || len(st.Locked) > 0 || st.Outside != "" || st.Unprovable != "" {
		return false
	}
	for _, f := range st.Funcs {
		up := strings.ToUpper(f.Name)
		if f.Schema != "" || !natives[up] && !(f.Bare && keywords[up]) {
			return false
		}
	}
	return true
}

// PlainRead reports whether sql, a passthrough session's statement text, is
// read for sure as plain reads only (plainRead): only such a statement
// changes nothing a later connection could see, so only it is killed when
// its client goes away; anything the proxy cannot read for sure runs to its
// end, as on a direct connection.
func (k *Killer) PlainRead(sql string, opts rewrite.Options) bool {
	if k == nil || sql == "" {
		return false
	}
	a := k.engine.Analyze(sql, opts)
	if len(a.Statements) == 0 {
		return false
	}
	if _, err := a.Rewrite(catalog.MapsNothing{}); err != nil {
		return false
	}
	for _, st := range a.Statements {
		if !PlainStatement(st) {
			return false
		}
	}
	return true
}

// Directory finds the live connections of a proxy user (to this proxy
// process), for KILL and the process list.
type Directory interface {
	// Threads are the upstream thread ids of user's live connections.
	Threads(user string) map[uint32]bool
	// KillTarget is the upstream thread id of user's live connection that
	// id names: its greeting id or its upstream thread id.
	KillTarget(user string, id uint64) (uint32, bool)
}
