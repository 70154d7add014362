package registry

import (
	"context"
	"encoding/hex"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// xaTries and xaPause bound how long a drop waits for a prepared XA
// transaction's connection to end (the server lets another connection
// roll it back only then): a client's connection closing just before its
// sandbox is discarded.
const (
	xaTries = 10
	xaPause = 200 * time.Millisecond
)

// rollbackXA rolls back the prepared XA transactions of sandbox id
// (sandbox.XAPrefix) before its schemas are dropped: a prepared
// transaction outlives its connection and keeps its locks on the
// sandbox's tables, which DROP DATABASE would wait for. Best effort: one
// still held by a live connection after the tries is logged, and the drop
// waits as it would for any open transaction.
func (m *Registry) rollbackXA(ctx context.Context, c sideconn.Conn, id string) {
	for try := 1; ; try++ {
		left, err := m.rollbackXAOnce(ctx, c, id)
		if left == 0 || err != nil || try == xaTries {
			if left > 0 || err != nil {
				m.log.Warn("prepared XA transactions of a dropped sandbox not rolled back", zap.String("sandbox", id),
					zap.Int("left", left), zap.Error(err))
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(xaPause):
		}
	}
}

// rollbackXAOnce rolls back those of the sandbox's prepared XA
// transactions the server lets it: left counts the others.
func (m *Registry) rollbackXAOnce(ctx context.Context, c sideconn.Conn, id string) (left int, err error) {
	rows, err := c.Query(ctx, "XA RECOVER")
	if err != nil {
		return 0, err
	}
	p := sandbox.XAPrefix(id)
	for _, r := range rows {
		if len(r) != 4 || r[0] == nil || r[1] == nil || r[2] == nil || r[3] == nil {
			continue
		}
		format, err0 := strconv.ParseInt(*r[0], 10, 64)
		gl, err1 := strconv.Atoi(*r[1])
		bl, err2 := strconv.Atoi(*r[2])
		data := *r[3]
		if err0 != nil || err1 != nil || err2 != nil || gl+bl != len(data) || gl < len(p) || data[:len(p)] != p {
			continue
		}
		xid := "X'" + hex.EncodeToString([]byte(data[:gl])) + "',X'" + hex.EncodeToString([]byte(data[gl:])) + "'," +
			strconv.FormatInt(format, 10)
		if _, err := c.Exec(ctx, "XA ROLLBACK "+xid); err != nil {
			left++
		}
	}
	return left, nil
}
