package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// TestColorChoice: --color always and never decide; auto colours a
// terminal (a character device) only, and not with NO_COLOR set (not
// empty) or TERM dumb.
func TestColorChoice(t *testing.T) {
	tty, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0) // a character device, as a terminal is
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var buf bytes.Buffer
	for _, tc := range []struct {
		name string
		mode string
		env  map[string]string
		w    any
		want bool
	}{
		{"auto on a terminal", colorAuto, nil, tty, true},
		{"auto into a file", colorAuto, nil, file, false},
		{"auto into a buffer", colorAuto, nil, &buf, false},
		{"auto with NO_COLOR", colorAuto, map[string]string{"NO_COLOR": "1"}, tty, false},
		{"auto with NO_COLOR empty", colorAuto, map[string]string{"NO_COLOR": ""}, tty, true},
		{"auto on a dumb terminal", colorAuto, map[string]string{"TERM": "dumb"}, tty, false},
		{"always into a file", colorAlways, nil, file, true},
		{"always with NO_COLOR", colorAlways, map[string]string{"NO_COLOR": "1"}, &buf, true},
		{"never on a terminal", colorNever, nil, tty, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &colorChoice{mode: tc.mode, lookupEnv: testEnv(tc.env, nil, nil).lookupEnv}
			w, _ := tc.w.(interface{ Write([]byte) (int, error) })
			if got := c.painter(w).on; got != tc.want {
				t.Errorf("colour %v, want %v", got, tc.want)
			}
		})
	}
	if err := (&colorChoice{}).Set("sometimes"); err == nil || err.Error() != `"sometimes" is not auto, always or never` {
		t.Errorf("Set(sometimes) = %v", err)
	}
}

// TestTable: a table lays out as text/tabwriter does (padding 2, spaces),
// and the same with its cells painted, measured without the colours.
func TestTable(t *testing.T) {
	on := painter{on: true}
	for _, text := range []string{
		"",
		"a\tbb\tccc\nxxxx\ty\tz\n",
		"name:\tbox\nconnections:\t1\n\nTABLE\tSTATE\tROWS\tSIZE\napp.users\tfork\t3\t16 KiB\n",
		"a\tb\nc\n\td\te\tf\n",
		"trailing\t\nx\ty\t\n",
		"→ é\tπ\nab\tc\n",
		"no newline\tat the end",
	} {
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
		_, _ = tw.Write([]byte(text))
		_ = tw.Flush()
		var got bytes.Buffer
		tb := newTable(&got)
		_, _ = tb.Write([]byte(text))
		if err := tb.Flush(); err != nil || got.String() != want.String() {
			t.Errorf("table of %q:\n%q\ntabwriter:\n%q", text, got.String(), want.String())
		}
		// Painted: every cell in colour, the same once the colours go.
		var painted []string
		for _, line := range strings.Split(text, "\n") {
			var cells []string
			for _, c := range strings.Split(line, "\t") {
				cells = append(cells, on.paint(added, c))
			}
			painted = append(painted, strings.Join(cells, "\t"))
		}
		var colored bytes.Buffer
		tb = newTable(&colored)
		_, _ = tb.Write([]byte(strings.Join(painted, "\n")))
		_ = tb.Flush()
		if plain := sgr.ReplaceAllString(colored.String(), ""); plain != want.String() {
			t.Errorf("painted table of %q, without its colours:\n%q\nwant:\n%q", text, plain, want.String())
		}
	}
}

// hostileSandboxes is a sandbox whose names and values would act on a
// terminal: a clear-screen sequence, a line end, a C1 CSI, a
// bidirectional override.
type hostileSandboxes struct{ cliSandboxes }

func (hostileSandboxes) Diff(context.Context, string, adminapi.DiffOptions) (adminapi.Diff, error) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	return adminapi.Diff{Changes: []adminapi.DiffChange{
		{Table: "app.t\x1b[2J", Op: "update", Key: raw(`{"id": 1}`), Before: raw(`{"id": 1, "v\u001b[2J": "a", "w": "x"}`),
			After: raw(`{"id": 1, "v\u001b[2J": "b\u001b[2J\nc", "w": "y` + "\u009b" + `31m\u202e"}`)},
		{Table: "app.t", Op: "insert", Key: raw(`{"id": 2}`), After: raw(`{"id": 2, "v": "line\nbreak\u001b]0;title\u0007"}`)},
		{Table: "app.t", Op: "conflict", Key: raw(`{"id": 3}`), Before: raw(`{"id": 3, "v": 1}`), After: raw(`{"id": 3, "v": 2}`),
			Production: raw(`{"id": 3, "v": "\u001b[2J"}`)},
		{Table: "app.t", Op: "ddl", After: raw(`"ALTER TABLE t\n ADD c INT COMMENT '\u001b[2J'"`)},
	}}, nil
}

// TestColoredDiff: with --color=always the diff's ops and values are in
// colour (a value replaced red, written green, a conflict yellow, DDL
// cyan), and are the plain diff once the colours go; what the sandbox
// wrote is escaped first, so the only escape sequences are the CLI's
// colours. Without --color, into a buffer, there is no colour at all.
func TestColoredDiff(t *testing.T) {
	srv := httptest.NewServer(adminapi.NewHandler(adminapi.Options{Sandboxes: &hostileSandboxes{}, Token: "s3cret"}))
	defer srv.Close()
	env := map[string]string{"SQLFORK_ADMIN_URL": srv.URL, "SQLFORK_ADMIN_TOKEN": "s3cret"}
	diff := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"sandbox", "diff", "box"}, args...), testEnv(env, &stdout, &stderr)); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		return stdout.String()
	}
	plain, colored := diff(), diff("--color=always")
	if strings.ContainsAny(plain, "\x1b\u009b\u202e\a") {
		t.Errorf("plain diff holds what a terminal acts on:\n%q", plain)
	}
	for _, want := range []string{`v\x1b[2J: "a" → "b\u001b[2J\nc"`, `"y\u009b31m\u202e"`, `"line\nbreak\u001b]0;title\u0007"`,
		`ALTER TABLE t ADD c INT COMMENT '\x1b[2J'`, `app.t\x1b[2J`} {
		if !strings.Contains(plain, want) {
			t.Errorf("plain diff lacks %s:\n%s", want, plain)
		}
	}
	if got := sgr.ReplaceAllString(colored, ""); got != plain {
		t.Errorf("coloured diff without its colours:\n%s\nplain:\n%s", got, plain)
	}
	if rest := sgr.ReplaceAllString(colored, ""); strings.ContainsAny(rest, "\x1b\u009b\u202e\a") {
		t.Errorf("coloured diff holds escape sequences besides its colours:\n%q", colored)
	}
	for _, want := range []string{
		"\x1b[31m\"a\"\x1b[0m → \x1b[32m\"b\\u001b[2J\\nc\"\x1b[0m", // an update: before red, after green
		"\x1b[32minsert\x1b[0m", "\x1b[32m{\"id\":2,", // an insert green
		"\x1b[33mconflict\x1b[0m", "\x1b[33m{\"id\":3,\"v\":\"\\u001b[2J\"}\x1b[0m", // a conflict and production's row yellow
		"\x1b[36mddl\x1b[0m", "\x1b[36mALTER TABLE", // DDL cyan
	} {
		if !strings.Contains(colored, want) {
			t.Errorf("coloured diff lacks %q:\n%q", want, colored)
		}
	}
	if regexp.MustCompile("\x1b\\[[0-9;]*m").FindString(diff("--color=never")) != "" {
		t.Error("--color=never coloured the diff")
	}
}

// TestColoredListShow: list and show paint the states, with --color=always
// only; the colours change no alignment; --color takes auto, always or
// never only.
func TestColoredListShow(t *testing.T) {
	srv := httptest.NewServer(adminapi.NewHandler(adminapi.Options{Sandboxes: &cliSandboxes{}, Token: "s3cret"}))
	defer srv.Close()
	env := map[string]string{"SQLFORK_ADMIN_URL": srv.URL, "SQLFORK_ADMIN_TOKEN": "s3cret"}
	cli := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"sandbox"}, args...), testEnv(env, &stdout, &stderr))
		return stdout.String(), stderr.String(), code
	}
	for _, cmd := range [][]string{{"list"}, {"show", "box"}, {"diff", "box", "--summary"}} {
		plain, _, _ := cli(cmd...)
		colored, _, code := cli(append(cmd, "--color", "always")...)
		if code != 0 || !strings.Contains(colored, "\x1b[32m") || sgr.ReplaceAllString(colored, "") != plain {
			t.Errorf("%v --color always (exit %d):\n%q\nplain:\n%q", cmd, code, colored, plain)
		}
	}
	if out, _, _ := cli("show", "box", "--color=always"); !strings.Contains(out, "state:        \x1b[32mactive\x1b[0m\n") ||
		!strings.Contains(out, "app.users  \x1b[32mfork\x1b[0m   3") {
		t.Errorf("show --color=always:\n%q", out)
	}
	if _, errOut, code := cli("list", "--color", "sometimes"); code != 2 || !strings.Contains(errOut, `"sometimes" is not auto, always or never`) {
		t.Errorf("--color sometimes: exit %d, %s", code, errOut)
	}
}
