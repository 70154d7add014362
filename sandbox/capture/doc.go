// Package capture installs, reads and removes the change capture of forks:
// a side table and triggers that keep the fork-time image of each row a
// sandbox changes, so that DIFF reads what changed instead of comparing
// whole tables (Tracker).
package capture
