package wire

// Error codes the proxy sends or interprets, named as in MariaDB's
// include/mysqld_error.h (ER_…). They are server codes: client libraries
// take an ERR packet carrying one of their own codes (2000–2999) for a
// malformed packet (libmariadb reports 2027), so the proxy never sends
// those.
const (
	ErDBAccessDenied           uint16 = 1044 // ER_DBACCESS_DENIED_ERROR
	ErAccessDenied             uint16 = 1045 // ER_ACCESS_DENIED_ERROR
	ErNoDB                     uint16 = 1046 // ER_NO_DB_ERROR
	ErBadDB                    uint16 = 1049 // ER_BAD_DB_ERROR
	ErUnknownCom               uint16 = 1047 // ER_UNKNOWN_COM_ERROR
	ErConCount                 uint16 = 1040 // ER_CON_COUNT_ERROR
	ErHandshake                uint16 = 1043 // ER_HANDSHAKE_ERROR
	ErServerShutdown           uint16 = 1053 // ER_SERVER_SHUTDOWN
	ErBadField                 uint16 = 1054 // ER_BAD_FIELD_ERROR
	ErDupEntry                 uint16 = 1062 // ER_DUP_ENTRY
	ErParse                    uint16 = 1064 // ER_PARSE_ERROR
	ErNoSuchThread             uint16 = 1094 // ER_NO_SUCH_THREAD
	ErKillDenied               uint16 = 1095 // ER_KILL_DENIED_ERROR
	ErWrongDBName              uint16 = 1102 // ER_WRONG_DB_NAME
	ErWrongTableName           uint16 = 1103 // ER_WRONG_TABLE_NAME
	ErUnknown                  uint16 = 1105 // ER_UNKNOWN_ERROR
	ErTableAccessDenied        uint16 = 1142 // ER_TABLEACCESS_DENIED_ERROR
	ErColumnAccessDenied       uint16 = 1143 // ER_COLUMNACCESS_DENIED_ERROR
	ErNoSuchTable              uint16 = 1146 // ER_NO_SUCH_TABLE
	ErRecordFileFull           uint16 = 1114 // ER_RECORD_FILE_FULL
	ErMalformedPacket          uint16 = 1835 // ER_MALFORMED_PACKET
	ErCantDoThisDuringTrx      uint16 = 1179 // ER_CANT_DO_THIS_DURING_AN_TRANSACTION
	ErUnknownSystemVariable    uint16 = 1193 // ER_UNKNOWN_SYSTEM_VARIABLE
	ErLockWaitTimeout          uint16 = 1205 // ER_LOCK_WAIT_TIMEOUT
	ErWrongTypeForVar          uint16 = 1232 // ER_WRONG_TYPE_FOR_VAR
	ErLocalVariable            uint16 = 1228 // ER_LOCAL_VARIABLE (a SESSION variable in SET GLOBAL)
	ErGlobalVariable           uint16 = 1229 // ER_GLOBAL_VARIABLE (a GLOBAL variable in SET SESSION)
	ErIncorrectGlobalLocalVar  uint16 = 1238 // ER_INCORRECT_GLOBAL_LOCAL_VAR
	ErLockDeadlock             uint16 = 1213 // ER_LOCK_DEADLOCK
	ErUserLimitReached         uint16 = 1226 // ER_USER_LIMIT_REACHED
	ErUnknownStmtHandler       uint16 = 1243 // ER_UNKNOWN_STMT_HANDLER
	ErNotSupportedAuthMode     uint16 = 1251 // ER_NOT_SUPPORTED_AUTH_MODE
	ErUnknownStorageEngine     uint16 = 1286 // ER_UNKNOWN_STORAGE_ENGINE
	ErOptionPreventsStatement  uint16 = 1290 // ER_OPTION_PREVENTS_STATEMENT
	ErSpecificAccessDenied     uint16 = 1227 // ER_SPECIFIC_ACCESS_DENIED_ERROR
	ErUnsupportedPS            uint16 = 1295 // ER_UNSUPPORTED_PS
	ErViewInvalid              uint16 = 1356 // ER_VIEW_INVALID
	ErTableDefChanged          uint16 = 1412 // ER_TABLE_DEF_CHANGED
	ErXAInvalid                uint16 = 1398 // ER_XAER_INVAL
	ErXARMFail                 uint16 = 1399 // ER_XAER_RMFAIL
	ErQueryInterrupted         uint16 = 1317 // ER_QUERY_INTERRUPTED
	ErReadOnlyTransaction      uint16 = 1792 // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
	ErNoTriggersOnSystem       uint16 = 1465 // ER_NO_TRIGGERS_ON_SYSTEM_SCHEMA
	ErConnectToForeignSource   uint16 = 1429 // ER_CONNECT_TO_FOREIGN_DATA_SOURCE
	ErVariableIsReadonly       uint16 = 1621 // ER_VARIABLE_IS_READONLY (a session value that is the global's, read-only)
	ErSetStatementNotSupported uint16 = 1971 // ER_SET_STATEMENT_NOT_SUPPORTED (MariaDB)
	ErStatementTimeout         uint16 = 1969 // ER_STATEMENT_TIMEOUT (MariaDB: max_statement_time)
	ErSubqueriesNotSupported   uint16 = 1970 // ER_SUBQUERIES_NOT_SUPPORTED (MariaDB: KILL, HANDLER … READ, EXECUTE … USING)
	ErQueryTimeout             uint16 = 3024 // ER_QUERY_TIMEOUT (MySQL: MAX_EXECUTION_TIME)
	ErSecureTransportRequired  uint16 = 3159 // ER_SECURE_TRANSPORT_REQUIRED (MySQL)
)
