package session

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Vars are the upstream session variables that decide how the proxy reads
// and runs statements; the session reads them when it starts, after a
// reset and after any statement that may change them.
type Vars struct {
	SQLMode   string // @@sql_mode
	Charset   string // @@character_set_client
	Isolation string // @@tx_isolation (transaction_isolation on MySQL)
	ReadOnly  string // @@tx_read_only (transaction_read_only on MySQL): "1" or "0"
}

// varsQuery reads Vars (in their order) on the session's upstream
// connection. A server that knows neither isolation variable gets
// varsFallbackQuery.
func (s *Session) varsQuery() string {
	iso, ro := "tx_isolation", "tx_read_only"
	if s.m != nil && s.m.server.Flavor == rewrite.MySQL {
		iso, ro = "transaction_isolation", "transaction_read_only" // MySQL 8 dropped tx_isolation
	}
	return "SELECT @@SESSION.sql_mode, @@SESSION.character_set_client, @@SESSION." + iso + ", @@SESSION." + ro
}

// changesLexing reports whether an input holds a statement that changes
// how the server reads the texts after it.
func (s *Session) changesLexing(sql string, opts rewrite.Options) bool {
	if s.m == nil {
		return false
	}
	for _, st := range s.m.engine.Analyze(sql, opts).Statements {
		if mustComeLast(st) {
			return true
		}
	}
	return false
}

// blocksProduction says why a statement run on production would lock rows
// or tables there for longer than a plain read ("" when it would not): it
// reads under locks (… FOR UPDATE, LOCK TABLES … READ, the reads of a
// write), it asks for SERIALIZABLE, or it reads while the session is
// SERIALIZABLE (serializable).
func blocksProduction(st rewrite.Statement, serializable bool) string {
	switch {
	case len(st.Locked) > 0:
		return "reading " + st.Locked[0].Quoted() + " under locks"
	case st.Serializable:
		return "asking for SERIALIZABLE isolation (every read then locks)"
	case serializable:
		for _, t := range append(st.Reads, st.Names...) {
			if !infoschema.Virtual(t) {
				return "reading " + t.Quoted() + " under SERIALIZABLE isolation"
			}
		}
	}
	return ""
}

// mustComeLast reports statements after which the proxy must read the
// session's settings again before it can plan the next statement: they
// change how text is read, or make reads lock (SERIALIZABLE).
func mustComeLast(st rewrite.Statement) bool {
	return st.ChangesLexing || st.ChangesIsolation || st.Serializable
}

// lexingChangeRefused is the error for an input in which a statement that
// changes how text is read is followed by more statements.
func (s *Session) lexingChangeRefused() error {
	return rewrite.Refuse(wire.ErOptionPreventsStatement, "a statement that changes how the server reads text (SET NAMES, SET CHARACTER SET, "+
		"character_set_client, sql_mode) or makes reads lock (SERIALIZABLE) must be sent on its own or last in a "+
		"multi-statement input; send the statements after it separately")
}

// ServerCommand refuses a protocol command that acts on or shows the server
// as a whole (COM_REFRESH, COM_DEBUG) where the statement doing the same
// (FLUSH) is refused: in a sandbox, and, for one that changes the server, outside one
// in explicit mode when production writes are denied.
func (s *Session) ServerCommand(name string, changes bool) error {
	switch {
	case s.mode == Passthrough:
		return nil
	case s.sb != nil:
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s acts on or shows the server as a whole, every sandbox's sessions included; "+
			"it is refused in a sandbox (run it on a direct connection)", name)
	case changes && s.mode == Explicit && !s.allowProd:
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s outside a sandbox would change the server, which this proxy does not allow "+
			"(--production-writes=deny)", name)
	}
	return nil
}

// unreadableMode names an sql_mode under which the server reads texts in
// a way the proxy does not ("" when it reads them as the proxy does).
func unreadableMode(mode string) string {
	for _, m := range strings.Split(strings.ToUpper(mode), ",") {
		switch m {
		case "ORACLE", "MSSQL":
			return m
		}
	}
	return ""
}

// serializable reports whether the session's reads lock what they read:
// SERIALIZABLE makes InnoDB read every row of a transaction under a shared
// lock — the session's level, one SET TRANSACTION gave the next
// transaction (pending across statements that use no table), or the one
// the open transaction started with (txn.Transaction.Serializable).
func (s *Session) serializable() bool {
	return s.tx.Serializable() || strings.EqualFold(strings.ReplaceAll(s.vars.Isolation, "_", "-"), "SERIALIZABLE")
}

// Version identifies a sandbox binding and its table map.
type Version struct {
	sb  *Sandbox
	ver uint64
	// serializable: reads were planned to lock (and so to fork first).
	serializable bool
	// reading are the settings the text was read with: the server reads
	// a prepared statement's text again, with the settings of the moment,
	// when it prepares it anew.
	reading reading
	// guard are the guardrails it was planned under (new ones, after a
	// reload, are checked and injected again).
	guard *guard
	// globals is the version of the sandbox's SET GLOBAL values, which
	// its reads of @@GLOBAL.x were rewritten with.
	globals uint64
}

// reading are the settings that decide how a text is read.
type reading struct {
	charset, db       string
	ansi, nbe, ignore bool
}

// current is the session's present binding, for texts read with opts
// (completed by Options).
func (s *Session) current(opts rewrite.Options) Version {
	v := Version{reading: reading{charset: opts.Charset, db: opts.DB, ansi: opts.ANSIQuotes, nbe: opts.NoBackslashEscapes,
		ignore: opts.IgnoreSpace},
		guard: s.m.guard(s.user)}
	if s.sb != nil {
		v.sb, v.ver, v.serializable = s.sb, s.sb.SnapshotVersion(), s.serializable()
		v.globals = s.sb.Globals().Version()
	}
	return v
}
