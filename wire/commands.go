package wire

// Command bytes (the first payload byte of a client command packet).
const (
	ComQuit             byte = 0x01
	ComInitDB           byte = 0x02
	ComQuery            byte = 0x03
	ComFieldList        byte = 0x04
	ComRefresh          byte = 0x07
	ComShutdown         byte = 0x08
	ComStatistics       byte = 0x09
	ComProcessInfo      byte = 0x0A
	ComProcessKill      byte = 0x0C
	ComDebug            byte = 0x0D
	ComPing             byte = 0x0E
	ComChangeUser       byte = 0x11
	ComStmtPrepare      byte = 0x16
	ComStmtExecute      byte = 0x17
	ComStmtSendLongData byte = 0x18
	ComStmtClose        byte = 0x19
	ComStmtReset        byte = 0x1A
	ComSetOption        byte = 0x1B
	ComStmtFetch        byte = 0x1C
	ComResetConnection  byte = 0x1F
	ComStmtBulkExecute  byte = 0xFA // MariaDB's (ExtCapBulkOperations)
)

// Flags of COM_STMT_BULK_EXECUTE (the int<2> after the statement id).
const (
	BulkSendUnitResults uint16 = 64  // a result set of per-row outcomes (MariaDB 11.5+)
	BulkSendTypes       uint16 = 128 // parameter types follow the flags
)
