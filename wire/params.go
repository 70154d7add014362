package wire

import (
	"encoding/binary"
	"strconv"
)

// Param is one parameter value of a COM_STMT_EXECUTE: its type, and its
// value as the client sent it.
type Param struct {
	Null     bool
	Type     byte
	Unsigned bool
	// Value is the value's bytes: an integer's little-endian bytes, a
	// string's bytes (without their length), a date's bytes.
	Value []byte
}

// Int is the value of an integer parameter (TINY, SHORT, LONG, LONGLONG)
// as a decimal text; ok is false for any other type.
func (p Param) Int() (text string, ok bool) {
	if p.Null {
		return "", false
	}
	var u uint64
	switch {
	case p.Type == typeTiny && len(p.Value) == 1:
		u = uint64(p.Value[0])
		if !p.Unsigned {
			return strconv.FormatInt(int64(int8(p.Value[0])), 10), true
		}
	case p.Type == typeShort && len(p.Value) == 2:
		u = uint64(binary.LittleEndian.Uint16(p.Value))
		if !p.Unsigned {
			return strconv.FormatInt(int64(int16(u)), 10), true
		}
	case p.Type == typeLong && len(p.Value) == 4:
		u = uint64(binary.LittleEndian.Uint32(p.Value))
		if !p.Unsigned {
			return strconv.FormatInt(int64(int32(u)), 10), true
		}
	case p.Type == typeLongLong && len(p.Value) == 8:
		u = binary.LittleEndian.Uint64(p.Value)
		if !p.Unsigned {
			return strconv.FormatInt(int64(u), 10), true
		}
	default:
		return "", false
	}
	return strconv.FormatUint(u, 10), true
}

// String is the value of a string parameter (VARCHAR, VAR_STRING, STRING
// and the BLOB types, which clients send strings as); ok is false for any
// other type.
func (p Param) String() (s string, ok bool) {
	switch p.Type {
	case typeVarchar, typeVarString, typeString, typeTinyBlob, typeMediumBlob, typeLongBlob, typeBlob:
		return string(p.Value), !p.Null
	}
	return "", false
}

// More parameter types: the string types a client sends values as.
const (
	typeVarchar    = 15
	typeNewDecimal = 246
	typeTinyBlob   = 249
	typeMediumBlob = 250
	typeLongBlob   = 251
	typeBlob       = 252
	typeVarString  = 253
	typeString     = 254
)

// executeFlagsKnown are the COM_STMT_EXECUTE flags whose packets
// ExecuteParams reads: the cursor types (any other bit, such as MySQL's
// parameter count, may change the layout).
const executeFlagsKnown = 0x07

// paramIndicator is a parameter type flag saying an indicator byte precedes
// the value (MariaDB's bulk operations).
const paramIndicator = 0x40

// ExecuteParams reads the n parameter values of a COM_STMT_EXECUTE payload
// p (its command byte first); types are the types the client sent with an
// earlier execution, for a packet that does not send them again. It
// returns the types the values were read with. ok is false when p is not
// such a packet, or its layout is one ExecuteParams does not read.
func ExecuteParams(p []byte, n int, types []byte) (params []Param, used []byte, ok bool) {
	const head = 10 // command, statement id, flags, iteration count
	if len(p) < head || p[0] != ComStmtExecute || p[5]&^executeFlagsKnown != 0 || n <= 0 {
		return nil, nil, false
	}
	nulls := p[head:]
	if len(nulls) < (n+7)/8+1 {
		return nil, nil, false
	}
	rest := nulls[(n+7)/8:]
	if rest[0] == 1 {
		if len(rest) < 1+2*n {
			return nil, nil, false
		}
		types, rest = rest[1:1+2*n], rest[1+2*n:]
	} else {
		if rest[0] != 0 || len(types) != 2*n {
			return nil, nil, false
		}
		rest = rest[1:]
	}
	params = make([]Param, n)
	for i := range params {
		t, flag := types[2*i], types[2*i+1]
		if flag&paramIndicator != 0 {
			return nil, nil, false
		}
		params[i] = Param{Type: t, Unsigned: flag&0x80 != 0}
		if nulls[i/8]&(1<<(i%8)) != 0 || t == typeNull {
			params[i].Null = true
			continue
		}
		v, next, ok := paramValue(t, rest)
		if !ok {
			return nil, nil, false
		}
		params[i].Value, rest = v, next
	}
	return params, types, len(rest) == 0
}

// paramValue is the value of type t that rest starts with, and what
// follows it. Only the types whose values the server reads as
// ExecuteParams does are read: the server reads no value at all for some
// (MariaDB 10.11: YEAR, INT24, BIT, GEOMETRY, which it takes as NULL), so
// a packet with any other type is not read.
func paramValue(t byte, rest []byte) (v, next []byte, ok bool) {
	switch t {
	case typeTiny, typeShort, typeLong, typeLongLong, typeFloat, typeDouble,
		typeTimestamp, typeDate, typeTime, typeDateTime,
		typeVarchar, typeNewDecimal, typeTinyBlob, typeMediumBlob, typeLongBlob, typeBlob, typeVarString, typeString:
	default:
		return nil, nil, false
	}
	size, ok := fixedSize(t, rest)
	switch {
	case !ok:
		return nil, nil, false
	case size >= 0:
		if len(rest) < size {
			return nil, nil, false
		}
		return rest[:size], rest[size:], true
	}
	return LenEncString(rest)
}
