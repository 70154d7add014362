package proxy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// passthrough configures a harness's proxy in passthrough mode.
func passthrough(c *Config) { c.Mode = "passthrough" }

// TestRelayEveryShapeUntouched: in passthrough mode every answer reaches
// the client byte for byte, sequence numbers included, whatever its shape.
func TestRelayEveryShapeUntouched(t *testing.T) {
	h := newHarness(t, passthrough)
	var want [][]byte
	var wantSeq []uint8
	// Each upstream packet the test sends is recorded as the client's due.
	rec := func(c *fakeUpConn, p []byte) {
		want, wantSeq = append(want, append([]byte(nil), p...)), append(wantSeq, c.seq)
		c.write(p)
	}
	def := columnDefIn("app", "id")
	row := wire.AppendTextRow(nil, []*string{sp("1"), nil})
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		st := c.status
		switch {
		case cmd == wire.ComQuery && string(arg) == "rows":
			rec(c, wire.AppendLenEnc(nil, 2))
			rec(c, def)
			rec(c, def)
			rec(c, wire.AppendEOF(nil, st, 0))
			rec(c, row)
			rec(c, row)
			rec(c, wire.AppendEOF(nil, st, 0))
		case cmd == wire.ComQuery && string(arg) == "multi":
			rec(c, wire.AppendOK(nil, 3, st|wire.StatusMoreResults, 1, "", false))
			rec(c, wire.AppendLenEnc(nil, 1))
			rec(c, def)
			rec(c, wire.AppendEOF(nil, st|wire.StatusMoreResults, 0))
			rec(c, row)
			rec(c, wire.AppendEOF(nil, st|wire.StatusMoreResults, 0))
			rec(c, wire.AppendErr(nil, errorFor(1146)))
		case cmd == wire.ComQuery && string(arg) == "fail":
			rec(c, wire.AppendErr(nil, errorFor(1146)))
		case cmd == wire.ComStmtPrepare:
			p := []byte{wire.OKHeader, 9, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0}
			rec(c, p)
			rec(c, def)
			rec(c, def)
			rec(c, wire.AppendEOF(nil, st, 0))
			rec(c, def)
			rec(c, wire.AppendEOF(nil, st, 0))
		case cmd == wire.ComStmtExecute && arg[4]&wire.CursorFlagsMask != 0:
			rec(c, wire.AppendLenEnc(nil, 1))
			rec(c, def)
			rec(c, wire.AppendEOF(nil, st|wire.StatusCursorExists, 0))
		case cmd == wire.ComStmtFetch:
			rec(c, []byte{0x00, 0x00, 0x01, '7'})
			rec(c, wire.AppendEOF(nil, st|0x80, 0)) // last row sent
		case cmd == wire.ComFieldList:
			rec(c, def)
			rec(c, wire.AppendEOF(nil, st, 0))
		case cmd == wire.ComStatistics:
			rec(c, []byte("Uptime: 5  Threads: 1"))
		default:
			return false
		}
		return true
	}
	cl := h.client("")
	exec := binary.LittleEndian.AppendUint32([]byte{wire.ComStmtExecute}, 9)
	cases := []struct {
		name   string
		cmd    []byte
		shape  wire.Shape
		cursor bool
	}{
		{"result set", append([]byte{wire.ComQuery}, "rows"...), wire.ShapeResults, false},
		{"multiple results ending in an error", append([]byte{wire.ComQuery}, "multi"...), wire.ShapeResults, false},
		{"error", append([]byte{wire.ComQuery}, "fail"...), wire.ShapeResults, false},
		{"prepare", append([]byte{wire.ComStmtPrepare}, "SELECT ?, ?"...), wire.ShapePrepare, false},
		{"cursor", append(exec, 1, 1, 0, 0, 0), wire.ShapeResults, true},
		{"fetch", binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32([]byte{wire.ComStmtFetch}, 9), 10), wire.ShapeRows, false},
		{"field list", append([]byte{wire.ComFieldList}, "t\x00"...), wire.ShapeFields, false},
		{"statistics", []byte{wire.ComStatistics}, wire.ShapeSingle, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, wantSeq = nil, nil
			cl.send(c.cmd)
			got, seqs := cl.answer(c.shape, c.cursor)
			if len(got) != len(want) {
				t.Fatalf("%d packets, want %d", len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) || seqs[i] != wantSeq[i] {
					t.Errorf("packet %d: seq %d % x, want seq %d % x", i, seqs[i], got[i], wantSeq[i], want[i])
				}
			}
		})
	}
}

// TestRelayLocalInfile: a LOAD DATA LOCAL request goes to the client, the
// client's file goes up packet by packet (sequence numbers continuing),
// and the server's answer comes back.
func TestRelayLocalInfile(t *testing.T) {
	h := newHarness(t, passthrough)
	var file [][]byte
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComQuery || !strings.HasPrefix(string(arg), "LOAD DATA LOCAL") {
			return false
		}
		c.write(append([]byte{wire.LocalInfileHeader}, "/tmp/x.csv"...))
		_ = c.w.Flush()
		for {
			p, seq, err := wire.ReadPacket(c.r, nil, 1<<20)
			if err != nil {
				return true
			}
			file = append(file, p)
			c.seq = seq + 1
			if len(p) == 0 {
				break
			}
		}
		c.ok(2, 0)
		return true
	}
	cl := h.client("")
	cl.send(append([]byte{wire.ComQuery}, "LOAD DATA LOCAL INFILE '/tmp/x.csv' INTO TABLE t"...))
	req, seq := cl.packet()
	if req[0] != wire.LocalInfileHeader || seq != 1 {
		t.Fatalf("request % x seq %d", req, seq)
	}
	for i, part := range []string{"1,a\n", "2,b\n", ""} {
		if _, err := cl.conn.Write(testkit.Packet(uint8(2+i), []byte(part))); err != nil {
			t.Fatal(err)
		}
	}
	ok, seq := cl.packet()
	if o, _ := wire.ParseOK(ok); ok[0] != wire.OKHeader || o.Affected != 2 || seq != 5 {
		t.Fatalf("answer % x seq %d", ok, seq)
	}
	if len(file) != 3 || string(file[0]) != "1,a\n" || string(file[1]) != "2,b\n" || len(file[2]) != 0 {
		t.Errorf("the server got %q", file)
	}
}

// TestRelayContinuedPackets: a row of more than 16 MiB (continued packets)
// streams through untouched.
func TestRelayContinuedPackets(t *testing.T) {
	h := newHarness(t, passthrough)
	big := bytes.Repeat([]byte("x"), wire.MaxPayload+1000)
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComQuery || string(arg) != "big" {
			return false
		}
		c.write(wire.AppendLenEnc(nil, 1))
		c.write(columnDefIn("", "v"))
		c.eof(0)
		c.write(append(wire.AppendLenEnc(nil, uint64(len(big))), big...))
		c.eof(0)
		return true
	}
	cl := h.client("")
	got, seqs := cl.query("big")
	if len(got) != 5 || !bytes.Equal(got[3][len(got[3])-len(big):], big) {
		t.Fatalf("%d packets", len(got))
	}
	// The row took two physical packets: the EOF after it is numbered 6.
	if !slices.Equal(seqs, []uint8{1, 2, 3, 5, 6}) {
		t.Errorf("sequence numbers %v", seqs)
	}
}

// TestRelayUpstreamGoneClosesClient: an upstream that closes in the middle
// of an answer closes the client's connection, so the client reports the
// lost connection itself as it would for a direct one.
func TestRelayUpstreamGoneClosesClient(t *testing.T) {
	h := newHarness(t, passthrough)
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComQuery || string(arg) != "die" {
			return false
		}
		c.write(wire.AppendLenEnc(nil, 1))
		_ = c.w.Flush()
		_ = c.conn.Close()
		return true
	}
	cl := h.client("")
	cl.send(append([]byte{wire.ComQuery}, "die"...))
	if p, _ := cl.packet(); !bytes.Equal(p, []byte{1}) {
		t.Fatalf("first packet % x", p)
	}
	wantUpstreamLost(t, h, cl, "client connection still open after the upstream went away")
}

// TestRelayMalformedAnswerClosesClient: an answer that breaks the protocol
// (a column count of 0) ends the connection rather than reaching the client
// as something else.
func TestRelayMalformedAnswerClosesClient(t *testing.T) {
	h := newHarness(t, passthrough)
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComQuery {
			return false
		}
		c.write([]byte{0xFD, 0, 0, 0})
		return true
	}
	cl := h.client("")
	cl.send(append([]byte{wire.ComQuery}, "SELECT 1"...))
	if !cl.closed() {
		t.Fatal("client connection open after a malformed answer")
	}
}

// TestCommandsProxyAnswers: commands the proxy refuses get 1047 and the
// connection stays usable; an empty command packet gets 1043 and the
// connection ends; COM_QUIT ends it quietly.
func TestCommandsProxyAnswers(t *testing.T) {
	h := newHarness(t, passthrough)
	cl := h.client("")
	for _, cmd := range []byte{wire.ComShutdown, 0x12 /* COM_BINLOG_DUMP */, 0x1D /* COM_DAEMON */} {
		cl.send([]byte{cmd, 1, 2, 3})
		p, seq := cl.packet()
		if e := wire.ParseErr(p); e.Code != wire.ErUnknownCom || seq != 1 {
			t.Errorf("command 0x%02X: seq %d %v", cmd, seq, e)
		}
	}
	if got, _ := cl.query("SELECT 1"); len(got) != 1 || got[0][0] != wire.OKHeader {
		t.Fatalf("after refusals: % x", got)
	}
	if _, err := cl.conn.Write([]byte{0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if p, _ := cl.packet(); wire.ParseErr(p).Code != wire.ErHandshake {
		t.Errorf("empty packet answered % x", p)
	}
	if !cl.closed() {
		t.Error("connection open after an empty command packet")
	}
	quit := h.client("")
	quit.send([]byte{wire.ComQuit})
	if !quit.closed() {
		t.Error("connection open after COM_QUIT")
	}
	cmds := strings.Join(h.up.commands(), "\n")
	for _, refused := range []string{"0x08", "0x12", "0x1D"} {
		if strings.Contains(cmds, refused) {
			t.Errorf("refused command %s reached the upstream:\n%s", refused, cmds)
		}
	}
}

// TestPassthroughKill: KILL of the caller's own connection, by greeting
// id, becomes KILL of its upstream thread; another id gets 1094 and never
// reaches the upstream.
func TestPassthroughKill(t *testing.T) {
	h := newHarness(t, passthrough)
	victim, killer := h.client(""), h.client("")
	_ = victim
	var target uint32
	h.srv.connsMu.Lock()
	for c := range h.srv.conns {
		c.mu.Lock()
		if c.be != nil && (target == 0 || c.greetingID < target) {
			target = c.greetingID // the first login's
		}
		c.mu.Unlock()
	}
	h.srv.connsMu.Unlock()
	got, _ := killer.query(fmt.Sprintf("KILL QUERY %d", target))
	if len(got) != 1 || got[0][0] != wire.OKHeader {
		t.Fatalf("KILL QUERY answered % x", got)
	}
	if kills := h.up.queries("KILL"); len(kills) != 1 || !strings.HasPrefix(kills[0], "KILL QUERY 1") {
		t.Errorf("upstream got %q", kills)
	}
	got, _ = killer.query("KILL 424242")
	if e := wire.ParseErr(got[0]); e.Code != wire.ErNoSuchThread || e.Message != "Unknown thread id: 424242" {
		t.Errorf("KILL of a stranger: %v", e)
	}
	killer.send(binary.LittleEndian.AppendUint32([]byte{wire.ComProcessKill}, 424242))
	if p, _ := killer.packet(); wire.ParseErr(p).Code != wire.ErNoSuchThread {
		t.Errorf("COM_PROCESS_KILL of a stranger: % x", p)
	}
	if kills := h.up.queries("KILL"); len(kills) != 1 {
		t.Errorf("refused kills reached the upstream: %q", kills)
	}
}

// TestRelayProgressReports: a MariaDB client that asks for progress
// reports gets them through, before an answer and inside one (REPAIR
// TABLE sends them between its result's definitions and rows), and the
// answer after them whole.
func TestRelayProgressReports(t *testing.T) {
	h := newHarness(t, passthrough)
	h.extCaps = wire.ExtCapProgress
	progress := []byte{wire.ErrHeader, 0xFF, 0xFF, 1, 2, 2, 0, 0, 0, 4, 'w', 'o', 'r', 'k'}
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComQuery || string(arg) != "REPAIR TABLE t" {
			return false
		}
		c.write(progress)
		c.write(wire.AppendLenEnc(nil, 1))
		c.write(columnDefIn("app", "Msg_text"))
		c.eof(0)
		c.write(progress)
		c.write(wire.AppendTextRow(nil, []*string{sp("OK")}))
		c.eof(0)
		return true
	}
	cl := h.client("")
	cl.send(append([]byte{wire.ComQuery}, "REPAIR TABLE t"...))
	var kinds []string
	for {
		p, _ := cl.packet()
		kinds = append(kinds, fmt.Sprintf("%x", p[0]))
		if wire.IsEOF(int(p[0]), len(p)) && len(kinds) > 4 {
			break
		}
	}
	if got := strings.Join(kinds, " "); got != "ff 1 3 fe ff 2 fe" {
		t.Errorf("packets' first bytes %q", got)
	}
	if g, _ := cl.query("SELECT 1"); g[0][0] != wire.OKHeader {
		t.Errorf("after the reports: % x", g)
	}
}
