package session_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// serverErr is an error the server answered, as the session's upstream
// reports one.
type serverErr struct{ e *mysql.MyError }

func (s serverErr) Error() string     { return s.e.Error() }
func (s serverErr) ServerError() bool { return true }
func (s serverErr) Unwrap() error     { return s.e }

// syntaxServer is a client's upstream connection whose server rejects as
// a syntax error the PREPARE of any text holding "bad", with
// ER_BAD_FIELD_ERROR one holding "nocol" and with
// ER_SUBQUERIES_NOT_SUPPORTED one holding "subq". Its sql_mode is mode.
type syntaxServer struct {
	mu      sync.Mutex
	status  uint16
	mode    string
	queries []string
}

func (f *syntaxServer) Query(_ context.Context, sql string) (*session.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, sql)
	if strings.HasPrefix(sql, "PREPARE ") {
		switch {
		case strings.Contains(sql, "bad"):
			return nil, serverErr{&mysql.MyError{Code: wire.ErParse, State: "42000", Message: "You have an error in your SQL syntax"}}
		case strings.Contains(sql, "nocol"):
			return nil, serverErr{&mysql.MyError{Code: wire.ErBadField, State: "42S22", Message: "Unknown column 'nocol'"}}
		case strings.Contains(sql, "subq"):
			return nil, serverErr{&mysql.MyError{Code: wire.ErSubqueriesNotSupported, State: "42000",
				Message: "HANDLER..READ does not support subqueries or stored functions"}}
		}
	}
	if strings.HasPrefix(sql, "PREPARE ") || strings.HasPrefix(sql, "DEALLOCATE ") {
		return &session.Result{}, nil
	}
	if strings.HasPrefix(sql, "SELECT COUNT(*) FROM information_schema.ENGINES WHERE ENGINE = ") {
		n := "0" // the engines it has: MyISAM, FEDERATED
		if strings.HasSuffix(sql, "= 'MyISAM'") || strings.HasSuffix(sql, "= 'FEDERATED'") {
			n = "1"
		}
		return &session.Result{Rows: [][]*string{{&n}}}, nil
	}
	if sql == "SHOW GRANTS" {
		g := "GRANT ALL PRIVILEGES ON *.* TO `u`@`%`"
		return &session.Result{Rows: [][]*string{{&g}}}, nil
	}
	if strings.HasPrefix(sql, "SELECT @@") && !strings.HasPrefix(sql, "SELECT @@SESSION.sql_mode") { // forker.WithModes
		row := make([]*string, strings.Count(sql, "@@"))
		for i := range row {
			row[i] = new(string)
		}
		return &session.Result{Rows: [][]*string{row}}, nil
	}
	mode, cs, iso, ro := f.mode, "utf8mb4", "REPEATABLE-READ", "0" // the session's variables
	return &session.Result{Rows: [][]*string{{&mode, &cs, &iso, &ro}}}, nil
}

func (f *syntaxServer) Resend(context.Context, []byte, string) ([]wire.OK, error) { return nil, nil }

func (f *syntaxServer) Status() uint16 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status
}

func (f *syntaxServer) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, q := range f.queries {
		if strings.HasPrefix(q, "PREPARE __sqlfork") || strings.HasPrefix(q, "DEALLOCATE PREPARE __sqlfork") {
			out = append(out, q)
		}
	}
	f.queries = nil
	return out
}

// TestServerVerdict: a statement the engine cannot parse gets the server's
// own syntax error when the server rejects it too, and the engine's refusal
// when the server reads it (or in a transaction, where the server is not
// asked).
func TestServerVerdict(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	f := &syntaxServer{}
	s := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "syntax", Upstream: f, DB: "app"})
	code := func(sql string) uint16 {
		t.Helper()
		_, err := s.Plan(e.ctx, sql, false)
		var r *rewrite.Refusal
		if !errors.As(err, &r) {
			t.Fatalf("%q: %v, want a refusal", sql, err)
		}
		return r.Code
	}
	for _, c := range []struct {
		what, sql string
		want      uint16
		asked     []string // what the server is sent, by prefix
	}{
		{"the server's syntax error", "DELETE FROM t WHERE bad bad", wire.ErParse, []string{"PREPARE"}},
		{"a text the server reads: the engine's 1105", "DELETE FROM t WHERE a = 1 ORDER", wire.ErUnknown, []string{"PREPARE", "DEALLOCATE"}},
		// One compound statement the engine reads as several: the server
		// is asked too.
		{"a compound statement the server rejects", "BEGIN NOT ATOMIC\n  IF SCALAR() bad;\nEND", wire.ErParse, []string{"PREPARE"}},
		// Several statements, one of them compound: the server is not
		// asked (PREPARE takes one statement).
		{"several statements: the engine's 1105", "SELECT 1; BEGIN NOT ATOMIC IF SCALAR() bad; END", wire.ErUnknown, nil},
	} {
		if got := code(c.sql); got != c.want {
			t.Errorf("%s: got %d, want %d", c.what, got, c.want)
		}
		q := f.asked()
		ok := len(q) == len(c.asked)
		for i := 0; ok && i < len(q); i++ {
			ok = strings.HasPrefix(q[i], c.asked[i])
		}
		if !ok {
			t.Errorf("%s: asked %q, want %q", c.what, q, c.asked)
		}
	}
	// Errors besides syntax errors by which the server rejects the text
	// whatever the sandbox holds: a subquery where the statement takes
	// none; a column named in GET DIAGNOSTICS, which names no table — but
	// not in a statement that names one, where production's table may
	// lack what the sandbox's has.
	for sql, want := range map[string]uint16{
		"HANDLER h READ a=((SELECT subq))":                    wire.ErSubqueriesNotSupported,
		"GET DIAGNOSTICS CONDITION nocol() @v = CLASS_ORIGIN": wire.ErBadField,
		"DELETE FROM t WHERE a = nocol ORDER":                 wire.ErUnknown,
	} {
		if c := code(sql); c != want {
			t.Errorf("%q: got %d, want %d", sql, c, want)
		}
		f.asked()
	}
	f.mu.Lock()
	f.status = inTrans
	f.mu.Unlock()
	if c := code("DELETE FROM t WHERE bad bad"); c != wire.ErUnknown {
		t.Errorf("in a transaction: got %d, want the engine's 1105", c)
	}
	if q := f.asked(); len(q) != 0 {
		t.Errorf("asked %q in a transaction", q)
	}
}

// TestIgnoreSpace: under the session's sql_mode IGNORE_SPACE (or ANSI),
// a function's keyword, whitespace and "(" is the function for the server,
// so a table so named is its syntax error, which the rewritten name would
// mend: the server's verdict is asked for.
func TestIgnoreSpace(t *testing.T) {
	for _, c := range []struct {
		mode string
		want uint16 // 0: planned
	}{
		{"", 0},
		{"IGNORE_SPACE", wire.ErParse},
		{"REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI", wire.ErParse},
	} {
		e := newEnv(t, session.Config{}, nil)
		f := &syntaxServer{mode: c.mode}
		s := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "space", Upstream: f, DB: "app"})
		_, err := s.Plan(e.ctx, "CREATE TABLE count (a INT) -- bad", false)
		var r *rewrite.Refusal
		switch {
		case c.want == 0 && err != nil:
			t.Errorf("sql_mode %q: %v", c.mode, err)
		case c.want != 0 && (!errors.As(err, &r) || r.Code != c.want):
			t.Errorf("sql_mode %q: %v, want %d", c.mode, err, c.want)
		}
	}
}

// TestUnknownEngine: a SET naming a storage engine the proxy cannot
// confine gets the server's own ER_UNKNOWN_STORAGE_ENGINE when the server
// has no such engine (main.parser), the proxy's refusal when it has one
// or the name is an alias of one.
func TestUnknownEngine(t *testing.T) {
	e := newEnv(t, session.Config{}, nil)
	f := &syntaxServer{}
	s := e.open(session.Options{User: "u", Mode: session.Transparent, Sandbox: "engine", Upstream: f, DB: "app"})
	for sql, want := range map[string]uint16{
		`set default_storage_engine = "a.MYISAM"`:       wire.ErUnknownStorageEngine,
		"set default_storage_engine = `a.MYISAM`":       wire.ErUnknownStorageEngine,
		"SET default_storage_engine = FEDERATED":        wire.ErOptionPreventsStatement,
		"SET default_storage_engine = 'merge'":          wire.ErOptionPreventsStatement,
		"SET default_storage_engine = 'it''s'":          wire.ErOptionPreventsStatement,
		"SET default_storage_engine = 'x', @a = 1":      wire.ErOptionPreventsStatement,
		"SET default_storage_engine = CONCAT('a', 'b')": wire.ErOptionPreventsStatement,
	} {
		_, err := s.Plan(e.ctx, sql, false)
		var r *rewrite.Refusal
		if !errors.As(err, &r) || r.Code != want {
			t.Errorf("%s: %v, want %d", sql, err, want)
		}
		if want == wire.ErUnknownStorageEngine && r != nil && r.Message != "Unknown storage engine 'a.MYISAM'" {
			t.Errorf("%s: message %q", sql, r.Message)
		}
	}
}
