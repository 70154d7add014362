package integration

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gmysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/proxy"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestDeprecateEOFAsDirect (issue 13): a client that negotiates
// CLIENT_DEPRECATE_EOF gets it through the proxy, and every answer comes in
// the layout MariaDB sends it directly — result sets, multiple results, a
// prepared statement, a cursor and its fetches, a field list — packet for
// packet, in passthrough mode and in a sandbox.
func TestDeprecateEOFAsDirect(t *testing.T) {
	db, _ := env(t)
	direct := deprecateEOFTranscript(t, db.Addr, db.User, db.Password)
	// The script did what it means to: three rows, a cursor opened
	// (0xFE-headed OK with SERVER_STATUS_CURSOR_EXISTS after the
	// definitions), its rows fetched two, then one.
	lines := func(i int) []string { return strings.Fields(string(direct[i])) }
	if n := len(lines(0)); n != 7 {
		t.Fatalf("the first answer has %d packets directly", n)
	}
	if cur := lines(5); len(cur) != 4 || !strings.HasPrefix(cur[3], "fe000042") {
		t.Fatalf("the cursor's answer directly: %q", cur)
	}
	if len(lines(6)) != 3 || len(lines(7)) != 2 {
		t.Fatalf("fetches directly: %q, %q", lines(6), lines(7))
	}
	for _, mode := range []string{"passthrough", "transparent"} {
		t.Run(mode, func(t *testing.T) {
			p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = mode })
			got := deprecateEOFTranscript(t, p.addr, db.User, db.Password)
			if len(got) != len(direct) {
				t.Fatalf("%d answers, directly %d", len(got), len(direct))
			}
			for i := range got {
				if !bytes.Equal(got[i], direct[i]) {
					t.Errorf("answer %d through the proxy:\n%q\ndirectly:\n%q", i, got[i], direct[i])
				}
			}
		})
	}
}

// deprecateEOFTranscript logs in to addr with CLIENT_DEPRECATE_EOF and
// returns each answer of a fixed script, packet by packet.
func deprecateEOFTranscript(t *testing.T, addr, user, password string) [][]byte {
	t.Helper()
	c, err := client.Connect(addr, user, password, "app", func(c *client.Conn) error {
		// go-mysql's client asks for CLIENT_DEPRECATE_EOF by default.
		return c.SetCapability(gmysql.CLIENT_MULTI_STATEMENTS)
	})
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	defer c.Close()
	if !strings.Contains(c.CapabilityString(), "CLIENT_DEPRECATE_EOF") {
		t.Fatalf("%s did not negotiate CLIENT_DEPRECATE_EOF", addr)
	}
	r := &raw{t: t, c: c}
	var out [][]byte
	answer := func(shape wire.Shape, cursor bool) {
		resp := wire.NewResponse(shape, cursor).DeprecateEOF()
		var b bytes.Buffer
		for !resp.Done() {
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			p, err := c.ReadPacket()
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if _, err := resp.Next(p, len(p)); err != nil {
				t.Fatalf("answer % x: %v", p, err)
			}
			fmt.Fprintf(&b, "%x\n", p)
		}
		out = append(out, b.Bytes())
	}
	query := func(q string) {
		r.send(append([]byte{wire.ComQuery}, q...)...)
		answer(wire.ShapeResults, false)
	}
	query("SELECT id, name FROM users ORDER BY id")
	query("SELECT 1 FROM users WHERE id < 0")
	query("SELECT 1; SELECT 'two', 2; DO 3")
	r.send(append([]byte{wire.ComStmtPrepare}, "SELECT id, name FROM users WHERE id > ? ORDER BY id"...)...)
	answer(wire.ShapePrepare, false)
	id := uint32(0)
	if f := strings.Fields(string(out[len(out)-1])); len(f) > 0 {
		var p []byte
		fmt.Sscanf(f[0], "%x", &p)
		id = uint32(p[1]) | uint32(p[2])<<8 | uint32(p[3])<<16 | uint32(p[4])<<24
	}
	exec := func(cursor byte) {
		// One INT parameter (type 3) of value 0.
		r.send(stmtPacket(wire.ComStmtExecute, id, cursor, 1, 0, 0, 0, 0, 1, 3, 0, 0, 0, 0, 0)...)
		answer(wire.ShapeResults, cursor != 0)
	}
	exec(0)
	exec(1) // CURSOR_TYPE_READ_ONLY
	for range 2 {
		r.send(stmtPacket(wire.ComStmtFetch, id, 2, 0, 0, 0)...)
		answer(wire.ShapeRows, false)
	}
	r.send(append([]byte{wire.ComFieldList}, "users\x00"...)...)
	answer(wire.ShapeFields, false)
	// The statement ids differ between connections: mask the one in the
	// prepare answer's first packet.
	out[3] = bytes.Replace(out[3], []byte(fmt.Sprintf("00%02x", id&0xFF)), []byte("00ID"), 1)
	return out
}
