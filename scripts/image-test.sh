#!/usr/bin/env bash
# scripts/image-test.sh - `make image-test`: the container image, run as a
# user would run it, against a throwaway MariaDB on the host.
#
#   1. The image: under IMAGE_MAX_BYTES (40 MB), user 10001:10001, holding
#      only the binary and the CA bundle, with no shell; `version` runs.
#   2. A throwaway MariaDB (scripts/run.sh with SQLFORK_DB_ONLY=1, its demo
#      schema and accounts, in a temporary directory), then the proxy in the
#      container (host network, read-only root, no capabilities) in front
#      of it, on free loopback ports.
#   3. Through the proxy with the mariadb client, as `app`: a write in the
#      named sandbox imagetest, SANDBOX DIFF, then SANDBOX PROMOTE; production
#      (read directly) has the change only after the promote. The admin API
#      answers /readyz, /metrics and, through the image's own CLI, `sandbox
#      list` with the token.
#   4. The compose demo: its MariaDB init script loads, and podman-compose
#      (or `docker compose`) reads deploy/docker-compose.yaml.
#
# Exits non-zero at the first failure, after printing the proxy's log; the
# container, the MariaDB and the temporary directory are removed either way.
# Environment: IMAGE (default sqlfork-proxy:dev), IMAGE_MAX_BYTES,
# CONTAINER_ENGINE (scripts/container.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/container.sh
source "$ROOT/scripts/container.sh"

IMAGE=${IMAGE:-sqlfork-proxy:dev}
MAX_BYTES=${IMAGE_MAX_BYTES:-40000000}
SANDBOX=imagetest
# What the test changes: products.price of KB-001 (scripts/demo.sql).
WHERE="sku = 'KB-001'"
BEFORE=89.90
AFTER=99.00

TMP=
CONTAINER=
COMPOSE_PROJECT=
DB_RUNNER=
PASSED=0

ok() {
	PASSED=$((PASSED + 1))
	printf 'ok   %s\n' "$*"
}
fail() {
	printf 'FAIL %s\n' "$*" >&2
	exit 1
}
# expect WHAT WANT GOT - ok if GOT is WANT.
expect() {
	[[ $3 == "$2" ]] || fail "$1: want '$2', got '$3'"
	ok "$1"
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n $CONTAINER ]]; then
		if ((rc != 0)); then
			echo "--- the proxy's log (last 40 lines)" >&2
			"${CTR[@]}" logs "$CONTAINER" 2>&1 | tail -n 40 >&2 || true
		fi
		"${CTR[@]}" rm -f "$CONTAINER" >/dev/null 2>&1 || true
	fi
	if [[ -n $COMPOSE_PROJECT ]]; then
		podman network rm -f "${COMPOSE_PROJECT}_default" >/dev/null 2>&1 || true
	fi
	if [[ -n $DB_RUNNER ]] && kill -0 "$DB_RUNNER" 2>/dev/null; then
		kill -TERM "$DB_RUNNER" 2>/dev/null || true # run.sh stops its mariadbd
		wait "$DB_RUNNER" 2>/dev/null || true
	fi
	if [[ -n $TMP ]]; then
		((rc == 0)) || { echo "--- MariaDB's start (scripts/run.sh)" >&2; tail -n 20 "$TMP/db.log" >&2 2>/dev/null || true; }
		# Removes the state directory, and stops a mariadbd run.sh left.
		SQLFORK_STATE_DIR="$TMP/db" bash "$ROOT/scripts/stop-mariadb.sh" >/dev/null 2>&1 || true
		rm -rf "$TMP"
	fi
	printf 'image-test: %d passed, %d failed\n' "$PASSED" "$((rc != 0))"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# tcp_open PORT - true if something accepts TCP connections on 127.0.0.1:PORT.
tcp_open() {
	timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
}

# free_port FROM - the first port from FROM on that nothing listens on.
free_port() {
	local p
	for ((p = $1; p < $1 + 200; p++)); do
		tcp_open "$p" || { echo "$p"; return 0; }
	done
	die "no free port in $1-$(($1 + 199))"
}

# http_get PATH - the admin listener's answer (headers and body) to GET PATH.
http_get() {
	timeout 10 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$2" >&3
		cat <&3' _ "$ADMIN_PORT" "$1"
}

# proxy_ready - true if /readyz answers 200 "ready".
proxy_ready() {
	local out
	out=$(http_get /readyz 2>/dev/null) || return 1
	[[ $out == HTTP/1.[01]\ 200\ * && $out == *$'\r\n\r\nready'* ]]
}

# check_image - what the image holds and how it runs, before anything starts.
check_image() {
	"${CTR[@]}" image inspect "$IMAGE" >/dev/null 2>&1 || die "no image $IMAGE: run 'make image' first"
	local size user files cid
	size=$(image_size "$IMAGE")
	((size < MAX_BYTES)) || fail "the image is $size bytes, not under $MAX_BYTES"
	ok "the image is $size bytes ($((size / 1000000)) MB, under $((MAX_BYTES / 1000000)) MB)"
	user=$("${CTR[@]}" image inspect --format '{{.Config.User}}' "$IMAGE")
	expect "the image runs as 10001:10001" 10001:10001 "$user"
	# Regular files with content: an engine adds empty mount points such as
	# /etc/hosts to a container's file system (Docker also /.dockerenv, and
	# /etc/mtab, a link to /proc/mounts).
	cid=$("${CTR[@]}" create "$IMAGE")
	files=$("${CTR[@]}" export "$cid" | tar -tvf - | awk '/^-/ && $3 > 0 { print $NF }' | sort | tr '\n' ' ')
	"${CTR[@]}" rm "$cid" >/dev/null
	expect "the image holds only the binary and the CA bundle" \
		"etc/ssl/certs/ca-certificates.crt sqlfork-proxy " "$files"
	local out
	out=$("${CTR[@]}" run --rm "$IMAGE" version) || fail "'$IMAGE version' failed: $out"
	[[ $out == sqlfork-proxy\ * ]] || fail "'$IMAGE version' printed '$out'"
	ok "the image runs: ${out%%$'\n'*}"
	if out=$("${CTR[@]}" run --rm --entrypoint /bin/sh "$IMAGE" -c true 2>&1); then
		fail "the image has a shell: /bin/sh ran"
	fi
	[[ $out == *"no such file or directory"* ]] ||
		fail "/bin/sh did not run, but not for want of it: $out"
	ok "the image has no shell (/bin/sh: no such file or directory)"
}

# start_db - a throwaway MariaDB from scripts/run.sh; sets DB_PORT, DB_SOCK.
start_db() {
	log "starting a throwaway MariaDB under $TMP/db (scripts/run.sh)"
	SQLFORK_DB_ONLY=1 SQLFORK_STATE_DIR="$TMP/db" SQLFORK_LISTEN="127.0.0.1:$PROXY_PORT" \
		bash "$ROOT/scripts/run.sh" </dev/null >"$TMP/db.log" 2>&1 &
	DB_RUNNER=$!
	# run.sh logs "MariaDB … ready on" once its accounts are made (a first
	# start may install mariadb-server; 10 minutes at most).
	local i
	for ((i = 0; i < 1200; i++)); do
		grep -q ' ready on ' "$TMP/db.log" && break
		kill -0 "$DB_RUNNER" 2>/dev/null || fail "scripts/run.sh exited before MariaDB was ready"
		sleep 0.5
	done
	grep -q ' ready on ' "$TMP/db.log" || fail "MariaDB was not ready within 10 minutes"
	DB_PORT=$(sed -n 's/^PORT=//p' "$TMP/db/env")
	DB_SOCK=$(sed -n 's/^SOCK=//p' "$TMP/db/env")
	ok "MariaDB is ready on 127.0.0.1:$DB_PORT"
}

# start_proxy - the image's proxy in front of the throwaway MariaDB, with
# run.sh's accounts: sqlfork (read-only on demo), the promote account and
# the admin token. Secrets reach the container through the environment
# (`-e NAME`), not its command line.
start_proxy() {
	CONTAINER="sqlfork-image-test-$$"
	SQLFORK_UPSTREAM_PASSWORD=sqlfork SQLFORK_ADMIN_TOKEN="$TOKEN" \
		SQLFORK_PROMOTE_USER=sqlfork_promote SQLFORK_PROMOTE_PASSWORD=sqlfork_promote \
		"${CTR[@]}" run -d --name "$CONTAINER" --network host \
		--read-only --cap-drop ALL --security-opt no-new-privileges \
		-e SQLFORK_UPSTREAM_PASSWORD -e SQLFORK_ADMIN_TOKEN -e SQLFORK_PROMOTE_USER -e SQLFORK_PROMOTE_PASSWORD \
		"$IMAGE" serve --listen "127.0.0.1:$PROXY_PORT" --metrics-listen "127.0.0.1:$ADMIN_PORT" \
		--upstream "127.0.0.1:$DB_PORT" --upstream-user sqlfork --log-format json >/dev/null
	local i running
	for ((i = 0; i < 240; i++)); do
		proxy_ready && break
		running=$("${CTR[@]}" inspect --format '{{.State.Running}}' "$CONTAINER")
		[[ $running == true ]] || fail "the proxy's container exited"
		sleep 0.5
	done
	proxy_ready || fail "/readyz did not answer 'ready' within 2 minutes"
	ok "the proxy in the container is ready (127.0.0.1:$PROXY_PORT, admin 127.0.0.1:$ADMIN_PORT)"
}

# proxy_sql LOGIN SQL - run SQL through the proxy as LOGIN (password app).
proxy_sql() {
	mariadb --no-defaults -h127.0.0.1 -P"$PROXY_PORT" -u"$1" -papp -N -B demo -e "$2"
}
# prod_price - the price production holds, read directly (not through the proxy).
prod_price() {
	mariadb --no-defaults -h127.0.0.1 -P"$DB_PORT" -usqlfork_admin -psqlfork_admin -N -B demo \
		-e "SELECT price FROM products WHERE $WHERE"
}

# sandbox_session - write, diff, admin API, promote; production checked between.
sandbox_session() {
	local out
	out=$(proxy_sql app "SANDBOX CREATE $SANDBOX; UPDATE products SET price = $AFTER WHERE $WHERE;
		SELECT price FROM products WHERE $WHERE") || fail "the write in sandbox $SANDBOX failed: $out"
	expect "the sandbox $SANDBOX reads its own write" "$AFTER" "$out"
	expect "production is unchanged after the write" "$BEFORE" "$(prod_price)"

	# A named sandbox outlives its connection (--sandbox-grace): app+NAME logs into it.
	out=$(proxy_sql "app+$SANDBOX" "SANDBOX DIFF") || fail "SANDBOX DIFF failed: $out"
	[[ $out == *$'demo.products\tupdate\t'*"\"price\": $BEFORE"*"\"price\": $AFTER"* ]] ||
		fail "SANDBOX DIFF does not show the price change: $out"
	ok "SANDBOX DIFF shows the update of demo.products ($BEFORE → $AFTER)"

	out=$(SQLFORK_ADMIN_TOKEN="$TOKEN" "${CTR[@]}" run --rm --network host -e SQLFORK_ADMIN_TOKEN "$IMAGE" \
		sandbox list --admin-url "http://127.0.0.1:$ADMIN_PORT" -o json) || fail "sandbox list failed: $out"
	[[ $out == *"\"name\": \"$SANDBOX\""*"\"changes\": \"unpromoted\""* ]] ||
		fail "the admin API does not list $SANDBOX with unpromoted changes: $out"
	ok "the admin API lists $SANDBOX with unpromoted changes (the image's sandbox CLI)"
	out=$(http_get /metrics) || fail "GET /metrics failed"
	[[ $out == *$'\nsqlfork_'* ]] || fail "/metrics has no sqlfork_ metric: ${out:0:300}"
	ok "/metrics answers"
	expect "production is unchanged after the diff" "$BEFORE" "$(prod_price)"

	out=$(proxy_sql "app+$SANDBOX" "SANDBOX PROMOTE" 2>&1) || fail "SANDBOX PROMOTE failed: $out"
	ok "SANDBOX PROMOTE"
	expect "production has the change after the promote" "$AFTER" "$(prod_price)"
	out=$(proxy_sql "app+$SANDBOX" "SANDBOX DIFF") || fail "SANDBOX DIFF after the promote failed: $out"
	expect "SANDBOX DIFF is empty after the promote" "" "$out"
}

# check_compose - the compose demo's MariaDB init script and compose file.
check_compose() {
	mariadb --no-defaults --protocol=socket --socket="$DB_SOCK" -uroot \
		<"$ROOT/deploy/compose/mariadb/init.sql" || fail "deploy/compose/mariadb/init.sql does not load"
	ok "deploy/compose/mariadb/init.sql loads (its schema and accounts)"
	local out file="$ROOT/deploy/docker-compose.yaml"
	if [[ $ENGINE == docker ]]; then
		out=$(docker compose -f "$file" config 2>&1) || fail "docker compose config: $out"
		[[ $out == *sqlfork-proxy:dev* ]] || fail "docker compose config has no sqlfork-proxy:dev: $out"
		ok "docker compose config reads deploy/docker-compose.yaml"
		return
	fi
	# Debian's podman-compose (1.0.3) has no `config`: --dry-run prints the
	# podman commands `up` would run (it still makes the project's network,
	# which cleanup removes).
	have podman-compose || apt_install podman-compose
	COMPOSE_PROJECT="sqlfork-image-test-$$"
	out=$(podman-compose -p "$COMPOSE_PROJECT" -f "$file" --dry-run up --no-build 2>&1) ||
		fail "podman-compose --dry-run up: $out"
	local want
	for want in "-p 127.0.0.1:3306:3306 " "-e SQLFORK_PROMOTE_USER=sqlfork_promote" \
		"-p 127.0.0.1:9104:9104 sqlfork-proxy:dev serve"; do
		[[ $out == *"$want"* ]] || fail "podman-compose --dry-run up has no '$want': $out"
	done
	ok "podman-compose reads deploy/docker-compose.yaml (--dry-run up: the ports, the promote account)"
}

main() {
	command -v mariadb >/dev/null 2>&1 || apt_install mariadb-client
	container_init
	log "testing $IMAGE with $ENGINE"
	check_image
	TMP=$(mktemp -d /tmp/sqlfork-image-test.XXXXXX)
	PROXY_PORT=$(free_port 23307)
	ADMIN_PORT=$(free_port $((PROXY_PORT + 1)))
	start_db
	TOKEN=$(cat "$TMP/db/admin-token")
	start_proxy
	sandbox_session
	check_compose
}

main "$@"
