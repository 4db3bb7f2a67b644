#!/usr/bin/env python3
"""TPC-H's 22 query times through dbsweep against the same SQL through the
server's own client, interleaved pair by pair on MariaDB and PostgreSQL
started by this script, so the machine's drift hits both alike.

dbsweep   `dbsweep run tpch --scale SF --qualification --refresh off
          --threads 1 --db-ps-mode disable`: the power test's 22 queries in
          stream 0's order on one connection, each with the spec's
          validation parameters written into its text; each query's time is
          its one execution's, from the record (`result.tpch.timings`).

client    The same 22 texts (`cargo run --release --example tpch_sql`) in
          the same order through `psql` (`\\timing on`, rows to /dev/null,
          unaligned) or `mariadb -vvv` (its "rows in set (X sec)"), one
          session: the server's time plus its own client's.

Both sides run once before the pairs (not counted: the tables' pages
warm). Each pair runs both in an order that alternates pair by pair. Per
query, the ratio dbsweep / client per pair; the summary gives each
query's median ratio with its range over the pairs, and the pairs' ratio
of the 22 times' sum and their geometric mean.

Goal (issue 43): query times within the noise of the engine's own client.

    bench/tpch_queries.py --scale 1 --pairs 3 [--engines postgres,mariadb]
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402
from tpcc import server_start, server_stop  # noqa: E402

ORDER = [14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12]
SQL_BIN = os.path.join(c.ROOT, "target", "release", "examples", "tpch_sql")


def texts(engine, sf):
    """Each query's text as dbsweep sends it, by query number."""
    dialect = "mysql" if engine == "mariadb" else "postgres"
    out = subprocess.run([SQL_BIN, dialect, str(sf)], check=True, capture_output=True,
                         text=True).stdout
    found = {}
    for part in out.split("-- Q")[1:]:
        head, body = part.split("\n", 1)
        found[int(head)] = body.strip()
    return found


def run_dbsweep(url, sf, path):
    argv = [c.DBSWEEP, "run", "tpch", "--db", url, "--scale", str(sf), "--qualification",
            "--refresh", "off", "--threads", "1", "--db-ps-mode", "disable", "--json", path]
    subprocess.run(argv, check=True, capture_output=True)
    doc = json.load(open(path))
    return {int(t["name"][1:]): t["mean_s"] * 1000.0 for t in doc["result"]["tpch"]["timings"]}


def run_client(engine, url, sql):
    p = c.parts(url)
    script = "".join(sql[q] + "\n" for q in ORDER)
    if engine == "postgres":
        argv = ["psql", "-X", "-q", "-A", "-v", "ON_ERROR_STOP=1", "-h", p["host"], "-p",
                p["port"], "-U", p["user"], p["db"]]
        env = dict(os.environ, PGPASSWORD=p["password"])
        script = "\\timing on\n\\o /dev/null\n" + script
        pattern = re.compile(r"^Time: ([\d.]+) ms")
        scale = 1.0
    else:
        argv = ["mariadb", "-vvv", "-B", "-h", p["host"], "-P", p["port"], "-u", p["user"],
                p["db"]]
        env = dict(os.environ, MYSQL_PWD=p["password"])
        pattern = re.compile(r"(?:rows? in set|Empty set) \(([\d.]+) sec\)")
        scale = 1000.0
    r = subprocess.run(argv, input=script, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{engine} client: {r.stderr.strip()[-500:]}")
    times = [float(m.group(1)) * scale for line in r.stdout.splitlines()
             if (m := pattern.search(line))]
    if len(times) != 22:
        sys.exit(f"{engine} client: {len(times)} timings, not 22")
    return dict(zip(ORDER, times))


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))


def engine_pairs(engine, args, workdir, port):
    url = server_start(engine, workdir, port, [])
    try:
        subprocess.run([c.DBSWEEP, "cleanup", "tpch", "--db", url], capture_output=True)
        t = time.monotonic()
        subprocess.run([c.DBSWEEP, "prepare", "tpch", "--db", url, "--scale", str(args.scale)],
                       check=True, capture_output=True)
        print(f"{engine}: loaded SF {args.scale} in {time.monotonic() - t:.1f} s", flush=True)
        sql = texts(engine, args.scale)
        path = os.path.join(workdir, f"{engine}.json")
        run_dbsweep(url, args.scale, path)
        run_client(engine, url, sql)
        pairs = []
        for i in range(args.pairs):
            order = ["dbsweep", "client"] if i % 2 == 0 else ["client", "dbsweep"]
            got = {}
            for side in order:
                c.settle()
                got[side] = (run_dbsweep(url, args.scale, path) if side == "dbsweep"
                             else run_client(engine, url, sql))
            d, k = got["dbsweep"], got["client"]
            pair = {
                "order": order,
                "dbsweep_ms": d,
                "client_ms": k,
                "sum_ratio": sum(d.values()) / sum(k.values()),
                "geomean_ratio": geomean([d[q] / k[q] for q in range(1, 23)]),
            }
            pairs.append(pair)
            print(f"{engine} pair {i + 1}: sum {sum(d.values()) / 1000:.2f} s against "
                  f"{sum(k.values()) / 1000:.2f} s, ratio {pair['sum_ratio']:.3f}; "
                  f"per-query geomean ratio {pair['geomean_ratio']:.3f}", flush=True)
        return pairs
    finally:
        server_stop(engine, workdir)


def summary(engine, pairs):
    print(f"\n{engine}: dbsweep / client, per query (median [min, max] over {len(pairs)} pairs),"
          " ms of the median pair's client")
    for q in range(1, 23):
        r = [p["dbsweep_ms"][q] / p["client_ms"][q] for p in pairs]
        ms = statistics.median(p["client_ms"][q] for p in pairs)
        print(f"  Q{q:<3} {statistics.median(r):6.3f} [{min(r):.3f}, {max(r):.3f}]  {ms:9.1f} ms")
    s = [p["sum_ratio"] for p in pairs]
    g = [p["geomean_ratio"] for p in pairs]
    print(f"  sum of the 22: {statistics.median(s):.3f} [{min(s):.3f}, {max(s):.3f}]; "
          f"geometric mean of the 22 ratios: {statistics.median(g):.3f} [{min(g):.3f}, {max(g):.3f}]")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--engines", default="postgres,mariadb")
    args = ap.parse_args()
    if not os.path.exists(SQL_BIN):
        sys.exit("build the query printer first: cargo build --release --example tpch_sql")
    results = {}
    with tempfile.TemporaryDirectory(prefix="tpch-queries-") as workdir:
        for i, engine in enumerate(args.engines.split(",")):
            results[engine] = engine_pairs(engine, args, workdir, 47300 + i)
    for engine, pairs in results.items():
        summary(engine, pairs)
    out = os.path.join(c.ROOT, "bench", "results",
                       time.strftime("tpch_queries-%Y%m%d-%H%M%S.json"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    json.dump({"scale": args.scale, "pairs": results}, open(out, "w"), indent=1)
    print(f"\nwritten: {out}")


if __name__ == "__main__":
    main()
