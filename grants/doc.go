// Package grants reads an account's privileges as the server states them
// (SHOW GRANTS, roles included) and answers what the proxy asks of them:
// whether the proxy's account can change production (ProductionWritable),
// whether an account may read a table or run a routine (Set), and whether
// a sandbox's account holds what the proxy's schemas need
// (SandboxGrantsMissing). It parses grant lines only; it decides nothing
// about sandboxes.
package grants
