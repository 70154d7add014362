#!/usr/bin/env bash
# scripts/stop-mariadb.sh - stop the throwaway MariaDB started by scripts/run.sh
# and delete its state directory (./.sqlfork). `make clean` calls this.
#
#   scripts/stop-mariadb.sh               stop it and remove ./.sqlfork
#   scripts/stop-mariadb.sh --keep-data   only stop it
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE_DIR="${SQLFORK_STATE_DIR:-$ROOT/.sqlfork}"
DATA_DIR="$STATE_DIR/data"
PID_FILE="$STATE_DIR/mariadbd.pid"

keep=0
case "${1:-}" in
	"") ;;
	--keep-data) keep=1 ;;
	-h | --help) sed -n '2,7p' "$0"; exit 0 ;;
	*) echo "usage: $0 [--keep-data]" >&2; exit 2 ;;
esac

log() { printf '==> %s\n' "$*" >&2; }

if [[ ! -d $STATE_DIR ]]; then
	log "nothing to do: $STATE_DIR does not exist"
	exit 0
fi

# PID - true if PID is a mariadbd serving our data dir.
ours() {
	local comm
	comm="$(cat "/proc/$1/comm" 2>/dev/null)" || return 1
	[[ $comm == mariadbd || $comm == mysqld ]] || return 1
	tr '\0' '\n' <"/proc/$1/cmdline" | grep -qxF -- "--datadir=$DATA_DIR"
}

pids=()
if [[ -f $PID_FILE ]]; then
	pid="$(tr -dc 0-9 <"$PID_FILE")"
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && ours "$pid" && pids+=("$pid")
fi
# Also catch a server whose pid file is gone (e.g. removed by hand).
for d in /proc/[0-9]*; do
	p=${d#/proc/}
	[[ " ${pids[*]} " == *" $p "* ]] && continue
	ours "$p" 2>/dev/null && pids+=("$p")
done

for pid in "${pids[@]}"; do
	log "stopping mariadbd (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
done
for pid in "${pids[@]}"; do
	for ((i = 0; i < 600; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "mariadbd (pid $pid) did not stop within 60s; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
done

if (( keep )); then
	log "stopped; data kept in $DATA_DIR"
	exit 0
fi

# run.sh falls back to a socket under /tmp when the state dir path is long.
if [[ -f $STATE_DIR/env ]]; then
	sock="$(sed -n 's/^SOCK=//p' "$STATE_DIR/env")"
	[[ -n $sock && $sock != "$STATE_DIR"/* ]] && rm -f "$sock" "$sock.lock"
fi
rm -rf "$STATE_DIR"
log "removed $STATE_DIR"
