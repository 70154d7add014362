package wire

import "testing"

// TestState: the SQLSTATE of each code the proxy sends is the server's.
func TestState(t *testing.T) {
	for _, c := range []struct {
		code  uint16
		state string
	}{
		{ErConCount, "08004"}, {ErHandshake, "08S01"}, {ErDBAccessDenied, "42000"}, {ErAccessDenied, "28000"},
		{ErNoDB, "3D000"}, {ErUnknownCom, "08S01"}, {ErServerShutdown, "08S01"}, {ErBadField, "42S22"},
		{ErDupEntry, "23000"}, {ErParse, "42000"}, {ErNoSuchThread, "HY000"}, {ErWrongTableName, "42000"},
		{ErUnknown, "HY000"}, {ErXAInvalid, "XAE05"}, {ErXARMFail, "XAE07"}, {ErRecordFileFull, "HY000"}, {ErTableAccessDenied, "42000"}, {ErNoSuchTable, "42S02"},
		{ErCantDoThisDuringTrx, "25000"}, {ErLockWaitTimeout, "HY000"}, {ErLockDeadlock, "40001"}, {ErQueryInterrupted, "70100"},
		{ErSpecificAccessDenied, "42000"}, {ErUserLimitReached, "42000"}, {ErUnknownStmtHandler, "HY000"},
		{ErNotSupportedAuthMode, "08004"}, {ErUnknownStorageEngine, "42000"}, {ErOptionPreventsStatement, "HY000"},
		{ErUnsupportedPS, "HY000"}, {ErViewInvalid, "HY000"}, {ErTableDefChanged, "HY000"}, {ErConnectToForeignSource, "HY000"},
		{ErNoTriggersOnSystem, "HY000"}, {ErMalformedPacket, "08S01"}, {ErSubqueriesNotSupported, "42000"},
		{ErSecureTransportRequired, "HY000"}, {1370, "42000"}, // ER_PROCACCESS_DENIED_ERROR
	} {
		if got := State(c.code); got != c.state {
			t.Errorf("State(%d) = %s, want %s", c.code, got, c.state)
		}
		if e := Error(c.code, "%s %d", "x", 1); e.Code != c.code || e.State != c.state || e.Message != "x 1" {
			t.Errorf("Error(%d) = %+v", c.code, e)
		}
	}
}
