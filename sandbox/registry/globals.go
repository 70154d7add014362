package registry

import "github.com/sqlfork/sqlfork-proxy/sandbox/globals"

// Globals are the values the sandbox gave global variables (SET GLOBAL in
// it), shared by its connections in this process; they are not in the
// registry, so another proxy process's connections to the sandbox do not
// get them, and they go with the sandbox.
func (sb *Sandbox) Globals() *globals.Set { return &sb.globals }
