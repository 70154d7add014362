package grants

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The grant lines below are real SHOW GRANTS output of MariaDB
// 10.11.19-MariaDB-0+deb12u1 (accounts created by the GRANT statements in
// the comments), unless marked MySQL: those are in the format of the MySQL
// 8.0/8.4 reference manual's SHOW GRANTS examples.
func TestPrivilegeGrantsWriteProduction(t *testing.T) {
	const pw = " IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'"
	tests := []struct {
		name   string
		grants []string
		want   []string // nil: not writable
	}{
		{
			name: "all privileges with grant option",
			grants: []string{
				"GRANT ALL PRIVILEGES ON *.* TO `u1`@`%`" + pw + " WITH GRANT OPTION",
			},
			want: []string{"ALL PRIVILEGES, GRANT OPTION ON *.* TO `u1`@`%`"},
		},
		{
			name: "recommended: select on production, all on the proxy's schemas",
			grants: []string{
				"GRANT USAGE ON *.* TO `u2`@`%`" + pw,
				"GRANT SELECT ON `app`.* TO `u2`@`%`",
				"GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO `u2`@`%`",
			},
		},
		{
			name: "recommended plus SHOW VIEW and mysql.func",
			grants: []string{
				"GRANT USAGE ON *.* TO `u3`@`%`" + pw,
				"GRANT SELECT, SHOW VIEW ON `app`.* TO `u3`@`%`",
				"GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO `u3`@`%`",
				"GRANT SELECT ON `mysql`.`func` TO `u3`@`%`",
			},
		},
		{
			name: "insert on one table",
			grants: []string{
				"GRANT USAGE ON *.* TO `u4`@`%`" + pw,
				"GRANT SELECT, INSERT ON `app`.`t` TO `u4`@`%`",
			},
			want: []string{"INSERT ON `app`.`t` TO `u4`@`%`"},
		},
		{
			name: "execute on routines",
			grants: []string{
				"GRANT USAGE ON *.* TO `u5`@`%`" + pw,
				"GRANT EXECUTE ON PROCEDURE `app`.`p` TO `u5`@`%`",
				"GRANT EXECUTE ON FUNCTION `app`.`f` TO `u5`@`%`",
			},
			want: []string{"EXECUTE ON PROCEDURE `app`.`p` TO `u5`@`%`", "EXECUTE ON FUNCTION `app`.`f` TO `u5`@`%`"},
		},
		{
			name: "execute on a routine in the proxy's schema",
			grants: []string{
				"GRANT EXECUTE, ALTER ROUTINE ON FUNCTION `_sqlfork_meta`.`f` TO `u5`@`%`",
			},
		},
		{
			name: "column privileges",
			grants: []string{
				"GRANT USAGE ON *.* TO `u6`@`%`",
				"GRANT SELECT (`a`, `b`), UPDATE (`c`) ON `app`.`t` TO `u6`@`%`",
			},
			want: []string{"UPDATE (`c`) ON `app`.`t` TO `u6`@`%`"},
		},
		{
			name: "select-only columns",
			grants: []string{
				"GRANT SELECT (`a`, `b`) ON `app`.`t` TO `u6`@`%`",
			},
		},
		{
			name: "unescaped _ in the prefix pattern",
			grants: []string{
				"GRANT USAGE ON *.* TO `u7`@`%`" + pw,
				"GRANT ALL PRIVILEGES ON `_sqlfork%`.* TO `u7`@`%`",
			},
			want: []string{"ALL PRIVILEGES ON `_sqlfork%`.* TO `u7`@`%`"},
		},
		{
			name: "select everywhere, but with grant option",
			grants: []string{
				"GRANT SELECT ON *.* TO `u8`@`%`" + pw + " WITH GRANT OPTION",
			},
			want: []string{"GRANT OPTION ON *.* TO `u8`@`%`"},
		},
		{
			name: "monitoring privileges",
			grants: []string{
				// GRANT PROCESS, REPLICATION CLIENT, SHOW DATABASES, BINLOG MONITOR, SLAVE MONITOR, SELECT ON *.*
				"GRANT SELECT, PROCESS, SHOW DATABASES, BINLOG MONITOR, SLAVE MONITOR ON *.* TO `u9`@`%`" + pw,
				"GRANT REPLICATION CLIENT, REPLICA MONITOR ON *.* TO `u9`@`%`", // MySQL spelling; MariaDB synonym
			},
		},
		{
			name: "role grants add nothing by themselves, admin option does",
			grants: []string{
				"GRANT `r2` TO `u10`@`%` WITH ADMIN OPTION",
				"GRANT `r1` TO `u10`@`%`",
				"GRANT USAGE ON *.* TO `u10`@`%`" + pw,
				"SET DEFAULT ROLE `r1` FOR `u10`@`%`",
			},
			want: []string{"ADMIN OPTION ON ROLE `r2` TO `u10`@`%`"},
		},
		{
			name: "a role's grants, nested role included",
			grants: []string{
				"GRANT `r3` TO `r1`",
				"GRANT USAGE ON *.* TO `r1`",
				"GRANT UPDATE ON `app`.* TO `r1`",
				"GRANT USAGE ON *.* TO `r3`",
				"GRANT SELECT ON `app`.* TO `r3`",
			},
			want: []string{"UPDATE ON `app`.* TO `r1`"},
		},
		{
			name: "authentication clauses",
			grants: []string{
				"GRANT USAGE ON *.* TO `u11`@`%` IDENTIFIED VIA unix_socket",
				"GRANT USAGE ON *.* TO `u12`@`%` IDENTIFIED VIA mysql_native_password USING '*B69027D44F6E5EDC07F1AEAD1477967B16F28227' OR unix_socket",
				"GRANT USAGE ON *.* TO `u13`@`%`" + pw + " REQUIRE SSL WITH MAX_QUERIES_PER_HOUR 10 MAX_USER_CONNECTIONS 5",
				"GRANT SELECT ON `app`.* TO `u13`@`%`",
			},
		},
		{
			name: "proxy privilege",
			grants: []string{
				"GRANT USAGE ON *.* TO `u12`@`%`",
				"GRANT PROXY ON ``@`%` TO `u12`@`%`",
			},
			want: []string{"PROXY ON ``@`%` TO `u12`@`%`"},
		},
		{
			name: "odd names and non-data privileges",
			grants: []string{
				"GRANT USAGE ON *.* TO `u14`@`%`",
				"GRANT SELECT ON `we``ird`.* TO `u14`@`%`",
				"GRANT CREATE TEMPORARY TABLES, LOCK TABLES, DELETE HISTORY ON `app`.* TO `u14`@`%`",
				"GRANT SELECT ON `a\\_b%`.* TO `u14`@`%`",
				"GRANT INSERT ON `app`.`t` TO `u14`@`%`",
				"GRANT SELECT ON `_sqlfork_meta`.`tab``le` TO `u14`@`%`",
			},
			want: []string{
				"CREATE TEMPORARY TABLES, LOCK TABLES, DELETE HISTORY ON `app`.* TO `u14`@`%`",
				"INSERT ON `app`.`t` TO `u14`@`%`",
			},
		},
		{
			name: "show view, trigger, event, references, alter routine",
			grants: []string{
				"GRANT USAGE ON *.* TO `u15`@`%`",
				"GRANT SHOW VIEW, EVENT, TRIGGER ON `app`.* TO `u15`@`%`",
				"GRANT REFERENCES, REFERENCES (`a`), INDEX ON `app`.`t` TO `u15`@`%`",
				"GRANT ALTER ROUTINE ON PROCEDURE `app`.`p` TO `u15`@`%`",
			},
			want: []string{
				"EVENT, TRIGGER ON `app`.* TO `u15`@`%`",
				"REFERENCES, REFERENCES (`a`), INDEX ON `app`.`t` TO `u15`@`%`",
				"ALTER ROUTINE ON PROCEDURE `app`.`p` TO `u15`@`%`",
			},
		},
		{
			name: "administrative privileges",
			grants: []string{
				"GRANT SUPER, SET USER, FEDERATED ADMIN, CONNECTION ADMIN, READ_ONLY ADMIN, BINLOG ADMIN, SLAVE MONITOR ON *.* TO `u16`@`%`",
				"GRANT RELOAD, SHUTDOWN, FILE, REPLICATION SLAVE, CREATE USER, CREATE TABLESPACE, BINLOG REPLAY ON *.* TO `u17`@`%`",
			},
			want: []string{
				"SUPER, SET USER, FEDERATED ADMIN, CONNECTION ADMIN, READ_ONLY ADMIN, BINLOG ADMIN ON *.* TO `u16`@`%`",
				"RELOAD, SHUTDOWN, FILE, REPLICATION SLAVE, CREATE USER, CREATE TABLESPACE, BINLOG REPLAY ON *.* TO `u17`@`%`",
			},
		},
		{
			name: "grant option on the proxy's schemas",
			grants: []string{
				"GRANT USAGE ON *.* TO `u18`@`localhost`",
				"GRANT SELECT ON `mysql`.* TO `u18`@`localhost`",
				"GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO `u18`@`localhost` WITH GRANT OPTION",
			},
			want: []string{"GRANT OPTION ON `\\_sqlfork%`.* TO `u18`@`localhost`"},
		},
		{
			name: "quoted user and host",
			grants: []string{
				"GRANT USAGE ON *.* TO `u 19`@`10.0.%`" + pw,
				"GRANT SELECT ON `app`.`t` TO `u 19`@`10.0.%`",
			},
		},
		{
			name: "schema patterns",
			grants: []string{
				"GRANT USAGE ON *.* TO `u20`@`%`",
				"GRANT INSERT ON `\\_sqlfork`.* TO `u20`@`%`",        // exactly _sqlfork: inside
				"GRANT INSERT ON `_sqlfork`.* TO `u20`@`%`",          // ?sqlfork
				"GRANT INSERT ON `\\_sqlfork\\_%`.* TO `u20`@`%`",    // inside
				"GRANT INSERT ON `\\\\_sqlfork%`.* TO `u20`@`%`",     // a backslash, then any character
				"GRANT SELECT ON `\\_sqlfork%`.* TO `u20`@`%`",       // inside
				"GRANT INSERT ON `\\_sqlfor%`.* TO `u20`@`%`",        // _sqlfor…: also _sqlforx (made up)
				"GRANT INSERT ON `\\_sqlfork\\_meta`.* TO `u20`@`%`", // inside (made up)
				"GRANT INSERT ON `\\_sqlfork_meta`.`t` TO `u20`@`%`", // table grants name the schema literally (made up)
			},
			want: []string{
				"INSERT ON `_sqlfork`.* TO `u20`@`%`",
				"INSERT ON `\\\\_sqlfork%`.* TO `u20`@`%`",
				"INSERT ON `\\_sqlfor%`.* TO `u20`@`%`",
				"INSERT ON `\\_sqlfork_meta`.`t` TO `u20`@`%`",
			},
		},
		{
			name: "PUBLIC (MariaDB 10.11)",
			grants: []string{
				"GRANT USAGE ON *.* TO `u2`@`%`" + pw,
				"GRANT SELECT ON `app`.* TO `u2`@`%`",
				"GRANT INSERT ON `app`.`t` TO PUBLIC",
			},
			want: []string{"INSERT ON `app`.`t` TO PUBLIC"},
		},
		{
			name: "root",
			grants: []string{
				"GRANT `r2` TO `root`@`localhost` WITH ADMIN OPTION",
				"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION",
				"GRANT PROXY ON ``@`%` TO `root`@`localhost` WITH GRANT OPTION",
			},
			want: []string{
				"ADMIN OPTION ON ROLE `r2` TO `root`@`localhost`",
				"ALL PRIVILEGES, GRANT OPTION ON *.* TO `root`@`localhost`",
				"PROXY, GRANT OPTION ON ``@`%` TO `root`@`localhost`",
			},
		},
		{
			name: "MySQL: roles and privileges",
			grants: []string{
				"GRANT USAGE ON *.* TO `u1`@`localhost`",
				"GRANT SELECT ON `app`.* TO `u1`@`localhost`",
				"GRANT `r1`@`%`,`r2`@`%` TO `u1`@`localhost`",
				"GRANT SELECT, INSERT, UPDATE ON `db1`.* TO `jeffrey`@`localhost`",
			},
			want: []string{"INSERT, UPDATE ON `db1`.* TO `jeffrey`@`localhost`"},
		},
		{
			name: "MySQL: dynamic privileges and partial revokes",
			grants: []string{
				"GRANT SELECT ON *.* TO `u1`@`%`",
				"GRANT BACKUP_ADMIN,SHOW_ROUTINE ON *.* TO `u1`@`%`",
				"REVOKE SELECT ON `mysql`.* FROM `u1`@`%`",
				"GRANT `r1`@`%` TO `u1`@`%` WITH ADMIN OPTION",
			},
			want: []string{
				"BACKUP_ADMIN ON *.* TO `u1`@`%`",
				"ADMIN OPTION ON ROLE `r1`@`%` TO `u1`@`%`",
			},
		},
		{
			name: "unknown privilege counts as writing",
			grants: []string{
				"GRANT SELECT, FROBNICATE ON `app`.* TO `x`@`%`",
			},
			want: []string{"FROBNICATE ON `app`.* TO `x`@`%`"},
		},
		{
			name: "duplicates are reported once",
			grants: []string{
				"GRANT UPDATE ON `app`.* TO `r1`",
				"GRANT UPDATE ON `app`.* TO `r1`",
			},
			want: []string{"UPDATE ON `app`.* TO `r1`"},
		},
		{
			name: "unparsable lines count as writing, without credentials",
			grants: []string{
				"GRANT SELECT ON `app TO `x`@`%`",
				"DENY everything",
				"GRANT USAGE ON *.* TO `x`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122",
				"GRANT SELECT ON app TO x",
			},
			want: []string{
				"unrecognised grant: GRANT SELECT ON `app TO `x`@`%`",
				"unrecognised grant: DENY everything",
				"unrecognised grant: GRANT USAGE ON *.* TO `x`@`%` …",
				"unrecognised grant: GRANT SELECT ON app TO x",
			},
		},
		{
			name:   "blank lines and no grants",
			grants: []string{"", "  "},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			writable, why := grantsWriteProduction(tc.grants, "_sqlfork")
			if writable != (tc.want != nil) || !reflect.DeepEqual(why, tc.want) {
				t.Errorf("grantsWriteProduction = %v, %q\nwant %v, %q", writable, why, tc.want != nil, tc.want)
			}
			for _, w := range why {
				if strings.Contains(w, "D821809F") {
					t.Errorf("why leaks a password hash: %q", w)
				}
			}
		})
	}
}

func TestPrivilegeOtherPrefix(t *testing.T) {
	grants := []string{
		"GRANT SELECT ON `app`.* TO `u`@`%`",
		"GRANT ALL PRIVILEGES ON `sbx%`.* TO `u`@`%`",
	}
	if w, why := grantsWriteProduction(grants, "sbx"); w {
		t.Errorf("prefix sbx: writable, %q", why)
	}
	if w, _ := grantsWriteProduction(grants, "_sqlfork"); !w {
		t.Error("prefix _sqlfork: `sbx%` is production")
	}
	if w, _ := grantsWriteProduction(grants, ""); !w {
		t.Error("empty prefix: nothing is the proxy's")
	}
}

func TestPrivilegePatternInside(t *testing.T) {
	for pat, want := range map[string]bool{
		`\_sqlfork%`:    true,
		`\_sqlfork`:     true,
		`\_sqlfork\_%`:  true,
		`\_sqlfork_%`:   true, // the prefix is fixed, what follows may vary
		`\_sqlforkabc`:  true,
		`_sqlfork%`:     false,
		`\_sql_ork%`:    false,
		`\_sqlfor%`:     false,
		`\_sqlfor`:      false,
		`%`:             false,
		``:              false,
		`\`:             false,
		`\\_sqlfork%`:   false,
		`\_\s\q\lfork%`: true, // needless escapes are plain characters
		`\_SQLFORK%`:    false,
		`x\_sqlfork%`:   false,
		`\_sqlfork%\`:   true,
	} {
		if got := PatternInside(pat, "_sqlfork"); got != want {
			t.Errorf("PatternInside(%q) = %v, want %v", pat, got, want)
		}
	}
}

// grantsFakeConn answers statements from a script and records them.
type grantsFakeConn struct {
	answers map[string][]string // statement → one-column rows
	fail    map[string]error
	role    string // CURRENT_ROLE(); "" is NULL
	log     []string
}

func (f *grantsFakeConn) Exec(_ context.Context, sql string) (uint64, error) {
	f.log = append(f.log, sql)
	if err := f.fail[sql]; err != nil {
		return 0, err
	}
	switch {
	case sql == "SET ROLE NONE":
		f.role = ""
	case strings.HasPrefix(sql, "SET ROLE `"):
		f.role = strings.Trim(strings.TrimPrefix(sql, "SET ROLE "), "`")
	default:
		return 0, errors.New("unexpected exec " + sql)
	}
	return 0, nil
}

func (f *grantsFakeConn) Query(_ context.Context, sql string) ([][]*string, error) {
	f.log = append(f.log, sql)
	if err := f.fail[sql]; err != nil {
		return nil, err
	}
	if sql == "SELECT CURRENT_ROLE()" {
		if f.role == "" {
			return [][]*string{{nil}}, nil
		}
		r := f.role
		return [][]*string{{&r}}, nil
	}
	lines, ok := f.answers[sql]
	if !ok {
		return nil, errors.New("unexpected query " + sql)
	}
	var rows [][]*string
	for _, l := range lines {
		rows = append(rows, []*string{&l})
	}
	return rows, nil
}

const grantsApplicableRoles = "SELECT ROLE_NAME FROM information_schema.APPLICABLE_ROLES WHERE GRANTEE = CURRENT_USER()"

func TestPrivilegeProductionWritableRoles(t *testing.T) {
	f := &grantsFakeConn{
		role: "r1",
		answers: map[string][]string{
			"SHOW GRANTS FOR CURRENT_USER()": {
				"GRANT `r2` TO `u10`@`%`",
				"GRANT `r1` TO `u10`@`%`",
				"GRANT USAGE ON *.* TO `u10`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'",
				"GRANT SELECT ON `app`.* TO `u10`@`%`",
				"SET DEFAULT ROLE `r1` FOR `u10`@`%`",
			},
			grantsApplicableRoles: {"r2", "r1"},
			"SHOW GRANTS FOR `r2`": {
				"GRANT USAGE ON *.* TO `r2`",
				"GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO `r2`",
			},
			"SHOW GRANTS FOR `r1`": {
				"GRANT `r3` TO `r1`",
				"GRANT USAGE ON *.* TO `r1`",
				"GRANT UPDATE ON `app`.* TO `r1`",
				"GRANT USAGE ON *.* TO `r3`",
				"GRANT DELETE ON `app`.`t` TO `r3`",
			},
		},
	}
	writable, why, err := ProductionWritable(context.Background(), f, "_sqlfork")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"UPDATE ON `app`.* TO `r1`", "DELETE ON `app`.`t` TO `r3`"}
	if !writable || !reflect.DeepEqual(why, want) {
		t.Errorf("got %v %q, want true %q", writable, why, want)
	}
	if f.role != "r1" {
		t.Errorf("current role afterwards %q, want r1 restored", f.role)
	}
	wantLog := []string{
		"SHOW GRANTS FOR CURRENT_USER()", grantsApplicableRoles, "SELECT CURRENT_ROLE()",
		"SET ROLE `r2`", "SHOW GRANTS FOR `r2`", "SET ROLE `r1`", "SHOW GRANTS FOR `r1`", "SET ROLE `r1`",
	}
	if !reflect.DeepEqual(f.log, wantLog) {
		t.Errorf("statements\n%q\nwant\n%q", f.log, wantLog)
	}
}

func TestPrivilegeProductionWritableNoRoles(t *testing.T) {
	f := &grantsFakeConn{
		answers: map[string][]string{
			"SHOW GRANTS FOR CURRENT_USER()": {
				"GRANT USAGE ON *.* TO `sqlfork`@`127.0.0.1` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'",
				"GRANT SELECT, SHOW VIEW ON `demo`.* TO `sqlfork`@`127.0.0.1`",
				"GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO `sqlfork`@`127.0.0.1`",
				"GRANT SELECT ON `mysql`.`func` TO `sqlfork`@`127.0.0.1`",
			},
		},
		fail: map[string]error{grantsApplicableRoles: errors.New("Unknown table 'APPLICABLE_ROLES'")},
	}
	writable, why, err := ProductionWritable(context.Background(), f, "_sqlfork")
	if err != nil || writable || why != nil {
		t.Fatalf("got %v %q %v, want read-only", writable, why, err)
	}
	// No role: the connection's role is never touched.
	for _, s := range f.log {
		if strings.HasPrefix(s, "SET ROLE") || s == "SELECT CURRENT_ROLE()" {
			t.Errorf("ran %s", s)
		}
	}
}

func TestPrivilegeProductionWritableMySQLRoles(t *testing.T) {
	f := &grantsFakeConn{
		answers: map[string][]string{
			"SHOW GRANTS FOR CURRENT_USER()": {
				"GRANT USAGE ON *.* TO `u1`@`localhost`",
				"GRANT `r1`@`%` TO `u1`@`localhost`",
			},
			grantsApplicableRoles: nil,
			"SHOW GRANTS FOR CURRENT_USER() USING `r1`@`%`": {
				"GRANT USAGE ON *.* TO `u1`@`localhost`",
				"GRANT SELECT, INSERT ON `db1`.* TO `u1`@`localhost`",
				"GRANT `r1`@`%` TO `u1`@`localhost`",
			},
		},
	}
	writable, why, err := ProductionWritable(context.Background(), f, "_sqlfork")
	if err != nil || !writable || !reflect.DeepEqual(why, []string{"INSERT ON `db1`.* TO `u1`@`localhost`"}) {
		t.Fatalf("got %v %q %v", writable, why, err)
	}
	for _, s := range f.log {
		if strings.HasPrefix(s, "SET ROLE") {
			t.Errorf("ran %s", s)
		}
	}
}

func TestPrivilegeProductionWritableErrors(t *testing.T) {
	boom := errors.New("boom")
	f := &grantsFakeConn{fail: map[string]error{"SHOW GRANTS FOR CURRENT_USER()": boom}}
	if _, _, err := ProductionWritable(context.Background(), f, "_sqlfork"); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}

	// A role that cannot be enabled: an error, and the role is restored.
	f = &grantsFakeConn{
		answers: map[string][]string{
			"SHOW GRANTS FOR CURRENT_USER()": {"GRANT `r9` TO `u`@`%`"},
			grantsApplicableRoles:            {"r9"},
		},
		fail: map[string]error{"SET ROLE `r9`": boom},
	}
	_, _, err := ProductionWritable(context.Background(), f, "_sqlfork")
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "`r9`") {
		t.Errorf("err = %v", err)
	}
	if last := f.log[len(f.log)-1]; last != "SET ROLE NONE" {
		t.Errorf("last statement %q, want SET ROLE NONE", last)
	}
}
