package charset

import (
	"strings"
	"testing"
)

// koi8 is a made-up single-byte set: 0xC1 is 'а', 0xC2 'б', 0xE0 'ю'; the
// server reads 0xC1 and 0xC2 in names.
func koi8() *Info {
	var uni [128]rune
	uni[0x41], uni[0x42], uni[0x60] = 'а', 'б', 'ю'
	cs := &Info{Name: "koi8", MB: SingleByte, Uni: &uni}
	cs.Ident[0xC1>>6] |= 1<<(0xC1&63) | 1<<(0xC2&63)
	return cs
}

func TestDecodeClient(t *testing.T) {
	cs := koi8()
	sql := "SELECT '\xE0' FROM t\xC1\xC2"
	ct, text, u := Decode(sql, sql, [][2]int32{{7, 10}}, cs, false)
	if u != nil {
		t.Fatalf("Decode: %+v", u)
	}
	if text != "SELECT 'ю' FROM tаб" || ct.Decoded() != text {
		t.Errorf("Decode = %q, Decoded = %q", text, ct.Decoded())
	}
	if o := ct.Original(strings.Index(text, "б")); o != len(sql)-1 {
		t.Errorf("Original = %d, want %d", o, len(sql)-1)
	}
	if s, err := ct.Encode("tаб"); err != nil || s != "t\xC1\xC2" {
		t.Errorf("Encode = %q, %v", s, err)
	}
	if _, err := ct.Encode("ж"); err == nil {
		t.Error("Encode of a character the set lacks")
	}
	if s, _ := ct.Encode("abc"); s != "abc" {
		t.Errorf("Encode(abc) = %q", s)
	}
	ascii, text, _ := Decode("SELECT 1", "SELECT 1", nil, cs, false)
	if text != "" || ascii.Offs != nil || ascii.Decoded() != "SELECT 1" || ascii.Original(3) != 3 {
		t.Errorf("ASCII text: %+v %q", ascii, text)
	}
	for _, c := range []struct{ sql, norm, what string }{
		{"SELECT \xE0", "SELECT \xE0", "outside quotes"},
		{"SELECT `\xD0`", "SELECT `\xD0`", "stands for no character"},
		{"SELECT 1 /*\xC1*/", "SELECT 1 /*x*/", "changed for the parser"},
	} {
		var lits [][2]int32
		if i := strings.IndexByte(c.sql, '`'); i >= 0 {
			lits = [][2]int32{{int32(i), int32(len(c.sql))}}
		}
		if _, _, u := Decode(c.sql, c.norm, lits, cs, false); u == nil || !strings.Contains(u.What, c.what) {
			t.Errorf("Decode(%q) = %+v, want %q", c.sql, u, c.what)
		}
	}
	blank := "SELECT 1 /*\xC1*/"
	if _, text, u := Decode(blank, "SELECT 1"+strings.Repeat(" ", 6), nil, cs, false); u != nil || text != "SELECT 1"+strings.Repeat(" ", 7) {
		t.Errorf("Decode of a blanked comment = %q, %+v", text, u)
	}
}
