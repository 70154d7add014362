package kind

import "fmt"

// Class is the kind of a statement.
type Class int

// Statement classes.
const (
	ClassUnparseable Class = iota
	ClassRead
	ClassWrite
	ClassDDL
	ClassTransaction
	ClassSession
	ClassRoutine
	ClassSandbox
	ClassOther
)

// classNames are the classes' names, in order.
var classNames = [...]string{"unparseable", "read", "write", "ddl", "transaction", "session", "routine", "sandbox", "other"}

// String is the class's name.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", int(c))
}
