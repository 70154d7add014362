package proxy

// Command bytes (first byte of a client command packet).
const (
	comSleep            = 0x00
	comQuit             = 0x01
	comInitDB           = 0x02
	comQuery            = 0x03
	comFieldList        = 0x04
	comCreateDB         = 0x05
	comDropDB           = 0x06
	comRefresh          = 0x07
	comShutdown         = 0x08
	comStatistics       = 0x09
	comProcessInfo      = 0x0A
	comConnect          = 0x0B
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

// commandTable is indexed by command byte; zero entries are unsupported.
var commandTable = [256]commandInfo{
	comQuit:             {"quit", respNone},
	comInitDB:           {"init_db", respSingle},
	comQuery:            {"query", respResults},
	comFieldList:        {"field_list", respFields},
	comRefresh:          {"refresh", respSingle},
	comStatistics:       {"statistics", respSingle},
	comProcessInfo:      {"process_info", respResults},
	comProcessKill:      {"process_kill", respSingle},
	comDebug:            {"debug", respSingle},
	comPing:             {"ping", respSingle},
	comChangeUser:       {"change_user", respChangeUser},
	comStmtPrepare:      {"stmt_prepare", respPrepare},
	comStmtExecute:      {"stmt_execute", respResults},
	comStmtSendLongData: {"stmt_send_long_data", respNone},
	comStmtClose:        {"stmt_close", respNone},
	comStmtReset:        {"stmt_reset", respSingle},
	comSetOption:        {"set_option", respSingle},
	comStmtFetch:        {"stmt_fetch", respRows},
	comResetConnection:  {"reset_connection", respSingle},
}

// commandName names a command byte for logs and metrics.
func commandName(cmd byte) string {
	if n := commandTable[cmd].name; n != "" {
		return n
	}
	return "other"
}
