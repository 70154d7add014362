package main

import "testing"

// TestSandboxResetCLI: `sqlfork-proxy sandbox reset NAME [--for db.t …]`
// asks the admin API to reset the sandbox (the tables given), prints what
// the proxy said, and refuses a table without its database.
func TestSandboxResetCLI(t *testing.T) {
	for _, tc := range []cliCase{
		{"reset", []string{"reset", "box"}, nil, 0, "reset box ", "sandbox box reset\n", false, ""},
		{"reset for tables", []string{"reset", "box", "--for", "app.users", "--for", "app.a,app.b"}, nil, 0,
			"reset box app.users,app.a,app.b", "sandbox box reset\n", false, ""},
		{"reset json", []string{"reset", "box", "--for", "app.users", "-o", "json"}, nil, 0, "reset box app.users",
			"{\n  \"sandbox\": \"box\",\n  \"tables\": [\n    \"app.users\"\n  ],\n  \"linked\": [\n    \"app.orders\"\n  ],\n" +
				"  \"info\": \"sandbox box reset\"\n}\n", false, ""},
		{"reset of a table without its database", []string{"reset", "box", "--for", "users"}, nil, 2, "", "", false,
			`sqlfork-proxy: --for: "users" is not db.table`},
		{"reset missing", []string{"reset", "nosuch"}, nil, 1, "reset nosuch ", "", false,
			`sqlfork-proxy: admin API: not found: no sandbox named "nosuch" (HTTP 404)`},
		{"reset without the token", []string{"reset", "box"}, map[string]string{"SQLFORK_ADMIN_TOKEN": ""}, 1, "", "", false,
			"sqlfork-proxy: admin API: missing or wrong bearer token (HTTP 401)"},
		{"reset without a name", []string{"reset"}, nil, 2, "", "", false, "accepts 1 arg(s), received 0"},
	} {
		tc.run(t)
	}
}
