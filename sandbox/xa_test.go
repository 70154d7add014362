package sandbox

import "testing"

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

func TestXARecovered(t *testing.T) {
	p := XAPrefix("0a1b2c3d")
	if len(p) != 7 || p == XAPrefix("0a1b2c3e") {
		t.Fatalf("prefix %q", p)
	}
	if gl, d, ok := XARecovered(p, 1, len(p)+2, 2, p+"g1b1", false); !ok || gl != 2 || d != "g1b1" {
		t.Errorf("own id: %d %q %v", gl, d, ok)
	}
	if _, d, ok := XARecovered(p, 7, len(p)+2, 0, p+"g1", true); !ok || d != "'g1','',7" {
		t.Errorf("own id, SQL format: %q %v", d, ok)
	}
	for _, data := range []string{"g1", XAPrefix("other") + "g1", p[:3]} {
		if _, _, ok := XARecovered(p, 1, len(data), 0, data, false); ok {
			t.Errorf("%q is taken for the sandbox's", data)
		}
	}
}
