package session

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// isInfoSchema reports whether phys is a database of information_schema
// views the session reads: its sandbox's, or production's.
func (s *Session) isInfoSchema(phys string) bool {
	return s.m != nil && phys == infoschema.ProductionSchema(s.m.cfg.Prefix) || s.sb != nil && phys == sandbox.InfoSchema(s.m.cfg.Prefix, s.sb.ID)
}

// unmap replaces the sandbox's physical database names in a server message
// with the logical ones, so errors read as on the real database.
func (s *Session) unmap(msg string) string {
	if s.sb == nil || !strings.Contains(msg, s.m.cfg.Prefix) {
		return msg
	}
	for e := range s.sb.Each() {
		msg = strings.ReplaceAll(msg, e.Phys.DB, e.Logical.DB)
	}
	for phys, logical := range s.schemas {
		msg = strings.ReplaceAll(msg, phys, logical)
	}
	// A physical name the server wrote in another character set than
	// UTF-8 (the results' latin1, koi8r, …: a database name that is not
	// ASCII) is its prefix, which is ASCII, and the logical name in that
	// set: without the prefix, the logical name as the server writes it.
	return strings.ReplaceAll(msg, sandbox.SchemaPrefix(s.m.cfg.Prefix, s.sb.ID), "")
}

// unqualify drops the sandbox's databases for db from the names of text
// (`_sqlfork_…_db`.`t` becomes `t`): the server writes the tables of the
// current database without it in SHOW CREATE VIEW.
func (s *Session) unqualify(text, db string) string {
	if s.sb == nil || db == "" {
		return text
	}
	for e := range s.sb.Each() {
		if e.Logical.DB == db {
			text = strings.ReplaceAll(text, quote.Ident(e.Phys.DB)+".", "")
		}
	}
	return text
}

// unqualifyJSON takes, in the JSON text of an EXPLAIN run in database db,
// the sandbox's physical database of db off the columns its conditions
// name (`_sqlfork_…_db.t.a` → `t.a`), as the server writes columns of the
// current database's tables; "ref" lists, which the server writes with
// the database, keep it (told back as db by unmap).
func (s *Session) unqualifyJSON(text, db string) string {
	if t := strings.TrimSpace(text); s.sb == nil || db == "" || !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
		return text
	}
	prefix := sandbox.Schema(s.m.cfg.Prefix, s.sb.ID, s.m.names.Norm(rewrite.Table{DB: db}).DB) + "."
	if !strings.Contains(text, prefix) {
		return text
	}
	var b strings.Builder
	for {
		ref := strings.Index(text, `"ref": [`)
		head := text
		if ref >= 0 {
			head = text[:ref]
		}
		b.WriteString(strings.ReplaceAll(head, prefix, ""))
		if ref < 0 {
			return b.String()
		}
		end := strings.Index(text[ref:], "]")
		if end < 0 {
			b.WriteString(text[ref:])
			return b.String()
		}
		b.WriteString(text[ref : ref+end+1])
		text = text[ref+end+1:]
	}
}

// schemaOf is the logical database of a sandbox database the session named
// in a statement of its own (s.schemas).
func (s *Session) schemaOf(phys string) (string, bool) {
	db, ok := s.schemas[phys]
	return db, ok
}

// logicalDB maps a sandbox database of the session's sandbox to the
// logical database it stands for.
func (s *Session) logicalDB(phys string) (string, bool) {
	if s.isInfoSchema(phys) {
		return "information_schema", true
	}
	if s.sb == nil || !strings.HasPrefix(phys, s.m.cfg.Prefix) {
		return "", false
	}
	if phys == sandbox.InfoSchema(s.m.cfg.Prefix, s.sb.ID) {
		return "information_schema", true
	}
	if db, ok := s.schemaOf(phys); ok {
		return db, true
	}
	for e := range s.sb.Each() {
		if e.Phys.DB == phys {
			return e.Logical.DB, true
		}
	}
	return "", false
}
