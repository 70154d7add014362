package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestLivenessUpstreamClosedWhileIdle: when the upstream closes a
// connection whose client is idle, the proxy closes the client's, as the
// server's close would have reached a direct client.
func TestLivenessUpstreamClosedWhileIdle(t *testing.T) {
	for _, mode := range []string{"passthrough", "transparent"} {
		t.Run(mode, func(t *testing.T) {
			h := newSandboxHarness(t, func(c *Config) { c.Mode = mode })
			cl := h.client("")
			if got, _ := cl.query("SELECT 1"); got[0][0] != wire.OKHeader {
				t.Fatalf("SELECT 1: % x", got)
			}
			h.up.mu.Lock()
			up := h.up.conns[len(h.up.conns)-1]
			h.up.mu.Unlock()
			_ = up.conn.Close() // wait_timeout, a restart, a failover
			wantUpstreamLost(t, h.harness, cl, "client connection open after its upstream closed")
		})
	}
}

// wantUpstreamLost checks that cl's connection was closed (failing with
// notClosed if not) and one upstream connection counted lost.
func wantUpstreamLost(t *testing.T, h *harness, cl *fakeClient, notClosed string) {
	t.Helper()
	if !cl.closed() {
		t.Fatal(notClosed)
	}
	if v := metricValue(t, h.m.UpstreamLost); v != 1 {
		t.Errorf("upstream connections lost: %v", v)
	}
}

// TestLivenessUpstreamSpeaksWhileIdle: an upstream that sends something
// unasked to an idle session (its last words before closing) ends the
// client's connection too; a busy session is left alone.
func TestLivenessUpstreamSpeaksWhileIdle(t *testing.T) {
	h := newHarness(t, passthrough)
	cl := h.client("")
	cl.query("SELECT 1")
	h.up.mu.Lock()
	up := h.up.conns[len(h.up.conns)-1]
	h.up.mu.Unlock()
	last := wire.AppendErr(nil, errorFor(4031))
	if _, err := up.conn.Write(testkit.Packet(0, last)); err != nil {
		t.Fatal(err)
	}
	if !cl.closed() {
		t.Fatal("client connection open after its upstream's last words")
	}
}

// TestLivenessClientGoneKillsStatement: a client that goes away while its
// statement runs gets the statement killed upstream, on a connection of
// its own, within a second or so; the kill is counted.
func TestLivenessClientGoneKillsStatement(t *testing.T) {
	h := newHarness(t, passthrough)
	killed := make(chan string, 1)
	release := make(chan struct{})
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		q := string(arg)
		switch {
		case cmd == wire.ComQuery && q == "SELECT SLEEP(30)":
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
			c.err(1317, "70100", "Query execution was interrupted")
		case cmd == wire.ComQuery && strings.HasPrefix(q, "KILL QUERY "):
			killed <- q
			close(release)
			c.ok(0, 0)
		default:
			return false
		}
		return true
	}
	cl := h.client("")
	cl.send(append([]byte{wire.ComQuery}, "SELECT SLEEP(30)"...))
	var target uint32
	testkit.Eventually(t, "the statement to start upstream", func() bool {
		for _, c := range h.up.commands() {
			if c == "Q SELECT SLEEP(30)" {
				h.up.mu.Lock()
				target = h.up.conns[len(h.up.conns)-1].id
				h.up.mu.Unlock()
				return true
			}
		}
		return false
	})
	gone := time.Now()
	_ = cl.conn.Close()
	select {
	case q := <-killed:
		if q != fmt.Sprintf("KILL QUERY %d", target) {
			t.Errorf("upstream got %q, want KILL QUERY %d", q, target)
		}
		t.Logf("killed %v after the client went", time.Since(gone).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("the statement of a client that went away was not killed")
	}
	testkit.Eventually(t, "the kill to be counted", func() bool { return metricValue(t, h.m.OrphanKills) == 1 })
}

// TestLivenessLeavesHealthySessionsAlone: sessions that are idle or busy
// with a live client on both sides are not touched.
func TestLivenessLeavesHealthySessionsAlone(t *testing.T) {
	h := newHarness(t, passthrough)
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComQuery || string(arg) != "SELECT SLEEP(2)" {
			return false
		}
		h.watcherLooks(2) // busy while the watcher looks
		c.ok(0, 0)
		return true
	}
	idle, busy := h.client(""), h.client("")
	got, _ := busy.query("SELECT SLEEP(2)")
	if !h.watcherLooks(2) {
		t.Fatal("the liveness watcher stopped looking")
	}
	if got[0][0] != wire.OKHeader {
		t.Fatalf("busy session: % x", got)
	}
	for _, cl := range []*fakeClient{idle, busy} {
		if g, _ := cl.query("SELECT 1"); g[0][0] != wire.OKHeader {
			t.Errorf("after the watcher looked: % x", g)
		}
	}
	if v := metricValue(t, h.m.UpstreamLost) + metricValue(t, h.m.OrphanKills); v != 0 {
		t.Errorf("healthy sessions counted as lost or orphaned: %v", v)
	}
	if q := h.up.queries("KILL"); len(q) != 0 {
		t.Errorf("upstream got %q", q)
	}
}

// TestLivenessClientGoneLetsWritesFinish: only a plain read is killed when
// its client goes; a write (here INSERT … SLEEP, as go-sql-driver's
// TestContextCancelExec sends and then cancels by closing its connection),
// a locking read, a statement the proxy cannot read, a prepared execution
// run to their end, as directly, where the server notices a client gone
// only when it next writes to it.
func TestLivenessClientGoneLetsWritesFinish(t *testing.T) {
	h := newHarness(t, passthrough)
	ran := make(chan string, 8)
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		q := string(arg)
		switch {
		case cmd == wire.ComQuery && strings.HasPrefix(q, "KILL QUERY "):
			c.ok(0, 0)
		case cmd == wire.ComQuery && strings.Contains(q, "SLEEP(1)"):
			h.watcherLooks(3) // runs on while the watcher looks, its client gone
			ran <- q
			c.ok(1, 0)
		default:
			return false
		}
		return true
	}
	for _, q := range []string{
		"INSERT INTO t VALUES (SLEEP(1))",
		"SELECT SLEEP(1) FROM t FOR UPDATE",
		"SELECT f(SLEEP(1))", // a stored function may write
		"SELECT SLEEP(1); DELETE FROM t",
		"SELECT SLEEP(1) /* unparseable */ FROM WHERE",
	} {
		cl := h.client("")
		cl.send(append([]byte{wire.ComQuery}, q...))
		testkit.Eventually(t, "the statement to start upstream", func() bool {
			for _, c := range h.up.commands() {
				if c == "Q "+q {
					return true
				}
			}
			return false
		})
		_ = cl.conn.Close()
		select {
		case got := <-ran:
			if got != q {
				t.Fatalf("ran %q, want %q", got, q)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q did not finish", q)
		}
	}
	if !h.watcherLooks(2) {
		t.Fatal("the liveness watcher stopped looking")
	}
	if k := h.up.queries("KILL"); len(k) != 0 {
		t.Errorf("upstream got %q for statements that are not plain reads", k)
	}
	if v := metricValue(t, h.m.OrphanKills); v != 0 {
		t.Errorf("orphaned statements killed: %v", v)
	}
}

// watcherLooks returns once the liveness watcher has looked at every
// connection n more times (false: it did not within testkit.WaitLimit). It
// does not fail the test: the fake upstream's goroutines wait with it too.
func (h *harness) watcherLooks(n int64) bool {
	want := h.srv.livenessRounds.Load() + n
	for deadline := time.Now().Add(testkit.WaitLimit); h.srv.livenessRounds.Load() < want; {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
