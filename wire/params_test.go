package wire

import (
	"encoding/binary"
	"testing"
)

// execute is a COM_STMT_EXECUTE payload: flags, the null bitmap of n
// parameters, types (nil: not sent) and the values' bytes.
func execute(flags byte, n int, nulls []byte, types []byte, values ...[]byte) []byte {
	p := []byte{ComStmtExecute, 1, 0, 0, 0, flags, 1, 0, 0, 0}
	p = append(p, nulls...)
	if types != nil {
		p = append(append(p, 1), types...)
	} else {
		p = append(p, 0)
	}
	for _, v := range values {
		p = append(p, v...)
	}
	return p
}

func le(n int, v uint64) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	return b[:n]
}

func TestExecuteParams(t *testing.T) {
	str := func(s string) []byte { return AppendLenEncString(nil, s) }
	for _, tc := range []struct {
		name  string
		p     []byte
		n     int
		prev  []byte
		want  []string // Int's or String's text; "NULL"; "?" for neither
		fails bool
	}{
		{name: "longlong and string", n: 2, p: execute(0, 2, []byte{0}, []byte{typeLongLong, 0, typeVarString, 0}, le(8, 42), str("u7")),
			want: []string{"42", "u7"}},
		{name: "negative and unsigned", n: 3, p: execute(0, 3, []byte{0}, []byte{typeLong, 0, typeLongLong, 0x80, typeTiny, 0},
			le(4, 0xFFFFFFFE), le(8, 0xFFFFFFFFFFFFFFFF), le(1, 0x80)),
			want: []string{"-2", "18446744073709551615", "-128"}},
		{name: "null by bitmap takes no value", n: 3, p: execute(0, 3, []byte{0b010}, []byte{typeShort, 0, typeLong, 0, typeDouble, 0},
			le(2, 7), le(8, 0)), want: []string{"7", "NULL", "?"}},
		{name: "types of the last execution", n: 1, prev: []byte{typeLongLong, 0}, p: execute(0, 1, []byte{0}, nil, le(8, 9)),
			want: []string{"9"}},
		{name: "date has its length byte", n: 2, p: execute(0, 2, []byte{0}, []byte{typeDate, 0, typeLong, 0},
			[]byte{4, 0xE8, 0x07, 1, 2}, le(4, 5)), want: []string{"?", "5"}},
		{name: "cursor", n: 1, p: execute(1, 1, []byte{0}, []byte{typeLong, 0}, le(4, 5)), want: []string{"5"}},
		{name: "no types anywhere", n: 1, p: execute(0, 1, []byte{0}, nil, le(8, 9)), fails: true},
		{name: "parameter count flag", n: 1, p: execute(8, 1, []byte{0}, []byte{typeLong, 0}, le(4, 5)), fails: true},
		{name: "indicator", n: 1, p: execute(0, 1, []byte{0}, []byte{typeLong, 0x40}, le(4, 5)), fails: true},
		{name: "short value", n: 1, p: execute(0, 1, []byte{0}, []byte{typeLongLong, 0}, le(4, 5)), fails: true},
		{name: "bytes left over", n: 1, p: execute(0, 1, []byte{0}, []byte{typeLong, 0}, le(8, 5)), fails: true},
		// The server reads no value of these (it takes them as NULL): the
		// values after them are not where the types' sizes put them.
		{name: "year", n: 2, p: execute(0, 2, []byte{0}, []byte{typeYear, 0, typeLongLong, 0}, le(2, 7), le(8, 5)), fails: true},
		{name: "int24", n: 2, p: execute(0, 2, []byte{0}, []byte{typeInt24, 0, typeLongLong, 0}, le(4, 7), le(8, 5)), fails: true},
		{name: "bit", n: 1, p: execute(0, 1, []byte{0}, []byte{16, 0}, AppendLenEncString(nil, "x")), fails: true},
		{name: "geometry", n: 1, p: execute(0, 1, []byte{0}, []byte{255, 0}, AppendLenEncString(nil, "x")), fails: true},
		{name: "a NULL of such a type has no value anyway", n: 2, p: execute(0, 2, []byte{1}, []byte{typeYear, 0, typeLongLong, 0}, le(8, 5)),
			want: []string{"NULL", "5"}},
		{name: "long data: value missing", n: 2, p: execute(0, 2, []byte{0}, []byte{typeBlob, 0, typeLong, 0}, le(4, 5)), fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params, _, ok := ExecuteParams(tc.p, tc.n, tc.prev)
			if ok == tc.fails {
				t.Fatalf("ok = %v", ok)
			}
			if !ok {
				return
			}
			for i, p := range params {
				got := "?"
				if s, ok := p.Int(); ok {
					got = s
				} else if s, ok := p.String(); ok {
					got = s
				} else if p.Null {
					got = "NULL"
				}
				if got != tc.want[i] {
					t.Errorf("param %d: %q, want %q", i, got, tc.want[i])
				}
			}
		})
	}
}

func FuzzExecuteParams(f *testing.F) {
	f.Add(execute(0, 2, []byte{0}, []byte{typeLongLong, 0, typeVarString, 0}, le(8, 42), AppendLenEncString(nil, "u7")), 2)
	f.Add(execute(0, 1, []byte{1}, []byte{typeNull, 0}), 1)
	f.Fuzz(func(t *testing.T, p []byte, n int) {
		if n > 1000 {
			return
		}
		params, types, ok := ExecuteParams(p, n, nil)
		if !ok {
			return
		}
		if len(params) != n || len(types) != 2*n {
			t.Fatalf("%d params, %d type bytes, for %d", len(params), len(types), n)
		}
		for _, prm := range params {
			prm.Int()
			prm.String()
		}
	})
}
