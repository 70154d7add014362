package registry

import (
	"context"
	"errors"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// A sandbox's prepared XA transactions (sandbox.XAPrefix) outlive their
// connections and keep their locks on the sandbox's tables, which a DROP
// would wait for without end. A sandbox that goes rolls back those no
// connection holds any more; one that a live connection still holds calls
// the discard off (settleXA), and a reset of a sandbox with any is refused
// (PreparedXA): the client commits or rolls it back first.

// xaTries and xaPause bound how long a discard waits for a prepared XA
// transaction's connection to end (the server lets another connection
// roll it back only then): a client's connection closing just before its
// sandbox is discarded.
const (
	xaTries = 10
	xaPause = 200 * time.Millisecond
)

// errXAHeld calls off the discard of a sandbox whose prepared XA
// transaction a live connection holds.
func errXAHeld(name string, n int) error {
	return rewrite.Refuse(wire.ErXARMFail, "XAER_RMFAIL: sandbox %q has %d prepared XA transaction(s) held by a live connection; "+
		"XA COMMIT or XA ROLLBACK them (XA RECOVER in the sandbox lists them), or end that connection, then discard it", name, n)
}

// PreparedXA refuses, for a reset of sandbox sb, a sandbox that has a
// prepared XA transaction: the reset would wait for its locks without end
// (and the transaction would then write tables the reset gave back).
func (m *Registry) PreparedXA(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	ids, err := m.preparedXA(ctx, c, sb.ID)
	if err != nil || len(ids) == 0 {
		return err
	}
	return rewrite.Refuse(wire.ErXARMFail, "XAER_RMFAIL: sandbox %q has %d prepared XA transaction(s), which hold its tables; "+
		"XA COMMIT or XA ROLLBACK them (XA RECOVER lists them), then reset it", sb.Name, len(ids))
}

// settleXA rolls back the prepared XA transactions of sandbox id before
// its schemas are dropped, trying again (tries times in all) for those a
// connection that is ending still holds; left counts those a live
// connection holds after it.
func (m *Registry) settleXA(ctx context.Context, c sideconn.Conn, id string, tries int) (left int, err error) {
	for try := 1; ; try++ {
		if left, err = m.rollbackXAOnce(ctx, c, id); left == 0 || err != nil || try >= tries {
			return left, err
		}
		select {
		case <-ctx.Done():
			return left, ctx.Err()
		case <-time.After(xaPause):
		}
	}
}

// clearXA is settleXA before sandbox id (called name) is dropped: an
// error when a live connection still holds one of its prepared XA
// transactions, which calls the drop off.
func (m *Registry) clearXA(ctx context.Context, c sideconn.Conn, id, name string, tries int) error {
	left, err := m.settleXA(ctx, c, id, tries)
	if err == nil && left > 0 {
		err = errXAHeld(name, left)
	}
	return err
}

// settleUnrecordedXA is clearXA for a sandbox the registry has no rows of
// (it never wrote a table, as an XA transaction of reads does not), when a
// connection started an XA transaction in it: nothing else would find its
// prepared ones again once it is forgotten.
func (m *Registry) settleUnrecordedXA(ctx context.Context, sb *Sandbox, try bool) error {
	if !sb.usedXA() {
		return nil
	}
	tries := xaTries
	if try {
		tries = 1
	}
	return m.WithConn(ctx, func(c sideconn.Conn) error { return m.clearXA(ctx, c, sb.ID, sb.Name, tries) })
}

// preparedXA lists the prepared XA transactions of sandbox id, each as
// the xid XA ROLLBACK takes.
func (m *Registry) preparedXA(ctx context.Context, c sideconn.Conn, id string) ([]string, error) {
	rows, err := c.Query(ctx, "XA RECOVER")
	if err != nil {
		return nil, err
	}
	p := sandbox.XAPrefix(id)
	var out []string
	for _, r := range rows {
		if x, ok := sandbox.ParseXARow(r); ok {
			if _, own := x.Own(p); own {
				out = append(out, x.XID())
			}
		}
	}
	return out, nil
}

// rollbackXAOnce rolls back those of the sandbox's prepared XA
// transactions the server lets it: left counts the others (held by a live
// connection: 1397 XAER_NOTA to any other). 1402 XA_RBROLLBACK says it was
// rolled back.
func (m *Registry) rollbackXAOnce(ctx context.Context, c sideconn.Conn, id string) (left int, err error) {
	xids, err := m.preparedXA(ctx, c, id)
	if err != nil {
		return 0, err
	}
	for _, xid := range xids {
		_, err := c.Exec(ctx, "XA ROLLBACK "+xid)
		var me *mysql.MyError
		if err != nil && !(errors.As(err, &me) && me.Code == 1402) {
			left++
		}
	}
	return left, nil
}
