package testkit

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Script is a scripted database connection for tests of code that talks to
// the upstream through a side connection (it has the methods of
// sideconn.Conn and forker.Conn: Exec, Query, Close). Each statement is
// answered by the last added Answer whose pattern matches its text —
// exactly (Exact), by prefix (Prefix) or by regular expression (Match) —
// and that has answers left (Times); a statement no answer matches fails
// with an *Unscripted error, and Unscripted lists them. Every statement is
// logged (Log). Its methods are safe for concurrent use.
type Script struct {
	mu      sync.Mutex
	answers []*Answer
	log     []string
	unknown []string
	closes  int
}

// Answer is what a Script answers the statements one pattern matches with:
// rows (Rows), an affected count (Affected) or an error (Fail); nothing
// set answers OK with no rows.
type Answer struct {
	s        *Script
	what     string
	match    func(string) bool
	rows     [][]*string
	affected uint64
	err      error
	left     int // answers left (-1: no limit)
}

// Unscripted is the error of a statement no answer of a Script matches.
type Unscripted struct{ SQL string }

// Error names the statement.
func (e *Unscripted) Error() string { return "testkit: no scripted answer for " + e.SQL }

// NewScript is a Script with no answers.
func NewScript() *Script { return &Script{} }

// Exact answers the statements whose text is sql.
func (s *Script) Exact(sql string) *Answer {
	return s.add("exact "+sql, func(q string) bool { return q == sql })
}

// Prefix answers the statements whose text starts with prefix.
func (s *Script) Prefix(prefix string) *Answer {
	return s.add("prefix "+prefix, func(q string) bool { return strings.HasPrefix(q, prefix) })
}

// Match answers the statements the regular expression re matches.
func (s *Script) Match(re string) *Answer {
	rx := regexp.MustCompile(re)
	return s.add("regexp "+re, rx.MatchString)
}

func (s *Script) add(what string, match func(string) bool) *Answer {
	a := &Answer{s: s, what: what, match: match, left: -1}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers = append(s.answers, a)
	return a
}

// Rows answers with rows (see Row).
func (a *Answer) Rows(rows ...[]*string) *Answer { return a.set(func() { a.rows = rows }) }

// Affected answers OK with n rows affected.
func (a *Answer) Affected(n uint64) *Answer { return a.set(func() { a.affected = n }) }

// Fail answers with err.
func (a *Answer) Fail(err error) *Answer { return a.set(func() { a.err = err }) }

// Times makes the answer answer n statements only; after them it matches
// none, and an answer added before it answers again.
func (a *Answer) Times(n int) *Answer { return a.set(func() { a.left = n }) }

// set changes the answer under its Script's lock.
func (a *Answer) set(change func()) *Answer {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	change()
	return a
}

// Row makes a row for Rows: nil is NULL, a string itself, anything else as
// fmt.Sprint writes it.
func Row(vals ...any) []*string {
	out := make([]*string, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
		case string:
			out[i] = &v
		default:
			t := fmt.Sprint(v)
			out[i] = &t
		}
	}
	return out
}

// answer finds sql's answer and logs sql.
func (s *Script) answer(ctx context.Context, sql string) ([][]*string, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, sql)
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	for _, a := range slices.Backward(s.answers) {
		if a.left == 0 || !a.match(sql) {
			continue
		}
		if a.left > 0 {
			a.left--
		}
		if a.err != nil {
			return nil, 0, a.err
		}
		return slices.Clone(a.rows), a.affected, nil
	}
	s.unknown = append(s.unknown, sql)
	return nil, 0, &Unscripted{SQL: sql}
}

// Exec runs a statement: its answer's affected count or error.
func (s *Script) Exec(ctx context.Context, sql string) (uint64, error) {
	_, n, err := s.answer(ctx, sql)
	return n, err
}

// Query runs a statement: its answer's rows or error.
func (s *Script) Query(ctx context.Context, sql string) ([][]*string, error) {
	rows, _, err := s.answer(ctx, sql)
	return rows, err
}

// Close counts a close (Closes); the Script answers on after it.
func (s *Script) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closes++
	return nil
}

// Closes is how often Close was called.
func (s *Script) Closes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closes
}

// Log returns every statement run so far, in order.
func (s *Script) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Matching returns the statements run so far that the regular expression
// re matches.
func (s *Script) Matching(re string) []string {
	rx := regexp.MustCompile(re)
	var out []string
	for _, q := range s.Log() {
		if rx.MatchString(q) {
			out = append(out, q)
		}
	}
	return out
}

// Unscripted returns the statements no answer matched.
func (s *Script) Unscripted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unknown)
}

// ClearLog forgets the statements run so far (and those unmatched).
func (s *Script) ClearLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log, s.unknown = nil, nil
}
