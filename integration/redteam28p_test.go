package integration

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Red team of lazy forks for prepared statements (da3e979): each
// execution of a server-side prepared statement on a table whose lazy fork
// still fills has the rows its parameters pin copied up, the parameters
// read from the COM_STMT_EXECUTE packet. The tests compare every answer
// with the same statement on a copy made at the fork (database <db>_ref,
// reached directly), by go-sql-driver's server-side prepares and by
// COM_STMT_* packets written by hand.

// rt28pSetup is a table k of 200,000 rows keyed -149999..50000 (a fill at
// 1,000 rows a second reaches key 0 after 150 s: keys from 0 up are read
// from the snapshot, the lowest ones from the staging table), with unique
// u = 'u<id>' (case-insensitive collation).
var rt28pSetup = []string{
	"CREATE TABLE k (id INT PRIMARY KEY, v INT NOT NULL, s VARCHAR(20), u VARCHAR(20) COLLATE utf8mb4_general_ci UNIQUE)",
	"INSERT INTO k SELECT CAST(seq AS SIGNED) - 150000, seq % 100, CONCAT('s', CAST(seq AS SIGNED) - 150000), CONCAT('u', CAST(seq AS SIGNED) - 150000) FROM seq_1_to_200000",
	"ANALYZE TABLE k",
}

// rtp is one parameter of a COM_STMT_EXECUTE written by hand.
type rtp struct {
	typ, flag byte
	null      bool
	val       []byte
}

func pInt(v int64) rtp {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, uint64(v))
	return rtp{typ: 8, val: b}
}

func pUint(v uint64) rtp {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	return rtp{typ: 8, flag: 0x80, val: b}
}

// pStr is a string parameter of type typ (shorter than 251 bytes).
func pStr(typ byte, s string) rtp {
	return rtp{typ: typ, val: append([]byte{byte(len(s))}, s...)}
}

func pLE(typ, flag byte, v uint64, size int) rtp {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	return rtp{typ: typ, flag: flag, val: b[:size]}
}

// execPayload is a COM_STMT_EXECUTE of statement id with ps (their types
// sent when bound).
func execPayload(id uint32, flags byte, bound bool, ps []rtp) []byte {
	p := stmtPacket(0x17, id, flags, 1, 0, 0, 0)
	if len(ps) == 0 {
		return p
	}
	nulls := make([]byte, (len(ps)+7)/8)
	for i, x := range ps {
		if x.null {
			nulls[i/8] |= 1 << (i % 8)
		}
	}
	p = append(p, nulls...)
	if bound {
		p = append(p, 1)
		for _, x := range ps {
			p = append(p, x.typ, x.flag)
		}
	} else {
		p = append(p, 0)
	}
	for _, x := range ps {
		if !x.null {
			p = append(p, x.val...)
		}
	}
	return p
}

// readWithin reads one packet, waiting d at most.
func (r *raw) readWithin(d time.Duration) ([]byte, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	return r.c.ReadPacket()
}

// lenenc reads a length-encoded integer.
func lenenc(b []byte) (uint64, int) {
	switch {
	case len(b) == 0:
		return 0, 0
	case b[0] < 0xfb:
		return uint64(b[0]), 1
	case b[0] == 0xfc:
		return uint64(binary.LittleEndian.Uint16(b[1:])), 3
	case b[0] == 0xfd:
		return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, 4
	}
	return binary.LittleEndian.Uint64(b[1:]), 9
}

// result reads a whole response (OK, ERR or a result set with EOFs) and
// describes it: "ok <affected> id <insert id>", "err <code>", or the
// rows' packets; "cursor" for a cursor opened. The wait is d at most.
func (r *raw) result(d time.Duration) string {
	r.t.Helper()
	p, err := r.readWithin(d)
	if err != nil {
		return "read error: " + err.Error()
	}
	switch p[0] {
	case 0x00:
		a, n := lenenc(p[1:])
		id, _ := lenenc(p[1+n:])
		return fmt.Sprintf("ok %d id %d", a, id)
	case 0xFF:
		return fmt.Sprintf("err %d %s", binary.LittleEndian.Uint16(p[1:]), p[9:])
	}
	cols, _ := lenenc(p)
	for i := uint64(0); i < cols; i++ {
		if _, err := r.readWithin(d); err != nil {
			return "read error: " + err.Error()
		}
	}
	if p, err = r.readWithin(d); err != nil || p[0] != 0xFE {
		return fmt.Sprintf("bad EOF %q %v", p, err)
	}
	if binary.LittleEndian.Uint16(p[3:])&0x0040 != 0 {
		return "cursor"
	}
	var rows []string
	for {
		p, err := r.readWithin(d)
		if err != nil {
			return "read error: " + err.Error()
		}
		if p[0] == 0xFE && len(p) < 9 {
			break
		}
		if p[0] == 0xFF {
			return fmt.Sprintf("err %d %s", binary.LittleEndian.Uint16(p[1:]), p[9:])
		}
		rows = append(rows, fmt.Sprintf("%q", p))
	}
	return "rows [" + strings.Join(rows, " ") + "]"
}

// prepareN prepares q and returns its id and parameter count.
func (r *raw) prepareN(q string) (uint32, int) {
	r.t.Helper()
	id, _, params := r.prepareCounts(q)
	return id, params
}

// rt28pFilling is a proxy filling its forks at 1,000 rows a second, and
// raw connections to db through it and to db_ref: the first write has
// forked k, which fills.
func rt28pFilling(t *testing.T, db string) (*proxyHandle, *raw, *raw) {
	t.Helper()
	h, root := rt27Env(t, 1000)
	rt27Pair(t, h, root, db, rt28pSetup)
	sb, ref := rt28pRaw(t, h, db)
	rt28pText(t, sb, ref, "UPDATE k SET s = 'first' WHERE id = 1")
	if !rawFilling(t, sb, db+".k") {
		t.Fatal("k is not filling")
	}
	return h, sb, ref
}

// rt28pRaw is a raw connection through h to db (a sandbox of its own) and
// a raw direct one to db_ref.
func rt28pRaw(t *testing.T, h *proxyHandle, db string) (sb, ref *raw) {
	t.Helper()
	return dialRaw(t, h.addr, h.db.User, h.db.Password, db), dialRaw(t, h.db.Addr, h.db.User, h.db.Password, db+"_ref")
}

// rt28pStmt is one statement prepared on both connections.
type rt28pStmt struct {
	sb, ref *raw
	q       string
	idS     uint32
	idR     uint32
	n       int
}

func rt28pPrepare(t *testing.T, sb, ref *raw, q string) *rt28pStmt {
	t.Helper()
	s := &rt28pStmt{sb: sb, ref: ref, q: q}
	s.idS, s.n = sb.prepareN(q)
	s.idR, _ = ref.prepareN(q)
	return s
}

// exec executes s on both with ps and reports a difference; the sandbox's
// answer is awaited d at most.
func (s *rt28pStmt) exec(t *testing.T, label string, d time.Duration, flags byte, bound bool, ps ...rtp) (got, want string) {
	t.Helper()
	s.sb.send(execPayload(s.idS, flags, bound, ps)...)
	got = s.sb.result(d)
	s.ref.send(execPayload(s.idR, flags, bound, ps)...)
	want = s.ref.result(10 * time.Second)
	if got != want {
		t.Errorf("%s: %s with %s:\n sandbox: %s\n    copy: %s", label, s.q, label, got, want)
	}
	return got, want
}

// rt28pText runs a text statement on both raw connections.
func rt28pText(t *testing.T, sb, ref *raw, q string) {
	t.Helper()
	gr, ge := sb.c.Execute(q)
	wr, we := ref.c.Execute(q)
	g, w := fmt.Sprint(errCode(ge)), fmt.Sprint(errCode(we))
	if gr != nil && wr != nil {
		g, w = fmt.Sprint(gr.AffectedRows, len(gr.Values)), fmt.Sprint(wr.AffectedRows, len(wr.Values))
	}
	if g != w || ge != nil && errCode(ge) == 0 {
		t.Errorf("%s: sandbox %s %v, copy %s %v", q, g, ge, w, we)
	}
}

// rawFilling says whether the raw connection's sandbox shows table filling.
func rawFilling(t *testing.T, r *raw, table string) bool {
	t.Helper()
	res := r.query("SANDBOX STATUS")
	for i := range res.Values {
		name, _ := res.GetString(i, 10)
		state, _ := res.GetString(i, 11)
		if name == table && strings.HasPrefix(state, "filling") {
			return true
		}
	}
	return false
}

// liftAfter lifts h's fill rate after d unless done is closed first.
func liftAfter(h *proxyHandle, d time.Duration) chan struct{} {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			h.setFillRate(0)
		}
	}()
	return done
}

// TestRT28pParamTypes: executions whose parameters are of every integer
// type the proxy reads (signed, unsigned), huge and negative, and strings an
// INT key is compared with as numbers, each on a key the fill has not
// reached (or one it staged): every answer is the copy's, without a wait.
func TestRT28pParamTypes(t *testing.T) {
	h, sb, ref := rt28pFilling(t, "rt28pty")
	sel := rt28pPrepare(t, sb, ref, "SELECT id, v, s, u FROM k WHERE id = ?")
	upd := rt28pPrepare(t, sb, ref, "UPDATE k SET v = v + 1000 WHERE id = ?")
	const quick = 8 * time.Second // no execution here may wait for the fill (150 s)
	cases := []struct {
		label string
		p     rtp
	}{
		{"longlong 100", pInt(100)},
		// YEAR and INT24 parameters wait for the fill: TestRT28pYearParamShiftsKey.
		{"tiny unsigned 200", pLE(1, 0x80, 200, 1)},
		{"tiny signed 0xc8", pLE(1, 0, 0xc8, 1)},
		{"short signed 0xffff", pLE(2, 0, 0xffff, 2)},
		{"short unsigned 40000", pLE(2, 0x80, 40000, 2)},
		{"long unsigned 0xffffff00", pLE(3, 0x80, 0xffffff00, 4)},
		{"long signed -5000", pLE(3, 0, uint64(uint32(0xffffffff-4999)), 4)},
		{"longlong min", pInt(-9223372036854775808)},
		{"longlong -3000000000", pInt(-3000000000)},
		{"longlong -149998", pInt(-149998)},
		{"unsigned max", pUint(18446744073709551615)},
		{"unsigned 2^32+500", pUint(1<<32 + 500)},
		{"string 400", pStr(253, "400")},
		{"string ' 401'", pStr(253, " 401")},
		{"string 402abc", pStr(253, "402abc")},
		{"string 4.03e2", pStr(253, "4.03e2")},
		{"string 4e2", pStr(253, "4e2")},
		{"string -0", pStr(253, "-0")},
		{"string 404.5", pStr(253, "404.5")},
		{"string '405 '", pStr(253, "405 ")},
		{"varchar 406", pStr(15, "406")},
		{"blob 407", pStr(252, "407")},
		{"string -149997", pStr(254, "-149997")},
		{"string 18446744073709551616", pStr(254, "18446744073709551616")},
		{"string 409.0000000000000001", pStr(254, "409.0000000000000001")},
	}
	for _, c := range cases {
		sel.exec(t, c.label, quick, 0, true, c.p)
		upd.exec(t, c.label, quick, 0, true, c.p)
		g, _ := sel.exec(t, c.label+" after the update", quick, 0, true, c.p)
		t.Logf("%s: %.120s", c.label, g)
	}
	if !rawFilling(t, sb, "rt28pty.k") {
		t.Error("the fork is whole: an execution waited for the fill")
	}
	h.setFillRate(0)
	sum := "SELECT CONCAT(COUNT(*), '/', SUM(v), '/', SUM(CRC32(CONCAT_WS('|', id, v, s, u)))) FROM k"
	rt28pText(t, sb, ref, sum) // waits for the fill
	gs, _ := sb.c.Execute(sum)
	ws, _ := ref.c.Execute(sum)
	g, _ := gs.GetString(0, 0)
	w, _ := ws.GetString(0, 0)
	if g != w {
		t.Errorf("the fork %s, the copy %s", g, w)
	}
}

// TestRT28pYearParamShiftsKey: MariaDB reads no bytes for a parameter of
// type YEAR (13), INT24 (9), BIT (16) or GEOMETRY (255) (its
// Item_param_set_param_func for them sets NULL: types the binary protocol
// does not send values of), while the proxy reads two bytes for YEAR, four
// for INT24 and a length-encoded string for the others (wire.fixedSize):
// every parameter after one of them is read from other bytes than the
// server's. Here the server's key parameter is the packet's first eight
// bytes, 40000 (40001, 40002), while the proxy reads 0: the fork misses the
// row the statement changes on a copy, and the fill later brings
// production's row instead. Now the proxy does not read a packet with
// such a type: the execution waits for the fill (lifted here first).
func TestRT28pYearParamShiftsKey(t *testing.T) {
	h, sb, ref := rt28pFilling(t, "rt28pyr")
	zero := rtp{typ: 8, val: make([]byte, 8)}
	bit := make([]byte, 1+0x42)
	bit[0], bit[1] = 0x42, 0x9c // the server's LONGLONG: 42 9c 00 00 00 00 00 00
	cases := []struct {
		label string
		first rtp
		key   int64
	}{
		// 40 9c | 00 00 00 00 00 00 00 00: the proxy's YEAR is 0x9c40.
		{"a YEAR then a LONGLONG", rtp{typ: 13, val: []byte{0x40, 0x9c}}, 40000},
		// 41 9c 00 00 | 00 00 00 00 00 00 00 00.
		{"an INT24 then a LONGLONG", rtp{typ: 9, val: []byte{0x41, 0x9c, 0, 0}}, 40001},
		// 42 | 9c 00 … (66 bytes) | 00 × 8.
		{"a BIT then a LONGLONG", rtp{typ: 16, val: bit}, 40002},
	}
	probe := rt28pPrepare(t, sb, ref, "SELECT ? IS NULL, ?")
	upd := rt28pPrepare(t, sb, ref, "UPDATE k SET s = ? WHERE id = ?")
	sel := rt28pPrepare(t, sb, ref, "SELECT id, v, s FROM k WHERE id = ?")
	h.setFillRate(0) // the first execution with such a type waits for the fill
	for _, c := range cases {
		probe.exec(t, c.label, testkit.WaitLimit, 0, true, c.first, zero)
		upd.exec(t, c.label, testkit.WaitLimit, 0, true, c.first, zero)
		sel.exec(t, fmt.Sprint(c.key), testkit.WaitLimit, 0, true, pInt(c.key))
	}
	rt28pText(t, sb, ref, "SELECT COUNT(*) FROM k")
	for _, c := range cases {
		sel.exec(t, fmt.Sprint(c.key, " after the fill"), 8*time.Second, 0, true, pInt(c.key))
	}
}

// TestRT28pLongDataAfterKill: a statement's value sent as long data makes
// its execution wait for the fill; KILL QUERY ends the wait (1317) before
// the packet reaches the server, which kept the long data while the proxy
// forgot it: the client's next execution, its value in the packet, got
// 1210 where a copy changes the row. The proxy now resets the statement
// upstream (COM_STMT_RESET) when it answers an execution itself, as the
// server's own execution uses the long data up.
func TestRT28pLongDataAfterKill(t *testing.T) {
	h, sb, ref := rt28pFilling(t, "rt28pld")
	upd := rt28pPrepare(t, sb, ref, "UPDATE k SET v = v + 1000 WHERE id = ?")
	id := sb.scalar("SELECT CONNECTION_ID()")
	sb.send(stmtPacket(0x18, upd.idS, append([]byte{0, 0}, "30007"...)...)...)
	sb.send(execPayload(upd.idS, 0, true, []rtp{{typ: 253}})...) // its value is the long data: waits for the fill
	time.Sleep(time.Second)
	killer := conn(t, openDB(t, h.dsn("rt28pld")))
	mustExecC(t, killer, "KILL QUERY "+id)
	if got := sb.result(30 * time.Second); !strings.HasPrefix(got, "err 1317") {
		t.Fatalf("the execution waiting for the fill: %s, want 1317", got)
	}
	if !rawFilling(t, sb, "rt28pld.k") {
		t.Fatal("the fill ended: the test proved nothing")
	}
	upd.exec(t, "30005 in the packet after the killed execution", 8*time.Second, 0, true, pInt(30005))
	h.setFillRate(0)
	res := sb.query("SELECT GROUP_CONCAT(id, ':', v ORDER BY id) FROM k WHERE id IN (30005, 30007)")
	if v, _ := res.GetString(0, 0); v != "30005:1005,30007:7" {
		t.Errorf("the fork's rows 30005 and 30007: %s, want 30005:1005,30007:7 (the copy's)", v)
	}
}

// TestRT28pLongDataWaitsForFill: an execution with a value sent as long
// data (of a statement prepared while the fork fills) waits for the fill;
// the fill's end makes the gate plan it again: the long data must still
// be the server's (the answer a copy gives).
func TestRT28pLongDataWaitsForFill(t *testing.T) {
	h, sb, ref := rt28pFilling(t, "rt28plw")
	sel := rt28pPrepare(t, sb, ref, "SELECT id, v, CONCAT(?, '|') FROM k WHERE id = ?")
	sel.exec(t, "a plain execution", 8*time.Second, 0, true, pStr(253, "x"), pInt(30009))
	sb.send(stmtPacket(0x18, sel.idS, append([]byte{0, 0}, "hello"...)...)...)
	ref.send(stmtPacket(0x18, sel.idR, append([]byte{0, 0}, "hello"...)...)...)
	done := liftAfter(h, time.Second)
	sel.exec(t, "long data then 30010", 60*time.Second, 0, true, rtp{typ: 253}, pInt(30010))
	close(done)
}

// TestRT28pLongDataAfterFillEnded: a prepared UPDATE (its PREPARE forks
// the table lazily) whose fill has ended meanwhile is planned again at its
// next execution (the fill's end changed the sandbox's tables). It was
// prepared again upstream under a new id, and long data the client sent
// for that execution, which went to the statement prepared first, was
// lost: 1210 where a copy answers. Its text is the same: the proxy now
// keeps the statement that holds the data.
func TestRT28pLongDataAfterFillEnded(t *testing.T) {
	h, root := rt27Env(t, 0)
	rt27Pair(t, h, root, "rt28plb", rt28pSetup)
	sb, ref := rt28pRaw(t, h, "rt28plb")
	upd := rt28pPrepare(t, sb, ref, "UPDATE k SET s = ? WHERE id = ?")
	rt28pText(t, sb, ref, "UPDATE k SET s = 'first' WHERE id = 1")
	sb.query("SELECT COUNT(*) FROM k") // the fork whole
	sb.send(stmtPacket(0x18, upd.idS, append([]byte{0, 0}, "long"...)...)...)
	ref.send(stmtPacket(0x18, upd.idR, append([]byte{0, 0}, "long"...)...)...)
	upd.exec(t, "long data then 30011", 20*time.Second, 0, true, rtp{typ: 253}, pInt(30011))
	sel := rt28pPrepare(t, sb, ref, "SELECT id, s FROM k WHERE id = ?")
	sel.exec(t, "30011", 20*time.Second, 0, true, pInt(30011))
}

// rt28pCase is a statement and its arguments (go-sql-driver's
// server-side prepare: one COM_STMT_PREPARE and COM_STMT_EXECUTE each).
type rt28pCase struct {
	q    string
	args []any
}

// rt28pRunAll runs each case on sb and ref and reports every difference.
// A case the sandbox has not answered in 3 s waits for the fill: KILL
// QUERY ends it (1317), it is logged, and the copy does not run it.
func rt28pRunAll(t *testing.T, h *proxyHandle, sb, ref *sql.Conn, cases []rt28pCase) (waited []string) {
	t.Helper()
	ctx := context.Background()
	id := queryString(t, sb, "SELECT CONNECTION_ID()")
	killer := conn(t, openDB(t, h.dsn("")))
	for i, c := range cases {
		done := make(chan struct{})
		killed := make(chan bool, 1)
		go func() {
			select {
			case <-done:
				killed <- false
			case <-time.After(3 * time.Second):
				_, _ = killer.ExecContext(ctx, "KILL QUERY "+id)
				killed <- true
			}
		}()
		got := runBoth(ctx, sb, c.q, c.args...)
		close(done)
		if <-killed {
			t.Logf("case %d %s %v waits for the fill (%s)", i, c.q, c.args, got)
			waited = append(waited, c.q)
			continue
		}
		if want := runBoth(ctx, ref, c.q, c.args...); got != want {
			t.Errorf("case %d %s %v:\n sandbox: %s\n    copy: %s", i, c.q, c.args, got, want)
		}
	}
	return waited
}

// rt28pSum compares k's checksum on sb and ref (it waits for the fill).
func rt28pSum(t *testing.T, sb, ref *sql.Conn) {
	t.Helper()
	sum := "SELECT CONCAT(COUNT(*), '/', SUM(v), '/', SUM(CRC32(CONCAT_WS('|', id, v, s, u)))) FROM k"
	if got, want := queryString(t, sb, sum), queryString(t, ref, sum); got != want {
		t.Errorf("the fork %s, the copy %s", got, want)
	}
}

// TestRT28pPlaceholders: placeholders in the SET, WHERE, LIMIT, select
// list, subqueries, IN lists, INSERT rows and ON DUPLICATE KEY UPDATE,
// executable and version comments, integers signed and unsigned, strings
// against the INT key and the case-insensitive unique key: every answer
// is the copy's (a few wait for the fill, as documented: an OR, <=>, an
// INSERT's value not stored as written), and the fork ends equal to the
// copy.
func TestRT28pPlaceholders(t *testing.T) {
	h, root := rt27Env(t, 1000)
	sb, ref := rt27Pair(t, h, root, "rt28pph", rt28pSetup)
	rt28pRunAll(t, h, sb, ref, []rt28pCase{{"UPDATE k SET s = ? WHERE id = ?", []any{"first", 1}}})
	if !lazyFilling(t, sb, "rt28pph.k") {
		t.Fatal("k is not filling")
	}
	rt28pRunAll(t, h, sb, ref, []rt28pCase{
		{"UPDATE k SET v = ?, s = ? WHERE id = ? LIMIT ?", []any{7, "x", 30001, 1}},
		{"SELECT ?, id, v, s FROM k WHERE id = ?", []any{"a", 30001}},
		{"SELECT id, v FROM k WHERE id IN (?, ?, ?) ORDER BY id", []any{30002, -149995, 30003}},
		{"SELECT id FROM k WHERE id = ? AND v < ?", []any{30004, 1000}},
		{"SELECT id FROM k WHERE v < ? AND id = ?", []any{1000, 30005}},
		{"INSERT INTO k (id, v, s, u) VALUES (?, ?, ?, ?), (?, ?, ?, ?) ON DUPLICATE KEY UPDATE v = v + ?",
			[]any{30006, 1, "i", "new1", 60001, 2, "i", "u30007", 500}},
		{"SELECT id, v, s, u FROM k WHERE id IN (30006, 30007, 60001) ORDER BY id", nil},
		{"INSERT INTO k (id, v, s, u) VALUES (?, ?, ?, ?)", []any{60002, 1, "c", "U30008"}},
		{"INSERT INTO k (id, v, s, u) VALUES (?, ?, ?, ?)", []any{60003, 1, "c", "u30009 "}},
		{"INSERT IGNORE INTO k (id, v, s, u) VALUES (?, ?, ?, ?)", []any{30010, 1, "c", "n30010"}},
		{"REPLACE INTO k VALUES (?, ?, ?, ?)", []any{30011, 3, "r", "U30012"}},
		{"SELECT id, v, s, u FROM k WHERE id IN (30010, 30011, 30012) ORDER BY id", nil},
		{"SELECT id, v, s, u FROM k WHERE u IN ('u30012', 'U30011') ORDER BY id", nil},
		{"UPDATE k SET v = (SELECT ?) WHERE id = ?", []any{9, 30013}},
		{"UPDATE k SET v = ? + ? WHERE id = ?", []any{1, 2, 30014}},
		{"DELETE FROM k WHERE id = ? ORDER BY id LIMIT ?", []any{30015, 5}},
		{"SELECT id FROM k WHERE id = ? OR id = ?", []any{30016, 30017}},
		{"UPDATE k SET v = v + 1 WHERE id = ? AND id = ?", []any{30018, 30019}},
		{"SELECT id, v FROM k WHERE id <=> ?", []any{30020}},
		{"SELECT id, v FROM k WHERE u = ?", []any{"U30021"}},
		{"SELECT id, v FROM k WHERE u = ?", []any{"u30022 "}},
		{"UPDATE k SET v = v + 5 WHERE u = ?", []any{"U30023"}},
		{"DELETE FROM k WHERE u = ?", []any{"u30024   "}},
		{"SELECT id, v FROM k WHERE id = ?", []any{uint64(30025)}},
		{"UPDATE k SET v = v + 1 WHERE id = ?", []any{true}},
		{"SELECT id, v FROM k WHERE id = ?", []any{"30026"}},
		{"UPDATE k SET v = v + 1 WHERE id = ?", []any{"30027.0"}},
		{"UPDATE k SET v = v + 1 WHERE id IN (?, ?)", []any{"3.0028e4", []byte("30029")}},
		{"INSERT INTO k (id, v) VALUES (?, ?)", []any{-1, 1}},
		{"INSERT INTO k (id, v) VALUES (?, ?)", []any{int64(-149990), 1}},
		{"INSERT INTO k (id, v, u) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE s = ?", []any{60004, 1, "u30030", "dup"}},
		{"SELECT id, v, s FROM k WHERE id = 30030", nil},
		{"INSERT INTO k (id, v, u) VALUES (?, ?, NULL), (?, ?, NULL)", []any{60005, 1, 30031, 1}},
		{"SELECT id, v FROM k WHERE id = ? /*!100000 AND v < ? */", []any{30040, 1000}},
		{"SELECT id, v FROM k WHERE /*M!100000 v < ? AND */ id = ?", []any{1000, 30041}},
		{"SELECT id, v FROM k WHERE id = ? /*!999999 AND v < ? */", []any{30042}},
		{"SELECT id, v FROM k WHERE /*!999999 v < ? AND */ id = ?", []any{30043}},
		{"SELECT id, v FROM k WHERE id = ? -- ?\n", []any{30044}},
		{"SELECT id, '?', v FROM k WHERE id = ?", []any{30045}},
		{"UPDATE k SET s = CONCAT(?, '?') WHERE id = ?", []any{"q", 30046}},
		{"SELECT id, v, s FROM k WHERE id IN (30040, 30041, 30042, 30043, 30044, 30045, 30046) ORDER BY id", nil},
		{"SELECT id, v, s, u FROM k WHERE id IN (?, ?, ?, ?, ?, ?) ORDER BY id", []any{30001, 30004, 30013, 30014, 30015, 30018}},
		{"SELECT id, v, s, u FROM k WHERE id IN (?, ?, ?, ?, ?, ?) ORDER BY id", []any{30021, 30022, 30023, 30024, 30027, 30028}},
		{"SELECT id, v, s, u FROM k WHERE id IN (?, ?, ?, ?, ?, ?) ORDER BY id", []any{1, 30029, 60002, 60003, 60004, 60005}},
	})
	if !lazyFilling(t, sb, "rt28pph.k") {
		t.Error("the fork is whole: an execution waited for the fill")
	}
	// Had an execution waited, the copy did not run it either (logged).
	h.setFillRate(0)
	rt28pSum(t, sb, ref)
}

// fetch sends COM_STMT_FETCH of n rows and describes what comes back.
func (r *raw) fetch(id uint32, n uint32) string {
	r.t.Helper()
	r.send(stmtPacket(0x1C, id, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))...)
	var rows []string
	for {
		p, err := r.readWithin(10 * time.Second)
		if err != nil {
			return "read error: " + err.Error()
		}
		if p[0] == 0xFF {
			return fmt.Sprintf("err %d", binary.LittleEndian.Uint16(p[1:]))
		}
		if p[0] == 0xFE && len(p) < 9 {
			return "fetched [" + strings.Join(rows, " ") + "]"
		}
		rows = append(rows, fmt.Sprintf("%q", p))
	}
}

// TestRT28pRawReexecutions: executions without their types (new-params-
// bound 0) after one with them, after COM_STMT_RESET, after a change of
// types; statements prepared before the table filled (the UPDATE's
// PREPARE forks it) executed with and without types; nine parameters (two
// bytes of NULL bits); cursor executions and their fetches; NULL and
// DOUBLE parameters (which wait for the fill): every answer is the
// copy's, and the fork ends equal to the copy.
func TestRT28pRawReexecutions(t *testing.T) {
	h, root := rt27Env(t, 1000)
	rt27Pair(t, h, root, "rt28prx", rt28pSetup)
	sb, ref := rt28pRaw(t, h, "rt28prx")
	earlySel := rt28pPrepare(t, sb, ref, "SELECT id, v FROM k WHERE id = ?")
	earlySel.exec(t, "before the fork: 30100", 8*time.Second, 0, true, pInt(30100))
	early := rt28pPrepare(t, sb, ref, "UPDATE k SET v = v + 100 WHERE id = ?")
	early.exec(t, "the first write: 30100", 8*time.Second, 0, true, pInt(30100))
	if !rawFilling(t, sb, "rt28prx.k") {
		t.Fatal("k is not filling")
	}
	const quick = 8 * time.Second
	earlySel.exec(t, "prepared before, no types: 30101", quick, 0, false, pInt(30101))
	early.exec(t, "no types: 30101", quick, 0, false, pInt(30101))
	earlySel.exec(t, "prepared before, no types: 30101 again", quick, 0, false, pInt(30101))
	early.exec(t, "types: 30102", quick, 0, true, pInt(30102))
	earlySel.exec(t, "prepared before: 30102", quick, 0, true, pInt(30102))

	upd := rt28pPrepare(t, sb, ref, "UPDATE k SET v = v + 1000 WHERE id = ?")
	sel := rt28pPrepare(t, sb, ref, "SELECT id, v, s FROM k WHERE id = ?")
	upd.exec(t, "types: 30103", quick, 0, true, pInt(30103))
	upd.exec(t, "no types: 30104", quick, 0, false, pInt(30104))
	sel.exec(t, "string types: 30104", quick, 0, true, pStr(254, "30104"))
	sel.exec(t, "no types (string): 30103", quick, 0, false, pStr(254, "30103"))
	upd.exec(t, "string types: 30105", quick, 0, true, pStr(253, "30105"))
	upd.exec(t, "no types (string): 30106", quick, 0, false, pStr(253, "30106"))
	for _, s := range []*rt28pStmt{upd, sel} {
		for _, r := range []*raw{sb, ref} {
			id := s.idS
			if r == ref {
				id = s.idR
			}
			r.send(stmtPacket(0x1A, id)...)
			r.expectOK()
		}
	}
	upd.exec(t, "after reset, no types: 30107", quick, 0, false, pStr(253, "30107"))
	upd.exec(t, "after reset, types: 30108", quick, 0, true, pInt(30108))
	sel.exec(t, "after reset: 30108", quick, 0, true, pInt(30108))
	multi := rt28pPrepare(t, sb, ref, "SELECT id, v, s FROM k WHERE id IN (?, ?, ?, ?, ?, ?, ?, ?, ?) ORDER BY id")
	keys := []rtp{pInt(30100), pInt(30101), pInt(30102), pInt(30103), pInt(30104), pInt(30105), pInt(30106), pInt(30107), pInt(30108)}
	multi.exec(t, "30100..30108", quick, 0, true, keys...)
	keys[8] = pInt(30109)
	multi.exec(t, "30100..30107, 30109, no types", quick, 0, false, keys...)
	// Cursors: the rows come with COM_STMT_FETCH.
	sel.exec(t, "cursor: 30110", quick, 1, true, pInt(30110))
	if got, want := sb.fetch(sel.idS, 5), ref.fetch(sel.idR, 5); got != want {
		t.Errorf("fetch of the cursor on 30110: sandbox %s, copy %s", got, want)
	}
	upd.exec(t, "30110 with a cursor flag", quick, 1, true, pInt(30110))
	sel.exec(t, "cursor, no types: 30110", quick, 1, false, pInt(30110))
	if got, want := sb.fetch(sel.idS, 5), ref.fetch(sel.idR, 5); got != want {
		t.Errorf("fetch of the cursor on 30110: sandbox %s, copy %s", got, want)
	}
	if !rawFilling(t, sb, "rt28prx.k") {
		t.Error("the fork is whole: an execution waited for the fill")
	}
	// Values the proxy does not read: they wait for the fill.
	done := liftAfter(h, time.Second)
	dbl := rtp{typ: 5, val: binary.LittleEndian.AppendUint64(nil, 0x40dd6c8000000000)} // 30130.0
	upd.exec(t, "a DOUBLE 30130", 60*time.Second, 0, true, dbl)
	close(done)
	upd.exec(t, "NULL", quick, 0, true, rtp{typ: 8, null: true})
	sel.exec(t, "30130", quick, 0, true, pInt(30130))
	early.exec(t, "after the fill: 30131", quick, 0, false, pInt(30131))
	earlySel.exec(t, "prepared before, after the fill: 30131", quick, 0, false, pInt(30131))
	sum := "SELECT CONCAT(COUNT(*), '/', SUM(v), '/', SUM(CRC32(CONCAT_WS('|', id, v, s, u)))) FROM k"
	if g, w := sb.scalar(sum), ref.scalar(sum); g != w {
		t.Errorf("the fork %s, the copy %s", g, w)
	}
}

// TestRT28pSQLPrepareAndTransactions: SQL-level EXECUTE … USING a
// variable or a literal of a PREPARE made before the fork, EXECUTE
// IMMEDIATE … USING, a prepared SET of autocommit, executions inside a
// transaction and with autocommit off (they copy up inside it), and
// prepared statements executed after the fork became whole: every answer
// is the copy's.
func TestRT28pSQLPrepareAndTransactions(t *testing.T) {
	h, root := rt27Env(t, 1000)
	sb, ref := rt27Pair(t, h, root, "rt28psq", rt28pSetup)
	// Prepared before the fork (a PREPARE naming a filling table waits; a
	// PREPARE of a write forks the table whole).
	rt28pRunAll(t, h, sb, ref, []rt28pCase{
		{"PREPARE s2 FROM 'SELECT id, v FROM k WHERE id IN (?, 30206)'", nil},
		{"SET @q = 'SELECT id, v FROM k WHERE id = 30208'", nil},
		{"PREPARE s3 FROM @q", nil},
	})
	rt28pRunAll(t, h, sb, ref, []rt28pCase{{"UPDATE k SET s = ? WHERE id = ?", []any{"first", 1}}})
	if !lazyFilling(t, sb, "rt28psq.k") {
		t.Fatal("k is not filling")
	}
	mustExecC(t, root, "UPDATE rt28psq.k SET v = -7 WHERE id BETWEEN 30200 AND 30216")
	waited := rt28pRunAll(t, h, sb, ref, []rt28pCase{
		{"SET @k = 30200", nil},
		{"EXECUTE s2 USING @k", nil},
		{"EXECUTE s2 USING 30201", nil},
		{"EXECUTE s2 USING 30201 + 1", nil},
		{"EXECUTE IMMEDIATE 'UPDATE k SET v = v + 1 WHERE id = ?' USING 30203", nil},
		{"EXECUTE IMMEDIATE 'SELECT id, v FROM k WHERE id = ? OR id = 30205' USING 30204", nil},
		{"EXECUTE s2 USING 30207", nil},
		{"EXECUTE s3", nil},
		{"SELECT id, v FROM k WHERE id IN (30200, 30201, 30202, 30203, 30204, 30205, 30206, 30207, 30208) ORDER BY id", nil},
	})
	t.Logf("waited: %q", waited)
	if !lazyFilling(t, sb, "rt28psq.k") {
		t.Fatal("the fork is whole: an execution waited for the fill")
	}
	// A prepared SET turns autocommit off: the executions after it wait.
	rt28pRunAll(t, h, sb, ref, []rt28pCase{{"SET autocommit = ?", []any{0}}})
	waitedTx := rt28pRunAll(t, h, sb, ref, []rt28pCase{
		{"UPDATE k SET v = v + 1 WHERE id = ?", []any{30210}},
		{"SELECT id, v FROM k WHERE id = ?", []any{30211}},
	})
	if len(waitedTx) != 0 {
		t.Errorf("with autocommit off, the executions waited: %q (want none: they copy up inside the transaction)", waitedTx)
	}
	rt28pRunAll(t, h, sb, ref, []rt28pCase{{"SET autocommit = ?", []any{1}}, {"COMMIT", nil}})
	ctx := context.Background()
	// Inside a transaction: copied up inside it.
	for _, c := range []*sql.Conn{sb, ref} {
		mustExecC(t, c, "START TRANSACTION")
	}
	for _, c := range []rt28pCase{
		{"UPDATE k SET v = v + 1 WHERE id = ?", []any{30212}},
		{"SELECT id, v FROM k WHERE id IN (?, ?) ORDER BY id", []any{30212, 30213}},
		{"INSERT INTO k (id, v, u) VALUES (?, ?, ?)", []any{60100, 1, "U30214"}},
		{"DELETE FROM k WHERE id = ?", []any{30215}},
	} {
		if got, want := runBoth(ctx, sb, c.q, c.args...), runBoth(ctx, ref, c.q, c.args...); got != want {
			t.Errorf("in a transaction: %s %v:\n sandbox: %s\n    copy: %s", c.q, c.args, got, want)
		}
	}
	for _, c := range []*sql.Conn{sb, ref} {
		mustExecC(t, c, "COMMIT")
	}
	if !lazyFilling(t, sb, "rt28psq.k") {
		t.Error("the fork is whole: an execution in the transaction waited for the fill")
	}
	h.setFillRate(0)
	testkit.Eventually(t, "the fork to be whole", func() bool { return !lazyFilling(t, sb, "rt28psq.k") })
	// Whole: prepared statements executed again.
	rt28pRunAll(t, h, sb, ref, []rt28pCase{
		{"UPDATE k SET v = v + 1 WHERE id = ?", []any{30216}},
		{"PREPARE s1 FROM 'UPDATE k SET v = v + 1 WHERE id = ?'", nil},
		{"EXECUTE s1 USING 30216", nil},
		{"EXECUTE s2 USING 30216", nil},
		{"SELECT id, v FROM k WHERE id IN (?, ?, ?, ?) ORDER BY id", []any{30212, 30213, 30215, 30216}},
	})
	rt28pSum(t, sb, ref)
}

// TestRT28pNamedSandboxTwoConnections: two connections of one named
// sandbox execute prepared statements on the same keys while the fork
// fills (one copies a row up, the other changes, inserts or deletes it),
// and production changes: each answer is the one a single copy gives, and
// production keeps its rows.
func TestRT28pNamedSandboxTwoConnections(t *testing.T) {
	h, root := rt27Env(t, 1000)
	a, ref := rt27Pair(t, h, root, "rt28pnm", rt28pSetup)
	ctx := context.Background()
	mustExecC(t, a, "SANDBOX CREATE rt28pnm_box")
	t.Cleanup(func() { _, _ = a.ExecContext(ctx, "SANDBOX DISCARD rt28pnm_box") })
	b := conn(t, openDB(t, h.dsn("rt28pnm")))
	mustExecC(t, b, "SANDBOX ATTACH rt28pnm_box")
	step := func(c *sql.Conn, q string, args ...any) {
		t.Helper()
		if got, want := runBoth(ctx, c, q, args...), runBoth(ctx, ref, q, args...); got != want {
			t.Errorf("%s %v:\n sandbox: %s\n    copy: %s", q, args, got, want)
		}
	}
	step(a, "UPDATE k SET s = ? WHERE id = ?", "first", 1)
	if !lazyFilling(t, b, "rt28pnm.k") {
		t.Fatal("k is not filling")
	}
	mustExecC(t, root, "UPDATE rt28pnm.k SET v = -1 WHERE id BETWEEN 30300 AND 30320")
	pa, err := a.PrepareContext(ctx, "UPDATE k SET v = v + 10 WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.PrepareContext(ctx, "SELECT id, v, s FROM k WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := ref.PrepareContext(ctx, "UPDATE k SET v = v + 10 WHERE id = ?")
	ps, _ := ref.PrepareContext(ctx, "SELECT id, v, s FROM k WHERE id = ?")
	for k := 30300; k < 30320; k++ {
		switch k % 4 {
		case 0:
			step(b, "DELETE FROM k WHERE id = ?", k)
		case 1:
			step(b, "UPDATE k SET s = ? WHERE id = ?", "b", k)
		case 2:
			step(b, "INSERT INTO k (id, v, s, u) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE v = v + 1", k, 0, "n", fmt.Sprint("n", k))
		}
		if got, want := execDescribed(pa.ExecContext(ctx, k)), execDescribed(pr.ExecContext(ctx, k)); got != want {
			t.Errorf("a's execution on %d: sandbox %s, copy %s", k, got, want)
		}
		if got, want := describeRows(pb.QueryContext(ctx, k)), describeRows(ps.QueryContext(ctx, k)); got != want {
			t.Errorf("b's execution on %d: sandbox %s, copy %s", k, got, want)
		}
	}
	if !lazyFilling(t, b, "rt28pnm.k") {
		t.Error("the fork is whole: an execution waited for the fill")
	}
	h.setFillRate(0)
	rt28pSum(t, b, ref)
	if got := queryString(t, root, "SELECT CONCAT(COUNT(*), '/', SUM(v)) FROM rt28pnm.k WHERE id BETWEEN 30300 AND 30319"); got != "20/-20" {
		t.Errorf("production's rows 30300..30319: %s", got)
	}
}

// TestRT28pLeastPrivilege: the proxy's least-privilege account (SELECT on
// production): executions copy rows up from the snapshot and from the
// staging table, and the fork ends equal to the copy.
func TestRT28pLeastPrivilege(t *testing.T) {
	db, least := sandboxProxy(t, "transparent", func(c *proxy.Config) {
		c.Sandbox.LazyForkRows, c.Sandbox.LazyForkRate = 1, 1000
	})
	root := openDB(t, db.DSN(""))
	readOnlyDatabase(t, root, "rt28plp")
	setUp(t, root, []string{"DROP DATABASE IF EXISTS rt28plp_ref", "CREATE DATABASE rt28plp_ref"}, "DROP DATABASE IF EXISTS rt28plp_ref")
	for _, d := range []string{"rt28plp", "rt28plp_ref"} {
		c := conn(t, root)
		mustExecC(t, c, "USE "+d)
		for _, q := range rt28pSetup {
			mustExecC(t, c, q)
		}
	}
	sb := conn(t, openDB(t, least.userDSN(sandboxUser, "rt28plp")))
	ref := conn(t, openDB(t, directDSN(db, "rt28plp_ref")))
	mustExecC(t, sb, "SANDBOX CREATE rt28plp_box")
	t.Cleanup(func() { _, _ = sb.ExecContext(context.Background(), "SANDBOX DISCARD rt28plp_box") })
	rt28pRunAll(t, least, sb, ref, []rt28pCase{{"UPDATE k SET s = ? WHERE id = ?", []any{"first", 1}}})
	if !lazyFilling(t, sb, "rt28plp.k") {
		t.Fatal("k is not filling")
	}
	rt27bStaged(t, least, "rt28plp_box", 2000)
	mustExecC(t, root, "UPDATE rt28plp.k SET v = -1 WHERE id IN (-149990, -149980, 30001, 30002)")
	rt28pRunAll(t, least, sb, ref, []rt28pCase{
		{"SELECT id, v FROM k WHERE id = ?", []any{-149990}},
		{"UPDATE k SET v = v + ? WHERE id IN (?, ?)", []any{10, -149980, 30001}},
		{"DELETE FROM k WHERE id = ?", []any{-149970}},
		{"INSERT INTO k (id, v, s, u) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE v = v + 1", []any{30002, 1, "n", "u30002"}},
		{"SELECT id, v FROM k WHERE u = ?", []any{"U30003"}},
		{"SELECT id, v, s FROM k WHERE id IN (?, ?, ?, ?, ?, ?) ORDER BY id", []any{-149990, -149980, -149970, 30001, 30002, 30003}},
	})
	if ups := rt27bUps(t, least, "rt28plp_box"); ups["staging"] == 0 || ups["snapshot"] == 0 {
		t.Logf("copy-ups %v: not both sources", ups)
	}
	least.setFillRate(0)
	rt28pSum(t, sb, ref)
}

// TestRT28pManyRowsPinned: an integer compared with the VARCHAR unique
// key pins every row whose text reads as that number: 'u…' reads as 0, so
// u = 0 is every row of the table (a copy answers all 200,000). It copied
// them all up in one anonymous block, larger than the server's
// max_allowed_packet: the server dropped the fill's copy-up connection
// and the statement got 1105 where a copy answers its rows; every later
// statement that needed a copy-up got the same 1105 until the fill ended.
// Now such a statement waits for the fill (the rate is lifted while it
// waits), and copy-ups go on after it.
func TestRT28pManyRowsPinned(t *testing.T) {
	h, root := rt27Env(t, 1000)
	sb, ref := rt27Pair(t, h, root, "rt28pmr", rt28pSetup)
	rt28pRunAll(t, h, sb, ref, []rt28pCase{{"UPDATE k SET s = ? WHERE id = ?", []any{"first", 1}}})
	if !lazyFilling(t, sb, "rt28pmr.k") {
		t.Fatal("k is not filling")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	count := func(c *sql.Conn) string {
		rows, err := c.QueryContext(ctx, "SELECT id FROM k WHERE u = ?", 0)
		if err != nil {
			return "error " + mysqlErr(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		return fmt.Sprint(n, " rows")
	}
	// A copy-up before it runs while the fill goes on.
	rt28pRunAll(t, h, sb, ref, []rt28pCase{{"SELECT id, v, s FROM k WHERE id = ?", []any{30001}}})
	if !lazyFilling(t, sb, "rt28pmr.k") {
		t.Fatal("k is not filling")
	}
	answered := make(chan string, 1)
	go func() { answered <- count(sb) }()
	time.Sleep(time.Second) // ordering only: it waits for the fill, which the lift below lets end
	h.setFillRate(0)
	got := <-answered
	if want := count(ref); got != want {
		t.Errorf("SELECT id FROM k WHERE u = 0 (an integer parameter): sandbox %s, copy %s", got, want)
	}
	rt28pRunAll(t, h, sb, ref, []rt28pCase{
		{"SELECT id, v, s FROM k WHERE id = ?", []any{30001}},
		{"SELECT id, v, s FROM k WHERE id = 30002", nil},
	})
	rt28pSum(t, sb, ref)
}
