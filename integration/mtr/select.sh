#!/usr/bin/env bash
# Deterministic selection of main-suite tests usable with mtr --extern.
# Prints candidate test names (sorted) that pass the static filter.
D=/usr/share/mysql/mysql-test/main
disabled=$(sed -e 's/#.*//' -e 's/[[:space:]]*:.*//' "$D/disabled.def" | sed '/^$/d')
INC='have_debug|have_debug_sync|restart_mysqld|start_mysqld|kill_mysqld|shutdown_mysqld|wait_until_connected_again|kill_and_restart|big_test|have_log_bin|have_binlog_format|master-slave|rpl_|have_[a-z_]*plugin|plugin|windows\.inc|have_ssl|have_metadata_lock_info|have_udf|mysql_upgrade|have_archive|have_blackhole|have_federated|have_innodb_[0-9]|have_32bit|have_64bit_timestamp|have_crypt|have_openssl|have_tlsv13|not_32bit|have_dynamic_loading|have_semisync|have_wsrep|have_mroonga|have_rocksdb|have_spider|have_connect|have_s3|have_oqgraph|have_sphinx|have_tokudb|have_unix_socket|have_pam|have_gssapi|have_auth|not_as_root|is_embedded|have_profiling|have_numa|have_lowercase|have_case_|have_mysql_upgrade|have_symlink|have_innodb_16k|valgrind\.inc|have_stat_tables'
BODY='INSTALL (PLUGIN|SONAME)|shutdown_server|\$MYSQLD_BOOTSTRAP|\$MYSQLD_CMD|\$MYSQLD |send_shutdown|restart_abort|mysqld\.1\.expect|\$MYSQL_UPGRADE|\$MARIADB_UPGRADE|\$MYSQL_INSTALL_DB|\$MYSQLD_SAFE|\$MYSQL_SLAP|\$MYSQLD_LAST_DATADIR'
for f in $(ls "$D"/*.test | LC_ALL=C sort); do
	t=$(basename "$f" .test)
	grep -qx -- "$t" <<<"$disabled" && continue
	for x in .opt -master.opt -slave.opt .cnf .combinations -master.sh -slave.sh; do [[ -e $D/$t$x ]] && continue 2; done
	[[ -e $D/$t.result ]] || continue
	grep -aqiE "^[[:space:]]*-*[[:space:]]*source[[:space:]]+include/($INC)" "$f" && continue
	grep -aqiE -- "$BODY" "$f" && continue
	echo "$t"
done
