#!/usr/bin/env bash
# Loading benchmark: time to load N sbtest rows with the secondary index,
# dbsweep prepare vs sysbench 1.0 prepare (MariaDB and PostgreSQL), and vs
# pgbench -i (PostgreSQL), against the same scratch servers, interleaved
# A B A B so that machine noise hits both tools alike.
#
# Usage: bench/load.sh [ROWS] [PAIRS]      (defaults: 1000000 rows, 3 pairs)
#        bench/load.sh --summary CSV       (the table of an earlier campaign)
# Needs: the README's set-up, plus `apt-get install sysbench`.
# Writes bench/results/load-<date>.csv and prints a Markdown table of
# medians and ratios.
set -euo pipefail
cd "$(dirname "$0")/.."

summary() {
# Medians per (engine, tool), dbsweep's speed-up over each other tool as a
# ratio of those medians, and the median and range of the per-pair ratios
# (each pair ran back to back, so its ratio cancels the machine's drift).
awk -F, 'NR > 1 { k = $1 "|" $2; v[k, ++n[k]] = $5; t[k, $3] = $5; pairs[$3] = 1 }
  function median(a, m,    i, j, x) {
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    for (k in n) {
      m = n[k]; delete a; for (i = 1; i <= m; i++) a[i] = v[k, i]
      med[k] = median(a, m)
    }
    print "| engine | tool | median s | dbsweep speed-up (ratio of medians) | per pair: median (min–max) |"
    print "|---|---|---|---|---|"
    for (k in med) {
      split(k, p, "|"); d = p[1] "|dbsweep"; r = ""; q = ""
      if (p[2] != "dbsweep" && med[d] > 0) {
        r = sprintf("%.2fx", med[k] / med[d])
        delete a; m = 0; lo = 1e9; hi = 0
        for (x in pairs) if (t[k, x] > 0 && t[d, x] > 0) {
          y = t[k, x] / t[d, x]; a[++m] = y; if (y < lo) lo = y; if (y > hi) hi = y
        }
        if (m) q = sprintf("%.2fx (%.2f–%.2f)", median(a, m), lo, hi)
      }
      printf "| %s | %s | %.2f | %s | %s |\n", p[1], p[2], med[k], r, q
    }
  }' "$1" | { read -r h; read -r s; echo "$h"; echo "$s"; sort; }
}

# bench/load.sh --summary CSV: the table of an earlier campaign.
if [[ ${1:-} == --summary ]]; then summary "$2"; exit; fi

ROWS=${1:-1000000}
PAIRS=${2:-3}
SCALE=$(( ROWS / 100000 ))   # pgbench: scale 1 = 100,000 accounts

command -v sysbench >/dev/null || { echo "sysbench not found: apt-get install sysbench" >&2; exit 2; }
cargo build --release --quiet
DBSWEEP=target/release/dbsweep
WORK=$(mktemp -d /tmp/dbsweep-bench-XXXXXX)
chmod 755 "$WORK"
mkdir -p bench/results
CSV=bench/results/load-$(date +%Y%m%d-%H%M%S).csv
echo "engine,tool,pair,rows,seconds" > "$CSV"

cleanup() {
  "$DBSWEEP" server stop --dir "$WORK/mariadb" >/dev/null 2>&1 || true
  "$DBSWEEP" server stop --dir "$WORK/postgres" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# url_part URL FIELD  -> user, pass, host, port or db of a server URL
url_part() {
  local re='^[a-z]+://([^:@/]*)(:([^@/]*))?@([^:/]+):([0-9]+)/([^?]*)'
  [[ $1 =~ $re ]] || { echo "cannot parse $1" >&2; exit 1; }
  case $2 in
    user) echo "${BASH_REMATCH[1]}" ;; pass) echo "${BASH_REMATCH[3]}" ;;
    host) echo "${BASH_REMATCH[4]}" ;; port) echo "${BASH_REMATCH[5]}" ;;
    db) echo "${BASH_REMATCH[6]}" ;;
  esac
}

now() { date +%s.%N; }
timed() { local t0; t0=$(now); "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }; awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.3f", a - b }'; }
record() { echo "$1,$2,$3,$ROWS,$4" >> "$CSV"; printf '%-9s %-18s pair %s: %6.2f s\n' "$1" "$2" "$3" "$4"; }

MY=$("$DBSWEEP" server start mariadb --dir "$WORK/mariadb")
PG=$("$DBSWEEP" server start postgres --dir "$WORK/postgres")
echo "MariaDB:    $MY"
echo "PostgreSQL: $PG"

sb_my=(--db-driver=mysql --mysql-host="$(url_part "$MY" host)" --mysql-port="$(url_part "$MY" port)"
       --mysql-user="$(url_part "$MY" user)" --mysql-password="$(url_part "$MY" pass)"
       --mysql-db="$(url_part "$MY" db)" --table-size="$ROWS" --tables=1)
sb_pg=(--db-driver=pgsql --pgsql-host="$(url_part "$PG" host)" --pgsql-port="$(url_part "$PG" port)"
       --pgsql-user="$(url_part "$PG" user)" --pgsql-password="$(url_part "$PG" pass)"
       --pgsql-db="$(url_part "$PG" db)" --table-size="$ROWS" --tables=1)
export PGPASSWORD=$(url_part "$PG" pass)
pgb=(-h "$(url_part "$PG" host)" -p "$(url_part "$PG" port)" -U "$(url_part "$PG" user)")

for pair in $(seq 1 "$PAIRS"); do
  record mariadb sysbench "$pair" "$(timed sysbench oltp_read_write "${sb_my[@]}" prepare)"
  sysbench oltp_read_write "${sb_my[@]}" cleanup >/dev/null
  record mariadb dbsweep "$pair" "$(timed "$DBSWEEP" prepare oltp_read_write --db "$MY" --table-size "$ROWS")"
  "$DBSWEEP" cleanup oltp_read_write --db "$MY" >/dev/null 2>&1

  record postgres sysbench "$pair" "$(timed sysbench oltp_read_write "${sb_pg[@]}" prepare)"
  sysbench oltp_read_write "${sb_pg[@]}" cleanup >/dev/null
  record postgres dbsweep "$pair" "$(timed "$DBSWEEP" prepare oltp_read_write --db "$PG" --table-size "$ROWS")"
  "$DBSWEEP" cleanup oltp_read_write --db "$PG" >/dev/null 2>&1
  record postgres "pgbench -i -s $SCALE" "$pair" "$(timed pgbench -i -q -s "$SCALE" "${pgb[@]}" "$(url_part "$PG" db)")"
  pgbench -i -I d "${pgb[@]}" "$(url_part "$PG" db)" >/dev/null 2>&1
done

echo
echo "Raw results: $CSV"
echo
summary "$CSV"
