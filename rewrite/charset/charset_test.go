package charset

import (
	"testing"
	"unicode/utf8"
)

func TestCharLen(t *testing.T) {
	cases := []struct {
		mb   Scheme
		name string
		s    string
		want int
	}{
		{SingleByte, "latin1", "\xe9", 1},
		{UTF8, "utf8mb4", "a", 1},
		{UTF8, "utf8mb4", "", 0},
		{UTF8, "utf8mb4", "é", 2},
		{UTF8, "utf8mb4", "€", 3},
		{UTF8, "utf8mb4", "😀", 4},
		{UTF8, "utf8mb3", "😀", 0},
		{UTF8, "utf8mb4", "\xc1\x80", 0},
		{UTF8, "utf8mb4", "\xe0\x80\x80", 0},
		{UTF8, "utf8mb4", "\xc3", 0},
		{Big5, "big5", "\xa4\x40", 2},
		{Big5, "big5", "\xa4\x20", 0},
		{GBK, "gbk", "\x81\x5c", 2},
		{SJIS, "sjis", "\xb1", 1},
		{SJIS, "sjis", "\x81\x5c", 2},
		{EUCKR, "euckr", "\xb0\x41", 2},
		{GB2312, "gb2312", "\xb0\xa1", 2},
		{UJIS, "ujis", "\xa4\xa2", 2},
		{UJIS, "ujis", "\x8e\xb1", 2},
		{UJIS, "ujis", "\x8f\xa1\xa1", 3},
		{UJIS, "ujis", "\x8f\xa1", 0},
	}
	for _, c := range cases {
		cs := &Info{Name: c.name, MB: c.mb}
		if got := cs.CharLen(c.s); got != c.want {
			t.Errorf("%s CharLen(%q) = %d, want %d", c.name, c.s, got, c.want)
		}
	}
}

func TestASCIITrail(t *testing.T) {
	for mb, want := range map[Scheme]bool{SingleByte: false, UTF8: false, Big5: true, GBK: true, SJIS: true, EUCKR: true, GB2312: false, UJIS: false} {
		if got := (&Info{MB: mb}).ASCIITrail(); got != want {
			t.Errorf("scheme %d: ASCIITrail = %v, want %v", mb, got, want)
		}
	}
}

func TestDecode(t *testing.T) {
	var uni [128]rune
	uni[0x69] = 'é'  // 0xE9
	uni[0x27] = '\'' // 0xA7: an ASCII character counts as none
	cs := &Info{Name: "latin1", MB: SingleByte, Uni: &uni}
	if !cs.Decodes() || (&Info{MB: SingleByte}).Decodes() || (&Info{MB: UTF8, Uni: &uni}).Decodes() {
		t.Error("Decodes")
	}
	if r := cs.Char(0xE9); r != 'é' {
		t.Errorf("Char(0xE9) = %q", r)
	}
	if r := cs.Char(0xA7); r != utf8.RuneError {
		t.Errorf("Char(0xA7) = %q, want none", r)
	}
	if b, ok := cs.ByteOf('é'); !ok || b != 0xE9 {
		t.Errorf("ByteOf(é) = %x, %v", b, ok)
	}
	for _, r := range []rune{0, utf8.RuneError, 'ж'} {
		if _, ok := cs.ByteOf(r); ok {
			t.Errorf("ByteOf(%q) found a byte", r)
		}
	}
	var s ByteSet
	s[0xE9>>6] |= 1 << (0xE9 & 63)
	if !s.Has(0xE9) || s.Has(0xE8) {
		t.Error("ByteSet.Has")
	}
}
