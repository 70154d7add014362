// Package registry holds the sandboxes of one proxy process and the
// registry every process shares in the upstream (`<prefix>_meta`): which
// sandboxes exist, their tables, leases, graces and holders. A Registry
// owns the side connections everything else runs its upstream work on,
// renews leases and expires sandboxes (the reaper), keeps this process's
// liveness lock, and checks the registry for what other processes changed
// in a shared sandbox. A Sandbox's tables and lifetime are reached only
// through its methods.
package registry
