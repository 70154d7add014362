package registry

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// memSide is an in-memory side connection; memDialer counts what is open.
type memSide struct{ d *memDialer }

func (c memSide) Exec(context.Context, string) (uint64, error)       { return 0, nil }
func (c memSide) Query(context.Context, string) ([][]*string, error) { return nil, nil }
func (c memSide) Close() error                                       { c.d.open--; return nil }

type memDialer struct{ open int }

func (d *memDialer) dial(context.Context) (sideconn.Conn, error) { d.open++; return memSide{d}, nil }

// TestWithConnKeepsConnectionOnRefusal: a refusal of the proxy's own (a
// limit, a lock wait) leaves a healthy side connection in the pool; any
// other failure but a server error closes it.
func TestWithConnKeepsConnectionOnRefusal(t *testing.T) {
	d := &memDialer{}
	r := New(Config{Prefix: "_sqlfork", SideConnections: 2, ForkQueueTimeout: time.Second}, d.dial, zap.NewNop(), nil)
	ctx := context.Background()
	_ = r.WithConn(ctx, func(sideconn.Conn) error { return rewrite.Refuse(wire.ErRecordFileFull, "over the limit") })
	if st := r.PoolStats(); st.Idle != 1 {
		t.Errorf("after a refusal: %+v, want the connection idle in the pool", st)
	}
	_ = r.WithConn(ctx, func(sideconn.Conn) error { return errors.New("broken pipe") })
	if st := r.PoolStats(); st.Idle != 0 || st.InUse != 0 || d.open != 0 {
		t.Errorf("after a connection error: %+v (%d open), want the connection closed", st, d.open)
	}
}
