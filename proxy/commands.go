package proxy

// Command bytes (first byte of a client command packet).
const (
	comQuit             = 0x01
	comInitDB           = 0x02
	comQuery            = 0x03
	comFieldList        = 0x04
	comRefresh          = 0x07
	comShutdown         = 0x08
	comStatistics       = 0x09
	comProcessInfo      = 0x0A
	comProcessKill      = 0x0C
	comDebug            = 0x0D
	comPing             = 0x0E
	comChangeUser       = 0x11
	comStmtPrepare      = 0x16
	comStmtExecute      = 0x17
	comStmtSendLongData = 0x18
	comStmtClose        = 0x19
	comStmtReset        = 0x1A
	comSetOption        = 0x1B
	comStmtFetch        = 0x1C
	comResetConnection  = 0x1F
)

// response is the shape of the upstream's answer to a command.
type response int

const (
	respUnsupported response = iota // refused by the proxy
	respNone                        // no response (STMT_CLOSE, SEND_LONG_DATA)
	respSingle                      // one packet: OK, ERR, EOF or a string
	respResults                     // result sets (text or binary), LOCAL INFILE
	respPrepare                     // COM_STMT_PREPARE_OK and its definitions
	respRows                        // rows then EOF (COM_STMT_FETCH)
	respFields                      // column definitions then EOF (COM_FIELD_LIST)
	respChangeUser                  // handled by the proxy
)

// commandInfo describes how the proxy handles one command byte.
type commandInfo struct {
	name string
	resp response
}

// lookupCommand says how the proxy handles command byte cmd; commands it
// does not list are refused.
func lookupCommand(cmd byte) commandInfo {
	switch cmd {
	case comQuit:
		return commandInfo{"quit", respNone}
	case comInitDB:
		return commandInfo{"init_db", respSingle}
	case comQuery:
		return commandInfo{"query", respResults}
	case comFieldList:
		return commandInfo{"field_list", respFields}
	case comRefresh:
		return commandInfo{"refresh", respSingle}
	case comStatistics:
		return commandInfo{"statistics", respSingle}
	case comProcessInfo:
		return commandInfo{"process_info", respResults}
	case comProcessKill:
		return commandInfo{"process_kill", respSingle}
	case comDebug:
		return commandInfo{"debug", respSingle}
	case comPing:
		return commandInfo{"ping", respSingle}
	case comChangeUser:
		return commandInfo{"change_user", respChangeUser}
	case comStmtPrepare:
		return commandInfo{"stmt_prepare", respPrepare}
	case comStmtExecute:
		return commandInfo{"stmt_execute", respResults}
	case comStmtSendLongData:
		return commandInfo{"stmt_send_long_data", respNone}
	case comStmtClose:
		return commandInfo{"stmt_close", respNone}
	case comStmtReset:
		return commandInfo{"stmt_reset", respSingle}
	case comSetOption:
		return commandInfo{"set_option", respSingle}
	case comStmtFetch:
		return commandInfo{"stmt_fetch", respRows}
	case comResetConnection:
		return commandInfo{"reset_connection", respSingle}
	}
	return commandInfo{"other", respUnsupported}
}

// commandName names a command byte for logs and metrics.
func commandName(cmd byte) string { return lookupCommand(cmd).name }
