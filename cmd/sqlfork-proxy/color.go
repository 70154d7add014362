package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// How the `sandbox` commands colour what they print: on a terminal only
// (--color auto, the default), unless NO_COLOR is set (no-color.org) or
// TERM is dumb; --color always or never decides whatever the rest says.
// Colours only mark text the CLI wrote; what a sandbox controls is
// escaped (cell, valueText) before it is painted, so it never carries an
// escape sequence of its own.

// The values of --color.
const (
	colorAuto   = "auto"
	colorAlways = "always"
	colorNever  = "never"
)

// colorChoice is the value of --color, with what auto reads of the
// environment.
type colorChoice struct {
	mode      string
	lookupEnv func(string) (string, bool)
}

func (c *colorChoice) String() string { return c.mode }
func (c *colorChoice) Type() string   { return "when" }

// Set takes auto, always or never.
func (c *colorChoice) Set(v string) error {
	switch v {
	case colorAuto, colorAlways, colorNever:
		c.mode = v
		return nil
	}
	return fmt.Errorf("%q is not auto, always or never", v)
}

// painter is the painter for output to w as c says.
func (c *colorChoice) painter(w io.Writer) painter {
	switch c.mode {
	case colorAlways:
		return painter{on: true}
	case colorNever:
		return painter{}
	}
	if v, ok := c.lookupEnv("NO_COLOR"); ok && v != "" {
		return painter{}
	}
	if v, _ := c.lookupEnv("TERM"); v == "dumb" {
		return painter{}
	}
	return painter{on: isTerminal(w)}
}

// isTerminal reports whether w is a terminal: a file that is a character
// device (not a pipe, a regular file or a buffer).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// colorFlag is the name of the `sandbox` commands' persistent flag.
const colorFlag = "color"

// paintFor is the painter of c's output, as its --color (inherited from
// `sandbox`) says; none when c has no such flag.
func paintFor(c *cobra.Command) painter {
	if f := c.Flags().Lookup(colorFlag); f != nil {
		if cc, ok := f.Value.(*colorChoice); ok {
			return cc.painter(c.OutOrStdout())
		}
	}
	return painter{}
}

// style is a colour of the CLI's output: the parameters of an SGR escape
// sequence ("": none).
type style string

// The CLI's colours, by what they mark.
const (
	plain    style = ""
	added    style = "32" // green: an insert, a value a change made, a sandbox in use
	removed  style = "31" // red: a delete, a value a change replaced, a table dropped
	conflict style = "33" // yellow: a conflict with production, a sandbox in its grace
	schema   style = "36" // cyan: DDL, a kept sandbox
)

// painter colours text with SGR escape sequences, or, off, leaves it as
// it is.
type painter struct{ on bool }

// paint is text in colour s.
func (p painter) paint(s style, text string) string {
	if !p.on || s == plain || text == "" {
		return text
	}
	return "\x1b[" + string(s) + "m" + text + "\x1b[0m"
}

// stateStyle is the colour of a sandbox's or a table's state.
func stateStyle(state string) style {
	switch state {
	case "active", "fork", "created":
		return added
	case "kept":
		return schema
	case "grace", "unpromoted":
		return conflict
	case "dropped":
		return removed
	}
	return plain
}
