package session

import (
	"slices"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

func TestAlterSpecs(t *testing.T) {
	prod := "CREATE TABLE `t` (\n" +
		"  `id` int(11) NOT NULL AUTO_INCREMENT,\n" +
		"  `a` int(11) DEFAULT NULL,\n" +
		"  `b` varchar(10) DEFAULT NULL,\n" +
		"  `p` int(11) DEFAULT NULL,\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  KEY `ka` (`a`),\n" +
		"  KEY `fk_p` (`p`),\n" +
		"  CONSTRAINT `fk_p` FOREIGN KEY (`p`) REFERENCES `parent` (`id`),\n" +
		"  CONSTRAINT `chk` CHECK (`a` > 0)\n" +
		") ENGINE=InnoDB AUTO_INCREMENT=7 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
	for _, c := range []struct {
		name      string
		sandbox   string
		pre, post []string
	}{
		{name: "same but AUTO_INCREMENT", sandbox: prod[:len(prod)-len(" AUTO_INCREMENT=7 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci")] +
			" AUTO_INCREMENT=90 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"},
		{name: "column added, one modified, one dropped, index swapped",
			sandbox: "CREATE TABLE `t` (\n" +
				"  `id` int(11) NOT NULL AUTO_INCREMENT,\n" +
				"  `a` bigint(20) DEFAULT NULL,\n" +
				"  `c` int(11) NOT NULL DEFAULT 3,\n" +
				"  `p` int(11) DEFAULT NULL,\n" +
				"  PRIMARY KEY (`id`),\n" +
				"  UNIQUE KEY `uc` (`c`),\n" +
				"  KEY `fk_p` (`p`),\n" +
				"  CONSTRAINT `fk_p` FOREIGN KEY (`p`) REFERENCES `parent` (`id`) ON DELETE CASCADE,\n" +
				"  CONSTRAINT `chk` CHECK (`a` > 0)\n" +
				") ENGINE=InnoDB AUTO_INCREMENT=7 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci",
			pre: []string{"DROP INDEX IF EXISTS `ka`", "DROP FOREIGN KEY IF EXISTS `fk_p`",
				"MODIFY COLUMN IF EXISTS `a` bigint(20) DEFAULT NULL AFTER `id`",
				"ADD COLUMN IF NOT EXISTS `c` int(11) NOT NULL DEFAULT 3 AFTER `a`",
				"DROP COLUMN IF EXISTS `b`"},
			post: []string{"ADD UNIQUE KEY IF NOT EXISTS `uc` (`c`)",
				"ADD CONSTRAINT `fk_p` FOREIGN KEY IF NOT EXISTS (`p`) REFERENCES `parent` (`id`) ON DELETE CASCADE"}},
		{name: "engine and primary key",
			sandbox: "CREATE TABLE `t` (\n" +
				"  `id` int(11) NOT NULL AUTO_INCREMENT,\n" +
				"  `a` int(11) DEFAULT NULL,\n" +
				"  `b` varchar(10) DEFAULT NULL,\n" +
				"  `p` int(11) DEFAULT NULL,\n" +
				"  PRIMARY KEY (`id`,`a`),\n" +
				"  KEY `ka` (`a`),\n" +
				"  KEY `fk_p` (`p`),\n" +
				"  CONSTRAINT `fk_p` FOREIGN KEY (`p`) REFERENCES `parent` (`id`),\n" +
				"  CONSTRAINT `chk` CHECK (`a` > 0)\n" +
				") ENGINE=Aria DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci",
			pre: []string{"DROP PRIMARY KEY", "ENGINE=Aria DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci", "ADD PRIMARY KEY (`id`,`a`)"}},
	} {
		from, err := parseCreateTable(prod)
		if err != nil {
			t.Fatal(err)
		}
		to, err := parseCreateTable(c.sandbox)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pre, post, _ := alterSpecs(from, to)
		if !slices.Equal(pre, c.pre) || !slices.Equal(post, c.post) {
			t.Errorf("%s:\n pre  %q\n want %q\n post %q\n want %q", c.name, pre, c.pre, post, c.post)
		}
	}
}

func TestBatches(t *testing.T) {
	big := string(make([]byte, exportBytes-10))
	for _, c := range []struct {
		vals []string
		want []int
	}{
		{nil, nil},
		{make([]string, 250), []int{100, 100, 50}},
		{[]string{"a", big, "b", big, big}, []int{3, 1, 1}},
	} {
		var got []int
		for _, b := range batches(c.vals) {
			got = append(got, len(b))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("batches of %d values: %v, want %v", len(c.vals), got, c.want)
		}
	}
}

// TestParseCreateTable: definitions are read whole, by quoting, not by
// lines: names and comments holding line ends, commas, parentheses, quotes
// and what looks like more definitions stay inside their definition.
func TestParseCreateTable(t *testing.T) {
	text := "CREATE TABLE `a``b\n(` (\n" +
		"  `id` int(11) NOT NULL,\n" +
		"  `INT#` int(11) DEFAULT NULL,\n" +
		"  `msg\nCOLUMN z INT PARTITION BY HASH(id)(PARTITION a/*` int(11) DEFAULT NULL,\n" +
		"  `msg\n*/DATA DIRECTORY='/var/tmp/evil',PARTITION b)#` int(11) DEFAULT NULL COMMENT 'it''s, (a) \\' ) x\n  KEY `k` (`id`)',\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  KEY `k,\n(x)` (`INT#`),\n" +
		"  CONSTRAINT `c)\n` CHECK (`id` <> ',)')\n" +
		") ENGINE=InnoDB AUTO_INCREMENT=3 DEFAULT CHARSET=latin1 COMMENT='PARTITION BY HASH (x) PARTITIONS 2'\n" +
		" PARTITION BY HASH (`id`)\nPARTITIONS 2"
	td, err := parseCreateTable(text)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range td.items {
		got = append(got, it.kind+":"+it.name)
	}
	want := []string{"column:id", "column:INT#", "column:msg\nCOLUMN z INT PARTITION BY HASH(id)(PARTITION a/*",
		"column:msg\n*/DATA DIRECTORY='/var/tmp/evil',PARTITION b)#", "primary:PRIMARY", "index:k,\n(x)", "check:c)\n"}
	if !slices.Equal(got, want) {
		t.Errorf("items %q\nwant  %q", got, want)
	}
	if td.options != "ENGINE=InnoDB DEFAULT CHARSET=latin1 COMMENT='PARTITION BY HASH (x) PARTITIONS 2'" ||
		td.partition != "PARTITION BY HASH (`id`)\nPARTITIONS 2" {
		t.Errorf("options %q, partition %q", td.options, td.partition)
	}
	for _, bad := range []string{"CREATE VIEW `v` AS SELECT 1", "CREATE TABLE `t` (\n  `a` int,\n  PERIOD FOR p (`a`, `b`)\n)",
		"CREATE TABLE `t` (\n  `a` int COMMENT 'open\n)", "CREATE TABLE `t"} {
		if _, err := parseCreateTable(bad); err == nil {
			t.Errorf("parseCreateTable(%q) read it", bad)
		}
	}
}

// TestReplaceQualifiers: only back-quoted names that qualify another are
// mapped, never bytes inside a string or a longer name.
func TestReplaceQualifiers(t *testing.T) {
	dbs := map[string]string{"_sqlfork_1_app": "app", "_sqlfork_1_x": "obrien'+"}
	for in, want := range map[string]string{
		"REFERENCES `_sqlfork_1_app`.`p` (`id`)":                           "REFERENCES `app`.`p` (`id`)",
		"CHECK ('`_sqlfork_1_x`.x' IS NULL)":                               "CHECK ('`_sqlfork_1_x`.x' IS NULL)",
		"`a``_sqlfork_1_app`.`b`":                                          "`a``_sqlfork_1_app`.`b`",
		"select `_sqlfork_1_x`.`t`.`c` AS `c` from `_sqlfork_1_x`.`t`":     "select `obrien'+`.`t`.`c` AS `c` from `obrien'+`.`t`",
		"`_sqlfork_1_app` AS x":                                            "`_sqlfork_1_app` AS x",
		"COMMENT 'it''s `_sqlfork_1_app`.t \\\\' and `_sqlfork_1_app`.`t`": "COMMENT 'it''s `_sqlfork_1_app`.t \\\\' and `app`.`t`",
	} {
		if got := replaceQualifiers(in, dbs); got != want {
			t.Errorf("replaceQualifiers(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckGenerated: a generated statement is refused unless it is the one
// statement of its kind it was built as, on its table alone.
func TestCheckGenerated(t *testing.T) {
	m := &Manager{engine: rewrite.NewEngine(16), cfg: Config{Prefix: "_sqlfork"}, caseSensitive: true}
	target := rewrite.Table{DB: "app", Name: "t"}
	label := func(t rewrite.Table) string { return t.String() }
	for stmt, ok := range map[string]bool{
		"CREATE TABLE IF NOT EXISTS `app`.`t` (`id` int(11) NOT NULL, `p` int(11), CONSTRAINT `f` FOREIGN KEY (`p`) REFERENCES `parent` (`id`))": true,
		"CREATE TABLE IF NOT EXISTS `app`.`t` (`id` int) SELECT * FROM `app`.`secret`":                                                           false,
		"CREATE TABLE IF NOT EXISTS `app`.`t` LIKE `app`.`secret`":                                                                               false,
		"CREATE TABLE IF NOT EXISTS `app`.`t` (`id` int); DROP TABLE `app`.`u`":                                                                  false,
		"CREATE TABLE IF NOT EXISTS `app`.`t` (`id` int) DATA DIRECTORY = '/tmp/x'":                                                              false,
		"CREATE TABLE IF NOT EXISTS `app`.`u` (`id` int)":                                                                                        false,
		"CREATE TABLE IF NOT EXISTS `app`.`t` (`id` int, CONSTRAINT `f` FOREIGN KEY (`id`) REFERENCES `mysql`.`user` (`id`))":                    false,
		"DROP TABLE IF EXISTS `app`.`t`":                                                                                                         false,
	} {
		_, err := m.checkGenerated(stmt, target, label, "CREATE TABLE")
		if (err == nil) != ok {
			t.Errorf("checkGenerated(%q) = %v, want ok %v", stmt, err, ok)
		}
	}
}
