package collect

// Func is a function a statement calls, as written.
type Func struct {
	Schema string // "" when unqualified
	Name   string
	// Bare is set when every call of the name in the text is written
	// unquoted and right before "(" (or with whitespace only between under
	// IGNORE_SPACE): MariaDB takes some names (COUNT, NOW, SUBSTRING) for
	// its own functions only when they are written so.
	Bare bool
	// Quoted is set when a call of the name in the text is written quoted
	// (`point`(1, 1)): MariaDB then takes it for a name, never for one of
	// its grammar's keywords.
	Quoted bool
	// Args is how many arguments the call passes (0 for a name a text the
	// parser cannot read puts before a parenthesis).
	Args int
}

// String is the function's name as [schema.]name.
func (f Func) String() string {
	if f.Schema == "" {
		return f.Name
	}
	return f.Schema + "." + f.Name
}
