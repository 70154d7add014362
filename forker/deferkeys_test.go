package forker

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// scriptConn answers SHOW CREATE TABLE with its texts in turn and
// @@-reads with one row of as many values; it records what it runs.
type scriptConn struct {
	creates []string
	ran     []string
}

func (s *scriptConn) Exec(_ context.Context, q string) (uint64, error) {
	s.ran = append(s.ran, q)
	return 0, nil
}

func (s *scriptConn) Query(_ context.Context, q string) ([][]*string, error) {
	s.ran = append(s.ran, q)
	v := "x"
	switch {
	case strings.HasPrefix(q, "SHOW CREATE TABLE"):
		text := s.creates[0]
		s.creates = s.creates[1:]
		return [][]*string{{&v, &text}}, nil
	case strings.HasPrefix(q, "SELECT @@"):
		row := make([]*string, strings.Count(q, "@@"))
		for i := range row {
			row[i] = &v
		}
		return [][]*string{row}, nil
	}
	return nil, nil
}

// TestDeferKeys: the plain keys of a staging table are dropped for its
// fill and added back after it, in order, as the server wrote them; a
// table with keys a rebuild could reorder, or partitions, keeps them; a
// definition that comes out different is rebuilt as a copy.
func TestDeferKeys(t *testing.T) {
	const (
		plain = "CREATE TABLE `f` (\n  `id` int(11) NOT NULL,\n  `a` int(11) DEFAULT NULL,\n  `b` varchar(9) DEFAULT NULL,\n" +
			"  PRIMARY KEY (`id`),\n  UNIQUE KEY `ub` (`b`),\n  KEY `k``a` (`a`) COMMENT 'x, (y)',\n  KEY `kb` (`b`(3),`a` DESC)\n) ENGINE=InnoDB"
		reversed = "CREATE TABLE `f` (\n  `id` int(11) NOT NULL,\n  `a` int(11) DEFAULT NULL,\n  `b` varchar(9) DEFAULT NULL,\n" +
			"  PRIMARY KEY (`id`),\n  UNIQUE KEY `ub` (`b`),\n  KEY `kb` (`b`(3),`a` DESC),\n  KEY `k``a` (`a`) COMMENT 'x, (y)'\n) ENGINE=InnoDB"
		fulltext    = "CREATE TABLE `f` (\n  `id` int(11) NOT NULL,\n  `t` text,\n  PRIMARY KEY (`id`),\n  KEY `kt` (`t`(4)),\n  FULLTEXT KEY `ft` (`t`)\n) ENGINE=InnoDB"
		partitioned = "CREATE TABLE `f` (\n  `id` int(11) NOT NULL,\n  `a` int(11),\n  PRIMARY KEY (`id`),\n  KEY `ka` (`a`)\n) ENGINE=InnoDB\n PARTITION BY HASH (`id`)\nPARTITIONS 2"
		noKeys      = "CREATE TABLE `f` (\n  `id` int(11) NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB"
		autoInc     = "CREATE TABLE `f` (\n  `c` varchar(9) NOT NULL,\n  `a` int(11) DEFAULT NULL,\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n" +
			"  PRIMARY KEY (`c`),\n  KEY `ka` (`a`),\n  KEY `kid` (`id`,`a`),\n  KEY `k``a` (`a`) COMMENT 'x, (y)',\n  KEY `kb` (`b`(3),`a` DESC)\n) ENGINE=InnoDB"
		autoLast = "CREATE TABLE `f` (\n  `c` varchar(9) NOT NULL,\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n  PRIMARY KEY (`c`),\n  KEY `ka` (`a`),\n  KEY `kid` (`id`)\n) ENGINE=InnoDB"
		period   = "CREATE TABLE `f` (\n  `id` int(11) NOT NULL,\n  `s` date NOT NULL,\n  `e` date NOT NULL,\n  PRIMARY KEY (`id`),\n  KEY `ks` (`s`),\n  PERIOD FOR `p` (`s`, `e`)\n) ENGINE=InnoDB"
	)
	staging, like := sqlname.Table{DB: "s", Name: "f"}, sqlname.Table{DB: "p", Name: "t"}
	for _, c := range []struct {
		name     string
		creates  []string // SHOW CREATE TABLE's answers: before the fill, after the keys are built
		drop     string   // the ALTER that defers the keys ("" for none)
		rebuilds bool
	}{
		{"plain keys", []string{plain, plain}, "ALTER TABLE `s`.`f` DROP KEY `k``a`, DROP KEY `kb`", false},
		{"built in another order", []string{plain, reversed}, "ALTER TABLE `s`.`f` DROP KEY `k``a`, DROP KEY `kb`", true},
		{"a FULLTEXT key beside", []string{fulltext}, "", false},
		{"partitioned", []string{partitioned}, "", false},
		{"no plain key", []string{noKeys}, "", false},
		{"after the AUTO_INCREMENT column's key", []string{autoInc, autoInc}, "ALTER TABLE `s`.`f` DROP KEY `k``a`, DROP KEY `kb`", false},
		{"the AUTO_INCREMENT column's key last", []string{autoLast}, "", false},
		{"a definition tabledef does not read", []string{period}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			conn := &scriptConn{creates: c.creates}
			d, err := deferKeys(ctx, conn, staging)
			if err != nil {
				t.Fatal(err)
			}
			alters := strings.Join(conn.ran[1:], "\n")
			if alters != c.drop {
				t.Fatalf("deferring ran %q, want %q", alters, c.drop)
			}
			conn.ran = nil
			quiet := func() func() {
				conn.ran = append(conn.ran, "-- copy-ups stopped")
				return func() { conn.ran = append(conn.ran, "-- copy-ups go on") }
			}
			if err := d.build(ctx, conn, staging, like, "`id`", quiet); err != nil {
				t.Fatal(err)
			}
			ran := strings.Join(conn.ran, "\n")
			if c.drop == "" {
				if ran != "" {
					t.Fatalf("building ran %q, want nothing", ran)
				}
				return
			}
			if want := "SET sql_mode = '" + fillModes + "', character_set_client = 'utf8mb4', collation_connection = 'utf8mb4_general_ci'\n" +
				"ALTER TABLE `s`.`f` ADD KEY `k``a` (`a`) COMMENT 'x, (y)', ADD KEY `kb` (`b`(3),`a` DESC)\n"; !strings.Contains(ran, want) {
				t.Errorf("building ran:\n%s\nwant in it:\n%s", ran, want)
			}
			copied := strings.Contains(ran, "CREATE TABLE `s`.`f_keys` LIKE `p`.`t`\nINSERT INTO `s`.`f_keys` (`id`) SELECT `id` FROM `s`.`f`\n")
			swapped := regexp.MustCompile("-- copy-ups stopped\n[^-]*\nDROP TABLE `s`.`f`\nRENAME TABLE `s`.`f_keys` TO `s`.`f`\n[^-]*-- copy-ups go on$").MatchString(ran)
			if copied != c.rebuilds || swapped != c.rebuilds || strings.Count(ran, "-- copy-ups stopped") != map[bool]int{true: 1}[c.rebuilds] {
				t.Errorf("rebuilt (copied %v, swapped with copy-ups stopped %v), want %v:\n%s", copied, swapped, c.rebuilds, ran)
			}
		})
	}
}
