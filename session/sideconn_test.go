package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

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

func (d *memDialer) dial(context.Context) (SideConn, error) { d.open++; return memSide{d}, nil }

// Fork failures are counted by cause, and a refused side dial reaches the
// client as the upstream's code with what to size.
func TestForkFailureCauseAndDialError(t *testing.T) {
	refused := &mysql.MyError{Code: 1040, State: "08004", Message: "Too many connections"}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("fork: %w", &sideconn.TimeoutError{Size: 8}), "queue_timeout"},
		{&DialError{Err: refused, Size: 8}, "connect"},
		{rewrite.Refuse(wire.ErRecordFileFull, "too big"), "refused"},
		{fmt.Errorf("fork t: %w", refused), "error"},
		{context.DeadlineExceeded, "error"},
	} {
		if got := forkFailureCause(tt.err); got != tt.want {
			t.Errorf("cause of %v = %s, want %s", tt.err, got, tt.want)
		}
	}
	code, state, msg := (&DialError{Err: refused, Size: 8}).MySQLError()
	if code != 1040 || state != "08004" || !strings.Contains(msg, "Too many connections") ||
		!strings.Contains(msg, "plus the proxy's 8 side connections (side-connections)") || !strings.Contains(msg, "retry the statement") {
		t.Errorf("refused dial: %d %s %q", code, state, msg)
	}
	code, _, msg = (&DialError{Err: errors.New("connection refused"), Size: 8}).MySQLError()
	if code != 1105 || !strings.Contains(msg, "connection refused") {
		t.Errorf("unreachable upstream: %d %q", code, msg)
	}
}

// TestWithConnKeepsConnectionOnRefusal: a refusal of the proxy's own (a
// limit, a lock wait) leaves a healthy side connection in the pool; any
// other failure but a server error closes it.
func TestWithConnKeepsConnectionOnRefusal(t *testing.T) {
	d := &memDialer{}
	m := &Manager{reg: &registry{pool: sideconn.NewPool(2, time.Second, d.dial), obs: nopObserver{}}}
	ctx := context.Background()
	_ = m.reg.WithConn(ctx, func(SideConn) error { return rewrite.Refuse(wire.ErRecordFileFull, "over the limit") })
	if st := m.PoolStats(); st.Idle != 1 {
		t.Errorf("after a refusal: %+v, want the connection idle in the pool", st)
	}
	_ = m.reg.WithConn(ctx, func(SideConn) error { return errors.New("broken pipe") })
	if st := m.PoolStats(); st.Idle != 0 || st.InUse != 0 {
		t.Errorf("after a connection error: %+v, want the connection closed", st)
	}
}
