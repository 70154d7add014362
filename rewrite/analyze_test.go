package rewrite

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestStatementReach checks what the engine says a statement reaches
// beyond the tables it names: functions, locked reads, files and foreign
// engines, and settings that change how later text is read.
func TestStatementReach(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	cases := []struct {
		sql     string
		funcs   string // Func.String()s, comma-separated
		locked  string // tables
		writes  string
		outside string // substring of Outside
		lexing  bool
		iso     bool
		ser     bool
		like    string
		names   string // tables an unparseable text may name
	}{
		{sql: "SELECT f_write('x')", funcs: "f_write"},
		{sql: "SELECT NOW(), app.f(1), mariadb_schema.trim(' a ')", funcs: "NOW,app.f,mariadb_schema.trim"},
		{sql: "DO f_write('x')", funcs: "f_write"},
		{sql: "SET @r = f_write('x')", funcs: "f_write"},
		{sql: "SELECT * FROM t WHERE id = f(1)", funcs: "f"},
		{sql: "SELECT NEXTVAL(seq1), LASTVAL(s2)", funcs: "nextval,lastval", writes: "app.seq1"},
		{sql: "SELECT NEXT VALUE FOR other.seq", funcs: "nextval", writes: "other.seq"},
		{sql: "SELECT SETVAL(seq1, 5000)", funcs: "setval", writes: "app.seq1"},
		{sql: "SELECT PREVIOUS VALUE FOR seq1", funcs: "nextval", writes: "app.seq1"}, // read as NEXT VALUE (forks the sequence)
		{sql: "UPDATE t SET id = NEXTVAL(seq1)", funcs: "nextval", writes: "app.seq1,app.t"},
		{sql: "CREATE TABLE t2 (id INT DEFAULT NEXTVAL(seq1))", funcs: "nextval", writes: "app.seq1,app.t2"},
		{sql: "SELECT * FROM t FOR UPDATE", locked: "app.t"},
		{sql: "SELECT * FROM t LOCK IN SHARE MODE", locked: "app.t"},
		{sql: "SELECT * FROM t JOIN u ON t.id = u.id FOR SHARE", locked: "app.t,app.u"},
		{sql: "SELECT * FROM t"},
		{sql: "INSERT INTO log SELECT * FROM t", locked: "app.t", writes: "app.log"},
		{sql: "UPDATE log SET v = 1 WHERE id IN (SELECT id FROM t)", locked: "app.t", writes: "app.log"},
		{sql: "DELETE FROM log WHERE id IN (SELECT id FROM t)", locked: "app.t", writes: "app.log"},
		{sql: "SET @v = (SELECT v FROM t WHERE id = 1)", locked: "app.t"},
		{sql: "DO (SELECT v FROM t)", locked: "app.t"},
		{sql: "CREATE TABLE c AS SELECT * FROM t", locked: "app.t", writes: "app.c"},
		{sql: "CREATE TABLE c LIKE t", writes: "app.c", like: "app.t"},
		{sql: "LOCK TABLES t READ, u WRITE", locked: "app.t", writes: "app.u"},
		{sql: "INSERT INTO log SELECT * FROM information_schema.TABLES", writes: "app.log"},
		{sql: "EXPLAIN SELECT * FROM t"},
		{sql: "CREATE VIEW v AS SELECT * FROM t", writes: "app.v"},
		{sql: "SELECT * FROM t INTO OUTFILE '/tmp/x'", outside: "INTO OUTFILE"},
		{sql: "SELECT a INTO @a FROM t"},                                               // read with its INTO list masked (rewrite/recovery)
		{sql: "SELECT a INTO @a FROM t WHERE x = (SELECT", names: "app.a,app.t,app.x"}, // the parser cannot read it
		{sql: "SELECT LOAD_FILE('/etc/passwd')", funcs: "LOAD_FILE", outside: "LOAD_FILE"},
		{sql: "LOAD DATA INFILE '/x' INTO TABLE t", writes: "app.t", outside: "LOAD DATA INFILE"},
		{sql: "LOAD DATA LOCAL INFILE '/x' INTO TABLE t", writes: "app.t"},
		{sql: "CREATE TABLE mm (a INT) ENGINE=MERGE UNION=(m1, m2)", writes: "app.mm", outside: "ENGINE=MERGE"},
		{sql: "CREATE TABLE f (a INT) CONNECTION='mysql://x'", writes: "app.f", outside: "CONNECTION"},
		{sql: "CREATE TABLE f (a INT) CONNECTION='fish' ENGINE=MEMORY", writes: "app.f"}, // inert for the engine
		{sql: "CREATE TABLE f (a INT) ENGINE=MEMORY ENGINE=FEDERATED CONNECTION='mysql://x'", writes: "app.f", outside: "ENGINE=FEDERATED"},
		{sql: "ALTER TABLE g ENGINE=Aria, CONNECTION='x'", writes: "app.g"},
		{sql: "CREATE TABLE d (a INT) DATA DIRECTORY='/tmp'", writes: "app.d", outside: "DATA DIRECTORY"},
		{sql: "ALTER TABLE t ENGINE=SPIDER", writes: "app.t", outside: "ENGINE=SPIDER"},
		{sql: "CREATE TABLE p (a INT) PARTITION BY HASH(a) (PARTITION p0 DATA DIRECTORY = '/tmp/x')", writes: "app.p", outside: "DATA DIRECTORY"},
		{sql: "ALTER TABLE t ADD PARTITION (PARTITION p9 INDEX DIRECTORY = '/tmp/z')", writes: "app.t", outside: "INDEX DIRECTORY"},
		{sql: "CREATE TABLE p (a INT) PARTITION BY RANGE (a) (PARTITION p0 VALUES LESS THAN (10) ENGINE = InnoDB)", writes: "app.p"},
		{sql: "CREATE TABLE i (a INT) ENGINE=InnoDB", writes: "app.i"},
		{sql: "SET default_storage_engine = MERGE", outside: "default_storage_engine"},
		{sql: "SET default_storage_engine = 'Aria'"},
		{sql: "SET SESSION default_storage_engine = DEFAULT"},
		{sql: "SET NAMES gbk", lexing: true},
		{sql: "SET CHARACTER SET big5", lexing: true},
		{sql: "SET character_set_client = sjis", lexing: true},
		{sql: "SET @@SESSION.sql_mode = 'ANSI_QUOTES'", lexing: true},
		{sql: "SET sql_mode = @m, @x = 1", lexing: true},
		{sql: "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", iso: true, ser: true},
		{sql: "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", iso: true},
		{sql: "SET SESSION tx_isolation = 'SERIALIZABLE'", iso: true, ser: true},
		{sql: "SET sql_mode = 'MSSQL'", lexing: true, outside: "MSSQL"},
		{sql: "SET SESSION sql_mode = 'ansi,oracle'", lexing: true, outside: "ORACLE"},
		{sql: "PREPARE s FROM 'SELECT f(1) FROM t FOR UPDATE'", funcs: "f", locked: "app.t"},
		// Unparseable texts: every name before a parenthesis may be a
		// function, every other name a table.
		{sql: "SELECT f_write('x') FROM t FOR SYSTEM_TIME ALL", funcs: "f_write", names: "app.t,app.SYSTEM_TIME"},
		{sql: "SELECT * FROM db2.v FOR SYSTEM_TIME ALL", names: "app.db2,db2.v,app.SYSTEM_TIME"},
	}
	// A safe engine named by the statement before does not make another
	// statement's CONNECTION inert.
	if a := e.Analyze("CREATE TABLE f (a INT) ENGINE=InnoDB; ALTER TABLE g CONNECTION='mysql://x'", opts); len(a.Statements) != 2 ||
		!strings.Contains(a.Statements[1].Outside, "CONNECTION") {
		t.Errorf("CONNECTION after another statement's ENGINE: %+v", a.Statements)
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			a := e.Analyze(c.sql, opts)
			if len(a.Statements) != 1 {
				t.Fatalf("%d statements", len(a.Statements))
			}
			st := a.Statements[0]
			var funcs []string
			for _, f := range st.Funcs {
				funcs = append(funcs, f.String())
			}
			check := func(what, got, want string) {
				if got != want {
					t.Errorf("%s = %q, want %q", what, got, want)
				}
			}
			check("funcs", strings.Join(funcs, ","), c.funcs)
			check("locked", tables(st.Locked), c.locked)
			check("writes", tables(st.Writes), c.writes)
			check("like", tables(st.Like), c.like)
			check("names", tables(st.Names), c.names)
			if c.outside == "" && st.Outside != "" || !strings.Contains(st.Outside, c.outside) {
				t.Errorf("outside = %q, want it to hold %q", st.Outside, c.outside)
			}
			check("lexing/isolation/serializable", fmt.Sprint(st.ChangesLexing, st.ChangesIsolation, st.Serializable),
				fmt.Sprint(c.lexing, c.iso, c.ser))
		})
	}
}

// TestUnparseableHazards checks the texts the parser cannot read that the
// engine refuses even though they start like reads.
func TestUnparseableHazards(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	wantRefused(t, e, opts, mapsNothingResolver{},
		"SELECT * FROM t INTO DUMPFILE '/tmp/x'",
		"SELECT * FROM t FOR SYSTEM_TIME ALL FOR UPDATE",
		"SELECT * FROM t FOR SYSTEM_TIME ALL LOCK IN SHARE MODE",
		"SELECT NEXTVAL(s) FROM t FOR SYSTEM_TIME ALL",
		"SELECT LOAD_FILE('/etc/passwd') FROM t FOR SYSTEM_TIME ALL",
		"BEGIN NOT ATOMIC SELECT f_write(1) FROM t FOR SYSTEM_TIME ALL; END",
		"BEGIN NOT ATOMIC START TRANSACTION; DELETE FROM t; COMMIT; END",
		"BEGIN NOT ATOMIC USE other; DELETE FROM t; END",
		"BEGIN NOT ATOMIC SET @@session.sql_mode = 'ANSI_QUOTES'; END",
		"IF 1 THEN CALL p(); END IF",
		"BEGIN NOT ATOMIC SELECT 1; END; DELETE FROM t",
	)
	// A block the engine reads: its calls are the statement's, for the
	// session's checks of stored functions.
	if a := e.Analyze("BEGIN NOT ATOMIC SELECT f_write(1); END", opts); len(a.Statements) != 1 || len(a.Statements[0].Funcs) != 1 ||
		a.Statements[0].Funcs[0].Name != "f_write" {
		t.Errorf("a block's calls: %+v", a.Statements)
	}
	if _, err := e.Rewrite("SELECT * FROM t FOR SYSTEM_TIME ALL", opts, mapsNothingResolver{}); err != nil {
		t.Errorf("a plain unparseable read is refused: %v", err)
	}
}

type mapsNothingResolver struct{}

func (mapsNothingResolver) Resolve(t Table, _ bool) (Table, bool, error) { return t, false, nil }

// TestLabelsRenames checks that a rewrite reports the names it replaced.
func TestLabelsRenames(t *testing.T) {
	e := NewEngine(0)
	r := mapResolver{{DB: "app", Name: "seq1"}: {DB: "sbx", Name: "seq1"}}
	res, err := e.Rewrite("SELECT NEXTVAL(seq1), 'seq1'", Options{DB: "app", Server: maria1011}, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Renames) != 1 || res.Renames[0] != (Rename{From: "seq1", To: "`sbx`.`seq1`"}) {
		t.Fatalf("renames %+v", res.Renames)
	}
}

// TestLabelsRenamesInLiteral: the names replaced in the statement a
// PREPARE or EXECUTE IMMEDIATE literal holds are the rewrite's too (the
// server labels that statement's columns with its text as sent).
func TestLabelsRenamesInLiteral(t *testing.T) {
	e := NewEngine(0)
	r := mapResolver{{DB: "app", Name: "t1"}: {DB: "sbx", Name: "t1"}}
	for _, sql := range []string{
		"EXECUTE IMMEDIATE 'SELECT ROW(1, 7) IN (SELECT id, id1 FROM t1 WHERE id1= 8)'",
		"PREPARE s FROM 'SELECT 1 IN (SELECT id FROM t1)'",
	} {
		res, err := e.Rewrite(sql, Options{DB: "app", Server: maria1011}, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Renames) != 1 || res.Renames[0] != (Rename{From: "t1", To: "`sbx`.`t1`"}) {
			t.Errorf("%q: renames %+v", sql, res.Renames)
		}
	}
}

// TestFunctionKeywordTables: a table named by one of the function
// keywords MariaDB's grammar takes for no name, right before "(" (or
// after whitespace under IGNORE_SPACE), is the server's syntax error,
// which the rewritten name would mend: refused for the server's verdict.
// Other keywords of its function list are names there.
func TestFunctionKeywordTables(t *testing.T) {
	e := NewEngine(0)
	r := mapResolver{}
	for _, n := range []string{"count", "adddate", "sysdate", "bit_and", "row_number"} {
		r[Table{DB: "app", Name: n}] = Table{DB: "sbx", Name: n}
	}
	for _, c := range []struct {
		sql, want   string
		ignoreSpace bool
	}{
		{"CREATE TABLE count(a INT)", "", false},
		{"create table BIT_AND(a int)", "", false},
		{"CREATE TABLE count (a INT)", "CREATE TABLE `sbx`.`count` (a INT)", false},
		{"CREATE TABLE `count`(a INT)", "CREATE TABLE `sbx`.`count`(a INT)", false},
		{"create table ADDDATE(a int)", "create table `sbx`.`adddate`(a int)", false},
		{"CREATE TABLE sysdate(a INT)", "CREATE TABLE `sbx`.`sysdate`(a INT)", false},
		// IGNORE_SPACE: whitespace, not a comment, may come between.
		{"CREATE TABLE count (a INT)", "", true},
		{"CREATE TABLE count\n\t(a INT)", "", true},
		{"CREATE TABLE count /* c */ (a INT)", "CREATE TABLE `sbx`.`count` /* c */ (a INT)", true},
		{"CREATE TABLE `count` (a INT)", "CREATE TABLE `sbx`.`count` (a INT)", true},
		{"create table ADDDATE (a int)", "create table `sbx`.`adddate` (a int)", true},
	} {
		res, err := e.Rewrite(c.sql, Options{DB: "app", Server: maria1011, IgnoreSpace: c.ignoreSpace}, r)
		var ref *Refusal
		switch {
		case c.want == "" && (!errors.As(err, &ref) || !ref.ServerCheck):
			t.Errorf("%q (IGNORE_SPACE %v): %v, want a refusal for the server's verdict", c.sql, c.ignoreSpace, err)
		case c.want != "" && err != nil:
			t.Errorf("%q (IGNORE_SPACE %v): %v", c.sql, c.ignoreSpace, err)
		case c.want != "" && res.SQL != c.want:
			t.Errorf("%q (IGNORE_SPACE %v): %q, want %q", c.sql, c.ignoreSpace, res.SQL, c.want)
		}
	}
	// A call with whitespace before "(" is written bare (the server's
	// function, for a function's keyword) under IGNORE_SPACE only; one
	// with a comment between never is.
	for _, ignoreSpace := range []bool{false, true} {
		a := e.Analyze("SELECT f (1), g(2), h/**/(3)", Options{DB: "app", Server: maria1011, IgnoreSpace: ignoreSpace})
		if fs := a.Statements[0].Funcs; len(fs) != 3 || fs[0].Bare != ignoreSpace || !fs[1].Bare || fs[2].Bare {
			t.Errorf("IGNORE_SPACE %v: %#v", ignoreSpace, fs)
		}
	}
}

// TestEngineNamed: a SET of an engine variable the proxy refuses records
// the engine it names as a literal or a bare name, for the server's own
// error when it knows no such engine (Statement.Engine).
func TestEngineNamed(t *testing.T) {
	e := NewEngine(0)
	for sql, want := range map[string]string{
		`set default_storage_engine = "a.MYISAM"`:              "a.MYISAM",
		"set default_storage_engine = 'a.MYISAM'":              "a.MYISAM",
		"set default_storage_engine = `a.MYISAM`":              "a.MYISAM",
		"SET SESSION default_tmp_storage_engine = FEDERATED":   "FEDERATED",
		"SET default_storage_engine = InnoDB":                  "",
		"SET default_storage_engine = CONCAT('FEDER', 'ATED')": "",
		"SET default_storage_engine = 'x', @a = 1":             "",
		"SET storage_engine = 5":                               "",
	} {
		a := e.Analyze(sql, Options{Server: maria1011})
		if len(a.Statements) != 1 || a.Statements[0].Engine != want || want != "" && a.Statements[0].Outside == "" {
			t.Errorf("%s: %+v, want engine %q", sql, a.Statements, want)
		}
	}
}

// TestIsolationLevels checks which isolation SETs count as SERIALIZABLE:
// any but a literal weaker level.
func TestIsolationLevels(t *testing.T) {
	e := NewEngine(0)
	cases := []struct {
		sql          string
		serializable bool
	}{
		{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", false},
		{"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", false},
		{"SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED", false},
		{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", true},
		{"SET tx_isolation = 'READ-COMMITTED'", false},
		{"SET @@session.tx_isolation = 'serializable'", true},
		{"SET tx_isolation = 3", true},
		{"SET tx_isolation = 1", false},
		{"SET tx_isolation = @lvl", true},
		{"SET tx_isolation = CONCAT('SERIAL', 'IZABLE')", true},
		{"SET tx_isolation = DEFAULT", true},
		{"SET transaction_isolation = 'REPEATABLE-READ'", false},
	}
	for _, c := range cases {
		a := e.Analyze(c.sql, Options{Server: maria1011})
		if len(a.Statements) != 1 {
			t.Fatalf("%s: %d statements", c.sql, len(a.Statements))
		}
		st := a.Statements[0]
		if !st.ChangesIsolation || st.Serializable != c.serializable {
			t.Errorf("%s: ChangesIsolation %v Serializable %v, want true %v", c.sql, st.ChangesIsolation, st.Serializable, c.serializable)
		}
	}
}

// TestOriginal: offsets of the text sent map back to the client's text
// through the splices of a rewrite.
func TestOriginal(t *testing.T) {
	e := NewEngine(0)
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "_sqlfork_0123abcd_app", Name: "t"}, {DB: "app", Name: "u"}: {DB: "_sqlfork_0123abcd_app", Name: "u"}}
	res, err := e.Rewrite("SELECT * FROM t JOIN u WHERE x", Options{DB: "app", Server: maria1011}, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		near, want string
	}{
		{"WHERE x", "WHERE x"},
		{"JOIN " + res.SQL[strings.Index(res.SQL, "JOIN ")+5:], "JOIN u WHERE x"},
		{"", ""},
		{res.SQL, "SELECT * FROM t JOIN u WHERE x"},
	} {
		off := len(res.SQL) - len(c.near)
		if got := "SELECT * FROM t JOIN u WHERE x"[Original(res.Splices, off):]; got != c.want {
			t.Errorf("near %q: client text %q, want %q", c.near, got, c.want)
		}
	}
}

// TestLabelSpans: the analysis locates the select list expressions the
// server labels with their text, and names the columns given an alias;
// Sent maps their offsets into the text sent.
func TestLabelSpans(t *testing.T) {
	e := NewEngine(0)
	sql := "SELECT EXISTS(SELECT 1 FROM t), t2.x AS n, /* c */ 1 + 1 FROM t2"
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "_sqlfork_0123abcd_app", Name: "t"}}
	res, err := e.Rewrite(sql, Options{DB: "app", Server: maria1011}, r)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Analysis.Statements[0]
	var got []string
	for _, sp := range st.Labels {
		got = append(got, sql[sp[0]:sp[1]]+" => "+res.SQL[Sent(res.Splices, sp[0]):Sent(res.Splices, sp[1])])
	}
	want := []string{"EXISTS(SELECT 1 FROM t) => EXISTS(SELECT 1 FROM `_sqlfork_0123abcd_app`.`t`)", "1 => 1", "1 + 1 => 1 + 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("labels %q, want %q", got, want)
	}
	if len(st.AliasedColumns) != 1 || st.AliasedColumns[0] != [2]string{"n", "x"} {
		t.Errorf("aliased columns %q", st.AliasedColumns)
	}
}

// TestReferencesDatabase: the table of a FOREIGN KEY's REFERENCES clause
// written without a database is in the constrained table's database, not
// the current one, as the server reads it.
func TestReferencesDatabase(t *testing.T) {
	e := NewEngine(0)
	r := mapResolver{{DB: "app", Name: "users"}: {DB: "sbx_app", Name: "users"}, {DB: "app", Name: "t3"}: {DB: "sbx_app", Name: "t3"}}
	wantRewrites(t, e, Options{DB: "other", Server: maria1011}, r, []rewriteCase{
		{"CREATE TABLE app.t3 (a INT, FOREIGN KEY (a) REFERENCES users (id))",
			"CREATE TABLE `sbx_app`.`t3` (a INT, FOREIGN KEY (a) REFERENCES `sbx_app`.`users` (id))"},
		{"CREATE TABLE app.t3 (a INT REFERENCES users (id))", "CREATE TABLE `sbx_app`.`t3` (a INT REFERENCES `sbx_app`.`users` (id))"},
		{"ALTER TABLE app.t3 ADD FOREIGN KEY (a) REFERENCES users (id)", "ALTER TABLE `sbx_app`.`t3` ADD FOREIGN KEY (a) REFERENCES `sbx_app`.`users` (id)"},
		{"CREATE TABLE t3 (a INT, FOREIGN KEY (a) REFERENCES users (id))", "CREATE TABLE t3 (a INT, FOREIGN KEY (a) REFERENCES users (id))"},
	})
	st := e.Analyze("CREATE TABLE app.t3 (a INT, FOREIGN KEY (a) REFERENCES users (id))", Options{DB: "other", Server: maria1011}).Statements[0]
	if len(st.References) != 1 || st.References[0] != (Table{DB: "app", Name: "users"}) || !slices.Contains(st.Reads, Table{DB: "app", Name: "users"}) {
		t.Errorf("references %v, reads %v: want app.users", st.References, st.Reads)
	}
}
