package rewrite

import (
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/body"
)

// sandboxRoutines maps every table of db to sb_<db> and places every
// routine in sb_<db>, as a sandbox does.
type sandboxRoutines struct{}

func (sandboxRoutines) Resolve(t Table, _ bool) (Table, bool, error) {
	return inSandbox(t, "users", "things", "trees", "t", "u")
}

// inSandbox maps t to sb_<db> when its name is one of names (lower case),
// whatever its case; any other table stays where it is.
func inSandbox(t Table, names ...string) (Table, bool, error) {
	if slices.Contains(names, strings.ToLower(t.Name)) {
		return Table{DB: "sb_" + t.DB, Name: t.Name}, true, nil
	}
	return t, false, nil
}

func (sandboxRoutines) ResolveRoutine(st *Statement) (string, error) {
	return "sb_" + st.Routine.DB(st.DB), nil
}

// TestProcedures: CREATE PROCEDURE is read by the engine itself — its body
// as statements of their own, run with the procedure's database current —
// and, through a resolver that places routines, rewritten with its name
// and every table of its body placed; DROP PROCEDURE and CALL name the
// placed routine. Any other resolver refuses them, and bodies the engine
// cannot read are refused.
func TestProcedures(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	for _, c := range []struct{ sql, want, kinds string }{
		{"DROP PROCEDURE IF EXISTS test_mrss; CREATE PROCEDURE test_mrss() BEGIN DO 1; SELECT 1, 2, 3 UNION SELECT 4, 5, 6; DO 1; SELECT 0, 0; END",
			"DROP PROCEDURE IF EXISTS `sb_app`.`test_mrss`; CREATE PROCEDURE `sb_app`.`test_mrss`() BEGIN DO 1; SELECT 1, 2, 3 UNION SELECT 4, 5, 6; DO 1; SELECT 0, 0; END",
			"DROP PROCEDURE CREATE PROCEDURE"},
		{"CREATE PROCEDURE test_signal(ret INT)\nBEGIN\n\tSELECT ret;\n\tSIGNAL SQLSTATE\n\t\t'45001'\n\tSET\n\t\tMESSAGE_TEXT = \"an error\",\n\t\tMYSQL_ERRNO = 45001;\nEND",
			"CREATE PROCEDURE `sb_app`.`test_signal`(ret INT)\nBEGIN\n\tSELECT ret;\n\tSIGNAL SQLSTATE\n\t\t'45001'\n\tSET\n\t\tMESSAGE_TEXT = \"an error\",\n\t\tMYSQL_ERRNO = 45001;\nEND",
			"CREATE PROCEDURE"},
		{"CREATE PROCEDURE test_sp(IN t VARCHAR(255)) BEGIN SELECT pos FROM trees WHERE tree = t; END",
			"CREATE PROCEDURE `sb_app`.`test_sp`(IN t VARCHAR(255)) BEGIN SELECT pos FROM `sb_app`.`trees` WHERE tree = t; END", "CREATE PROCEDURE"},
		{"create procedure `foo.bar` (arg1 int) begin select arg1*2; end",
			"create procedure `sb_app`.`foo.bar` (arg1 int) begin select arg1*2; end", "CREATE PROCEDURE"},
		{"CREATE DEFINER = CURRENT_USER PROCEDURE other.p(OUT n INT) COMMENT 'x' MODIFIES SQL DATA SQL SECURITY INVOKER BEGIN DECLARE k INT DEFAULT 3; DECLARE c CURSOR FOR SELECT id FROM app.users; INSERT INTO things SELECT * FROM app.users; OPEN c; FETCH c INTO k; CLOSE c; BEGIN UPDATE things SET id = id + k; END; END",
			"CREATE DEFINER = CURRENT_USER PROCEDURE `sb_other`.`p`(OUT n INT) COMMENT 'x' MODIFIES SQL DATA SQL SECURITY INVOKER BEGIN DECLARE k INT DEFAULT 3; DECLARE c CURSOR FOR SELECT id FROM `sb_app`.`users`; INSERT INTO `sb_other`.`things` SELECT * FROM `sb_app`.`users`; OPEN c; FETCH c INTO k; CLOSE c; BEGIN UPDATE `sb_other`.`things` SET id = id + k; END; END",
			"CREATE PROCEDURE"},
		{"CREATE PROCEDURE p2() SELECT COUNT(*) FROM users", "CREATE PROCEDURE `sb_app`.`p2`() SELECT COUNT(*) FROM `sb_app`.`users`", "CREATE PROCEDURE"},
		{"USE other; CREATE PROCEDURE p() DELETE FROM t; CALL p()", "USE other; CREATE PROCEDURE `sb_other`.`p`() DELETE FROM `sb_other`.`t`; CALL `sb_other`.`p`()",
			"USE CREATE PROCEDURE CALL"},
		{"CALL `foo.bar`(@`_foo.bar_0`)", "CALL `sb_app`.`foo.bar`(@`_foo.bar_0`)", "CALL"},
		{"CALL test_signal(?)", "CALL `sb_app`.`test_signal`(?)", "CALL"},
		{"CREATE PROCEDURE p(l INT) BEGIN SELECT * FROM t LIMIT ROWS EXAMINED l; END",
			"CREATE PROCEDURE `sb_app`.`p`(l INT) BEGIN SELECT * FROM `sb_app`.`t` LIMIT ROWS EXAMINED l; END", "CREATE PROCEDURE"},
		{"CALL other.p((SELECT COUNT(*) FROM users), @x)", "CALL `sb_other`.`p`((SELECT COUNT(*) FROM `sb_app`.`users`), @x)", "CALL"},
		{"DROP PROCEDURE test_signal", "DROP PROCEDURE `sb_app`.`test_signal`", "DROP PROCEDURE"},
		{"CREATE PROCEDURE p() BEGIN SELECT 1; END; xyzzy; DELETE FROM t", "CREATE PROCEDURE `sb_app`.`p`() BEGIN SELECT 1; END; xyzzy; DELETE FROM t",
			"CREATE PROCEDURE SYNTAX ERROR"},
		// SET STATEMENT … FOR CREATE PROCEDURE (MariaDB's lotofstack),
		// with an sql_mode that reads the body as the session does.
		{"set statement sql_mode = '' for create procedure p(prm int) begin if prm > 1 then call p(prm - 1); end if; delete from t; end",
			"set statement sql_mode = '' for create procedure `sb_app`.`p`(prm int) begin if prm > 1 then call `sb_app`.`p`(prm - 1); end if; delete from `sb_app`.`t`; end",
			"CREATE PROCEDURE"},
		{"SET STATEMENT max_statement_time = 5, sql_mode = TRADITIONAL FOR CREATE FUNCTION f() RETURNS INT RETURN (SELECT COUNT(*) FROM t)",
			"SET STATEMENT max_statement_time = 5, sql_mode = TRADITIONAL FOR CREATE FUNCTION `sb_app`.`f`() RETURNS INT RETURN (SELECT COUNT(*) FROM `sb_app`.`t`)",
			"CREATE FUNCTION"},
	} {
		if !wantRewrite(t, e, c.sql, opts, sandboxRoutines{}, c.want, c.kinds) {
			continue
		}
		// Without a resolver that places routines: refused.
		if res, err := e.Rewrite(c.sql, opts, mapsNothingResolver{}); err == nil && res.Analysis.Statements[len(res.Analysis.Statements)-1].Kind != "DROP PROCEDURE" &&
			!strings.HasPrefix(c.sql, "DROP") {
			t.Errorf("%q passes a resolver that places no routines: %q", c.sql, res.SQL)
		}
	}
	if st := e.Analyze("SET STATEMENT sql_mode='' FOR CREATE PROCEDURE p() SELECT 1", opts).Statements[0]; strings.Join(st.SetStatement, ",") != "sql_mode" {
		t.Errorf("SET STATEMENT … FOR CREATE PROCEDURE sets %v", st.SetStatement)
	}
	// An sql_mode under which the server reads the body on each call
	// otherwise than the proxy read it.
	for _, c := range []struct {
		sql  string
		opts Options
	}{
		{"SET STATEMENT sql_mode='ANSI_QUOTES' FOR CREATE PROCEDURE p() BEGIN SELECT \"a\" FROM t; END", opts},
		{"SET STATEMENT sql_mode='traditional,ansi' FOR CREATE PROCEDURE p() BEGIN SELECT 1; END", opts},
		{"SET STATEMENT sql_mode=DEFAULT FOR CREATE PROCEDURE p() BEGIN DELETE FROM t; END", opts},
		{"SET STATEMENT sql_mode='' FOR CREATE PROCEDURE p() BEGIN SELECT \"a\" FROM t; END", Options{DB: "app", Server: maria1011, ANSIQuotes: true}},
		{"SET STATEMENT transaction_isolation='SERIALIZABLE' FOR CREATE PROCEDURE p() BEGIN DELETE FROM t; END", opts},
	} {
		wantRefused(t, e, c.opts, sandboxRoutines{}, c.sql)
	}
	// The body's tables are the statement's, for forks and checks.
	a := e.Analyze("CREATE PROCEDURE p() BEGIN INSERT INTO t SELECT * FROM other.u; SELECT f(1); END", opts)
	st := a.Statements[0]
	if tables(st.Writes) != "app.t" || tables(st.Reads) != "other.u" || len(st.Funcs) != 1 || len(st.Routine.Body) != 2 {
		t.Errorf("writes %v reads %v funcs %v body %d", st.Writes, st.Reads, st.Funcs, len(st.Routine.Body))
	}
	// Control flow: each statement of the body, and each expression (as
	// SELECT <expression>), read alone and rewritten in place.
	wantRewrites(t, e, opts, sandboxRoutines{}, []rewriteCase{
		{"CREATE PROCEDURE p() BEGIN IF (SELECT COUNT(*) FROM t) > 0 THEN DELETE FROM t; ELSEIF 1 THEN SELECT 1; ELSE UPDATE u SET a = 1; END IF; END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN IF (SELECT COUNT(*) FROM `sb_app`.`t`) > 0 THEN DELETE FROM `sb_app`.`t`; ELSEIF 1 THEN SELECT 1; ELSE UPDATE `sb_app`.`u` SET a = 1; END IF; END"},
		{"CREATE PROCEDURE p() BEGIN l: LOOP DELETE FROM t; LEAVE l; END LOOP l; END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN l: LOOP DELETE FROM `sb_app`.`t`; LEAVE l; END LOOP l; END"},
		{"CREATE PROCEDURE p() BEGIN DECLARE CONTINUE HANDLER FOR SQLSTATE '23000', NOT FOUND, 1062 BEGIN DELETE FROM t; END; END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN DECLARE CONTINUE HANDLER FOR SQLSTATE '23000', NOT FOUND, 1062 BEGIN DELETE FROM `sb_app`.`t`; END; END"},
		{"CREATE PROCEDURE p() BEGIN DECLARE x INT DEFAULT (SELECT COUNT(*) FROM t); WHILE x > 0 DO SET x = x - 1; END WHILE; END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN DECLARE x INT DEFAULT (SELECT COUNT(*) FROM `sb_app`.`t`); WHILE x > 0 DO SET x = x - 1; END WHILE; END"},
		{"CREATE PROCEDURE p() BEGIN REPEAT DELETE FROM t LIMIT 1; UNTIL NOT EXISTS (SELECT * FROM u) END REPEAT; END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN REPEAT DELETE FROM `sb_app`.`t` LIMIT 1; UNTIL NOT EXISTS (SELECT * FROM `sb_app`.`u`) END REPEAT; END"},
		{"CREATE PROCEDURE p(x INT) CASE x WHEN 1 THEN DELETE FROM t; ELSE SELECT 2; END CASE",
			"CREATE PROCEDURE `sb_app`.`p`(x INT) CASE x WHEN 1 THEN DELETE FROM `sb_app`.`t`; ELSE SELECT 2; END CASE"},
		{"CREATE PROCEDURE p() b: BEGIN FOR r IN (SELECT a FROM t) DO INSERT INTO u VALUES (r.a); END FOR; FOR i IN 1..3 DO SELECT i; END FOR; END b",
			"CREATE PROCEDURE `sb_app`.`p`() b: BEGIN FOR r IN (SELECT a FROM `sb_app`.`t`) DO INSERT INTO `sb_app`.`u` VALUES (r.a); END FOR; FOR i IN 1..3 DO SELECT i; END FOR; END b"},
		// MariaDB's cursors with parameters: the declaration's query and
		// the actual parameters of OPEN and FOR (expressions) are read.
		{"CREATE PROCEDURE p(min INT, max INT) BEGIN DECLARE cur CURSOR(pmin INT, pmax VARCHAR(32) CHARACTER SET utf8) FOR SELECT a FROM t WHERE a BETWEEN pmin AND pmax; OPEN cur(min, (SELECT MAX(a) FROM u)); CLOSE cur; END",
			"CREATE PROCEDURE `sb_app`.`p`(min INT, max INT) BEGIN DECLARE cur CURSOR(pmin INT, pmax VARCHAR(32) CHARACTER SET utf8) FOR SELECT a FROM `sb_app`.`t` WHERE a BETWEEN pmin AND pmax; OPEN cur(min, (SELECT MAX(a) FROM `sb_app`.`u`)); CLOSE cur; END"},
		{"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (IN v INT) FOR SELECT a FROM t WHERE a >= v; FOR r IN c((SELECT COUNT(*) FROM u)) DO SELECT r.a; END FOR; END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN DECLARE c CURSOR (IN v INT) FOR SELECT a FROM `sb_app`.`t` WHERE a >= v; FOR r IN c((SELECT COUNT(*) FROM `sb_app`.`u`)) DO SELECT r.a; END FOR; END"},
		// Blocks nested deeper than 64 levels (the server reads thousands).
		{"CREATE PROCEDURE p() BEGIN " + strings.Repeat("BEGIN ", 200) + "DELETE FROM t; " + strings.Repeat("END; ", 200) + "END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN " + strings.Repeat("BEGIN ", 200) + "DELETE FROM `sb_app`.`t`; " + strings.Repeat("END; ", 200) + "END"},
	})
	wantRefused(t, e, opts, mapsNothingResolver{},
		"CREATE PROCEDURE p() BEGIN IF 1 THEN DELETE FROM t; END; END",
		"CREATE PROCEDURE p() BEGIN IF (SELECT * FROM t FOR SYSTEM_TIME ALL) THEN SELECT 1; END IF; END",
		"CREATE PROCEDURE p() BEGIN l: DELETE FROM t; END",
		"CREATE PROCEDURE p() BEGIN DECLARE CONTINUE HANDLER FOR (SELECT 1) DELETE FROM t; END",
		"CREATE PROCEDURE p() BEGIN WHILE 1 DO DELETE FROM t; END LOOP; END",
		"CREATE PROCEDURE p() BEGIN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = (SELECT 1); END",
		"CREATE PROCEDURE p() BEGIN PREPARE s FROM @q; EXECUTE s; END",
		"CREATE PROCEDURE p() BEGIN SELECT * FROM t FOR SYSTEM_TIME ALL; END",
		"CREATE PROCEDURE p() BEGIN SELECT 1; END; SELECT * FROM t FOR SYSTEM_TIME ALL",
		"CREATE PROCEDURE p() BEGIN SELECT 1",
		"CREATE PROCEDURE p() BEGIN SELECT 1; END SELECT 2",
		"CREATE FUNCTION f() RETURNS TYPE OF t.a RETURN 1",
		"CREATE FUNCTION f() RETURNS INT BEGIN RETURN (SELECT * FROM t FOR SYSTEM_TIME ALL); END",
		"CREATE FUNCTION f RETURNS STRING SONAME 'udf.so'",
		"CREATE PROCEDURE p() BEGIN RETURN 1; END",
	)
}

// TestCursorParameters: MariaDB's cursors with parameters are read — the
// parameters' names and types, the query, the actual parameters of OPEN
// and FOR — and refused when any part of them is not.
func TestCursorParameters(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	wantRefused(t, e, opts, sandboxRoutines{},
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (v INT DEFAULT (SELECT 1)) FOR SELECT 1; END",
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (v INT FOR SELECT 1; END",
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (v INT) SELECT 1; END",
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (v INT) FOR; END",
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (v INT) FOR SELECT * FROM t FOR SYSTEM_TIME ALL; END",
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (v INT) FOR SELECT v; OPEN c((SELECT * FROM t FOR SYSTEM_TIME ALL)); END",
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (v INT) FOR SELECT v; OPEN c(1) x; END",
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (v INT) FOR SELECT v; OPEN c(); END",
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (v INT) FOR SELECT v; FOR r IN c((SELECT * FROM t FOR SYSTEM_TIME ALL)) DO SELECT 1; END FOR; END",
	)
}

// TestNestingDepth: bodies nested as deep as the server's parser may read
// are read; deeper ones are a syntax error for sure, sent as they are (one
// statement that reaches nothing) for the server to refuse.
func TestNestingDepth(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	nested := func(n int) string {
		return "CREATE PROCEDURE p() BEGIN " + strings.Repeat("BEGIN ", n) + "DELETE FROM t; " + strings.Repeat("END; ", n) + "END"
	}
	sql := nested(body.ServerMaxNesting - 1)
	res, err := e.Rewrite(sql, opts, sandboxRoutines{})
	if err != nil {
		t.Fatalf("%d levels: %v", body.ServerMaxNesting, err)
	}
	if !strings.Contains(res.SQL, "DELETE FROM `sb_app`.`t`;") || !strings.HasPrefix(res.SQL, "CREATE PROCEDURE `sb_app`.`p`()") {
		t.Errorf("%d levels: not rewritten", body.ServerMaxNesting)
	}
	sql = "SELECT 1; " + nested(body.ServerMaxNesting+1)
	res, err = e.Rewrite(sql, opts, sandboxRoutines{})
	if err != nil {
		t.Fatalf("%d levels: %v", body.ServerMaxNesting+2, err)
	}
	if res.SQL != sql || len(res.Analysis.Statements) != 2 || res.Analysis.Statements[1].Kind != "SYNTAX ERROR" {
		t.Errorf("%d levels: not sent as a syntax error (%d statements)", body.ServerMaxNesting+2, len(res.Analysis.Statements))
	}
	// A trigger's body nested as deep: refused.
	sql = "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN " + strings.Repeat("BEGIN ", body.ServerMaxNesting+1) + "SET @a = 1; " + strings.Repeat("END; ", body.ServerMaxNesting+1) + "END"
	if _, err := e.Rewrite(sql, opts, sandboxRoutines{}); err == nil {
		t.Errorf("a trigger nested %d levels deep is not refused", body.ServerMaxNesting+2)
	}
}

// wantRewrite checks that e rewrites sql (read with opts, through r) to
// want, with statements of the kinds given (space-separated); false when
// the rewrite failed.
func wantRewrite(t *testing.T, e *Engine, sql string, opts Options, r Resolver, want, kinds string) bool {
	t.Helper()
	res, err := e.Rewrite(sql, opts, r)
	if !wantSQL(t, sql, res, err, want) {
		return false
	}
	var got []string
	for _, st := range res.Analysis.Statements {
		got = append(got, string(st.Kind))
	}
	if k := strings.Join(got, " "); k != kinds {
		t.Errorf("%q: kinds %q, want %q", sql, k, kinds)
	}
	return true
}

// wantSQL checks that a rewrite of sql, which gave res and err, gave want;
// false when it failed.
func wantSQL(t *testing.T, sql string, res *Result, err error, want string) bool {
	t.Helper()
	if err != nil {
		t.Errorf("%q: %v", sql, err)
		return false
	}
	if res.SQL != want {
		t.Errorf("%q\n got %q\nwant %q", sql, res.SQL, want)
	}
	return true
}

// rewriteCase is a text and the exact text it must be rewritten to.
type rewriteCase struct{ sql, want string }

// wantRewrites checks that e rewrites the text of each of cases (read with
// opts, through r) to its want.
func wantRewrites(t *testing.T, e *Engine, opts Options, r Resolver, cases []rewriteCase) {
	t.Helper()
	for _, c := range cases {
		res, err := e.Rewrite(c.sql, opts, r)
		wantSQL(t, c.sql, res, err, c.want)
	}
}

// wantRefused checks that e refuses each of sqls, read with opts, through r.
func wantRefused(t *testing.T, e *Engine, opts Options, r Resolver, sqls ...string) {
	t.Helper()
	for _, sql := range sqls {
		if res, err := e.Rewrite(sql, opts, r); err == nil {
			t.Errorf("%q is not refused: %q", sql, res.SQL)
		}
	}
}

// sandboxFunctions places routines and tables as sandboxRoutines does,
// and every function but the server's UPPER, CONCAT and COUNT in sb_<db>.
type sandboxFunctions struct{ sandboxRoutines }

func (sandboxFunctions) ResolveFunction(f Func, db string) (string, bool, error) {
	if n := strings.ToUpper(f.Name); f.Schema == "" && (n == "UPPER" || n == "CONCAT" || n == "COUNT") {
		return "", false, nil
	}
	if f.Schema != "" {
		db = f.Schema
	}
	return "sb_" + db, true, nil
}

// TestFunctions: CREATE FUNCTION is read like CREATE PROCEDURE (its
// return type, and RETURN in its body), DROP FUNCTION names the placed
// function, and calls of functions a FunctionResolver places name them
// there — in statements, bodies and expressions; other resolvers refuse
// calls qualified with a database (a stored function's).
func TestFunctions(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	for _, c := range []struct{ sql, want, kinds string }{
		{"CREATE FUNCTION f(x INT) RETURNS INT DETERMINISTIC RETURN x + (SELECT COUNT(*) FROM t)",
			"CREATE FUNCTION `sb_app`.`f`(x INT) RETURNS INT DETERMINISTIC RETURN x + (SELECT COUNT(*) FROM `sb_app`.`t`)", "CREATE FUNCTION"},
		{"CREATE DEFINER=`root`@`localhost` FUNCTION `g`(a varchar(10)) RETURNS varchar(20) CHARSET utf8mb4 COLLATE utf8mb4_general_ci\n    READS SQL DATA\nBEGIN\n  DECLARE n INT;\n  SET n = f(1);\n  INSERT INTO u VALUES (n);\n  RETURN CONCAT(a, UPPER(a), n);\nEND",
			"CREATE DEFINER=`root`@`localhost` FUNCTION `sb_app`.`g`(a varchar(10)) RETURNS varchar(20) CHARSET utf8mb4 COLLATE utf8mb4_general_ci\n    READS SQL DATA\nBEGIN\n  DECLARE n INT;\n  SET n = `sb_app`.`f`(1);\n  INSERT INTO `sb_app`.`u` VALUES (n);\n  RETURN CONCAT(a, UPPER(a), n);\nEND",
			"CREATE FUNCTION"},
		// An aggregate function: its body fetches the group's rows;
		// calls of it in grouping queries name the placed function.
		{"create aggregate function agg(x INT) returns int begin declare continue handler for not found return 0; loop fetch group next row; insert into t (a) values (x); end loop; end",
			"create aggregate function `sb_app`.`agg`(x INT) returns int begin declare continue handler for not found return 0; loop fetch group next row; insert into `sb_app`.`t` (a) values (x); end loop; end",
			"CREATE FUNCTION"},
		{"CREATE DEFINER=`root`@`localhost` AGGREGATE FUNCTION `agg`(x INT) RETURNS int(11)\nBEGIN DECLARE s INT DEFAULT 0; DECLARE CONTINUE HANDLER FOR NOT FOUND RETURN s; LOOP FETCH GROUP NEXT ROW; SET s = s + x; END LOOP; END",
			"CREATE DEFINER=`root`@`localhost` AGGREGATE FUNCTION `sb_app`.`agg`(x INT) RETURNS int(11)\nBEGIN DECLARE s INT DEFAULT 0; DECLARE CONTINUE HANDLER FOR NOT FOUND RETURN s; LOOP FETCH GROUP NEXT ROW; SET s = s + x; END LOOP; END",
			"CREATE FUNCTION"},
		{"SELECT id, agg(sal) FROM users WHERE id >= 1 GROUP BY counter HAVING agg(sal) > 0 ORDER BY agg(sal)",
			"SELECT id, `sb_app`.`agg`(sal) FROM `sb_app`.`users` WHERE id >= 1 GROUP BY counter HAVING `sb_app`.`agg`(sal) > 0 ORDER BY `sb_app`.`agg`(sal)", "SELECT"},
		{"CREATE FUNCTION h() RETURNS DOUBLE PRECISION UNSIGNED RETURN 1", "CREATE FUNCTION `sb_app`.`h`() RETURNS DOUBLE PRECISION UNSIGNED RETURN 1", "CREATE FUNCTION"},
		{"DROP FUNCTION IF EXISTS other.f", "DROP FUNCTION IF EXISTS `sb_other`.`f`", "DROP FUNCTION"},
		{"ALTER FUNCTION f COMMENT 'x' READS SQL DATA", "ALTER FUNCTION `sb_app`.`f` COMMENT 'x' READS SQL DATA", "ALTER FUNCTION"},
		{"ALTER PROCEDURE other.p SQL SECURITY INVOKER", "ALTER PROCEDURE `sb_other`.`p` SQL SECURITY INVOKER", "ALTER PROCEDURE"},
		{"SELECT f(id), other . g (1), `f` (2), UPPER(name) FROM users WHERE other.g(id) > 0",
			"SELECT `sb_app`.`f`(id), other . g (1), `sb_app`.`f` (2), UPPER(name) FROM `sb_app`.`users` WHERE `sb_other`.`g`(id) > 0", "refused"},
		{"UPDATE t SET a = f(a)", "UPDATE `sb_app`.`t` SET a = `sb_app`.`f`(a)", "UPDATE"},
		{"PREPARE s FROM 'SELECT f(a) FROM t'", "PREPARE s FROM 'SELECT `sb_app`.`f`(a) FROM `sb_app`.`t`'", ""},
		{"EXECUTE IMMEDIATE 'SELECT f(1)'", "EXECUTE IMMEDIATE 'SELECT `sb_app`.`f`(1)'", "EXECUTE IMMEDIATE"},
		{"INSERT INTO t (a) VALUES (f(1))", "INSERT INTO `sb_app`.`t` (a) VALUES (`sb_app`.`f`(1))", "INSERT"},
		{"CREATE PROCEDURE p() BEGIN IF f(1) THEN DELETE FROM t; END IF; END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN IF `sb_app`.`f`(1) THEN DELETE FROM `sb_app`.`t`; END IF; END", "CREATE PROCEDURE"},
	} {
		if c.kinds == "refused" { // a spaced qualified call is not located
			wantRefused(t, e, opts, sandboxFunctions{}, c.sql)
			continue
		}
		wantRewrite(t, e, c.sql, opts, sandboxFunctions{}, c.want, c.kinds)
	}
	for _, sql := range []string{"SELECT app.f(1)", "DROP FUNCTION f", "ALTER FUNCTION f COMMENT 'x'"} {
		if res, err := e.Rewrite(sql, opts, mapsNothingResolver{}); err == nil {
			t.Errorf("%q passes a resolver that places no functions: %q", sql, res.SQL)
		}
	}
}

// TestProcedureAfterSyntaxError: an input holding a syntax error for sure
// before a CREATE PROCEDURE is one piece up to the error and one syntax
// error after it (the server stops there), not analysed again and again.
func TestProcedureAfterSyntaxError(t *testing.T) {
	e := NewEngine(0)
	for _, sql := range []string{"a |;\ncreate procedure p1() begin select 1; end", "SELECT 1; xyzzy; CREATE PROCEDURE p() BEGIN DELETE FROM t; END"} {
		a := e.Analyze(sql, Options{DB: "app", Server: maria1011})
		last := a.Statements[len(a.Statements)-1]
		if last.Kind != "SYNTAX ERROR" {
			t.Errorf("%q: last statement %q, want a syntax error", sql, last.Kind)
		}
		if res, err := a.Rewrite(sandboxRoutines{}); err != nil || res.SQL != sql {
			t.Errorf("%q: %v, %v; want it sent as it is (the server stops at the error)", sql, res, err)
		}
	}
}

// TestAnchoredTypes: TYPE OF table.column and ROW TYPE OF table, in
// declarations, cursor parameters and routine parameters, name a table
// whose definition the server reads when the routine runs: placed like
// any table of the body. TYPE OF a variable and ROW TYPE OF a cursor
// declared in a block around name none.
func TestAnchoredTypes(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	wantRewrites(t, e, opts, sandboxRoutines{}, []rewriteCase{
		{"CREATE PROCEDURE p() BEGIN DECLARE v TYPE OF t.a; DECLARE w TYPE OF v DEFAULT 1; DECLARE r ROW TYPE OF other.u; SELECT v; END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN DECLARE v TYPE OF `sb_app`.`t`.a; DECLARE w TYPE OF v DEFAULT 1; DECLARE r ROW TYPE OF `sb_other`.`u`; SELECT v; END"},
		{"CREATE PROCEDURE p(x TYPE OF app.t.a, OUT y ROW TYPE OF t) BEGIN DECLARE v TYPE OF t . a DEFAULT x; END",
			"CREATE PROCEDURE `sb_app`.`p`(x TYPE OF `sb_app`.`t`.a, OUT y ROW TYPE OF `sb_app`.`t`) BEGIN DECLARE v TYPE OF `sb_app`.`t` . a DEFAULT x; END"},
		{"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (k TYPE OF t.a) FOR SELECT a FROM u WHERE a = k; BEGIN DECLARE r ROW TYPE OF c; DECLARE s ROW TYPE OF u; END; END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN DECLARE c CURSOR (k TYPE OF `sb_app`.`t`.a) FOR SELECT a FROM `sb_app`.`u` WHERE a = k; BEGIN DECLARE r ROW TYPE OF c; DECLARE s ROW TYPE OF `sb_app`.`u`; END; END"},
		// A cursor of a block closed before is no longer in scope: the
		// name is a table's.
		{"CREATE PROCEDURE p() BEGIN BEGIN DECLARE t CURSOR FOR SELECT 1; END; BEGIN DECLARE r ROW TYPE OF t; END; END",
			"CREATE PROCEDURE `sb_app`.`p`() BEGIN BEGIN DECLARE t CURSOR FOR SELECT 1; END; BEGIN DECLARE r ROW TYPE OF `sb_app`.`t`; END; END"},
		{"CREATE FUNCTION f(x TYPE OF t.a) RETURNS INT RETURN x", "CREATE FUNCTION `sb_app`.`f`(x TYPE OF `sb_app`.`t`.a) RETURNS INT RETURN x"},
	})
	wantRefused(t, e, opts, sandboxRoutines{},
		"CREATE PROCEDURE p() BEGIN DECLARE r ROW TYPE OF a.b.c; END",
		"CREATE PROCEDURE p() BEGIN DECLARE v TYPE OF a.b.c.d; END",
		"CREATE PROCEDURE p() BEGIN DECLARE v TYPE OF; END",
		"CREATE PROCEDURE p(v TYPE OF t.) BEGIN END",
	)
}

// TestCompoundBlocks: a compound statement sent as a statement is read
// like a procedure's body — its statements and expressions are the
// analyses CompoundBody lists, its tables rewritten in place — and one
// that runs dynamic SQL (PREPARE … FROM a variable or an expression,
// EXECUTE) is refused for its dynamic SQL, whatever else it holds.
func TestCompoundBlocks(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}, {DB: "app", Name: "u"}: {DB: "sb_app", Name: "u"}}
	for _, c := range []struct {
		sql, want string
		body      int // how many analyses CompoundBody lists
	}{
		{"BEGIN NOT ATOMIC DECLARE done INT DEFAULT 0; DECLARE x INT; DECLARE c CURSOR FOR SELECT a FROM t; " +
			"DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1; OPEN c; l: LOOP FETCH c INTO x; IF done THEN LEAVE l; END IF; " +
			"INSERT INTO u VALUES (x); END LOOP; CLOSE c; END",
			"BEGIN NOT ATOMIC DECLARE done INT DEFAULT 0; DECLARE x INT; DECLARE c CURSOR FOR SELECT a FROM `sb_app`.`t`; " +
				"DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1; OPEN c; l: LOOP FETCH c INTO x; IF done THEN LEAVE l; END IF; " +
				"INSERT INTO `sb_app`.`u` VALUES (x); END LOOP; CLOSE c; END", 5},
		{"BEGIN NOT ATOMIC SELECT * FROM json_table((SELECT j FROM t), '$' COLUMNS(a CHAR(1) path '$.*')) tmp; END;",
			"BEGIN NOT ATOMIC SELECT * FROM json_table((SELECT j FROM `sb_app`.`t`), '$' COLUMNS(a CHAR(1) path '$.*')) tmp; END;", 1},
		// DDL of tables, as a procedure's body holds it.
		{"BEGIN NOT ATOMIC DECLARE v TINYTEXT CHARACTER SET utf8; CREATE TABLE t AS SELECT v; ALTER TABLE t ADD b INT; " +
			"INSERT INTO t VALUES ('x', 1); DROP TABLE u; END;",
			"BEGIN NOT ATOMIC DECLARE v TINYTEXT CHARACTER SET utf8; CREATE TABLE `sb_app`.`t` AS SELECT v; ALTER TABLE `sb_app`.`t` ADD b INT; " +
				"INSERT INTO `sb_app`.`t` VALUES ('x', 1); DROP TABLE `sb_app`.`u`; END;", 4},
	} {
		if !wantRewrite(t, e, c.sql, opts, r, c.want, "COMPOUND") {
			continue
		}
		if n := len(e.Analyze(c.sql, opts).CompoundBody()); n != c.body {
			t.Errorf("%q: %d analyses in its body, want %d", c.sql, n, c.body)
		}
	}
	if b := e.Analyze("SELECT * FROM t", opts).CompoundBody(); b != nil {
		t.Errorf("a SELECT's compound body: %v", b)
	}
	for sql, want := range map[string]bool{
		"BEGIN NOT ATOMIC CREATE TABLE t (a INT); END":                   true,
		"BEGIN NOT ATOMIC IF 1 THEN DROP TABLE IF EXISTS t; END IF; END": true,
		"BEGIN NOT ATOMIC INSERT INTO t VALUES (1); END":                 false,
		"DROP TABLE t": false,
	} {
		if got := e.Analyze(sql, opts).CompoundDDL(); got != want {
			t.Errorf("%q: CompoundDDL %v, want %v", sql, got, want)
		}
	}
	// What the session runs only sent alone stays refused in a block.
	for _, sql := range []string{
		"BEGIN NOT ATOMIC START TRANSACTION; INSERT INTO t VALUES (1); COMMIT; END",
		"BEGIN NOT ATOMIC CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @a = 1; END",
		"BEGIN NOT ATOMIC SHOW TABLES; END",
	} {
		if _, err := e.Rewrite(sql, opts, r); err == nil || !strings.Contains(err.Error(), "statement of its own") {
			t.Errorf("%q: %v, want a refusal", sql, err)
		}
	}
	for _, sql := range []string{
		"BEGIN NOT ATOMIC DECLARE q TEXT DEFAULT 'SELECT 1'; WHILE q IS NOT NULL DO PREPARE s FROM q; EXECUTE s; SET q = NULL; END WHILE; END",
		"BEGIN NOT ATOMIC SET @q = 'DELETE FROM t'; PREPARE s FROM @q; EXECUTE s; DEALLOCATE PREPARE s; END",
		"BEGIN NOT ATOMIC EXECUTE IMMEDIATE CONCAT('DELETE FROM ', 't'); END",
		"BEGIN NOT ATOMIC DELETE FROM u; PREPARE s FROM CONCAT('SELECT ', 1); END",
	} {
		_, err := e.Rewrite(sql, opts, r)
		if err == nil || !strings.Contains(err.Error(), "runs dynamic SQL") {
			t.Errorf("%q: %v, want a refusal of its dynamic SQL", sql, err)
		}
	}
}

// TestBodyVirtualSchemas places a procedure whose body reads the server's
// virtual schemas, which no fork holds: their tables stay as named (what a
// sandbox may read of them is the session's to check); a table of another
// database the resolver does not place still refuses the procedure.
func TestBodyVirtualSchemas(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := sandboxRoutines{}
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"CREATE PROCEDURE p() SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES JOIN performance_schema.threads JOIN users",
			"CREATE PROCEDURE `sb_app`.`p`() SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES JOIN performance_schema.threads JOIN `sb_app`.`users`"},
	})
	wantRefused(t, e, opts, r,
		"CREATE PROCEDURE p() SELECT COUNT(*) FROM other.missing",
		"CREATE PROCEDURE p() INSERT INTO missing VALUES (1)",
	)
}
