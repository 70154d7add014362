package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// mtrLog is a sandbox run's mtr log: a refused statement (a), a failure on
// the answer (b, no mysqltest message), a pass, a message whose query
// spans lines and holds an empty line (g), and an exec that failed after
// the tool's own output (h).
const mtrLog = `Logging: mysql-test-run.pl
main.a                                   [ fail ]
        Test ended at 2024-05-01 10:00:00

CURRENT_TEST: main.a
mysqltest: At line 5: query 'SET GLOBAL x=1' failed: ER_OPTION_PREVENTS_STATEMENT (1290): sqlfork-proxy: SET GLOBAL x: the variable has no session scope, so it acts on the whole server (production and every sandbox); set it on production directly

The result from queries just before the failure was:
SET GLOBAL x=1;
main.b                                   [ fail ]
        Test ended at 2024-05-01 10:00:01
--- /usr/share/mysql/mysql-test/main/b.result
+++ /tmp/var/log/b.reject
main.c                                   [ pass ]   12
main.g                                   [ fail ]
mysqltest: At line 9: query 'select 'a

b' from t1' failed: ER_NO_SUCH_TABLE (1146): Table 'test.t1' doesn't exist
 - saving '/tmp/w/var/log/main.g/' to '/tmp/w/var/log/main.g/'
main.h                                   [ fail ]
mariadb-dump: Couldn't find table: "t1"
mysqltest: At line 22: exec of '/u/bin/mariadb-dump -X test t1' failed, error: 1536
Output from before failure:
main.i                                   [ skipped ]
`

// results writes a run's results under a temporary directory and a suite
// beside them; it returns both.
func results(t *testing.T, files map[string]string) (dir, suite string) {
	t.Helper()
	root := t.TempDir()
	dir, suite = filepath.Join(root, "results"), filepath.Join(root, "suite")
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, suite
}

// run is a complete run: a, b, e, g, h pass directly and not through the
// sandbox (e did not run there at all); c passes both ways; d fails both.
func run(t *testing.T) (dir, suite string) {
	return results(t, map[string]string{
		"results/direct.tsv":               "a\tpass\nb\tpass\nc\tpass\nd\tfail\ne\tpass\ng\tpass\nh\tpass\n\nmalformed line\n",
		"results/sandbox.tsv":              "a\tfail\nb\tfail\nc\tpass\nd\tfail\ng\tfail\nh\tfail\n",
		"results/sandbox.mtr.log":          mtrLog,
		"results/sandbox.rejects/b.reject": "select 1;\n1\n1\nselect 2\nfrom dual;\n2\n3\n",
		"suite/main/b.result":              "select 1;\n1\n1\nselect 2\nfrom dual;\n2\n2\n",
	})
}

// TestClassify: every test lost through the sandbox gets a row, in the
// order of the names, with the first failing statement and the error or
// the first difference, classified by the rules.
func TestClassify(t *testing.T) {
	dir, suite := run(t)
	rows, err := classify(dir, suite)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{Test: "a", Category: byDesign, Statement: "SET GLOBAL x=1", Difference: "1290: SET GLOBAL x: the variable has no session scope, so it acts on the whole server (production and every sandbox); set it on production directly"},
		{Test: "b", Category: "unclassified", Statement: "select 2 from dual;", Difference: "-2 +3"},
		{Test: "e", Category: "unclassified", Difference: "not run"},
		{Test: "g", Category: byDesign, Statement: "select 'a b' from t1", Difference: "1146: Table 'test.t1' doesn't exist"},
		{Test: "h", Category: "unclassified", Statement: "mariadb-dump -X test t1",
			Difference: `mariadb-dump: Couldn't find table: "t1" | exec of '/u/bin/mariadb-dump -X test t1' failed, error: 1536`},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v, want %d", rows, len(want))
	}
	for i, w := range want {
		g := rows[i]
		if g.Test != w.Test || g.Statement != w.Statement || g.Difference != w.Difference || g.Category != w.Category {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
		if g.Reason == "" {
			t.Errorf("row %d has no reason: %+v", i, g)
		}
	}
	// The list round-trips: what it prints is what -check accepts.
	var list bytes.Buffer
	if err := write(&list, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(list.String(), "\n"), "\n")
	if len(lines) != 1+len(want) || !strings.HasPrefix(lines[0], "test\tcategory\t") ||
		lines[1] != "a\tby-design\tSET GLOBAL x=1\t1290: SET GLOBAL x: the variable has no session scope, so it acts on the whole server (production and every sandbox); set it on production directly\t"+rows[0].Reason {
		t.Errorf("list:\n%s", list.String())
	}
	if d := compare(list.String(), list.String()); len(d) != 0 {
		t.Errorf("a list differs from itself: %q", d)
	}
	var sum bytes.Buffer
	summarize(&sum, rows)
	cats := map[string]int{}
	for _, r := range rows {
		cats[r.Category]++
	}
	first := strings.SplitN(sum.String(), "\n", 2)[0]
	if !strings.HasPrefix(first, "lost through the sandbox: 5; ") || !strings.Contains(first, "by-design "+strconv.Itoa(cats[byDesign])) {
		t.Errorf("summary %q (categories %v)", sum.String(), cats)
	}
	if !strings.Contains(sum.String(), "\n  by-design    1  SET GLOBAL\n") {
		t.Errorf("summary lacks the reason group of a: %q", sum.String())
	}
}

// TestClassifyErrors: a run missing a file, or a lost test with neither a
// message nor both outputs to compare, is an error, not a guess.
func TestClassifyErrors(t *testing.T) {
	full := map[string]string{
		"results/direct.tsv":               "b\tpass\n",
		"results/sandbox.tsv":              "b\tfail\n",
		"results/sandbox.mtr.log":          "",
		"results/sandbox.rejects/b.reject": "x\n",
		"suite/main/b.result":              "y\n",
	}
	for _, tc := range []struct {
		name, drop, set, body, msg string
	}{
		{name: "no direct results", drop: "results/direct.tsv", msg: "read results"},
		{name: "no sandbox results", drop: "results/sandbox.tsv", msg: "read results"},
		{name: "no mtr log", drop: "results/sandbox.mtr.log", msg: "read mtr log"},
		{name: "no expected output", drop: "suite/main/b.result", msg: "test b: read result"},
		{name: "no reject", drop: "results/sandbox.rejects/b.reject", msg: "test b: read reject"},
		{name: "outputs the same", set: "suite/main/b.result", body: "x\n", msg: "test b: reject and result do not differ"},
		{name: "line past the scanner's limit", set: "results/sandbox.mtr.log", body: strings.Repeat("x", 17<<20), msg: "read mtr log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range full {
				if k != tc.drop {
					files[k] = v
				}
			}
			if tc.set != "" {
				files[tc.set] = tc.body
			}
			dir, suite := results(t, files)
			if _, err := classify(dir, suite); err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("classify = %v, want an error saying %q", err, tc.msg)
			}
		})
	}
}

// TestFirstDifference: the first line that differs, with the statement
// echoed before it; an output cut short differs at its end.
func TestFirstDifference(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
		f               failure
	}{
		{name: "a row", got: "select 1;\n1\n2\n", want: "select 1;\n1\n1\n", f: failure{"select 1;", "-1 +2"}},
		{name: "cut short", got: "select 1;\n1\n", want: "select 1;\n1\n1\n", f: failure{"select 1;", "-1 +"}},
		{name: "longer", got: "a\n", want: "", f: failure{"", "- +a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rej, res := filepath.Join(dir, "t.reject"), filepath.Join(dir, "t.result")
			if err := os.WriteFile(rej, []byte(tc.got), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(res, []byte(tc.want), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := firstDifference(rej, res)
			if err != nil || f != tc.f {
				t.Errorf("firstDifference = %+v, %v; want %+v", f, err, tc.f)
			}
		})
	}
}

// TestMessageEnds: a query's message ends at the verdict, not at an empty
// line inside the query's text; a message without a query ends at once.
func TestMessageEnds(t *testing.T) {
	for _, tc := range []struct {
		msg  []string
		done bool
	}{
		{[]string{"query 'select 1"}, false},
		{[]string{"query 'select 1", "' failed: E (1): x"}, true},
		{[]string{"query 'select 1' succeeded - should have failed"}, true},
		{[]string{"command \"perl\" failed with error 2"}, true},
		{[]string{"At line 3: exec of 'x' failed"}, true},
	} {
		if got := complete(tc.msg); got != tc.done {
			t.Errorf("complete(%q) = %v, want %v", tc.msg, got, tc.done)
		}
	}
	if f := parseMessage(nil, []string{`command "perl" failed with error 255. my_errno=175`}); f.statement != "perl" ||
		f.difference != `command "perl" failed with error 255. my_errno=175` {
		t.Errorf("a failed command: %+v", f)
	}
	if f := parseMessage([]string{"x"}, nil); f != (failure{}) {
		t.Errorf("no message: %+v", f)
	}
}

// TestSortedKeys: keys in order.
func TestSortedKeys(t *testing.T) {
	if got := sortedKeys(map[string]int{"b": 1, "a": 2, "c": 0}); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("sortedKeys = %q", got)
	}
}

// TestMain runs the command in-process for its outcomes that return, and
// in a child process for those that exit.
func TestMainCommand(t *testing.T) {
	if mode := os.Getenv("CLASSIFY_TEST_MAIN"); mode != "" {
		// The child: run main with the arguments after "--".
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"classify"}, os.Args[i+1:]...)
			}
		}
		main()
		os.Exit(0)
	}
	dir, suite := run(t)
	list := filepath.Join(t.TempDir(), "list.tsv")
	out, code := runMain(t, "-results", dir, "-mtr", suite)
	if code != 0 || !strings.HasPrefix(out.stdout, "test\tcategory\t") || strings.Count(out.stdout, "\n") != 6 ||
		!strings.Contains(out.stderr, "lost through the sandbox: 5") {
		t.Fatalf("list: exit %d, stdout %q, stderr %q", code, out.stdout, out.stderr)
	}
	if err := os.WriteFile(list, []byte(out.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runMain(t, "-results", dir, "-mtr", suite, "-check", list); code != 0 || !strings.Contains(out.stderr, "matches the run") {
		t.Errorf("check of the same list: exit %d, stderr %q", code, out.stderr)
	}
	changed := strings.Replace(out.stdout, "a\tby-design", "a\tnot-yet", 1)
	if err := os.WriteFile(list, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runMain(t, "-results", dir, "-mtr", suite, "-check", list); code != 1 || !strings.Contains(out.stderr, "changed:") {
		t.Errorf("check of a changed list: exit %d, stderr %q", code, out.stderr)
	}
	if out, code := runMain(t, "-results", dir, "-mtr", suite, "-check", list+".missing"); code != 2 || !strings.Contains(out.stderr, "classify:") {
		t.Errorf("check of a missing list: exit %d, stderr %q", code, out.stderr)
	}
	if out, code := runMain(t, "-results", filepath.Join(dir, "nope"), "-mtr", suite); code != 2 || !strings.Contains(out.stderr, "read results") {
		t.Errorf("missing results: exit %d, stderr %q", code, out.stderr)
	}
}

type output struct{ stdout, stderr string }

// runMain runs the command with args in a child process (this test
// binary) and returns its output and exit code.
func runMain(t *testing.T, args ...string) (output, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestMainCommand$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "CLASSIFY_TEST_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return output{stdout.String(), stderr.String()}, code
}

// mainHere runs main in this process with args, for the outcomes that
// return (those that exit need runMain), and returns what it wrote.
func mainHere(t *testing.T, args ...string) output {
	t.Helper()
	dir := t.TempDir()
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldArgs, oldFlags, oldOut, oldErr := os.Args, flag.CommandLine, os.Stdout, os.Stderr
	defer func() { os.Args, flag.CommandLine, os.Stdout, os.Stderr = oldArgs, oldFlags, oldOut, oldErr }()
	os.Args = append([]string{"classify"}, args...)
	flag.CommandLine = flag.NewFlagSet("classify", flag.ContinueOnError)
	os.Stdout, os.Stderr = stdout, stderr
	main()
	_ = stdout.Close()
	_ = stderr.Close()
	o, _ := os.ReadFile(stdout.Name())
	e, _ := os.ReadFile(stderr.Name())
	return output{string(o), string(e)}
}

// TestMainInProcess: the list, and a check of it that matches.
func TestMainInProcess(t *testing.T) {
	dir, suite := run(t)
	out := mainHere(t, "-results", dir, "-mtr", suite)
	if strings.Count(out.stdout, "\n") != 6 || !strings.Contains(out.stderr, "lost through the sandbox: 5") {
		t.Fatalf("list: %+v", out)
	}
	list := filepath.Join(t.TempDir(), "list.tsv")
	if err := os.WriteFile(list, []byte(out.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mainHere(t, "-results", dir, "-mtr", suite, "-check", list); out.stdout != "" || !strings.Contains(out.stderr, "matches the run") {
		t.Errorf("check: %+v", out)
	}
}
