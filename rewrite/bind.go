package rewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfork/sqlfork-proxy/rewrite/body"
	"github.com/sqlfork/sqlfork-proxy/rewrite/charset"
	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/forms"
	"github.com/sqlfork/sqlfork-proxy/rewrite/ident"
	"github.com/sqlfork/sqlfork-proxy/rewrite/kind"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/recovery"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// analyze builds an Analysis: parse, classify, then bind every table
// reference the parser reports to its place in the text.
func (e *Engine) analyze(sql string, opts Options) *Analysis {
	a := e.analyzeText(sql, opts)
	if a.client != nil {
		a.toClient()
	}
	return a
}

// analyzeText reads sql: a SANDBOX statement, or the text normalized as
// the server reads it, parsed (masked first when the parser needs it,
// rewrite/recovery) or read by the engine's own readers, then every statement
// described and every table reference bound to its place in the text.
func (e *Engine) analyzeText(sql string, opts Options) *Analysis {
	a := &Analysis{src: sql, text: sql, opts: opts, endDB: opts.DB}
	if isSandboxStatement(sql) {
		a.Statements = []Statement{sandboxStatement(sql, opts)}
		return a
	}
	nz, opts, ok := a.normalizeInput(sql, opts)
	if !ok {
		return a
	}
	// The text's tokens serve the cross-check and then bind; the pooled
	// buffer spares the garbage collector on every uncached statement.
	sc := e.scratch.Get().(*ident.Scratch)
	defer e.scratch.Put(sc)
	sc.Toks = lexer.LexInto(sc.Toks, nz.Text, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes})
	if at, ok := nz.AgreesWith(sc.Toks); !ok {
		a.unparseable(Refuse(wire.ErUnknown, "the proxy's readers of this statement disagree on where a quoted text starts or ends "+
			"(at byte %d), so it cannot be sure how the server reads it; rewrite the quoted parts more simply", at))
		return a
	}
	a.text, a.altered = nz.Text, nz
	sql = a.text // from here on, the text as the server reads it
	if e.hasCreateProcedure(sql, sc.Toks, opts) {
		// The parser does not read MariaDB's procedure bodies: the engine
		// splits the input and reads them itself (routine.go).
		e.analyzePieces(a, append([]lexer.Token(nil), sc.Toks...))
		return a
	}
	if body.IsCompound(sql, sc.Toks) && e.analyzeCompound(a, append([]lexer.Token(nil), sc.Toks...)) {
		// A compound statement sent as a statement: read like a
		// procedure's body (routine.go).
		return a
	}
	stmts, rec, release, err := e.parseInput(a, sc, opts)
	defer release()
	sql = a.text
	if (err != nil || lexer.Word(sql, sc.Toks, 0) == "OPTIMIZE") && e.recognize(a, sql, sc.Toks) {
		// A MariaDB statement the engine reads from its words
		// (mariadb.go); OPTIMIZE TABLE too: the parser reads it, but
		// leaves its tables out of its tree.
		return a
	}
	if err != nil {
		a.parseErr = err
		funcs, names := e.textNames(sql, opts)
		a.Statements = []Statement{{Class: ClassUnparseable, Unprovable: "the statement cannot be parsed",
			Funcs: funcs, Names: names, DB: opts.DB, Kind: kind.OfText(sql, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes}), Vars: collect.TextVars(sql, sc.Toks)}}
		if a.Statements[0].Kind == KindBegin {
			a.Statements[0].Start = collect.TransactionStart(sql, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes})
		}
		return a
	}
	r := &reading{a: a, e: e, sc: sc, nz: nz, rec: rec, stmts: stmts, db: opts.DB, all: &collect.Collector{}}
	for _, s := range stmts {
		if !r.statement(s) {
			break
		}
	}
	a.endDB = r.db
	if rec.Junk >= 0 {
		// The server stops at a syntax error for sure: a statement that
		// reaches nothing.
		a.stmtStarts = append(a.stmtStarts, rec.Junk)
		a.stmtDBs = append(a.stmtDBs, r.db)
		a.Statements = append(a.Statements, Statement{Class: ClassRead, Kind: KindSyntaxError, DB: r.db})
	}
	a.aliases = r.all.Aliases
	a.sites = r.showSites // bind adds the sites it locates
	e.bind(a, r.all, sc)
	return a
}

// sandboxStatement is the statement a SANDBOX text is: sent with others, it
// cannot be proved to run alone.
func sandboxStatement(sql string, opts Options) Statement {
	st := Statement{Class: ClassSandbox}
	toks := lexer.Lex(sql, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes})
	for i, t := range toks {
		if t.Kind == lexer.Punct && sql[t.Start] == ';' && i+1 < len(toks) {
			st.Unprovable = "SANDBOX statements must be sent alone, not with other statements"
		}
	}
	return st
}

// normalizeInput normalizes sql as the server reads it, decoded to UTF-8
// when the client's character set is another (a.client, a.src). It
// returns the options to read it with; ok is false when the text cannot
// be read (a holds why).
func (a *Analysis) normalizeInput(sql string, opts Options) (nz *lexer.Normalized, _ Options, ok bool) {
	nz, nerr := normalize(sql, opts)
	if nerr == nil {
		var ct *charset.ClientText
		var text string
		if ct, text, nerr = decodeClient(sql, nz, opts); ct != nil {
			// What is spliced in is written in the client's character set.
			a.client = ct
		}
		if ct != nil && ct.Offs != nil {
			// Read decoded, as UTF-8: the texts of PREPARE and of routine
			// bodies within are UTF-8 too.
			a.src = ct.Decoded()
			a.opts.Charset, opts.Charset = "utf8mb4", "utf8mb4"
			nz, nerr = normalize(text, opts)
		}
	}
	if nerr != nil {
		a.unparseable(nerr)
		return nil, opts, false
	}
	return nz, opts, true
}

// unparseable makes a one statement the proxy cannot read, for err.
func (a *Analysis) unparseable(err *Refusal) {
	a.normErr = err
	a.Statements = []Statement{{Class: ClassUnparseable, Unprovable: err.Message, DB: a.opts.DB}}
}

// parseInput parses a.text; when the parser rejects it, the forms it does
// not know but the proxy reads for sure (rewrite/recovery) are masked and the
// text parsed again (a.text and sc.toks are then the masked text's).
func (e *Engine) parseInput(a *Analysis, sc *ident.Scratch, opts Options) ([]ast.StmtNode, recovery.Masked, func(), error) {
	stmts, release, err := e.parse(previousAsNext(a.text, opts), opts)
	rec := recovery.Masked{Junk: -1}
	if err == nil {
		return stmts, rec, release, nil
	}
	m, ok := recovery.Mask(a.text, sc.Toks, recovery.Words{Reserved: e.reserved, Keywords: e.keywords, Charset: serverCharset, Collation: parserCollation})
	if !ok {
		return stmts, rec, release, err
	}
	stmts2, release2, err2 := e.parse(previousAsNext(m.Text, opts), opts)
	both := func() { release2(); release() }
	if err2 != nil || namesPlaceholder(stmts2, m.Placeholders) || !replacesRestored(m.Text, stmts2, m.Replaces) {
		return stmts, rec, both, err
	}
	a.text = m.Text
	sc.Toks = lexer.LexInto(sc.Toks, m.Text, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes})
	return stmts2, m, both, nil
}

// markBare sets Func.Bare for the calls of st (see Func), looking at every
// call of each name in the whole text. A PREPARE's inner statement brings
// its calls marked by its own analysis later.
func (a *Analysis) markBare(st *Statement, toks []lexer.Token) {
	if len(st.Funcs) == 0 {
		return
	}
	for fi := range st.Funcs {
		f := &st.Funcs[fi]
		f.Bare = true
		for i := 0; i+1 < len(toks); i++ {
			t, next := toks[i], toks[i+1]
			if (t.Kind == lexer.Ident || t.Kind == lexer.Quoted) && next.Kind == lexer.Punct && a.text[next.Start] == '(' &&
				strings.EqualFold(lexer.IdentText(a.text, t), f.Name) && (t.Kind == lexer.Quoted || !lexer.CallParen(a.src, int(t.End), a.opts.IgnoreSpace)) {
				f.Bare = false
				f.Quoted = f.Quoted || t.Kind == lexer.Quoted
			}
		}
	}
}

// previousAsNext gives the parser MariaDB's PREVIOUS VALUE FOR seq, which
// it does not know, as NEXT VALUE FOR seq, which it does (the same length,
// so offsets hold): the proxy then takes it for a change of the sequence,
// which forks it into the sandbox, where it is then read.
func previousAsNext(text string, opts Options) string {
	if !containsFold(text, "previous") {
		return text
	}
	toks := lexer.Lex(text, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes})
	word := func(i int, w string) bool {
		return i < len(toks) && toks[i].Kind == lexer.Ident && strings.EqualFold(text[toks[i].Start:toks[i].End], w)
	}
	var b []byte
	for i := range toks {
		if word(i, "PREVIOUS") && word(i+1, "VALUE") && word(i+2, "FOR") {
			if b == nil {
				b = []byte(text)
			}
			copy(b[toks[i].Start:], "NEXT    ")
		}
	}
	if b == nil {
		return text
	}
	return string(b)
}

// textNames lists, for a statement the parser cannot read, the names its
// text puts right before a parenthesis (any may be a function call) and
// the tables its other identifier chains could name.
func (e *Engine) textNames(text string, opts Options) (funcs []Func, tables []Table) {
	toks := lexer.Lex(text, lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes})
	// No word is left out as reserved: MariaDB takes some of the parser's
	// reserved words (ARRAY, LATERAL, RANK) for names of functions.
	for _, ch := range ident.Chains(text, toks, nil) {
		last := ch.Tok(ch.N - 1)
		if !ch.Star && ch.N <= 2 && last+1 < len(toks) && toks[last+1].Kind == lexer.Punct && text[toks[last+1].Start] == '(' {
			f := Func{Name: lexer.IdentText(text, toks[last])}
			if ch.N == 2 {
				f.Schema = lexer.IdentText(text, toks[ch.First])
			}
			funcs = append(funcs, f)
			continue
		}
		if first := toks[ch.First]; first.Kind == lexer.Ident && e.reserved[strings.ToLower(text[first.Start:first.End])] {
			continue // a reserved word names no table unquoted
		}
		for _, t := range ident.Tables(text, toks, ch) {
			if t.DB == "" {
				t.DB = opts.DB
			}
			tables = append(tables, t)
		}
	}
	return funcs, tables
}

// collectLoose records the names of chains no site covers, for inputs with
// a DDL or "other" statement (see Analysis.loose).
func (a *Analysis) collectLoose(toks []lexer.Token, chains []ident.Chain, columns map[string]bool) {
	other := false
	for _, st := range a.Statements {
		other = other || st.Class == ClassOther || st.Class == ClassDDL
	}
	if !other {
		return
	}
	covered := func(pos int) bool {
		for _, s := range a.sites {
			if pos >= s.Start && pos < s.End {
				return true
			}
		}
		return false
	}
	declared := ident.Declared(a.text, toks, chains)
	calls, qualified := map[string]bool{}, map[string]bool{}
	for _, st := range a.Statements {
		for _, f := range st.Funcs {
			if f.Schema == "" {
				calls[strings.ToLower(f.Name)] = true
			} else {
				qualified[strings.ToLower(f.Schema+"."+f.Name)] = true
			}
		}
	}
	for ci, ch := range chains {
		pos := int(toks[ch.First].Start)
		if covered(pos) || declared[ci] || notTable(a.text, toks, ch, qualified) {
			continue
		}
		if ch.N == 1 && columns[strings.ToLower(lexer.IdentText(a.text, toks[ch.First]))] && len(a.stmtDeclared) != len(a.Statements) {
			continue // declared somewhere in the input, when statements' own are not known
		}
		if name := strings.ToLower(lexer.IdentText(a.text, toks[ch.First])); ch.N == 1 && !ch.Star && toks[ch.First].Kind == lexer.Ident &&
			(calls[name] || specialCalls[name]) && lexer.PunctAt(a.text, toks, ch.First+1, '(') && toks[ch.First+1].Start == toks[ch.First].End {
			continue // a call of a function the statement calls, or of one of the parser's own syntax
		}
		si := a.stmtAt(pos)
		if si < len(a.Statements) && a.Statements[si].Unprovable != "" {
			continue // refused whatever it names
		}
		if si < len(a.stmtDeclared) && len(a.stmtDeclared) == len(a.Statements) && ch.N == 2 && !ch.Star {
			// alias.column: a column of a table or CTE the statement
			// names another way, both declared by its tree.
			own := a.stmtDeclared[si]
			if own[strings.ToLower(lexer.IdentText(a.text, toks[ch.First]))] && own[strings.ToLower(lexer.IdentText(a.text, toks[ch.Tok(1)]))] {
				continue
			}
		}
		if si < len(a.stmtDeclared) && len(a.stmtDeclared) == len(a.Statements) && ch.N == 1 {
			own := a.stmtDeclared[si]
			if own[strings.ToLower(lexer.IdentText(a.text, toks[ch.First]))] {
				continue // declared by its own statement
			}
			if prev := ch.First - 1; prev >= 0 && (toks[prev].Kind == lexer.Ident || toks[prev].Kind == lexer.Quoted) &&
				own[strings.ToLower(lexer.IdentText(a.text, toks[prev]))] && recovery.IsTypeWord(strings.ToUpper(lexer.IdentText(a.text, toks[ch.First]))) {
				continue // a column's type: c JSON
			}
		}
		if ch.N == 1 && lexer.Word(a.text, toks, ch.First) == "COLUMNS" &&
			(lexer.Word(a.text, toks, ch.First-1) == "RANGE" || lexer.Word(a.text, toks, ch.First-1) == "LIST") {
			continue // PARTITION BY RANGE COLUMNS (…)
		}
		for _, t := range ident.Tables(a.text, toks, ch) {
			if t.DB == "" {
				t.DB = a.dbAt(int(toks[ch.First].Start))
			}
			a.loose = append(a.loose, looseName{t, si})
		}
	}
}

// bind locates the collector's references in a.text and records sites.
// sc.toks holds the lexer's tokens of a.text; sc's other buffers are
// bind's scratch space.
func (e *Engine) bind(a *Analysis, c *collect.Collector, sc *ident.Scratch) {
	sc.Chains = ident.ChainsInto(sc.Chains, a.text, sc.Toks, e.reserved)
	toks, chains := sc.Toks, sc.Chains
	sc.Reset()
	refs := sc.NamesThatMatter(c)
	declared := collect.DeclaredNames(c)
	c = &collect.Collector{Refs: refs, CTEs: c.CTEs, Aliases: c.Aliases, Columns: c.Columns}
	if sc.Empty() {
		a.collectLoose(toks, chains, declared)
		return
	}
	defer a.collectLoose(toks, chains, declared)
	sc.Definitions(a.text, c)
	sc.Occurrences(a.text)
	if e.bindByCount(a, c, toks, chains, sc) {
		return
	}
	e.bindByMarkers(a, toks, chains, sc.Names)
}

// bindByCount binds when every occurrence of every referenced name is
// accounted for by the references the parser reported, role by role. It
// reports false when the text has occurrences the references do not
// explain (a column or alias spelled like a table, say).
func (e *Engine) bindByCount(a *Analysis, c *collect.Collector, toks []lexer.Token, chains []ident.Chain, sc *ident.Scratch) bool {
	pairs, ok := sc.Pair(c)
	if !ok {
		return false
	}
	sites := make([]ident.Site, 0, len(pairs))
	for _, p := range pairs {
		if s, ok := a.makeSite(toks, chains[p.Chain], p.Part, c.Refs[p.Ref], c); ok {
			sites = append(sites, s)
		}
	}
	a.sites = ident.SortSites(append(a.sites, sites...))
	return true
}

// makeSite turns a bound occurrence into a site; ok is false for names that
// are not tables (CTE references, alias targets).
func (a *Analysis) makeSite(toks []lexer.Token, ch ident.Chain, part int, r collect.Ref, c *collect.Collector) (ident.Site, bool) {
	tok := toks[ch.Tok(part)]
	start := tok.Start
	qualified := r.Schema != ""
	// Spell the table as the text does: references were paired with
	// tokens case-insensitively.
	r.Name = lexer.IdentText(a.text, tok)
	if qualified {
		start = toks[ch.Tok(part-1)].Start
		r.Schema = lexer.IdentText(a.text, toks[ch.Tok(part-1)])
	}
	ln := strings.ToLower(r.Name)
	switch r.Kind {
	case collect.RefTable:
		if r.CTE {
			return ident.Site{}, false
		}
	case collect.RefTarget:
		if r.Schema == "" && c.Aliases[ln] {
			return ident.Site{}, false
		}
	}
	db := r.Schema
	if db == "" {
		db = r.DefaultDB
	}
	if db == "" {
		db = a.dbAt(int(tok.Start))
	}
	if a.altered != nil && a.altered.AlteredIn(int(start), int(tok.End)) {
		// The parser read a changed spelling of this name (a backslash in
		// a "quoted" name): the table it names is not known for sure.
		a.unbound = append(a.unbound, Table{DB: db, Name: r.Name})
		a.alteredName = true
		return ident.Site{}, false
	}
	return ident.Site{Start: int(start), End: int(tok.End), Kind: r.Kind, Table: Table{DB: db, Name: r.Name},
		Qualified: qualified, Write: r.Write, Aliased: r.Aliased, Stmt: a.stmtAt(int(tok.Start))}, true
}

// bindByMarkers replaces every token spelled like a referenced name with a
// unique backquoted marker, parses that text, and reads each marker's role
// off the tree. A marker text that does not parse leaves every reference
// unbound, which refuses the rewrite if any is mapped.
func (e *Engine) bindByMarkers(a *Analysis, toks []lexer.Token, chains []ident.Chain, names map[string]int32) {
	mk := ident.Mark(a.text, toks, chains, names)
	stmts, release, err := e.parse(mk.Text, a.opts)
	defer release()
	if err != nil {
		for _, st := range a.Statements {
			a.unbound = append(a.unbound, st.Reads...)
			a.unbound = append(a.unbound, st.Writes...)
		}
		return
	}
	c := collect.New()
	c.CTERefs = collect.CTERefs(stmts, mk.Name, a.opts.CaseSensitiveNames)
	for _, s := range stmts {
		s.Accept(c)
	}
	oc := &collect.Collector{CTEs: mk.Names(c.CTEs), Aliases: mk.Names(c.Aliases)}
	type place struct {
		ch   ident.Chain
		part int
	}
	chainOf := map[int]place{}
	for _, ch := range chains {
		for pi := 0; pi < ch.N; pi++ {
			chainOf[ch.Tok(pi)] = place{ch, pi}
		}
	}
	var sites []ident.Site
	for _, r := range c.Refs {
		name, ti, ok := mk.Orig(r.Name)
		schema := mk.Name(r.Schema)
		if !ok {
			// A reference the text did not show where the lexer looked.
			if r.Kind != collect.RefQualifier {
				a.unboundRef(schema, name)
			}
			continue
		}
		cp := chainOf[ti]
		if r.Schema != "" && cp.part == 0 {
			a.unbound = append(a.unbound, Table{DB: schema, Name: name})
			continue
		}
		r.Name, r.Schema = name, schema
		if s, ok := a.makeSite(toks, cp.ch, cp.part, r, oc); ok {
			sites = append(sites, s)
		}
	}
	a.sites = ident.SortSites(append(a.sites, sites...))
	a.cteQualifiers(c.Refs, mk.Name)
}

// unboundRef records a table the engine could not place: db.name, or name
// in every database a statement of the input ran in.
func (a *Analysis) unboundRef(db, name string) {
	if db == "" {
		db = a.opts.DB
		for _, d := range a.stmtDBs {
			a.unbound = append(a.unbound, Table{DB: d, Name: name})
		}
	}
	a.unbound = append(a.unbound, Table{DB: db, Name: name})
}

// cteQualifiers records as shadowing (refused when mapped) the CTE names
// that also name a table of the input and qualify a column there: t.col
// may then name either, and qualifiers are matched to tables by name.
func (a *Analysis) cteQualifiers(refs []collect.Ref, orig func(string) string) {
	var ctes, quals map[string]bool
	for _, r := range refs {
		k := strings.ToLower(orig(r.Name))
		switch {
		case r.Kind == collect.RefTable && r.CTE:
			collect.SetName(&ctes, k)
		case r.Kind == collect.RefQualifier && r.Schema == "":
			collect.SetName(&quals, k)
		}
	}
	for _, s := range a.sites {
		if k := strings.ToLower(s.Table.Name); s.Kind != collect.RefQualifier && ctes[k] && quals[k] {
			collect.SetName(&a.cteShadows, k)
		}
	}
}

// bindPrepared records the string literal of PREPARE name FROM '...' with
// an analysis of the statement it holds, so Rewrite can rewrite inside it.
func (e *Engine) bindPrepared(a *Analysis, p *ast.PrepareStmt, db string) {
	lo := lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes}
	toks := lexer.Lex(a.text, lo)
	from := a.stmtStarts[len(a.stmtStarts)-1]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if int(t.Start) < from {
			continue
		}
		if t.Kind != lexer.String || a.text[t.Start] != '\'' && a.text[t.Start] != '"' {
			continue
		}
		if lexer.Unquote(a.text[t.Start:t.End], !a.opts.NoBackslashEscapes) != p.SQLText {
			continue
		}
		if a.altered != nil && a.altered.AlteredIn(int(t.Start), int(t.End)) {
			a.Statements[len(a.Statements)-1].Unprovable = "the text of PREPARE ... FROM '...' holds multi-byte characters " +
				"the proxy cannot read back exactly (send it in utf8mb4)"
			return
		}
		innerOpts := a.opts
		innerOpts.DB = db
		inner := e.analyze(p.SQLText, innerOpts)
		a.prepared = append(a.prepared, preparedSite{start: int(t.Start), end: int(t.End), inner: inner})
		st := &a.Statements[len(a.Statements)-1]
		st.Reads, st.Writes = inner.reads(), inner.writes()
		st.takeInner(inner)
		st.Inner = inner
		return
	}
	a.Statements[len(a.Statements)-1].Unprovable = "the text of PREPARE ... FROM '...' could not be located"
}

// reads are the tables every statement of the input reads.
func (a *Analysis) reads() []Table {
	var out []Table
	for _, st := range a.Statements {
		out = append(out, st.Reads...)
	}
	return out
}

// writes are the tables every statement of the input writes.
func (a *Analysis) writes() []Table {
	var out []Table
	for _, st := range a.Statements {
		out = append(out, st.Writes...)
	}
	return out
}

// isSandboxStatement reports statements addressed to the proxy itself.
func isSandboxStatement(sql string) bool {
	s := strings.TrimLeft(sql, " \t\r\n")
	return len(s) >= 7 && strings.EqualFold(s[:7], "SANDBOX") && (len(s) == 7 || lexer.IsSpace(s[7]) || strings.IndexByte(";/#-", s[7]) >= 0)
}

// describe classifies one statement and lists the tables it reads and
// writes.
func describe(s ast.StmtNode, c *collect.Collector, db string) Statement {
	st := Statement{Class: kind.ClassOf(s), Kind: kind.Of(s), DB: db}
	if k, ok := s.(*ast.KillStmt); ok && k.Expr == nil && !k.TiDBExtension {
		st.Kill = &Kill{Query: k.Query, ID: k.ConnectionID}
	}
	st.Reads, st.Writes = collect.UsedTables(c, db)
	for _, t := range c.References {
		if t.DB == "" {
			t.DB = db
		}
		st.References = append(st.References, t)
	}
	for _, t := range c.Like {
		if t.DB == "" {
			t.DB = db
		}
		st.Like = append(st.Like, t)
	}
	if c.Locking || collect.Locking(s) {
		for _, t := range st.Reads {
			if !strings.EqualFold(t.DB, "information_schema") && !strings.EqualFold(t.DB, "performance_schema") {
				st.Locked = append(st.Locked, t)
			}
		}
	}
	st.Funcs, st.Outside, st.Vars, st.Next = c.Funcs, c.Outside, c.Vars, collect.NextTransaction(s)
	if st.Kind == KindBegin {
		st.Start = collect.TransactionStart(s.Text(), lexer.Options{})
	}
	st.ChangesLexing, st.ChangesIsolation, st.Serializable = c.Set.Lexing, c.Set.Isolation, c.Set.Serializable
	st.Engine = c.Set.Engine
	describeKind(&st, s)
	return st
}

// describeKind fills in what the kind of statement s says: temporary
// tables, the database created, prepared statements' handles, SHOW's
// listing, what the proxy cannot see through, privilege statements.
func describeKind(st *Statement, s ast.StmtNode) {
	switch x := s.(type) {
	case *ast.CreateTableStmt:
		st.Temporary = x.TemporaryKeyword != ast.TemporaryNone
		st.IfNotExists = x.IfNotExists
	case *ast.DropTableStmt:
		st.Temporary = x.TemporaryKeyword != ast.TemporaryNone && !x.IsView
	case *ast.CreateDatabaseStmt:
		st.Database, st.IfNotExists = x.Name.O, x.IfNotExists
	case *ast.DropDatabaseStmt:
		st.Database = x.Name.O
	case *ast.AlterDatabaseStmt:
		st.Database = x.Name.O
	case *ast.UseStmt:
		st.Database = x.DBName
	case *ast.InsertStmt:
		st.InsertSelect = x.Select != nil && len(x.OnDuplicate) == 0 && len(x.Returning) == 0
	case *ast.CallStmt:
		st.Unprovable = "CALL runs a stored procedure whose statements the proxy cannot see"
	case *ast.PrepareStmt:
		st.Handle, st.HandleOp = strings.ToLower(x.Name), "PREPARE"
		if x.SQLVar != nil {
			st.Unprovable = "PREPARE ... FROM @variable is dynamic SQL the proxy cannot see"
		}
	case *ast.DeallocateStmt:
		st.Handle, st.HandleOp = strings.ToLower(x.Name), "DEALLOCATE"
	case *ast.ShowStmt:
		st.Show = collect.ShowListing(x)
	case *ast.ExecuteStmt:
		st.Handle, st.HandleOp = strings.ToLower(x.Name), "EXECUTE"
		st.Unprovable = "EXECUTE runs a statement prepared with SQL PREPARE, which the proxy cannot see"
	case *ast.ProcedureInfo:
		st.Unprovable = "stored program bodies are not rewritten by the proxy"
	case *ast.GrantStmt, *ast.RevokeStmt, *ast.GrantRoleStmt, *ast.RevokeRoleStmt, *ast.CreateUserStmt, *ast.AlterUserStmt,
		*ast.DropUserStmt, *ast.RenameUserStmt, *ast.SetPwdStmt, *ast.SetDefaultRoleStmt, *ast.GrantProxyStmt:
		// Accounts and privileges are the server's, no sandbox's: the
		// names they hold (tables of a GRANT too) are not rewritten.
		st.privileges = true
	}
}

// specialCalls are the functions (and keywords written like one) the
// parser reads with syntax of their own, so no Func records them: written
// right before "(", they name no table.
var specialCalls = map[string]bool{
	"cast": true, "convert": true, "extract": true, "position": true, "substring": true, "substr": true, "trim": true,
	"char": true, "date_add": true, "date_sub": true, "adddate": true, "subdate": true, "timestampadd": true,
	"timestampdiff": true, "get_format": true, "columns": true, "values": true, "value": true, "interval": true,
	"default": true, "json_objectagg": true, "json_arrayagg": true, "group_concat": true, "count": true, "max": true,
	"min": true, "sum": true, "avg": true, "weight_string": true, "now": true, "current_timestamp": true,
	"localtime": true, "localtimestamp": true, "curdate": true, "curtime": true, "sysdate": true, "utc_timestamp": true,
	"match": true, "json": true, "std": true, "stddev": true, "stddev_pop": true, "stddev_samp": true, "variance": true,
	"var_pop": true, "var_samp": true, "bit_and": true, "bit_or": true, "bit_xor": true,
}

// takeInner adds to st, a statement that runs another's text (PREPARE …
// FROM 'text', EXECUTE IMMEDIATE 'text'), what the statements of that
// text call, lock, copy, reach and change.
func (st *Statement) takeInner(inner *Analysis) {
	for _, is := range inner.Statements {
		st.Funcs = append(st.Funcs, is.Funcs...)
		st.innerFuncs += len(is.Funcs)
		st.Locked = append(st.Locked, is.Locked...)
		st.Like = append(st.Like, is.Like...)
		if st.Outside == "" {
			st.Outside = is.Outside
		}
		st.ChangesLexing = st.ChangesLexing || is.ChangesLexing
		st.ChangesIsolation = st.ChangesIsolation || is.ChangesIsolation
		st.Serializable = st.Serializable || is.Serializable
	}
}

// flushTables reads FLUSH [NO_WRITE_TO_BINLOG | LOCAL] TABLE[S] [t[, …]]
// (text: the client's text from the statement on, read up to its first
// ';'), which only closes the tables it names, or every table, and
// writes their changes to disk: nothing a client sees (Kind "FLUSH
// TABLES"; a read of the tables it names), which a sandbox, a private
// server, answers as a no-op. Any other FLUSH (WITH READ LOCK, FOR
// EXPORT, of logs, privileges, status, …) acts on the server and stays an
// "other" statement.
func flushTables(st *Statement, s ast.StmtNode, text string) {
	f, ok := s.(*ast.FlushStmt)
	if !ok || f.Tp != ast.FlushTables || f.ReadLock || len(f.Tables) > 0 && len(st.Reads) == 0 {
		return
	}
	for _, t := range lexer.Lex(text, lexer.Options{}) {
		if t.Kind == lexer.Punct && text[t.Start] == ';' {
			break // the statement's end
		}
		switch {
		case t.Kind == lexer.Quoted || t.Kind == lexer.Comment:
		case t.Kind == lexer.Punct && (text[t.Start] == ',' || text[t.Start] == '.'):
		case t.Kind == lexer.Ident:
			switch strings.ToUpper(text[t.Start:t.End]) {
			case "WITH", "READ", "LOCK", "FOR", "EXPORT", "AND", "DISABLE", "CHECKPOINT":
				return
			}
		default:
			return
		}
	}
	// A sandbox runs it as a no-op (replacements): nothing to fork first.
	st.Kind, st.Class, st.Locked = KindFlushTables, ClassRead, nil
}

// flushStatus reads FLUSH [NO_WRITE_TO_BINLOG | LOCAL] STATUS alone
// (text: the text from the statement on, up to its first ';'), which
// resets the session's status counters (and some of the server's): Kind
// "FLUSH STATUS", still an "other" statement, which a sandbox answers
// itself for the session (session/flushstatus.go) and refuses anywhere
// else.
func flushStatus(st *Statement, s ast.StmtNode, text string) {
	if f, ok := s.(*ast.FlushStmt); !ok || f.Tp != ast.FlushStatus {
		return
	}
	var words []string
	for _, t := range lexer.Lex(text, lexer.Options{}) {
		if t.Kind == lexer.Comment {
			continue
		}
		if t.Kind == lexer.Punct && text[t.Start] == ';' {
			break
		}
		if t.Kind != lexer.Ident {
			return
		}
		words = append(words, strings.ToUpper(text[t.Start:t.End]))
	}
	switch {
	case len(words) == 2 && words[0] == "FLUSH" && words[1] == "STATUS":
	case len(words) == 3 && words[0] == "FLUSH" && (words[1] == "LOCAL" || words[1] == "NO_WRITE_TO_BINLOG") && words[2] == "STATUS":
	default:
		return
	}
	st.Kind = KindFlushStatus
}

// reading is analyzeText's walk over the parsed statements: where in the
// text the next one starts, the current database, and what the input's
// statements name all together.
type reading struct {
	a         *Analysis
	e         *Engine
	sc        *ident.Scratch
	nz        *lexer.Normalized
	rec       recovery.Masked
	stmts     []ast.StmtNode
	db        string
	cursor    int
	showSites []ident.Site
	all       *collect.Collector
}

// statement describes s, the next statement, and adds what it names to
// the input's; false when it was the input's only statement (its
// collector is then the input's).
func (r *reading) statement(s ast.StmtNode) bool {
	a, sql := r.a, r.a.text
	// Statement texts come in order as (trimmed) slices of sql.
	start, located := r.cursor, false
	if text := strings.TrimSpace(s.Text()); text != "" {
		if i := strings.Index(sql[r.cursor:], text); i >= 0 {
			start, located = r.cursor+i, true
			r.cursor = start + len(text)
		}
	}
	a.stmtStarts = append(a.stmtStarts, start)
	a.stmtDBs = append(a.stmtDBs, r.db)
	c := collect.New()
	if cl := kind.ClassOf(s); cl == ClassDDL || cl == ClassOther {
		c.Columns = map[string]bool{}
	}
	if containsFold(sql, "with") {
		c.CTERefs = collect.CTERefs([]ast.StmtNode{s}, func(n string) string { return n }, a.opts.CaseSensitiveNames)
	}
	s.Accept(c)
	a.Statements = append(a.Statements, describe(s, c, r.db))
	st := &a.Statements[len(a.Statements)-1]
	st.Labels, st.labelColumns = collect.LabelSpans(c.Labels, sql)
	if r.nz != nil && sql != r.nz.Text {
		widenLabels(st.Labels, sql, r.nz.Text)
	}
	st.AliasedColumns = c.AliasedColumns
	lits := literalText{text: sql, toks: r.sc.Toks, altered: r.nz, lo: 0, hi: len(sql)}
	if located {
		lits.lo, lits.hi = start, r.cursor
	}
	st.Bounds = statementBounds(s, r.db, a.opts.CaseSensitiveNames, lits)
	a.markBare(st, r.sc.Toks)
	routineStatement(st, s, sql, r.sc.Toks, start)
	flushTables(st, s, a.src[min(start, len(a.src)):])
	flushStatus(st, s, a.text[min(start, len(a.text)):])
	if st.Show != nil && r.nz.AlteredIn(start, r.cursor) {
		// SHOW … LIKE / WHERE is answered with a query built from its
		// text, which holds characters changed for the parser.
		st.Unprovable = "the statement holds multi-byte characters the proxy cannot read back exactly (send it in utf8mb4)"
	}
	a.stmtAliases = append(a.stmtAliases, c.Aliases)
	a.stmtDeclared = append(a.stmtDeclared, collect.DeclaredNames(c))
	r.unlocatable(s, st, c)
	if p, ok := s.(*ast.PrepareStmt); ok && p.SQLVar == nil {
		r.e.bindPrepared(a, p, r.db)
		st = &a.Statements[len(a.Statements)-1]
	}
	if u, ok := s.(*ast.UseStmt); ok {
		r.db = u.DBName
	}
	r.masked(st, start)
	if len(r.stmts) == 1 && r.rec.Junk < 0 {
		r.all = c // the common case: the statement's collector is the input's
		return false
	}
	r.all.Refs = append(r.all.Refs, c.Refs...)
	for k := range c.Columns {
		collect.SetName(&r.all.Columns, k)
	}
	for k := range c.CTEs {
		collect.SetName(&r.all.CTEs, k)
	}
	for k := range c.Aliases {
		collect.SetName(&r.all.Aliases, k)
	}
	return true
}

// unlocatable handles the tables the parser names without a place in the
// text: SHOW … FROM t FROM db gets one site spanning both names; any
// other is left for bind to refuse.
func (r *reading) unlocatable(s ast.StmtNode, st *Statement, c *collect.Collector) {
	for _, u := range c.Unlocatable {
		if sh, ok := s.(*ast.ShowStmt); ok && len(r.stmts) == 1 {
			if site, ok := forms.ShowColumnsSite(r.a.text, r.sc.Toks, sh, u); ok {
				r.showSites = append(r.showSites, site)
				st.Reads = append(st.Reads, site.Table)
				collect.SortTables(st.Reads)
				continue
			}
		}
		r.a.unbound = append(r.a.unbound, u)
	}
}

// masked gives st, starting at start, what masking its text took out: the
// user variables of a blanked SELECT … INTO, the settings of a blanked
// SET STATEMENT prefix (which applies to the statement right after it),
// and the TEMPORARY of a DROP TEMPORARY SEQUENCE.
func (r *reading) masked(st *Statement, start int) {
	for _, at := range r.rec.Temporary {
		if at >= start && at < r.cursor {
			st.Temporary = true
		}
	}
	for _, iv := range r.rec.IntoVars {
		if iv.At >= start && iv.At < r.cursor {
			st.Vars = append(st.Vars, collect.VarOfToken(iv.Name))
		}
	}
	for _, ss := range r.rec.SetStatements {
		if ss.End <= start && strings.TrimSpace(r.a.text[ss.End:start]) == "" {
			st.SetStatement = ss.Vars
		}
	}
}
