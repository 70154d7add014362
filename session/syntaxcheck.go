package session

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/quote"
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
	if !errors.As(err, &r) || !r.ServerCheck && !compoundStatement(sql, opts) || s.up == nil || s.up.Status()&wire.StatusInTrans != 0 || !literalSafe(opts.Charset) {
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
// as several. The pattern takes the input's first BEGIN to its last END:
// two blocks in one input are two statements (rewrite.OneCompound).
func compoundStatement(sql string, opts rewrite.Options) bool {
	return compound.MatchString(sql) && rewrite.OneCompound(sql, opts)
}

// engineAliases are the names MariaDB's handler resolves to another
// engine's (sys_table_aliases), and DEFAULT, the default engine: known
// whatever information_schema.ENGINES lists.
var engineAliases = map[string]bool{"INNOBASE": true, "HEAP": true, "MERGE": true, "MARIA": true, "NDB": true, "DEFAULT": true}

// plainEngineName matches the engine names unknownEngine asks the server
// about: quoted the same under any sql_mode and character set.
var plainEngineName = regexp.MustCompile(`^[A-Za-z0-9_. -]{1,64}$`)

// unknownEngine is the server's own error for a statement refused for the
// storage engine a SET names (rewrite.Statement.Engine) when the server
// knows no engine by that name, as it would answer itself
// (ER_UNKNOWN_STORAGE_ENGINE), asked with a read of
// information_schema.ENGINES on the session's connection; nil when it
// knows the name, or may (an alias), or cannot be asked. An error that is
// not a refusal means the connection broke.
func (s *Session) unknownEngine(ctx context.Context, st rewrite.Statement) error {
	name := st.Engine
	if name == "" || s.up == nil || !plainEngineName.MatchString(name) || engineAliases[strings.ToUpper(name)] {
		return nil
	}
	r, err := s.up.Query(ctx, "SELECT COUNT(*) FROM information_schema.ENGINES WHERE ENGINE = "+quote.String(name))
	if err != nil {
		if isServerError(err) {
			return nil
		}
		return err
	}
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1 || r.Rows[0][0] == nil || *r.Rows[0][0] != "0" {
		return nil
	}
	return rewrite.ServerRefusal(wire.ErUnknownStorageEngine, "Unknown storage engine '%s'", name)
}
