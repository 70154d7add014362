package registry

import (
	"context"
	"fmt"
	"sync"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"go.uber.org/zap"
)

// Each process holds a liveness lock (an upstream GET_LOCK named after its
// id) on a connection of its own, outside the side connection pool, for as
// long as it runs. Leases in the registry tell other processes when a
// process that held an unkept sandbox has gone; but a live process can miss
// renewing them — every side connection busy with long forks, its reaper
// queued behind them — and another process would then discard a sandbox in
// use. The lock dies with its connection, so it says what the lease only
// suggests: before discarding an unkept sandbox whose leases lapsed, a
// process checks that none of its holders still holds its liveness lock.

// liveness is the connection holding this process's liveness lock.
type liveness struct {
	mu   sync.Mutex
	conn sideconn.Conn
}

// aliveLock is the name of proxy process id's liveness lock.
func (m *Registry) aliveLock(id string) string { return m.LockName(id, "alive") }

// keepAlive makes sure this process holds its liveness lock: the
// connection holding it still answers, or a new one takes it. Failures
// are logged: until it holds the lock again, other processes go by its
// leases alone.
func (m *Registry) keepAlive(ctx context.Context) {
	m.live.mu.Lock()
	defer m.live.mu.Unlock()
	lock := quote.String(m.aliveLock(m.proxyID))
	if c := m.live.conn; c != nil {
		rows, err := c.Query(ctx, "SELECT IS_USED_LOCK("+lock+")")
		if err == nil && len(rows) == 1 && rows[0][0] != nil {
			return // held, by this connection: no other takes it
		}
		_ = c.Close()
		m.live.conn = nil
	}
	c, err := m.dial(ctx)
	if err != nil {
		m.log.Warn("could not open the connection holding this process's liveness lock; other proxy processes go by its leases", zap.Error(err))
		return
	}
	rows, err := c.Query(ctx, "SELECT GET_LOCK("+lock+", 0)")
	if err != nil || len(rows) != 1 || sideconn.Str(rows[0][0]) != "1" {
		_ = c.Close()
		m.log.Warn("could not take this process's liveness lock; other proxy processes go by its leases", zap.Error(err))
		return
	}
	m.live.conn = c
}

// dropAlive closes the liveness connection (the process ends).
func (m *Registry) dropAlive() {
	m.live.mu.Lock()
	defer m.live.mu.Unlock()
	if m.live.conn != nil {
		_ = m.live.conn.Close()
		m.live.conn = nil
	}
}

// holderAlive reports whether a process recorded among the holders of
// sandbox id, other than this one, still holds its liveness lock.
func (m *Registry) holderAlive(ctx context.Context, c sideconn.Conn, id string) (bool, error) {
	rows, err := c.Query(ctx, "SELECT proxy_id FROM "+m.names.Q("holders")+" WHERE sandbox_id = "+quote.String(id))
	if err != nil {
		return false, fmt.Errorf("read registry: %w", err)
	}
	for _, r := range rows {
		p := sideconn.Str(r[0])
		if p == m.proxyID {
			continue
		}
		used, err := c.Query(ctx, "SELECT IS_USED_LOCK("+quote.String(m.aliveLock(p))+")")
		if err != nil {
			return false, fmt.Errorf("check whether proxy process %s is alive: %w", p, err)
		}
		if len(used) == 1 && used[0][0] != nil {
			return true, nil
		}
	}
	return false, nil
}
