#!/usr/bin/env bash
# scripts/driver-suites.sh - run database drivers' own test suites directly
# and through sqlfork-proxy, and print every test whose outcome differs
# (issue 13; results and the by-design exceptions in docs/DRIVERS.md).
#
#   scripts/driver-suites.sh [flags] [PYMYSQL_DIR]
#
# Suites, run unchanged:
#   gsd      go-sql-driver/mysql v1.10.1 (its own tests, as its CI runs them)
#   gomysql  go-mysql v1.16.0, package client
#   pymysql  PyMySQL, from the checkout PYMYSQL_DIR (left out without it);
#            needs python3 with pytest, cryptography and PyNaCl
# The Go drivers' sources come from the Go module cache (downloaded through
# the Go module proxy when missing), or from -gsd DIR / -gomysql DIR. Each is
# copied into the output directory: nothing is written where they are.
#
# Ways:
#   direct       straight to the server, with the drivers' own accounts
#   passthrough  the proxy in passthrough mode, those accounts configured in it
#   relay        the proxy in passthrough mode, those accounts relayed to the server
#   sandbox      the proxy in transparent mode; every connection logs in as
#                sqlfork+<tag> (one named sandbox per suite run) with the
#                SELECT-only account of docs/OPERATIONS.md
#
# A throwaway MariaDB is started as the integration tests start theirs
# (integration/testdb: mariadbd from $PATH, /usr/sbin or SQLFORK_MARIADBD),
# with the databases and accounts the drivers' CI make, TLS, max_connections
# 50 and performance_schema on. The proxies run in the same process, built
# from this tree.
#
# Flags: -suites gsd,gomysql,pymysql  -ways direct,passthrough,relay,sandbox
#        -out DIR (logs, JUnit XML, report.txt; default a new temporary directory)
#        -gsd DIR  -gomysql DIR  -python python3
#
# Exit status 0 when every difference from the direct run is one a sandbox
# makes by design (listed with its reason), 1 otherwise, 2 on a setup error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec go run ./scripts/driversuites "$@"
