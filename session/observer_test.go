package session_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// recorder is a session.Observer that keeps the events it is told; the
// registry's checks and lease waits, which come with every statement of a
// shared sandbox, apart in sync.
type recorder struct {
	mu     sync.Mutex
	events []string
	sync   []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *recorder) Discarded(reason string) { r.add("discarded %s", reason) }
func (r *recorder) Filled(int64, int64)     {}

func (r *recorder) Forked(strategy string, schemaOnly bool, _ time.Duration, rows, bytes int64) {
	r.add("forked %s schema-only=%v rows=%d bytes=%d", strategy, schemaOnly, rows, bytes)
}
func (r *recorder) ForkFailed(strategy, cause string)   { r.add("fork failed %s %s", strategy, cause) }
func (r *recorder) SideConnTimedOut()                   { r.add("side connection timed out") }
func (r *recorder) TransactionRestarted(outcome string) { r.add("transaction %s", outcome) }
func (r *recorder) RegistryChecked(result string)       { r.addSync("registry " + result) }
func (r *recorder) LeasesAwaited(time.Duration)         { r.addSync("leases awaited") }
func (r *recorder) Diffed(string, time.Duration)        {}
func (r *recorder) Promoted(string, string, int)        {}
func (r *recorder) Planned(time.Duration)               {}

func (r *recorder) addSync(event string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sync = append(r.sync, event)
}

// syncEvents returns the registry checks and lease waits told so far.
func (r *recorder) syncEvents() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sync...)
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// TestObserver: forks, failed forks and discards are reported, by cause
// and reason, for the metrics.
func TestObserver(t *testing.T) {
	e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) {
		up.AddTable(sessiontest.Table{DB: "app", Name: "trg", Type: "SYSTEM VERSIONED"})
	})
	r := observe(e)
	s := e.transparent("u")
	e.mustPlan(s, "UPDATE t SET a = 1")
	e.mustPlan(s, "TRUNCATE TABLE u")
	if _, err := plan(e.ctx, s, "UPDATE trg SET id = 1"); err == nil {
		t.Error("a system-versioned table was forked")
	}
	e.mustPlan(s, "SANDBOX DISCARD")
	e.mustPlan(s, "UPDATE t SET a = 1")
	s.Close()
	want := []string{
		"forked copy schema-only=false rows=3 bytes=16384",
		"forked copy schema-only=true rows=0 bytes=0",
		"fork failed copy refused",
		"discarded discarded",
		"forked copy schema-only=false rows=3 bytes=16384",
		"discarded last_connection",
	}
	if got := r.all(); !slices.Equal(got, want) {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
}

// TestForkWithoutSideConnection: a fork that gets no side connection fails
// the statement with what to do: 1205 when all are busy past the queue
// timeout, the upstream's own error when it refuses a new one.
func TestForkWithoutSideConnection(t *testing.T) {
	copying := newGate()
	defer copying.open()
	e := newEnv(t, session.Config{SideConnections: 1, ForkQueueTimeout: 20 * time.Millisecond}, func(up *sessiontest.Upstream) {
		up.On(`^INSERT INTO .* SELECT `).Nth(1).Before(copying.hook)
		up.On(`^CREATE TABLE .* LIKE ` + "`app`.`u`").Nth(1).Break()
	})
	r := observe(e)
	a, b := e.transparent("u"), e.transparent("u")
	done := make(chan error, 1)
	go func() { _, err := plan(e.ctx, a, "UPDATE t SET a = 1"); done <- err }()
	copying.reached(t) // a holds the only side connection
	_, err := plan(e.ctx, b, "UPDATE t SET a = 1")
	wantCode(t, err, 1205, "HY000", "waiting for one of the proxy's 1 side connections")
	copying.open()
	if err := await(t, done, "a's fork"); err != nil {
		t.Fatal(err)
	}
	// The connection breaks; the upstream refuses a new one.
	e.up.FailDials(1, &mysql.MyError{Code: 1040, State: "08004", Message: "Too many connections"})
	if _, err := plan(e.ctx, b, "UPDATE u SET t_id = 1"); err == nil {
		t.Fatal("forked on a broken connection")
	}
	_, err = plan(e.ctx, b, "UPDATE u SET t_id = 1")
	wantCode(t, err, 1040, "08004", "the proxy's 1 side connections")
	e.mustPlan(b, "UPDATE u SET t_id = 1")
	want := []string{"side connection timed out", "fork failed copy queue_timeout", "forked copy schema-only=false rows=3 bytes=16384",
		"fork failed copy error", "fork failed copy connect", "forked copy schema-only=false rows=10 bytes=32768"}
	if got := r.all(); !slices.Equal(got, want) {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
}

// TestCaseInsensitiveNames: with lower_case_table_names=1 a table has one
// fork however a statement spells it, named in lower case.
func TestCaseInsensitiveNames(t *testing.T) {
	e := newEnv(t, session.Config{}, func(up *sessiontest.Upstream) { up.SetLowerCaseTableNames(1) })
	s := e.transparent("u")
	id := e.idOf(s)
	for _, sql := range []string{"UPDATE APP.T SET a = 1", "update app.t set a = 2", "DELETE FROM App.T"} {
		p := e.mustPlan(s, sql)
		if !strings.Contains(p.SQL, "`"+physDB(id, "app")+"`.`t`") {
			t.Errorf("%q sent as %q", sql, p.SQL)
		}
	}
	if n := e.count(`^CREATE TABLE .* LIKE `); n != 1 {
		t.Errorf("%d forks, want 1", n)
	}
	if kind, _, _ := e.tableRow(id, "app", "t"); kind != "fork" {
		t.Errorf("registry row %q under app.t", kind)
	}
}
