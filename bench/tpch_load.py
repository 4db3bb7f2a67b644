#!/usr/bin/env python3
"""TPC-H's load against the server's floor (and go-tpc's, where it runs):
`dbsweep prepare tpch --scale SF` on MariaDB and PostgreSQL started by this
script, interleaved pair by pair with the floor, so the machine's drift hits
both alike.

dbsweep   `dbsweep cleanup tpch` then `dbsweep prepare tpch --db URL --scale SF`:
          the eight tables generated (tpchgen: dbgen's rows) and loaded over
          the machine's CPUs' connections (PostgreSQL: COPY, binary where the
          types allow; MariaDB: LOAD DATA LOCAL INFILE streamed), primary keys
          in the CREATE TABLE on MariaDB and built after the data on
          PostgreSQL, the foreign keys' indexes after the data, then ANALYZE.

floor     The same work done by the server from files: the same rows written
          once beforehand by tpchgen-cli (dbgen's .tbl format, the trailing
          '|' cut; not timed), tables created empty like dbsweep's, loaded by
          the server's own bulk path — PostgreSQL `COPY t FROM 'file'` read
          by the server itself, MariaDB `LOAD DATA LOCAL INFILE` through its
          own client — on two sessions at once (lineitem on one, the other
          seven on the other, as dbsweep's two loaders share them), then the
          same keys, indexes and ANALYZE. No generator, no client-side
          formatting: what loading these rows costs the server.

go-tpc    `go-tpc -T CPUs tpch prepare --sf SF` (PingCAP's; MySQL protocol
          only, so MariaDB only; a whole scale factor), when `go-tpc` is on
          PATH (`go install github.com/pingcap/go-tpc/cmd/go-tpc@latest`): its
          own generator and multi-row INSERTs, its own schema and keys, no
          ANALYZE (its default).

Goals (issue 43): dbsweep ≤ 1.25 × the floor, ≤ 0.5 × go-tpc's time.

    bench/tpch_load.py --scale 1 --pairs 3 [--engines mariadb,postgres]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402
from tpcc import server_start, server_stop  # noqa: E402

TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]
# Each table's key and its foreign keys' indexes, as dbsweep's schema.rs.
KEYS = {
    "region": ("r_regionkey", []),
    "nation": ("n_nationkey", ["n_regionkey"]),
    "supplier": ("s_suppkey", ["s_nationkey"]),
    "customer": ("c_custkey", ["c_nationkey"]),
    "part": ("p_partkey", []),
    "partsupp": ("ps_partkey, ps_suppkey", ["ps_suppkey"]),
    "orders": ("o_orderkey", ["o_custkey"]),
    "lineitem": ("l_orderkey, l_linenumber", ["l_partkey, l_suppkey"]),
}
GROUPS = [["lineitem"], ["orders", "partsupp", "part", "customer", "supplier", "nation", "region"]]


def client(engine, url):
    """argv and env of the server's own client on `url`'s database."""
    p = c.parts(url)
    if engine == "mariadb":
        return (["mysql", "--local-infile=1", "-h", p["host"], "-P", p["port"], "-u", p["user"],
                 p["db"]], dict(os.environ, MYSQL_PWD=p["password"]))
    return (["psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", p["host"], "-p", p["port"], "-U",
             p["user"], p["db"]], dict(os.environ, PGPASSWORD=p["password"]))


def sql(engine, url, script):
    argv, env = client(engine, url)
    r = subprocess.run(argv, input=script, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{engine}: {script[:80]}: {r.stderr.strip()[-500:]}")


def generate(sf, out):
    """The rows as .tbl files without the trailing '|' (not timed)."""
    if os.path.exists(os.path.join(out, "done")):
        return
    os.makedirs(out, exist_ok=True)
    subprocess.run(["tpchgen-cli", "-s", str(sf), "--output-dir", out], check=True)
    for t in TABLES:
        subprocess.run(["sed", "-i", "s/|$//", os.path.join(out, f"{t}.tbl")], check=True)
    os.chmod(out, 0o755)
    for t in TABLES:
        os.chmod(os.path.join(out, f"{t}.tbl"), 0o644)
    open(os.path.join(out, "done"), "w").close()


def floor_scripts(engine, files):
    """(setup, [one script per session], teardown) for the floor's load."""
    setup = ""
    for t in TABLES:
        if engine == "mariadb":
            drops = "".join(f"ALTER TABLE {t}_f DROP INDEX {f.split(',')[0].strip()}_idx;\n"
                            for f in KEYS[t][1])
            setup += f"DROP TABLE IF EXISTS {t}_f;\nCREATE TABLE {t}_f LIKE {t};\n{drops}"
        else:
            setup += f"DROP TABLE IF EXISTS {t}_f;\nCREATE TABLE {t}_f (LIKE {t});\n"
    sessions = []
    for group in GROUPS:
        s = ""
        for t in group:
            path = os.path.join(files, f"{t}.tbl")
            key, fks = KEYS[t]
            if engine == "mariadb":
                s += (f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE {t}_f "
                      "FIELDS TERMINATED BY '|';\n")
                s += "".join(f"CREATE INDEX {f.split(',')[0].strip()}_fidx ON {t}_f ({f});\n"
                             for f in fks)
                s += f"ANALYZE TABLE {t}_f;\n"
            else:
                s += f"COPY {t}_f FROM '{path}' WITH (DELIMITER '|');\n"
                s += f"ALTER TABLE {t}_f ADD PRIMARY KEY ({key});\n"
                s += "".join(f"CREATE INDEX {f.split(',')[0].strip()}_fidx ON {t}_f ({f});\n"
                             for f in fks)
                s += f"ANALYZE {t}_f;\n"
        sessions.append(s)
    teardown = "".join(f"DROP TABLE {t}_f;\n" for t in TABLES)
    return setup, sessions, teardown


def floor(engine, url, files):
    setup, sessions, teardown = floor_scripts(engine, files)
    sql(engine, url, setup)
    argv, env = client(engine, url)
    t0 = time.monotonic()
    procs = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env, text=True) for _ in sessions]
    for p, s in zip(procs, sessions):
        p.stdin.write(s)
        p.stdin.close()
    for p in procs:
        p.wait()
        if p.returncode != 0:
            raise SystemExit(f"{engine} floor: {p.stderr.read()[-500:]}")
    took = time.monotonic() - t0
    sql(engine, url, teardown)
    return took


def dbsweep_load(url, sf):
    subprocess.run([c.DBSWEEP, "cleanup", "tpch", "--db", url, "--scale", str(sf)],
                   capture_output=True)
    t0 = time.monotonic()
    r = subprocess.run([c.DBSWEEP, "prepare", "tpch", "--db", url, "--scale", str(sf)],
                       capture_output=True, text=True)
    took = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit(f"dbsweep prepare: {r.stderr[-800:]}")
    return took


def gotpc_load(url, sf):
    p = c.parts(url)
    db = "gotpc"
    base = ["go-tpc", "-H", p["host"], "-P", p["port"], "-U", p["user"], "-p", p["password"],
            "-D", db]
    sql("mariadb", url, f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db};")
    t0 = time.monotonic()
    threads = str(os.cpu_count() or 1)
    r = subprocess.run(base + ["-T", threads, "tpch", "prepare", "--sf", str(int(sf))],
                       capture_output=True, text=True)
    took = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit(f"go-tpc: {(r.stdout + r.stderr)[-800:]}")
    return took


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--engines", default="mariadb,postgres")
    ap.add_argument("--files", default="/tmp/tpch-tbl", help="where the floor's files go")
    ap.add_argument("--no-gotpc", action="store_true")
    args = ap.parse_args()
    files = f"{args.files}-{args.scale}"
    generate(args.scale, files)
    # go-tpc's --sf is a whole number.
    gotpc = not args.no_gotpc and shutil.which("go-tpc") and args.scale == int(args.scale)
    workdir = tempfile.mkdtemp(prefix="tpch-load-")
    os.chmod(workdir, 0o755)
    for i, engine in enumerate(args.engines.split(",")):
        settings = ["max_wal_size=4GB"] if engine == "postgres" else []
        url = server_start(engine, workdir, 47400 + i, settings)
        rows = []
        try:
            for pair in range(args.pairs):
                d = dbsweep_load(url, args.scale)
                f = floor(engine, url, files)
                g = gotpc_load(url, args.scale) if gotpc and engine == "mariadb" else None
                rows.append((d, f, g))
                extra = f", go-tpc {g:.1f} s ({d / g:.2f}×)" if g else ""
                print(f"{engine} pair {pair + 1}: dbsweep {d:.1f} s, floor {f:.1f} s "
                      f"({d / f:.2f}×){extra}", flush=True)
        finally:
            server_stop(engine, workdir)
        ratios = [d / f for d, f, _ in rows]
        gm = statistics.geometric_mean(ratios)
        print(f"{engine}: dbsweep / floor per pair {min(ratios):.2f}–{max(ratios):.2f}, "
              f"geometric mean {gm:.2f} (goal ≤ 1.25)")
        g = [d / x for d, _, x in rows if x]
        if g:
            print(f"{engine}: dbsweep / go-tpc per pair {min(g):.2f}–{max(g):.2f}, geometric "
                  f"mean {statistics.geometric_mean(g):.2f} (goal ≤ 0.5)")
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
