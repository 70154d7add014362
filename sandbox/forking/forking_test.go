package forking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Fork failures are counted by cause, and a refused side dial reaches the
// client as the upstream's code with what to size.
func TestForkFailureCauseAndDialError(t *testing.T) {
	refused := &mysql.MyError{Code: 1040, State: "08004", Message: "Too many connections"}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("fork: %w", &sideconn.TimeoutError{Size: 8}), "queue_timeout"},
		{&sideconn.DialError{Err: refused, Size: 8}, "connect"},
		{rewrite.Refuse(wire.ErRecordFileFull, "too big"), "refused"},
		{fmt.Errorf("fork t: %w", refused), "error"},
		{context.DeadlineExceeded, "error"},
	} {
		if got := forkFailureCause(tt.err); got != tt.want {
			t.Errorf("cause of %v = %s, want %s", tt.err, got, tt.want)
		}
	}
	code, state, msg := (&sideconn.DialError{Err: refused, Size: 8}).MySQLError()
	if code != 1040 || state != "08004" || !strings.Contains(msg, "Too many connections") ||
		!strings.Contains(msg, "plus the proxy's 8 side connections (side-connections)") || !strings.Contains(msg, "retry the statement") {
		t.Errorf("refused dial: %d %s %q", code, state, msg)
	}
	code, _, msg = (&sideconn.DialError{Err: errors.New("connection refused"), Size: 8}).MySQLError()
	if code != 1105 || !strings.Contains(msg, "connection refused") {
		t.Errorf("unreachable upstream: %d %q", code, msg)
	}
}
