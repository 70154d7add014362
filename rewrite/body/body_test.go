package body

import (
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// pieces is an Analyzer that records what it is given, failing on any
// piece holding "bad".
type pieces struct {
	r    *Reader
	seen []string
}

func (p *pieces) piece(kind, s string) string {
	p.seen = append(p.seen, kind+" "+strings.TrimSpace(s))
	if strings.Contains(s, "bad") {
		return "bad " + kind
	}
	return ""
}

func (p *pieces) Table(start, end int) string { return p.piece("table", p.r.Text[start:end]) }
func (p *pieces) Expr(start, end int) string  { return p.piece("expr", p.r.Text[start:end]) }
func (p *pieces) Statement(from, to int) string {
	return p.piece("stmt", p.r.Text[p.r.Toks[from].Start:p.r.Toks[to-1].End])
}

// read reads the body text, returning the pieces analysed and why it
// cannot read it ("" when it can).
func read(text string, function bool) ([]string, string) {
	p := &pieces{}
	p.r = &Reader{Text: text, Toks: lexer.Lex(text, lexer.Options{}), Analyzer: p, Function: function}
	end, why := p.r.Statement(0, 0)
	if why == "" && end != len(p.r.Toks) {
		why = "stopped early"
	}
	return p.seen, why
}

func TestRead(t *testing.T) {
	cases := []struct {
		body     string
		function bool
		pieces   []string
		why      bool
	}{
		{"BEGIN SELECT 1; END", false, []string{"stmt SELECT 1"}, false},
		{"BEGIN NOT ATOMIC DECLARE x INT DEFAULT (SELECT 1); SET x = 2; END", false,
			[]string{"expr (SELECT 1)", "stmt SET x = 2"}, false},
		{"lbl: BEGIN IF a THEN SELECT 1; ELSEIF b THEN SELECT 2; ELSE SELECT 3; END IF; END lbl", false,
			[]string{"expr a", "stmt SELECT 1", "expr b", "stmt SELECT 2", "stmt SELECT 3"}, false},
		{"BEGIN CASE v WHEN 1 THEN SELECT 1; ELSE SELECT 2; END CASE; END", false,
			[]string{"expr v", "expr 1", "stmt SELECT 1", "stmt SELECT 2"}, false},
		{"BEGIN WHILE a DO SELECT 1; END WHILE; REPEAT SELECT 2; UNTIL b END REPEAT; LOOP LEAVE x; END LOOP; END", false,
			[]string{"expr a", "stmt SELECT 1", "stmt SELECT 2", "expr b"}, false},
		{"BEGIN DECLARE c CURSOR FOR SELECT a FROM t; DECLARE CONTINUE HANDLER FOR NOT FOUND SET d = 1; OPEN c; FETCH c INTO x; CLOSE c; END", false,
			[]string{"stmt SELECT a FROM t", "stmt SET d = 1"}, false},
		{"BEGIN DECLARE c CURSOR (p INT) FOR SELECT p; OPEN c(1); FOR r IN c DO SELECT 1; END FOR; END", false,
			[]string{"stmt SELECT p", "expr 1", "stmt SELECT 1"}, false},
		{"BEGIN FOR i IN 1 .. 3 DO SELECT i; END FOR; FOR r IN (SELECT 1) DO SELECT 2; END FOR; END", false,
			[]string{"expr 1", "expr 3", "stmt SELECT i", "stmt SELECT 1", "stmt SELECT 2"}, false},
		{"BEGIN DECLARE r ROW TYPE OF t; DECLARE v TYPE OF db.t.c; END", false, []string{"table t", "table db.t"}, false},
		{"BEGIN DECLARE HANDLER FOR SQLSTATE '42000', SQLEXCEPTION BEGIN END; END", false, nil, false},
		{"RETURN (SELECT 1)", true, []string{"expr (SELECT 1)"}, false},
		{"RETURN 1", false, nil, true},
		{"BEGIN SELECT bad; END", false, []string{"stmt SELECT bad"}, true},
		{"BEGIN END IF", false, nil, true},
		{"BEGIN SELECT 1", false, []string{"stmt SELECT 1"}, true},
		{"x: SELECT 1", false, nil, true},
		{"BEGIN SIGNAL SQLSTATE '45000'; GET DIAGNOSTICS @n = NUMBER; END", false, nil, false},
	}
	for _, c := range cases {
		got, why := read(c.body, c.function)
		if strings.Join(got, "|") != strings.Join(c.pieces, "|") || (why != "") != c.why {
			t.Errorf("%q: pieces %q, why %q; want %q, refused %v", c.body, got, why, c.pieces, c.why)
		}
	}
}

// TestTooDeep reads a body nested deeper than the server's parser takes.
func TestTooDeep(t *testing.T) {
	text := strings.Repeat("BEGIN ", ServerMaxNesting+2) + strings.Repeat("END; ", ServerMaxNesting+2)
	r := &Reader{Text: text, Toks: lexer.Lex(text, lexer.Options{}), Analyzer: &pieces{}}
	if _, why := r.Statement(0, 0); why == "" || !r.TooDeep {
		t.Errorf("nesting past ServerMaxNesting: why %q, TooDeep %v", why, r.TooDeep)
	}
}
