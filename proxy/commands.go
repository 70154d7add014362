package proxy

import "github.com/sqlfork/sqlfork-proxy/wire"

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
	case wire.ComQuit:
		return commandInfo{"quit", respNone}
	case wire.ComInitDB:
		return commandInfo{"init_db", respSingle}
	case wire.ComQuery:
		return commandInfo{"query", respResults}
	case wire.ComFieldList:
		return commandInfo{"field_list", respFields}
	case wire.ComRefresh:
		return commandInfo{"refresh", respSingle}
	case wire.ComStatistics:
		return commandInfo{"statistics", respSingle}
	case wire.ComProcessInfo:
		return commandInfo{"process_info", respResults}
	case wire.ComProcessKill:
		return commandInfo{"process_kill", respSingle}
	case wire.ComDebug:
		return commandInfo{"debug", respSingle}
	case wire.ComPing:
		return commandInfo{"ping", respSingle}
	case wire.ComChangeUser:
		return commandInfo{"change_user", respChangeUser}
	case wire.ComStmtPrepare:
		return commandInfo{"stmt_prepare", respPrepare}
	case wire.ComStmtExecute:
		return commandInfo{"stmt_execute", respResults}
	case wire.ComStmtSendLongData:
		return commandInfo{"stmt_send_long_data", respNone}
	case wire.ComStmtClose:
		return commandInfo{"stmt_close", respNone}
	case wire.ComStmtReset:
		return commandInfo{"stmt_reset", respSingle}
	case wire.ComSetOption:
		return commandInfo{"set_option", respSingle}
	case wire.ComStmtFetch:
		return commandInfo{"stmt_fetch", respRows}
	case wire.ComResetConnection:
		return commandInfo{"reset_connection", respSingle}
	case wire.ComStmtBulkExecute:
		return commandInfo{"stmt_bulk_execute", respResults}
	}
	return commandInfo{"other", respUnsupported}
}

// commandName names a command byte for logs and metrics.
func commandName(cmd byte) string { return lookupCommand(cmd).name }

// shape is the wire shape of the answer to a command the proxy forwards.
func (i commandInfo) shape() wire.Shape {
	switch i.resp {
	case respSingle:
		return wire.ShapeSingle
	case respResults:
		return wire.ShapeResults
	case respPrepare:
		return wire.ShapePrepare
	case respRows:
		return wire.ShapeRows
	case respFields:
		return wire.ShapeFields
	}
	return wire.ShapeNone
}
