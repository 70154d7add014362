package integration

// FuzzLexerDifferential checks rewrite.Normalize against the real MariaDB
// lexer. Run the seeds as a test, or fuzz (one mariadbd per worker):
//
//	CI=true go test ./integration -run FuzzLexerDifferential -count=1 -v
//	CI=true go test ./integration -run '^$' -fuzz FuzzLexerDifferential -fuzztime 60s -v
//
// # The question
//
// The proxy reads every statement itself (to rewrite and check it) before
// the server does. Normalize returns the statement as the proxy's parser
// sees it: comments the server skips blanked, executable-comment markers
// blanked (their contents are code), trail bytes of multi-byte characters
// that look like ASCII punctuation replaced. If its idea of which bytes are
// code differs from the server's, the proxy checks one statement while the
// server runs another.
//
// # The oracle
//
// Each input becomes ONE statement "SELECT 0" followed by fragments, among
// them markers ",@vK:=K" (K = 1…30, each used at most once). Markers sit
// in code, and also inside strings, quoted identifiers and comments of
// every kind, so a marker runs exactly when the server reads its bytes as
// code. The statement is sent straight to MariaDB (text protocol, the raw
// bytes, no proxy) after resetting @v1…@v30 and setting the session's
// character set and sql_mode (each a statement of its own); when it
// succeeds, "SELECT @v1,…,@v30" gives S, the set of markers the server
// executed. The markers are reset to a string, not to NULL: a marker that
// runs may assign NULL ("@v1:=1 -@x" is @v1 := (1 - @x)).
//
// The proxy's prediction P: Normalize the statement with the same
// character set, sql_mode flags and server version, parse the result with
// the TiDB parser exactly as rewrite.Engine does, and collect the
// user-variable assignments @vK := … in the AST. When the TiDB parser
// rejects the normalized text (the proxy then treats it as an unparseable
// statement), P comes from a token-level scan of the normalized text that
// knows only '…', "…" and `…` quoting (with the sql_mode flags) and finds
// "@vK:=" outside quotes. P must equal S. A Normalize error is a refusal:
// always safe, counted (the share of server-accepted texts refused is
// reported) and otherwise ignored.
//
// For every input, whether or not the server accepts it, Normalize must
// not panic, and when it succeeds:
//   - its result N has the statement's length;
//   - every byte of N that differs from the statement is a space (a
//     blanked comment, marker or white-space byte) or a replaced trail
//     byte: the statement's byte there is ASCII, follows a byte >= 0x80,
//     and is replaced by an ASCII letter, digit or '_' (a byte no reader
//     takes for a quote, backslash, comment or operator);
//   - Normalize(N) succeeds and equals N except, possibly, at such trail
//     positions of N (an ASCII byte after a byte >= 0x80), replaced again
//     by a letter, digit or '_'.
//
// # The generator
//
// An input is either a literal case or a generator program:
//   - "lit\x00" + charset + "\x00" + mode byte (bit 0 ANSI_QUOTES, bit 1
//     NO_BACKSLASH_ESCAPES) + body: the statement is "SELECT 0" + body.
//     The hand-written seeds use this form, and the fuzzer's byte
//     mutations of them explore the neighbourhood of each trick.
//   - anything else is a stream of choices (each byte one decision; past
//     its end a PCG seeded from a hash of the input continues), so a
//     mutation of one byte changes one decision. The program picks a
//     client character set (weighted towards the ones with multi-byte
//     characters whose trail bytes can be ASCII), sql_mode flags, and a
//     tree of fragments: markers (optionally aliased with '…', "…", `…`
//     or a bare name holding multi-byte characters), other user
//     variables (@name with multi-byte characters, @'…', @"…", @`…`),
//     string items ('…', "…", N'…', _latin1'…', x'…', b'…', adjacent
//     literals) whose contents mix text, marker text, doubled quotes,
//     backslash escapes, valid multi-byte characters (preferring trail
//     bytes 0x5C, 0x60, 0x40 …), lone lead bytes and comment openers;
//     comments of every form (/* */, /*!, /*!NNNNN and /*!NNNNNN below,
//     equal to and above the server's version and in MySQL's 50700-99999,
//     /*!NNNNNNN, /*! with 1-4 digits, /*M!, /*M!NNNNN[N], /*+ */, "-- ",
//     "--" + control or high byte, #) holding more fragments; white space
//     (also high bytes some character sets call space); and, rarely,
//     hostile single tokens (a lone quote, backslash, "*/", "/*", a lead
//     byte, "\n", NUL, …). Fragments are complete units, so most
//     statements are valid whichever way a comment is read.
//
// # Statistics
//
// With -v, the seed run logs its statistics at the end; when fuzzing, each
// worker process (whose output the fuzzing engine discards) writes its
// counts to a file every two seconds and the coordinating process prints
// their sum every ten seconds and at the end: executions, the share the
// server accepted, the share of those Normalize refused (and why), how P
// was computed, and acceptance per character set. The target is only
// useful if the server accepts a good share of the statements: the
// generator alone reaches about half.
//
// Three environment variables help to study failures:
//   - SQLFORK_LEXFUZZ_NORMALIZE=identity replaces Normalize by the identity
//     function (what a proxy unaware of comments and character sets would
//     see), to check that the oracle finds the differences;
//   - SQLFORK_LEXFUZZ_SURVEY=file appends every failure to file instead of
//     failing, so that one fuzzing run collects many;
//   - SQLFORK_LEXFUZZ_TRACE=1 logs every case (statement, what the server
//     did, what the proxy sees): with -v, a commented tour of the seeds.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	tidbmysql "github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions for the parser, as in rewrite

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// lexMarkers is how many marker variables (@v1 … @vN) a statement may use.
const lexMarkers = 30

// lexLiteralPrefix starts an input that spells its statement out.
const lexLiteralPrefix = "lit\x00"

// FuzzLexerDifferential checks that the proxy reads which bytes of a
// statement are code as MariaDB does (see the comment at the top of the
// file).
func FuzzLexerDifferential(f *testing.F) {
	h := newLexHarness(f)
	for _, s := range lexSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h.run(t, data)
	})
}

// ---------------------------------------------------------------------------
// Cases

// lexCase is one statement and the session it runs in.
type lexCase struct {
	charset   string
	ansi, nbe bool
	stmt      string
}

func (c *lexCase) sqlMode() string {
	var m []string
	if c.ansi {
		m = append(m, "ANSI_QUOTES")
	}
	if c.nbe {
		m = append(m, "NO_BACKSLASH_ESCAPES")
	}
	return strings.Join(m, ",")
}

func (c *lexCase) opts(srv rewrite.Server) rewrite.Options {
	return rewrite.Options{Charset: c.charset, ANSIQuotes: c.ansi, NoBackslashEscapes: c.nbe, Server: srv}
}

// lexLit builds a literal input: the statement is "SELECT 0" + body.
func lexLit(charset string, ansi, nbe bool, body string) []byte {
	mode := byte('0')
	if ansi {
		mode |= 1
	}
	if nbe {
		mode |= 2
	}
	return []byte(lexLiteralPrefix + charset + "\x00" + string(mode) + body)
}

// decode turns an input into a case (see the file comment).
func (h *lexHarness) decode(data []byte) lexCase {
	if rest, ok := bytes.CutPrefix(data, []byte(lexLiteralPrefix)); ok {
		name, body, _ := bytes.Cut(rest, []byte{0})
		c := lexCase{charset: "utf8mb4"}
		if h.usable[string(name)] {
			c.charset = string(name)
		}
		if len(body) > 0 {
			c.ansi, c.nbe = body[0]&1 != 0, body[0]&2 != 0
			body = body[1:]
		}
		c.stmt = "SELECT 0" + string(body)
		return c
	}
	return h.generate(data)
}

// ---------------------------------------------------------------------------
// Seeds: each trick spelled out (the expected outcome is the server's; the
// comments say what it is on MariaDB 10.11).

func lexSeeds() [][]byte {
	u, g := "utf8mb4", "gbk"
	seeds := [][]byte{
		// Version comments: below the server's version run, above are
		// skipped, 50700-99999 are skipped unless /*M!.
		lexLit(u, false, false, " /*!50000 ,@v1:=1 */ /*!99999 ,@v2:=2 */ ,@v3:=3"),
		lexLit(u, false, false, " /*!40101,@v1:=1*/ /*!32302 ,@v2:=2 */ /*!00000 ,@v3:=3 */"),
		lexLit(u, false, false, " /*!50699 ,@v1:=1 */ /*!50700 ,@v2:=2 */ /*M!50700 ,@v3:=3 */ /*!80000 ,@v4:=4 */"),
		// Six-digit versions around the server's (10.11.19 = 101119).
		lexLit(u, false, false, " /*!101118 ,@v1:=1 */ /*!101119 ,@v2:=2 */ /*!101120 ,@v3:=3 */ /*!999999 ,@v4:=4 */"),
		lexLit(u, false, false, " /*!100000 ,@v1:=1 */ /*!110000 ,@v2:=2 */ /*!050700 ,@v3:=3 */ /*!012345 ,@v4:=4 */"),
		// Seven digits: six are the version, the seventh is code.
		lexLit(u, false, false, " ,/*!1000001 ,@v1:=1 */ ,@v2:=2"),
		lexLit(u, false, false, " ,1/*!1011201 ,@v1:=1 */ ,@v2:=2"),
		// Fewer than five digits: not a version, the digits are code.
		lexLit(u, false, false, " ,/*!123 ,@v1:=1 */ ,@v2:=2"),
		lexLit(u, false, false, " ,@v1:=1+/*!12,@v2:=2*/ ,@v3:=3"),
		lexLit(u, false, false, " /*!*/ ,@v1:=1 /*!,@v2:=2*/"),
		// MariaDB-only executable comments.
		lexLit(u, false, false, " /*M! ,@v1:=1 */ /*M!100000 ,@v2:=2 */ /*M!999999 ,@v3:=3 */ /*M!50000 ,@v4:=4 */"),
		lexLit(u, false, false, " /*M!101119 ,@v1:=1 */ /*M!101120 ,@v2:=2 */ /*M!80000,@v3:=3*/"),
		// Quotes and comment ends: inside a comment the server runs, a
		// string protects "*/"; inside one it skips, it does not.
		lexLit(u, false, false, " /*!50000 ,'*/' ,@v1:=1 */ ,@v2:=2"),
		lexLit(u, false, false, " /*!99999 '*/ ,@v1:=1 ,'x'"),
		lexLit(u, false, false, " /* ' */ ,@v1:=1 /* ' */ ,@v2:=2"),
		lexLit(u, false, false, " ,'/*' ,@v1:=1 ,'*/' ,@v2:=2 AS `*/`"),
		lexLit(u, false, false, " /*!50000 ,@v1:=1 AS `*/ ,@v2:=2 ` */ ,@v3:=3"),
		lexLit(u, false, false, " /*!99999 ,@v1:=1 AS `*/ ,@v2:=2 ` */ ,@v3:=3"),
		// Nested comments: a plain comment ends at its first "*/"; a
		// skipped version comment allows one level; an executed one holds
		// plain comments.
		lexLit(u, false, false, " /* /* ,@v1:=1 */ ,@v2:=2"),
		lexLit(u, false, false, " /*!99999 /* ,@v1:=1 */ ,@v2:=2 */ ,@v3:=3"),
		lexLit(u, false, false, " /*!50000 /* ,@v1:=1 */ ,@v2:=2 */ ,@v3:=3"),
		lexLit(u, false, false, " /*!50000 ,@v1:=1 /*!99999 ,@v2:=2 */ ,@v3:=3 */ ,@v4:=4"),
		lexLit(u, false, false, " /*!50000 ,@v1:=1 /*!40000 ,@v2:=2 */ ,@v3:=3 */ ,@v4:=4"),
		lexLit(u, false, false, " /*M!50000 ,@v1:=1 /*M! ,@v2:=2 */ ,@v3:=3 */ ,@v4:=4"),
		lexLit(u, false, false, " /*+ ,@v1:=1 */ ,@v2:=2"),
		// In an executed comment, a line comment hides "*/".
		lexLit(u, false, false, " /*!50000 -- */\n ,@v1:=1 */ ,@v2:=2 /*!50000 # */ ,@v3:=3\n */"),
		lexLit(u, false, false, " /*!99999 -- */\n ,@v1:=1 ,@v2:=2"),
		// Blanking an executable comment's markers must not make a "--"
		// before them a comment: the server reads "1 - - 1".
		lexLit(u, false, false, " ,1--/*!*/1 ,@v1:=1"),
		lexLit(u, false, false, " /*!50000 ,1--*/1 ,@v1:=1"),
		lexLit(u, false, false, " ,1--/*M!50000*/1 ,@v1:=1"),
		lexLit(u, false, false, " ,1--/* */1 ,@v1:=1 --/*!99999 */@v2:=2"),
		// Line comments: "--" needs white space or a control byte after
		// it; "#" and "--" end at "\n" (not at "\r").
		lexLit(u, false, false, " --\x01 ,@v1:=1\n ,@v2:=2"),
		lexLit(u, false, false, " --\t,@v1:=1\n ,@v2:=2 --\x7f,@v3:=3\n ,@v4:=4"),
		lexLit(u, false, false, " ,@v1:=1--1 ,@v2:=2--\n ,@v3:=3"),
		lexLit(u, false, false, " # ,@v1:=1\r ,@v2:=2\n ,@v3:=3 #"),
		lexLit(u, false, false, " ,@v1:=1 -- ,@v2:=2"),
		lexLit(u, false, false, " ,@v1:=1 --"),
		lexLit("latin1", false, false, " ,@v1:=1 --\xa0,@v2:=2\n ,@v3:=3"),
		lexLit("latin1", false, false, " ,@v1:=1 --\x85,@v2:=2\n ,@v3:=3"),
		lexLit("latin1", false, false, " ,@v1:=1\xa0,@v2:=2"),
		lexLit(u, false, false, " # '\n ,@v1:=1 -- \"\n ,@v2:=2"),
		// GBK: 0xBF5C is one character whose second byte is a backslash,
		// so it does not escape the quote after it.
		lexLit(g, false, false, " ,'\xbf\x5c' ,@v1:=1 -- '\n ,@v2:=2"),
		lexLit(u, false, false, " ,'\xbf\x5c' ,@v1:=1 -- '\n ,@v2:=2"),
		lexLit(g, false, false, " ,_latin1'\xbf\x5c' ,@v1:=1 -- '\n ,@v2:=2"),
		lexLit(g, false, false, " ,N'\xbf\x5c' ,@v1:=1 -- '\n ,@v2:=2"),
		lexLit(g, false, false, " ,\"\xbf\x5c\" ,@v1:=1 -- \"\n ,@v2:=2"),
		// A backslash escapes one byte, even a lead byte: its trail 0x5C
		// is then a backslash of its own.
		lexLit(g, false, false, " ,'\\\xbf\x5c' ,@v1:=1 -- '\n ,@v2:=2"),
		// A lead byte before a quote is no character: the quote ends the
		// string.
		lexLit(g, false, false, " ,'\x81' ,@v1:=1 ,'\xfe' ,@v2:=2"),
		// Backquoted names: 0xBF60 holds a backquote.
		lexLit(g, false, false, " ,@v1:=1 AS `\xbf\x60` ,@v2:=2 -- `\n ,@v3:=3"),
		// Unquoted names and variable names with such characters.
		// (after "@" the server reads bytes, not characters: "@\xbf`"
		// opens a quoted name)
		lexLit(g, false, false, " ,@v1:=1 AS \xbf\x5c ,@v2:=2 ,@'\xbf\x5c':=1 ,@v3:=3"),
		lexLit(g, false, false, " ,@\xbf\x60:=1 ,@v1:=1 -- `\n ,@v2:=2"),
		lexLit("big5", false, false, " ,'\xa5\x5c' ,@v1:=1 -- '\n ,@v2:=2"),
		lexLit("sjis", false, false, " ,'\x95\x5c' ,@v1:=1 -- '\n ,@v2:=2"),
		lexLit("cp932", false, false, " ,'\x95\x5c' ,@v1:=1 -- '\n ,@v2:=2 AS `\x83\x60` ,@v3:=3"),
		lexLit("euckr", false, false, " ,'\xa1\x5c' ,@v1:=1 -- '\n ,@v2:=2"),
		lexLit("ujis", false, false, " ,'\x8f\xa1\xa1\\' ,@v1:=1 -- '\n ,@v2:=2"),
		lexLit("binary", false, false, " ,'\xbf\x5c' ,@v1:=1 -- '\n ,@v2:=2"),
		// NO_BACKSLASH_ESCAPES: a backslash is a plain character.
		lexLit(u, false, true, " ,'a\\' ,@v1:=1 ,'b\\' ,@v2:=2"),
		lexLit(u, false, false, " ,'a\\' ,@v1:=1 ,'b\\' ,@v2:=2 -- '\n"),
		lexLit(g, false, true, " ,'\xbf\x5c' ,@v1:=1 ,'\\' ,@v2:=2"),
		// ANSI_QUOTES: "…" is a name.
		lexLit(u, true, false, " ,@v1:=1 \"a'b\" ,@v2:=2 AS \"',@v3:=3'\" ,@v4:=4 \"x\"\"y\""),
		lexLit(u, false, false, " ,@v1:=1 \"a'b\" ,@v2:=2 AS \"',@v3:=3'\" ,@v4:=4 \"x\"\"y\""),
		lexLit(u, true, true, " ,@v1:=1 AS \"\\\" ,'\\' ,@v2:=2"),
		// (a backslash in a "name" is a plain character: the name is a\"#)
		lexLit(u, true, false, " ,@v1:=1 AS \"a\\\"\"#\" ,@v2:=2"),
		lexLit(u, false, false, " ,@v1:=1 AS `a\\``#` ,@v2:=2 ,@v3:=3 AS \"a\\\"\"#\" ,@v4:=4"),
		// A marker that runs may assign NULL.
		lexLit(u, false, false, " -- ,@v1:=\n ,@v2:=2 -@nothing"),
		// Literals of other forms.
		lexLit(u, false, false, " ,x'41' ,@v1:=1 ,b'01' ,@v2:=2 ,X'' ,n'\\'' ,@v3:=3 ,'a' 'b' \"c\" ,@v4:=4"),
		lexLit(u, false, false, " ,'\xf0\x9f\x98\x80' ,@v1:=1 AS `\xe2\x82\xac``` ,@v2:=2"),
		// NUL: inside a string it is a character; in code the server stops.
		lexLit(u, false, false, " ,'\x00' ,@v1:=1 ,@v2:=2"),
		lexLit(u, false, false, " ,@v1:=1 \x00 ,@v2:=2"),
		lexLit(u, false, false, " # \x00 ,@v1:=1\n ,@v2:=2"),
		lexLit(u, false, false, " ,@v1:=1\x00"),
		lexLit(u, false, false, " ,@v1:=1 -- \x00"),
		// A trailing semicolon.
		lexLit(u, false, false, " ,@v1:=1;"),
		// Generator programs.
		nil,
		[]byte("gbk"),
		[]byte("\x02\x00\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0\xc0\xd0\xe0\xf0"),
		[]byte("sqlfork lexer differential fuzzing seed"),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 16 {
		b := make([]byte, 8+r.IntN(64))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// ---------------------------------------------------------------------------
// Generator

// lexChooser makes the generator's decisions: the input's bytes first, then
// a PCG seeded from a hash of the input.
type lexChooser struct {
	data []byte
	pos  int
	rng  *rand.Rand
}

func newLexChooser(data []byte) *lexChooser {
	hs := fnv.New64a()
	hs.Write(data)
	s := hs.Sum64()
	return &lexChooser{data: data, rng: rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))}
}

func (c *lexChooser) byte() byte {
	if c.pos < len(c.data) {
		b := c.data[c.pos]
		c.pos++
		return b
	}
	return byte(c.rng.Uint32())
}

// intn returns a choice in [0, n).
func (c *lexChooser) intn(n int) int {
	if n <= 1 {
		return 0
	}
	if n <= 256 {
		return int(c.byte()) % n
	}
	return (int(c.byte())<<8 | int(c.byte())) % n
}

func (c *lexChooser) chance(pct int) bool { return c.intn(100) < pct }

// pick returns an index chosen with the given weights.
func (c *lexChooser) pick(weights ...int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := c.intn(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

func lexOneOf[T any](c *lexChooser, xs ...T) T { return xs[c.intn(len(xs))] }

// lexScheme is how the generator builds characters of a character set (its
// own knowledge, independent of the proxy's tables).
type lexScheme int

const (
	lexSingle lexScheme = iota // one byte per character
	lexUTF8
	lexUTF8MB3
	lexGBK
	lexBig5
	lexSJIS
	lexEUCKR
	lexGB2312
	lexUJIS
	lexOtherMB // a multi-byte set the generator does not know: pairs of high bytes
)

// lexSchemes are the multi-byte character sets the generator knows.
var lexSchemes = map[string]lexScheme{
	"utf8mb4": lexUTF8, "utf8mb3": lexUTF8MB3, "utf8": lexUTF8MB3,
	"gbk": lexGBK, "big5": lexBig5, "sjis": lexSJIS, "cp932": lexSJIS,
	"euckr": lexEUCKR, "gb2312": lexGB2312, "ujis": lexUJIS, "eucjpms": lexUJIS,
}

// lexCharsetWeights weights the character sets the generator picks.
// Character sets not listed (any other the server or the proxy knows)
// weigh lexOtherWeight each.
var lexCharsetWeights = map[string]int{
	"utf8mb4": 20, "latin1": 10, "gbk": 16, "big5": 10, "sjis": 8, "cp932": 8,
	"euckr": 6, "ujis": 5, "binary": 5, "eucjpms": 3, "gb2312": 3, "utf8mb3": 3,
}

const lexOtherWeight = 1

// lexGen builds one statement.
type lexGen struct {
	c         *lexChooser
	charset   string
	scheme    lexScheme
	ansi, nbe bool
	server    int // the server's version, for version comments near it
	out       []byte
	next      int // next marker number
	budget    int // fragments left
}

// lexCtx is where a fragment goes.
type lexCtx struct {
	depth   int
	line    bool // inside a -- or # comment: a line break would end it
	block   bool // inside a /* */ comment: "*/" may end it
	comment bool // inside some comment (which the server may run or skip)
}

func (h *lexHarness) generate(data []byte) lexCase {
	c := newLexChooser(data)
	w := make([]int, len(h.charsets))
	for i, cs := range h.charsets {
		w[i] = cs.weight
	}
	cs := h.charsets[c.pick(w...)]
	g := &lexGen{c: c, charset: cs.name, scheme: cs.scheme, server: h.server.Version, next: 1}
	switch c.pick(55, 15, 15, 15) {
	case 1:
		g.ansi = true
	case 2:
		g.nbe = true
	case 3:
		g.ansi, g.nbe = true, true
	}
	g.budget = 4 + c.intn(40)
	g.out = append(g.out, "SELECT 0"...)
	g.seq(lexCtx{}, 1+c.intn(10))
	switch c.pick(70, 8, 6, 6, 4, 3, 3) {
	case 1:
		g.space(lexCtx{})
	case 2:
		g.out = append(g.out, lexOneOf(c, "--", " --", " -- x", "--\t")...) // a comment to the end
	case 3:
		g.out = append(g.out, lexOneOf(c, "#", " #x", " # '")...)
	case 4:
		g.out = append(g.out, lexOneOf(c, ";", "; ", " ;\n", ";;")...)
	case 5: // unclosed
		g.emit(lexOneOf(c, " /*", " /*!50000 ", " /*!99999", " '", "`", " \""))
		g.emit(g.markerText())
	case 6: // NUL, which ends what the server reads
		g.emit(lexOneOf(c, "\x00", " \x00 ", "\x00#"))
		g.emit(g.markerText())
	}
	return lexCase{charset: g.charset, ansi: g.ansi, nbe: g.nbe, stmt: string(g.out)}
}

func (g *lexGen) emit(s string) { g.out = append(g.out, s...) }

// seq emits up to n fragments.
func (g *lexGen) seq(ctx lexCtx, n int) {
	for range n {
		if g.budget <= 0 || len(g.out) > 4000 {
			return
		}
		g.budget--
		g.fragment(ctx)
	}
}

func (g *lexGen) fragment(ctx lexCtx) {
	c := g.c
	hostile := 2
	if ctx.comment {
		hostile = 10
	}
	commentW := 28
	if ctx.depth >= 4 {
		commentW = 0
	}
	switch c.pick(34, 16, commentW, 10, hostile, 4) {
	case 0:
		g.marker(ctx)
	case 1:
		g.stringItem(ctx)
	case 2:
		g.comment(ctx)
	case 3:
		g.space(ctx)
	case 4:
		g.hostile(ctx)
	case 5:
		g.userVar(ctx)
	}
}

// userVar emits ",@name:=N" for a variable that is no marker: a name with
// multi-byte characters, or quoted ('…', "…", `…`) around anything.
func (g *lexGen) userVar(ctx lexCtx) {
	c := g.c
	g.emit(",@")
	switch c.pick(30, 25, 15, 15, 15) {
	case 0:
		g.emit(lexOneOf(c, "x", "_1", "$a", "x.y", "a1"))
	case 1:
		g.bareName()
	case 2:
		g.str(ctx, '\'')
	case 3:
		g.ident(ctx, '`')
	case 4:
		g.str(ctx, '"')
	}
	g.emit(lexOneOf(c, ":=1", " := 2", ":=@v", ":='x'"))
}

// bareName emits an unquoted name that may hold multi-byte characters
// (whose trail bytes may look like ASCII punctuation).
func (g *lexGen) bareName() {
	c := g.c
	if c.chance(50) {
		g.emit(lexOneOf(c, "a", "B", "_", "x1"))
	}
	for range 1 + c.intn(3) {
		if c.chance(60) {
			g.char(true)
		} else {
			g.emit(lexOneOf(c, "a", "z", "9", "_", "$"))
		}
	}
}

// markerText is ",@vK:=K" with the next K ("" when all are used).
func (g *lexGen) markerText() string {
	if g.next > lexMarkers {
		return ""
	}
	k := g.next
	g.next++
	return fmt.Sprintf(",@v%d:=%d", k, k)
}

// marker emits a marker, maybe aliased.
func (g *lexGen) marker(ctx lexCtx) {
	c := g.c
	m := g.markerText()
	if m == "" {
		g.space(ctx)
		return
	}
	g.emit(m)
	switch c.pick(60, 30, 6, 4) {
	case 1:
		g.emit(lexOneOf(c, " AS ", " ", " as ", "", "\tAS\n"))
		switch c.pick(40, 30, 30, 12) {
		case 0:
			g.str(ctx, '\'')
		case 1:
			g.ident(ctx, '"') // a string, or a name under ANSI_QUOTES
		case 2:
			g.ident(ctx, '`')
		case 3:
			if g.out[len(g.out)-1] != ' ' {
				g.emit(" ")
			}
			g.bareName()
			g.emit(" ")
		}
	case 2:
		// Digits that are code only if the comment runs: "K+NN".
		g.emit("+/*!")
		g.emit(strconv.Itoa(1000 + c.intn(9000))[:1+c.intn(4)])
		g.seq(lexCtx{depth: ctx.depth + 1, block: true, comment: true, line: ctx.line}, c.intn(3))
		g.emit("*/")
	case 3:
		g.emit(lexOneOf(c, "--1", "-1", "--\n1", " - -1", "#\n"))
	}
}

// stringItem emits ",literal" (maybe followed by adjacent literals and an
// alias).
func (g *lexGen) stringItem(ctx lexCtx) {
	c := g.c
	g.emit(lexOneOf(c, ",", ", ", ",\n"))
	if ctx.line && g.out[len(g.out)-1] == '\n' {
		g.out[len(g.out)-1] = ' '
	}
	g.literal(ctx)
	for c.chance(12) {
		g.emit(lexOneOf(c, " ", "", "\n", " /**/ "))
		if ctx.line && g.out[len(g.out)-1] == '\n' {
			g.out[len(g.out)-1] = ' '
		}
		if ctx.block && bytes.HasSuffix(g.out, []byte("/**/ ")) { // "*/" would end the comment
			g.out = g.out[:len(g.out)-5]
		}
		g.str(ctx, lexOneOf[byte](c, '\'', '\'', '"'))
	}
	if c.chance(20) {
		g.emit(lexOneOf(c, " AS ", " "))
		if c.chance(50) {
			g.ident(ctx, '`')
		} else {
			g.ident(ctx, '"')
		}
	}
}

// literal emits one string-like literal.
func (g *lexGen) literal(ctx lexCtx) {
	c := g.c
	switch c.pick(40, 15, 8, 8, 6, 3) {
	case 0:
		g.str(ctx, '\'')
	case 1:
		if g.ansi {
			g.str(ctx, '\'') // "…" would name a column
		} else {
			g.str(ctx, '"')
		}
	case 2:
		g.emit(lexOneOf(c, "N", "n"))
		g.str(ctx, '\'')
	case 3:
		g.emit(lexOneOf(c, "_latin1", "_binary", "_utf8mb4", "_latin1 ", "_"+g.charset))
		g.str(ctx, '\'')
	case 4:
		g.emit(lexOneOf(c, "x'", "X'"))
		for range c.intn(6) {
			g.emit(lexOneOf(c, "00", "41", "5C", "27", "bf", "Ff", "2A2F"))
		}
		g.emit("'")
	case 5:
		g.emit(lexOneOf(c, "b'", "B'"))
		for range c.intn(9) {
			g.emit(lexOneOf(c, "0", "1"))
		}
		g.emit("'")
	}
}

// str emits a complete string literal quoted with q (under ANSI_QUOTES a
// '"' makes it a name: use ident for that).
func (g *lexGen) str(ctx lexCtx, q byte) {
	c := g.c
	g.out = append(g.out, q)
	for range c.intn(8) {
		switch c.pick(20, 14, 6, 8, 12, 10, 4, 5, 4, 3, 1) {
		case 0: // text
			g.text(ctx, q)
		case 1: // marker text: code only to a reader that lost track
			g.emit(g.markerText())
		case 2: // doubled quote
			g.out = append(g.out, q, q)
		case 3: // the other quotes
			g.emit(lexOneOf(c, "\"", "'", "`", "``"))
			if b := g.out[len(g.out)-1]; b == q {
				g.out = append(g.out, q) // keep it closed
			}
		case 4: // backslash escapes
			g.backslash(ctx, q)
		case 5: // characters whose bytes may look like ASCII
			g.char(true)
		case 6: // a lead byte without its trail (or a broken sequence)
			g.leadByte()
		case 7: // comment openers, which mean nothing in a string
			g.commentText(ctx)
		case 8: // line breaks and other control bytes
			if ctx.line && !c.chance(5) {
				g.emit("\t")
			} else {
				g.emit(lexOneOf(c, "\n", "\r\n", "\t", "\x0b", "\x1a"))
			}
		case 9: // a random high byte
			g.out = append(g.out, byte(0x80+c.intn(128)))
		case 10: // NUL
			g.emit("\x00")
		}
	}
	// Under NO_BACKSLASH_ESCAPES a backslash may end the string.
	if g.nbe && c.chance(15) {
		g.emit("\\")
	}
	g.out = append(g.out, q)
}

// backslash emits a backslash escape (or, under NO_BACKSLASH_ESCAPES, a
// backslash that is a plain character).
func (g *lexGen) backslash(ctx lexCtx, q byte) {
	c := g.c
	g.emit("\\")
	if g.nbe {
		// A plain character: whatever follows must not be the quote,
		// unless doubled.
		if c.chance(20) {
			g.out = append(g.out, q, q)
		}
		return
	}
	switch c.pick(30, 30, 15, 10, 10, 5) {
	case 0:
		g.out = append(g.out, q)
	case 1:
		g.emit(lexOneOf(c, "\\", "n", "0", "'", "\"", "`", "%", "_", "Z", "x", "*", "/", "-", "#"))
	case 2: // a backslash before a multi-byte character escapes only its first byte
		g.char(true)
	case 3:
		g.out = append(g.out, byte(0x80+c.intn(128)))
	case 4:
		if ctx.line {
			g.emit("t")
		} else {
			g.emit("\n")
		}
	case 5:
		g.emit("\\\\")
	}
}

// text emits a run of printable ASCII other than q and '\'.
func (g *lexGen) text(ctx lexCtx, q byte) {
	const alphabet = "abcxyzABC0189 _-+=,.:;()[]{}<>!?$%&|^~@*/#"
	c := g.c
	for range 1 + c.intn(6) {
		b := alphabet[c.intn(len(alphabet))]
		if b == q {
			b = 'q'
		}
		if ctx.block && (b == '/' && len(g.out) > 0 && g.out[len(g.out)-1] == '*' ||
			b == '*' && len(g.out) > 0 && g.out[len(g.out)-1] == '/') {
			b = '.'
		}
		g.out = append(g.out, b)
	}
}

// commentText emits comment-like text inside a string or name.
func (g *lexGen) commentText(ctx lexCtx) {
	c := g.c
	s := lexOneOf(c, "/*", "/*!", "/*!50000", "/*M!", "-- ", "--", "#", "*/", "/*+", "--\x01")
	if s == "*/" && ctx.block && !c.chance(10) {
		s = "*"
	}
	g.emit(s)
}

// char emits a valid character of the character set; special prefers ones
// with an ASCII trail byte that looks like punctuation.
func (g *lexGen) char(special bool) {
	c := g.c
	rng := func(lo, hi int) byte { return byte(lo + c.intn(hi-lo+1)) }
	// trail picks a trail byte from [lo, hi] ranges, preferring specials.
	trail := func(ranges ...[2]int) byte {
		if special && c.chance(60) {
			var ok []byte
			for _, b := range []byte{0x5C, 0x60, 0x40, 0x5B, 0x5D, 0x5E, 0x5F, 0x7B, 0x7C, 0x7D, 0x7E} {
				for _, r := range ranges {
					if int(b) >= r[0] && int(b) <= r[1] {
						ok = append(ok, b)
					}
				}
			}
			if len(ok) > 0 {
				return ok[c.intn(len(ok))]
			}
		}
		r := ranges[c.intn(len(ranges))]
		return rng(r[0], r[1])
	}
	switch g.scheme {
	case lexSingle:
		g.out = append(g.out, rng(0x80, 0xFF))
	case lexUTF8, lexUTF8MB3:
		maxLen := 3
		if g.scheme == lexUTF8 {
			maxLen = 4
		}
		var r rune
		switch 2 + c.intn(maxLen-1) {
		case 2:
			r = rune(0x80 + c.intn(0x800-0x80))
		case 3:
			r = rune(0x800 + c.intn(0x10000-0x800))
			if r >= 0xD800 && r <= 0xDFFF {
				r = 0x20AC
			}
		case 4:
			r = rune(0x10000 + c.intn(0x110000-0x10000))
		}
		g.out = fmt.Appendf(g.out, "%c", r)
	case lexGBK:
		g.out = append(g.out, rng(0x81, 0xFE), trail([2]int{0x40, 0x7E}, [2]int{0x80, 0xFE}))
	case lexBig5:
		g.out = append(g.out, rng(0xA1, 0xF9), trail([2]int{0x40, 0x7E}, [2]int{0xA1, 0xFE}))
	case lexSJIS:
		if c.chance(15) {
			g.out = append(g.out, rng(0xA1, 0xDF)) // half-width katakana
			return
		}
		lead := rng(0x81, 0x9F)
		if c.chance(30) {
			lead = rng(0xE0, 0xFC)
		}
		g.out = append(g.out, lead, trail([2]int{0x40, 0x7E}, [2]int{0x80, 0xFC}))
	case lexEUCKR:
		g.out = append(g.out, rng(0x81, 0xFE), trail([2]int{0x41, 0x5A}, [2]int{0x61, 0x7A}, [2]int{0x81, 0xFE}))
	case lexGB2312:
		g.out = append(g.out, rng(0xA1, 0xF7), rng(0xA1, 0xFE))
	case lexUJIS:
		switch c.intn(4) {
		case 0:
			g.out = append(g.out, 0x8E, rng(0xA1, 0xDF))
		case 1:
			g.out = append(g.out, 0x8F, rng(0xA1, 0xFE), rng(0xA1, 0xFE))
		default:
			g.out = append(g.out, rng(0xA1, 0xFE), rng(0xA1, 0xFE))
		}
	case lexOtherMB:
		g.out = append(g.out, rng(0x81, 0xFE), trail([2]int{0x40, 0x7E}, [2]int{0x80, 0xFE}))
	}
}

// leadByte emits a byte that starts a multi-byte character, alone.
func (g *lexGen) leadByte() {
	c := g.c
	switch g.scheme {
	case lexUTF8, lexUTF8MB3:
		g.out = append(g.out, lexOneOf[byte](c, 0xC3, 0xE2, 0xF0, 0xC0, 0xFF, 0xED))
	case lexUJIS:
		g.out = append(g.out, lexOneOf[byte](c, 0x8E, 0x8F, 0xA4, 0xFE))
	default:
		g.out = append(g.out, lexOneOf[byte](c, 0x81, 0xBF, 0xA5, 0x95, 0xE0, 0xFE, 0xA1))
	}
}

// ident emits a quoted name (or, for '"' outside ANSI_QUOTES, a string).
func (g *lexGen) ident(ctx lexCtx, q byte) {
	if q == '"' && !g.ansi {
		g.str(ctx, '"')
		return
	}
	c := g.c
	g.out = append(g.out, q)
	n := 0
	for range 1 + c.intn(5) {
		switch c.pick(30, 14, 8, 6, 14, 6, 8, 3) {
		case 0:
			g.text(ctx, q)
		case 1:
			g.emit(g.markerText())
		case 2:
			g.out = append(g.out, q, q)
		case 3:
			g.emit(lexOneOf(c, "'", "\"", "`"))
			if g.out[len(g.out)-1] == q {
				g.out = append(g.out, q)
			}
		case 4:
			g.char(true)
		case 5:
			g.emit("\\") // a plain character in a name
		case 6:
			g.commentText(ctx)
		case 7:
			g.leadByte()
		}
		n++
	}
	if g.out[len(g.out)-1] == ' ' {
		g.emit("_") // names may not end in a space
	}
	g.out = append(g.out, q)
}

// lexVersions picks a 5- or 6-digit version for a version comment.
func (g *lexGen) version() string {
	c := g.c
	srv := g.server
	if srv <= 0 {
		srv = 101119
	}
	switch c.pick(14, 10, 6, 12, 8, 4, 4) {
	case 0: // old MySQL versions every server runs
		return lexOneOf(c, "32302", "40000", "40003", "40014", "40100", "40101", "40103", "40111",
			"50000", "50001", "50003", "50013", "50017", "50100", "50117", "50500", "50503", "50604", "50699", "00000", "00001")
	case 1: // MySQL 5.7 and later: MariaDB skips /*! but runs /*M!
		return lexOneOf(c, "50700", "50701", "50708", "50717", "57000", "80000", "80013", "80016", "80023", "80100", "99999")
	case 2:
		return fmt.Sprintf("%05d", c.intn(100000))
	case 3: // around the server's version
		return strconv.Itoa(srv + c.intn(5) - 2)
	case 4: // six digits
		return lexOneOf(c, "100000", "100100", "100200", "100300", "100500", "100600", "101100", "101200",
			"110000", "110402", "999999", "050700", "012345", "050000", "000000")
	case 5:
		return strconv.Itoa(100000 + c.intn(900000))
	default: // seven digits: the seventh is code
		return strconv.Itoa(srv+c.intn(3)-1) + strconv.Itoa(c.intn(10))
	}
}

// comment emits a comment holding more fragments.
func (g *lexGen) comment(ctx lexCtx) {
	c := g.c
	in := lexCtx{depth: ctx.depth + 1, line: ctx.line, block: true, comment: true}
	n := c.intn(4)
	sp := func() {
		if c.chance(70) {
			g.emit(" ")
		}
	}
	switch c.pick(14, 7, 20, 10, 3, 4, 8, 4, 4, 10, 6, 4, 2, 10) {
	case 0:
		g.emit("/*")
		sp()
	case 1:
		g.emit("/*!")
	case 2:
		g.emit("/*!" + g.version())
		sp()
	case 3:
		g.emit("/*!" + g.version6())
		sp()
	case 4:
		g.emit("/*!" + g.version() + lexOneOf(c, "0", "1", "9"))
		sp()
	case 5: // 1-4 digits: code, so make them an item of their own
		g.emit(",/*!" + strconv.Itoa(1000 + c.intn(9000))[:1+c.intn(4)])
		sp()
	case 6:
		g.emit("/*M!")
		if c.chance(70) {
			g.emit(g.version())
		}
		sp()
	case 7:
		g.emit(",/*M!" + strconv.Itoa(1000 + c.intn(9000))[:1+c.intn(4)])
		sp()
	case 8:
		g.emit("/*+")
		sp()
	case 9, 10, 11, 12, 13:
		g.lineComment(ctx, c.intn(5))
		return
	}
	g.seq(in, n)
	if g.out[len(g.out)-1] == '/' {
		g.emit(" ") // not "/*/"
	}
	g.emit("*/")
}

func (g *lexGen) version6() string {
	for {
		v := g.version()
		if len(v) == 6 {
			return v
		}
		if g.c.chance(50) {
			return strconv.Itoa(100000 + g.c.intn(900000))
		}
	}
}

// lineComment emits a -- or # comment; kind picks its opener.
func (g *lexGen) lineComment(ctx lexCtx, kind int) {
	c := g.c
	in := lexCtx{depth: ctx.depth + 1, line: true, block: ctx.block, comment: true}
	switch kind {
	case 0:
		g.emit("-- ")
	case 1: // "--" and a control byte
		g.emit("--")
		g.out = append(g.out, lexOneOf[byte](c, '\t', '\r', '\x0b', '\x0c', '\x01', '\x1f', '\x7f', '\x1b'))
	case 2: // "--" and a high byte: a comment only where the set calls it space or control
		g.emit("--")
		g.out = append(g.out, lexOneOf[byte](c, 0xA0, 0x85, 0x80, 0xFF, byte(0x80+c.intn(128))))
	case 3:
		g.emit("#")
	case 4:
		g.emit(lexOneOf(c, "--\n", "#\n", "-- \r\n", "#\r"))
		if ctx.line {
			g.out[len(g.out)-1] = ' '
		}
		return
	}
	if ctx.block && c.chance(25) {
		// In code (an executable comment the server runs), the line
		// comment hides the "*/"; in a comment it skips, it ends it.
		g.emit(lexOneOf(c, " */", "*/ ", "'*/'"))
	}
	g.seq(in, c.intn(4))
	if ctx.line {
		return // the enclosing line comment's end ends this one too
	}
	if c.chance(10) {
		g.emit("\r") // not an end
	}
	g.emit("\n")
}

// space emits white space.
func (g *lexGen) space(ctx lexCtx) {
	c := g.c
	s := lexOneOf(c, " ", " ", "  ", "\t", "\n", "\r", "\x0c", "\x0b", "\r\n", "\xa0", "\x85", "\x1a")
	if ctx.line && strings.Contains(s, "\n") {
		s = " "
	}
	g.emit(s)
}

// hostile emits a token that tends to confuse lexers.
func (g *lexGen) hostile(ctx lexCtx) {
	c := g.c
	switch c.intn(22) {
	case 0:
		g.emit("'")
	case 1:
		g.emit("\"")
	case 2:
		g.emit("`")
	case 3:
		g.emit("\\")
	case 4:
		g.emit("*/")
	case 5:
		g.emit("/*")
	case 6:
		g.leadByte()
	case 7:
		g.out = append(g.out, byte(0x80+c.intn(128)))
	case 8:
		g.emit("\n")
	case 9:
		if c.chance(30) {
			g.emit("\x00")
		} else {
			g.emit(" ")
		}
	case 10:
		g.emit(lexOneOf(c, "--", "-", "- -", "---"))
	case 11:
		g.emit("#")
	case 12:
		g.emit(";")
	case 13:
		g.emit(lexOneOf(c, "/*!", "/*M!", "M!", "!"))
	case 14:
		g.emit(lexOneOf(c, "*", "/", "/*/", "*/*"))
	case 15:
		g.emit(lexOneOf(c, "@", "@@", "@'", "@`"))
	case 16:
		g.char(true)
	case 17:
		g.emit(lexOneOf(c, "''", "\"\"", "``"))
	case 18:
		g.emit(lexOneOf(c, "\\'", "\\\"", "\\`"))
	case 19:
		g.emit(lexOneOf(c, "x'", "N'", "_latin1'", "b'2'"))
	case 20:
		g.emit("\r")
	case 21:
		g.emit(lexOneOf(c, "1", "0x", ".", "e"))
	}
}

// ---------------------------------------------------------------------------
// Harness

// lexCharset is a client character set the generator may pick.
type lexCharset struct {
	name   string
	scheme lexScheme
	weight int
}

// lexStats counts what a process saw.
type lexStats struct {
	Execs         int            `json:"execs"`
	ServerOK      int            `json:"server_ok"`
	ServerErr     int            `json:"server_err"`
	Refused       int            `json:"refused"`        // Normalize errors, all inputs
	RefusedOK     int            `json:"refused_ok"`     // … among server-accepted ones
	ByAST         int            `json:"by_ast"`         // P from the TiDB parser's AST
	ByTokens      int            `json:"by_tokens"`      // P from the token scan
	Markers       int            `json:"markers"`        // |S| summed over accepted inputs
	Mismatches    int            `json:"mismatches"`     // P != S (the parser's view), or S not within P (tokens)
	OverRead      int            `json:"over_read"`      // token view: code markers that did not run as assignments
	Skipped       int            `json:"skipped"`        // AST view: markers the server may skip, and did
	Failures      int            `json:"failures"`       // failures of any kind (survey mode goes on)
	CharsetExecs  map[string]int `json:"charset_execs"`  // executions per character set
	CharsetOK     map[string]int `json:"charset_ok"`     // … the server accepted
	CharsetRefuse map[string]int `json:"charset_refuse"` // … of those, refused by Normalize
	Reasons       map[string]int `json:"reasons"`        // refusals of server-accepted texts by message
}

func (s *lexStats) add(o *lexStats) {
	s.Execs += o.Execs
	s.ServerOK += o.ServerOK
	s.ServerErr += o.ServerErr
	s.Refused += o.Refused
	s.RefusedOK += o.RefusedOK
	s.ByAST += o.ByAST
	s.ByTokens += o.ByTokens
	s.Markers += o.Markers
	s.Mismatches += o.Mismatches
	s.OverRead += o.OverRead
	s.Skipped += o.Skipped
	s.Failures += o.Failures
	for _, p := range []struct {
		dst *map[string]int
		src map[string]int
	}{
		{&s.CharsetExecs, o.CharsetExecs}, {&s.CharsetOK, o.CharsetOK}, {&s.CharsetRefuse, o.CharsetRefuse},
		{&s.Reasons, o.Reasons},
	} {
		if *p.dst == nil {
			*p.dst = map[string]int{}
		}
		for k, v := range p.src {
			(*p.dst)[k] += v
		}
	}
}

func (s *lexStats) String() string {
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "execs=%d server-accepted=%d (%.1f%%) refused-by-Normalize=%d of accepted (%.1f%%; %d of all) "+
		"predicted-by-ast=%d by-tokens=%d markers-executed=%d (%.1f per accepted) mismatches=%d over-read=%d skipped=%d failures=%d",
		s.Execs, s.ServerOK, pct(s.ServerOK, s.Execs), s.RefusedOK, pct(s.RefusedOK, s.ServerOK), s.Refused,
		s.ByAST, s.ByTokens, s.Markers, float64(s.Markers)/max(1, float64(s.ServerOK)), s.Mismatches, s.OverRead, s.Skipped, s.Failures)
	names := make([]string, 0, len(s.CharsetExecs))
	for n := range s.CharsetExecs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return s.CharsetExecs[names[i]] > s.CharsetExecs[names[j]] })
	b.WriteString("\n  per charset (execs/accepted%/refused% of accepted):")
	for i, n := range names {
		if i%6 == 0 {
			b.WriteString("\n   ")
		}
		fmt.Fprintf(&b, " %s=%d/%.0f%%/%.0f%%", n, s.CharsetExecs[n], pct(s.CharsetOK[n], s.CharsetExecs[n]),
			pct(s.CharsetRefuse[n], s.CharsetOK[n]))
	}
	reasons := slices.Collect(maps.Keys(s.Reasons))
	sort.Slice(reasons, func(i, j int) bool { return s.Reasons[reasons[i]] > s.Reasons[reasons[j]] })
	if len(reasons) > 0 {
		b.WriteString("\n  why Normalize refused server-accepted texts:")
	}
	for i, r := range reasons {
		if i == 8 {
			fmt.Fprintf(&b, "\n    … (%d more reasons)", len(reasons)-i)
			break
		}
		fmt.Fprintf(&b, "\n    %6d %s", s.Reasons[r], r)
	}
	return b.String()
}

// lexReason is a refusal's message without its details (offsets, names
// of characters sets and the advice), to count refusals by kind.
func lexReason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, " (at byte"); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.Index(msg, "sqlfork-proxy: "); i >= 0 {
		msg = msg[i+len("sqlfork-proxy: "):]
	}
	return lexShorten(msg)
}

// lexHarness holds the connection to MariaDB and the statistics of one
// process.
type lexHarness struct {
	mu       sync.Mutex
	db       *sql.DB
	conn     *sql.Conn
	version  string
	server   rewrite.Server
	charsets []lexCharset
	usable   map[string]bool
	parser   *parser.Parser
	identity bool
	survey   string // SQLFORK_LEXFUZZ_SURVEY: failures go there, fuzzing goes on
	trace    bool   // SQLFORK_LEXFUZZ_TRACE: log every case
	cases    uint64 // statements run so far (see lexUnset)

	stats     lexStats
	statsFile string // a fuzzing worker's file, "" otherwise
	lastWrite time.Time
}

func newLexHarness(f *testing.F) *lexHarness {
	dbs, _ := env(f)
	db, err := sql.Open("mysql", dbs.DSN(""))
	if err != nil {
		f.Fatal(err)
	}
	db.SetMaxIdleConns(1)
	f.Cleanup(func() { db.Close() })
	h := &lexHarness{db: db, usable: map[string]bool{}, parser: parser.New()}
	h.stats.add(&lexStats{})
	h.identity = os.Getenv("SQLFORK_LEXFUZZ_NORMALIZE") == "identity"
	h.trace = os.Getenv("SQLFORK_LEXFUZZ_TRACE") != ""
	if p := os.Getenv("SQLFORK_LEXFUZZ_SURVEY"); p != "" {
		h.survey, _ = filepath.Abs(p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.connect(ctx); err != nil {
		f.Fatalf("connect to MariaDB: %v", err)
	}
	f.Cleanup(func() {
		if h.conn != nil {
			h.conn.Close()
		}
	})
	if err := h.conn.QueryRowContext(ctx, "SELECT VERSION()").Scan(&h.version); err != nil {
		f.Fatal(err)
	}
	h.server = rewrite.ParseServer(h.version)
	if h.server.Version == 0 {
		f.Fatalf("cannot read server version %q", h.version)
	}

	// The client character sets: the server's (less those that cannot be
	// a client's) and the proxy's, each checked with SET NAMES.
	maxlen := map[string]int{}
	rows, err := h.conn.QueryContext(ctx, "SELECT CHARACTER_SET_NAME, MAXLEN FROM information_schema.CHARACTER_SETS")
	if err != nil {
		f.Fatal(err)
	}
	for rows.Next() {
		var n string
		var l int
		if err := rows.Scan(&n, &l); err != nil {
			f.Fatal(err)
		}
		maxlen[n] = l
	}
	if err := rows.Err(); err != nil {
		f.Fatal(err)
	}
	names := map[string]bool{}
	for n := range maxlen {
		names[n] = true
	}
	for _, n := range rewrite.KnownCharsets() {
		names[n] = true
	}
	var skipped []string
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if _, err := h.conn.ExecContext(ctx, "SET NAMES "+n); err != nil {
			skipped = append(skipped, n)
			continue
		}
		w, ok := lexCharsetWeights[n]
		if !ok {
			w = lexOtherWeight
		}
		sch, ok := lexSchemes[n]
		if !ok {
			sch = lexSingle
			if maxlen[n] > 1 {
				sch = lexOtherMB
			}
		}
		h.charsets = append(h.charsets, lexCharset{name: n, scheme: sch, weight: w})
		h.usable[n] = true
	}
	if len(h.charsets) == 0 {
		f.Fatal("no usable client character set")
	}

	fuzzing := lookupFlag("test.fuzz") != ""
	worker := lookupFlag("test.fuzzworker") == "true"
	switch {
	case worker:
		dir := lexStatsDir(os.Getppid())
		if err := os.MkdirAll(dir, 0o755); err == nil {
			h.statsFile = filepath.Join(dir, strconv.Itoa(os.Getpid())+".json")
		}
		f.Cleanup(func() { h.writeStats(true) })
	case fuzzing:
		// The coordinating process: print the workers' sums.
		dir := lexStatsDir(os.Getpid())
		os.RemoveAll(dir)
		f.Logf("MariaDB %s (%+v); %d client character sets (not usable: %v); workers' statistics in %s",
			h.version, h.server, len(h.charsets), skipped, dir)
		done := make(chan struct{})
		var wg sync.WaitGroup
		if testing.Verbose() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tick := time.NewTicker(10 * time.Second)
				defer tick.Stop()
				for {
					select {
					case <-done:
						return
					case <-tick.C:
						if s, n := lexReadStats(dir); n > 0 {
							fmt.Printf("lexer fuzz (%d worker processes): %s\n", n, s)
						}
					}
				}
			}()
		}
		f.Cleanup(func() {
			close(done)
			wg.Wait()
			if s, n := lexReadStats(dir); n > 0 {
				f.Logf("lexer fuzz totals (%d worker processes): %s", n, s)
			}
			os.RemoveAll(dir)
		})
	default:
		f.Logf("MariaDB %s (%+v); %d client character sets (not usable: %v)", h.version, h.server, len(h.charsets), skipped)
		f.Cleanup(func() {
			if h.stats.Execs > 0 {
				f.Logf("lexer differential: %s", &h.stats)
			}
		})
	}
	if h.identity {
		f.Logf("SQLFORK_LEXFUZZ_NORMALIZE=identity: Normalize replaced by the identity function")
	}
	return h
}

func lookupFlag(name string) string {
	if fl := flag.Lookup(name); fl != nil {
		return fl.Value.String()
	}
	return ""
}

func lexStatsDir(coordinator int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("sqlfork-lexfuzz-%d", coordinator))
}

// lexReadStats sums the workers' statistics files in dir.
func lexReadStats(dir string) (*lexStats, int) {
	var sum lexStats
	sum.add(&lexStats{})
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	n := 0
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var s lexStats
		if json.Unmarshal(b, &s) == nil {
			sum.add(&s)
			n++
		}
	}
	return &sum, n
}

// writeStats saves a worker's statistics (every two seconds, or now).
func (h *lexHarness) writeStats(now bool) {
	if h.statsFile == "" || !now && time.Since(h.lastWrite) < 2*time.Second {
		return
	}
	h.lastWrite = time.Now()
	b, err := json.Marshal(&h.stats)
	if err != nil {
		return
	}
	tmp := h.statsFile + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		os.Rename(tmp, h.statsFile)
	}
}

// connect opens the one connection the harness uses.
func (h *lexHarness) connect(ctx context.Context) error {
	if h.conn != nil {
		h.conn.Close()
		h.conn = nil
	}
	conn, err := h.db.Conn(ctx)
	if err != nil {
		return err
	}
	h.conn = conn
	return nil
}

// fail reports a failure: fatal, or, in survey mode, appended to the
// survey file (and the input counts as refused by the caller).
func (h *lexHarness) fail(t *testing.T, kind, format string, args ...any) {
	t.Helper()
	h.stats.Failures++
	h.writeStats(true)
	msg := fmt.Sprintf(format, args...)
	if h.survey == "" {
		t.Fatal(msg)
	}
	if fl, err := os.OpenFile(h.survey, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintf(fl, "=== %s\n%s\n\n", kind, msg)
		fl.Close()
	}
}

// normalize is rewrite.Normalize (or the identity, see the file comment);
// a panic is a failure that names the input (and, in survey mode, a
// refusal).
func (h *lexHarness) normalize(t *testing.T, c *lexCase, text string) (out string, err error) {
	if h.identity {
		return text, nil
	}
	defer func() {
		if r := recover(); r != nil {
			h.fail(t, "panic", "rewrite.Normalize panicked: %v\n%s\ninput:   %q\ncharset: %s  sql_mode: %q",
				r, debug.Stack(), text, c.charset, c.sqlMode())
			out, err = "", &rewrite.Refusal{Message: fmt.Sprint("panic: ", r)}
		}
	}()
	return rewrite.Normalize(text, c.opts(h.server))
}

// run checks one input.
func (h *lexHarness) run(t *testing.T, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.decode(data)
	h.stats.Execs++
	h.stats.CharsetExecs[c.charset]++
	defer h.writeStats(false)

	// Properties of Normalize alone.
	norm, nerr := h.normalize(t, &c, c.stmt)
	if nerr == nil {
		if msg := h.checkShape(t, &c, norm); msg != "" {
			h.fail(t, "shape", "%s", msg) // survey mode goes on
		}
	} else {
		var r *rewrite.Refusal
		if !errors.As(nerr, &r) {
			h.fail(t, "error", "rewrite.Normalize returned %T (%v), not a *rewrite.Refusal, for %q", nerr, nerr, c.stmt)
		}
	}
	if nerr != nil {
		h.stats.Refused++
	}

	// What the server runs.
	executed, serr := h.execute(t, &c)
	if h.trace {
		trace := fmt.Sprintf("%s %q %q\n  server: ", c.charset, c.sqlMode(), c.stmt)
		if serr != nil {
			trace += fmt.Sprintf("error %d %s", serr.Number, serr.Message)
		} else {
			trace += "ran " + lexSetString(executed)
		}
		if nerr != nil {
			trace += "\n  Normalize: " + nerr.Error()
		} else {
			p, lazy, how := h.predict(&c, norm)
			trace += fmt.Sprintf("\n  proxy sees %s (may skip %s; from %s) in %q", lexSetString(p), lexSetString(lazy), how, norm)
		}
		t.Log(trace)
	}
	if serr != nil {
		h.stats.ServerErr++
		return
	}
	h.stats.ServerOK++
	h.stats.CharsetOK[c.charset]++
	h.stats.Markers += len(executed)
	if nerr != nil {
		h.stats.RefusedOK++
		h.stats.CharsetRefuse[c.charset]++
		h.stats.Reasons[lexReason(nerr)]++
		return
	}

	// What the proxy predicts.
	predicted, lazy, how := h.predict(&c, norm)
	if how == "ast" {
		h.stats.ByAST++
	} else {
		h.stats.ByTokens++
	}
	missed := false
	for k := range executed {
		missed = missed || !predicted[k]
	}
	// The parser's view must equal what ran (but for markers the server
	// may skip, below). The token-level view, for
	// texts the parser rejects, only says which markers are code: one that
	// is code may still not run as an assignment (`@a&@v1:=0` parses as
	// something else), so there only a marker that ran unseen counts.
	if how != "ast" && !missed {
		if !maps.Equal(executed, predicted) {
			h.stats.OverRead++
		}
		return
	}
	// From the AST, every marker that ran must be seen, and every marker
	// seen must run unless the server may skip it.
	mismatch := missed
	for k := range predicted {
		if !executed[k] && !lazy[k] {
			mismatch = true
		}
	}
	if !mismatch && !maps.Equal(executed, predicted) {
		h.stats.Skipped++
	}
	if mismatch {
		h.stats.Mismatches++
		h.fail(t, "mismatch", "the proxy reads the statement differently from MariaDB %s\n"+
			"statement:  %q\ncharset:    %s\nsql_mode:   %q\n"+
			"server ran: %v\nproxy sees: %v (from %s)\nnormalized: %q%s",
			h.version, c.stmt, c.charset, c.sqlMode(), lexSetString(executed), lexSetString(predicted), how,
			norm, h.warnings(&c))
	}
}

func lexSetString(s map[int]bool) string {
	ks := make([]int, 0, len(s))
	for k := range s {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = "@v" + strconv.Itoa(k)
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// lexSafeReplacement reports whether b may replace a trail byte: a byte no
// reader takes for punctuation.
func lexSafeReplacement(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}

// lexTrailPos reports whether s[i] may be the trail byte of a multi-byte
// character: an ASCII byte after a byte >= 0x80.
func lexTrailPos(s string, i int) bool { return i > 0 && s[i-1] >= 0x80 && s[i] < 0x80 }

// checkShape checks what Normalize must do to any text (see the file
// comment) and returns what is wrong ("" when nothing is).
func (h *lexHarness) checkShape(t *testing.T, c *lexCase, norm string) string {
	where := func() string {
		return fmt.Sprintf("\ninput:      %q\nnormalized: %q\ncharset:    %s  sql_mode: %q", c.stmt, norm, c.charset, c.sqlMode())
	}
	if len(norm) != len(c.stmt) {
		return fmt.Sprintf("Normalize changed the length from %d to %d%s", len(c.stmt), len(norm), where())
	}
	for i := 0; i < len(norm); i++ {
		if norm[i] == c.stmt[i] || norm[i] == ' ' {
			continue
		}
		if lexTrailPos(c.stmt, i) && lexSafeReplacement(norm[i]) {
			continue
		}
		// A backslash in a "quoted" name under ANSI_QUOTES is an ordinary
		// character to the server; the TiDB parser would take it for an
		// escape, so Normalize replaces it.
		if c.stmt[i] == '\\' && norm[i] == '0' && c.ansi && !c.nbe {
			continue
		}
		return fmt.Sprintf("Normalize turned byte %d %q into %q: neither a blank nor a trail byte replaced by a letter or digit%s",
			i, c.stmt[i], norm[i], where())
	}
	again, err := h.normalize(t, c, norm)
	if err != nil {
		return fmt.Sprintf("Normalize accepts the input but refuses its own result: %v%s", err, where())
	}
	if len(again) != len(norm) {
		return fmt.Sprintf("Normalize of the normalized text changed its length from %d to %d%s", len(norm), len(again), where())
	}
	for i := 0; i < len(norm); i++ {
		if again[i] != norm[i] && !(lexTrailPos(norm, i) && lexSafeReplacement(again[i])) {
			return fmt.Sprintf("Normalize is not idempotent: byte %d %q of the normalized text became %q\nagain:      %q%s",
				i, norm[i], again[i], again, where())
		}
	}
	return ""
}

// lexUnset is the value marker k is reset to before case n. Not NULL: a
// marker that runs may well assign NULL ("@v1:=1 -@x" is @v1 := 1 - @x).
// Distinct per case and marker: a variable a generated statement set
// earlier in the session (@1, say) may hold an old reset value, and a
// marker assigned from it must still count as run.
func lexUnset(n uint64, k int) string {
	return fmt.Sprintf("sqlfork: not assigned, case %d marker %d", n, k)
}

// lexResetSQL resets the markers for case n; lexReadSQL reads them.
func lexResetSQL(n uint64) string {
	set := make([]string, 0, lexMarkers)
	for k := 1; k <= lexMarkers; k++ {
		set = append(set, fmt.Sprintf("@v%d = '%s'", k, lexUnset(n, k)))
	}
	return "SET " + strings.Join(set, ", ")
}

var lexReadSQL = func() string {
	sel := make([]string, 0, lexMarkers)
	for k := 1; k <= lexMarkers; k++ {
		sel = append(sel, fmt.Sprintf("@v%d", k))
	}
	return "SELECT " + strings.Join(sel, ", ")
}()

// execute runs the case on MariaDB and returns the markers it executed,
// or the server's error when it rejected the statement.
func (h *lexHarness) execute(t *testing.T, c *lexCase) (map[int]bool, *mysql.MySQLError) {
	for attempt := 0; ; attempt++ {
		executed, serr, err := h.tryExecute(c)
		if err == nil {
			return executed, serr
		}
		// The connection broke (not an SQL error): reconnect and retry.
		if attempt >= 2 {
			t.Fatalf("MariaDB connection keeps failing: %v (statement %q)", err, c.stmt)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cerr := h.connect(ctx)
		cancel()
		if cerr != nil {
			t.Fatalf("reconnect to MariaDB: %v (after %v)", cerr, err)
		}
	}
}

// tryExecute is one attempt of execute; err is set only when the session
// could not be set up or read (a broken connection, not a rejected statement).
func (h *lexHarness) tryExecute(c *lexCase) (map[int]bool, *mysql.MySQLError, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h.cases++
	n := h.cases
	for _, q := range []string{"SET NAMES " + c.charset, "SET SESSION sql_mode = '" + c.sqlMode() + "'", lexResetSQL(n)} {
		if _, err := h.conn.ExecContext(ctx, q); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := execDrain(ctx, h.conn, c.stmt); err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			return nil, me, nil
		}
		return nil, nil, err
	}
	vals := make([]sql.NullString, lexMarkers)
	ptrs := make([]any, lexMarkers)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := h.conn.QueryRowContext(ctx, lexReadSQL).Scan(ptrs...); err != nil {
		return nil, nil, fmt.Errorf("read markers: %w", err)
	}
	executed := map[int]bool{}
	for i, v := range vals {
		if !v.Valid || v.String != lexUnset(n, i+1) {
			executed[i+1] = true
		}
	}
	return executed, nil, nil
}

// warnings re-runs the case and returns the server's warnings, for a report.
func (h *lexHarness) warnings(c *lexCase) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, _, err := h.tryExecute(c); err != nil {
		return ""
	}
	// Only a statement that uses a table clears the server's list of
	// warnings.
	if err := execDrain(ctx, h.conn, "SELECT 1 FROM information_schema.CHARACTER_SETS LIMIT 0"); err != nil {
		return ""
	}
	if err := execDrain(ctx, h.conn, c.stmt); err != nil {
		return ""
	}
	rows, err := h.conn.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		return ""
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var level, msg string
		var code int
		if rows.Scan(&level, &code, &msg) == nil {
			fmt.Fprintf(&b, "\nwarning:    %s %d %s", level, code, msg)
		}
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// The proxy's view

// predict returns the markers the proxy's parser sees assigned in the
// normalized text, those of them the server may skip (see
// lexVarCollector; nil from tokens), and how it found them ("ast" or
// "tokens").
func (h *lexHarness) predict(c *lexCase, norm string) (set, lazy map[int]bool, how string) {
	set, lazy, err := h.predictAST(c, norm)
	if err != nil {
		return lexPredictTokens(norm, c.ansi, c.nbe), nil, "tokens (TiDB parser: " + lexShorten(err.Error()) + ")"
	}
	return set, lazy, "ast"
}

func lexShorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// predictAST parses the normalized text as rewrite.Engine does and collects
// the markers assigned in the AST.
func (h *lexHarness) predictAST(c *lexCase, norm string) (set, lazy map[int]bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			// The parser is not reused after a panic (as in rewrite).
			h.parser = parser.New()
			set, lazy, err = nil, nil, fmt.Errorf("parser panicked: %v", r)
		}
	}()
	var mode tidbmysql.SQLMode
	if c.ansi {
		mode |= tidbmysql.ModeANSIQuotes
	}
	if c.nbe {
		mode |= tidbmysql.ModeNoBackslashEscapes
	}
	h.parser.SetSQLMode(mode)
	stmts, _, err := h.parser.ParseSQL(norm)
	if err != nil {
		return nil, nil, err
	}
	v := &lexVarCollector{set: map[int]bool{}, eager: map[int]bool{}, lazyNodes: map[ast.Node]bool{}}
	for _, s := range stmts {
		v.depth = 0
		if !lexEagerRoot(s) {
			v.depth = 1
		}
		s.Accept(v)
	}
	lazy = map[int]bool{}
	for k := range v.set {
		if !v.eager[k] {
			lazy[k] = true
		}
	}
	return v.set, lazy, nil
}

// lexVarCollector collects user-variable assignments @vK := … , and which
// of them the server may skip: those it evaluates only depending on a
// value (the right of 0 && …, a function's later arguments, a comparison
// with NULL, rows a FROM or WHERE may not yield). A marker the server must
// evaluate is one reached only through the root of a SELECT without
// FROM/WHERE/…, SET or DO, select fields, parentheses, assignments, and
// the operand of a unary operator or the left of a binary one.
type lexVarCollector struct {
	set, eager map[int]bool
	// depth counts the lazy nodes being visited; lazyNodes are those
	// entered (and the right operands marked by their parent).
	depth     int
	lazyNodes map[ast.Node]bool
}

func (v *lexVarCollector) Enter(n ast.Node) (ast.Node, bool) {
	lazy := v.lazyNodes[n]
	switch x := n.(type) {
	case *ast.FieldList, *ast.SelectField, *ast.ParenthesesExpr, *ast.UnaryOperationExpr,
		*ast.VariableAssignment, *ast.SetStmt, *ast.DoStmt, *ast.SelectStmt:
	case *ast.BinaryOperationExpr:
		v.lazyNodes[x.R] = true
	case *ast.VariableExpr:
		if !x.IsSystem && x.Value != nil {
			if k := lexMarkerNumber(x.Name); k > 0 {
				v.set[k] = true
				if v.depth == 0 && !lazy {
					v.eager[k] = true
				}
			}
		}
	default:
		lazy = true
	}
	if lazy {
		v.lazyNodes[n] = true
		v.depth++
	}
	return n, false
}

func (v *lexVarCollector) Leave(n ast.Node) (ast.Node, bool) {
	if v.lazyNodes[n] {
		v.depth--
	}
	return n, true
}

// lexEagerRoot reports whether the server evaluates every select field,
// SET value or DO expression of s once: a SELECT with no FROM, WHERE,
// GROUP BY, HAVING, window or LIMIT, a SET or a DO.
func lexEagerRoot(s ast.StmtNode) bool {
	switch x := s.(type) {
	case *ast.SelectStmt:
		return x.From == nil && x.Where == nil && x.GroupBy == nil && x.Having == nil && x.WindowSpecs == nil &&
			x.Limit == nil && x.With == nil
	case *ast.SetStmt, *ast.DoStmt:
		return true
	}
	return false
}

// lexMarkerNumber returns K for a variable named vK (1 <= K <= lexMarkers,
// any case), else 0.
func lexMarkerNumber(name string) int {
	if len(name) < 2 || name[0] != 'v' && name[0] != 'V' || name[1] == '0' {
		return 0
	}
	k, err := strconv.Atoi(name[1:])
	if err != nil || k < 1 || k > lexMarkers || strconv.Itoa(k) != name[1:] {
		return 0
	}
	return k
}

// lexPredictTokens scans the normalized text knowing only quoting: '…' and
// "…" strings (backslash escapes unless NO_BACKSLASH_ESCAPES, doubled
// quotes), `…` names and, under ANSI_QUOTES, "…" names (doubled quotes
// only). Outside them it finds "@vK :=" (and @'vK', @"vK", @`vK`).
func lexPredictTokens(s string, ansi, nbe bool) map[int]bool {
	set := map[int]bool{}
	skip := func(i int, q byte, escapes bool) int {
		for i < len(s) {
			c := s[i]
			i++
			switch {
			case c == '\\' && escapes:
				i++
			case c == q:
				if i < len(s) && s[i] == q {
					i++
					continue
				}
				return i
			}
		}
		return len(s)
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\'' || c == '"' && !ansi:
			i = skip(i+1, c, !nbe)
		case c == '`' || c == '"' && ansi:
			i = skip(i+1, c, false)
		case c == '@' && (i == 0 || s[i-1] != '@') && i+1 < len(s) && s[i+1] != '@':
			j := i + 1
			var name string
			if q := s[j]; q == '\'' || q == '"' || q == '`' {
				// @'name', @"name", @`name`: quoted as a string or a name.
				end := skip(j+1, q, q != '`' && !(q == '"' && ansi) && !nbe)
				name, j = s[j+1:max(j+1, end-1)], end
			} else {
				k := j
				for k < len(s) && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z' || s[k] >= '0' && s[k] <= '9' || s[k] == '_' || s[k] == '$') {
					k++
				}
				name, j = s[j:k], k
			}
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
				j++
			}
			if k := lexMarkerNumber(name); k > 0 && strings.HasPrefix(s[j:], ":=") {
				set[k] = true
			}
			i = j
		default:
			i++
		}
	}
	return set
}

// TestLexerFuzzGenerator runs the generator of FuzzLexerDifferential on
// many inputs without a server: it must not panic, must use each marker at
// most once, and must stay within its size.
func TestLexerFuzzGenerator(t *testing.T) {
	h := &lexHarness{server: rewrite.Server{Flavor: rewrite.MariaDB, Version: 101119}, usable: map[string]bool{}}
	for _, n := range slices.Sorted(maps.Keys(lexCharsetWeights)) {
		h.charsets = append(h.charsets, lexCharset{name: n, scheme: lexSchemes[n], weight: lexCharsetWeights[n]})
		h.usable[n] = true
	}
	h.charsets = append(h.charsets, lexCharset{name: "tis620", scheme: lexSingle, weight: lexOtherWeight})
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 20000 {
		data := make([]byte, r.IntN(80))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		c := h.decode(data)
		if !strings.HasPrefix(c.stmt, "SELECT 0") || len(c.stmt) > 6000 {
			t.Fatalf("input %d: statement %q", i, c.stmt)
		}
		for k := 1; k <= lexMarkers; k++ {
			if n := strings.Count(c.stmt, fmt.Sprintf("@v%d:=%d", k, k)); n > 1 {
				t.Fatalf("input %d: marker %d used %d times in %q", i, k, n, c.stmt)
			}
		}
	}
	for _, s := range lexSeeds() {
		if c := h.decode(s); !strings.HasPrefix(c.stmt, "SELECT 0") {
			t.Fatalf("seed %q: statement %q", s, c.stmt)
		}
	}
}

// TestLexerFuzzTokens checks the token-level reading FuzzLexerDifferential
// falls back on.
func TestLexerFuzzTokens(t *testing.T) {
	for _, c := range []struct {
		sql       string
		ansi, nbe bool
		want      string
	}{
		{sql: "SELECT 0 ,@v1:=1 '@v2:=2' ,@V3 := 3 ,@v04:=4 ,@v31:=31", want: "{@v1 @v3}"},
		{sql: `SELECT @'v3':=3, @"x\"@v4:=4":=1, @` + "`v5`" + `:=5, @@v6:=6, x@v7:=7`, want: "{@v3 @v5 @v7}"},
		{sql: `SELECT "a\" ,@v5:=5 -- "`, ansi: true, want: "{@v5}"},
		{sql: `SELECT "a\" ,@v5:=5 -- "`, want: "{}"},
		{sql: `SELECT 'a\' ,@v6:=6 ,'\'`, nbe: true, want: "{@v6}"},
		{sql: `SELECT 'a\' ,@v6:=6 ,'\'`, want: "{}"},
		{sql: "SELECT `a\\` ,@v8:=8 ,'a''@v9:=9' ,@v10:=", want: "{@v8 @v10}"},
		{sql: `SELECT @'unclosed\`, want: "{}"},
	} {
		if got := lexSetString(lexPredictTokens(c.sql, c.ansi, c.nbe)); got != c.want {
			t.Errorf("lexPredictTokens(%q, ansi=%v, nbe=%v) = %s, want %s", c.sql, c.ansi, c.nbe, got, c.want)
		}
	}
}
