package session

import (
	"fmt"

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

// NewKiller returns a Killer that finds connections in dir.
func NewKiller(dir Directory) *Killer {
	return &Killer{engine: rewrite.NewEngine(256), dir: dir}
}

// Statement reads sql, sent by a connection of user as a statement or
// for preparing: ok is false when it is no KILL; otherwise the client gets
// err, or stmt runs upstream in its place (KILL of the upstream thread).
func (k *Killer) Statement(user, sql string, opts rewrite.Options, prepared bool) (stmt string, ok bool, err error) {
	if k == nil || !mentionsKill(sql) {
		return "", false, nil
	}
	a := k.engine.Analyze(sql, opts)
	kills := 0
	var target *rewrite.Kill
	for _, st := range a.Statements {
		if st.Kind == "KILL" {
			kills++
			target = st.Kill
		}
	}
	switch {
	case kills == 0:
		return "", false, nil
	case len(a.Statements) > 1:
		return "", true, refusal(wire.ErUnknown, "HY000", "send KILL alone, not with other statements")
	case prepared:
		return "", true, refusal(wire.ErUnknown, "HY000", "KILL cannot be prepared through the proxy; send it as a statement")
	case target == nil:
		return "", true, refusal(wire.ErUnknown, "HY000", "only KILL [CONNECTION | QUERY] <connection id> is supported through the proxy")
	}
	stmt, err = k.ID(user, target.ID, target.Query)
	return stmt, true, err
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
		return "", &rewrite.Refusal{Code: wire.ErNoSuchThread, State: "HY000", Message: fmt.Sprintf("Unknown thread id: %d", id)}
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
