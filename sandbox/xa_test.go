package sandbox

import (
	"encoding/hex"
	"strconv"
	"testing"
)

func TestXASQL(t *testing.T) {
	// As MariaDB 10.11's XA RECOVER FORMAT='SQL' wrote them.
	for _, c := range []struct {
		format       int64
		gtrid, bqual string
		want         string
	}{
		{1, "g1", "", "'g1'"},
		{1, "g2", "b2", "'g2','b2'"},
		{7, "g3", "b3", "'g3','b3',7"},
		{1, "x\\y", "", "X'785c79'"},
		{1, "\x00\xff", "", "X'00ff'"},
		{0, "a'b", "c d", "X'612762',X'632064',0"},
		{1, "A", "", "'A'"},
		{5, "g", "", "'g','',5"},
		{1, "sp ace", "", "'sp ace'"},
		{7, "-z", "a b", "'-z','a b',7"},
		{1, "a.b", "", "X'612e62'"},
		{1, "tab\tx", "", "X'7461620978'"},
	} {
		if got := XASQL(c.format, c.gtrid, c.bqual); got != c.want {
			t.Errorf("XASQL(%d, %q, %q) = %q, want %q", c.format, c.gtrid, c.bqual, got, c.want)
		}
	}
}

func TestXARow(t *testing.T) {
	p := XAPrefix("0a1b2c3d")
	if len(p) != 7 || p == XAPrefix("0a1b2c3e") {
		t.Fatalf("prefix %q", p)
	}
	row := func(format, gl, bl, data string) []*string { return []*string{&format, &gl, &bl, &data} }
	x, ok := ParseXARow(row("7", strconv.Itoa(len(p)+2), "2", p+"g1b1"))
	if !ok || x.XID() != "X'"+hex.EncodeToString([]byte(p+"g1"))+"',X'6231',7" {
		t.Fatalf("ParseXARow: %+v %v, XID %s", x, ok, x.XID())
	}
	if own, ok := x.Own(p); !ok || own != (XARow{FormatID: 7, Gtrid: "g1", Bqual: "b1"}) {
		t.Errorf("own id: %+v %v", own, ok)
	}
	for _, r := range [][]*string{row("1", "2", "0", "g1"), row("1", "9", "0", XAPrefix("other")+"g1"), row("1", "3", "0", p[:3])} {
		if x, ok := ParseXARow(r); !ok {
			t.Errorf("%q not read", *r[3])
		} else if _, own := x.Own(p); own {
			t.Errorf("%q is taken for the sandbox's", *r[3])
		}
	}
	for _, r := range [][]*string{row("1", "3", "0", "g1"), row("x", "2", "0", "g1"), row("1", "-1", "3", "g1"), {nil, nil, nil, nil}} {
		if x, ok := ParseXARow(r); ok {
			t.Errorf("a row it cannot read is read: %+v", x)
		}
	}
}
