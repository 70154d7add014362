package review

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

var (
	cID   = forker.Column{Name: "id", Type: "int(11)", DataType: "int"}
	cName = forker.Column{Name: "name", Type: "varchar(10)", DataType: "varchar", Charset: "utf8mb4", Collation: "utf8mb4_bin"}
	cL1   = forker.Column{Name: "l1", DataType: "varchar", Charset: "latin1", Collation: "latin1_swedish_ci"}
	cSwe  = forker.Column{Name: "s", DataType: "varchar", Charset: "swe7", Collation: "swe7_swedish_ci"}
	cBlob = forker.Column{Name: "b", DataType: "blob"}
	cBit  = forker.Column{Name: "f", DataType: "bit"}
	cFlt  = forker.Column{Name: "x", DataType: "float"}
	cJSON = forker.Column{Name: "j", DataType: "json", Charset: "utf8mb4", Collation: "utf8mb4_bin"}
	cDate = forker.Column{Name: "d", DataType: "date"}
	cGen  = forker.Column{Name: "g", DataType: "int", Generated: true}
)

func TestSQLPieces(t *testing.T) {
	for _, tc := range []struct{ name, got, want string }{
		{"eqSQL none", eqSQL("a", "b", nil), "TRUE"},
		{"eqSQL", eqSQL("a", "b", []forker.Column{cID, cName}), "(a.`id` <=> b.`id` AND BINARY a.`name` <=> BINARY b.`name`)"},
		{"onSQL", onSQL("p", "f", []string{"id", "k"}), "f.`id` = p.`id` AND f.`k` = p.`k`"},
		{"jsonValue int", jsonValue("r", cID), "r.`id`"},
		{"jsonValue bit", jsonValue("r", cBit), "CAST(r.`f` AS UNSIGNED)"},
		{"jsonValue blob", jsonValue("r", cBlob), "TO_BASE64(r.`b`)"},
		{"jsonValue latin1", jsonValue("r", cL1), "CONVERT(r.`l1` USING utf8mb4)"},
		{"jsonValue utf8mb4", jsonValue("r", cName), "r.`name`"},
		{"jsonValue json", jsonValue("r", cJSON), "r.`j`"},
		{"jsonSQL", jsonSQL("r", []forker.Column{cID, cBlob}), "JSON_OBJECT('id', r.`id`, 'b', TO_BASE64(r.`b`))"},
		{"litSQL bit", litSQL("r", cBit), "IFNULL(CAST(r.`f` AS UNSIGNED), 'NULL')"},
		{"litSQL blob", litSQL("r", cBlob), "IF(r.`b` IS NULL, 'NULL', CONCAT('X''', HEX(r.`b`), ''''))"},
		{"litSQL float", litSQL("r", cFlt), "QUOTE(CAST(r.`x` AS DOUBLE))"},
		{"litSQL int", litSQL("r", cID), "IFNULL(CAST(r.`id` AS CHAR), 'NULL')"},
		{"litSQL swe7", litSQL("r", cSwe), "IF(r.`s` IS NULL, 'NULL', CONCAT('_swe7 X''', HEX(r.`s`), ''''))"},
		{"litSQL text", litSQL("r", cName), "IF(r.`name` IS NULL, 'NULL', IF(HEX(r.`name`) REGEXP '" + plainHex +
			"', CONCAT('''', r.`name`, ''''), CONCAT('_utf8mb4 X''', HEX(r.`name`), '''')))"},
		{"litSQL date", litSQL("r", cDate), "QUOTE(r.`d`)"},
		{"freeAlias free", freeAlias("op", []forker.Column{cID}), "op"},
		{"freeAlias taken", freeAlias("op", []forker.Column{{Name: "OP"}, {Name: "op_"}}), "op__"},
		{"abbreviate short", abbreviate("SELECT 1"), "SELECT 1"},
		{"abbreviate long", abbreviate(strings.Repeat("x", 130)), strings.Repeat("x", 120) + "…"},
		{"keyLiteral text", keyLiteral(cName, "'a'"), "CONVERT('a' USING `utf8mb4`) COLLATE `utf8mb4_bin`"},
		{"keyLiteral NULL", keyLiteral(cName, "NULL"), "NULL"},
		{"keyLiteral int", keyLiteral(cID, "1"), "1"},
		{"keyLiteral binary", keyLiteral(forker.Column{DataType: "varbinary", Charset: "binary", Collation: "binary"}, "X'00'"), "X'00'"},
		{"kindList", kindList([]rewrite.Kind{rewrite.KindCreateTable, rewrite.KindCreateView}), "CREATE TABLE or CREATE VIEW"},
		{"orUnknown", orUnknown(""), "a statement the proxy does not know"},
		{"orUnknown kind", orUnknown("INSERT"), "INSERT"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}

// TestSafeLiteral: only the literal forms litSQL gives (NULL, numbers,
// plain quoted ASCII, hexadecimal) pass checkLiterals.
func TestSafeLiteral(t *testing.T) {
	re := safeLiteral // the literal forms litSQL gives
	for _, tc := range []struct {
		lit  string
		safe bool
	}{
		{"NULL", true}, {"42", true}, {"-1.5e-3", true}, {"'plain text'", true}, {"X'00FF'", true}, {"_latin1 X'E9'", true},
		{"'it''s'", false}, {"'back\\slash'", false}, {"null", false}, {"1; DROP TABLE t", false}, {"_latin1 'x'", false},
		{"'tab\t'", false}, {"X'0g'", false},
	} {
		if got := re.MatchString(tc.lit); got != tc.safe {
			t.Errorf("safe(%q) = %v", tc.lit, got)
		}
		err := checkLiterals(rewrite.Table{DB: "app", Name: "t"}, []string{"1", tc.lit})
		if (err == nil) != tc.safe {
			t.Errorf("checkLiterals(%q) = %v", tc.lit, err)
		}
	}
}

func TestShapeHelpers(t *testing.T) {
	a := forker.Shape{Columns: []forker.Column{cID, cName, cGen}, Key: []string{"id"}}
	for _, tc := range []struct {
		name string
		b    forker.Shape
		same bool
		sh   []string
	}{
		{"same", forker.Shape{Columns: []forker.Column{{Name: "ID", Type: "int(11)"}, cName, cGen}, Key: []string{"ID"}}, true, []string{"id", "name"}},
		{"other type", forker.Shape{Columns: []forker.Column{{Name: "id", Type: "bigint(20)"}, cName, cGen}, Key: []string{"id"}}, false, []string{"id", "name"}},
		{"other key", forker.Shape{Columns: []forker.Column{cID, cName, cGen}, Key: []string{"name"}}, false, []string{"id", "name"}},
		{"column dropped", forker.Shape{Columns: []forker.Column{cID, cGen}, Key: []string{"id"}}, false, []string{"id"}},
		{"generated there", forker.Shape{Columns: []forker.Column{cID, {Name: "name", Generated: true}}, Key: []string{"id"}}, false, []string{"id"}},
	} {
		if got := sameColumns(a, tc.b); got != tc.same {
			t.Errorf("%s: sameColumns = %v", tc.name, got)
		}
		var names []string
		for _, c := range shared(a, tc.b) {
			names = append(names, c.Name)
		}
		if strings.Join(names, ",") != strings.Join(tc.sh, ",") {
			t.Errorf("%s: shared = %v, want %v", tc.name, names, tc.sh)
		}
	}
	if got := keyColumns(a, []string{"name", "nosuch", "id"}); len(got) != 2 || got[0].Name != "name" || got[1].Name != "id" {
		t.Errorf("keyColumns = %+v", got)
	}
	for dt, want := range map[string]bool{"int": true, "bigint": true, "decimal": true, "numeric": true, "float": false, "double": false, "varchar": false} {
		if exactNumber(dt) != want {
			t.Errorf("exactNumber(%s) = %v", dt, !want)
		}
	}
}

// reviewer is a Reviewer with what checkGenerated needs.
func reviewer() *Reviewer {
	names := sandbox.Names{Prefix: "_sqlfork", CaseSensitive: true}
	return New(Config{Prefix: "_sqlfork"}, zap.NewNop(), names, rewrite.NewEngine(0), rewrite.ParseServer(sessiontest.DefaultVersion),
		nil, nil, catalog.Triggers{})
}

func TestCheckGeneratedRefusals(t *testing.T) {
	m := reviewer()
	target := rewrite.Table{DB: "app", Name: "t"}
	label := func(t rewrite.Table) string { return "<" + t.String() + ">" }
	for _, tc := range []struct {
		name  string
		stmt  string
		kinds []rewrite.Kind
		want  string // part of the refusal; "" passes
		names bool   // names a reserved database
		reads int
	}{
		{name: "create table", stmt: "CREATE TABLE `app`.`t` (`id` int NOT NULL, PRIMARY KEY (`id`))", kinds: []rewrite.Kind{rewrite.KindCreateTable}},
		{name: "foreign key parent", stmt: "CREATE TABLE `app`.`t` (`id` int, FOREIGN KEY (`id`) REFERENCES `app`.`p` (`id`))",
			kinds: []rewrite.Kind{rewrite.KindCreateTable}, reads: 1},
		{name: "view reads", stmt: "CREATE VIEW `app`.`t` AS SELECT * FROM `app`.`u`", kinds: []rewrite.Kind{rewrite.KindCreateView}, reads: 1},
		{name: "two statements", stmt: "CREATE TABLE `app`.`t` (`id` int); DROP TABLE `app`.`u`", kinds: []rewrite.Kind{rewrite.KindCreateTable},
			want: "reads as 2 statements"},
		{name: "wrong kind", stmt: "DROP TABLE `app`.`t`", kinds: []rewrite.Kind{rewrite.KindCreateTable}, want: "reads as DROP TABLE, not CREATE TABLE"},
		{name: "writes another", stmt: "INSERT INTO `app`.`u` VALUES (1)", kinds: []rewrite.Kind{rewrite.KindInsert}, want: "writes <app.u>"},
		{name: "copies another's rows", stmt: "CREATE TABLE `app`.`t` AS SELECT * FROM `app`.`secret`", kinds: []rewrite.Kind{rewrite.KindCreateTable},
			want: "reads <app.secret>"},
		{name: "outside", stmt: "SELECT * FROM `app`.`t` INTO OUTFILE '/tmp/x'", kinds: []rewrite.Kind{rewrite.KindSelect},
			want: "reaches outside the database"},
		{name: "proxy database", stmt: "CREATE VIEW `app`.`t` AS SELECT * FROM `_sqlfork_meta`.`sandboxes`", kinds: []rewrite.Kind{rewrite.KindCreateView},
			want: "reads <_sqlfork_meta.sandboxes>, which is never exported or promoted", names: true},
		{name: "system schema", stmt: "CREATE VIEW `app`.`t` AS SELECT * FROM `mysql`.`user`", kinds: []rewrite.Kind{rewrite.KindCreateView},
			want: "never exported", names: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := m.checkGenerated(tc.stmt, target, label, tc.kinds...)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(g.reads) != tc.reads {
					t.Errorf("reads %v, want %d", g.reads, tc.reads)
				}
				return
			}
			var ge *generatedError
			if !errors.As(err, &ge) || !strings.Contains(ge.Error(), tc.want) || ge.names != tc.names {
				t.Errorf("error %v, want %q (names %v)", err, tc.want, tc.names)
			}
		})
	}
}

func TestReservedSchema(t *testing.T) {
	m := reviewer()
	for db, want := range map[string]string{"mysql": "the server's own schema `mysql`", "INFORMATION_SCHEMA": "the server's own schema",
		"_sqlfork_meta": "a database of the proxy's", "_SQLFORK_0badcafe_app": "a database of the proxy's", "app": ""} {
		if got := m.reservedSchema(db); !strings.Contains(got, want) || want == "" && got != "" {
			t.Errorf("reservedSchema(%q) = %q, want %q", db, got, want)
		}
	}
}

type obs struct{ diffed, promoted []string }

func (o *obs) Diffed(kind string, _ time.Duration) { o.diffed = append(o.diffed, kind) }
func (o *obs) Promoted(strategy, outcome string, _ int) {
	o.promoted = append(o.promoted, strategy+"/"+outcome)
}

func TestObserver(t *testing.T) {
	m := reviewer()
	if _, ok := m.observer().(nop); !ok {
		t.Errorf("observer before SetObserver: %T", m.observer())
	}
	o := &obs{}
	m.SetObserver(o)
	m.observer().Diffed("summary", 0)
	m.observer().Promoted("merge", "committed", 0)
	if len(o.diffed) != 1 || o.promoted[0] != "merge/committed" {
		t.Errorf("observer told %+v", o)
	}
	if m.promoteDial != nil {
		t.Error("a promote dialer before SetPromoteDialer")
	}
	m.SetPromoteDialer(sessiontest.NewUpstream().Dialer())
	if m.promoteDial == nil {
		t.Error("SetPromoteDialer did not install it")
	}
}
