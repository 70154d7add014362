package session

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// showSQL turns SHOW [FULL] TABLES, SHOW TABLE STATUS and SHOW DATABASES
// into a query of information_schema.TABLES (SCHEMATA) with the same columns, which the sandbox then
// answers from its own view of the database. ok is false for other
// statements; a missing database gives MariaDB's 1046.
func showSQL(sh *rewrite.Show, currentDB string) (string, bool, error) {
	if sh == nil {
		return "", false, nil
	}
	switch sh.What {
	case "DATABASES":
		return showDatabasesSQL(sh), true, nil
	case "PROCEDURE STATUS", "FUNCTION STATUS":
		return showRoutinesSQL(sh), true, nil
	}
	db := sh.DB
	if db == "" {
		db = currentDB
	}
	if db == "" {
		return "", false, errNoDatabase()
	}
	var cols []string
	nameCol := "Name"
	switch sh.What {
	case "TABLES":
		nameCol = "Tables_in_" + db
		if sh.Like != nil {
			nameCol += " (" + *sh.Like + ")"
		}
		cols = []string{"TABLE_NAME AS " + rewrite.QuoteIdent(nameCol)}
		if sh.Full {
			cols = append(cols, "TABLE_TYPE AS `Table_type`")
		}
	case "TABLE STATUS":
		cols = []string{"TABLE_NAME AS `Name`", "ENGINE AS `Engine`", "VERSION AS `Version`", "ROW_FORMAT AS `Row_format`",
			"TABLE_ROWS AS `Rows`", "AVG_ROW_LENGTH AS `Avg_row_length`", "DATA_LENGTH AS `Data_length`",
			"MAX_DATA_LENGTH AS `Max_data_length`", "INDEX_LENGTH AS `Index_length`", "DATA_FREE AS `Data_free`",
			"AUTO_INCREMENT AS `Auto_increment`", "CREATE_TIME AS `Create_time`", "UPDATE_TIME AS `Update_time`",
			"CHECK_TIME AS `Check_time`", "TABLE_COLLATION AS `Collation`", "CHECKSUM AS `Checksum`",
			"CREATE_OPTIONS AS `Create_options`", "TABLE_COMMENT AS `Comment`"}
	default:
		return "", false, nil
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM information_schema.TABLES WHERE TABLE_SCHEMA = " + rewrite.QuoteString(db)
	if sh.Like != nil {
		q += " AND TABLE_NAME LIKE " + rewrite.QuoteString(*sh.Like)
	}
	if sh.Where != "" {
		q = "SELECT * FROM (" + q + ") AS `show` WHERE " + sh.Where
	}
	return q + " ORDER BY 1", true, nil
}

// showDatabasesSQL turns SHOW DATABASES into a query of
// information_schema.SCHEMATA, which a sandbox answers without the proxy's
// own databases.
func showDatabasesSQL(sh *rewrite.Show) string {
	name := "Database"
	if sh.Like != nil {
		name += " (" + *sh.Like + ")"
	}
	q := "SELECT SCHEMA_NAME AS " + rewrite.QuoteIdent(name) + " FROM information_schema.SCHEMATA"
	if sh.Like != nil {
		q += " WHERE SCHEMA_NAME LIKE " + rewrite.QuoteString(*sh.Like)
	}
	if sh.Where != "" {
		q = "SELECT * FROM (" + q + ") AS `show` WHERE " + sh.Where
	}
	return q + " ORDER BY 1"
}

// showRoutinesSQL turns SHOW PROCEDURE STATUS and SHOW FUNCTION STATUS
// into a query of information_schema.ROUTINES with the same columns, which
// a sandbox answers with its own procedures and without other sandboxes'
// (and outside a sandbox, without the proxy's databases).
func showRoutinesSQL(sh *rewrite.Show) string {
	typ := strings.TrimSuffix(sh.What, " STATUS")
	q := "SELECT ROUTINE_SCHEMA AS `Db`, ROUTINE_NAME AS `Name`, ROUTINE_TYPE AS `Type`, DEFINER AS `Definer`, " +
		"LAST_ALTERED AS `Modified`, CREATED AS `Created`, SECURITY_TYPE AS `Security_type`, ROUTINE_COMMENT AS `Comment`, " +
		"CHARACTER_SET_CLIENT AS `character_set_client`, COLLATION_CONNECTION AS `collation_connection`, " +
		"DATABASE_COLLATION AS `Database Collation` FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = " + rewrite.QuoteString(typ)
	if sh.Like != nil {
		q += " AND ROUTINE_NAME LIKE " + rewrite.QuoteString(*sh.Like)
	}
	if sh.Where != "" {
		q = "SELECT * FROM (" + q + ") AS `show` WHERE " + sh.Where
	}
	return q + " ORDER BY 1, 2"
}
