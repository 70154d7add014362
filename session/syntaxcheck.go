package session

import (
	"context"
	"errors"
	"regexp"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// serverVerdict replaces the engine's refusal of a single statement it
// cannot parse (rewrite.Refusal.ServerCheck), or of an input that is one
// compound statement (compoundStatement), with the server's own error
// when the server rejects the text too: the client gets MariaDB's 1064
// (or unknown collation, …) for its syntax error, not the proxy's 1105.
// The server is asked with PREPARE on the session's own connection, which
// runs nothing; outside a transaction only, as PREPARE holds metadata
// locks on the tables it names until the transaction ends. Any other
// answer keeps the engine's refusal; err is returned unchanged when it is
// no such refusal.
func (s *Session) serverVerdict(ctx context.Context, sql string, opts rewrite.Options, err error) error {
	var r *rewrite.Refusal
	if !errors.As(err, &r) || !r.ServerCheck && !compoundStatement(sql) || s.up == nil || s.up.Status()&wire.StatusInTrans != 0 || !literalSafe(opts.Charset) {
		return err
	}
	if r.CheckText != "" {
		sql = r.CheckText
	}
	prepare, deallocate := rewrite.SyntaxCheck(sql, opts)
	_, qerr := s.up.Query(ctx, prepare)
	if qerr == nil {
		if _, derr := s.up.Query(ctx, deallocate); derr != nil && !isServerError(derr) {
			return derr
		}
		return err
	}
	var me *mysql.MyError
	if !isServerError(qerr) || !errors.As(qerr, &me) {
		return qerr // the connection broke
	}
	if r.ServerRejects(me.Code) {
		return &rewrite.Refusal{Code: me.Code, State: me.State, Message: me.Message}
	}
	return err
}

// compound is an anonymous compound statement sent alone: [label:] BEGIN
// NOT ATOMIC … END [label], whose body holds statements of its own.
var compound = regexp.MustCompile(`(?is)^\s*(?:\w+\s*:\s*)?BEGIN\s+NOT\s+ATOMIC\b.*\bEND(?:\s+\w+)?\s*;?\s*$`)

// compoundStatement reports whether sql is one compound statement (BEGIN
// NOT ATOMIC … END), which the server reads as one statement and PREPARE
// takes (running nothing), whatever its body holds; the engine reads it
// as several.
func compoundStatement(sql string) bool {
	return compound.MatchString(sql)
}
