// Package tabledef reads a CREATE TABLE text as the server writes it
// (SHOW CREATE TABLE) into its definitions, and says which ALTER TABLE
// specifications turn one such table into another (Alter). It reads text
// only: what it is given comes from the server, and what it returns is
// the server's own text of each definition.
package tabledef
