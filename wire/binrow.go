package wire

// Column types of the binary protocol whose values have a fixed size (the
// rest are length-encoded strings or, for dates and times, a length byte
// and that many bytes).
const (
	typeTiny       = 1
	typeShort      = 2
	typeLong       = 3
	typeFloat      = 4
	typeDouble     = 5
	typeNull       = 6
	typeTimestamp  = 7
	typeLongLong   = 8
	typeInt24      = 9
	typeDate       = 10
	typeTime       = 11
	typeDateTime   = 12
	typeYear       = 13
	typeNewDate    = 14
	typeTimestamp2 = 17
	typeDateTime2  = 18
	typeTime2      = 19
)

// ColumnType is the type byte of a ColumnDefinition41 payload; ok is false
// when p is malformed.
func ColumnType(p []byte) (typ byte, ok bool) {
	_, rest, ok := ParseColumnDef(p)
	if !ok || len(rest) < 8 {
		return 0, false
	}
	return rest[7], true
}

// MapBinaryRowStrings applies f to the string values of the binary-protocol
// row p (COM_STMT_EXECUTE's answer) of columns of the given types, and
// returns the row re-encoded; ok is false when p does not decode as such a
// row (it is then to be left as it is).
func MapBinaryRowStrings(p []byte, types []byte, f func(string) string) (out []byte, ok bool) {
	n := len(types)
	nulls := (n + 7 + 2) / 8
	if len(p) < 1+nulls || p[0] != 0 {
		return nil, false
	}
	out = append(out, p[:1+nulls]...)
	rest := p[1+nulls:]
	for i, t := range types {
		if p[1+(i+2)/8]&(1<<((i+2)%8)) != 0 {
			continue // NULL
		}
		size, ok := fixedSize(t, rest)
		if !ok {
			return nil, false
		}
		if size >= 0 {
			if len(rest) < size {
				return nil, false
			}
			out, rest = append(out, rest[:size]...), rest[size:]
			continue
		}
		s, next, ok := LenEncString(rest)
		if !ok {
			return nil, false
		}
		out, rest = AppendLenEncString(out, f(string(s))), next
	}
	if len(rest) != 0 {
		return nil, false
	}
	return out, true
}

// fixedSize is the size of a binary-protocol value of type t that rest
// starts with, when the type's values have a fixed size or a length byte
// (dates and times); -1 for a length-encoded string; ok is false when rest
// is too short to say.
func fixedSize(t byte, rest []byte) (size int, ok bool) {
	switch t {
	case typeNull:
		return 0, true
	case typeTiny:
		return 1, true
	case typeShort, typeYear:
		return 2, true
	case typeLong, typeInt24, typeFloat:
		return 4, true
	case typeLongLong, typeDouble:
		return 8, true
	case typeDate, typeTime, typeDateTime, typeTimestamp, typeNewDate, typeTimestamp2, typeDateTime2, typeTime2:
		if len(rest) == 0 {
			return 0, false
		}
		return 1 + int(rest[0]), true
	}
	return -1, true
}
