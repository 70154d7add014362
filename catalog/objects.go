package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// catalogTTL is how long the catalog trusts what it learnt of a name:
// objects created or redefined in production are seen within it.
const catalogTTL = 5 * time.Second

// maxViewDepth bounds the views of views the catalog follows.
const MaxViewDepth = 10

// catalog finds out what the names in a statement are on the upstream — a
// table, a view (and what reading it reaches), a sequence, a stored or
// loadable function — from information_schema and mysql.func, cached for
// catalogTTL. The proxy uses it to refuse statements that would reach
// production through an object, whatever privileges its account has.
type Objects struct {
	names  sandbox.Names
	reg    *registry.Registry
	engine *rewrite.Engine
	server rewrite.Server

	mu       sync.Mutex
	objects  map[string]cached[Object]
	funcs    map[string]cached[bool] // lower(db) NUL lower(name) -> a stored function exists
	udfs     cached[map[string]bool] // nil map: mysql.func is not readable
	natives  map[string]bool
	keywords map[string]bool
	unquoted map[string]bool
}

type cached[T any] struct {
	v  T
	at time.Time
}

func (c cached[T]) fresh(now time.Time) bool { return !c.at.IsZero() && now.Sub(c.at) < catalogTTL }

// cachedAt is what m (under c.mu) holds for k when it is still fresh at now.
func cachedAt[T any](c *Objects, m map[string]cached[T], k string, now time.Time) (T, bool) {
	c.mu.Lock()
	e, ok := m[k]
	c.mu.Unlock()
	return e.v, ok && e.fresh(now)
}

// cache sets m[k] (under c.mu) to v, read at now.
func cache[T any](c *Objects, m map[string]cached[T], k string, v T, now time.Time) {
	c.mu.Lock()
	m[k] = cached[T]{v: v, at: now}
	c.mu.Unlock()
}

// Object is what information_schema says of a name.
type Object struct {
	// kind is TABLE_TYPE (BASE TABLE, VIEW, SEQUENCE, SYSTEM VERSIONED,
	// SYSTEM VIEW), "" when no such table exists.
	Kind   string
	Engine string
	// hazard says why reading the object reaches beyond production's
	// rows (a view calling a loadable function, say); "" when it does not.
	Hazard string
	// calls says which stored function a view calls (viewFacts).
	Calls string
	// wide says why reading the object (a view) shows what the whole
	// server holds, every sandbox's objects included: harmless outside a
	// sandbox, refused in one.
	Wide string
	// view is a view's definition, nil for anything else (or a view whose
	// definition the account cannot read).
	View *ViewDef
	// Bases are the tables a view reads, through the views it reads too
	// (none when it has a Hazard).
	Bases []rewrite.Table
}

// ViewDef is what information_schema.VIEWS says of a view: what a sandbox
// needs to make its own copy (sandbox/objects/views.go).
type ViewDef struct {
	Def         string // VIEW_DEFINITION: the server's text, names qualified
	CheckOption string // NONE, CASCADED, LOCAL
	Algorithm   string // UNDEFINED, MERGE, TEMPTABLE
	Collation   string // COLLATION_CONNECTION at its creation
}

func NewObjects(names sandbox.Names, reg *registry.Registry, engine *rewrite.Engine, server rewrite.Server) *Objects {
	c := &Objects{names: names, reg: reg, engine: engine, server: server, objects: map[string]cached[Object]{}, funcs: map[string]cached[bool]{},
		natives: make(map[string]bool, len(NativeFunctions()))}
	for _, n := range NativeFunctions() {
		c.natives[n] = true
	}
	c.keywords = make(map[string]bool, len(KeywordFunctions()))
	for _, n := range KeywordFunctions() {
		c.keywords[n] = true
	}
	c.unquoted = map[string]bool{}
	for _, n := range unquotedFunctions {
		c.unquoted[n] = true
	}
	return c
}

// trustedSchemas hold only what the server itself defines: no account can
// create a view or function in them. (sys and mysql are ordinary schemas
// to the server: an account with the privileges may create objects there,
// so their views and functions are checked like any others.)
func trustedSchema(db string) bool {
	switch strings.ToLower(db) {
	case "information_schema", "performance_schema":
		return true
	}
	return false
}

// PseudoSchema qualify built-in functions (mariadb_schema.TRIM()): not
// real schemas, and never stored functions.
func PseudoSchema(db string) bool {
	switch strings.ToLower(db) {
	case "mariadb_schema", "oracle_schema", "maxdb_schema":
		return true
	}
	return false
}

// Object returns what t is, from the cache or the server.
func (c *Objects) Object(ctx context.Context, t rewrite.Table) (Object, error) {
	return c.objectAt(ctx, t, 0)
}

func (c *Objects) objectAt(ctx context.Context, t rewrite.Table, depth int) (Object, error) {
	k := c.names.Key(t)
	now := time.Now()
	if o, ok := cachedAt(c, c.objects, k, now); ok {
		return o, nil
	}
	var o Object
	var vd ViewDef // its definition "" when the account cannot read it
	err := c.reg.WithConn(ctx, func(sc sideconn.Conn) error {
		rows, err := sc.Query(ctx, "SELECT TABLE_TYPE, ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = "+
			quote.String(t.DB)+" AND TABLE_NAME = "+quote.String(t.Name))
		if err != nil || len(rows) == 0 {
			return err
		}
		o.Kind, o.Engine = sideconn.Str(rows[0][0]), sideconn.Str(rows[0][1])
		if o.Kind != "VIEW" {
			return nil
		}
		rows, err = sc.Query(ctx, "SELECT VIEW_DEFINITION, CHECK_OPTION, ALGORITHM, COLLATION_CONNECTION FROM information_schema.VIEWS "+
			"WHERE TABLE_SCHEMA = "+quote.String(t.DB)+" AND TABLE_NAME = "+quote.String(t.Name))
		if err == nil && len(rows) == 1 {
			vd = ViewDef{Def: sideconn.Str(rows[0][0]), CheckOption: sideconn.Str(rows[0][1]), Algorithm: sideconn.Str(rows[0][2]), Collation: sideconn.Str(rows[0][3])}
		}
		return err
	})
	if err != nil {
		return Object{}, fmt.Errorf("look up %s: %w", t, err)
	}
	if o.Kind == "VIEW" {
		vf, err := c.viewHazard(ctx, t, vd.Def, depth)
		if err != nil {
			return Object{}, err
		}
		o.Hazard, o.Wide, o.Calls, o.Bases = vf.hazard, vf.wide, vf.calls, vf.bases
		if vd.Def != "" {
			o.View = &vd
		}
	}
	cache(c, c.objects, k, o, now)
	return o, nil
}

// viewFacts are what reading a view reaches beyond production's rows.
type viewFacts struct {
	// hazard says why reading the view would reach beyond reading
	// production (a loadable function it calls, a sequence it advances, a
	// view it reads that does, or a definition the proxy cannot see).
	hazard string
	// wide says why it would show a sandbox what the whole server holds
	// (it reads information_schema, performance_schema or the server's
	// statistics and logs, directly or through other views).
	wide string
	// calls says which stored function it calls (directly or through other
	// views): outside a sandbox a hazard, in a sandbox a reason to read
	// the sandbox's copy of the view, which calls the sandbox's function.
	calls string
	// bases are the tables it reads, through views too.
	bases []rewrite.Table
}

// viewHazard tells the facts of the view t, defined as def ("" when the
// proxy cannot read the definition).
func (c *Objects) viewHazard(ctx context.Context, t rewrite.Table, def string, depth int) (viewFacts, error) {
	var vf viewFacts
	if trustedSchema(t.DB) {
		return vf, nil
	}
	name := t.Quoted()
	if def == "" {
		vf.hazard = "the proxy cannot read the definition of the view " + name + " (grant its account SHOW VIEW), " +
			"so it cannot tell what reading the view runs"
		return vf, nil
	}
	if depth >= MaxViewDepth {
		vf.hazard = "the view " + name + " is built on views more than " + fmt.Sprint(MaxViewDepth) + " deep"
		return vf, nil
	}
	a := c.engine.Analyze(def, rewrite.Options{DB: t.DB, CaseSensitiveNames: c.names.CaseSensitive, Server: c.server})
	if _, err := a.Rewrite(placesNothing{}); err != nil {
		vf.hazard = "the proxy cannot analyse the definition of the view " + name
		return vf, nil
	}
	for _, st := range a.Statements {
		if err := c.statementFacts(ctx, st, t, depth, &vf); err != nil || vf.hazard != "" {
			return vf, err
		}
	}
	return vf, nil
}

// statementFacts adds to vf what the statement st of view t's definition
// reaches.
func (c *Objects) statementFacts(ctx context.Context, st rewrite.Statement, t rewrite.Table, depth int, vf *viewFacts) error {
	name := t.Quoted()
	if st.Outside != "" {
		vf.hazard = "the view " + name + " reaches outside the database: " + st.Outside
		return nil
	}
	if len(st.Writes) > 0 {
		vf.hazard = "reading the view " + name + " changes " + st.Writes[0].Quoted() + " (a sequence)"
		return nil
	}
	for _, f := range st.Funcs {
		why, stored, err := c.FuncHazard(ctx, f, t.DB)
		switch {
		case err != nil:
			return err
		case stored:
			vf.calls = cmp.Or(vf.calls, nameView(why, name))
		case why != "":
			vf.hazard = nameView(why, name)
			return nil
		}
	}
	if w := infoschema.ServerWide(st); w != "" {
		vf.wide = cmp.Or(vf.wide, nameView(w, name))
	}
	// For a definition the parser cannot read, every name it could hold
	// for a table is followed.
	for _, r := range append(st.Reads, st.Names...) {
		if infoschema.Virtual(r) {
			// The server's information_schema lists every database's
			// objects, the proxy's own included; a sandbox's statements see
			// their own (rewritten) information_schema, which a view cannot.
			vf.wide = cmp.Or(vf.wide, nameView(r.Quoted()+" lists what the whole server holds, every sandbox's objects included", name))
			continue
		}
		o, err := c.objectAt(ctx, r, depth+1)
		if err != nil {
			return err
		}
		if o.Hazard != "" {
			vf.hazard = nameView(o.Hazard, name)
			return nil
		}
		vf.wide = cmp.Or(vf.wide, nameView(o.Wide, name))
		vf.calls = cmp.Or(vf.calls, nameView(o.Calls, name))
		if o.Kind == "VIEW" {
			vf.bases = append(vf.bases, o.Bases...)
		} else if o.Kind != "" {
			vf.bases = append(vf.bases, c.names.Norm(r))
		}
	}
	return nil
}

// Calls reports whether the view t calls a stored function (directly or
// through views), as far as the catalog knows.
func (c *Objects) Calls(ctx context.Context, t rewrite.Table) bool {
	o, err := c.Object(ctx, t)
	return err != nil || o.Calls != ""
}

// placesNothing is MapsNothing that also places no function: with it the
// engine checks a text without refusing calls qualified with a database.
type placesNothing struct{ MapsNothing }

// ResolveFunction implements rewrite.FunctionResolver.
func (placesNothing) ResolveFunction(rewrite.Func, string) (string, bool, error) {
	return "", false, nil
}

func nameView(why, view string) string {
	if why == "" {
		return ""
	}
	return "the view " + view + " is defined with something the sandbox cannot hold: " + why
}

// FuncHazard says why calling f (from a statement whose current database
// is db) would reach production: a stored function (stored set: it runs
// statements the proxy does not see, with its definer's privileges, unless
// a sandbox runs its copy), a loadable function (UDF), or a name the proxy
// cannot tell is neither. "" means f is one of the server's own functions,
// or exists nowhere (the server then reports the error).
func (c *Objects) FuncHazard(ctx context.Context, f rewrite.Func, db string) (why string, stored bool, err error) {
	const cannot = ", whose statements would read and write production"
	if f.Schema != "" {
		if PseudoSchema(f.Schema) {
			return "", false, nil
		}
		return "it calls the stored function " + f.String() + cannot, true, nil
	}
	if c.Native(f) {
		return "", false, nil
	}
	if KeywordCall(f) {
		why, err := c.KeywordHazard(ctx, f, db)
		return why, why != "", err
	}
	if why, err := c.UDFHazard(ctx, f); err != nil || why != "" {
		return why, false, err
	}
	if stored, err = c.StoredFunction(ctx, db, f.Name); err != nil || !stored {
		return "", false, err
	}
	return "it calls the stored function " + quote.Ident(db) + "." + quote.Ident(f.Name) + cannot, true, nil
}

// Native reports whether an unqualified call of f calls one of the
// server's own functions, which come first: a stored or loadable function
// of the same name is never called without a schema.
func (c *Objects) Native(f rewrite.Func) bool {
	if f.Schema != "" {
		return false
	}
	upper := strings.ToUpper(f.Name)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.natives[upper] || f.Bare && c.keywords[upper] || !f.Quoted && c.unquoted[upper]
}

// KeywordCall reports whether an unqualified call of f is written like one
// of the calls MariaDB's grammar reads by keyword (grammarFunctions): the
// server's own function, unless its arguments do not fit it, when the
// server calls a stored function of the name instead.
func KeywordCall(f rewrite.Func) bool {
	return f.Schema == "" && !f.Quoted && grammarFunctions[strings.ToUpper(f.Name)]
}

// KeywordHazard says why a keyword call of f (keywordCall) may reach a
// stored function: one of its name exists in one of dbs.
func (c *Objects) KeywordHazard(ctx context.Context, f rewrite.Func, dbs ...string) (string, error) {
	for _, db := range dbs {
		stored, err := c.StoredFunction(ctx, db, f.Name)
		if err != nil || stored {
			return "it calls " + strings.ToUpper(f.Name) + "(), the name of one of the server's own functions and of the stored " +
				"function " + quote.Ident(db) + "." + quote.Ident(f.Name) + ": which one runs depends on its " +
				"arguments; qualify the stored function's name with its database, or rename it", err
		}
	}
	return "", nil
}

// grammarFunctions are calls MariaDB's grammar reads by keyword, however
// spaced (but not quoted), which its registry of functions lacks: the
// keywords of the rules function_call_keyword, function_call_nonkeyword,
// function_call_conflict and geometry_function of sql_yacc.yy, sequence
// functions (NEXTVAL(s) is NEXT VALUE FOR s) and MATCH … AGAINST. (Names
// its lexer takes for a keyword only right before "(" — NOW, SUBSTRING,
// CAST, … — are keywordFunctions, native only when written so.)
var grammarFunctions = map[string]bool{"NEXTVAL": true, "LASTVAL": true, "SETVAL": true, "AGAINST": true,
	"CHAR": true, "CURRENT_USER": true, "CURRENT_ROLE": true, "DATE": true, "DAY": true, "HOUR": true, "INSERT": true,
	"INTERVAL": true, "LEFT": true, "MINUTE": true, "MONTH": true, "RIGHT": true, "SECOND": true, "TIME": true,
	"TIMESTAMP": true, "USER": true, "YEAR": true,
	"GET_FORMAT":   true,
	"TIMESTAMPADD": true, "TIMESTAMPDIFF": true, "UTC_DATE": true, "UTC_TIME": true,
	"UTC_TIMESTAMP": true, "COLUMN_ADD": true, "COLUMN_CHECK": true, "COLUMN_CREATE": true, "COLUMN_DELETE": true,
	"COLUMN_GET": true, "ASCII": true, "CHARSET": true, "COALESCE": true, "COLLATION": true, "DATABASE": true, "IF": true,
	"FORMAT": true, "MICROSECOND": true, "MOD": true, "OLD_PASSWORD": true, "PASSWORD": true, "QUARTER": true,
	"REPEAT": true, "REPLACE": true, "REVERSE": true, "ROW_COUNT": true, "TRUNCATE": true, "WEEK": true,
	"WEIGHT_STRING": true, "CONTAINS": true, "GEOMETRYCOLLECTION": true, "LINESTRING": true, "MULTILINESTRING": true,
	"MULTIPOINT": true, "MULTIPOLYGON": true, "POINT": true, "POLYGON": true, "WITHIN": true, "VALUE": true, "VALUES": true,
	"CONVERT": true, "DEFAULT": true, "EXISTS": true, "MATCH": true, "ROW": true}

// UDFHazard says why a call of f, no function of the server's own, may
// call a loadable function (UDF), whose effects the proxy cannot confine:
// it names one, or the account cannot read mysql.func.
func (c *Objects) UDFHazard(ctx context.Context, f rewrite.Func) (string, error) {
	udfs, err := c.udfList(ctx)
	if err != nil {
		return "", err
	}
	if udfs != nil && udfs[strings.ToLower(f.Name)] {
		return "it calls the loadable function (UDF) " + f.Name + ", whose effects the proxy cannot confine to the sandbox", nil
	}
	if udfs == nil {
		return "it calls " + f.Name + "(), which the proxy cannot tell from a loadable function (UDF) because its " +
			"account cannot read mysql.func (grant it SELECT ON mysql.func)", nil
	}
	return "", nil
}

// StoredFunction reports whether db has a stored function called name.
func (c *Objects) StoredFunction(ctx context.Context, db, name string) (bool, error) {
	if db == "" {
		return false, nil // no database: the server reports "No database selected"
	}
	k := strings.ToLower(db) + "\x00" + strings.ToLower(name)
	now := time.Now()
	if found, ok := cachedAt(c, c.funcs, k, now); ok {
		return found, nil
	}
	var found bool
	err := c.reg.WithConn(ctx, func(sc sideconn.Conn) error {
		rows, err := sc.Query(ctx, "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = 'FUNCTION'"+
			" AND ROUTINE_SCHEMA = "+quote.String(db)+" AND ROUTINE_NAME = "+quote.String(name))
		if err != nil {
			return err
		}
		found = len(rows) == 1 && sideconn.Str(rows[0][0]) != "0"
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("look up function %s.%s: %w", db, name, err)
	}
	cache(c, c.funcs, k, found, now)
	return found, nil
}

// ForgetObject drops what the catalog knows of t as a table or view (a
// promote just changed it in production).
func (c *Objects) ForgetObject(t rewrite.Table) {
	c.mu.Lock()
	delete(c.objects, c.names.Key(t))
	c.mu.Unlock()
}

// ForgetFunction drops what the catalog knows of db.name as a stored
// function.
func (c *Objects) ForgetFunction(db, name string) {
	c.mu.Lock()
	delete(c.funcs, strings.ToLower(db)+"\x00"+strings.ToLower(name))
	c.mu.Unlock()
}

// udfList returns the loadable functions (lower case), or nil when the
// account cannot read mysql.func.
func (c *Objects) udfList(ctx context.Context) (map[string]bool, error) {
	now := time.Now()
	c.mu.Lock()
	e := c.udfs
	c.mu.Unlock()
	if e.fresh(now) {
		return e.v, nil
	}
	var list map[string]bool
	err := c.reg.WithConn(ctx, func(sc sideconn.Conn) error {
		rows, err := sc.Query(ctx, "SELECT name FROM mysql.func")
		var se interface{ ServerError() bool }
		if err != nil && errors.As(err, &se) && se.ServerError() {
			return nil // not readable (1142) or absent: unknown
		}
		if err != nil {
			return err
		}
		list = map[string]bool{}
		for _, r := range rows {
			list[strings.ToLower(sideconn.Str(r[0]))] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list loadable functions: %w", err)
	}
	c.mu.Lock()
	c.udfs = cached[map[string]bool]{v: list, at: now}
	c.mu.Unlock()
	return list, nil
}
