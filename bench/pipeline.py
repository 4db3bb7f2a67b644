#!/usr/bin/env python3
"""Pipelining: dbsweep `--pipeline K` against pgbench's pipeline mode, on
PostgreSQL, the same transaction sent the same way, interleaved per pair so
machine noise hits both tools alike.

The transaction is sysbench's oltp_read_only (BEGIN, 10 point selects, 4
range selects of 100 rows, COMMIT: 16 statements, prepared) on C
connections (default 8), against a scratch PostgreSQL this script starts
with `dbsweep server start postgres`. For each depth K:

dbsweep   `run oltp_read_only --pipeline K` (its connections on
          --client-threads event loops, default 2): the statements sent in
          groups of up to K, each group one pipeline (one Sync), the next
          group once every answer is in.
pgbench   the same statements in a script (-M prepared, -c C, -j
          --client-threads), cut into groups of K, each group between
          \\startpipeline and \\endpipeline. K = 1 is no pipeline at all
          for both; K = 16 is the whole transaction in one pipeline.

Reported per K and tool: the median of transactions per second and of the
client's CPU per transaction (GNU time's user + system over the run's
transactions), and per pair the ratio dbsweep / pgbench with its range
over the pairs; and dbsweep's speed-up of K over K = 1.

Usage:
    bench/pipeline.py [--pairs 3] [--time 10] [--threads 8] [--rows 100000]
                      [--depths 1,4,16] [--client-threads 2] [--no-build]

Needs the README's set-up (PostgreSQL's binaries, pgbench with them) and GNU
time. Writes bench/results/pipeline-<date>.csv (one row per run) and .md,
and prints the table.
"""

import argparse
import csv
import datetime
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402  (the shared helpers of bench/clients.py)

STATEMENTS = (
    [f"\\set id{i} random(1, {{rows}})\nSELECT c FROM sbtest1 WHERE id=:id{i};\n" for i in range(10)]
    + [
        "\\set a random(1, {hi})\nSELECT c FROM sbtest1 WHERE id BETWEEN :a AND :a + 99;\n",
        "\\set b random(1, {hi})\nSELECT SUM(k) FROM sbtest1 WHERE id BETWEEN :b AND :b + 99;\n",
        "\\set c random(1, {hi})\n"
        "SELECT c FROM sbtest1 WHERE id BETWEEN :c AND :c + 99 ORDER BY c;\n",
        "\\set d random(1, {hi})\n"
        "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN :d AND :d + 99 ORDER BY c;\n",
    ])


def pgbench_script(depth, rows):
    """oltp_read_only's 16 statements, in pipelines of `depth`."""
    body = ["BEGIN;\n"] + [s.format(rows=rows, hi=rows - 99) for s in STATEMENTS] + ["COMMIT;\n"]
    if depth <= 1:
        return "".join(body)
    out = []
    for i in range(0, len(body), depth):
        group = body[i:i + depth]
        # \set lines go before the pipeline (meta-commands only), statements in it.
        sets = "".join(line for s in group for line in s.splitlines(True) if line.startswith("\\"))
        sql = "".join(line for s in group for line in s.splitlines(True)
                      if not line.startswith("\\"))
        out.append(sets + "\\startpipeline\n" + sql + "\\endpipeline\n")
    return "".join(out)


def run_dbsweep(url, a, depth, workdir):
    json_path = os.path.join(workdir, "d.json")
    extra = ["--client-threads", str(a.client_threads), "--range-size=100"]
    if depth > 1:
        extra += ["--pipeline", str(depth)]
    argv = c.dbsweep_argv(url, "oltp_read_only", a.threads, a.time, a.rows, json_path,
                          extra=extra)
    rc, out, wall, cpu, _, _ = c.measured(argv, timeout=a.time * 4 + 60)
    r = c.parse_dbsweep(json_path) if rc == 0 else None
    if r is None:
        sys.exit(f"dbsweep failed (exit {rc}):\n{out[-2000:]}")
    return r["tps"], cpu


def run_pgbench(url, a, depth, workdir):
    path = os.path.join(workdir, f"p{depth}.sql")
    with open(path, "w") as f:
        f.write(pgbench_script(depth, a.rows))
    argv = c.pgbench_argv(url, path, a.threads, a.time, jobs=a.client_threads)
    env = dict(os.environ, PGPASSWORD=c.parts(url)["password"] or "")
    rc, out, wall, cpu, _, _ = c.measured(argv, env=env, timeout=a.time * 4 + 60)
    r = c.parse_pgbench(out, "oltp_read_only") if rc == 0 else None
    if r is None:
        sys.exit(f"pgbench failed (exit {rc}):\n{out[-2000:]}")
    return r["tps"], cpu


def fmt(x, d=2):
    return "—" if x is None else f"{x:,.{d}f}"


def ratio_cell(pairs):
    """Median of per-pair ratios and their range."""
    if not pairs:
        return "—"
    xs = sorted(pairs)
    return f"{c.median(xs):.2f} ({xs[0]:.2f}–{xs[-1]:.2f})"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--time", type=int, default=10)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--rows", type=int, default=100000)
    p.add_argument("--depths", default="1,4,16")
    p.add_argument("--client-threads", type=int, default=2)
    p.add_argument("--no-build", action="store_true")
    a = p.parse_args()
    depths = [int(x) for x in a.depths.split(",")]
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=c.ROOT, check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=c.ROOT,
                            capture_output=True, text=True).stdout.strip()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        url = c.server_start("postgres", workdir, [])
        try:
            subprocess.run([c.DBSWEEP, "prepare", "oltp_read_only", "--db", url,
                            f"--table-size={a.rows}", "--tables=1"], check=True,
                           capture_output=True)
            for pair in range(a.pairs):
                for depth in depths:
                    order = ["dbsweep", "pgbench"]
                    if (pair + depth) % 2:
                        order.reverse()
                    for tool in order:
                        c.settle()
                        run = run_dbsweep if tool == "dbsweep" else run_pgbench
                        tps, cpu = run(url, a, depth, workdir)
                        us = 1e6 * cpu / max(tps * a.time, 1)
                        rows.append(dict(pair=pair, depth=depth, tool=tool, tps=tps,
                                         cpu_s=cpu, cpu_us_per_txn=us))
                        print(f"pair {pair} K={depth} {tool}: {tps:,.0f} tps, "
                              f"{us:.1f} µs CPU/txn", flush=True)
        finally:
            c.server_stop("postgres", workdir)

    os.makedirs(os.path.join(c.ROOT, "bench", "results"), exist_ok=True)
    base = os.path.join(c.ROOT, "bench", "results", f"pipeline-{stamp}")
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    def get(tool, depth, pair, key):
        for r in rows:
            if (r["tool"], r["depth"], r["pair"]) == (tool, depth, pair):
                return r[key]
        return None

    lines = [f"Pipelining, PostgreSQL, oltp_read_only (16 statements), {a.threads} connections, "
             f"-j / --client-threads {a.client_threads}, {a.pairs} pairs of {a.time} s, "
             f"dbsweep {commit}",
             "",
             "| K | dbsweep tps | pgbench tps | dbsweep / pgbench tps | dbsweep µs CPU/txn "
             "| pgbench µs CPU/txn | CPU ratio | dbsweep K / K=1 tps |",
             "|---|---|---|---|---|---|---|---|"]
    for depth in depths:
        cells = []
        for key in ("tps", "cpu_us_per_txn"):
            d = [get("dbsweep", depth, i, key) for i in range(a.pairs)]
            g = [get("pgbench", depth, i, key) for i in range(a.pairs)]
            cells.append((c.median(d), c.median(g),
                          ratio_cell([x / y for x, y in zip(d, g) if x and y])))
        up = ratio_cell([get("dbsweep", depth, i, "tps") / get("dbsweep", depths[0], i, "tps")
                         for i in range(a.pairs)])
        (dt, gt, rt), (dc, gc, rc) = cells
        lines.append(f"| {depth} | {fmt(dt, 0)} | {fmt(gt, 0)} | {rt} | {fmt(dc, 1)} | "
                     f"{fmt(gc, 1)} | {rc} | {up} |")
    text = "\n".join(lines) + "\n"
    with open(base + ".md", "w") as f:
        f.write(text)
    print()
    print(text)
    print(f"wrote {base}.csv and .md")


if __name__ == "__main__":
    main()
