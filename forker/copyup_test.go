package forker

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// manyRowsConn is a snapshot that answers every read with rows rows, and a
// copy-up connection that counts what it is sent.
type manyRowsConn struct {
	rows   int
	mu     sync.Mutex
	reads  []string
	writes int
}

func (c *manyRowsConn) Exec(context.Context, string) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return 0, nil
}
func (c *manyRowsConn) Close() error { return nil }
func (c *manyRowsConn) Query(_ context.Context, q string) ([][]*string, error) {
	c.mu.Lock()
	c.reads = append(c.reads, q)
	c.mu.Unlock()
	out := make([][]*string, c.rows)
	for i := range out {
		v := "1"
		out[i] = []*string{&v}
	}
	return out, nil
}

// TestCopyUpRowsBounded: a copy-up reads at most maxUpRows+1 rows of the
// snapshot, and writes none when there are more (one block of them all
// could outgrow the server's max_allowed_packet and cost the fill its
// copy-up connection).
func TestCopyUpRowsBounded(t *testing.T) {
	l := Lazy{Capture: Capture{Shape: Shape{Key: []string{"id"}, Columns: []Column{{Name: "id", Type: "int(11)", DataType: "int"}}}}}
	for _, n := range []int{maxUpRows, maxUpRows + 1} {
		c := &manyRowsConn{rows: n}
		f := &Filler{l: l, snap: c, w: c, gate: newSnapGate(), done: make(chan struct{}), claimed: map[string]uint64{}, stmt: "SELECT `id` FROM `t` WHERE "}
		_, err := f.CopyUp(context.Background(), "`u` = 0", nil, nil)
		if len(c.reads) != 1 || !strings.HasSuffix(c.reads[0], "(`u` = 0) LIMIT 4097") {
			t.Fatalf("%d rows: reads %q", n, c.reads)
		}
		switch {
		case n > maxUpRows && (err == nil || c.writes != 0):
			t.Errorf("%d rows: copied up (err %v, %d writes)", n, err, c.writes)
		case n <= maxUpRows && (err != nil || c.writes != 1):
			t.Errorf("%d rows: err %v, %d writes", n, err, c.writes)
		}
	}
}
