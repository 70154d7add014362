// Command grammarcov measures how much of MariaDB's grammar the rewrite
// engine analyses: it extracts the SQL statements of MariaDB's main
// regression suite (mysql-test/main/*.test of the mariadb-test package),
// keeps those a throwaway mariadbd accepts syntactically (PREPARE s FROM
// '<statement>' answers anything but a syntax error), and runs each through
// rewrite.Engine with a sandbox-like resolver that forks every table.
//
//	go run ./integration/grammarcov [-cache /tmp/grammarcov.json] [-top 30] [-dump substring]
//
// A statement counts as analysed when the engine parses it and locates every
// table reference: the rewrite succeeds, or is refused by a deliberate rule
// about a statement it fully read (files on the server, MERGE tables, …),
// which are counted apart. See docs/SANDBOXES.md.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

func main() {
	dir := flag.String("tests", "/usr/share/mysql/mysql-test/main", "directory of mysqltest .test files")
	cache := flag.String("cache", filepath.Join(os.TempDir(), "grammarcov.json"), "file keeping the server's verdicts (reused when present)")
	top := flag.Int("top", 30, "refusal reasons to print")
	dump := flag.String("dump", "", "print the statements refused with a reason containing this text")
	one := flag.String("stmt", "", "analyse this one statement and print what the engine makes of it")
	flag.Parse()
	if *one != "" {
		e := rewrite.NewEngine(0)
		a := e.Analyze(*one, opts)
		for _, st := range a.Statements {
			fmt.Printf("%+v\n", st)
		}
		res, err := a.Rewrite(forkAll{names: map[string]bool{"t1": true, "t2": true, "t3": true, "t": true}})
		if err != nil {
			fmt.Println("refused:", err)
			return
		}
		fmt.Println(res.SQL)
		return
	}
	if err := run(*dir, *cache, *top, *dump); err != nil {
		fmt.Fprintln(os.Stderr, "grammarcov:", err)
		os.Exit(1)
	}
}

// verdicts maps a statement to the server's answer to PREPARE (0: prepared).
type verdicts map[string]uint16

func run(dir, cachePath string, top int, dump string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.test"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	seen := map[string]bool{}
	var stmts []string
	nonUTF8 := 0
	for _, f := range files {
		ss, err := extractFile(f)
		if err != nil {
			return err
		}
		for _, s := range ss {
			if seen[s] {
				continue
			}
			seen[s] = true
			if !utf8.ValidString(s) {
				nonUTF8++
				continue
			}
			stmts = append(stmts, s)
		}
	}
	v, err := serverVerdicts(stmts, cachePath)
	if err != nil {
		return err
	}
	var accepted []string
	rejected := 0
	codes := map[uint16]int{}
	for _, s := range stmts {
		c := v[s]
		codes[c]++
		if syntaxError(c) {
			rejected++
			continue
		}
		accepted = append(accepted, s)
	}
	report(files, len(seen), nonUTF8, rejected, codes, accepted, top, dump)
	return nil
}

// syntaxError reports the server's answers that mean its grammar rejects
// the text.
func syntaxError(code uint16) bool {
	return code == 1064 || code == 1149
}

// serverVerdicts asks a throwaway mariadbd to PREPARE every statement,
// or reads the answers kept in cachePath.
func serverVerdicts(stmts []string, cachePath string) (verdicts, error) {
	v := verdicts{}
	if b, err := os.ReadFile(cachePath); err == nil {
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("reading %s: %w", cachePath, err)
		}
	}
	var todo []string
	for _, s := range stmts {
		if _, ok := v[s]; !ok {
			todo = append(todo, s)
		}
	}
	if len(todo) == 0 {
		return v, nil
	}
	fmt.Fprintf(os.Stderr, "asking the server about %d statements\n", len(todo))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := testdb.Start(ctx, testdb.Options{})
	if err != nil {
		return nil, fmt.Errorf("starting mariadbd: %w", err)
	}
	defer srv.Stop()
	db, err := sql.Open("mysql", srv.DSN("")+"?charset=utf8mb4")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE DATABASE test"); err != nil {
		return nil, fmt.Errorf("creating database test: %w", err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "USE test"); err != nil {
		return nil, err
	}
	for _, s := range todo {
		code, err := prepare(conn, s)
		if err != nil {
			return nil, err
		}
		v[s] = code
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(cachePath, b, 0o644); err != nil {
		return nil, err
	}
	return v, nil
}

// prepare asks the server to PREPARE s and returns its error code (0 when
// it prepared it).
func prepare(conn *sql.Conn, s string) (uint16, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := conn.ExecContext(ctx, "PREPARE grammarcov_s FROM "+quote.String(s))
	if err == nil {
		return 0, nil
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number, nil
	}
	return 0, fmt.Errorf("PREPARE %.80q: %w", s, err)
}

// forkAll is a sandbox that has forked every table the suite writes (a name
// it writes anywhere is mapped in any database but the server's virtual
// schemas), and
// places procedures in the sandbox too. Names the suite never uses as a
// table's (index, partition, user names) are not mapped, as in a real
// sandbox, where only tables are.
type forkAll struct{ names map[string]bool }

const sandboxPrefix = "_sqlfork_0badf00d_"

func (f forkAll) Resolve(t rewrite.Table, _ bool) (rewrite.Table, bool, error) {
	switch strings.ToLower(t.DB) {
	case "information_schema", "performance_schema":
		return t, false, nil
	}
	if strings.HasPrefix(t.DB, sandboxPrefix) || !f.names[strings.ToLower(t.Name)] {
		return t, false, nil
	}
	return rewrite.Table{DB: sandboxPrefix + t.DB, Name: t.Name}, true, nil
}

func (forkAll) ResolveRoutine(st *rewrite.Statement) (string, error) {
	return sandboxPrefix + st.DB, nil
}

var opts = rewrite.Options{DB: "test", Server: rewrite.Server{Flavor: rewrite.MariaDB, Version: 101111}}

// tableNames are the names of the tables the suite's statements write
// (outside the server's own schemas), as the engine reads them where it
// parses them: the tables a sandbox running the suite forks.
func tableNames(e *rewrite.Engine, stmts []string) map[string]bool {
	names := map[string]bool{}
	for _, s := range stmts {
		for _, st := range e.Analyze(s, opts).Statements {
			if st.Class == rewrite.ClassUnparseable {
				continue
			}
			for _, t := range st.Writes {
				switch strings.ToLower(t.DB) {
				case "information_schema", "performance_schema", "mysql", "sys":
					continue
				}
				names[strings.ToLower(t.Name)] = true
			}
		}
	}
	return names
}

// outcome is how the engine treated one statement.
type outcome struct {
	analysed bool   // parsed and every reference located
	reason   string // the refusal's message, grouped ("" when rewritten)
	msg      string // the refusal's message
}

func analyse(e *rewrite.Engine, fork forkAll, s string) outcome {
	a := e.Analyze(s, opts)
	_, err := a.Rewrite(fork)
	if err == nil {
		for _, st := range a.Statements {
			if st.Class == rewrite.ClassUnparseable && st.Kind != rewrite.KindSyntaxError {
				return outcome{reason: "the parser rejects it; it passes unchanged as it names no sandboxed table"}
			}
		}
		return outcome{analysed: true}
	}
	msg := err.Error()
	var r *rewrite.Refusal
	if errors.As(err, &r) {
		msg = r.Message
	}
	return outcome{analysed: deliberate(msg), reason: group(msg), msg: msg}
}

// deliberate reports refusals of statements the engine read completely,
// which a sandbox refuses by rule, not for want of reading them.
func deliberate(msg string) bool {
	for _, s := range []string{
		"outside any sandbox", "outside the sandbox", "UNION=(…) makes the table", "confine to the sandbox (MERGE",
		"may only name an engine", "changes how the server reads statements",
		"holds more than one statement; prepare them one at a time",
		// Statements whose effects happen where the proxy cannot see.
		"acts on a stored function, procedure, trigger, event or package", "acts on a trigger, whose statements", "is dynamic SQL the proxy cannot see",
		"EXECUTE runs a statement prepared with SQL PREPARE", "CALL runs a stored procedure whose statements the proxy cannot see", "whose statements the proxy cannot see, so",
		"the proxy must see sent itself", "SERVER defines a server other tables reach", "shows what the whole server holds", "writes a file on the database server", "privileges are the server's, not the sandbox's",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

var (
	quoted    = regexp.MustCompile("`[^`]*`(\\.`[^`]*`)?")
	nearText  = regexp.MustCompile(`near "[^"]*"`)
	lineCol   = regexp.MustCompile(`line \d+ column \d+`)
	parseNoun = regexp.MustCompile(`\(line .*?\)`)
)

// group turns a refusal message into its reason: names and positions
// blanked.
func group(msg string) string {
	msg = strings.TrimPrefix(msg, "sqlfork-proxy: ")
	msg = nearText.ReplaceAllString(msg, `near "…"`)
	msg = lineCol.ReplaceAllString(msg, "line L column C")
	msg = parseNoun.ReplaceAllString(msg, "(…)")
	return quoted.ReplaceAllString(msg, "`…`")
}

func report(files []string, distinct, nonUTF8, rejected int, codes map[uint16]int, accepted []string, top int, dump string) {
	e := rewrite.NewEngine(0)
	r := forkAll{names: tableNames(e, accepted)}
	reasons := map[string][]string{}
	msgs := map[string]string{}
	ok, deliberateN := 0, 0
	for _, s := range accepted {
		o := analyse(e, r, s)
		switch {
		case o.reason == "":
			ok++
		case o.analysed:
			deliberateN++
			reasons["[by rule] "+o.reason] = append(reasons["[by rule] "+o.reason], s)
			msgs[s] = o.msg
		default:
			reasons[o.reason] = append(reasons[o.reason], s)
			msgs[s] = o.msg
		}
	}
	n := len(accepted)
	analysed := ok + deliberateN
	fmt.Printf("test files: %d; distinct statements: %d (not UTF-8: %d); server syntax errors: %d; accepted: %d\n",
		len(files), distinct, nonUTF8, rejected, n)
	fmt.Printf("analysed: %d (%.2f%%): rewritten %d, refused by rule %d; not analysed: %d (%.2f%%)\n",
		analysed, pct(analysed, n), ok, deliberateN, n-analysed, pct(n-analysed, n))
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(reasons[keys[i]]) != len(reasons[keys[j]]) {
			return len(reasons[keys[i]]) > len(reasons[keys[j]])
		}
		return keys[i] < keys[j]
	})
	for i, k := range keys {
		if i >= top {
			break
		}
		ex := strings.Join(strings.Fields(reasons[k][0]), " ")
		if len(ex) > 100 {
			ex = ex[:100] + "…"
		}
		fmt.Printf("%6d  %s\n        e.g. %s\n", len(reasons[k]), k, ex)
	}
	if dump != "" {
		for _, k := range keys {
			if strings.Contains(k, dump) {
				for _, s := range reasons[k] {
					fmt.Printf("%s\t%s\n", strings.Join(strings.Fields(s), " "), msgs[s])
				}
			}
		}
	}
	_ = codes
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
