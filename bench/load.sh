#!/usr/bin/env bash
# Loading benchmark: time to load N sbtest rows with the secondary index,
# dbsweep prepare vs sysbench 1.0 prepare (MariaDB and PostgreSQL), and vs
# pgbench -i (PostgreSQL), against the same scratch servers, interleaved
# A B A B so that machine noise hits both tools alike.
#
# Usage: bench/load.sh [ROWS] [PAIRS]      (defaults: 1000000 rows, 3 pairs)
# Needs: the README's set-up, plus `apt-get install sysbench`.
# Writes bench/results/load-<date>.csv and prints a Markdown table of
# medians and ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
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
# Medians per (engine, tool) and dbsweep's speed-up over each other tool.
awk -F, 'NR > 1 { k = $1 "|" $2; v[k, ++n[k]] = $5 }
  END {
    for (k in n) {
      m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      med[k] = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    print "| engine | tool | median s | dbsweep speed-up |"; print "|---|---|---|---|"
    for (k in med) {
      split(k, p, "|"); d = med[p[1] "|dbsweep"]
      r = (p[2] != "dbsweep" && d > 0) ? sprintf("%.2fx", med[k] / d) : ""
      printf "| %s | %s | %.2f | %s |\n", p[1], p[2], med[k], r
    }
  }' "$CSV" | { read -r h; read -r s; echo "$h"; echo "$s"; sort; }
