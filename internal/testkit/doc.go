// Package testkit holds what the project's tests share: polling for a
// condition (Eventually), a listener on a free loopback port (Listen),
// protocol packets of known bytes (Packet, Payload), certificates (PKI)
// a scripted side connection (Script) and the checks of an error against
// the text a case wants (WantError) and of how a function marked one
// (WantMarked). It is for tests and test programs only, and imports
// nothing of the project.
package testkit
