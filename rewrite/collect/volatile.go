package collect

// volatileFuncs are the server's functions whose value or effect differs
// when a statement runs a second time on the same connection: the clock
// (a replay runs later, and the proxy cannot know the time the first run
// saw, so it cannot pin it with SET timestamp), randomness, the result of
// the statement run before (which in a replay is another one), user-level
// locks (not transactional: a second GET_LOCK takes the lock again) and
// sequences (not transactional: a rollback does not set them back).
// CONNECTION_ID() and the like stay: a replay runs on the same connection.
var volatileFuncs = volatileGroups(map[string][]string{
	"the clock": {"now", "current_timestamp", "localtime", "localtimestamp", "sysdate", "curdate", "current_date",
		"curtime", "current_time", "utc_date", "utc_time", "utc_timestamp", "unix_timestamp"},
	"randomness":                 {"rand", "uuid", "uuid_short", "sys_guid", "uuid_v4", "uuid_v7", "random_bytes"},
	"randomness (a random salt)": {"encrypt"},
	"the statements before it":   {"last_insert_id", "row_count", "found_rows"},
	"user-level locks, which a rollback does not release": {"get_lock", "release_lock", "release_all_locks",
		"is_free_lock", "is_used_lock"},
	"replication": {"master_pos_wait", "master_gtid_wait", "source_pos_wait"},
	"a sequence, which a rollback does not set back": {"nextval", "setval", "lastval"},
})

// volatileGroups maps each function of groups to its reason.
func volatileGroups(groups map[string][]string) map[string]string {
	out := map[string]string{}
	for why, names := range groups {
		for _, n := range names {
			out[n] = why
		}
	}
	return out
}

// volatileVars are server variables that change without a SET of the
// client's: a second run of a statement reading them can read another value.
var volatileVars = map[string]bool{
	"last_insert_id": true, "identity": true, "insert_id": true, "timestamp": true, "warning_count": true,
	"error_count": true, "rand_seed1": true, "rand_seed2": true, "last_gtid": true, "gtid_seq_no": true,
}

// VolatileVar reports whether the server variable name (lower case) is
// one of volatileVars.
func VolatileVar(name string) bool { return volatileVars[name] }

// VolatileFunc is why the value of the function name (lower case) depends
// on more than its arguments, ok false when it does not (volatileFuncs).
func VolatileFunc(name string) (why string, ok bool) {
	why, ok = volatileFuncs[name]
	return why, ok
}
