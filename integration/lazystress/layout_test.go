package lazystress

import (
	"hash/crc32"
	"testing"
)

func TestClassOf(t *testing.T) {
	c := Config{Rows: 100}
	for _, tc := range []struct {
		id   int64
		want Class
	}{
		{-5, Production}, {0, Production}, {20, Production}, {100, Production},
		{1, Sandbox}, {2, Sandbox}, {21, Sandbox}, {82, Sandbox}, {101, Sandbox}, {5000, Sandbox},
		{3, Stable}, {19, Stable}, {23, Stable}, {99, Stable},
	} {
		if got := c.ClassOf(tc.id); got != tc.want {
			t.Errorf("ClassOf(%d) = %d, want %d", tc.id, got, tc.want)
		}
	}
}

func TestExpect(t *testing.T) {
	e := Config{Rows: 40}.expect()
	// Production: 20 and 40; sandbox: 1, 2, 21, 22; the other 34 stable.
	if e.prodRows != 2 || e.prodV != 60 || e.sandboxRows != 4 || e.stableRows != 34 {
		t.Errorf("expect: %+v", e)
	}
	var sum uint64
	for _, id := range []int64{1, 2, 21, 22} {
		sum += Initial(id).sum()
	}
	if e.sandboxSum != sum {
		t.Errorf("sandbox rows' checksum %d, want %d", e.sandboxSum, sum)
	}
}

func TestRowSum(t *testing.T) {
	// MariaDB's CRC32 is IEEE's (its manual: CRC32('MySQL') = 3259397556),
	// over CONCAT_WS('|', id, v, s, u, w).
	if got := crc32.ChecksumIEEE([]byte("MySQL")); got != 3259397556 {
		t.Fatalf("CRC32('MySQL') = %d", got)
	}
	if got, want := Initial(7).sum(), uint64(crc32.ChecksumIEEE([]byte("7|7|s7|u7|21"))); got != want {
		t.Errorf("row 7's sum %d, want %d", got, want)
	}
}

func TestWhereClauses(t *testing.T) {
	c := Config{Rows: 1000}
	for _, tc := range []struct{ got, want string }{
		{c.stableWhere(), "id BETWEEN 1 AND 1000 AND id % 20 NOT IN (0, 1, 2)"},
		{c.prodWhere(), "(id <= 0 OR id <= 1000 AND id % 20 = 0)"},
		{c.sandboxWhere(), "(id > 1000 OR id > 0 AND id % 20 IN (1, 2))"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
