package rewrite

import (
	"strings"
	"testing"
)

// TestDecodedCharsets checks that texts in single-byte character sets are
// read in Unicode, their names compared as the server's catalog holds
// them, and that rewrites are spliced into the client's own bytes.
func TestDecodedCharsets(t *testing.T) {
	const (
		koiTable = "\xd4\xc1\xc2\xcc\xc9\xc3\xc1" // таблица in koi8r
		cp1251T  = "\xf2\xe0\xe1\xeb\xe8\xf6\xe0" // таблица in cp1251
		latinT   = "caf\xe9"                      // café in latin1
	)
	r := mapResolver{
		{DB: "test", Name: "таблица"}: {DB: "_sqlfork_1_test", Name: "таблица"},
		{DB: "test", Name: "таб"}:     {DB: "_sqlfork_1_test", Name: "таб"},
		{DB: "test", Name: "café"}:    {DB: "_sqlfork_1_test", Name: "café"},
		{DB: "test", Name: "t1"}:      {DB: "_sqlfork_1_test", Name: "t1"},
		{DB: "test", Name: "ǆ"}:       {DB: "_sqlfork_1_test", Name: "ǆ"}, // not in koi8r
	}
	cases := []struct {
		name, charset, sql string
		want, refuse       string
		reads              string // the first table read, as the analysis names it
	}{
		{name: "koi8r drop", charset: "koi8r", sql: "DROP TABLE IF EXISTS " + koiTable + ", t1, t2",
			want: "DROP TABLE IF EXISTS `_sqlfork_1_test`.`" + koiTable + "`, `_sqlfork_1_test`.`t1`, t2"},
		{name: "koi8r create with names of columns and keys", charset: "koi8r",
			sql:  "create table \xd4\xc1\xc2 (\xcb\xcf\xcc0 int, key \xc9\xce\xc4\xc5\xcb\xd3 (\xcb\xcf\xcc0))",
			want: "create table `_sqlfork_1_test`.`\xd4\xc1\xc2` (\xcb\xcf\xcc0 int, key \xc9\xce\xc4\xc5\xcb\xd3 (\xcb\xcf\xcc0))"},
		{name: "koi8r select keeps literals and comments byte for byte", charset: "koi8r",
			sql:   "SELECT '\xff\x9a', " + koiTable + ".a /* \xd4 */ FROM " + koiTable + " -- \xc1\n",
			want:  "SELECT '\xff\x9a', " + koiTable + ".a /* \xd4 */ FROM `_sqlfork_1_test`.`" + koiTable + "` -- \xc1\n",
			reads: "test.таблица"},
		{name: "cp1251 backquoted", charset: "cp1251", sql: "SELECT * FROM `" + cp1251T + "` WHERE 1",
			want: "SELECT * FROM `_sqlfork_1_test`.`" + cp1251T + "` WHERE 1", reads: "test.таблица"},
		{name: "cp1251 reads koi8r bytes as other letters", charset: "cp1251", sql: "SELECT * FROM " + koiTable,
			want: "SELECT * FROM " + koiTable, reads: "test.ФБВМЙГБ"},
		{name: "latin1", charset: "latin1", sql: "INSERT INTO " + latinT + " VALUES ('\xe9')",
			want: "INSERT INTO `_sqlfork_1_test`.`" + latinT + "` VALUES ('\xe9')"},
		{name: "latin1 no-break space between tokens", charset: "latin1", sql: "SELECT 1 FROM\xa0" + latinT,
			want: "SELECT 1 FROM\xa0`_sqlfork_1_test`.`" + latinT + "`", reads: "test.café"},
		{name: "latin1 multiplication sign is no letter", charset: "latin1", sql: "SELECT 1 FROM t1\xd7",
			refuse: "does not read as part of a name"},
		{name: "cp1251 byte of no character in a name", charset: "cp1251", sql: "SELECT 1 FROM `a\x98`",
			refuse: "stands for no character"},
		{name: "cp1251 byte of no character in a string", charset: "cp1251", sql: "INSERT INTO t1 VALUES ('\x98')",
			want: "INSERT INTO `_sqlfork_1_test`.`t1` VALUES ('\x98')"},
		{name: "armscii8 apostrophe byte is no quote", charset: "armscii8", sql: "SELECT 1 FROM t1 WHERE a = '\xff'",
			want: "SELECT 1 FROM `_sqlfork_1_test`.`t1` WHERE a = '\xff'"},
		{name: "utf8mb4 unchanged", charset: "utf8mb4", sql: "SELECT * FROM таблица",
			want: "SELECT * FROM `_sqlfork_1_test`.`таблица`"},
		{name: "binary is not decoded", charset: "binary", sql: "SELECT * FROM " + koiTable, want: "SELECT * FROM " + koiTable,
			reads: "test.???????"},
		{name: "PREPARE text in koi8r", charset: "koi8r", sql: "PREPARE s FROM 'SELECT * FROM " + koiTable + "'",
			want: "PREPARE s FROM 'SELECT * FROM `_sqlfork_1_test`.`" + koiTable + "`'"},
	}
	e := NewEngine(0)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{DB: "test", Server: maria1011, Charset: c.charset}
			res := rewrittenOrRefused(t, e, c.sql, opts, r, c.want, c.refuse)
			if res == nil {
				return
			}
			if c.reads != "" {
				st := res.Analysis.Statements[0]
				if len(st.Reads) == 0 || st.Reads[0].DB+"."+st.Reads[0].Name != c.reads {
					t.Errorf("reads %v, want %s first", st.Reads, c.reads)
				}
			}
			// Every splice names the client's bytes it replaced.
			for _, sp := range res.Splices {
				if c.sql[sp.Start:sp.End] != res.SQL[sp.SentStart:sp.SentEnd] && !strings.Contains(res.SQL[sp.SentStart:sp.SentEnd], "_sqlfork_") {
					t.Errorf("splice %+v: %q -> %q", sp, c.sql[sp.Start:sp.End], res.SQL[sp.SentStart:sp.SentEnd])
				}
			}
		})
	}
}

// rewrittenOrRefused checks that e refuses sql with an error
// containing refuse, or (refuse "") rewrites it to want; the result, nil
// where refused.
func rewrittenOrRefused(t *testing.T, e *Engine, sql string, opts Options, r Resolver, want, refuse string) *Result {
	t.Helper()
	res, err := e.Rewrite(sql, opts, r)
	if refuse != "" {
		if err == nil || !strings.Contains(err.Error(), refuse) {
			t.Fatalf("got %v, want a refusal with %q", err, refuse)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.SQL != want {
		t.Errorf("rewritten\n%q, want\n%q", res.SQL, want)
	}
	return res
}

// TestDecodedNotEncodable: a physical name is written in the connection's
// character set, in ASCII texts too; one the set cannot write refuses the
// statement rather than sending other bytes.
func TestDecodedNotEncodable(t *testing.T) {
	cases := []struct {
		name, sql, db string
		want, refuse  string
	}{
		{name: "ASCII text, Cyrillic database", sql: "SELECT 1 FROM t1", db: "_sqlfork_1_тест",
			want: "SELECT 1 FROM `_sqlfork_1_\xd4\xc5\xd3\xd4`.`t1`"},
		{name: "ASCII text, database koi8r cannot write", sql: "SELECT 1 FROM t1", db: "_sqlfork_1_ǆ", refuse: "character set koi8r"},
		{name: "decoded text, database koi8r cannot write", sql: "SELECT '\xd4' FROM t1", db: "_sqlfork_1_ǆ", refuse: "character set koi8r"},
	}
	e := NewEngine(0)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mapResolver{{DB: "test", Name: "t1"}: {DB: c.db, Name: "t1"}}
			rewrittenOrRefused(t, e, c.sql, Options{DB: "test", Server: maria1011, Charset: "koi8r"}, r, c.want, c.refuse)
		})
	}
}

// TestDecodedLabels: label spans of a decoded text are offsets of the
// client's bytes, which Sent maps into the text sent.
func TestDecodedLabels(t *testing.T) {
	e := NewEngine(0)
	sql := "SELECT '\xd4\xc1', (SELECT 1 FROM \xd4\xc1\xc2) FROM t2"
	r := mapResolver{{DB: "test", Name: "таб"}: {DB: "_sqlfork_1_test", Name: "таб"}}
	res, err := e.Rewrite(sql, Options{DB: "test", Server: maria1011, Charset: "koi8r"}, r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sp := range res.Analysis.Statements[0].Labels {
		got = append(got, sql[sp[0]:sp[1]]+" => "+res.SQL[Sent(res.Splices, sp[0]):Sent(res.Splices, sp[1])])
	}
	want := []string{"'\xd4\xc1' => '\xd4\xc1'", "(SELECT 1 FROM \xd4\xc1\xc2) => (SELECT 1 FROM `_sqlfork_1_test`.`\xd4\xc1\xc2`)", "1 => 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("labels %q, want %q", got, want)
	}
}

func TestClientOriginal(t *testing.T) {
	nz, err := normalize("a\xd4b", Options{Charset: "koi8r"})
	if err != nil {
		t.Fatal(err)
	}
	ct, text, rerr := decodeClient("a\xd4b", nz, Options{Charset: "koi8r"})
	if rerr != nil || ct == nil || text != "aтb" {
		t.Fatalf("decodeClient: %v %q", rerr, text)
	}
	for off, want := range []int{0, 1, 1, 2, 3} {
		if got := ct.Original(off); got != want {
			t.Errorf("original(%d) = %d, want %d", off, got, want)
		}
	}
}

// FuzzDecodedRewrite runs any input through Engine.Rewrite as koi8r and
// latin1 text, with a resolver mapping Cyrillic and Latin names. It must
// not panic, and an accepted rewrite must keep every byte of the client's
// text outside its splices, which must cover the text in order.
func FuzzDecodedRewrite(f *testing.F) {
	for _, s := range []string{
		"DROP TABLE IF EXISTS \xd4\xc1\xc2\xcc\xc9\xc3\xc1, t1, t2",
		"create table \xd4\xc1\xc2 (\xcb\xcf\xcc0 int, key \xc9\xce\xc4 (\xcb\xcf\xcc0))",
		"SELECT '\xff', `\xd4\xc1\xc2`.a FROM \xd4\xc1\xc2 /* \xc1 */ -- \xd4\n",
		"PREPARE s FROM 'INSERT INTO \xd4\xc1\xc2 VALUES (1)'",
		"INSERT INTO caf\xe9 SELECT * FROM t1\xa0WHERE 1",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	r := mapResolver{
		{DB: "test", Name: "таб"}:  {DB: "_sqlfork_1_test", Name: "таб"},
		{DB: "test", Name: "café"}: {DB: "_sqlfork_1_test", Name: "café"},
		{DB: "test", Name: "t1"}:   {DB: "_sqlfork_1_test", Name: "t1"},
	}
	e := NewEngine(0)
	f.Fuzz(func(t *testing.T, sql string, koi bool) {
		defer watchdog(sql)()
		opts := Options{DB: "test", Server: maria1011, Charset: "latin1"}
		if koi {
			opts.Charset = "koi8r"
		}
		res, err := e.Rewrite(sql, opts, r)
		if err != nil {
			return
		}
		last, sent := 0, 0
		for _, sp := range res.Splices {
			if sp.Start < last || sp.End < sp.Start || sp.End > len(sql) || sp.SentStart-sent != sp.Start-last ||
				res.SQL[sent:sp.SentStart] != sql[last:sp.Start] {
				t.Fatalf("splice %+v breaks the client's text:\n in  %q\n out %q", sp, sql, res.SQL)
			}
			last, sent = sp.End, sp.SentEnd
		}
		if res.SQL[sent:] != sql[last:] {
			t.Fatalf("the end of the client's text changed:\n in  %q\n out %q", sql, res.SQL)
		}
	})
}

// TestDecodedCheckText: the text a refusal asks the server about is in the
// client's character set, as the server reads it, every time.
func TestDecodedCheckText(t *testing.T) {
	e := NewEngine(0)
	sql := "PREPARE s FROM 'SELECT 1 FROM \xd4\xc1\xc2; SELECT 2'"
	r := mapResolver{{DB: "test", Name: "таб"}: {DB: "_sqlfork_1_test", Name: "таб"}}
	for i := 0; i < 2; i++ {
		_, err := e.Rewrite(sql, Options{DB: "test", Server: maria1011, Charset: "koi8r"}, r)
		rf, ok := err.(*Refusal)
		if !ok || !rf.ServerCheck || rf.CheckText != "SELECT 1 FROM \xd4\xc1\xc2; SELECT 2" {
			t.Fatalf("try %d: got %#v, want a server check of the koi8r text", i, err)
		}
	}
}

// TestDecodeEncodeName: a name sent outside a statement (COM_FIELD_LIST's
// table) is read in the client's character set, and a name the proxy
// sends on the client's connection is written in it.
func TestDecodeEncodeName(t *testing.T) {
	for _, c := range []struct {
		cs, sent, name string
		ok             bool
	}{
		{"latin1", "t1", "t1", true},
		{"latin1", "\xc3\xa4", "Ã¤", true},
		{"koi8r", "\xd4\xc1\xc2", "таб", true},
		{"utf8mb4", "таб", "таб", true},
		{"utf8mb4", "\xff", "", false},
		{"sjis", "\x83\x5c", "", false},
		{"cp1251", "\x98", "", false}, // a byte of no character
	} {
		name, ok := DecodeName(c.sent, Options{Charset: c.cs})
		if name != c.name || ok != c.ok {
			t.Errorf("DecodeName(%q, %s) = %q, %v; want %q, %v", c.sent, c.cs, name, ok, c.name, c.ok)
		}
		if !c.ok {
			continue
		}
		if sent, ok := EncodeName(c.name, Options{Charset: c.cs}); sent != c.sent || !ok {
			t.Errorf("EncodeName(%q, %s) = %q, %v; want %q", c.name, c.cs, sent, ok, c.sent)
		}
	}
	if _, ok := EncodeName("日本", Options{Charset: "latin1"}); ok {
		t.Error("EncodeName wrote 日本 in latin1")
	}
}
