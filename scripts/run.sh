#!/usr/bin/env bash
# scripts/run.sh - run sqlfork-proxy locally (this is what `make run` calls).
#
# If UPSTREAM or SQLFORK_UPSTREAM (host:port) is set and reachable, the proxy
# is started against it with SQLFORK_UPSTREAM_USER / SQLFORK_UPSTREAM_PASSWORD
# (default sqlfork / sqlfork).
#
# Otherwise a throwaway MariaDB is started from ./.sqlfork/ (data dir, socket,
# pid file and error log live there; installed with apt-get if missing), on
# 127.0.0.1:3306 if free or another free port. On first start it gets the
# `demo` schema from scripts/demo.sql. It has four accounts:
#   sqlfork/sqlfork              the proxy's upstream account, least privilege
#                                (docs/SANDBOXES.md): SELECT, SHOW VIEW, TRIGGER on
#                                demo, SELECT on mysql.func, ALL PRIVILEGES on
#                                `\_sqlfork%`.* only, so the database itself
#                                keeps production from being written
#   app/app                      an application's own account, logging in
#                                through the proxy: it may write demo (so it
#                                may promote what its sandboxes changed), and
#                                ALL on `\_sqlfork%`.*, where its sandboxes live
#   sqlfork_promote/sqlfork_promote  the proxy's promote account
#                                (--promote-user): writes and DDL on demo only
#   sqlfork_admin/sqlfork_admin  ALL PRIVILEGES, for direct maintenance
# All are (re)created and their grants re-applied on every start, which
# also migrates a ./.sqlfork made by an earlier version (where sqlfork had all
# privileges). The proxy's admin API (the `sqlfork-proxy sandbox` CLI) gets a
# bearer token, made once in ./.sqlfork/admin-token. The data dir is reused
# on later runs; `scripts/stop-mariadb.sh` (or `make clean`) stops the server
# and deletes ./.sqlfork.
#
# The proxy runs in the foreground; Ctrl-C stops it and the throwaway MariaDB.
# Extra arguments are passed to `sqlfork-proxy serve`.
#
# Environment:
#   UPSTREAM, SQLFORK_UPSTREAM            use this server instead of a throwaway one
#   SQLFORK_UPSTREAM_USER/_PASSWORD       credentials for it (default sqlfork/sqlfork)
#   SQLFORK_LISTEN                        proxy address        (default 127.0.0.1:3307)
#   SQLFORK_METRICS_LISTEN                metrics address      (default 127.0.0.1:9104)
#   SQLFORK_PROXY_BIN                     proxy binary         (default bin/sqlfork-proxy)
#   SQLFORK_STATE_DIR                     throwaway MariaDB dir (default ./.sqlfork)
#   SQLFORK_SANDBOX_PREFIX                the proxy's --sandbox-prefix (default _sqlfork);
#                                         sqlfork gets all privileges on schemas starting with it
#   SQLFORK_DB_ONLY=1                     only run the throwaway MariaDB, no proxy
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

STATE_DIR="${SQLFORK_STATE_DIR:-$ROOT/.sqlfork}"
PROXY_BIN="${SQLFORK_PROXY_BIN:-$ROOT/bin/sqlfork-proxy}"
PROXY_LISTEN="${SQLFORK_LISTEN:-127.0.0.1:3307}"
METRICS_LISTEN="${SQLFORK_METRICS_LISTEN:-127.0.0.1:9104}"
DB_ONLY="${SQLFORK_DB_ONLY:-0}"
DEMO_SQL="$ROOT/scripts/demo.sql"

DB_USER=sqlfork # the proxy's upstream account (least privilege on the throwaway MariaDB)
DB_PASSWORD=sqlfork
ADMIN_USER=sqlfork_admin # all privileges, for direct maintenance of the throwaway MariaDB
ADMIN_PASSWORD=sqlfork_admin
APP_USER=app # an application's account: writes demo, through the proxy into its sandboxes
APP_PASSWORD=app
PROMOTE_USER=sqlfork_promote # the proxy's promote account: writes and DDL on demo
PROMOTE_PASSWORD=sqlfork_promote
# What an account that writes the demo schema holds there.
WRITER_GRANTS="SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, CREATE VIEW, SHOW VIEW, TRIGGER"
# Production schemas of the throwaway MariaDB: sqlfork may only read them.
PROD_SCHEMAS=(demo)
SANDBOX_PREFIX="${SQLFORK_SANDBOX_PREFIX:-_sqlfork}"

log()  { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die()  { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# as_root CMD... - run as root (directly, or through sudo).
as_root() {
	if [[ $EUID -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root to run '$*' and sudo is not installed"
	fi
}

# find_bin NAME... - first of NAMEs found in $PATH, /usr/sbin or /usr/bin.
find_bin() {
	local name dir
	for name in "$@"; do
		if command -v "$name" >/dev/null 2>&1; then
			command -v "$name"
			return 0
		fi
		for dir in /usr/sbin /usr/bin /usr/local/sbin /usr/local/bin; do
			if [[ -x $dir/$name ]]; then
				echo "$dir/$name"
				return 0
			fi
		done
	done
	return 1
}

# tcp_open HOST PORT - true if something accepts TCP connections there.
tcp_open() {
	local host=${1#[} port=$2
	host=${host%]}
	timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$host" "$port" 2>/dev/null
}

# split_addr HOST:PORT - sets ADDR_HOST and ADDR_PORT.
split_addr() {
	[[ $1 == *:* ]] || die "address '$1' is not host:port"
	ADDR_HOST=${1%:*}
	ADDR_PORT=${1##*:}
	[[ $ADDR_PORT =~ ^[0-9]+$ ]] || die "address '$1' has no numeric port"
}

print_connect_help() { # UPSTREAM_ADDR USER PASSWORD [DB [DIRECT_USER DIRECT_PASSWORD]]
	local up=$1 user=$2 pass=$3 db=${4:-} duser=${5:-$2} dpass=${6:-$3}
	split_addr "$up"
	local up_host=$ADDR_HOST up_port=$ADDR_PORT
	split_addr "$PROXY_LISTEN"
	cat >&2 <<-EOF

		  upstream MariaDB : $up (user $user)
		  sqlfork-proxy    : $PROXY_LISTEN   metrics: http://$METRICS_LISTEN/metrics
		  web console      : http://$METRICS_LISTEN/ui/

		  Connect through the proxy:
		    mariadb -h$ADDR_HOST -P$ADDR_PORT -u$user -p$pass${db:+ $db}
		  Connect to MariaDB directly:
		    mariadb -h$up_host -P$up_port -u$duser -p$dpass${db:+ $db}

		  Ctrl-C stops everything.

	EOF
}

run_proxy() { # UPSTREAM_ADDR USER PASSWORD [extra args...]
	local up=$1 user=$2 pass=$3
	shift 3
	log "starting $PROXY_BIN serve --listen $PROXY_LISTEN --upstream $up"
	# The proxy's output goes to the terminal as usual, but it runs as a
	# background child so that signals sent to this script (Ctrl-C, or a TERM
	# to the script alone) run the trap at once instead of after the proxy
	# exits; the EXIT trap then stops the proxy and MariaDB.
	# The password goes in the environment, not argv, where ps would show it.
	SQLFORK_UPSTREAM_PASSWORD="$pass" "$PROXY_BIN" serve \
		--listen "$PROXY_LISTEN" \
		--upstream "$up" \
		--upstream-user "$user" \
		--metrics-listen "$METRICS_LISTEN" \
		"$@" &
	PROXY_PID=$!
	local rc=0
	wait "$PROXY_PID" || rc=$?
	PROXY_PID=
	log "sqlfork-proxy exited with status $rc"
	return "$rc"
}

check_proxy() {
	[[ $DB_ONLY == 1 ]] && return 0
	[[ -x $PROXY_BIN ]] || die "$PROXY_BIN not found; run 'make build' (or 'make run')"
	split_addr "$PROXY_LISTEN"
	if tcp_open "$ADDR_HOST" "$ADDR_PORT"; then
		warn "something already listens on $PROXY_LISTEN; the proxy will probably fail to start"
	fi
}

# ---------------------------------------------------------------------------
# 1. An existing upstream.

UP="${UPSTREAM:-${SQLFORK_UPSTREAM:-}}"
if [[ -n $UP ]]; then
	split_addr "$UP"
	if tcp_open "$ADDR_HOST" "$ADDR_PORT"; then
		check_proxy
		[[ $DB_ONLY == 1 ]] && die "SQLFORK_DB_ONLY=1 makes no sense with an external upstream ($UP)"
		user="${SQLFORK_UPSTREAM_USER:-$DB_USER}"
		pass="${SQLFORK_UPSTREAM_PASSWORD-$DB_PASSWORD}"
		log "using upstream $UP"
		print_connect_help "$UP" "$user" "$pass"
		SQLFORK_UPSTREAM_PASSWORD="$pass" exec "$PROXY_BIN" serve \
			--listen "$PROXY_LISTEN" \
			--upstream "$UP" \
			--upstream-user "$user" \
			--metrics-listen "$METRICS_LISTEN" \
			"$@"
	fi
	warn "upstream $UP is not reachable; starting a throwaway MariaDB under $STATE_DIR instead"
fi

# ---------------------------------------------------------------------------
# 2. A throwaway MariaDB under ./.sqlfork.

check_proxy

DATA_DIR="$STATE_DIR/data"
PID_FILE="$STATE_DIR/mariadbd.pid"
LOG_FILE="$STATE_DIR/mariadbd.err"
SOCK="$STATE_DIR/mysqld.sock"
if (( ${#SOCK} > 100 )); then # unix socket paths are limited to ~107 bytes
	SOCK="/tmp/sqlfork-$(printf '%s' "$STATE_DIR" | cksum | cut -d' ' -f1).sock"
fi

# wait_gone PID TENTHS - wait up to TENTHS/10 s for PID to exit; false if it didn't.
wait_gone() {
	local i
	for ((i = 0; i < $2; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	! kill -0 "$1" 2>/dev/null
}

# stop_child NAME PID - TERM, wait up to a minute, then KILL.
stop_child() {
	kill -TERM "$2" 2>/dev/null || true
	if ! wait_gone "$2" 600; then
		warn "$1 (pid $2) did not stop within 60s; killing it"
		kill -KILL "$2" 2>/dev/null || true
	fi
	wait "$2" 2>/dev/null || true
}

DB_PID=
PROXY_PID=
GOT_SIGNAL=
POLICY_ADDED=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	[[ -n $POLICY_ADDED ]] && as_root rm -f "$POLICY_ADDED"
	if [[ -n $PROXY_PID ]] && kill -0 "$PROXY_PID" 2>/dev/null; then
		# On Ctrl-C the proxy got SIGINT from the terminal too: give it a
		# moment to shut down on its own before sending TERM.
		[[ $GOT_SIGNAL == INT ]] && wait_gone "$PROXY_PID" 50 || true
		if kill -0 "$PROXY_PID" 2>/dev/null; then
			log "stopping sqlfork-proxy (pid $PROXY_PID)"
			stop_child sqlfork-proxy "$PROXY_PID"
		fi
	fi
	if [[ -n $DB_PID ]] && kill -0 "$DB_PID" 2>/dev/null; then
		log "stopping mariadbd (pid $DB_PID)"
		stop_child mariadbd "$DB_PID"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'GOT_SIGNAL=INT; exit 130' INT
trap 'GOT_SIGNAL=TERM; exit 143' TERM
trap 'GOT_SIGNAL=HUP; exit 129' HUP

install_mariadb() {
	local pkgs=("$@")
	command -v apt-get >/dev/null 2>&1 ||
		die "MariaDB is not installed and apt-get is not available; install mariadb-server and mariadb-client"
	log "installing ${pkgs[*]} with apt-get"
	# Keep the package from starting (and occupying 3306 with) the system
	# service: we only need the binaries.
	local policy=/usr/sbin/policy-rc.d
	if [[ ! -e $policy ]]; then
		POLICY_ADDED=$policy # removed again below, or by the EXIT trap
		printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
		as_root chmod 755 "$policy"
	fi
	local rc=0
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q || rc=$?
	if (( rc == 0 )); then
		as_root env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends "${pkgs[@]}" || rc=$?
	fi
	if [[ -n $POLICY_ADDED ]]; then
		as_root rm -f "$POLICY_ADDED"
		POLICY_ADDED=
	fi
	(( rc == 0 )) || die "apt-get failed (exit $rc)"
}

MARIADBD="$(find_bin mariadbd mysqld || true)"
INSTALL_DB="$(find_bin mariadb-install-db mysql_install_db || true)"
CLIENT="$(find_bin mariadb mysql || true)"
missing=()
[[ -n $MARIADBD && -n $INSTALL_DB ]] || missing+=(mariadb-server)
[[ -n $CLIENT ]] || missing+=(mariadb-client)
if (( ${#missing[@]} )); then
	install_mariadb "${missing[@]}"
	MARIADBD="$(find_bin mariadbd mysqld)" || die "mariadbd still not found after installing"
	INSTALL_DB="$(find_bin mariadb-install-db mysql_install_db)" || die "mariadb-install-db still not found"
	CLIENT="$(find_bin mariadb mysql)" || die "mariadb client still not found"
fi

# Server options shared by mariadb-install-db (passed on to its bootstrap
# server) and mariadbd.
COMMON_ARGS=(
	--innodb-buffer-pool-size=128M
	--innodb-log-file-size=48M
)
[[ $EUID -eq 0 ]] && COMMON_ARGS+=(--user=root) # mariadbd refuses to run as root otherwise

mkdir -p "$STATE_DIR"

# A mariadbd left over from an earlier run (e.g. the script was SIGKILLed):
# shut it down so we restart cleanly; a pid file without a live mariadbd of
# ours is just stale.
ours() { # PID - true if PID is a mariadbd serving $DATA_DIR
	local comm
	comm="$(cat "/proc/$1/comm" 2>/dev/null)" || return 1
	[[ $comm == mariadbd || $comm == mysqld ]] || return 1
	tr '\0' '\n' <"/proc/$1/cmdline" | grep -qxF -- "--datadir=$DATA_DIR"
}
if [[ -f $PID_FILE ]]; then
	old_pid="$(tr -dc 0-9 <"$PID_FILE")"
	if [[ -n $old_pid ]] && kill -0 "$old_pid" 2>/dev/null && ours "$old_pid"; then
		log "mariadbd from an earlier run is still running (pid $old_pid); restarting it cleanly"
		kill -TERM "$old_pid"
		if ! wait_gone "$old_pid" 600; then
			warn "pid $old_pid did not stop within 60s; killing it"
			kill -KILL "$old_pid"
			wait_gone "$old_pid" 50 || true
		fi
	else
		log "removing stale pid file $PID_FILE"
	fi
	rm -f "$PID_FILE"
fi
rm -f "$SOCK" "$SOCK.lock"

# First start: create the system tables. The marker guards against reusing a
# half-initialised data dir.
if [[ ! -f $STATE_DIR/.installed || ! -d $DATA_DIR/mysql ]]; then
	rm -rf "$DATA_DIR" "$STATE_DIR/.installed" "$STATE_DIR/.initialized"
	log "initialising MariaDB data dir $DATA_DIR"
	if ! "$INSTALL_DB" --no-defaults --datadir="$DATA_DIR" \
		--auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
		"${COMMON_ARGS[@]}" >"$STATE_DIR/install-db.log" 2>&1; then
		tail -n 30 "$STATE_DIR/install-db.log" >&2
		die "$INSTALL_DB failed (full output: $STATE_DIR/install-db.log)"
	fi
	touch "$STATE_DIR/.installed"
fi

# Port: 3306 if free, else the one used last time, else the first free one.
pick_port() {
	local p candidates=()
	candidates+=(3306)
	[[ -f $STATE_DIR/port ]] && candidates+=("$(tr -dc 0-9 <"$STATE_DIR/port")")
	candidates+=($(seq 3308 3399) $(seq 13306 13399))
	split_addr "$PROXY_LISTEN"
	for p in "${candidates[@]}"; do
		[[ -n $p && $p != "$ADDR_PORT" ]] || continue
		tcp_open 127.0.0.1 "$p" || { echo "$p"; return 0; }
	done
	return 1
}
PORT="$(pick_port)" || die "no free port found for MariaDB"
[[ $PORT == 3306 ]] || log "127.0.0.1:3306 is taken; using port $PORT"
echo "$PORT" >"$STATE_DIR/port"
printf 'PORT=%s\nSOCK=%s\n' "$PORT" "$SOCK" >"$STATE_DIR/env"

log "starting mariadbd on 127.0.0.1:$PORT (log: $LOG_FILE)"
log_offset=$(( $(stat -c %s "$LOG_FILE" 2>/dev/null || echo 0) + 1 ))
# Started in the background of a non-interactive shell, mariadbd ignores the
# terminal's Ctrl-C; the EXIT trap shuts it down.
"$MARIADBD" --no-defaults \
	--datadir="$DATA_DIR" \
	--socket="$SOCK" \
	--port="$PORT" \
	--bind-address=127.0.0.1 \
	--skip-name-resolve \
	--pid-file="$PID_FILE" \
	--log-error="$LOG_FILE" \
	--innodb-flush-log-at-trx-commit=2 \
	--skip-log-bin \
	--max-connections=500 \
	--max-allowed-packet=64M \
	--performance-schema=OFF \
	--character-set-server=utf8mb4 \
	--collation-server=utf8mb4_general_ci \
	--port-open-timeout=10 \
	"${COMMON_ARGS[@]}" \
	</dev/null >>"$STATE_DIR/mariadbd.out" 2>&1 &
DB_PID=$!

root_sql() { "$CLIENT" --no-defaults --protocol=socket --socket="$SOCK" -uroot --default-character-set=utf8mb4 "$@"; }

ready=0
for ((i = 0; i < 600; i++)); do
	if ! kill -0 "$DB_PID" 2>/dev/null; then
		break
	fi
	if root_sql -e 'SELECT 1' >/dev/null 2>&1; then
		ready=1
		break
	fi
	sleep 0.1
done
if (( ! ready )); then
	tail -c "+$log_offset" "$LOG_FILE" 2>/dev/null | tail -n 30 >&2 || true
	die "mariadbd did not become ready (log: $LOG_FILE)"
fi

# The accounts, on every start: creating them is idempotent, and sqlfork's
# grants are revoked and granted again, so a data dir from an earlier version
# (which gave sqlfork ALL PRIVILEGES ON *.*) ends up least-privilege too.
[[ $SANDBOX_PREFIX =~ ^[a-z0-9_]+$ ]] ||
	die "SQLFORK_SANDBOX_PREFIX '$SANDBOX_PREFIX' may hold only lower-case letters, digits and '_'"
PREFIX_PATTERN="${SANDBOX_PREFIX//_/\\_}%" # _sqlfork -> \_sqlfork% (LIKE: _ is a wildcard)
accounts_sql() {
	local host schema
	for host in 127.0.0.1 localhost; do
		cat <<-EOF
			CREATE USER IF NOT EXISTS '$ADMIN_USER'@'$host' IDENTIFIED VIA mysql_native_password USING PASSWORD('$ADMIN_PASSWORD');
			GRANT ALL PRIVILEGES ON *.* TO '$ADMIN_USER'@'$host' WITH GRANT OPTION;
			CREATE USER IF NOT EXISTS '$DB_USER'@'$host' IDENTIFIED VIA mysql_native_password USING PASSWORD('$DB_PASSWORD');
			REVOKE ALL PRIVILEGES, GRANT OPTION FROM '$DB_USER'@'$host';
		EOF
		for schema in "${PROD_SCHEMAS[@]}"; do
			echo "GRANT SELECT, SHOW VIEW, TRIGGER ON \`$schema\`.* TO '$DB_USER'@'$host';"
		done
		cat <<-EOF
			GRANT SELECT ON mysql.func TO '$DB_USER'@'$host';
			GRANT ALL PRIVILEGES ON \`$PREFIX_PATTERN\`.* TO '$DB_USER'@'$host';
			CREATE USER IF NOT EXISTS '$APP_USER'@'$host' IDENTIFIED VIA mysql_native_password USING PASSWORD('$APP_PASSWORD');
			REVOKE ALL PRIVILEGES, GRANT OPTION FROM '$APP_USER'@'$host';
			GRANT SELECT ON mysql.func TO '$APP_USER'@'$host';
			GRANT ALL PRIVILEGES ON \`$PREFIX_PATTERN\`.* TO '$APP_USER'@'$host';
			CREATE USER IF NOT EXISTS '$PROMOTE_USER'@'$host' IDENTIFIED VIA mysql_native_password USING PASSWORD('$PROMOTE_PASSWORD');
			REVOKE ALL PRIVILEGES, GRANT OPTION FROM '$PROMOTE_USER'@'$host';
		EOF
		for schema in "${PROD_SCHEMAS[@]}"; do
			echo "GRANT $WRITER_GRANTS ON \`$schema\`.* TO '$APP_USER'@'$host';"
			echo "GRANT $WRITER_GRANTS ON \`$schema\`.* TO '$PROMOTE_USER'@'$host';"
		done
	done
}
if [[ ! -f $STATE_DIR/.initialized ]]; then
	log "loading the demo schema"
	root_sql <"$DEMO_SQL"
	touch "$STATE_DIR/.initialized"
fi
log "granting $DB_USER (the proxy's account) SELECT, SHOW VIEW, TRIGGER on ${PROD_SCHEMAS[*]} and all privileges on \`$PREFIX_PATTERN\`.* only; $APP_USER and $PROMOTE_USER write ${PROD_SCHEMAS[*]}; $ADMIN_USER has all privileges"
accounts_sql | root_sql || die "could not set up the accounts $DB_USER, $APP_USER, $PROMOTE_USER and $ADMIN_USER"

# The admin API's bearer token, made once (readable by this user only).
TOKEN_FILE="$STATE_DIR/admin-token"
if [[ ! -s $TOKEN_FILE ]]; then
	(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOKEN_FILE")
fi
ADMIN_TOKEN="$(cat "$TOKEN_FILE")"

UP="127.0.0.1:$PORT"
version="$("$CLIENT" --no-defaults -h127.0.0.1 -P"$PORT" -u"$DB_USER" -p"$DB_PASSWORD" -N -e 'SELECT VERSION()')" ||
	die "cannot log in to $UP as $DB_USER (if ./.sqlfork was set up differently, wipe it: scripts/stop-mariadb.sh)"
log "MariaDB $version ready on $UP"

if [[ $DB_ONLY == 1 ]]; then
	cat >&2 <<-EOF

		  MariaDB (throwaway, data in $STATE_DIR) on $UP:
		    mariadb -h127.0.0.1 -P$PORT -u$ADMIN_USER -p$ADMIN_PASSWORD demo
		  ($DB_USER/$DB_PASSWORD is the proxy's least-privilege account: read-only on ${PROD_SCHEMAS[*]})

		  Ctrl-C stops it.

	EOF
	wait "$DB_PID"
	exit
fi

print_connect_help "$UP" "$DB_USER" "$DB_PASSWORD" demo "$ADMIN_USER" "$ADMIN_PASSWORD"
split_addr "$PROXY_LISTEN"
cat >&2 <<-EOF
	  Review and promote (README's quick start):
	    mariadb -h$ADDR_HOST -P$ADDR_PORT -u$APP_USER -p$APP_PASSWORD demo    # an application's account: may promote
	    export SQLFORK_ADMIN_TOKEN=\$(cat $TOKEN_FILE)
	    $PROXY_BIN sandbox list    # also show, diff, export, promote, keep, discard
	  or in a browser: http://$METRICS_LISTEN/ui/ — sign in with the admin token
	    $ADMIN_TOKEN    (it is in $TOKEN_FILE)

EOF
# Secrets go in the environment, not argv, where ps would show them.
SQLFORK_ADMIN_TOKEN="$ADMIN_TOKEN" SQLFORK_PROMOTE_USER="$PROMOTE_USER" SQLFORK_PROMOTE_PASSWORD="$PROMOTE_PASSWORD" \
	run_proxy "$UP" "$DB_USER" "$DB_PASSWORD" "$@"
