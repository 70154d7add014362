package main

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// cliDigest is the digest of cliPlan.
const cliDigest = "sha256:abababababababababababababababababababababababababababababababab"

// cliPlan is the fake's dry run: a conflict after a statement (the CLI
// prints conflicts first), a statement on two lines, and a DELETE of each
// table o names (whose names come back in the plan).
func cliPlan(name string, o adminapi.PromoteOptions) adminapi.Promoted {
	plan := []adminapi.PlanStep{
		{Step: "ddl", Statement: "ALTER TABLE `app`.`orders`\n  ADD COLUMN `note` text"},
		{Step: "conflict", Statement: `app.users {"id": 1}: score`},
		{Step: "rows", Statement: "UPDATE `app`.`users` SET `score` = 0 WHERE `id` = 1"},
	}
	for _, t := range o.Tables {
		plan = append(plan, adminapi.PlanStep{Step: "rows", Statement: "DELETE FROM " + t})
	}
	return adminapi.Promoted{Sandbox: name, Strategy: o.Strategy, Outcome: adminapi.OutcomeDryRun, DryRun: true, Plan: plan, Digest: cliDigest,
		Info: "dry run: PROMOTE STRATEGY " + strings.ToUpper(o.Strategy) + " of sandbox " + name + ": nothing was applied"}
}

// promoteAsked is what o asks besides a strategy ("" for nothing).
func promoteAsked(o adminapi.PromoteOptions) string {
	var b strings.Builder
	for _, f := range []struct {
		flag   string
		values []string
	}{{" for ", o.Tables}, {" overwrite ", o.Overwrite}} {
		if len(f.values) > 0 {
			b.WriteString(f.flag + strings.Join(f.values, ","))
		}
	}
	if o.DryRun {
		b.WriteString(" dry-run")
	}
	if o.Matching != "" {
		b.WriteString(" matching " + o.Matching)
	}
	return b.String()
}

// TestSandboxPromoteCLI: `sqlfork-proxy sandbox promote` with a dry run,
// tables, overwrites and a digest: what it asks, prints (a plan's names
// escaped; the command that applies it) and exits with.
func TestSandboxPromoteCLI(t *testing.T) {
	plan := "\nSTEP      STATEMENT\n" +
		"conflict  app.users {\"id\": 1}: score\n" +
		"ddl       ALTER TABLE `app`.`orders` ADD COLUMN `note` text\n" +
		"rows      UPDATE `app`.`users` SET `score` = 0 WHERE `id` = 1\n"
	header := func(strategy string) string {
		return "sandbox:   box\nstrategy:  " + strategy + "\noutcome:   dry run\ninfo:      dry run: PROMOTE STRATEGY " + strings.ToUpper(strategy) +
			" of sandbox box: nothing was applied\n"
	}
	hostile := "app.\x1b[2Jt'\u202ex"
	tests := []cliCase{
		{"dry run", []string{"promote", "box", "--strategy", "ours", "--dry-run"}, nil, 0, "promote box ours dry-run",
			header("ours") + plan + "\ndigest:  " + cliDigest + "\napply:   sqlfork-proxy sandbox promote box --strategy ours --matching " + cliDigest + "\n",
			false, ""},
		{"dry run of tables", []string{"promote", "box", "--strategy", "THEIRS", "--for", "app.users", "--overwrite", "app.orders", "--for", "app.my.t",
			"--dry-run"}, nil, 0, "promote box theirs for app.users,app.my.t overwrite app.orders dry-run",
			header("theirs") + plan + "rows      DELETE FROM app.users\nrows      DELETE FROM app.my.t\n\ndigest:  " + cliDigest +
				"\napply:   sqlfork-proxy sandbox promote box --strategy theirs --for app.users --for app.my.t --overwrite app.orders --matching " +
				cliDigest + "\n", false, ""},
		{"dry run of fail with conflicts", []string{"promote", "box", "--dry-run"}, nil, 0, "promote box fail dry-run",
			header("fail") + plan + "\ndigest:  " + cliDigest +
				"\napply:   none: strategy fail refuses this plan (1 conflicts); --strategy ours or theirs resolves them\n", false, ""},
		{"dry run json", []string{"promote", "box", "--strategy", "ours", "--dry-run", "-o", "json"}, nil, 0, "promote box ours dry-run",
			"  \"rows\": 0,\n  \"dry_run\": true,\n  \"plan\": [\n    {\n      \"step\": \"ddl\",\n" +
				"      \"statement\": \"ALTER TABLE `app`.`orders`\\n  ADD COLUMN `note` text\"\n    },\n", true, ""},
		{"a hostile name in the plan and the command", []string{"promote", "my\x1b[2Jbox x", "--strategy", "ours", "--for", hostile, "--dry-run"}, nil, 0,
			"promote my\x1b[2Jbox x ours for " + hostile + " dry-run",
			"rows      DELETE FROM app.\\x1b[2Jt'\\u202ex\n\ndigest:  " + cliDigest +
				"\napply:   sqlfork-proxy sandbox promote $'my\\x1b[2Jbox x' --strategy ours --for $'app.\\x1b[2Jt\\'\\u202ex' --matching " + cliDigest + "\n",
			true, ""},
		{"matching", []string{"promote", "box", "--strategy", "ours", "--for", "app.users", "--matching", strings.ToUpper(cliDigest)}, nil, 0,
			"promote box ours for app.users matching " + cliDigest, "outcome:   committed\n", true, ""},
		{"matching json", []string{"promote", "box", "--strategy", "ours", "--matching", cliDigest, "-o", "json"}, nil, 0,
			"promote box ours matching " + cliDigest, "{\n  \"sandbox\": \"box\",\n  \"strategy\": \"ours\",\n  \"outcome\": \"committed\",\n" +
				"  \"info\": \"promoted sandbox box: 1 rows inserted, 12 updated, 0 deleted in 1 tables\",\n  \"rows\": 13\n}\n", false, ""},
		// What does not hold is a usage error, before the API is asked.
		{"a table without its database", []string{"promote", "box", "--for", "users"}, nil, 2, "", "", false,
			`sqlfork-proxy: --for: "users" is not db.table`},
		{"an overwrite without a name", []string{"promote", "box", "--overwrite", "app."}, nil, 2, "", "", false,
			`sqlfork-proxy: --overwrite: "app." is not db.table`},
		{"a hostile table", []string{"promote", "box", "--for", "\x1b[2J"}, nil, 2, "", "", false,
			`sqlfork-proxy: --for: "\\x1b[2J" is not db.table`}, // %q's escape, escaped again
		{"dry run and matching", []string{"promote", "box", "--dry-run", "--matching", cliDigest}, nil, 2, "", "", false,
			"sqlfork-proxy: --dry-run and --matching exclude each other: review with --dry-run, then apply with --matching"},
		{"matching what is not a digest", []string{"promote", "box", "--matching", "abc"}, nil, 2, "", "", false,
			`sqlfork-proxy: --matching: "abc" is not a plan's digest (sha256: and 64 hexadecimal digits, as --dry-run prints it)`},
		{"dry run without the token", []string{"promote", "box", "--dry-run"}, map[string]string{"SQLFORK_ADMIN_TOKEN": ""}, 1, "", "", false,
			"sqlfork-proxy: admin API: missing or wrong bearer token (HTTP 401)"},
	}
	for _, tc := range tests {
		tc.run(t)
	}
}

// TestPromoteFlags: the flags of `sandbox promote` as the API's options.
func TestPromoteFlags(t *testing.T) {
	tests := []struct {
		name    string
		f       promoteFlags
		want    adminapi.PromoteOptions
		wantErr string
	}{
		{"strategy alone", promoteFlags{strategy: "Ours"}, adminapi.PromoteOptions{Strategy: "ours"}, ""},
		{"dry run", promoteFlags{strategy: "fail", dryRun: true}, adminapi.PromoteOptions{Strategy: "fail", DryRun: true}, ""},
		{"every table", promoteFlags{strategy: "theirs", tables: []string{"a.t", "b.u"}, overwrite: []string{"a.t"}, matching: strings.ToUpper(cliDigest)},
			adminapi.PromoteOptions{Strategy: "theirs", Tables: []string{"a.t", "b.u"}, Overwrite: []string{"a.t"}, Matching: cliDigest}, ""},
		{"unknown strategy", promoteFlags{strategy: "mine"}, adminapi.PromoteOptions{}, `--strategy: "mine" is not fail, ours or theirs`},
		{"table without a database", promoteFlags{strategy: "ours", tables: []string{"a.t", ".u"}}, adminapi.PromoteOptions{}, `--for: ".u" is not db.table`},
		{"digest too long", promoteFlags{strategy: "ours", matching: cliDigest + "0"}, adminapi.PromoteOptions{},
			`--matching: "` + cliDigest + `0" is not a plan's digest (sha256: and 64 hexadecimal digits, as --dry-run prints it)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f.options()
			if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) || tt.wantErr == "" && (err != nil || !reflect.DeepEqual(got, tt.want)) {
				t.Errorf("options = %+v, %v; want %+v, %q", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestShellArg: a word a shell reads specially is quoted; one a terminal
// would act on is escaped, in ANSI-C quotes.
func TestShellArg(t *testing.T) {
	tests := []struct{ in, want string }{
		{"box", "box"},
		{"app.my_t-1", "app.my_t-1"},
		{cliDigest, cliDigest},
		{"", "''"},
		{"my box", "'my box'"},
		{"it's", `'it'\''s'`},
		{"$(rm -rf /)", "'$(rm -rf /)'"},
		{"é", "'é'"},
		{"a\\b", `$'a\\b'`},
		{"it's\x1b[2J", `$'it\'s\x1b[2J'`},
		{"a\tb\nc", `$'a\tb\nc'`},
		{"\u202eevil", `$'\u202eevil'`},
		{"\xff", `$'\xff'`},
	}
	bash, _ := exec.LookPath("bash") // where there is one, it reads each word back as it was
	for _, tt := range tests {
		got := shellArg(tt.in)
		if got != tt.want {
			t.Errorf("shellArg(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if bash == "" {
			continue
		}
		out, err := exec.Command(bash, "-c", "printf %s "+got).Output()
		if err != nil || string(out) != tt.in {
			t.Errorf("bash reads %s as %q (%v), want %q", got, out, err, tt.in)
		}
	}
}
