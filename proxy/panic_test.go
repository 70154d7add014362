package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/metrics"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// metricValue reads a counter or gauge. (prometheus/testutil would pull a
// module that is not in go.sum.)
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var pb dto.Metric
	if err := m.Write(&pb); err != nil {
		t.Fatal(err)
	}
	switch {
	case pb.Counter != nil:
		return pb.Counter.GetValue()
	case pb.Gauge != nil:
		return pb.Gauge.GetValue()
	}
	t.Fatalf("metric %v is neither counter nor gauge", m.Desc())
	return 0
}

// panicConn is a connection whose Write panics.
type panicConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *panicConn) Write([]byte) (int, error) { panic("test: write to client panics") }

func (c *panicConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// greetingOnlyUpstream listens on loopback and greets every connection as
// MariaDB, then reads until the peer closes: enough for a client login to
// get as far as the upstream login.
func greetingOnlyUpstream(t *testing.T) string {
	t.Helper()
	ln := testkit.Listen(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = c.Write(testkit.Packet(0, mariaDBSpec().bytes()))
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// newOfflineServer builds a Server whose upstream never completes a login
// (greetingOnlyUpstream): the client-facing greeting comes from a
// remembered MariaDB greeting.
func newOfflineServer(t *testing.T) (*Server, *metrics.Proxy) {
	t.Helper()
	return newOfflineServerWith(t, nil)
}

// newOfflineServerWith is newOfflineServer with the configuration edited
// by edit (if not nil).
func newOfflineServerWith(t *testing.T, edit func(*Config)) (*Server, *metrics.Proxy) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Upstream = greetingOnlyUpstream(t)
	cfg.HandshakeTimeout = 5 * time.Second
	if edit != nil {
		edit(&cfg)
	}
	m := metrics.New(prometheus.NewRegistry())
	s, err := New(cfg, zap.NewNop(), m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.ln.Close() })
	s.remember(&wire.Greeting{Version: "5.5.5-10.11.6-MariaDB", Caps: mariaDBCaps, Collation: 45})
	return s, m
}

func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(testkit.WaitLimit): // a hang guard
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestHandlePanicClosesOnlyThatConnection(t *testing.T) {
	s, m := newOfflineServer(t)
	ctx := context.Background()

	// A connection whose handler panics (writing the greeting).
	srvEnd, cliEnd := net.Pipe()
	defer cliEnd.Close()
	pc := &panicConn{Conn: srvEnd}
	done := make(chan struct{})
	s.wg.Add(1)
	go func() { defer close(done); s.handle(ctx, pc) }()
	waitDone(t, done, "the panicking handler to return")

	if got := metricValue(t, m.ConnectionPanics); got != 1 {
		t.Errorf("connection panics = %v, want 1", got)
	}
	if !pc.closed.Load() {
		t.Error("panicking connection was not closed")
	}
	_ = cliEnd.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := cliEnd.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("peer of the panicking connection reads %v, want EOF", err)
	}
	if got := metricValue(t, m.ConnectionsActive); got != 0 {
		t.Errorf("active connections gauge = %v after the panic, want 0", got)
	}
	s.connsMu.Lock()
	n := len(s.conns)
	s.connsMu.Unlock()
	if n != 0 {
		t.Errorf("%d connections still tracked", n)
	}

	// The server carries on: another connection gets its greeting.
	srvEnd2, cliEnd2 := net.Pipe()
	done2 := make(chan struct{})
	s.wg.Add(1)
	go func() { defer close(done2); s.handle(ctx, srvEnd2) }()
	_ = cliEnd2.SetDeadline(time.Now().Add(5 * time.Second))
	payload, seq, err := wire.ReadPacket(bufio.NewReader(cliEnd2), nil, 1<<16)
	if err != nil {
		t.Fatalf("reading the second connection's greeting: %v", err)
	}
	g, err := wire.ParseGreeting(payload)
	if err != nil {
		t.Fatal(err)
	}
	if seq != 0 || g.Version != "5.5.5-10.11.6-MariaDB" || g.Collation != 45 || g.AuthPlugin != AuthNativePassword || len(g.Salt) != 20 {
		t.Errorf("greeting seq %d %+v", seq, *g)
	}
	if want := clientCaps(mariaDBCaps, false); g.Caps != want {
		t.Errorf("greeting caps %#x, want %#x", g.Caps, want)
	}
	if got := metricValue(t, m.ConnectionsActive); got != 1 {
		t.Errorf("active connections gauge = %v during the handshake, want 1", got)
	}
	// The client goes away: the handshake ends without a panic.
	_ = cliEnd2.Close()
	waitDone(t, done2, "the second handler to return")

	if got := metricValue(t, m.ConnectionPanics); got != 1 {
		t.Errorf("connection panics = %v after a normal connection, want 1", got)
	}
	if got := metricValue(t, m.ConnectionsTotal); got != 2 {
		t.Errorf("connections total = %v, want 2", got)
	}
	if got := metricValue(t, m.ConnectionsActive); got != 0 {
		t.Errorf("active connections gauge = %v at the end, want 0", got)
	}
	wg := make(chan struct{})
	go func() { s.wg.Wait(); close(wg) }()
	waitDone(t, wg, "the server's wait group")
}
