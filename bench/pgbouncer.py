#!/usr/bin/env python3
"""Through PgBouncer: the point select at C connections (default 8) through
one PgBouncer in transaction pooling with protocol-level prepared statements
(max_prepared_statements), for dbsweep (a thread per connection, and on two
event loops) and pgbench -M prepared, interleaved per pair; and each tool
straight to the server, for the pooler's own cost.

The server and its PgBouncer are started by `dbsweep server start postgres
--pooler pgbouncer` (PgBouncer 1.21 or later; scripts/install-servers builds
Debian's 1.24.1 where the package is older). Each pair runs every tool
through the pooler and directly, back to back (the order reversed every
other pair); the claim is dbsweep's throughput through the pooler over
pgbench's, per pair.

Usage:
    bench/pgbouncer.py [--pairs 6] [--time 10] [--threads 8] [--rows 100000]
                       [--pool-size 8] [--no-build]

Writes bench/results/pgbouncer-<date>.csv and .md, and prints the table.
"""

import argparse
import csv
import datetime
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402  (the shared helpers of bench/clients.py)

TOOLS = ["dbsweep", "dbsweep-j2", "pgbench"]


def start(workdir, pool_size):
    """(pooler URL, direct URL) of a PostgreSQL with PgBouncer in front."""
    argv = [c.DBSWEEP, "server", "start", "postgres", "--dir", os.path.join(workdir, "postgres"),
            "--pooler", "pgbouncer", "--pooler-set", f"default_pool_size={pool_size}"]
    r = subprocess.run(argv, check=True, capture_output=True, text=True)
    pooled = r.stdout.strip().splitlines()[-1]
    direct = next(line.split("direct URL: ")[1].strip() for line in r.stderr.splitlines()
                  if "direct URL: " in line)
    return pooled, direct


def run(tool, url, a, workdir, script):
    """Transactions per second of one run."""
    if tool.startswith("dbsweep"):
        json_path = os.path.join(workdir, "d.json")
        extra = ["--client-threads", "2"] if tool == "dbsweep-j2" else []
        argv = c.dbsweep_argv(url, "oltp_point_select", a.threads, a.time, a.rows, json_path,
                              extra=extra + ["--metrics", "off"])
        c.measured(argv)
        with open(json_path) as f:
            doc = json.load(f)
        errors = sum(doc["result"]["errors"].values())
        if errors:
            sys.exit(f"{tool} on {url}: {errors} errors")
        return c.parse_dbsweep(json_path)["tps"], doc["target"]["server_version"]
    argv = c.pgbench_argv(url, script, a.threads, a.time)
    env = dict(os.environ, PGPASSWORD=c.parts(url)["password"] or "")
    _, out, *_ = c.measured(argv, env=env)
    r = c.parse_pgbench(out, "oltp_point_select")
    if r is None:
        sys.exit(f"pgbench failed:\n{out[-2000:]}")
    return r["tps"], ""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=6)
    p.add_argument("--time", type=int, default=10)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--rows", type=int, default=100000)
    p.add_argument("--pool-size", type=int, default=8)
    p.add_argument("--no-build", action="store_true")
    a = p.parse_args()
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=c.ROOT, check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=c.ROOT,
                            capture_output=True, text=True).stdout.strip()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    rows = []
    pooler = "?"
    with tempfile.TemporaryDirectory() as workdir:
        os.chmod(workdir, 0o755)
        pooled, direct = start(workdir, a.pool_size)
        try:
            subprocess.run([c.DBSWEEP, "prepare", "oltp_point_select", "--db", direct,
                            f"--table-size={a.rows}", "--tables=1"], check=True,
                           capture_output=True)
            script = os.path.join(workdir, "select.sql")
            with open(script, "w") as f:
                f.write(c.PGBENCH_SCRIPTS["oltp_point_select"].format(rows=a.rows))
            for pair in range(a.pairs):
                order = TOOLS[::-1] if pair % 2 else TOOLS
                for tool in order:
                    ways = [("direct", direct), ("pooled", pooled)]
                    if pair % 2:
                        ways.reverse()
                    tps = {}
                    for way, url in ways:
                        c.settle()
                        tps[way], version = run(tool, url, a, workdir, script)
                        if way == "pooled" and version:
                            if "through PgBouncer" not in version:
                                sys.exit(f"the record names no pooler: {version}")
                            pooler = version.split("through ")[1].rstrip(")")
                    rows.append(dict(pair=pair, tool=tool, direct_tps=tps["direct"],
                                     pooled_tps=tps["pooled"],
                                     pooled_over_direct=tps["pooled"] / tps["direct"]))
                    print(f"pair {pair} {tool}: direct {tps['direct']:,.0f} tps, through the "
                          f"pooler {tps['pooled']:,.0f} tps", flush=True)
        finally:
            c.server_stop("postgres", workdir)

    base = os.path.join(c.ROOT, "bench", "results", f"pgbouncer-{stamp}")
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [f"Through {pooler} (default_pool_size {a.pool_size}), point select, "
             f"{a.threads} connections, {a.pairs} pairs of {a.time} s runs, dbsweep {commit}", "",
             "| tool | direct tps | pooled tps | pooled / direct (range) | "
             "pooled ÷ pgbench's pooled, per pair (range) |", "|---|---|---|---|---|"]
    theirs = [r for r in rows if r["tool"] == "pgbench"]
    for tool in TOOLS:
        mine = [r for r in rows if r["tool"] == tool]
        ratio = sorted(r["pooled_over_direct"] for r in mine)
        vs = sorted(m["pooled_tps"] / t["pooled_tps"] for m, t in zip(mine, theirs))
        lines.append(
            f"| {tool} | {c.median([r['direct_tps'] for r in mine]):,.0f} | "
            f"{c.median([r['pooled_tps'] for r in mine]):,.0f} | "
            f"{c.median(ratio):.3f} ({ratio[0]:.3f}–{ratio[-1]:.3f}) | "
            + ("—" if tool == "pgbench" else f"{c.median(vs):.3f} ({vs[0]:.3f}–{vs[-1]:.3f})")
            + " |")
    text = "\n".join(lines) + "\n"
    with open(base + ".md", "w") as f:
        f.write(text)
    print()
    print(text)
    print(f"wrote {base}.csv and .md")


if __name__ == "__main__":
    main()
