package main

import "regexp"

// Categories of a failure.
const (
	// byDesign is a refusal the sandbox makes on purpose: the statement
	// changes or shows what no sandbox can hold, or the test needs what
	// the runner's transparent per-connection sandbox does not give.
	byDesign = "by-design"
	// notYet is what the proxy does not do yet.
	notYet = "not-yet"
)

// rule classifies the failures whose test is test (any when empty), whose
// statement matches stmt and whose error or difference matches diff (any
// when nil). The reason starts with its group, up to a colon.
type rule struct {
	test       string
	stmt, diff *regexp.Regexp
	category   string
	reason     string
}

// re compiles a case-insensitive expression.
func re(s string) *regexp.Regexp { return regexp.MustCompile("(?is)" + s) }

// Reasons shared by several rules.
const (
	connections = "several connections: the test uses more than one connection on one database (connect, send/reap, or a client " +
		"program it runs), and the runner's transparent mode gives each connection a sandbox of its own, so one does not see " +
		"the tables another made (a named sandbox, user+tag, would share them)"
	maintenance = "table maintenance: a CHECK / ANALYZE / OPTIMIZE / REPAIR of tables the sandbox cannot hold (the " +
		"server's own schemas, a procedure's body) is refused as an administrative statement"
	storedFunction = "stored function: a CREATE or DROP FUNCTION the proxy does not read (a loadable function's, " +
		"SONAME) is refused"
	dynamic = "dynamic SQL: PREPARE … FROM @variable, EXECUTE IMMEDIATE of an expression and EXECUTE of a statement the " +
		"proxy did not see prepared are refused: the proxy cannot read the text the server will run"
	dynamicBody = "dynamic SQL in a stored program: PREPARE … FROM <variable> and EXECUTE IMMEDIATE <expression> in " +
		"a body run a text the server builds at run time, from parameters, variables or rows, where the proxy cannot " +
		"read it; the proxy lets no text reach the server that it has not read, so such a body is refused (a client's " +
		"own PREPARE … FROM <expression> runs: the proxy evaluates it first)"
	mtrSuppression = "FLUSH / administrative: CALL mtr.add_suppression runs, in its body, FLUSH NO_WRITE_TO_BINLOG TABLE " +
		"test_suppressions, which the proxy refuses in a procedure body as in a statement"
)

// rules are tried in order; the first that matches classifies.
var rules = []rule{
	// Tests whose answer differs, or that fail past a refusal, by name.
	{test: "comment_index", category: notYet, reason: "answer: SELECT … FROM information_schema.columns without ORDER BY " +
		"returns the rows of the sandbox's columns view in another order than the server's table (the view unions " +
		"the sandbox's forks with production)"},
	{test: "distinct_notembedded", category: notYet, reason: "answer: the optimizer trace (information_schema.OPTIMIZER_TRACE) " +
		"names the sandbox's tables by their physical database (_sqlfork_…_test.t1.a) where the server writes t1.a: " +
		"the trace is not told back"},
	{test: "explain_json_format_partitions", category: notYet, reason: "answer: ANALYZE FORMAT=JSON conditions keep the " +
		"sandbox's physical database (_sqlfork_…_test.t1.a) where the server writes t1.a: only EXPLAIN answers are told back"},
	{test: "in_subq_cond_pushdown", category: notYet, reason: "answer: EXPLAIN FORMAT=JSON writes a \"ref\" list on one line " +
		"only while it fits the server's line width; with the sandbox's longer physical names the server breaks it " +
		"across lines, and telling the names back does not join them"},
	{test: "type_geometry_mix_int", category: notYet, reason: dynamic},
	{test: "mysql-interactive", category: byDesign, reason: connections},
	{test: "features", category: notYet, reason: "answer: FLUSH STATUS's counters as the session sees them: a Feature_ " +
		"counter moves with the proxy's own reads of the sandbox's views"},
	{test: "mysql_comments", category: notYet, reason: "answer: SHOW CREATE FUNCTION of a routine the sandbox made shows " +
		"its body with its tables qualified (docs/SANDBOXES.md, Not yet)"},
	{test: "show", category: notYet, reason: "answer: SHOW FIELDS … WHERE field IN (a query of information_schema.columns) " +
		"labels its first column as the query writes it"},
	{test: "sp-prelocking", category: notYet, reason: "answer: a result column of a procedure's SELECT labelled with a " +
		"call of a stored function names the sandbox's database (`_sqlfork_…_test`.`f1`())"},
	{test: "statement-expr", category: notYet, reason: "dynamic SQL: PREPARE … FROM an expression holding a subquery " +
		"gets the proxy's refusal where the server answers 1970"},
	{test: "rowid_filter", category: notYet, reason: "answer: ANALYZE of a query of the sandbox's copies of dbt3's tables " +
		"measures another rowid filter selectivity than production's tables (statistics of a fork made by copying)"},
	{test: "subselect4", category: notYet, reason: "parser gap: HAVING (SELECT c) in a subquery without FROM is not read"},
	{test: "subselect_mat", category: notYet, reason: "answer: EXPLAIN of a query of information_schema.SCHEMATA shows " +
		"the plan of the sandbox's view of it"},
	{test: "subselect_sj_mat", category: notYet, reason: "answer: EXPLAIN of a query of information_schema.SCHEMATA shows " +
		"the plan of the sandbox's view of it"},
	{test: "insert_notembedded", stmt: re(`^connect\b`), category: byDesign, reason: connections},
	{test: "mysqldump-utf8mb4", category: byDesign, reason: connections},
	{test: "mysqldump-order-by-size", stmt: re(`^ANALYZE TABLE t1, t2, t3, t4;$`), category: byDesign, reason: connections},
	{test: "create_not_windows", category: byDesign, reason: "server files: the test removes a table's .frm in the data " +
		"directory (test/t1.frm); a sandbox's fork lives in the sandbox's database directory"},
	{test: "myisampack", category: byDesign, reason: "server files: the test runs myisampack on a table's files in the " +
		"data directory (test/t1); a sandbox's fork lives in the sandbox's database directory"},
	{test: "repair", category: byDesign, reason: "server files: the test copies a table's files into the data directory " +
		"(test/t1.MYI); a sandbox's fork lives in the sandbox's database directory"},
	{test: "type_decimal", category: byDesign, reason: "server files: the test copies a table's files into the data " +
		"directory (test/t1dec102.frm); a sandbox's fork lives in the sandbox's database directory"},
	{test: "check_constraint", category: notYet, reason: "answer: the warnings a table gives when it is opened (its CHECK " +
		"constraint's conversions) come where the proxy's own connections open the sandbox's table first, and FLUSH TABLES, " +
		"a no-op in a sandbox, does not close it again for the client's next statement to warn"},
	{test: "prepare", category: notYet, reason: "answer: EXECUTE of an SQL PREPARE of a UNION of information_schema " +
		"reads labels the columns as the sandbox's views name them (TABLE_NAME), not as the query writes them (table_name)"},
	{test: "default", category: byDesign, reason: connections},
	{test: "information_schema_tables", category: byDesign, reason: connections},
	{test: "sp_gis", category: byDesign, reason: "keyword function: the test makes a stored function POINT and calls " +
		"point(); which one the server runs depends on the arguments, so the proxy refuses calls of the name while " +
		"both exist"},

	// By design.
	{diff: re(`privilege statement`), stmt: re(`^\s*(create|drop|alter|rename)\s+(user|role)\b|^\s*(grant|revoke)\b|` +
		`^\s*set\s+(password|role|default\s+role)\b`), category: byDesign,
		reason: "accounts and privileges: account and privilege statements change the server's accounts, outside any table"},
	{stmt: re(`^\s*call\s+mtr\.add_suppression`), category: byDesign, reason: mtrSuppression},
	{stmt: re(`^\s*flush\s+tables\s+with\s+read\s+lock\s+and\s+disable\s+checkpoint`), category: byDesign,
		reason: "FLUSH / administrative: FLUSH TABLES WITH READ LOCK AND DISABLE CHECKPOINT locks the whole server (the " +
			"proxy refuses it as unreadable, before it would refuse it as FLUSH)"},
	{stmt: re(`^\s*flush\b`), category: byDesign, reason: "FLUSH / administrative: FLUSH changes server-wide caches, " +
		"logs, status or privileges"},
	{stmt: re(`^\s*create\s+(definer\s*=\s*\S+\s+)?procedure\b.*;\s*flush\b`), diff: re(`administrative or privilege statement`),
		category: byDesign, reason: "FLUSH / administrative: a procedure body's FLUSH (FLUSH TABLES) is refused as the " +
			"statement is: it changes server-wide caches"},
	{diff: re(`SET GLOBAL \w+: the variable has no session scope`), category: byDesign, reason: "SET GLOBAL: a variable " +
		"without a session scope (or whose session value is read-only) acts on the whole server, production and every " +
		"sandbox; a sandbox keeps only the globals that have a session equivalent"},
	{diff: re(`SET GLOBAL \w+: the variable's session value still reaches beyond the session`), category: byDesign,
		reason: "SET GLOBAL: the variable's session value still reaches beyond the session (the binary log, replication, " +
			"the server's logs)"},
	{diff: re(`this form of SET GLOBAL changes the whole server`), category: byDesign, reason: "SET GLOBAL: SET GLOBAL " +
		"TRANSACTION and structured variables (a key cache's) act on the whole server"},
	{stmt: re(`query_cache_type`), diff: re(`^1925:`), category: byDesign, reason: "SET GLOBAL: the query cache is the " +
		"whole server's: a session cannot turn it on while the server has it off (the server's 1925 when the sandbox " +
		"checks the value)"},
	{stmt: re(`^\s*create\s+(definer\s*=\s*\S+\s+)?procedure\b.*\b(create|drop)\s+(schema|database)\b`),
		diff: re(`DATABASE changes the server`), category: byDesign, reason: "CREATE / DROP DATABASE in a stored program: the " +
			"server runs a body's database statement with the name as written, which would be production's"},
	{diff: re("`information_schema`.`processlist` lists every connection"), category: byDesign, reason: "server-wide " +
		"tables: information_schema.PROCESSLIST lists every connection, other proxy users' and sandboxes' statements " +
		"included (SHOW PROCESSLIST is answered with the user's own)"},
	{stmt: re(`^\s*(create|alter|drop)\s+(definer\s*=\s*\S+\s+)?event\b`), category: byDesign, reason: "events: " +
		"the event scheduler runs events on the whole server; a sandbox defines none"},
	{diff: re(`LOAD DATA INFILE reads a file|INTO OUTFILE writes a file|writes a file on the database server`),
		category: byDesign, reason: "server files: LOAD DATA INFILE / SELECT … INTO OUTFILE read or write files on the " +
			"database server, outside any sandbox"},
	{diff: re(`DATA DIRECTORY / INDEX DIRECTORY place files outside`), category: byDesign, reason: "server files: " +
		"DATA / INDEX DIRECTORY place a table's files outside the server's data directory and the sandbox"},
	{diff: re("`mysql`\\.`\\w+` holds what the whole server holds"), category: byDesign, reason: "server-wide tables: " +
		"the mysql schema's tables (mysql.proc …) describe every sandbox's objects"},
	{diff: re(`a table of the server's own schema`), category: byDesign, reason: "system schema DDL: the definitions of " +
		"the tables of mysql, sys, performance_schema and information_schema are the server's; a sandbox does not hold " +
		"them, and its DDL of them is refused (it would be exported and promoted)"},
	{diff: re(`is not an engine the proxy can confine|@@default_storage_engine may only name`), category: byDesign,
		reason: "engines: MERGE (MRG_MyISAM) tables and a default engine other than InnoDB, Aria or MyISAM read or " +
			"write tables the proxy cannot confine"},
	{diff: re(`^1146: Table '[^']*' doesn't exist|ER_NO_SUCH_TABLE`), category: byDesign, reason: connections},

	// Not yet.
	{stmt: re(`^\s*(check|analyze|optimize|repair)\s+(no_write_to_binlog\s+|local\s+)?tables?\b|` +
		`^\s*alter\s+table\s+\S+\s+(analyze|check|optimize|repair)\s+partition`), category: notYet, reason: maintenance},
	{stmt: re(`^\s*help\b`), category: notYet, reason: "HELP: HELP reads the server's help tables (mysql.help_*), " +
		"which this test first writes (forked into the sandbox); the server's HELP does not read the forks"},
	{stmt: re(`^\s*(create|drop)\s+(definer\s*=\s*\S+\s+)?(aggregate\s+)?function\b|^\s*create\s+or\s+replace\s+function\b`),
		diff: re(`stored-routine statement`), category: notYet, reason: storedFunction},

	{diff: re(`(PREPARE \.\.\. FROM @variable|EXECUTE IMMEDIATE of an expression).*\(in the body of |compound statement .*runs dynamic SQL`), category: byDesign,
		reason: dynamicBody},
	{diff: re(`PREPARE \.\.\. FROM @variable|EXECUTE IMMEDIATE of an expression|EXECUTE runs a statement prepared|` +
		`EXECUTE IMMEDIATE runs a statement the proxy`), category: notYet, reason: dynamic},
	{diff: re(`SHOW in a sandbox's procedure body`), category: notYet, reason: "procedure body: a procedure whose body " +
		"holds a SHOW the proxy answers itself for the client (SHOW TABLES, TABLE STATUS, TRIGGERS, CREATE VIEW, …) " +
		"is refused (bodyAllowed): in a body the server would answer it for the physical tables"},
	{diff: re(`is a SEQUENCE table`), category: notYet, reason: "Sequence engine: the Sequence engine's virtual tables " +
		"(seq_1_to_N) are taken for SEQUENCE objects, which the proxy will not fork; they read nothing but numbers"},
	{diff: re(`body of procedure .* names .information_schema.\.\S+, which the proxy cannot place`), category: notYet,
		reason: "procedure body: a routine body reading information_schema (SESSION_STATUS, CHARACTER_SETS) is refused " +
			"(the sandbox has no view of it for a body)"},
	{stmt: re(`ntile\(\(select`), category: notYet, reason: "parser gap: a window function's count as a subquery is " +
		"not read"},
	{diff: re(`blocks nest too deep|cannot read this cursor declaration`), category: notYet,
		reason: "procedure body: the proxy does not read this body (a trigger nested deeper than the server's parser " +
			"reads, a cursor parameter with a default value)"},
	{diff: re(`(?i)cannot parse the statement .*json_table.* of the procedure's body`), category: notYet,
		reason: "procedure body: JSON_TABLE is not read by the parser; a client's statement holding it is sent when " +
			"the proxy can tell what it names, but every statement of a body must be read to be rewritten"},
	{diff: re(`both a table and a table alias`), category: notYet, reason: "rewrite: a derived table aliased like a " +
		"table it reads (… FROM (SELECT t1.* FROM t1 …) t1) is refused: the column qualifier t1 could be either"},
	{diff: re(`common table expression .* has the name of a sandboxed table`), category: notYet, reason: "rewrite: a " +
		"CTE named like a sandboxed table it reads, with columns qualified by that name, is refused"},
	{diff: re("cannot locate every reference to `test`.`\\?+`"), category: notYet, reason: "rewrite: a table name in " +
		"a character set the proxy does not decode (binary, or a multi-byte one such as sjis or big5) is not located " +
		"in the text (single-byte ones such as koi8r and cp1251 are read decoded)"},
	{diff: re(`does not know how this statement uses the sandboxed table`), stmt: re(`ALTER TABLE \S+ ORDER BY`),
		category: notYet, reason: "parser gap: ALTER TABLE … ORDER BY is not read"},
	{diff: re(`INTERVAL DAY_SECOND`), category: notYet, reason: "parser gap: CAST(… AS INTERVAL DAY_SECOND(n)) is not read"},
	{diff: re(`(lead|lag|ntile)\(|near "-1\) over|near "\+ 3\) over`), category: notYet, reason: "parser gap: window " +
		"functions with expression arguments (lead(pk, -1), ntile(1 + 3)) are not read"},
	{diff: re(`near "row,`), category: notYet, reason: "parser gap: ROW as a column alias is not read"},
	{diff: re(`This branch is not implemented`), category: notYet, reason: "parser gap: a decimal literal longer than " +
		"the parser takes is not read"},
	{diff: re(`near "\(a\) AS a FROM t1`), category: notYet, reason: "parser gap: VALUE(a) in a view's SELECT is not read"},
	{stmt: re(`^\s*create\s+table\s+\w+\s*\(\s*select\b.*\)\s*(except|intersect|union)\s*\(\s*select`), category: notYet, reason: "parser gap: CREATE TABLE t " +
		"(SELECT …) EXCEPT / INTERSECT / UNION (SELECT …) is not read"},
	{diff: re(`NOT ATOMIC\) and it holds more than one statement`), category: notYet, reason: "anonymous block: " +
		"BEGIN NOT ATOMIC … END holding a statement the procedure body's reader does not read is not read"},
	{diff: re(`reads CREATE TRIGGER sent alone, not with other statements|cannot read where this CREATE TRIGGER ends`), category: notYet,
		reason: "trigger DDL: a CREATE TRIGGER with other statements in one input whose end the proxy cannot read is refused"},
	{stmt: re(`\$fields INTO OUTFILE`), category: byDesign, reason: "server files: LOAD DATA INFILE / SELECT … INTO " +
		"OUTFILE read or write files on the database server, outside any sandbox"},
	{stmt: re(`^\s*analyze\s+select .* into outfile`), category: byDesign, reason: "server files: LOAD DATA INFILE / " +
		"SELECT … INTO OUTFILE read or write files on the database server, outside any sandbox"},
}

// match gives the category and reason of a failure by the first rule
// that matches it; "unclassified" when none does.
func match(test string, f failure) (category, reason string) {
	for _, r := range rules {
		if r.test != "" && r.test != test {
			continue
		}
		if r.stmt != nil && !r.stmt.MatchString(f.statement) {
			continue
		}
		if r.diff != nil && !r.diff.MatchString(f.difference) {
			continue
		}
		return r.category, r.reason
	}
	return "unclassified", "no rule covers this failure (add one to integration/mtr/classify/rules.go)"
}
