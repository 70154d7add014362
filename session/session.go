package session

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/command"
	"github.com/sqlfork/sqlfork-proxy/sandbox/objects"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/session/txn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Session is one client connection's view of sandboxes: which sandbox it
// is bound to (none means production), and what its open transaction has
// done. It is used by one goroutine.
type Session struct {
	// waitMu guards waitStop, which ends the proxy-side wait of the
	// statement running (Interrupt).
	waitMu   sync.Mutex
	waitStop context.CancelCauseFunc

	m      *Manager
	log    *zap.Logger
	user   string
	connID uint64
	mode   Mode
	// allowProd lets writes reach production outside a sandbox (explicit
	// mode with --production-writes=allow).
	allowProd bool
	sb        *Sandbox
	// schemas are sandbox databases the session named in a statement of
	// its own (createExistingDatabase), physical to logical, for unmap.
	schemas map[string]string
	// up is the client's own upstream connection (nil in tests that
	// plan without one).
	up Upstream
	// db is the current database, ansiQuotes and ignoreSpace whether
	// sql_mode has ANSI_QUOTES and IGNORE_SPACE; varsKnown says vars (and
	// the flags) were read since the session started or was reset.
	db string
	// dbPhys: the server's current database is upDB, the sandbox's schema
	// of db, one of its own databases (databases.go).
	dbPhys      bool
	upDB        string
	ansiQuotes  bool
	ignoreSpace bool
	varsKnown   bool
	// tx is the open transaction as the session follows it, with its
	// record for a replay (session/txn).
	tx txn.Transaction
	// txWrote: the open transaction wrote the sandbox (noteWrites records
	// the write again when it ends).
	txWrote   bool
	planEpoch uint64 // the manager's epoch after the last plan
	sendEpoch uint64 // the manager's epoch when the last statement was sent (before)
	// synced: the registry was checked for the statement being planned
	// (revalidate did it).
	synced bool
	// held are the lazy forks' fills the open transaction holds (txfill.go).
	held map[*registry.Fill]*heldFill

	// vars are the upstream session's variables as last read.
	vars Vars
	// refused is the diagnostics area of the last statement when the proxy
	// answered it with an error of its own (nil when it went upstream):
	// SHOW WARNINGS and SHOW ERRORS then list it, as the server lists the
	// errors of the statement before.
	refused []Diag
	// xa is set while an XA transaction is open on the client's
	// connection (xa.go): it cannot be started again past a fork.
	xa bool
	// sqlStmts are the SQL prepared statements the session keeps, by
	// lower-case name (sqlprepare.go).
	sqlStmts map[string]*sqlStmt
	// prepNames are the names the connection's PREPAREs named since each
	// was last dropped: the server may have statements of them.
	prepNames map[string]bool
	// obj places the session's stored objects in its sandbox (objs).
	obj *objects.Placer
	// lastRenames are the names the last statement's rewrite replaced,
	// for telling its diagnostics back (SHOW WARNINGS).
	lastRenames []rewrite.Rename
	// account is CURRENT_USER() of the session's connection, once read
	// (ownAccount).
	account string
	// joined is the sandbox whose globals the client's session was given
	// (joinGlobals).
	joined *Sandbox
	// statusBase are the session's status counters when it last ran FLUSH
	// STATUS in a sandbox (flushstatus.go); nil before.
	statusBase map[string]string
	// counts are ROW_COUNT() and FOUND_ROWS() as the client's last
	// statement left them, when the proxy's own read since changed the
	// server's (insertid.go); nil otherwise.
	counts *lastCounts
}

// Diag is one row of SHOW WARNINGS (reply.Diag).
type Diag = reply.Diag

// Reply is an answer the proxy gives itself (reply.Reply).
type Reply = reply.Reply

// diagnosed is an error that knows the whole diagnostics area it leaves
// (a view whose tables are gone, sandbox/objects).
type diagnosed interface{ Diagnostics() []Diag }

// diagnosticsOf is the diagnostics area an error the proxy answers with
// leaves: the error itself, or what it says it leaves; nil for an error
// the client does not get as such.
func diagnosticsOf(err error) []Diag {
	var d diagnosed
	if errors.As(err, &d) {
		return d.Diagnostics()
	}
	var r interface {
		MySQLError() (uint16, string, string)
	}
	if errors.As(err, &r) {
		code, _, msg := r.MySQLError()
		return []Diag{{Level: "Error", Code: code, Message: msg}}
	}
	return nil
}

// varsFallbackQuery reads Vars without the isolation level and access
// mode (left empty).
const varsFallbackQuery = "SELECT @@SESSION.sql_mode, @@SESSION.character_set_client, '', ''"

// Options open a Session.
type Options struct {
	User   string
	ConnID uint64
	Mode   Mode
	// Sandbox is a sandbox chosen at connect time (user-name tag or
	// connection attribute): attached if it exists, else created.
	Sandbox string
	// AllowProductionWrites lets writes outside a sandbox through.
	AllowProductionWrites bool
	Log                   *zap.Logger
	// Upstream is the client's own upstream connection, and DB the
	// database its login chose.
	Upstream Upstream
	DB       string
	// SelectDB: the login went upstream with no database, as DB may be one
	// of the named sandbox's own: Open makes it current (USE).
	SelectDB bool
}

// Open starts a client session.
func (m *Manager) Open(ctx context.Context, o Options) (*Session, error) {
	log := o.Log
	if log == nil {
		log = m.log
	}
	s := &Session{m: m, log: log, user: o.User, connID: o.ConnID, mode: o.Mode, allowProd: o.AllowProductionWrites,
		up: o.Upstream, db: o.DB}
	if o.Mode == Passthrough {
		return s, nil
	}
	if err := s.UseDB(ctx, o.DB); err != nil { // the handshake's database, in the client's bytes
		return nil, err
	}
	if o.Sandbox != "" {
		if err := command.ValidName(o.Sandbox); err != nil {
			return nil, rewrite.Refuse(wire.ErUnknown, "%v", err)
		}
		// Connections of a pool arrive together: the first creates the
		// sandbox, the others join it; one that comes back within the
		// sandbox's grace finds it again.
		sb, err := m.reg.Acquire(ctx, o.Sandbox, o.User, true)
		if err != nil {
			return nil, err
		}
		s.sb = sb
		if o.SelectDB {
			if err := s.selectDB(ctx, o.DB); err != nil {
				s.Close()
				return nil, err
			}
		}
		if err := s.joinGlobals(ctx); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	if o.Mode == Transparent {
		if err := s.fresh(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// fresh binds the session to a new anonymous sandbox.
func (s *Session) fresh() error {
	sb, err := s.m.reg.NewSandbox("", s.user)
	if err != nil {
		return err
	}
	if err := s.m.reg.Attach(sb); err != nil {
		return err
	}
	s.sb = sb
	return nil
}

// unbind detaches from the current sandbox, if any.
func (s *Session) unbind() {
	if s.sb != nil {
		s.m.reg.Detach(s.sb)
		s.sb = nil
	}
}

// Close ends the session; an unkept sandbox whose last connection this was
// is discarded, or, when named, starts its grace.
func (s *Session) Close() {
	s.releaseHolds()
	s.unbind()
}

// SandboxName is the bound sandbox's name ("" for production).
func (s *Session) SandboxName() string {
	if s.sb == nil {
		return ""
	}
	return s.sb.Name
}

// Mode is the session's mode.
func (s *Session) Mode() Mode { return s.mode }

// authorize checks that the session's user may use sb.
func (s *Session) authorize(sb *Sandbox) error { return s.m.reg.Authorize(s.user, sb) }

// cutLabels is the length from which a label may be the server's cut of
// a longer expression (it cuts labels at 255 bytes).
const cutLabels = 250

// bodyShows are the SHOW statements a sandbox's procedure body may hold:
// the server's answer names a table without its database, or with the
// sandbox's physical one, which the answer to the CALL tells back
// (writesNames), and the proxy adds nothing to it when the client sends
// them. SHOW STATUS and SHOW VARIABLES name no table.
var bodyShows = map[rewrite.Kind]bool{rewrite.KindShowStatus: true, rewrite.KindShowVariables: true, rewrite.KindShowCreateTable: true,
	rewrite.KindShowColumns: true, rewrite.KindShowIndex: true, rewrite.KindShowWarnings: true, rewrite.KindShowErrors: true,
	rewrite.KindShowCount: true}

// Reset is COM_RESET_CONNECTION: the transaction ends, the sandbox
// binding stays (a pool resets connections between borrowers, and its
// sandbox must stay theirs).
func (s *Session) Reset() {
	s.releaseHolds()
	s.tx.Reset()
	s.xa = false
	// The reset sets the session's variables back and drops the
	// connection's prepared statements.
	s.varsKnown = false
	s.sqlStmts, s.prepNames = nil, nil
	s.account = ""
	// The server's globals are the session's again, and its status
	// counters start afresh.
	s.joined, s.statusBase = nil, nil
}
