package main

import (
	"context"
	"fmt"
	"time"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// cliProxy is the proxy the CLI's tests talk to: listening on every
// address (connect takes the admin URL's host), login tags with "+".
var cliProxy = adminapi.Proxy{Listen: "0.0.0.0:3307", UserSeparator: "+"}

// Create makes a kept sandbox of any name but "box" (taken), as
// the real one, expiring ttl after cliCreated (sandbox-ttl 24h; 0 none).
func (f *cliSandboxes) Create(_ context.Context, name, owner string, keep *time.Duration) (adminapi.Sandbox, error) {
	ttl := 24 * time.Hour
	if keep != nil {
		ttl = *keep
	}
	f.asked = append(f.asked, "create "+name+" "+owner+" "+ttl.String())
	if name == "box" {
		return adminapi.Sandbox{}, fmt.Errorf(`%w: sandbox exists: a sandbox named "box" already exists (owner sbx); discard it or choose another name`,
			adminapi.ErrConflict)
	}
	b := adminapi.Sandbox{ID: "9f50b5a8", Name: name, State: "kept", Owner: owner, Created: cliCreated()}
	if ttl > 0 {
		e := cliCreated().Add(ttl)
		b.Expires = &e
	}
	return b, nil
}
