package objects

import (
	"context"
	"errors"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Production's procedures in a sandbox. CALL of a procedure production has
// and the sandbox has not makes the sandbox's own copy first: production's
// definition (SHOW CREATE PROCEDURE, without its DEFINER) planned as if the
// client had sent it — its body checked like any statement of the sandbox,
// every table it names forked, rewritten to the sandbox's copies — and made
// in the sandbox's database for the procedure's, under the sql_mode and
// character set production's was made with. The CALL then runs the copy,
// so its reads see the sandbox and its writes land in forks; procedures it
// calls are copied in turn. The copy is the sandbox's from then on (a later
// change of production's procedure does not reach it). Reading a
// procedure's definition takes SELECT on mysql.proc (or being its
// definer): without it the server hides production's procedures from the
// proxy's account, and CALL gets the server's 1305 in the sandbox.

// errProcedureExists is MariaDB's ER_SP_ALREADY_EXISTS, errNoSuchRoutine
// its ER_SP_DOES_NOT_EXIST.
const (
	errProcedureExists = 1304
	errNoSuchRoutine   = 1305
)

// copyRoutine makes the sandbox's copy of production's routine db.name,
// of kind PROCEDURE or FUNCTION.
func (o *Placer) copyRoutine(ctx context.Context, kind, db, name string) error {
	key := kind + "\x00" + strings.ToLower(db) + "\x00" + strings.ToLower(name)
	if o.copying[key] {
		return nil // it calls itself: the CALL names the copy being made
	}
	if o.copying == nil {
		o.copying = map[string]bool{}
	}
	o.copying[key] = true
	defer delete(o.copying, key)
	if err := o.host.MayExecute(ctx, kind, db, name); err != nil {
		return err
	}
	var def []*string
	err := o.reg.WithConn(ctx, func(c sideconn.Conn) error {
		rows, err := c.Query(ctx, "SHOW CREATE "+kind+" "+quote.Ident(db)+"."+quote.Ident(name))
		var me *mysql.MyError
		if errors.As(err, &me) && me.Code == errNoSuchRoutine {
			return nil // listed in information_schema, hidden from SHOW CREATE: not readable
		}
		if err == nil && len(rows) == 1 && len(rows[0]) >= 5 {
			def = rows[0]
		}
		return err
	})
	if err != nil {
		return err
	}
	qname := quote.Ident(db) + "." + quote.Ident(name)
	what := strings.ToLower(kind)
	text, ok := "", false
	if def != nil {
		text, ok = withoutDefiner(sideconn.Str(def[2]))
	}
	if !ok {
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "the proxy cannot read the definition of production's %s %s "+
			"(grant its account SELECT ON mysql.proc), so it cannot run a copy of it in the sandbox", what, qname)
	}
	mode := strings.ToUpper(sideconn.Str(def[1]))
	a := o.engine.Analyze(text, rewrite.Options{DB: db, ANSIQuotes: strings.Contains(mode, "ANSI_QUOTES"), IgnoreSpace: strings.Contains(mode, "IGNORE_SPACE"),
		NoBackslashEscapes: strings.Contains(mode, "NO_BACKSLASH_ESCAPES"), CaseSensitiveNames: o.names.CaseSensitive,
		Charset: sideconn.Str(def[3]), Server: o.server})
	if len(a.Statements) != 1 || a.Statements[0].Kind != rewrite.Kind("CREATE "+kind) || a.Statements[0].Routine == nil {
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "the proxy cannot read the definition of production's %s %s, "+
			"so it cannot run a copy of it in the sandbox", what, qname)
	}
	st := a.Statements[0]
	if st.Unprovable != "" {
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "production's %s %s cannot run in the sandbox: %s", what, qname, st.Unprovable)
	}
	if err := o.host.Confined(ctx, a); err != nil {
		return err
	}
	if err := o.ForkBody(ctx, st, false); err != nil { // a copy: no DDL of the client's
		return err
	}
	res, err := a.Rewrite(o.host.Resolver())
	if err != nil {
		return err
	}
	return o.reg.WithConn(ctx, func(c sideconn.Conn) error {
		err := forker.ExecWith(ctx, c, forker.Modes{SQLMode: sideconn.Str(def[1]), Charset: sideconn.Str(def[3]), Collation: sideconn.Str(def[4])}, res.SQL)
		var me *mysql.MyError
		if errors.As(err, &me) && me.Code == errProcedureExists {
			return nil // another connection of the sandbox made it meanwhile
		}
		return err
	})
}

// withoutDefiner is a CREATE PROCEDURE text as SHOW CREATE PROCEDURE gives
// it (CREATE DEFINER=`u`@`h` PROCEDURE …) without its DEFINER clause: the
// copy's definer is the account that makes it.
func withoutDefiner(create string) (string, bool) {
	rest, ok := strings.CutPrefix(create, "CREATE DEFINER=")
	if !ok {
		return create, strings.HasPrefix(create, "CREATE ")
	}
	for part := 0; part < 2; part++ {
		var n int
		if n, ok = quotedPart(rest); !ok {
			return "", false
		}
		rest = rest[n:]
		if part == 0 {
			if rest, ok = strings.CutPrefix(rest, "@"); !ok {
				return "", false
			}
		}
	}
	if !strings.HasPrefix(rest, " ") {
		return "", false
	}
	return "CREATE" + rest, true
}

// quotedPart is the length of the user or host name that starts s: a
// backquoted or single-quoted name (doubled quotes inside) or a bare word.
func quotedPart(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	if q := s[0]; q == '`' || q == '\'' {
		for i := 1; i < len(s); i++ {
			if s[i] != q {
				continue
			}
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1, true
		}
		return 0, false
	}
	n := strings.IndexAny(s, "@ ")
	if n <= 0 {
		return 0, false
	}
	return n, true
}
