// Command classify lists why each MariaDB regression test that passes
// directly does not pass through a sandbox, from the results of a run of
// the workplace's mtr runner (mtr-extern.sh with MTR_EXTERN_MODES="direct
// sandbox"): for every such test, the first statement that fails, the
// proxy's error (or the first difference of the answer), and a category —
// by-design (a refusal the sandbox makes on purpose) or not-yet (what the
// proxy does not do yet) — with the reason, from the rules in rules.go.
//
//	go run ./integration/mtr/classify -results /tmp/mtrp/run/results > integration/mtr/sandbox-failures.tsv
//	go run ./integration/mtr/classify -results /tmp/mtrp/run/results -check integration/mtr/sandbox-failures.tsv
//
// With -check it compares what it finds with the list and exits 1 when they
// differ (a test lost or gained, or failing otherwise: another statement,
// category or reason; the error or difference itself is not compared, as
// a test whose rows come in no set order differs at another row from run
// to run); a test no rule
// covers is listed as "unclassified" and also fails the check. It prints
// the counts per category and reason group on stderr.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

func main() {
	results := flag.String("results", "/tmp/mtrp/run/results", "the runner's results directory (direct.tsv, sandbox.tsv, sandbox.mtr.log, sandbox.rejects)")
	suite := flag.String("mtr", "/usr/share/mysql/mysql-test", "mysql-test directory holding main/<test>.result")
	check := flag.String("check", "", "compare with this list instead of printing one")
	flag.Parse()
	rows, err := classify(*results, *suite)
	if err != nil {
		fmt.Fprintln(os.Stderr, "classify:", err)
		os.Exit(2)
	}
	summarize(os.Stderr, rows)
	if *check == "" {
		if err := write(os.Stdout, rows); err != nil {
			fmt.Fprintln(os.Stderr, "classify:", err)
			os.Exit(2)
		}
		return
	}
	want, err := os.ReadFile(*check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "classify:", err)
		os.Exit(2)
	}
	var got strings.Builder
	if err := write(&got, rows); err != nil {
		fmt.Fprintln(os.Stderr, "classify:", err)
		os.Exit(2)
	}
	if d := compare(string(want), got.String()); len(d) > 0 {
		fmt.Fprintf(os.Stderr, "classify: %s differs from the run:\n%s", *check, strings.Join(d, ""))
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "classify: %s matches the run\n", *check)
}

// Row is one test that passes directly and fails through a sandbox.
type Row struct {
	Test, Category, Statement, Difference, Reason string
}

// failure is what a failed test's output says first: the statement that
// failed (or the one before the first difference) and the error or the
// difference.
type failure struct {
	statement, difference string
}

// classify reads the run's results under dir and returns a row for every
// test lost through the sandbox, in the order of the test names.
func classify(dir, suite string) ([]Row, error) {
	direct, err := readTSV(filepath.Join(dir, "direct.tsv"))
	if err != nil {
		return nil, err
	}
	sandbox, err := readTSV(filepath.Join(dir, "sandbox.tsv"))
	if err != nil {
		return nil, err
	}
	logs, err := readMTRLog(filepath.Join(dir, "sandbox.mtr.log"))
	if err != nil {
		return nil, err
	}
	var rows []Row
	for test, res := range direct {
		if res != "pass" || sandbox[test] == "pass" {
			continue
		}
		f, ok := logs[test]
		if !ok || f.difference == "" {
			f, err = firstDifference(filepath.Join(dir, "sandbox.rejects", test+".reject"), resultFile(suite, test))
			if err != nil && sandbox[test] == "" {
				f = failure{difference: "not run"}
			} else if err != nil {
				return nil, fmt.Errorf("test %s: %w", test, err)
			}
		}
		cat, reason := match(test, f)
		rows = append(rows, Row{Test: test, Category: cat, Statement: shorten(f.statement, 110),
			Difference: shorten(f.difference, 180), Reason: reason})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Test < rows[j].Test })
	return rows, nil
}

// readTSV reads a runner TSV: test name → result.
func readTSV(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Split(l, "\t"); len(f) >= 2 {
			out[f[0]] = f[1]
		}
	}
	return out, nil
}

// testLine is the line mtr starts a test's report with.
var testLine = regexp.MustCompile(`^main\.(\S+)\s+\[ (\w+) +\]`)

// readMTRLog reads the failures mtr reports in its log: for each failed
// test the statement and error of mysqltest's message (empty when the
// test failed on a difference of its answer).
func readMTRLog(path string) (map[string]failure, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read mtr log: %w", err)
	}
	defer fh.Close()
	out := map[string]failure{}
	var cur string
	var before, msg []string
	inMsg := false
	flush := func() {
		if cur != "" {
			out[cur] = parseMessage(before, msg)
		}
		cur, before, msg, inMsg = "", nil, nil, false
	}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		l := sc.Text()
		if m := testLine.FindStringSubmatch(l); m != nil {
			flush()
			if m[2] == "fail" {
				cur = m[1]
			}
			continue
		}
		switch {
		case cur == "":
		case strings.HasPrefix(l, "mysqltest: ") && msg == nil:
			msg, inMsg = []string{strings.TrimPrefix(l, "mysqltest: ")}, true
		case inMsg && (l == "The result from queries just before the failure was:" || l == "Output from before failure:" ||
			strings.HasPrefix(l, "More results from queries") || strings.HasPrefix(l, " - ") ||
			strings.TrimSpace(l) == "" && complete(msg)):
			inMsg = false
		case inMsg:
			msg = append(msg, l)
		case msg == nil && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "        Test ended"):
			before = append(before, l)
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mtr log: %w", err)
	}
	return out, nil
}

var (
	// includedFrom is the prefix of a message about an included file.
	includedFrom = regexp.MustCompile(`^In included file "[^"]*":\s*(included from \S+ at line \d+:\s*)*`)
	atLine       = regexp.MustCompile(`^At line \d+: `)
	// verdict ends mysqltest's message on a query (its text may span
	// lines).
	verdict = regexp.MustCompile(`' (failed|succeeded)|^(command|exec of|At line \d+: (command|exec of)) `)
	// queryFailed splits "query 'Q' failed…" / "query 'Q' succeeded…" at
	// the last quote followed by the verdict.
	queryFailed = regexp.MustCompile(`(?s)^query '(.*)' ((?:failed|succeeded).*)$`)
	errorName   = regexp.MustCompile(`^failed: \w+ \((\d+)\): `)
	// command is a mysqltest command or program that failed.
	command = regexp.MustCompile(`^(?:command "([^"]+)"|exec of '\S*/([^/' ]+ [^']*)')`)
)

// complete reports whether the lines of mysqltest's message so far end
// it: past the query, whose text may hold empty lines.
func complete(msg []string) bool {
	text := strings.Join(msg, " ")
	return !strings.Contains(text, "query '") || verdict.MatchString(text)
}

// parseMessage takes mysqltest's message apart (lines before it are the
// tool's own, kept for an exec that failed).
func parseMessage(before, msg []string) failure {
	if msg == nil {
		return failure{}
	}
	text := strings.TrimSpace(strings.Join(msg, " "))
	text = includedFrom.ReplaceAllString(text, "")
	text = atLine.ReplaceAllString(text, "")
	m := queryFailed.FindStringSubmatch(text)
	if m == nil {
		stmt := ""
		if c := command.FindStringSubmatch(text); c != nil {
			stmt = c[1] + c[2]
		}
		if len(before) > 0 {
			text = strings.Join(before, " ") + " | " + text
		}
		return failure{statement: stmt, difference: text}
	}
	diff := m[2]
	if e := errorName.FindStringSubmatch(diff); e != nil {
		diff = e[1] + ": " + diff[len(e[0]):]
	}
	return failure{statement: m[1], difference: strings.TrimPrefix(diff, "")}
}

// resultFile is where mtr keeps a test's expected output.
func resultFile(suite, test string) string {
	return filepath.Join(suite, "main", test+".result")
}

// firstDifference compares a test's rejected output with its expected
// output: the statement before the first line that differs, and the two
// lines.
func firstDifference(reject, result string) (failure, error) {
	got, err := os.ReadFile(reject)
	if err != nil {
		return failure{}, fmt.Errorf("read reject: %w", err)
	}
	want, err := os.ReadFile(result)
	if err != nil {
		return failure{}, fmt.Errorf("read result: %w", err)
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	if i == len(g) && i == len(w) {
		return failure{}, errors.New("reject and result do not differ")
	}
	line := func(l []string) string {
		if i < len(l) {
			return l[i]
		}
		return "(end)"
	}
	return failure{statement: statementBefore(w, i), difference: "-" + line(w) + " +" + line(g)}, nil
}

// statementStart is how a line starting a statement begins.
var statementStart = regexp.MustCompile(`(?i)^(select|insert|update|delete|replace|create|drop|alter|explain|analyze|` +
	`set|show|with|call|prepare|execute|deallocate|begin|commit|rollback|lock|unlock|load|truncate|rename|values|table|use|` +
	`grant|revoke|flush|check|repair|optimize|handler|do|help|kill|xa|start|savepoint|release|describe|desc|get|signal|resignal)\b`)

// statementBefore is the statement echoed last before lines[i]: from the
// last line ending with ';' back to the first line after the one before
// that starts a statement (the lines between hold the answer of the one
// before: rows hold tabs, headers are one word).
func statementBefore(lines []string, i int) string {
	end := -1
	for j := min(i-1, len(lines)-1); j >= 0; j-- {
		if strings.HasSuffix(strings.TrimSpace(lines[j]), ";") {
			end = j
			break
		}
	}
	if end < 0 {
		return ""
	}
	start := end
	for j := end; j >= 0 && end-j < 40; j-- {
		l := strings.TrimSpace(lines[j])
		if j < end && strings.HasSuffix(l, ";") {
			break
		}
		if statementStart.MatchString(l) && !strings.Contains(lines[j], "\t") && strings.Contains(l, " ") {
			start = j
		}
	}
	return strings.Join(lines[start:end+1], " ")
}

// refusedTail ends every refusal of what changes the server outside any
// table.
const refusedTail = ", which a sandbox cannot contain; it is refused in a sandbox (run it on a direct connection or SANDBOX DETACH in explicit mode)"

var (
	// sandboxName is a sandbox's physical database, which differs per run.
	sandboxName = regexp.MustCompile(`_sqlfork_[0-9a-f]+_`)
	// workPath is a path under the runner's work directory.
	workPath = regexp.MustCompile(`/\S*/(var|run)/`)
)

// shorten makes s one line of at most n characters (the middle cut out),
// sandbox names made the same in every run.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(escapeInvalid(s)), " ")
	s = strings.ReplaceAll(s, "sqlfork-proxy: ", "")
	s = strings.ReplaceAll(s, refusedTail, "")
	s = sandboxName.ReplaceAllString(s, "_sqlfork_X_")
	s = workPath.ReplaceAllString(s, "$$WORK/$1/")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := n * 2 / 3
	return string(r[:head]) + " … " + string(r[len(r)-(n-head-3):])
}

// escapeInvalid writes the bytes of s that are not UTF-8 (a test's
// koi8r or cp1251 names) as \xNN.
func escapeInvalid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, "\\x%02x", s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// write prints rows as the list: a header, then one line per test.
func write(w io.Writer, rows []Row) error {
	if _, err := fmt.Fprintln(w, "test\tcategory\tfirst failing statement\tproxy's error or difference\treason"); err != nil {
		return fmt.Errorf("write list: %w", err)
	}
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Test, r.Category, r.Statement, r.Difference, r.Reason); err != nil {
			return fmt.Errorf("write list: %w", err)
		}
	}
	return nil
}

// compare lists the lines of want and got that differ, by test, in all
// but the error or difference (a test whose rows come in no set order
// differs first at another row from run to run).
func compare(want, got string) []string {
	index := func(s string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			m[strings.SplitN(l, "\t", 2)[0]] = l
		}
		return m
	}
	key := func(l string) string {
		f := strings.Split(l, "\t")
		if len(f) == 5 {
			f[3] = ""
		}
		return strings.Join(f, "\t")
	}
	w, g := index(want), index(got)
	var out []string
	for t, l := range w {
		if gl, ok := g[t]; !ok {
			out = append(out, fmt.Sprintf("  no longer lost: %s\n", l))
		} else if key(gl) != key(l) {
			out = append(out, fmt.Sprintf("  changed:\n    list: %s\n    run:  %s\n", l, gl))
		}
	}
	for t, l := range g {
		if _, ok := w[t]; !ok {
			out = append(out, fmt.Sprintf("  newly lost: %s\n", l))
		}
	}
	sort.Strings(out)
	return out
}

// summarize prints the counts per category and per reason group (the
// reason's words before its colon).
func summarize(w io.Writer, rows []Row) {
	cats, groups := map[string]int{}, map[string]int{}
	for _, r := range rows {
		cats[r.Category]++
		g, _, _ := strings.Cut(r.Reason, ":")
		groups[r.Category+"\t"+g]++
	}
	fmt.Fprintf(w, "lost through the sandbox: %d", len(rows))
	for _, c := range sortedKeys(cats) {
		fmt.Fprintf(w, "; %s %d", c, cats[c])
	}
	fmt.Fprintln(w)
	for _, g := range sortedKeys(groups) {
		c, name, _ := strings.Cut(g, "\t")
		fmt.Fprintf(w, "  %-10s %3d  %s\n", c, groups[g], name)
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]int) []string {
	return slices.Sorted(maps.Keys(m))
}
