package proxy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The statement pipeline in memory: a transparent-mode proxy whose
// sandbox manager's side connections reach a sessiontest.Upstream (which
// holds production's tables app.t and app.u and does the forks), while
// each client's own upstream connection is the scripted fake upstream.

// sandboxHarness is a harness whose proxy sandboxes (mode transparent
// unless edit says otherwise) on side connections to side.
type sandboxHarness struct {
	*harness
	side *sessiontest.Upstream
}

func newSandboxHarness(t *testing.T, edit func(*Config)) *sandboxHarness {
	t.Helper()
	side := sessiontest.NewUpstream()
	side.AddTable(sessiontest.Table{DB: "app", Name: "t", Rows: 3, Bytes: 16384, Columns: []sessiontest.Column{{Name: "id"}, {Name: "a"}}})
	side.AddTable(sessiontest.Table{DB: "app", Name: "u", Rows: 2, Bytes: 16384, Columns: []sessiontest.Column{{Name: "id"}}})
	h := startHarness(t, func(c *Config) {
		c.Mode = "transparent"
		c.Sandbox.NoDiffCapture = true // it needs a real server (integration/diff_test.go)
		if edit != nil {
			edit(c)
		}
	}, func(s *Server) { s.sideDialer = side.Dialer() })
	t.Cleanup(func() {
		if w := side.ProductionWrites("_sqlfork"); len(w) > 0 {
			t.Errorf("production was written:\n%s", strings.Join(w, "\n"))
		}
	})
	return &sandboxHarness{harness: h, side: side}
}

// appClient logs in with database app.
func (h *sandboxHarness) appClient(user string) *fakeClient {
	h.t.Helper()
	cl := h.client(user)
	cl.send(append([]byte{wire.ComInitDB}, "app"...))
	if p, _ := cl.packet(); p[0] != wire.OKHeader {
		h.t.Fatalf("USE app: % x", p)
	}
	return cl
}

var physApp = regexp.MustCompile("`(_sqlfork_[0-9a-z]+_app)`")

// forkOf returns the physical database a rewritten statement named for
// app, failing the test if none.
func forkOf(t testing.TB, sql string) string {
	t.Helper()
	m := physApp.FindStringSubmatch(sql)
	if m == nil {
		t.Fatalf("no sandbox database in %q", sql)
	}
	return m[1]
}

// TestSandboxWriteForksAndRewrites: the first write to a table forks it
// (on a side connection) and goes upstream rewritten to the fork; the
// answers name the logical database again — in ERR messages and in column
// definitions.
func TestSandboxWriteForksAndRewrites(t *testing.T) {
	h := newSandboxHarness(t, nil)
	var phys string
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		q := string(arg)
		switch {
		case cmd == wire.ComQuery && strings.HasPrefix(q, "SELECT a FROM"):
			c.write(wire.AppendLenEnc(nil, 1))
			c.write(columnDefIn(forkOf(t, q), "a"))
			c.eof(0)
			c.write(wire.AppendTextRow(nil, []*string{sp("1")}))
			c.eof(0)
		case cmd == wire.ComQuery && strings.HasPrefix(q, "SELECT b FROM"):
			c.err(1054, "42S22", "Unknown column 'b' in '"+forkOf(t, q)+".t'")
		default:
			return false
		}
		return true
	}
	cl := h.appClient("")
	got, _ := cl.query("UPDATE t SET a = 1 WHERE id = 2")
	if len(got) != 1 || got[0][0] != wire.OKHeader {
		t.Fatalf("UPDATE answered % x", got)
	}
	ups := h.up.queries("UPDATE")
	if len(ups) != 1 {
		t.Fatalf("upstream got %q", ups)
	}
	phys = forkOf(t, ups[0])
	if want := "UPDATE `" + phys + "`.`t` SET a = 1 WHERE id = 2"; ups[0] != want {
		t.Errorf("upstream got %q, want %q", ups[0], want)
	}
	if n := h.side.Count("INSERT INTO `" + phys + "`"); n != 1 {
		t.Errorf("fork copies: %d", n)
	}
	rows, _ := cl.query("SELECT a FROM t")
	n, _, _ := wire.ParseColumnDef(rows[1])
	if n.Schema != "app" || n.Name != "a" {
		t.Errorf("column definition %+v, want schema app", n)
	}
	e, _ := cl.query("SELECT b FROM t")
	if msg := wire.ParseErr(e[0]).Message; msg != "Unknown column 'b' in 'app.t'" {
		t.Errorf("error message %q", msg)
	}
	// A second write reuses the fork.
	cl.query("UPDATE t SET a = 2")
	if n := h.side.Count("INSERT INTO `" + phys + "`"); n != 1 {
		t.Errorf("fork copies after a second write: %d", n)
	}
}

// TestSandboxRefusalAndReply: a statement the sandbox cannot hold is
// refused with its code, never reaching the upstream; a SANDBOX statement
// is answered by the proxy itself.
func TestSandboxRefusalAndReply(t *testing.T) {
	h := newSandboxHarness(t, nil)
	cl := h.appClient("")
	got, seqs := cl.query("CREATE USER x")
	if e := wire.ParseErr(got[0]); e.Code != wire.ErOptionPreventsStatement || seqs[0] != 1 {
		t.Errorf("CREATE USER: seq %d %v", seqs[0], e)
	}
	if q := h.up.queries("CREATE USER"); len(q) != 0 {
		t.Errorf("refused statement reached the upstream: %q", q)
	}
	if v := metricValue(t, h.m.SandboxRefusals.WithLabelValues("1290")); v != 1 {
		t.Errorf("refusals counted: %v", v)
	}
	got, seqs = cl.query("SANDBOX STATUS")
	if len(got) < 3 || !slices.Equal(seqs[:3], []uint8{1, 2, 3}) {
		t.Fatalf("SANDBOX STATUS: %d packets, seqs %v", len(got), seqs)
	}
	if cols, _, _ := wire.LenEnc(got[0]); cols != 14 {
		t.Errorf("SANDBOX STATUS has %d columns", cols)
	}
	if q := h.up.queries("SANDBOX"); len(q) != 0 {
		t.Errorf("SANDBOX statement reached the upstream: %q", q)
	}
}

// TestSandboxMultiStatementParts: an input holding SANDBOX statements is
// run part by part, the answers joined as one response: sequence numbers
// continue across the parts, every part's last packet but the last says
// more results follow, and only the SQL parts reach the upstream.
func TestSandboxMultiStatementParts(t *testing.T) {
	h := newSandboxHarness(t, nil)
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComQuery || !strings.HasPrefix(string(arg), "SELECT 7") {
			return false
		}
		c.resultSet([]string{"7"}, [][]*string{{sp("7")}})
		return true
	}
	cl := h.appClient("")
	cl.send(append([]byte{wire.ComQuery}, "SANDBOX STATUS; UPDATE t SET a = 3; SANDBOX STATUS; SELECT 7"...))
	var all [][]byte
	var seqs []uint8
	for range 4 {
		got, s := cl.answer(wire.ShapeResults, false)
		all, seqs = append(all, got...), append(seqs, s...)
		last := got[len(got)-1]
		st, ok := wire.OKStatus(last)
		if last[0] == wire.EOFHeader {
			st, ok = wire.EOFStatus(last)
		}
		if !ok || st&wire.StatusMoreResults == 0 {
			break
		}
	}
	for i, s := range seqs {
		if s != uint8(i+1) {
			t.Fatalf("sequence numbers %v", seqs)
		}
	}
	if last := all[len(all)-1]; !wire.IsEOF(int(last[0]), len(last)) {
		t.Fatalf("the input's last answer % x", last)
	} else if st, _ := wire.EOFStatus(last); st&wire.StatusMoreResults != 0 {
		t.Error("the last part says more results follow")
	}
	if len(all) < 30 {
		t.Errorf("%d packets: not all four results came", len(all))
	}
	if q := h.up.queries("SELECT 7"); len(q) != 1 || q[0] != "SELECT 7" {
		t.Errorf("upstream got %q", q)
	}
	if q := h.up.queries("UPDATE"); len(q) != 1 || !strings.Contains(q[0], "_sqlfork_") {
		t.Errorf("upstream got %q", q)
	}
}

// TestSandboxMaxRowsCut: past the max-rows guardrail the result is cut:
// the client gets the rows so far, then 1226 numbered after the last row;
// the rest of the answer is read and dropped, and the connection goes on.
func TestSandboxMaxRowsCut(t *testing.T) {
	h := newSandboxHarness(t, func(c *Config) { c.Sandbox.Guardrails.MaxRows = 2 })
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComQuery || string(arg) != "SELECT 5 rows" {
			return false
		}
		var rows [][]*string
		for i := range 5 {
			rows = append(rows, []*string{sp(fmt.Sprint(i))})
		}
		c.resultSet([]string{"n"}, rows)
		return true
	}
	cl := h.appClient("")
	cl.send(append([]byte{wire.ComQuery}, "SELECT 5 rows"...))
	var got [][]byte
	var seqs []uint8
	for {
		p, s := cl.packet()
		got, seqs = append(got, p), append(seqs, s)
		if p[0] == wire.ErrHeader {
			break
		}
	}
	// count, definition, EOF, 2 rows, ERR
	if len(got) != 6 || !slices.Equal(seqs, []uint8{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("%d packets, seqs %v", len(got), seqs)
	}
	if e := wire.ParseErr(got[5]); e.Code != wire.ErUserLimitReached {
		t.Errorf("cut with %v", e)
	}
	if g, _ := cl.query("SELECT 1"); len(g) != 1 || g[0][0] != wire.OKHeader {
		t.Errorf("after the cut: % x", g)
	}
}

// TestSandboxTransactionRestart: a transaction that has only read and then
// needs a table forked after it began is committed and started again
// before the statement.
func TestSandboxTransactionRestart(t *testing.T) {
	h := newSandboxHarness(t, nil)
	cl := h.appClient("")
	for _, q := range []string{"BEGIN", "SELECT * FROM t", "UPDATE t SET a = 1"} {
		if got, _ := cl.query(q); got[0][0] == wire.ErrHeader {
			t.Fatalf("%s: %v", q, wire.ParseErr(got[0]))
		}
	}
	cmds := h.up.commands()
	i := slices.IndexFunc(cmds, func(c string) bool { return strings.HasPrefix(c, "Q UPDATE") })
	// Started again as it began: the session's isolation level and access
	// mode (read at the start), then START TRANSACTION.
	if i < 3 || cmds[i-3] != "Q COMMIT" || cmds[i-2] != "Q SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE" ||
		cmds[i-1] != "Q START TRANSACTION" {
		t.Errorf("before the UPDATE the upstream got %q", cmds[:i+1])
	}
	if v := metricValue(t, h.m.TransactionReplays.WithLabelValues("restarted")); v != 1 {
		t.Errorf("restarts counted: %v", v)
	}
}

// TestSandboxTransactionReplay: a transaction that has written and then
// needs a table forked after its read view was taken is rolled back,
// started again and its writes replayed, each checked to have the same
// effect; when one has not, the client gets 1412 and the transaction is
// rolled back.
func TestSandboxTransactionReplay(t *testing.T) {
	for _, differ := range []bool{false, true} {
		t.Run(fmt.Sprintf("differ=%v", differ), func(t *testing.T) {
			h := newSandboxHarness(t, nil)
			updates := 0
			h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
				if cmd != wire.ComQuery || !strings.Contains(string(arg), ".`t` SET") {
					return false
				}
				updates++
				affected := uint64(1)
				if differ && updates > 1 {
					affected = 2
				}
				c.ok(affected, 0)
				return true
			}
			cl := h.appClient("")
			for _, q := range []string{"BEGIN", "UPDATE t SET a = 1", "SELECT * FROM t"} {
				cl.query(q)
			}
			got, _ := cl.query("UPDATE u SET id = id")
			cmds := h.up.commands()
			// The SELECT took the read view (after t's fork); u's fork is
			// newer, so the transaction is replayed.
			i := slices.IndexFunc(cmds, func(c string) bool { return c == "Q ROLLBACK" })
			if i < 0 || len(cmds) < i+4 || cmds[i+1] != "Q SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE" ||
				cmds[i+2] != "Q BEGIN" || !strings.Contains(cmds[i+3], ".`t` SET a = 1") {
				t.Fatalf("replay: upstream got %q", cmds)
			}
			if !differ {
				if got[0][0] != wire.OKHeader {
					t.Errorf("after the replay: %v", wire.ParseErr(got[0]))
				}
				return
			}
			if e := wire.ParseErr(got[0]); e.Code != wire.ErTableDefChanged {
				t.Errorf("a replay with another effect: %v", e)
			}
			if cmds[len(cmds)-1] != "Q ROLLBACK" || len(h.up.queries("UPDATE `_sqlfork")) != 2 {
				t.Errorf("after a failed replay the upstream got %q", cmds)
			}
		})
	}
}

// TestSandboxPreparedStatement: a statement prepared before the table it
// reads is forked is prepared again upstream, rewritten, at its next
// execution, and the client's statement id is translated from then on.
func TestSandboxPreparedStatement(t *testing.T) {
	h := newSandboxHarness(t, nil)
	cl := h.appClient("")
	cl.send(append([]byte{wire.ComStmtPrepare}, "SELECT a FROM t WHERE id = 1"...))
	got, _ := cl.answer(wire.ShapePrepare, false)
	id := binary.LittleEndian.Uint32(got[0][1:])
	exec := binary.LittleEndian.AppendUint32([]byte{wire.ComStmtExecute}, id)
	exec = append(exec, 0, 1, 0, 0, 0)
	cl.send(exec)
	cl.answer(wire.ShapeResults, false)
	cl.query("UPDATE t SET a = 5") // forks t
	cl.send(exec)
	cl.answer(wire.ShapeResults, false)
	cl.send(binary.LittleEndian.AppendUint32([]byte{wire.ComStmtClose}, id))
	cl.query("SELECT 1") // COM_STMT_CLOSE has no answer: wait for the next one
	var prepares, execs, closes []string
	for _, c := range h.up.commands() {
		switch {
		case strings.HasPrefix(c, "P "):
			prepares = append(prepares, c)
		case strings.HasPrefix(c, "E "):
			execs = append(execs, c)
		case strings.HasPrefix(c, "0x19 "):
			closes = append(closes, c)
		}
	}
	if len(prepares) != 2 || !strings.Contains(prepares[1], "`_sqlfork_") {
		t.Fatalf("prepares upstream: %q", prepares)
	}
	if !slices.Equal(execs, []string{fmt.Sprintf("E %d", id), fmt.Sprintf("E %d", id+1)}) {
		t.Errorf("executions upstream: %q (client's id %d)", execs, id)
	}
	if len(closes) != 2 {
		t.Errorf("closes upstream: %q (the old statement and the client's)", closes)
	}
}

// TestSandboxProcessListAndKill: SHOW PROCESSLIST shows the caller's own
// connections only, as the user; KILL reaches only them.
func TestSandboxProcessListAndKill(t *testing.T) {
	h := newSandboxHarness(t, func(c *Config) {
		c.Users = []User{{Name: "alice", Password: "a"}, {Name: "bob", Password: "b"}}
	})
	alice, bob := h.appClient("alice"), h.appClient("bob")
	_ = bob
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComQuery || string(arg) != "SHOW PROCESSLIST" {
			return false
		}
		cols := []string{"Id", "User", "Host", "db", "Command", "Time", "State", "Info"}
		var rows [][]*string
		h.up.mu.Lock()
		for _, uc := range h.up.conns {
			rows = append(rows, []*string{sp(fmt.Sprint(uc.id)), sp("app"), sp("localhost"), nil, sp("Sleep"), sp("0"), sp(""), nil})
		}
		h.up.mu.Unlock()
		c.resultSet(cols, rows)
		return true
	}
	got, _ := alice.query("SHOW PROCESSLIST")
	var ids []string
	for _, p := range got[10 : len(got)-1] { // count, 8 definitions, EOF; rows; EOF
		row, err := wire.ParseTextRow(p, 8)
		if err != nil || *row[1] != "alice" {
			t.Fatalf("row %q %v", p, err)
		}
		ids = append(ids, *row[0])
	}
	own := h.srv.Threads("alice")
	if len(ids) != 1 || len(own) != 1 || !own[atou32(ids[0])] {
		t.Errorf("alice sees %v; her threads %v", ids, own)
	}
	var bobs uint32
	for id := range h.srv.Threads("bob") {
		bobs = id
	}
	if e, _ := alice.query(fmt.Sprintf("KILL %d", bobs)); wire.ParseErr(e[0]).Code != wire.ErNoSuchThread {
		t.Errorf("alice killing bob's connection: % x", e[0])
	}
	if q := h.up.queries("KILL"); len(q) != 0 {
		t.Errorf("upstream got %q", q)
	}
}

func atou32(s string) uint32 {
	var n uint32
	_, _ = fmt.Sscan(s, &n)
	return n
}

// TestSandboxInitDBAndFieldList: the proxy's own databases are refused as
// the current database and to COM_FIELD_LIST; others pass and are
// remembered.
func TestSandboxInitDBAndFieldList(t *testing.T) {
	h := newSandboxHarness(t, nil)
	cl := h.client("")
	cl.send(append([]byte{wire.ComInitDB}, "_sqlfork_meta"...))
	if p, _ := cl.packet(); wire.ParseErr(p).Code != wire.ErDBAccessDenied {
		t.Errorf("USE _sqlfork_meta: % x", p)
	}
	cl.send(append([]byte{wire.ComInitDB}, "app"...))
	if p, _ := cl.packet(); p[0] != wire.OKHeader {
		t.Fatalf("USE app: % x", p)
	}
	// The database just chosen is the one an unqualified write forks from.
	cl.query("UPDATE t SET a = 1")
	if q := h.up.queries("UPDATE"); len(q) != 1 || !strings.Contains(q[0], "_app`.`t`") {
		t.Errorf("upstream got %q", q)
	}
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComFieldList {
			return false
		}
		c.write(columnDefIn("app", "id"))
		c.eof(0)
		return true
	}
	cl.send(append([]byte{wire.ComFieldList}, "t\x00"...))
	if got, _ := cl.answer(wire.ShapeFields, false); len(got) != 2 || !bytes.Equal(got[0], columnDefIn("app", "id")) {
		t.Errorf("field list: % x", got)
	}
}
