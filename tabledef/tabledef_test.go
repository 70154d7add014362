package tabledef

import (
	"slices"
	"testing"
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
		{name: "an AUTO_INCREMENT column added with its key",
			sandbox: "CREATE TABLE `t` (\n" +
				"  `id` int(11) NOT NULL AUTO_INCREMENT,\n" +
				"  `a` int(11) DEFAULT NULL,\n" +
				"  `b` varchar(10) DEFAULT NULL,\n" +
				"  `p` int(11) DEFAULT NULL,\n" +
				"  `n` int(11) NOT NULL AUTO_INCREMENT,\n" +
				"  PRIMARY KEY (`id`),\n" +
				"  UNIQUE KEY `n` (`n`),\n" +
				"  KEY `ka` (`a`),\n" +
				"  KEY `fk_p` (`p`),\n" +
				"  CONSTRAINT `fk_p` FOREIGN KEY (`p`) REFERENCES `parent` (`id`),\n" +
				"  CONSTRAINT `chk` CHECK (`a` > 0)\n" +
				") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci",
			// Its key in the same ALTER: the server refuses one without (1075).
			pre: []string{"ADD COLUMN IF NOT EXISTS `n` int(11) NOT NULL AUTO_INCREMENT AFTER `p`", "ADD UNIQUE KEY IF NOT EXISTS `n` (`n`)"}},
	} {
		from, err := Parse(prod)
		if err != nil {
			t.Fatal(err)
		}
		to, err := Parse(c.sandbox)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pre, post, _ := Alter(from, to)
		if !slices.Equal(pre, c.pre) || !slices.Equal(post, c.post) {
			t.Errorf("%s:\n pre  %q\n want %q\n post %q\n want %q", c.name, pre, c.pre, post, c.post)
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
	td, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range td.Items {
		got = append(got, string(it.Kind)+":"+it.Name)
	}
	want := []string{"column:id", "column:INT#", "column:msg\nCOLUMN z INT PARTITION BY HASH(id)(PARTITION a/*",
		"column:msg\n*/DATA DIRECTORY='/var/tmp/evil',PARTITION b)#", "primary:PRIMARY", "index:k,\n(x)", "check:c)\n"}
	if !slices.Equal(got, want) {
		t.Errorf("items %q\nwant  %q", got, want)
	}
	if td.Options != "ENGINE=InnoDB DEFAULT CHARSET=latin1 COMMENT='PARTITION BY HASH (x) PARTITIONS 2'" ||
		td.Partition != "PARTITION BY HASH (`id`)\nPARTITIONS 2" {
		t.Errorf("options %q, partition %q", td.Options, td.Partition)
	}
	for _, bad := range []string{"CREATE VIEW `v` AS SELECT 1", "CREATE TABLE `t` (\n  `a` int,\n  PERIOD FOR p (`a`, `b`)\n)",
		"CREATE TABLE `t` (\n  `a` int COMMENT 'open\n)", "CREATE TABLE `t"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) read it", bad)
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
		if got := ReplaceQualifiers(in, dbs); got != want {
			t.Errorf("ReplaceQualifiers(%q) = %q, want %q", in, got, want)
		}
	}
}
