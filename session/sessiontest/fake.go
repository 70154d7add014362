// Package sessiontest is an in-memory stand-in for the upstream server as
// the sandbox manager (package session) sees it: through side connections.
//
// An Upstream holds what the manager reads back — schemas, tables with the
// metadata information_schema shows (type, engine, rows, bytes, columns,
// triggers, view definitions), stored and loadable functions, the rows of
// the registry tables the manager creates, user-level locks — and answers
// the statements the manager and the forker send, as MariaDB 10.11 would,
// no more: it is not a SQL engine, and a statement it does not know fails
// with an error that is not a server error (Unknown lists them). Every
// statement is logged with the schemas it changed, so tests can assert
// which statements ran (a fork's CREATE TABLE … LIKE and INSERT … SELECT on
// the right physical names) and that production was only ever read
// (ProductionWrites).
//
// Rules (On) script answers and failures on top of that: a server error
// with its code and SQLSTATE, rows, an affected count, a broken connection,
// or a hook that runs before the statement — each for every match, the
// Nth, or the first n.
//
// A typical test:
//
//	up := sessiontest.NewUpstream()
//	up.AddTable(sessiontest.Table{DB: "app", Name: "t", Rows: 3})
//	m, err := session.New(ctx, session.Config{}, up.Dialer(), zap.NewNop())
//	…
//	if w := up.ProductionWrites("_sqlfork"); len(w) > 0 { t.Errorf("wrote production: %q", w) }
package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// DefaultVersion is the VERSION() an Upstream reports unless SetVersion
// says otherwise.
const DefaultVersion = "10.11.6-MariaDB-0+deb12u1"

// DefaultGrants returns the grants an Upstream reports for its account
// unless SetGrants says otherwise: the least-privilege set of
// docs/SANDBOXES.md, which cannot change production.
func DefaultGrants() []string {
	return []string{
		"GRANT USAGE ON *.* TO `sqlfork`@`%`",
		"GRANT SELECT, SHOW VIEW ON `app`.* TO `sqlfork`@`%`",
		"GRANT SELECT ON `mysql`.`func` TO `sqlfork`@`%`",
		"GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO `sqlfork`@`%`",
	}
}

// ServerError is an error the fake server answered with, shaped like the
// proxy's own (proxy/query.go): the connection stays usable, and
// errors.As finds the *mysql.MyError with code, SQLSTATE and message.
type ServerError struct{ *mysql.MyError }

// ServerError marks errors after which a connection can be reused.
func (ServerError) ServerError() bool { return true }

// Unwrap returns the MySQL error.
func (e ServerError) Unwrap() error { return e.MyError }

// Err is a server error with the given code, SQLSTATE and message.
func Err(code uint16, state, format string, args ...any) error {
	return ServerError{&mysql.MyError{Code: code, State: state, Message: fmt.Sprintf(format, args...)}}
}

// ErrBroken is what a statement on a broken or closed connection fails
// with: not a server error, so the manager drops the connection.
var ErrBroken = errors.New("sessiontest: connection broken")

// UnknownError is the error for a statement the fake does not know. It is
// not a server error: the manager drops the connection, and the test sees
// the statement in Unknown.
type UnknownError struct{ SQL string }

// Error names the statement.
func (e *UnknownError) Error() string { return "sessiontest: no rule or emulation for " + e.SQL }

// Code returns the MySQL error code, SQLSTATE and message of err: of a
// refusal of the proxy (anything with a MySQLError method) or of a
// server error. ok is false for other errors.
func Code(err error) (code uint16, state, msg string, ok bool) {
	var me interface {
		MySQLError() (uint16, string, string)
	}
	if errors.As(err, &me) {
		code, state, msg = me.MySQLError()
		return code, state, msg, true
	}
	var my *mysql.MyError
	if errors.As(err, &my) {
		return my.Code, my.State, my.Message, true
	}
	return 0, "", "", false
}

// Stmt is one statement a side connection ran.
type Stmt struct {
	// Conn is the connection's number (1 for the first dialled).
	Conn int
	SQL  string
	// Query is set for Query, unset for Exec.
	Query bool
	// Err is the error it failed with (nil on success).
	Err error
	// Changed are the schemas it wrote to (or meant to: a DROP … IF
	// EXISTS of nothing counts).
	Changed []string
}

// Upstream is the fake server: its state, its rules and the log of what
// its side connections ran. Its methods are safe for concurrent use.
type Upstream struct {
	mu            sync.Mutex
	version       string
	lctn          string
	grants        []string
	triggerGrants []string
	schemas       map[string]bool
	objects       map[string]*object // by objectKey
	routines      [][2]string        // stored functions: schema, name
	rules         []*Rule
	log           []Stmt
	logged        chan struct{} // closed and replaced at every log entry
	conns         int           // connections dialled
	open          int
	failDials     []error

	locks     map[string]*userLock
	lockFreed chan struct{} // closed and replaced at every release
}

// userLock is a GET_LOCK lock: its holder and how often it took it.
type userLock struct {
	owner *FakeSide
	count int
}

// NewUpstream returns a fake MariaDB 10.11 with lower_case_table_names=0,
// the DefaultGrants, the schemas information_schema and mysql (with an
// empty mysql.func) and no production data: add it with AddTable.
func NewUpstream() *Upstream {
	u := &Upstream{version: DefaultVersion, lctn: "0", grants: DefaultGrants(), schemas: map[string]bool{},
		objects: map[string]*object{}, logged: make(chan struct{}), locks: map[string]*userLock{},
		lockFreed: make(chan struct{})}
	u.schemas["information_schema"] = true
	for name, cols := range infoSchemaColumns {
		u.putObject(&object{Table: Table{DB: "information_schema", Name: name, Type: "SYSTEM VIEW", Columns: columns(cols...)}})
	}
	u.schemas["mysql"] = true
	u.putObject(&object{Table: Table{DB: "mysql", Name: "func", Type: "BASE TABLE", Engine: "Aria",
		Columns: columns("name", "ret", "dl", "type")}, stored: true, cols: []string{"name", "ret", "dl", "type"},
		keys: [][]string{{"name"}}})
	return u
}

// SetVersion sets what VERSION() returns ("… seekdb …" makes the manager
// fork with FORK TABLE).
func (u *Upstream) SetVersion(v string) { u.mu.Lock(); u.version = v; u.mu.Unlock() }

// SetLowerCaseTableNames sets @@lower_case_table_names (0, 1 or 2).
func (u *Upstream) SetLowerCaseTableNames(n int) { u.mu.Lock(); u.lctn = fmt.Sprint(n); u.mu.Unlock() }

// SetGrants sets the lines SHOW GRANTS FOR CURRENT_USER() returns.
func (u *Upstream) SetGrants(lines ...string) {
	u.mu.Lock()
	u.grants = append([]string(nil), lines...)
	u.mu.Unlock()
}

// SetTriggerGrants sets the schemas (grant patterns, "*" for a global
// grant) on which the account holds TRIGGER, as information_schema's
// USER_PRIVILEGES and SCHEMA_PRIVILEGES show them (none by default).
func (u *Upstream) SetTriggerGrants(schemas ...string) {
	u.mu.Lock()
	u.triggerGrants = append([]string(nil), schemas...)
	u.mu.Unlock()
}

// AddTable adds a table (or view, or sequence) and its schema. Type
// defaults to BASE TABLE, Engine to InnoDB (none for views), Columns to
// one column `id`.
func (u *Upstream) AddTable(t Table) {
	if t.Type == "" {
		t.Type = "BASE TABLE"
	}
	if t.Engine == "" && t.Type != "VIEW" {
		t.Engine = "InnoDB"
	}
	if t.Columns == nil {
		t.Columns = columns("id")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.schemas[t.DB] = true
	u.putObject(&object{Table: t})
}

// AddView adds a view defined as def (VIEW_DEFINITION; "" when the
// account may not see it) and its schema.
func (u *Upstream) AddView(db, name, def string) {
	u.AddTable(Table{DB: db, Name: name, Type: "VIEW", Definition: def})
}

// AddFunction adds a stored function db.name.
func (u *Upstream) AddFunction(db, name string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.routines = append(u.routines, [2]string{db, name})
}

// AddUDF adds a loadable function (a row of mysql.func).
func (u *Upstream) AddUDF(name string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	f := u.objects[objectKey("mysql", "func")]
	f.rows = append(f.rows, map[string]*string{"name": &name})
}

// FailDials makes the next n dials fail with err (a *mysql.MyError, say,
// for an upstream refusing connections).
func (u *Upstream) FailDials(n int, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for range n {
		u.failDials = append(u.failDials, err)
	}
}

// Dialer returns a sideconn.Dialer whose connections are this server's.
func (u *Upstream) Dialer() sideconn.Dialer {
	return func(ctx context.Context) (sideconn.Conn, error) {
		c, err := u.Dial(ctx)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// Dial opens a side connection.
func (u *Upstream) Dial(ctx context.Context) (*FakeSide, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.failDials) > 0 {
		err := u.failDials[0]
		u.failDials = u.failDials[1:]
		return nil, err
	}
	u.conns++
	u.open++
	return &FakeSide{u: u, id: u.conns}, nil
}

// Dials is how many connections were dialled successfully.
func (u *Upstream) Dials() int { u.mu.Lock(); defer u.mu.Unlock(); return u.conns }

// OpenConns is how many connections are open (dialled and not closed or
// broken).
func (u *Upstream) OpenConns() int { u.mu.Lock(); defer u.mu.Unlock(); return u.open }

// Exec runs sql on the server's state as a side connection would, without
// logging it: for tests that set up or age state (UPDATE the registry).
func (u *Upstream) Exec(sql string) (uint64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	r, err := u.emulate(sql)
	return r.affected, err
}

// Query runs sql like Exec and returns its rows: for tests that read the
// registry back.
func (u *Upstream) Query(sql string) ([][]*string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	r, err := u.emulate(sql)
	return r.rows, err
}

// HasSchema reports whether the schema db exists.
func (u *Upstream) HasSchema(db string) bool { u.mu.Lock(); defer u.mu.Unlock(); return u.schemas[db] }

// HasTable reports whether db.name exists (a table, view or sequence).
func (u *Upstream) HasTable(db, name string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.objects[objectKey(db, name)] != nil
}

// Describe returns the metadata of db.name (ok false when it does not
// exist): a fork's rows, bytes and AUTO_INCREMENT, say.
func (u *Upstream) Describe(db, name string) (t Table, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if o := u.objects[objectKey(db, name)]; o != nil {
		return o.Table, true
	}
	return Table{}, false
}

// Schemas lists the schemas, sorted.
func (u *Upstream) Schemas() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for s := range u.schemas {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Log returns every statement run so far, in order of completion.
func (u *Upstream) Log() []Stmt {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Stmt(nil), u.log...)
}

// ClearLog forgets the statements run so far.
func (u *Upstream) ClearLog() { u.mu.Lock(); u.log = nil; u.mu.Unlock() }

// Matching returns the statements run so far (successful or not) whose
// text matches the regular expression re.
func (u *Upstream) Matching(re string) []string {
	rx := regexp.MustCompile(re)
	var out []string
	for _, s := range u.Log() {
		if rx.MatchString(s.SQL) {
			out = append(out, s.SQL)
		}
	}
	return out
}

// Count is len(Matching(re)).
func (u *Upstream) Count(re string) int { return len(u.Matching(re)) }

// Wait blocks until a statement matching re has run (or ran before), or
// ctx ends.
func (u *Upstream) Wait(ctx context.Context, re string) error {
	rx := regexp.MustCompile(re)
	for {
		u.mu.Lock()
		for _, s := range u.log {
			if rx.MatchString(s.SQL) {
				u.mu.Unlock()
				return nil
			}
		}
		ch := u.logged
		u.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for a statement matching %q: %w", re, ctx.Err())
		}
	}
}

// ProductionWrites returns the statements that changed a schema whose name
// does not start with prefix (the proxy's prefix, "_sqlfork" by default).
func (u *Upstream) ProductionWrites(prefix string) []string {
	var out []string
	for _, s := range u.Log() {
		for _, db := range s.Changed {
			if !strings.HasPrefix(db, prefix) {
				out = append(out, s.SQL)
				break
			}
		}
	}
	return out
}

// Check fails the test on the statements the fake did not know (Unknown),
// on writes to production (ProductionWrites of prefix) and on connections
// left open (OpenConns): what a test of code on side connections asserts
// when it ends.
func (u *Upstream) Check(t testing.TB, prefix string) {
	t.Helper()
	if n := u.OpenConns(); n != 0 {
		t.Errorf("%d side connections open after Close", n)
	}
	if s := u.Unknown(); len(s) > 0 {
		t.Errorf("statements the fake does not know:\n%s", strings.Join(s, "\n"))
	}
	if w := u.ProductionWrites(prefix); len(w) > 0 {
		t.Errorf("production was written:\n%s", strings.Join(w, "\n"))
	}
}

// Unknown returns the statements the fake did not know (no rule answered
// them and it does not emulate them).
func (u *Upstream) Unknown() []string {
	var out []string
	for _, s := range u.Log() {
		var ue *UnknownError
		if errors.As(s.Err, &ue) {
			out = append(out, s.SQL)
		}
	}
	return out
}

// Rule scripts the answer to statements whose text matches a regular
// expression; rules are tried in the order they were added, before the
// emulation, and the first that answers wins. Set when it fires (Nth,
// Times) first, then what it does (Fail, Rows, Affected, Break, Before):
// the action arms the rule, which counts no match before it (a statement
// another goroutine runs while the rule is being set is not its nth). An
// armed rule counts every statement it matches, also one an earlier rule
// answered.
type Rule struct {
	u      *Upstream
	re     *regexp.Regexp
	nth    int // fire on this match only (0: any)
	times  int // fire on the first this many matches (0: all)
	seen   int
	act    func(c *FakeSide) (result, error)
	before func(sql string)
}

// On adds a rule for statements matching the regular expression re. A rule
// without an action does nothing.
func (u *Upstream) On(re string) *Rule {
	r := &Rule{u: u, re: regexp.MustCompile(re)}
	u.mu.Lock()
	u.rules = append(u.rules, r)
	u.mu.Unlock()
	return r
}

// Nth makes the rule fire on the nth matching statement only (from 1).
func (r *Rule) Nth(n int) *Rule { r.u.mu.Lock(); r.nth = n; r.u.mu.Unlock(); return r }

// Times makes the rule fire on the first n matching statements only.
func (r *Rule) Times(n int) *Rule { r.u.mu.Lock(); r.times = n; r.u.mu.Unlock(); return r }

// Fail answers with a server error.
func (r *Rule) Fail(code uint16, state, msg string) {
	r.set(func(*FakeSide) (result, error) { return result{}, Err(code, state, "%s", msg) })
}

// Rows answers with rows (see Row).
func (r *Rule) Rows(rows ...[]*string) {
	r.set(func(*FakeSide) (result, error) { return result{rows: rows}, nil })
}

// Affected answers OK with n affected rows, changing nothing.
func (r *Rule) Affected(n uint64) {
	r.set(func(*FakeSide) (result, error) { return result{affected: n}, nil })
}

// Break breaks the connection: the statement and every later one on it
// fail with ErrBroken, and its user-level locks are released.
func (r *Rule) Break() {
	r.set(func(c *FakeSide) (result, error) {
		c.u.closeLocked(c)
		return result{}, ErrBroken
	})
}

// Before runs f (outside the server's lock: it may block, to hold a
// statement while the test does something else) before the statement,
// which then runs as if the rule were not there.
func (r *Rule) Before(f func(sql string)) {
	r.u.mu.Lock()
	r.before = f
	r.u.mu.Unlock()
}

func (r *Rule) set(act func(c *FakeSide) (result, error)) {
	r.u.mu.Lock()
	r.act = act
	r.u.mu.Unlock()
}

// fires counts a match of an armed rule and reports whether the rule acts
// on it.
func (r *Rule) fires() bool {
	if r.act == nil && r.before == nil {
		return false // not armed yet
	}
	r.seen++
	switch {
	case r.nth > 0:
		return r.seen == r.nth
	case r.times > 0:
		return r.seen <= r.times
	}
	return true
}

// Row makes a row for Rule.Rows: nil is NULL, a string itself, anything
// else as fmt.Sprint writes it (testkit.Row).
func Row(vals ...any) []*string { return testkit.Row(vals...) }

// FakeSide is a side connection to an Upstream; it implements
// sideconn.Conn.
type FakeSide struct {
	u      *Upstream
	id     int
	closed bool
}

var _ sideconn.Conn = (*FakeSide)(nil)

// ID is the connection's number, as Stmt.Conn gives it.
func (c *FakeSide) ID() int { return c.id }

// Exec runs a statement and returns the rows it affected.
func (c *FakeSide) Exec(ctx context.Context, sql string) (uint64, error) {
	r, err := c.run(ctx, sql, false)
	return r.affected, err
}

// Query runs a statement and returns its rows.
func (c *FakeSide) Query(ctx context.Context, sql string) ([][]*string, error) {
	r, err := c.run(ctx, sql, true)
	return r.rows, err
}

// Close closes the connection, releasing its user-level locks.
func (c *FakeSide) Close() error {
	c.u.mu.Lock()
	defer c.u.mu.Unlock()
	c.u.closeLocked(c)
	return nil
}

// closeLocked closes c (u.mu held).
func (u *Upstream) closeLocked(c *FakeSide) {
	if c.closed {
		return
	}
	c.closed = true
	u.open--
	released := false
	for name, l := range u.locks {
		if l.owner == c {
			delete(u.locks, name)
			released = true
		}
	}
	if released {
		close(u.lockFreed)
		u.lockFreed = make(chan struct{})
	}
}

// run runs one statement: hooks, then a rule's answer or the emulation;
// then logs it.
func (c *FakeSide) run(ctx context.Context, sql string, query bool) (res result, err error) {
	u := c.u
	u.mu.Lock()
	var hooks []func(string)
	var act func(*FakeSide) (result, error)
	for _, r := range u.rules {
		if !r.re.MatchString(sql) || !r.fires() {
			continue
		}
		if r.before != nil {
			hooks = append(hooks, r.before)
		}
		if r.act != nil && act == nil {
			act = r.act
		}
	}
	u.mu.Unlock()
	for _, h := range hooks {
		h(sql)
	}
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case lockCall.MatchString(sql) && act == nil:
		res, err = u.getLock(ctx, c, sql)
	default:
		u.mu.Lock()
		switch {
		case c.closed:
			err = ErrBroken
		case act != nil:
			res, err = act(c)
		default:
			res, err = u.emulateFor(c, sql)
		}
		u.mu.Unlock()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	st := Stmt{Conn: c.id, SQL: sql, Query: query, Err: err}
	if err == nil {
		st.Changed = res.changed
	} else {
		res = result{}
	}
	u.log = append(u.log, st)
	close(u.logged)
	u.logged = make(chan struct{})
	return res, err
}
