// Package globals holds the values a sandbox gave the server's global
// variables (SET GLOBAL of a variable that has a session scope): a
// sandbox is a private server, whose globals are its own, and the proxy
// applies them to the sessions of the connections that join it. No I/O.
package globals

import (
	"encoding/hex"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/sqlfork/sqlfork-proxy/quote"
)

// Type is a variable's type as information_schema.SYSTEM_VARIABLES names
// it (VARIABLE_TYPE).
type Type string

// The types whose values are numbers.
const (
	TypeBigintUnsigned Type = "BIGINT UNSIGNED"
	TypeIntUnsigned    Type = "INT UNSIGNED"
	TypeBigint         Type = "BIGINT"
	TypeInt            Type = "INT"
	TypeDouble         Type = "DOUBLE"
	TypeBoolean        Type = "BOOLEAN"
)

// Value is a sandbox's value of a global variable, as the server reads it
// back (@@SESSION.name once set to it).
type Value struct {
	// Name is the variable's name in lower case.
	Name string
	Type Type
	// Text is the value as the server answers it; nil for NULL.
	Text *string
}

// number is a number as the server writes a numeric variable's value.
var number = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// name is a variable's name the proxy writes without quotes.
var name = regexp.MustCompile(`^[a-z0-9_]+$`)

// ValidName reports whether n is a variable name the proxy can write into
// SQL as it is (the server's names are lower-case words).
func ValidName(n string) bool { return name.MatchString(n) }

// numeric reports a type whose values are numbers.
func (t Type) numeric() bool {
	switch t {
	case TypeBigintUnsigned, TypeIntUnsigned, TypeBigint, TypeInt, TypeDouble, TypeBoolean:
		return true
	}
	return false
}

// Literal is SQL that gives the variable its value in a SET (SET SESSION
// name = Literal).
func (v Value) Literal() string {
	switch {
	case v.Text == nil:
		return "NULL"
	case v.Type.numeric() && number.MatchString(*v.Text):
		return *v.Text
	}
	return quote.String(*v.Text)
}

// ReadExpr is an expression that reads as @@GLOBAL.name would on a server
// whose global is v: its value, with the column type, length and flags
// the server gives @@GLOBAL.name (an integer is the variable's type, a
// string a utf8mb3 string of the value's length; a boolean's length is 2,
// not 1). The session's own value only lends its type.
func (v Value) ReadExpr() string {
	session := "@@SESSION." + v.Name
	if v.Text == nil {
		return "IF(1, NULL, " + session + ")"
	}
	t := *v.Text
	if v.Type.numeric() && number.MatchString(t) {
		switch v.Type {
		case TypeBigintUnsigned, TypeIntUnsigned:
			return "IF(1, CAST(" + t + " AS UNSIGNED), " + session + ")"
		case TypeBigint, TypeInt:
			return "IF(1, CAST(" + t + " AS SIGNED), " + session + ")"
		}
		return "IF(1, " + t + ", " + session + ")"
	}
	return "_utf8mb3 X'" + strings.ToUpper(hex.EncodeToString([]byte(t))) + "'"
}

// ShowText is the value as SHOW VARIABLES and information_schema write it
// (a boolean as ON or OFF); nil for NULL.
func (v Value) ShowText() *string {
	if v.Text == nil || v.Type != TypeBoolean {
		return v.Text
	}
	on := "OFF"
	if *v.Text != "0" {
		on = "ON"
	}
	return &on
}

// Set is a sandbox's global values, shared by its connections.
type Set struct {
	mu      sync.Mutex
	vals    map[string]Value
	version uint64
}

// Put sets the sandbox's value of v.Name.
func (s *Set) Put(v Value) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vals == nil {
		s.vals = map[string]Value{}
	}
	s.vals[v.Name] = v
	s.version++
}

// Replace makes vals the sandbox's values (as the registry holds them),
// counting a change only when they differ.
func (s *Set) Replace(vals []Value) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]Value, len(vals))
	same := len(vals) == len(s.vals)
	for _, v := range vals {
		next[v.Name] = v
		if cur, ok := s.vals[v.Name]; !ok || !sameText(cur.Text, v.Text) {
			same = false
		}
	}
	if !same {
		s.vals = next
		s.version++
	}
}

// sameText reports whether two values' texts are equal (nil is NULL).
func sameText(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// Get is the sandbox's value of the variable name (lower case); ok is
// false when the sandbox has not set it (production's global holds).
func (s *Set) Get(name string) (Value, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.vals[name]
	return v, ok
}

// All are the sandbox's values, by name.
func (s *Set) All() []Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Value, 0, len(s.vals))
	for _, v := range s.vals {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Version changes with every Put: a plan that read the globals is made
// again once it differs.
func (s *Set) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Statement is the SET SESSION statement that gives a session the values
// vals ("" for none).
func Statement(vals []Value) string {
	if len(vals) == 0 {
		return ""
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = "@@SESSION." + v.Name + " = " + v.Literal()
	}
	return "SET " + strings.Join(parts, ", ")
}
