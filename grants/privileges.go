package grants

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
)

// This file answers one question about the proxy's upstream account: can it
// change production, i.e. anything outside the proxy's own schemas (those
// whose names start with the sandbox prefix)? The answer is read from SHOW
// GRANTS, for the account and for every role it may enable, and is meant to
// be logged and exported at start: the recommended set-up (docs/OPERATIONS.md)
// lets the database itself guarantee that production is never written, and
// an account that can write production silently loses that guarantee.

// readOnlyPrivileges are the privileges that cannot change anything, on any
// target. Every other privilege, including ones this list does not know,
// counts as writing when its target is not entirely inside the proxy's
// schemas.
var readOnlyPrivileges = map[string]bool{
	"USAGE":               true, // no privilege at all
	"SELECT":              true, // read rows (also SELECT (col, …))
	"SHOW VIEW":           true, // SHOW CREATE VIEW
	"SHOW DATABASES":      true, // list schemas
	"PROCESS":             true, // see other threads (killing them needs CONNECTION ADMIN or SUPER)
	"REPLICATION CLIENT":  true, // SHOW MASTER/SLAVE STATUS, SHOW BINARY LOGS (MySQL; MariaDB's old name of BINLOG MONITOR)
	"BINLOG MONITOR":      true, // MariaDB ≥ 10.5: SHOW BINLOG STATUS, SHOW BINARY LOGS
	"SLAVE MONITOR":       true, // MariaDB ≥ 10.5: SHOW SLAVE STATUS, SHOW RELAYLOG EVENTS
	"REPLICA MONITOR":     true, // MariaDB's synonym of SLAVE MONITOR
	"SHOW CREATE ROUTINE": true, // MariaDB ≥ 11.3: read routine definitions
	"SHOW_ROUTINE":        true, // MySQL ≥ 8.0.20: read routine definitions
}

// grantsWriteProduction reports whether the grants, lines of SHOW GRANTS
// output (for the account, for its roles and for PUBLIC alike), let their
// holder change anything outside the schemas whose names start with
// prefix. why lists the offending grants, one short entry per SHOW GRANTS
// line (never a password hash), in the order of grants; it is empty exactly
// when writable is false.
//
// A grant counts as writing when it holds a privilege not in
// readOnlyPrivileges on a target that is not entirely inside the proxy's
// schemas, and always when it holds GRANT OPTION, or ADMIN OPTION on a
// role: both let the account change the server's privilege tables.
// Targets:
//
//   - *.* (global) is never inside;
//   - `db`.* is inside when every name the LIKE pattern db matches starts
//     with prefix: `\_sqlfork%` is, `_sqlfork%` (its unescaped _ matches any
//     character) is not;
//   - `db`.`tbl` and routines (FUNCTION, PROCEDURE, PACKAGE [BODY] `db`.`x`)
//     name db literally, without wildcards: inside when db starts with prefix;
//   - PROXY ON user@host is never inside (it lets the account act as another).
//
// EXECUTE is not read-only: a routine with SQL SECURITY DEFINER runs with its
// definer's privileges, so EXECUTE on any production routine (or on a whole
// production schema) counts as writing. Role grants (GRANT `role` TO …) add
// nothing by themselves: the caller passes the role's own grants as well.
// SET DEFAULT ROLE and REVOKE lines (MySQL's partial revokes, which only take
// privileges away) are ignored. A line that cannot be parsed counts as
// writing. With an empty prefix no schema is the proxy's.
func grantsWriteProduction(grants []string, prefix string) (writable bool, why []string) {
	seen := map[string]bool{}
	for _, line := range grants {
		g := parseGrant(line)
		if g == nil {
			continue
		}
		w := g.offending(prefix)
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		why = append(why, w)
	}
	return len(why) > 0, why
}

// ProductionWritable reports whether the account that c is logged in as may
// change production, i.e. anything outside the schemas whose names start
// with prefix (the sandbox prefix, default _sqlfork). It reads SHOW
// GRANTS for the account and for every role granted to it, whether enabled
// or not, and applies the rules of grantsWriteProduction; why lists the
// offending grants in a short form, fit for a log line. On MariaDB it
// enables each role in turn (SET ROLE, which SHOW GRANTS FOR a role needs)
// and restores the connection's current role before returning.
func ProductionWritable(ctx context.Context, c forker.Conn, prefix string) (writable bool, why []string, err error) {
	// FOR CURRENT_USER() lists the account's own grants and, on MariaDB ≥
	// 10.11, PUBLIC's, but not those of its current role (plain SHOW GRANTS
	// would add the current role's only).
	lines, err := Show(ctx, c, "SHOW GRANTS FOR CURRENT_USER()")
	if err != nil {
		return false, nil, err
	}
	roles := accountRoles(ctx, c, lines)
	// MariaDB shows a role's grants only while it is the current role:
	// the one current before is restored.
	sw := &roleSwitcher{}
	defer func() {
		if rerr := sw.restore(context.WithoutCancel(ctx), c); rerr != nil && err == nil {
			err = rerr
		}
	}()
	for i := 0; i < len(roles.list); i++ {
		got, err := roleGrants(ctx, c, roles.list[i], sw)
		if err != nil {
			return false, nil, err
		}
		lines = append(lines, got...)
		for _, r := range unshownRoles(got) {
			roles.add(r)
		}
	}
	writable, why = grantsWriteProduction(lines, prefix)
	return writable, why, nil
}

// roleQueue lists roles whose grants are to be read, each once.
type roleQueue struct {
	list []grantee
	seen map[string]bool
}

// add queues r unless it was queued before.
func (q *roleQueue) add(r grantee) {
	if k := r.String(); !q.seen[k] {
		q.seen[k] = true
		q.list = append(q.list, r)
	}
}

// accountRoles lists the roles granted to the account whose grant lines
// are lines: from those lines, and on MariaDB also from information_schema
// (an error there, e.g. on a MySQL without it, is not fatal: the grant
// lines name the same roles).
func accountRoles(ctx context.Context, c forker.Conn, lines []string) *roleQueue {
	q := &roleQueue{seen: map[string]bool{}}
	for _, l := range lines {
		if g := parseGrant(l); g != nil {
			for _, r := range g.roles {
				q.add(r)
			}
		}
	}
	if rows, err := c.Query(ctx, "SELECT ROLE_NAME FROM information_schema.APPLICABLE_ROLES WHERE GRANTEE = CURRENT_USER()"); err == nil {
		for _, row := range rows {
			if len(row) > 0 && row[0] != nil && *row[0] != "" {
				q.add(grantee{user: *row[0]})
			}
		}
	}
	return q
}

// roleGrants reads the grants of the role r: on MySQL 8, where roles are
// user@host, SHOW GRANTS … USING adds r's privileges to the account's; on
// MariaDB r is enabled (sw) and its own grants read.
func roleGrants(ctx context.Context, c forker.Conn, r grantee, sw *roleSwitcher) ([]string, error) {
	if r.host != nil {
		return Show(ctx, c, "SHOW GRANTS FOR CURRENT_USER() USING "+r.String())
	}
	if err := sw.enable(ctx, c, r); err != nil {
		return nil, err
	}
	return Show(ctx, c, "SHOW GRANTS FOR "+quote.Ident(r.user))
}

// unshownRoles are the roles granted in a role's grant lines whose own
// grants the lines do not show. MariaDB includes the grants of roles
// granted to the role; should some be missing, they are asked for too.
func unshownRoles(lines []string) []grantee {
	shown := map[string]bool{}
	var nested []grantee
	for _, l := range lines {
		if g := parseGrant(l); g != nil {
			shown[g.to.String()] = true
			nested = append(nested, g.roles...)
		}
	}
	var out []grantee
	for _, n := range nested {
		if !shown[n.String()] {
			out = append(out, n)
		}
	}
	return out
}

// roleSwitcher enables roles on a MariaDB connection one after another,
// and restores the role that was current before the first.
type roleSwitcher struct {
	switched bool
	previous *string // CURRENT_ROLE() before the first switch
}

// enable makes r the connection's current role.
func (sw *roleSwitcher) enable(ctx context.Context, c forker.Conn, r grantee) error {
	if !sw.switched {
		rows, err := c.Query(ctx, "SELECT CURRENT_ROLE()")
		if err != nil {
			return fmt.Errorf("current role: %w", err)
		}
		if len(rows) > 0 && len(rows[0]) > 0 {
			sw.previous = rows[0][0]
		}
		sw.switched = true
	}
	if _, err := c.Exec(ctx, "SET ROLE "+quote.Ident(r.user)); err != nil {
		return fmt.Errorf("enabling role %s to read its grants: %w", r, err)
	}
	return nil
}

// restore makes the role current before the first enable current again
// (nothing when no role was enabled).
func (sw *roleSwitcher) restore(ctx context.Context, c forker.Conn) error {
	if !sw.switched {
		return nil
	}
	restore := "SET ROLE NONE"
	if sw.previous != nil && *sw.previous != "" && !strings.EqualFold(*sw.previous, "NONE") {
		restore = "SET ROLE " + quote.Ident(*sw.previous)
	}
	if _, err := c.Exec(ctx, restore); err != nil {
		return fmt.Errorf("restoring the current role: %w", err)
	}
	return nil
}

// Show runs a SHOW GRANTS statement and returns its lines.
func Show(ctx context.Context, c forker.Conn, stmt string) ([]string, error) {
	rows, err := c.Query(ctx, stmt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stmt, err)
	}
	var lines []string
	for _, row := range rows {
		if len(row) > 0 && row[0] != nil {
			lines = append(lines, *row[0])
		}
	}
	return lines, nil
}

// grantee is an account or role as SHOW GRANTS names it: `user`@`host`,
// a MariaDB role `role` (host nil), or PUBLIC.
type grantee struct {
	user string
	host *string
	bare bool // written unquoted, like PUBLIC
}

// String is the back-quoted form, usable in SQL (PUBLIC stays unquoted).
func (g grantee) String() string {
	if g.bare && g.host == nil {
		return g.user
	}
	s := quote.Ident(g.user)
	if g.host != nil {
		s += "@" + quote.Ident(*g.host)
	}
	return s
}

// parsedGrant is one parsed SHOW GRANTS line.
type parsedGrant struct {
	privs []grantPriv // empty for a role grant
	// target, for privileges:
	kind       string // "" (a table or schema), FUNCTION, PROCEDURE, PACKAGE, PACKAGE BODY, or PROXY
	db, table  string // db is "*" for *.*; table "*" for db.*
	proxied    grantee
	to         grantee
	roles      []grantee // for a role grant: the roles granted
	grantOpt   bool      // WITH GRANT OPTION
	adminOpt   bool      // WITH ADMIN OPTION (role grants)
	unparsable string    // set when the line could not be parsed: the line, shortened
}

// grantPriv is one entry of a grant's privilege list.
type grantPriv struct {
	name    string   // upper case, single spaces: "ALL PRIVILEGES", "SHOW VIEW"
	columns []string // for column privileges: SELECT (`a`, `b`)
}

// String is the privilege as SHOW GRANTS writes it.
func (p grantPriv) String() string {
	if len(p.columns) == 0 {
		return p.name
	}
	cs := make([]string, len(p.columns))
	for i, c := range p.columns {
		cs[i] = quote.Ident(c)
	}
	return p.name + " (" + strings.Join(cs, ", ") + ")"
}

// targetString is the grant's target as SHOW GRANTS writes it.
func (g *parsedGrant) targetString() string {
	if g.kind == "PROXY" {
		return g.proxied.String()
	}
	part := func(s string) string {
		if s == "*" {
			return s
		}
		return quote.Ident(s)
	}
	t := part(g.db) + "." + part(g.table)
	if g.kind != "" {
		t = g.kind + " " + t
	}
	return t
}

// inside reports whether the grant's target lies entirely inside the
// proxy's schemas.
func (g *parsedGrant) inside(prefix string) bool {
	if prefix == "" {
		return false
	}
	switch {
	case g.kind == "PROXY", g.db == "*":
		return false
	case g.kind == "" && g.table == "*":
		return PatternInside(g.db, prefix)
	default: // a table, a column or a routine: the schema is named literally
		return strings.HasPrefix(g.db, prefix)
	}
}

// offending is the short description of what in g writes production, or "".
func (g *parsedGrant) offending(prefix string) string {
	if g.unparsable != "" {
		return "unrecognised grant: " + g.unparsable
	}
	if g.roles != nil {
		if !g.adminOpt {
			return ""
		}
		rs := make([]string, len(g.roles))
		for i, r := range g.roles {
			rs[i] = r.String()
		}
		return "ADMIN OPTION ON ROLE " + strings.Join(rs, ", ") + " TO " + g.to.String()
	}
	var bad []string
	inside := g.inside(prefix)
	for _, p := range g.privs {
		if readOnlyPrivileges[p.name] || inside {
			continue
		}
		bad = append(bad, p.String())
	}
	if g.grantOpt {
		bad = append(bad, "GRANT OPTION")
	}
	if len(bad) == 0 {
		return ""
	}
	return strings.Join(bad, ", ") + " ON " + g.targetString() + " TO " + g.to.String()
}

// PatternInside reports whether every name the schema pattern pat of a
// schema-level grant (LIKE syntax: % any run, _ any character, \ escapes)
// matches starts with prefix.
func PatternInside(pat, prefix string) bool {
	i := 0
	for j := 0; j < len(prefix); j++ {
		if i >= len(pat) {
			return false
		}
		c := pat[i]
		switch c {
		case '%', '_':
			return false // a wildcard where the prefix needs a fixed byte
		case '\\':
			if i+1 >= len(pat) {
				return false
			}
			i++
			c = pat[i]
		}
		if c != prefix[j] {
			return false
		}
		i++
	}
	return true
}

// parseGrant parses one line of SHOW GRANTS output. It returns nil for lines
// that grant nothing (SET DEFAULT ROLE, REVOKE, blank), and a grant with
// unparsable set for lines it does not understand.
func parseGrant(line string) *parsedGrant {
	toks, ok := tokenizeGrant(line)
	if len(toks) == 0 && ok {
		return nil
	}
	bad := func() *parsedGrant { return &parsedGrant{unparsable: shortenGrant(line)} }
	if !ok || toks[0].kind != gtWord {
		return bad()
	}
	switch toks[0].upper() {
	case "SET", "REVOKE":
		return nil
	case "GRANT":
	default:
		return bad()
	}
	p := &grantParser{toks: toks, pos: 1}
	g := &parsedGrant{}
	if t := p.peek(); t.kind == gtIdent || t.kind == gtString {
		// GRANT `role`[@`host`], … TO grantee [WITH ADMIN OPTION]
		g.roles = []grantee{}
		for {
			r, ok := p.grantee()
			if !ok {
				return bad()
			}
			g.roles = append(g.roles, r)
			if !p.punct(',') {
				break
			}
		}
	} else if !p.privileges(g) {
		return bad()
	}
	if !p.word("TO") {
		return bad()
	}
	to, ok := p.grantee()
	if !ok {
		return bad()
	}
	g.to = to
	// The rest: IDENTIFIED … (MariaDB), REQUIRE …, WITH GRANT OPTION,
	// WITH ADMIN OPTION, WITH MAX_… resource limits, AS … (MySQL).
	for ; p.pos < len(p.toks); p.pos++ {
		t := p.toks[p.pos]
		if t.kind != gtWord || p.pos+1 >= len(p.toks) {
			continue
		}
		next := p.toks[p.pos+1]
		if next.kind != gtWord || next.upper() != "OPTION" {
			continue
		}
		switch t.upper() {
		case "GRANT":
			g.grantOpt = true
		case "ADMIN":
			g.adminOpt = true
		}
	}
	return g
}

// privileges parses "priv [(cols)], … ON target" into g.
func (p *grantParser) privileges(g *parsedGrant) bool {
	for {
		pr, ok := p.privilege()
		if !ok {
			return false
		}
		g.privs = append(g.privs, pr)
		if p.punct(',') {
			continue
		}
		if p.word("ON") {
			break
		}
		return false
	}
	return p.target(g)
}

// privilege parses one "priv [(cols)]": its words, and its columns.
func (p *grantParser) privilege() (grantPriv, bool) {
	var words []string
	for {
		t := p.peek()
		if t.kind != gtWord || (t.upper() == "ON" && len(words) > 0) {
			break
		}
		words = append(words, t.upper())
		p.pos++
	}
	if len(words) == 0 {
		return grantPriv{}, false
	}
	pr := grantPriv{name: strings.Join(words, " ")}
	if !p.punct('(') {
		return pr, true
	}
	for {
		t := p.next()
		if t.kind != gtIdent && t.kind != gtWord {
			return pr, false
		}
		pr.columns = append(pr.columns, t.text)
		if p.punct(')') {
			return pr, true
		}
		if !p.punct(',') {
			return pr, false
		}
	}
}

// target parses what follows ON into g: the grantee of PROXY, or
// [FUNCTION|PROCEDURE|PACKAGE [BODY]|TABLE] db.table.
func (p *grantParser) target(g *parsedGrant) bool {
	if len(g.privs) == 1 && g.privs[0].name == "PROXY" && len(g.privs[0].columns) == 0 {
		g.kind = "PROXY"
		pg, ok := p.grantee()
		g.proxied = pg
		return ok
	}
	switch {
	case p.word("FUNCTION"):
		g.kind = "FUNCTION"
	case p.word("PROCEDURE"):
		g.kind = "PROCEDURE"
	case p.word("PACKAGE"):
		g.kind = "PACKAGE"
		if p.word("BODY") {
			g.kind = "PACKAGE BODY"
		}
	case p.word("TABLE"):
	}
	db, ok := p.targetName()
	if !ok {
		return false
	}
	if !p.punct('.') {
		// "ON *" or "ON tbl": relative to the current schema, which SHOW
		// GRANTS never prints; treat as unknown.
		return false
	}
	tbl, ok := p.targetName()
	if !ok || (db == "*" && tbl != "*") {
		return false
	}
	g.db, g.table = db, tbl
	return true
}

// targetName parses a schema or table name of a grant's target: * or a name.
func (p *grantParser) targetName() (string, bool) {
	t := p.next()
	switch {
	case t.kind == gtPunct && t.text == "*":
		return "*", true
	case t.kind == gtIdent, t.kind == gtWord && t.upper() != "TO":
		return t.text, true
	}
	return "", false
}

// grantee parses user[@host], a role or PUBLIC.
func (p *grantParser) grantee() (grantee, bool) {
	t := p.next()
	switch {
	case t.kind == gtIdent, t.kind == gtString:
	case t.kind == gtWord && t.upper() != "TO" && t.upper() != "ON":
	default:
		return grantee{}, false
	}
	g := grantee{user: t.text, bare: t.kind == gtWord}
	if p.punct('@') {
		h := p.next()
		if h.kind != gtIdent && h.kind != gtString && h.kind != gtWord {
			return grantee{}, false
		}
		host := h.text
		g.host = &host
	}
	return g, true
}

// shortenGrant is line cut before any credentials and to at most 100 bytes.
func shortenGrant(line string) string {
	if i := strings.Index(strings.ToUpper(line), " IDENTIFIED "); i >= 0 {
		line = line[:i] + " …"
	}
	if len(line) > 100 {
		line = line[:100] + "…"
	}
	return line
}

// Tokens of a SHOW GRANTS line.
const (
	gtWord   = iota // unquoted: GRANT, SELECT, PUBLIC, db names
	gtIdent         // `back-quoted` (or "double-quoted", under ANSI_QUOTES), unescaped
	gtString        // 'single'-quoted, unescaped
	gtPunct         // one of ( ) , . * @ =
	gtEOF
)

// grantToken is one grantToken of a SHOW GRANTS line: its kind and its text
// (unquoted for identifiers and strings).
type grantToken struct {
	kind int
	text string
}

// upper is the grantToken's text in upper case, for keyword comparisons.
func (t grantToken) upper() string { return strings.ToUpper(t.text) }

// errGrantQuote is a quote without its closing quote.
var errGrantQuote = errors.New("unterminated quote")

// tokenizeGrant splits line into tokens; ok is false when it has an unterminated
// quote or a character that belongs nowhere.
func tokenizeGrant(line string) (toks []grantToken, ok bool) {
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '`' || c == '\'' || c == '"':
			s, n, err := unquoteGrant(line[i:])
			if err != nil {
				return toks, false
			}
			// SHOW GRANTS quotes strings (passwords) with ' and names with
			// ` — or with " under ANSI_QUOTES.
			kind := gtString
			if c == '`' || c == '"' {
				kind = gtIdent
			}
			toks = append(toks, grantToken{kind, s})
			i += n
		case strings.IndexByte("(),.*@=", c) >= 0:
			toks = append(toks, grantToken{gtPunct, string(c)})
			i++
		case grantWordByte(c):
			j := i
			for j < len(line) && grantWordByte(line[j]) {
				j++
			}
			toks = append(toks, grantToken{gtWord, line[i:j]})
			i = j
		default:
			return toks, false
		}
	}
	return toks, true
}

// grantWordByte reports whether c may be part of an unquoted word.
func grantWordByte(c byte) bool {
	return c == '_' || c == '$' || c == '%' || c == '-' || c == '#' || c >= '0' && c <= '9' ||
		c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// unquoteGrant reads the quoted token at the start of s; n is its length in s.
// Quoted identifiers double the quote; strings also take backslash
// escapes.
func unquoteGrant(s string) (text string, n int, err error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q && i+1 < len(s) && s[i+1] == q:
			b.WriteByte(q)
			i++
		case c == q:
			return b.String(), i + 1, nil
		case c == '\\' && q == '\'' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errGrantQuote
}

// grantParser walks tokens.
type grantParser struct {
	toks []grantToken
	pos  int
}

// peek returns the next grantToken without consuming it (gtEOF at the end).
func (p *grantParser) peek() grantToken {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return grantToken{kind: gtEOF}
}

// next consumes and returns the next grantToken (gtEOF at the end).
func (p *grantParser) next() grantToken {
	t := p.peek()
	if p.pos < len(p.toks) {
		p.pos++
	}
	return t
}

// word consumes the keyword w (case-insensitive) if it comes next.
func (p *grantParser) word(w string) bool {
	if t := p.peek(); t.kind == gtWord && t.upper() == w {
		p.pos++
		return true
	}
	return false
}

// punct consumes the punctuation c if it comes next.
func (p *grantParser) punct(c byte) bool {
	if t := p.peek(); t.kind == gtPunct && t.text == string(c) {
		p.pos++
		return true
	}
	return false
}
