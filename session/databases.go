package session

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Databases of a sandbox's own (registry/databases.go): CREATE DATABASE of
// a name production does not have makes the sandbox's schema for it, DROP
// DATABASE drops the sandbox's schema and hides production's, and from then
// on every name in that database is the sandbox's. USE of one makes its
// schema the server's current database, and DATABASE() is sent as the
// logical name (rewrite/databases.go).

// dbChange is what a CREATE [OR REPLACE] or DROP DATABASE in a sandbox
// records once it ran.
type dbChange struct {
	key   string
	state registry.DBState // its kind "": the database is forgotten
	// drop: the database's tables went; current: it was the current
	// database, and none is after.
	drop, current bool
}

// dbKey is logical database db as the server compares it.
func (s *Session) dbKey(db string) string { return s.m.names.Norm(rewrite.Table{DB: db}).DB }

// ownDB is the sandbox's state of logical database db, if it is its own.
func (s *Session) ownDB(db string) (registry.DBState, bool) {
	if s.sb == nil {
		return registry.DBState{}, false
	}
	return s.sb.OwnDB(s.dbKey(db))
}

// hasOwnDB reports whether logical database db is one of the sandbox's own.
func (s *Session) hasOwnDB(db string) bool {
	_, own := s.ownDB(db)
	return own
}

// physDB is the sandbox's schema for logical database db, noted for
// telling its name back in messages.
func (s *Session) physDB(db string) string {
	phys := sandbox.Schema(s.m.cfg.Prefix, s.sb.ID, s.dbKey(db))
	if s.schemas == nil {
		s.schemas = map[string]string{}
	}
	s.schemas[phys] = db
	return phys
}

// ResolveDatabase implements rewrite.DatabaseResolver: the sandbox's own
// databases are their schemas, and CREATE, DROP and ALTER DATABASE always
// name the sandbox's schema (planDatabase decided what each means).
func (r resolver) ResolveDatabase(k rewrite.Kind, db string) (string, bool, error) {
	if err := r.s.databaseAllowed(k, db); err != nil {
		return "", false, err
	}
	if _, own := r.s.ownDB(db); own || rewrite.ChangesDatabase(k) {
		return r.s.physDB(db), true, nil
	}
	return "", false, nil
}

// CurrentDatabase implements rewrite.DatabaseResolver.
func (r resolver) CurrentDatabase() (string, bool) {
	return r.s.db, r.s.dbPhys && r.s.db != ""
}

// planDatabase prepares CREATE [OR REPLACE], DROP or ALTER DATABASE st of
// db, alone in its input, in the sandbox: what it will record once it ran
// (p.dbChange), and the sandbox's schema a statement on production's
// database changes (made first, so the server answers as for a database
// that exists).
func (s *Session) planDatabase(ctx context.Context, st rewrite.Statement, db string, p *Plan) error {
	if db == "" && st.Kind == rewrite.KindAlterDatabase {
		return nil // no current database (the server's 1046), or `` (the rewrite's 1102)
	}
	if err := s.databaseAllowed(st.Kind, db); err != nil {
		return err
	}
	// Recorded before any schema of it is made: the reaper drops the
	// schemas of sandboxes the registry does not know.
	if err := s.m.reg.WithConn(ctx, func(c SideConn) error { return s.m.reg.Persist(ctx, c, s.sb) }); err != nil {
		return err
	}
	key := s.dbKey(db)
	d, own := s.ownDB(db)
	if !own {
		d = registry.DBState{Name: db, Phys: sandbox.Schema(s.m.cfg.Prefix, s.sb.ID, key), Created: time.Now().UTC()}
		if other, clash := s.schemaClash(key, d.Phys); clash {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "the sandbox keeps database %s in the schema it keeps %s in "+
				"(a long name is shortened with a hash to fit), so it cannot %s here; use another name", quote.Ident(db),
				quote.Ident(other), strings.ToLower(string(st.Kind)))
		}
	}
	ch := &dbChange{key: key, state: d, current: s.db != "" && s.dbKey(s.db) == key}
	switch k := st.Kind; {
	case own:
		if !ownChange(k, d, ch) {
			return nil
		}
	case k == rewrite.KindCreateDatabase:
		ch.state.Kind = sandbox.DBCreated // production has no such database: createExistingDatabase answers one it has
	case k == rewrite.KindAlterDatabase || k == rewrite.KindDropDatabase || k == rewrite.KindCreateOrReplaceDatabase:
		has, err := s.productionHas(ctx, db)
		if err != nil {
			return err
		}
		if !has && k != rewrite.KindCreateOrReplaceDatabase {
			return nil // the server answers for the sandbox's schema, which does not exist (1008, …)
		}
		ch.state.Kind = sandbox.DBCreated
		if has {
			// Production's: the sandbox's schema for it is altered (made
			// first, with production's defaults, so what the sandbox
			// creates there takes the new ones), or dropped and production's
			// hidden.
			if err := s.hideProduction(ctx, db, d.Phys, ch.current && k != rewrite.KindAlterDatabase); err != nil || k == rewrite.KindAlterDatabase {
				return err
			}
			ch.drop, ch.state.Kind = true, sandbox.DBRecreated
			if k == rewrite.KindDropDatabase {
				ch.state.Kind = sandbox.DBDropped
			}
		}
	default:
		return nil
	}
	s.physDB(db)
	p.dbChange = ch
	return nil
}

// ownChange is what statement kind k does to d, one of the sandbox's own
// databases (false: nothing it records).
func ownChange(k rewrite.Kind, d registry.DBState, ch *dbChange) bool {
	switch {
	case k == rewrite.KindCreateDatabase && d.Kind == sandbox.DBDropped:
		ch.state.Kind = sandbox.DBRecreated
	case k == rewrite.KindCreateOrReplaceDatabase:
		ch.drop, ch.state.Kind = d.Kind != sandbox.DBDropped, d.Kind
		if d.Kind == sandbox.DBDropped {
			ch.state.Kind = sandbox.DBRecreated
		}
	case k == rewrite.KindDropDatabase && d.Kind != sandbox.DBDropped:
		ch.drop, ch.state.Kind = true, sandbox.DBDropped
		if d.Kind == sandbox.DBCreated {
			ch.state.Kind = "" // forgotten: production has none
		}
	default:
		return false
	}
	return true
}

// hideProduction makes the sandbox's schema phys for production's database
// db, with its defaults, for a statement that alters, drops or replaces it
// there; current: the statement drops the session's current database, and
// the server makes none current after only when it is the server's current
// one, so phys is made current first.
func (s *Session) hideProduction(ctx context.Context, db, phys string, current bool) error {
	if err := s.m.reg.WithConn(ctx, func(c SideConn) error { return s.m.fk.CreateSchema(ctx, c, db, phys) }); err != nil {
		return err
	}
	if !current || s.dbPhys {
		return nil
	}
	if _, err := s.up.Query(ctx, "USE "+quote.Ident(phys)); err != nil {
		return err
	}
	s.dbPhys, s.upDB = true, phys
	return nil
}

// productionHas reports whether the session's account sees database db of
// production.
func (s *Session) productionHas(ctx context.Context, db string) (bool, error) {
	r, err := s.up.Query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = "+quote.String(db))
	if err != nil {
		return false, err
	}
	return len(r.Rows) > 0, nil
}

// recordDatabase records what a CREATE [OR REPLACE] or DROP DATABASE that
// ran changed in the sandbox.
func (s *Session) recordDatabase(ctx context.Context, ch *dbChange) error {
	err := s.m.reg.WithConn(ctx, func(c SideConn) error {
		if err := s.m.reg.SaveDB(ctx, c, s.sb, ch.key, ch.state); err != nil {
			return err
		}
		if ch.drop {
			return s.m.reg.ForgetDBTables(ctx, c, s.sb, ch.key)
		}
		return nil
	})
	if ch.drop {
		s.sb.ForgetRoutines(true)
		if ch.current {
			s.db, s.dbPhys = "", false
		}
	}
	return err
}

// setServerDB records db, the server's current database, as the session's:
// the sandbox's schema of one of its own databases stands for that
// database.
func (s *Session) setServerDB(db string) {
	s.db, s.dbPhys = db, false
	if s.sb == nil || db == "" {
		return
	}
	for _, d := range s.sb.OwnDBs() {
		if d.Phys == db {
			s.db, s.dbPhys, s.upDB = d.Name, true, db
			return
		}
	}
}

// InitDBName is the database COM_INIT_DB (or a login) names upstream for
// db, both in the client's character set: the sandbox's schema of one of
// its own databases, db otherwise, or the server's 1049 for one the
// sandbox dropped.
func (s *Session) InitDBName(db string) (string, error) {
	name, ok := rewrite.DecodeName(db, rewrite.Options{Charset: s.vars.Charset})
	if !ok {
		return db, nil
	}
	d, own := s.ownDB(name)
	switch {
	case !own:
		return db, nil
	case d.Kind == sandbox.DBDropped:
		return "", rewrite.ServerRefusal(wire.ErBadDB, "Unknown database '%s'", db)
	}
	s.physDB(name)
	return s.ClientName(d.Phys)
}

// selectDB makes db, the login's database, current on the session's
// connection, which logged in with none: the sandbox's schema of one of its
// own databases, or db.
func (s *Session) selectDB(ctx context.Context, db string) error {
	name, err := s.InitDBName(db)
	if err != nil {
		return err
	}
	if _, err := s.up.Query(ctx, "USE "+quote.Ident(name)); err != nil {
		return err
	}
	return s.UseDB(ctx, db)
}

// databaseAllowed refuses a statement of kind k on database db that a
// sandbox may not make its own: the proxy's databases (as the server
// refuses an account without rights on them, 1044) and, for DROP and
// ALTER, the server's own schemas, which the sandbox reads as production
// has them (CREATE of one is answered as the server answers it: 1007).
func (s *Session) databaseAllowed(k rewrite.Kind, db string) error {
	changes := rewrite.ChangesDatabase(k)
	switch {
	case changes && !validDBName(db):
		// The server's check of the name it is given: the sandbox's
		// schema's name would pass it.
		return rewrite.ServerRefusal(wire.ErWrongDBName, "Incorrect database name '%s'", db)
	case s.m.names.IsProxySchema(db):
		return rewrite.ServerRefusal(wire.ErDBAccessDenied, "Access denied for user '%s' to database '%s'", s.user, db)
	case sandbox.IsSystemSchema(db) && changes && k != rewrite.KindCreateDatabase:
		return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s of %s, one of the server's own schemas, is refused in a sandbox: "+
			"the sandbox reads them as production has them (run it on a direct connection)", k, quote.Ident(db))
	}
	return nil
}

// OwnOnly implements rewrite.OwnNames: a name the sandbox holds no entry
// for, in a database it made whose name production does not have.
func (r resolver) OwnOnly(t rewrite.Table) bool {
	d, own := r.s.ownDB(t.DB)
	if !own || d.Kind != sandbox.DBCreated {
		return false
	}
	_, held := r.s.sb.Resolve(r.s.m.names.Key(t))
	return !held
}

// reselectDB keeps the server's current database right while the
// session's is one of a sandbox's own: once the session moved to another
// sandbox, or the database stopped being its sandbox's own (a RESET, a
// promote, a DROP through another connection), the server's current
// database becomes what the session's is now — its sandbox's schema for
// it, production's, or none (as when a current database is dropped).
func (s *Session) reselectDB(ctx context.Context) error {
	if !s.dbPhys || s.db == "" {
		return nil
	}
	d, own := s.ownDB(s.db)
	if own && d.Kind != sandbox.DBDropped {
		if d.Phys == s.upDB {
			return nil
		}
		return s.useUpstream(ctx, d.Phys, true)
	}
	if !own {
		has, err := s.productionHas(ctx, s.db)
		if err != nil {
			return err
		}
		if has {
			return s.useUpstream(ctx, s.db, false)
		}
	}
	// None: a database made, used and dropped on the connection leaves
	// the server with no current one.
	none := sandbox.SchemaPrefix(s.m.cfg.Prefix, s.sbID())
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS " + quote.Ident(none), "USE " + quote.Ident(none), "DROP DATABASE " + quote.Ident(none)} {
		if _, err := s.up.Query(ctx, q); err != nil {
			return fmt.Errorf("leave database %s: %w", quote.Ident(s.db), err)
		}
	}
	s.db, s.dbPhys, s.upDB = "", false, ""
	return nil
}

// useUpstream makes db the server's current database: the sandbox's
// schema of the session's (phys) or production's.
func (s *Session) useUpstream(ctx context.Context, db string, phys bool) error {
	if _, err := s.up.Query(ctx, "USE "+quote.Ident(db)); err != nil {
		return fmt.Errorf("use database %s: %w", quote.Ident(s.db), err)
	}
	s.dbPhys, s.upDB = phys, ""
	if phys {
		s.upDB = db
	}
	return nil
}

// sbID is the session's sandbox's id ("" outside one).
func (s *Session) sbID() string {
	if s.sb == nil {
		return ""
	}
	return s.sb.ID
}

// validDBName reports whether the server takes db as a database's name:
// not empty, at most 64 characters, not ending in a space.
func validDBName(db string) bool {
	return db != "" && utf8.RuneCountInString(db) <= sandbox.MaxIdent && !strings.HasSuffix(db, " ")
}

// schemaClash reports another logical database, other, whose schema in the
// sandbox is phys too: a name over the schema's length is shortened with a
// hash, which a shorter name can spell.
func (s *Session) schemaClash(key, phys string) (other string, clash bool) {
	for _, d := range s.sb.OwnDBs() {
		if d.Phys == phys && s.dbKey(d.Name) != key {
			return d.Name, true
		}
	}
	for e := range s.sb.Each() {
		if e.Phys.DB == phys && s.m.names.Norm(e.Logical).DB != key {
			return e.Logical.DB, true
		}
	}
	return "", false
}

// currentDBCalls writes, in the query EXPLAIN EXTENDED's Note 1003 gives,
// the calls of stored functions of the sandbox's database for the current
// one as the server writes those of the current database: `f`(…), not
// `db`.`f`(…).
func (s *Session) currentDBCalls(msg string) string {
	if s.sb == nil || s.db == "" {
		return msg
	}
	prefix := quote.Ident(sandbox.Schema(s.m.cfg.Prefix, s.sb.ID, s.dbKey(s.db))) + ".`"
	var b strings.Builder
	for {
		i := strings.Index(msg, prefix)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		name := msg[i+len(prefix)-1:]
		end := strings.Index(name[1:], "`")
		if end >= 0 && strings.HasPrefix(name[end+2:], "(") {
			b.WriteString(msg[:i]) // a call: its database goes
		} else {
			b.WriteString(msg[:i+len(prefix)-1])
		}
		msg = name
	}
}

// createExistingDatabase plans CREATE DATABASE [IF NOT EXISTS] db in a
// sandbox: when the session's account sees db (a database of production
// the sandbox copies), the statement runs on the sandbox's own database for
// db, made first if need be, so the server answers it as directly — error
// 1007 "Can't create database …; database exists", or with IF NOT EXISTS
// OK with that note — in db's name (the error relabelled, the note by SHOW
// WARNINGS). "" when production has no db: the statement makes one of the
// sandbox's own (planDatabase).
func (s *Session) createExistingDatabase(ctx context.Context, st rewrite.Statement) (string, error) {
	db := st.Database
	if has, err := s.productionHas(ctx, db); err != nil || !has {
		return "", err
	}
	phys := s.physDB(db)
	if err := s.m.reg.WithConn(ctx, func(c SideConn) error { return s.m.fk.CreateSchema(ctx, c, db, phys) }); err != nil {
		return "", err
	}
	if st.IfNotExists {
		return "CREATE DATABASE IF NOT EXISTS " + quote.Ident(phys), nil
	}
	return "CREATE DATABASE " + quote.Ident(phys), nil
}
