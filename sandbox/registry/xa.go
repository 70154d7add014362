package registry

import (
	"context"
	"encoding/hex"
	"strconv"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// rollbackXA rolls back the prepared XA transactions of sandbox id
// (sandbox.XAPrefix) before its schemas are dropped: a prepared
// transaction outlives its connection and keeps its locks on the
// sandbox's tables, which DROP DATABASE would wait for. Best effort: one
// it cannot roll back is logged, and the drop waits as it would.
func (m *Registry) rollbackXA(ctx context.Context, c sideconn.Conn, id string) {
	rows, err := c.Query(ctx, "XA RECOVER")
	if err != nil {
		m.log.Warn("list prepared XA transactions", zap.String("sandbox", id), zap.Error(err))
		return
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
			m.log.Warn("roll back a prepared XA transaction of a dropped sandbox", zap.String("sandbox", id), zap.Error(err))
		}
	}
}
