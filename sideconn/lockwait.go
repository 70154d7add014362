package sideconn

import (
	"context"
	"fmt"
	"strconv"
)

// LockWait sets c's lock_wait_timeout to secs seconds, for statements that
// must give up rather than wait for a lock without end (a drop behind a
// transaction); restore sets it back.
func LockWait(ctx context.Context, c Conn, secs int) (restore func(), err error) {
	rows, err := c.Query(ctx, "SELECT @@session.lock_wait_timeout")
	if err != nil {
		return nil, fmt.Errorf("read the side connection's lock_wait_timeout: %w", err)
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return nil, fmt.Errorf("read the side connection's lock_wait_timeout: %d rows", len(rows))
	}
	old := Str(rows[0][0])
	if _, err := strconv.Atoi(old); err != nil {
		return nil, fmt.Errorf("read the side connection's lock_wait_timeout: %q", old)
	}
	if _, err := c.Exec(ctx, "SET SESSION lock_wait_timeout = "+strconv.Itoa(secs)); err != nil {
		return nil, fmt.Errorf("set the side connection's lock_wait_timeout: %w", err)
	}
	return func() { _, _ = c.Exec(context.WithoutCancel(ctx), "SET SESSION lock_wait_timeout = "+old) }, nil
}
