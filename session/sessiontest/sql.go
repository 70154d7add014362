package sessiontest

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// result is a statement's answer, and the schemas it wrote.
type result struct {
	rows     [][]*string
	affected uint64
	changed  []string
}

// lit is a string literal as rewrite.QuoteString writes it: quoted, or
// hexadecimal with an introducer (parseLiteral reads both).
const lit = `'(?:[^'\\]|\\.|'')*'|_(?:utf8mb4|binary) X'[0-9A-F]*'`

// Statements the fake answers by their whole text: those that are not a
// plain single-table statement, in the forms the manager sends.
var (
	lockCall     = regexp.MustCompile(`^SELECT GET_LOCK\(`)
	versionQuery = regexp.MustCompile(`^SELECT VERSION\(\), @@lower_case_table_names$`)
	releaseLock  = regexp.MustCompile(`^SELECT RELEASE_LOCK\(`)
	usedLock     = regexp.MustCompile(`^SELECT IS_USED_LOCK\(`)
	showGrants   = regexp.MustCompile(`^SHOW GRANTS FOR CURRENT_USER\(\)$`)
	roles        = regexp.MustCompile(`^SELECT ROLE_NAME FROM information_schema\.APPLICABLE_ROLES WHERE GRANTEE = CURRENT_USER\(\)$`)
	currentRole  = regexp.MustCompile(`^SELECT CURRENT_ROLE\(\)$`)
	currentUser  = regexp.MustCompile(`^SELECT CURRENT_USER\(\)$`)
	setStmt      = regexp.MustCompile(`^SET `)
	xaRecover    = regexp.MustCompile(`^XA RECOVER$`)
	lockWaitRead = regexp.MustCompile(`^SELECT @@session\.lock_wait_timeout$`) // Registry.reconcile's
	// addIfMissing adds a column a registry made by an older proxy lacks:
	// the fake's registry is always made afresh, with it.
	addIfMissing = regexp.MustCompile("^ALTER TABLE `\\w+_meta`\\.\\w+ ADD COLUMN IF NOT EXISTS ")
	triggerPrivs = regexp.MustCompile(`^SELECT '\*' FROM information_schema\.USER_PRIVILEGES WHERE PRIVILEGE_TYPE = 'TRIGGER' ` +
		`UNION ALL SELECT TABLE_SCHEMA FROM information_schema\.SCHEMA_PRIVILEGES WHERE PRIVILEGE_TYPE = 'TRIGGER'$`)
	// Manager.expire: sandboxes with their live holders.
	expiry = regexp.MustCompile(`^SELECT s\.id, s\.name, s\.kept, s\.expires_at, s\.last_active, s\.lease_until, ` +
		`\(SELECT COUNT\(\*\) FROM (\S+) h WHERE h\.sandbox_id = s\.id AND h\.lease_until > ('[^']*')\) FROM (\S+) s$`)
	// Registry.InfoNow: the sizes of a sandbox's tables.
	sizes     = regexp.MustCompile(`^SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS, DATA_LENGTH \+ INDEX_LENGTH FROM information_schema\.TABLES WHERE (.*)$`)
	sizesPair = regexp.MustCompile(`^\(TABLE_SCHEMA = (` + lit + `) AND TABLE_NAME = (` + lit + `)\)$`)
	// Registry.Listed: sandboxes with their table counts and bytes (of
	// tables not dropped), their changed tables and change marks.
	listing = regexp.MustCompile(`^SELECT s\.id, s\.name, s\.kept, s\.owner, s\.created_at, s\.expires_at, ` +
		`COUNT\(CASE WHEN t\.kind <> 'dropped' THEN 1 END\), COALESCE\(SUM\(CASE WHEN t\.kind <> 'dropped' THEN t\.bytes END\), 0\), ` +
		`COUNT\(t\.tbl\), s\.changed_at, s\.promoted_at, s\.clean_at FROM (\S+) s LEFT JOIN (\S+) t ON t\.sandbox_id = s\.id AND t\.kind IN \(([^)]*)\) GROUP BY `)
	// Manager.syncOnce: a sandbox's row with its generation.
	generation = regexp.MustCompile(`^SELECT s\.name, s\.owner, s\.created_at, g\.generation FROM (\S+) s LEFT JOIN (\S+) g ` +
		`ON g\.sandbox_id = s\.id WHERE s\.id = (` + lit + `)$`)
	// Manager.takeLease: a sync lease, valid_until on the server's clock.
	leaseWrite = regexp.MustCompile(`^REPLACE INTO (\S+) \(sandbox_id, proxy_id, valid_until\) VALUES \((` + lit + `), (` + lit + `), ` +
		`UTC_TIMESTAMP\(6\) \+ INTERVAL (\d+) MICROSECOND\)$`)
	// Manager.awaitReaders: how long other processes' leases still run.
	leaseLeft = regexp.MustCompile(`^SELECT TIMESTAMPDIFF\(MICROSECOND, UTC_TIMESTAMP\(6\), MAX\(valid_until\)\) FROM (\S+) ` +
		`WHERE sandbox_id = (` + lit + `) AND proxy_id <> (` + lit + `)$`)
	// Manager.reconcile: tables in the proxy's schemas no registry row
	// explains.
	orphans = regexp.MustCompile(`^SELECT t\.TABLE_SCHEMA, t\.TABLE_NAME FROM information_schema\.TABLES t LEFT JOIN (\S+) r ` +
		`ON r\.phys_db = t\.TABLE_SCHEMA AND r\.phys_tbl = t\.TABLE_NAME WHERE t\.TABLE_SCHEMA LIKE (` + lit + `)(?: ESCAPE (` + lit + `))? ` +
		`AND t\.TABLE_SCHEMA <> (` + lit + `) AND r\.sandbox_id IS NULL$`)
	// forker.Triggers: a table's triggers (the fake's set NEW.id).
	triggerList = regexp.MustCompile(`^SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_STATEMENT, SQL_MODE, ` +
		`CHARACTER_SET_CLIENT, COLLATION_CONNECTION FROM information_schema\.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = ` +
		`(` + lit + `) AND EVENT_OBJECT_TABLE = (` + lit + `) ORDER BY `)
	// forker.ExecWith: the settings it sets back.
	sessionVars = regexp.MustCompile(`^SELECT @@(?:sql_mode|character_set_client|collation_connection|sql_quote_show_create)` +
		`(?:, @@(?:sql_mode|character_set_client|collation_connection|sql_quote_show_create))*$`)
	// forker.CreateTrigger: counted on its table.
	createTrigger = regexp.MustCompile(`^CREATE TRIGGER \S+ (?:BEFORE|AFTER) (?:INSERT|UPDATE|DELETE) ON ((?:` + "`(?:[^`]|``)+`" +
		`|\w+)\.(?:` + "`(?:[^`]|``)+`" + `|\w+)) FOR EACH ROW `)
	// forker.ForeignKeys: the fake's tables have no foreign keys.
	foreignKeys = regexp.MustCompile(`^SELECT k\.TABLE_SCHEMA, k\.TABLE_NAME, k\.CONSTRAINT_NAME, .* FROM information_schema\.KEY_COLUMN_USAGE k ` +
		`JOIN information_schema\.REFERENTIAL_CONSTRAINTS r `)
	// Manager.createSandboxSchema: which of two databases exist, with their
	// defaults (the fake's have none).
	schemaDefaults = regexp.MustCompile(`^SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema\.SCHEMATA ` +
		`WHERE SCHEMA_NAME = (` + lit + `) UNION ALL SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME ` +
		`FROM information_schema\.SCHEMATA WHERE SCHEMA_NAME = (` + lit + `)$`)
	createView = regexp.MustCompile(`^CREATE OR REPLACE (?:SQL SECURITY \w+ )?VIEW ((?:` + "`(?:[^`]|``)+`" + `|\w+)\.(?:` +
		"`(?:[^`]|``)+`" + `|\w+)) AS (.*)$`)
)

// emulateFor runs sql for connection c (u.mu held).
func (u *Upstream) emulateFor(c *FakeSide, sql string) (result, error) {
	switch {
	case releaseLock.MatchString(sql):
		return u.releaseLock(c, sql)
	case usedLock.MatchString(sql):
		return u.usedLock(sql)
	}
	return u.emulate(sql)
}

// emulate runs sql on the state (u.mu held): a statement it knows by its
// whole text, or else one emulateParsed parses. One whose parts it cannot
// read is one it does not know (*UnknownError), as Unknown lists.
func (u *Upstream) emulate(sql string) (result, error) {
	r, err := u.emulateText(sql)
	if errors.Is(err, errUnknown) {
		return result{}, &UnknownError{SQL: sql}
	}
	return r, err
}

// answer answers a statement the fake knows by its whole text, from the
// statement's submatches.
type answer func(u *Upstream, m []string) (result, error)

// nothing is the empty result.
func nothing(*Upstream, []string) (result, error) { return result{}, nil }

// texts are the statements the fake knows by their whole text, in the
// order they are tried, with their answers (set by init: some answers run
// statements through emulate, which reads texts).
var texts []knownText

// knownText is a statement the fake knows by its whole text, and its
// answer.
type knownText struct {
	re  *regexp.Regexp
	run answer
}

func init() {
	texts = []knownText{
		{versionQuery, func(u *Upstream, _ []string) (result, error) { return rowsResult(Row(u.version, u.lctn)), nil }},
		{showGrants, func(u *Upstream, _ []string) (result, error) { return column(u.grants), nil }},
		{roles, nothing},
		{xaRecover, nothing}, // Registry.preparedXA: the fake has no XA transaction
		{lockWaitRead, func(*Upstream, []string) (result, error) { return rowsResult(Row("50")), nil }},
		{foreignKeys, nothing},
		{sessionVars, func(_ *Upstream, m []string) (result, error) { return sessionVarsRow(m[0]), nil }},
		{createTrigger, (*Upstream).createTrigger},
		{triggerList, func(u *Upstream, m []string) (result, error) { return u.triggerList(m), nil }},
		{schemaDefaults, func(u *Upstream, m []string) (result, error) { return u.schemaDefaults(m), nil }},
		{currentRole, func(*Upstream, []string) (result, error) { return rowsResult(Row(nil)), nil }},
		{currentUser, func(*Upstream, []string) (result, error) { return rowsResult(Row("sqlfork@%")), nil }}, // the proxy's account
		{setStmt, nothing},
		{addIfMissing, nothing},
		{triggerPrivs, func(u *Upstream, _ []string) (result, error) { return column(u.triggerGrants), nil }},
		{expiry, (*Upstream).expiry},
		{listing, (*Upstream).listing},
		{sizes, (*Upstream).sizes},
		{orphans, (*Upstream).orphans},
		{generation, (*Upstream).generation},
		{leaseWrite, (*Upstream).leaseWrite},
		{leaseLeft, (*Upstream).leaseLeft},
		{createView, (*Upstream).createView},
	}
}

// emulateText is emulate before unknown statements are marked.
func (u *Upstream) emulateText(sql string) (result, error) {
	for _, t := range texts {
		if m := t.re.FindStringSubmatch(sql); m != nil {
			return t.run(u, m)
		}
	}
	return u.emulateParsed(sql)
}

// emulateParsed runs sql, a single-table statement or DDL, by its first
// words; an *UnknownError for what it does not take.
func (u *Upstream) emulateParsed(sql string) (result, error) {
	toks, err := tokenize(sql)
	if err != nil {
		return result{}, &UnknownError{SQL: sql}
	}
	p := &parser{toks: toks}
	var r result
	switch {
	case p.word("SELECT"):
		r, err = u.selectRows(p)
	case p.word("INSERT", "IGNORE", "INTO"):
		r, err = u.insert(p, "ignore")
	case p.word("INSERT", "INTO"):
		r, err = u.insert(p, "insert")
	case p.word("REPLACE", "INTO"):
		r, err = u.insert(p, "replace")
	case p.word("UPDATE"):
		r, err = u.update(p)
	case p.word("DELETE", "FROM"):
		r, err = u.delete(p)
	case p.word("CREATE", "DATABASE", "IF", "NOT", "EXISTS"):
		r, err = u.createDatabase(p)
	case p.word("CREATE", "TABLE", "IF", "NOT", "EXISTS"):
		r, err = u.createStored(p)
	case p.word("CREATE", "TABLE"):
		r, err = u.createLike(p)
	case p.word("FORK", "TABLE"):
		r, err = u.forkTable(p)
	case p.word("ALTER", "TABLE"):
		r, err = u.alter(p)
	case p.word("DROP", "TABLE", "IF", "EXISTS"):
		r, err = u.dropTable(p)
	case p.word("DROP", "DATABASE", "IF", "EXISTS"):
		r, err = u.dropDatabase(p)
	default:
		err = errUnknown
	}
	if err == errUnknown {
		return result{}, &UnknownError{SQL: sql}
	}
	return r, err
}

// column is a result of one row per value of vals.
func column(vals []string) result {
	var r result
	for _, v := range vals {
		r.rows = append(r.rows, Row(v))
	}
	return r
}

// sessionVarsRow answers forker.ExecWith's SELECT @@… of the session
// settings: the fake's fixed values.
func sessionVarsRow(sql string) result {
	vals := map[string]string{"sql_mode": "STRICT_TRANS_TABLES", "character_set_client": "utf8mb4",
		"collation_connection": "utf8mb4_general_ci", "sql_quote_show_create": "1"}
	var row []any
	for _, v := range strings.Split(strings.TrimPrefix(sql, "SELECT @@"), ", @@") {
		row = append(row, vals[v])
	}
	return rowsResult(Row(row...))
}

// createTrigger counts a trigger on the table m[1] names.
func (u *Upstream) createTrigger(m []string) (result, error) {
	db, name, err := parseQName(m[1])
	if err != nil {
		return result{}, err
	}
	o := u.objects[objectKey(db, name)]
	if o == nil {
		return result{}, errNoTable(db, name)
	}
	o.Triggers++
	return result{}, nil
}

// triggerList answers forker.Triggers: one row per trigger counted on the
// table m[1].m[2] name.
func (u *Upstream) triggerList(m []string) result {
	var r result
	db, _ := parseLiteral(m[1])
	name, _ := parseLiteral(m[2])
	if o := u.objects[objectKey(deref(db), deref(name))]; o != nil {
		for i := range o.Triggers {
			r.rows = append(r.rows, Row(fmt.Sprintf("%s_trg%d", o.Name, i), "BEFORE", "INSERT", "SET NEW.id = NEW.id",
				"STRICT_TRANS_TABLES", "utf8mb4", "utf8mb4_general_ci"))
		}
	}
	return r
}

// schemaDefaults answers Manager.createSandboxSchema: a row for each of the
// databases m names that exists, with no defaults.
func (u *Upstream) schemaDefaults(m []string) result {
	var r result
	for _, l := range m[1:] {
		if db, _ := parseLiteral(l); db != nil && u.schemas[*db] {
			r.rows = append(r.rows, Row(*db, nil, nil))
		}
	}
	return r
}

// leaseWrite runs Manager.takeLease's REPLACE with its valid_until, now
// plus m[4] microseconds, written out.
func (u *Upstream) leaseWrite(m []string) (result, error) {
	us, err := strconv.ParseInt(m[4], 10, 64)
	if err != nil {
		return result{}, errUnknown
	}
	until := time.Now().UTC().Add(time.Duration(us) * time.Microsecond).Format(timeLayout)
	return u.emulate(fmt.Sprintf("REPLACE INTO %s (sandbox_id, proxy_id, valid_until) VALUES (%s, %s, '%s')", m[1], m[2], m[3], until))
}

// createView stores the view m[1] as m[2] defines it.
func (u *Upstream) createView(m []string) (result, error) {
	db, name, err := parseQName(m[1])
	if err != nil {
		return result{}, err
	}
	if !u.schemas[db] {
		return result{}, errNoDB(db)
	}
	u.putObject(&object{Table: Table{DB: db, Name: name, Type: "VIEW", Definition: m[2]}})
	return result{changed: []string{db}}, nil
}

// errUnknown marks a statement the parser does not take.
var errUnknown = fmt.Errorf("unknown statement")

func rowsResult(rows ...[]*string) result { return result{rows: rows} }

func errNoDB(db string) error { return Err(1049, "42000", "Unknown database '%s'", db) }

// ---- the manager's joins ----

// expiry answers Manager.expire's query.
func (u *Upstream) expiry(m []string) (result, error) {
	holders, sandboxes, err := u.storedTwo(m[1], m[3])
	if err != nil {
		return result{}, err
	}
	now, _ := parseLiteral(m[2])
	var r result
	for _, s := range sandboxes {
		n := 0
		for _, h := range holders {
			if eq(h["sandbox_id"], s["id"]) && h["lease_until"] != nil && compare(*h["lease_until"], *now) > 0 {
				n++
			}
		}
		r.rows = append(r.rows, []*string{s["id"], s["name"], s["kept"], s["expires_at"], s["last_active"],
			s["lease_until"], itoa(int64(n))})
	}
	return r, nil
}

// listing answers Manager.List's query.
func (u *Upstream) listing(m []string) (result, error) {
	sandboxes, tables, err := u.storedTwo(m[1], m[2])
	if err != nil {
		return result{}, err
	}
	kinds := map[string]bool{}
	for _, k := range strings.Split(m[3], ",") {
		if v, ok := parseLiteral(strings.TrimSpace(k)); ok && v != nil {
			kinds[*v] = true
		}
	}
	var r result
	for _, s := range sandboxes {
		var n, kept, bytes int64
		for _, t := range tables {
			if eq(t["sandbox_id"], s["id"]) && t["kind"] != nil && kinds[*t["kind"]] {
				n++
				if *t["kind"] != "dropped" {
					kept++
					b, _ := strconv.ParseInt(deref(t["bytes"]), 10, 64)
					bytes += b
				}
			}
		}
		r.rows = append(r.rows, []*string{s["id"], s["name"], s["kept"], s["owner"], s["created_at"], s["expires_at"],
			itoa(kept), itoa(bytes), itoa(n), s["changed_at"], s["promoted_at"], s["clean_at"]})
	}
	return r, nil
}

// sizes answers Registry.InfoNow's query: the rows and bytes of the
// tables of the pairs its WHERE names (…) OR (…).
func (u *Upstream) sizes(m []string) (result, error) {
	var r result
	for _, pair := range strings.Split(m[1], " OR ") {
		pm := sizesPair.FindStringSubmatch(pair)
		if pm == nil {
			return result{}, errUnknown
		}
		db, _ := parseLiteral(pm[1])
		name, _ := parseLiteral(pm[2])
		if o := u.objects[objectKey(*db, *name)]; o != nil {
			r.rows = append(r.rows, []*string{db, name, itoa(o.Rows), itoa(o.Bytes)})
		}
	}
	return r, nil
}

// orphans answers Manager.reconcile's query for tables no registry row
// explains.
func (u *Upstream) orphans(m []string) (result, error) {
	tables, err := u.storedRows(m[1])
	if err != nil {
		return result{}, err
	}
	like, _ := parseLiteral(m[2])
	esc, _ := parseLiteral(m[3])
	not, _ := parseLiteral(m[4])
	var r result
	for _, o := range u.sortedObjects() {
		if !matchLike(o.DB, *like, escapeOf(esc)) || o.DB == *not {
			continue
		}
		explained := false
		for _, t := range tables {
			if deref(t["phys_db"]) == o.DB && deref(t["phys_tbl"]) == o.Name {
				explained = true
			}
		}
		if !explained {
			r.rows = append(r.rows, Row(o.DB, o.Name))
		}
	}
	return r, nil
}

// generation answers Manager.syncOnce's query.
func (u *Upstream) generation(m []string) (result, error) {
	sandboxes, gens, err := u.storedTwo(m[1], m[2])
	if err != nil {
		return result{}, err
	}
	id, _ := parseLiteral(m[3])
	var r result
	for _, s := range sandboxes {
		if !eq(s["id"], id) {
			continue
		}
		var gen *string
		for _, g := range gens {
			if eq(g["sandbox_id"], id) {
				gen = g["generation"]
			}
		}
		r.rows = append(r.rows, []*string{s["name"], s["owner"], s["created_at"], gen})
	}
	return r, nil
}

// timeLayout is how the registry's DATETIME(6) values read.
const timeLayout = "2006-01-02 15:04:05.000000"

// leaseLeft answers Manager.awaitReaders's query: the microseconds until
// the last of the other processes' leases ends, NULL without one.
func (u *Upstream) leaseLeft(m []string) (result, error) {
	rows, err := u.storedRows(m[1])
	if err != nil {
		return result{}, err
	}
	id, _ := parseLiteral(m[2])
	self, _ := parseLiteral(m[3])
	var last time.Time
	for _, r := range rows {
		if !eq(r["sandbox_id"], id) || eq(r["proxy_id"], self) || r["valid_until"] == nil {
			continue
		}
		t, err := time.Parse(timeLayout, *r["valid_until"])
		if err != nil {
			return result{}, fmt.Errorf("sessiontest: valid_until %q: %w", *r["valid_until"], err)
		}
		if t.After(last) {
			last = t
		}
	}
	if last.IsZero() {
		return rowsResult(Row(nil)), nil
	}
	return rowsResult(Row(last.Sub(time.Now().UTC()).Microseconds())), nil
}

// storedRows returns the rows of the stored table named by qualified name
// text.
func (u *Upstream) storedRows(qname string) ([]map[string]*string, error) {
	db, name, err := parseQName(qname)
	if err != nil {
		return nil, err
	}
	return u.rowsOf(db, name)
}

// storedTwo is storedRows of two tables, the manager's joins' sides.
func (u *Upstream) storedTwo(a, b string) (x, y []map[string]*string, err error) {
	if x, err = u.storedRows(a); err != nil {
		return nil, nil, err
	}
	if y, err = u.storedRows(b); err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// ---- single-table statements ----

// selectItem is one item of a SELECT list.
type selectItem struct {
	op   string // col, count, sum (a + b), coalesce (a, lit), less (a < lit)
	a, b string
	lit  *string
}

// cond is one condition of a WHERE: col op literal.
type cond struct {
	col, op string
	lit     *string
	esc     byte // LIKE's escape character
}

// selectRows runs SELECT items FROM db.t [alias] [WHERE …] [ORDER BY col].
func (u *Upstream) selectRows(p *parser) (result, error) {
	items, ok := list(p, p.selectItem)
	if !ok || !p.word("FROM") {
		return result{}, errUnknown
	}
	db, name, ok := p.qname()
	if !ok {
		return result{}, errUnknown
	}
	if t := p.peek(); t.kind == 'w' && !strings.EqualFold(t.text, "WHERE") && !strings.EqualFold(t.text, "ORDER") {
		p.i++ // an alias
	}
	conds, ok := p.where()
	if !ok {
		return result{}, errUnknown
	}
	if p.word("ORDER", "BY") {
		if _, ok := p.name(); !ok {
			return result{}, errUnknown
		}
	}
	if !p.end() {
		return result{}, errUnknown
	}
	rows, err := u.rowsOf(db, name)
	if err != nil {
		return result{}, err
	}
	var matched []map[string]*string
	for _, r := range rows {
		if matches(r, conds) {
			matched = append(matched, r)
		}
	}
	for _, it := range items {
		if it.op == "count" {
			return rowsResult(Row(len(matched))), nil
		}
	}
	var r result
	for _, row := range matched {
		out := make([]*string, len(items))
		for i, it := range items {
			out[i] = it.eval(row)
		}
		r.rows = append(r.rows, out)
	}
	return r, nil
}

// eval computes the item for row.
func (it selectItem) eval(row map[string]*string) *string {
	a := row[strings.ToLower(it.a)]
	switch it.op {
	case "sum":
		b := row[strings.ToLower(it.b)]
		if a == nil || b == nil {
			return nil
		}
		x, _ := strconv.ParseInt(*a, 10, 64)
		y, _ := strconv.ParseInt(*b, 10, 64)
		return itoa(x + y)
	case "coalesce":
		if a == nil {
			return it.lit
		}
	case "less":
		if a == nil || it.lit == nil {
			return nil
		}
		if compare(*a, *it.lit) < 0 {
			return sp("1")
		}
		return sp("0")
	}
	return a
}

// matches reports whether row meets every condition.
func matches(row map[string]*string, conds []cond) bool {
	for _, c := range conds {
		v := row[strings.ToLower(c.col)]
		if v == nil || c.lit == nil {
			return false
		}
		var ok bool
		switch c.op {
		case "=":
			ok = compare(*v, *c.lit) == 0
		case "<>":
			ok = compare(*v, *c.lit) != 0
		case "<":
			ok = compare(*v, *c.lit) < 0
		case ">":
			ok = compare(*v, *c.lit) > 0
		case "LIKE":
			ok = matchLike(*v, *c.lit, c.esc)
		}
		if !ok {
			return false
		}
	}
	return true
}

// compare compares numbers as numbers, anything else as bytes (the
// registry's collation is utf8mb4_bin; times compare as their text).
func compare(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA == nil && errB == nil {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return strings.Compare(a, b)
}

func eq(a, b *string) bool { return a != nil && b != nil && *a == *b }

func deref(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

// escapeOf is LIKE's escape character: ESCAPE's (esc), else backslash.
func escapeOf(esc *string) byte {
	if esc != nil && len(*esc) == 1 {
		return (*esc)[0]
	}
	return '\\'
}

// matchLike is LIKE with % and _ and the escape character esc
// (case-sensitive).
func matchLike(s, pat string, esc byte) bool {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; {
		case c == esc && i+1 < len(pat):
			i++
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		case c == '%':
			b.WriteString("(?s:.*)")
		case c == '_':
			b.WriteString("(?s:.)")
		default:
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String()).MatchString(s)
}

// insert runs INSERT [IGNORE] / REPLACE INTO db.t (cols) VALUES (…), and
// the fork's INSERT INTO dst (cols) SELECT cols FROM src.
func (u *Upstream) insert(p *parser, how string) (result, error) {
	db, name, ok := p.qname()
	if !ok {
		return result{}, errUnknown
	}
	cols, ok := p.nameList()
	if !ok {
		return result{}, errUnknown
	}
	o := u.objects[objectKey(db, name)]
	if how == "insert" && p.word("SELECT") {
		return u.copyRows(p, o, db, name, cols)
	}
	if !p.word("VALUES") {
		return result{}, errUnknown
	}
	vals, ok := p.literalList()
	if !ok || len(vals) != len(cols) {
		return result{}, errUnknown
	}
	var incr *increment
	if p.word("ON", "DUPLICATE", "KEY", "UPDATE") {
		if incr, ok = p.increment(); !ok || how != "insert" {
			return result{}, errUnknown
		}
	}
	if !p.end() {
		return result{}, errUnknown
	}
	if o == nil {
		return result{}, errNoTable(db, name)
	}
	changed := []string{db}
	if !o.stored {
		o.Rows++ // a production table: only its count changes here
		return result{affected: 1, changed: changed}, nil
	}
	row := map[string]*string{}
	for k, v := range o.defaults {
		row[k] = v
	}
	for i, c := range cols {
		if !o.hasColumn(c) {
			return result{}, Err(1054, "42S22", "Unknown column '%s' in 'field list'", c)
		}
		row[strings.ToLower(c)] = vals[i]
	}
	var kept []map[string]*string
	var removed uint64
	for _, old := range o.rows {
		if key := o.conflict(old, row); key != "" {
			if incr != nil {
				old[incr.col] = incr.apply(old[incr.col])
				return result{affected: 2, changed: changed}, nil
			}
			switch how {
			case "ignore":
				return result{changed: changed}, nil
			case "insert":
				return result{}, Err(1062, "23000", "Duplicate entry '%s' for key '%s'", o.keyValue(row, key), key)
			}
			removed++
			continue
		}
		kept = append(kept, old)
	}
	o.rows = append(kept, row)
	return result{affected: 1 + removed, changed: changed}, nil
}

// copyRows is INSERT INTO dst (cols) SELECT cols FROM src: dst takes src's
// row count and size.
func (u *Upstream) copyRows(p *parser, dst *object, db, name string, cols []string) (result, error) {
	src, ok := list(p, p.name)
	if !ok || !p.word("FROM") {
		return result{}, errUnknown
	}
	sdb, sname, ok := p.qname()
	if !ok || !p.end() {
		return result{}, errUnknown
	}
	from := u.objects[objectKey(sdb, sname)]
	switch {
	case from == nil:
		return result{}, errNoTable(sdb, sname)
	case dst == nil:
		return result{}, errNoTable(db, name)
	case strings.Join(src, ",") != strings.Join(cols, ","):
		return result{}, Err(1136, "21S01", "Column count doesn't match value count at row 1")
	}
	for _, c := range cols {
		col, ok := dst.column(c)
		switch {
		case !ok:
			return result{}, Err(1054, "42S22", "Unknown column '%s' in 'field list'", c)
		case col.Generated != "":
			return result{}, Err(1906, "HY000", "The value specified for generated column '%s' in table '%s' has been ignored", c, name)
		}
	}
	dst.Rows += from.Rows
	dst.Bytes = from.Bytes
	return result{affected: uint64(from.Rows), changed: []string{db}}, nil
}

// increment is ON DUPLICATE KEY UPDATE col = col + n.
type increment struct {
	col string
	n   int64
}

// increment reads col = col + n.
func (p *parser) increment() (*increment, bool) {
	c, ok := p.name()
	if !ok || !p.punct("=") {
		return nil, false
	}
	again, ok := p.name()
	if !ok || !strings.EqualFold(again, c) || !p.punct("+") {
		return nil, false
	}
	v, ok := p.literal()
	if !ok || v == nil {
		return nil, false
	}
	n, err := strconv.ParseInt(*v, 10, 64)
	if err != nil {
		return nil, false
	}
	return &increment{col: strings.ToLower(c), n: n}, true
}

// apply adds the increment to v (NULL stays NULL).
func (i *increment) apply(v *string) *string {
	if v == nil {
		return nil
	}
	x, _ := strconv.ParseInt(*v, 10, 64)
	return itoa(x + i.n)
}

// assignment is col = literal of UPDATE's SET, or col =
// GREATEST(COALESCE(col, literal), literal): the later of the two
// (greatest).
type assignment struct {
	col      string // lower-cased
	v        *string
	greatest bool
}

// assignment reads col = literal or col = GREATEST(COALESCE(col,
// literal), literal) (the registry's marks: the literals are one time).
func (p *parser) assignment() (assignment, bool) {
	c, ok := p.name()
	if !ok || !p.punct("=") {
		return assignment{}, false
	}
	if p.word("GREATEST") {
		if !p.punct("(") || !p.word("COALESCE") || !p.punct("(") {
			return assignment{}, false
		}
		if same, ok := p.name(); !ok || !strings.EqualFold(same, c) || !p.punct(",") {
			return assignment{}, false
		}
		v, ok := p.literal()
		if !ok || !p.punct(")") || !p.punct(",") {
			return assignment{}, false
		}
		if _, ok := p.literal(); !ok || !p.punct(")") {
			return assignment{}, false
		}
		return assignment{col: strings.ToLower(c), v: v, greatest: true}, true
	}
	v, ok := p.literal()
	return assignment{col: strings.ToLower(c), v: v}, ok
}

// update runs UPDATE db.t SET col = lit, … [WHERE …].
func (u *Upstream) update(p *parser) (result, error) {
	db, name, ok := p.qname()
	if !ok || !p.word("SET") {
		return result{}, errUnknown
	}
	sets, ok := list(p, p.assignment)
	if !ok {
		return result{}, errUnknown
	}
	set := map[string]assignment{}
	for _, a := range sets {
		set[a.col] = a
	}
	conds, ok := p.where()
	if !ok || !p.end() {
		return result{}, errUnknown
	}
	o := u.objects[objectKey(db, name)]
	if o == nil {
		return result{}, errNoTable(db, name)
	}
	var n uint64
	if o.stored {
		for _, r := range o.rows {
			if matches(r, conds) {
				for c, a := range set {
					if !a.greatest || r[c] == nil || a.v != nil && compare(*a.v, *r[c]) > 0 {
						r[c] = a.v
					}
				}
				n++
			}
		}
	}
	return result{affected: n, changed: []string{db}}, nil
}

// delete runs DELETE FROM db.t [WHERE …].
func (u *Upstream) delete(p *parser) (result, error) {
	db, name, ok := p.qname()
	if !ok {
		return result{}, errUnknown
	}
	conds, ok := p.where()
	if !ok || !p.end() {
		return result{}, errUnknown
	}
	o := u.objects[objectKey(db, name)]
	if o == nil {
		return result{}, errNoTable(db, name)
	}
	var kept []map[string]*string
	var n uint64
	for _, r := range o.rows {
		if matches(r, conds) {
			n++
			continue
		}
		kept = append(kept, r)
	}
	o.rows = kept
	return result{affected: n, changed: []string{db}}, nil
}
