// Package review reads what a sandbox changed and applies it: SANDBOX DIFF
// (per row and per DDL statement), EXPORT (a script a person reviews) and
// PROMOTE (applied to production with the promote account, within the
// promoting user's own rights). Every statement it generates is read back
// by the rewrite engine before it is shown or run (generated.go).
package review
