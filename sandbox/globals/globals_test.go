package globals

import "testing"

func str(s string) *string { return &s }

func TestValue(t *testing.T) {
	tests := []struct {
		v                  Value
		literal, read      string
		show               string
		showNull, literal2 bool
	}{
		{v: Value{Name: "sort_buffer_size", Type: TypeBigintUnsigned, Text: str("1048576")}, literal: "1048576",
			read: "IF(1, CAST(1048576 AS UNSIGNED), @@SESSION.sort_buffer_size)", show: "1048576"},
		{v: Value{Name: "x", Type: TypeInt, Text: str("-3")}, literal: "-3", read: "IF(1, CAST(-3 AS SIGNED), @@SESSION.x)", show: "-3"},
		{v: Value{Name: "long_query_time", Type: TypeDouble, Text: str("1.500000")}, literal: "1.500000",
			read: "IF(1, 1.500000, @@SESSION.long_query_time)", show: "1.500000"},
		{v: Value{Name: "autocommit", Type: TypeBoolean, Text: str("0")}, literal: "0", read: "IF(1, 0, @@SESSION.autocommit)", show: "OFF"},
		{v: Value{Name: "sql_mode", Type: "SET", Text: str("ANSI_QUOTES")}, literal: "'ANSI_QUOTES'",
			read: "_utf8mb3 X'414E53495F51554F544553'", show: "ANSI_QUOTES"},
		// A number-typed value that is no number is quoted, never spliced.
		{v: Value{Name: "x", Type: TypeBigint, Text: str("1; DROP")}, literal: "'1; DROP'", read: "_utf8mb3 X'313B2044524F50'", show: "1; DROP"},
		{v: Value{Name: "x", Type: "VARCHAR"}, literal: "NULL", read: "IF(1, NULL, @@SESSION.x)", showNull: true},
	}
	for _, c := range tests {
		if got := c.v.Literal(); got != c.literal {
			t.Errorf("%s Literal = %q, want %q", c.v.Name, got, c.literal)
		}
		if got := c.v.ReadExpr(); got != c.read {
			t.Errorf("%s ReadExpr = %q, want %q", c.v.Name, got, c.read)
		}
		if got := c.v.ShowText(); (got == nil) != c.showNull || got != nil && *got != c.show {
			t.Errorf("%s ShowText = %v, want %q", c.v.Name, got, c.show)
		}
	}
}

func TestSet(t *testing.T) {
	var s Set
	if _, ok := s.Get("a"); ok || s.Version() != 0 || Statement(s.All()) != "" {
		t.Fatal("empty set")
	}
	s.Put(Value{Name: "b", Type: TypeInt, Text: str("2")})
	s.Put(Value{Name: "a", Type: "VARCHAR", Text: str("x")})
	s.Put(Value{Name: "b", Type: TypeInt, Text: str("3")})
	if v, ok := s.Get("b"); !ok || *v.Text != "3" || s.Version() != 3 {
		t.Errorf("Get b = %+v %v, version %d", v, ok, s.Version())
	}
	if got := Statement(s.All()); got != "SET @@SESSION.a = 'x', @@SESSION.b = 3" {
		t.Errorf("Statement = %q", got)
	}
	if !ValidName("sort_buffer_size") || ValidName("a.b") || ValidName("X") {
		t.Error("ValidName")
	}
}
