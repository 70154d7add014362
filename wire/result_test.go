package wire

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

func TestErrPacketRoundTrip(t *testing.T) {
	tests := []struct {
		in   *mysql.MyError
		want mysql.MyError
	}{
		{&mysql.MyError{Code: ErAccessDenied, State: "28000", Message: "Access denied for user 'bob'@'10.0.0.1' (using password: YES)"},
			mysql.MyError{Code: 1045, State: "28000", Message: "Access denied for user 'bob'@'10.0.0.1' (using password: YES)"}},
		{&mysql.MyError{Code: ErConnectToForeignSource, State: "HY000", Message: "Unreachable"}, mysql.MyError{Code: 1429, State: "HY000", Message: "Unreachable"}},
		{&mysql.MyError{Code: ErUnknownCom, State: "08S01"}, mysql.MyError{Code: 1047, State: "08S01"}},
		{&mysql.MyError{Code: 0xFFFF, State: "XXXXX", Message: "#12345 starts with a hash"},
			mysql.MyError{Code: 0xFFFF, State: "XXXXX", Message: "#12345 starts with a hash"}},
		{&mysql.MyError{Code: 0, State: "", Message: "no state"}, mysql.MyError{Code: 0, State: "HY000", Message: "no state"}},
		{&mysql.MyError{Code: 1, State: "1234", Message: "short state"}, mysql.MyError{Code: 1, State: "HY000", Message: "short state"}},
		{&mysql.MyError{Code: 1, State: "123456", Message: "long state"}, mysql.MyError{Code: 1, State: "HY000", Message: "long state"}},
		{&mysql.MyError{Code: 1064, State: "42000", Message: "bytes \x00\xff\n kept"}, mysql.MyError{Code: 1064, State: "42000", Message: "bytes \x00\xff\n kept"}},
	}
	for _, tt := range tests {
		p := AppendErr(nil, tt.in)
		if p[0] != ErrHeader || p[3] != '#' || len(p) != 9+len(tt.in.Message) {
			t.Errorf("AppendErr(nil, %+v) = % x", *tt.in, p)
		}
		got := ParseErr(p)
		if *got != tt.want {
			t.Errorf("ParseErr(AppendErr(nil, %+v)) = %+v, want %+v", *tt.in, *got, tt.want)
		}
	}
}

func TestParseErrPacketMalformed(t *testing.T) {
	bad := mysql.MyError{Code: mysql.ER_UNKNOWN_ERROR, State: "HY000", Message: "malformed error packet from upstream"}
	tests := []struct {
		in   []byte
		want mysql.MyError
	}{
		{nil, bad},
		{[]byte{0xFF}, bad},
		{[]byte{0xFF, 0x01}, bad},
		{[]byte{0x00, 0x01, 0x02, '#', 'H', 'Y', '0', '0', '0'}, bad},
		{[]byte{0xFF, 0x01, 0x02}, mysql.MyError{Code: 0x0201, State: "HY000"}},
		{[]byte{0xFF, 0x01, 0x02, '#', 'H', 'Y'}, mysql.MyError{Code: 0x0201, State: "HY000", Message: "#HY"}},
		{[]byte{0xFF, 0x01, 0x02, '#', 'A', 'B', 'C', 'D', 'E'}, mysql.MyError{Code: 0x0201, State: "ABCDE"}},
		{[]byte{0xFF, 0x01, 0x02, 'n', 'o', ' ', 's', 't', 'a', 't', 'e'}, mysql.MyError{Code: 0x0201, State: "HY000", Message: "no state"}},
	}
	for _, tt := range tests {
		if got := ParseErr(tt.in); *got != tt.want {
			t.Errorf("ParseErr(% x) = %+v, want %+v", tt.in, *got, tt.want)
		}
	}
}
