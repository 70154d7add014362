package proxy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestInsertIDOfForkedInsertSelect: INSERT … SELECT into a fork whose
// answer says rows were inserted but last insert id 0 gets the id the
// capture's variable holds, read on the client's connection before the
// client has the OK, which keeps its affected rows, status, warnings and
// info; the next statement gets ROW_COUNT() and FOUND_ROWS() as the
// INSERT left them, and later ones FOUND_ROWS() until a query or a
// command that runs one. An answer with an id, or a fork whose trigger
// sets no variable, is left as it is.
func TestInsertIDOfForkedInsertSelect(t *testing.T) {
	h := newSandboxHarness(t, nil)
	body := "BEGIN INSERT INTO x; SET @`_sqlfork_ab_id` = NEW.`id`; END"
	h.side.On(`^SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_STATEMENT FROM information_schema\.TRIGGERS`).Times(3).
		Rows(sessiontest.Row("_sqlfork_ab_ai", "AFTER", "INSERT", body))
	h.side.On(`^SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_STATEMENT FROM information_schema\.TRIGGERS`).
		Rows(sessiontest.Row("_sqlfork_ab_ai", "AFTER", "INSERT", "INSERT INTO x"))
	const read = "SELECT @`_sqlfork_ab_id`, ROW_COUNT(), FOUND_ROWS(), @`_sqlfork_ab_id` := NULL LIMIT 1"
	okWith := func(id uint64) []byte {
		p := wire.AppendLenEnc(wire.AppendLenEnc([]byte{wire.OKHeader}, 2), id)
		return append(p, append([]byte{byte(wire.StatusAutocommit), 0, 1, 0}, "Records: 3  Duplicates: 1  Warnings: 1"...)...)
	}
	var seen []string
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		q := string(arg)
		switch {
		case cmd != wire.ComQuery:
			return false
		case strings.HasPrefix(q, "INSERT INTO `") && strings.Contains(q, "SELECT 7"):
			c.write(okWith(7))
		case strings.HasPrefix(q, "INSERT INTO `"):
			c.write(okWith(0))
		case q == read:
			c.resultSet([]string{"a", "b", "c", "d"}, [][]*string{{sp("620"), sp("2"), sp("3"), nil}})
		case strings.HasPrefix(q, "SELECT ROW_COUNT") || strings.HasPrefix(q, "SELECT GREATEST"):
			seen = append(seen, q)
			c.resultSet([]string{"r"}, [][]*string{{sp("0")}})
		default:
			return false
		}
		return true
	}
	cl := h.appClient("")
	insert := func(sql string, want []byte) {
		t.Helper()
		got, _ := cl.query(sql)
		if len(got) != 1 || !bytes.Equal(got[0], want) {
			t.Errorf("%s answered % x, want % x", sql, got, want)
		}
	}
	want620, _ := wire.WithInsertID(okWith(0), 620)
	insert("INSERT INTO t (id, a) SELECT id, a FROM u", want620)
	cl.query("SELECT ROW_COUNT(), FOUND_ROWS()")
	cl.query("SELECT ROW_COUNT(), FOUND_ROWS()") // after a query: the server's own
	insert("INSERT INTO t (id, a) SELECT id, a FROM u", want620)
	cl.send([]byte{wire.ComPing})
	cl.answer(wire.ShapeSingle, false)
	cl.query("SET @a = 1")
	cl.query("SELECT ROW_COUNT(), FOUND_ROWS()") // after a ping and a SET: FOUND_ROWS() still the INSERT's
	insert("INSERT INTO t (id, a) SELECT id, a FROM u", want620)
	cl.send([]byte{wire.ComStmtExecute, 9, 0, 0, 0, 0, 1, 0, 0, 0})
	cl.answer(wire.ShapeResults, false)
	cl.query("SELECT ROW_COUNT(), FOUND_ROWS()") // after an execution: the server's own
	insert("INSERT INTO t (id, a) SELECT 7, 1", okWith(7))
	insert("INSERT INTO t (id, a) SELECT id, a FROM u", okWith(0)) // a trigger body without the variable
	const rc, fr = "GREATEST(2, -9223372036854775807 - 1)", "GREATEST(-9223372036854775807 - 1, 3)"
	want := []string{"SELECT " + rc + ", " + fr, "SELECT ROW_COUNT(), FOUND_ROWS()", "SELECT ROW_COUNT(), " + fr,
		"SELECT ROW_COUNT(), FOUND_ROWS()"}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("upstream got:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if n := len(h.up.queries(read)); n != 3 {
		t.Errorf("the variable was read %d times, want 3", n)
	}
}

// TestWithInsertID: an OK payload with another last insert id keeps all
// else, whatever the lengths of the two ids.
func TestWithInsertID(t *testing.T) {
	ok := wire.AppendLenEnc(wire.AppendLenEnc([]byte{wire.OKHeader}, 300), 0)
	ok = append(ok, 0x02, 0x40, 3, 0, 5, 'h', 'e', 'l', 'l', 'o', 0xAA)
	for _, id := range []uint64{0, 620, 1 << 40} {
		p, good := wire.WithInsertID(ok, id)
		o, parsed := wire.ParseOK(p)
		if !good || !parsed || o.InsertID != id || o.Affected != 300 || o.Status != 0x4002 || o.Warnings != 3 ||
			!bytes.HasSuffix(p, ok[len(ok)-11:]) {
			t.Errorf("id %d: % x (%+v)", id, p, o)
		}
	}
	if _, good := wire.WithInsertID([]byte{wire.OKHeader, 1}, 5); good {
		t.Error("a short payload was patched")
	}
}
