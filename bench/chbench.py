#!/usr/bin/env python3
"""CH-benCHmark's interference, measured in interleaved blocks: what
analytical streams cost TPC-C's terminals, and what the terminals cost the
queries, on one server at a time.

A study's mixes are cells of their own, run one after the other, so a
difference between them carries the machine's drift (docs/chbench.md).
Here the mixes are the series of one block instead: the server (started
by `dbsweep server start KIND`) loads --warehouses once, then each block
runs every mix once, back to back, in an order shuffled per block
(`random.Random(--seed)`), and every figure is compared with its baseline
mix *inside the block*:

  T          --terminals TPC-C terminals alone (no waits, every warehouse)
  T+1, T+2   the same terminals beside 1 and 2 analytical streams
  1          one analytical stream alone

  tpmC(T+k) / tpmC(T)               what k streams cost the terminals
  geomean(T+1) / geomean(1)         what the terminals cost one stream's
                                    queries (the 22 queries' geometric
                                    mean of their mean times)
  QphH(T+1) / QphH(1)               the same as a rate

Each ratio: the geometric mean over blocks with a 95 % interval (Student's
t on the log ratios, the study runner's method), and the verdict as the
study reports it (`better`/`worse` when the interval excludes 1,
`equivalent` inside ±2 %, else `inconclusive`).

Usage:
    bench/chbench.py [--engines postgres,mariadb] [--warehouses 10]
                     [--terminals 4] [--blocks 3] [--time 60] [--warmup 5]
    bench/chbench.py --quick        # smoke run: 1 warehouse, 2 blocks, 10-s runs

Writes bench/results/chbench-<date>.csv (a row per run) and .md.
"""

import argparse
import csv
import datetime
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402
import tpcc as t  # noqa: E402

ROOT = c.ROOT
# Student's t at 0.975 for 1..10 degrees of freedom.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]


def mixes(terminals):
    """{label: (connections, analytical streams)}."""
    T = terminals
    return {f"{T}": (T, 0), f"{T}+1": (T + 1, 1), f"{T}+2": (T + 2, 2), "1": (1, 1)}


def one_run(args, url, label, conns, streams, workdir):
    js = os.path.join(workdir, "run.json")
    if os.path.exists(js):
        os.remove(js)
    argv = [args.dbsweep, "run", "chbench", "--db", url, f"--warehouses={args.warehouses}",
            f"--threads={conns}", f"--analytic-streams={streams}",
            f"--query-timeout={args.query_timeout}", f"--warmup={args.warmup}",
            f"--time={args.time}", "--json", js]
    r = subprocess.run(argv, capture_output=True, text=True,
                       timeout=args.warmup + args.time + 900)
    if r.returncode != 0:
        return dict(error=f"exit {r.returncode}: {t.tail(r.stdout + r.stderr)}")
    with open(js) as f:
        res = json.load(f)["result"]
    ch = res.get("chbench") or {}
    cpu = (res.get("client_cpu") or {}).get("us_per_transaction")
    return dict(tpmc=ch.get("tpmc"), qphh=ch.get("qphh"), queries=ch.get("queries"),
                queries_failed=ch.get("queries_failed"), geomean_s=ch.get("query_geomean_s"),
                measured_s=res.get("measured_s"), client_us_per_txn=cpu)


def interval(xs):
    """(geometric mean, low, high) of ratios, 95 % Student's t on logs;
    no interval with fewer than 2."""
    logs = [math.log(x) for x in xs]
    m = statistics.fmean(logs)
    if len(xs) < 2:
        return math.exp(m), None, None
    h = T975[min(len(xs) - 2, len(T975) - 1)] * statistics.stdev(logs) / math.sqrt(len(xs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def verdict(lo, hi, margin=0.02):
    if lo is None:
        return "too_few_repeats"
    if lo >= 1 - margin and hi <= 1 + margin:
        return "equivalent"
    if lo > 1:
        return "higher"
    if hi < 1:
        return "lower"
    return "inconclusive"


def summary(rows, terminals):
    """Markdown: per engine, each mix's figures per block, then the paired
    ratios."""
    T = terminals
    out = []
    for e in sorted({r["engine"] for r in rows}):
        mine = [r for r in rows if r["engine"] == e and not r.get("error")]
        blocks = sorted({r["block"] for r in mine})
        at = {(r["block"], r["mix"]): r for r in mine}
        out += [f"### {e}", "", "| mix | tpmC per block | QphH per block | "
                "queries' geometric mean (s) per block | queries (failed) |", "|---|---|---|---|---|"]
        for m in mixes(T):
            def col(k, fmt):
                return ", ".join(fmt.format(at[(b, m)][k]) if at.get((b, m)) and
                                 at[(b, m)].get(k) is not None else "—" for b in blocks)
            q = ", ".join(f"{at[(b, m)]['queries']} ({at[(b, m)]['queries_failed']})"
                          if at.get((b, m)) and at[(b, m)].get("queries") is not None else "—"
                          for b in blocks)
            out.append(f"| {m} | {col('tpmc', '{:,.0f}')} | {col('qphh', '{:,.0f}')} | "
                       f"{col('geomean_s', '{:.3f}')} | {q} |")
        out += ["", "| ratio, paired in each block | per block | geometric mean (95 % interval) "
                "| verdict |", "|---|---|---|---|"]
        for name, k, a, b in [
                (f"tpmC, {T}+1 / {T} (one stream's cost to the terminals)", "tpmc", f"{T}+1", f"{T}"),
                (f"tpmC, {T}+2 / {T} (two streams' cost)", "tpmc", f"{T}+2", f"{T}"),
                (f"tpmC, {T}+2 / {T}+1 (the second stream's)", "tpmc", f"{T}+2", f"{T}+1"),
                (f"queries' geometric mean, {T}+1 / 1 (the terminals' cost to the queries)",
                 "geomean_s", f"{T}+1", "1"),
                (f"QphH, {T}+1 / 1", "qphh", f"{T}+1", "1"),
                (f"QphH, {T}+2 / 1 (two streams beside the terminals, one alone)", "qphh",
                 f"{T}+2", "1")]:
            xs = [at[(bl, a)][k] / at[(bl, b)][k] for bl in blocks
                  if at.get((bl, a)) and at.get((bl, b)) and at[(bl, a)].get(k)
                  and at[(bl, b)].get(k)]
            if not xs:
                out.append(f"| {name} | — | — | — |")
                continue
            g, lo, hi = interval(xs)
            iv = f"{g:.3f} ({lo:.3f}–{hi:.3f})" if lo is not None else f"{g:.3f}"
            out.append(f"| {name} | {', '.join(f'{x:.3f}' for x in xs)} | {iv} | "
                       f"{verdict(lo, hi)} |")
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default="postgres,mariadb")
    ap.add_argument("--warehouses", type=int, default=10)
    ap.add_argument("--terminals", type=int, default=4)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--time", type=int, default=60, help="measured seconds of each run")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--query-timeout", default="5m")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, default=55700)
    ap.add_argument("--settle", type=float, default=20.0, metavar="S",
                    help="wait up to S s before each run for the machine to be 75 %% idle")
    ap.add_argument("--dbsweep", metavar="BINARY")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.warehouses, a.blocks, a.time, a.warmup, a.settle = 1, 2, 10, 2, 5.0
    if a.blocks < 1 or a.terminals < 1 or a.warehouses < 1:
        ap.error("--blocks, --terminals and --warehouses must be at least 1")
    engines = a.engines.split(",")
    for e in engines:
        if e not in t.SETTINGS:
            ap.error(f"--engines: unknown engine {e!r}: give mariadb, postgres or both")
    if a.dbsweep:
        a.dbsweep = os.path.abspath(a.dbsweep)
    else:
        a.dbsweep = c.DBSWEEP
        if not a.no_build:
            subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    c.DBSWEEP = a.dbsweep

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    base = os.path.join(ROOT, "bench", "results", f"chbench-{stamp}")
    fields = ["engine", "block", "position", "mix", "connections", "streams", "tpmc", "qphh",
              "queries", "queries_failed", "geomean_s", "measured_s", "client_us_per_txn",
              "started", "load1", "error"]
    rows = []
    rng = random.Random(a.seed)

    def record(row):
        row["load1"] = round(os.getloadavg()[0], 2)
        rows.append(row)
        with open(base + ".csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
        print({k: v for k, v in row.items() if v is not None}, flush=True)

    workdir = tempfile.mkdtemp(prefix="dbsweep-chbench-")
    os.chmod(workdir, 0o755)
    versions = {}
    try:
        for i, e in enumerate(engines):
            url = t.server_start(e, workdir, a.port + i, t.SETTINGS[e])
            print(f"{e}: {url}", flush=True)
            try:
                versions[e] = t.query(e, url, "SELECT version()").splitlines()[0].split(" on ")[0]
                subprocess.run([a.dbsweep, "cleanup", "chbench", "--db", url],
                               capture_output=True)
                subprocess.run([a.dbsweep, "prepare", "chbench", "--db", url,
                                f"--warehouses={a.warehouses}"], check=True, capture_output=True)
                if e == "postgres":
                    t.query(e, url, "VACUUM ANALYZE")
                for block in range(1, a.blocks + 1):
                    order = list(mixes(a.terminals).items())
                    rng.shuffle(order)
                    for pos, (label, (conns, streams)) in enumerate(order, 1):
                        c.settle(a.settle)
                        started = datetime.datetime.now(datetime.timezone.utc)
                        r = one_run(a, url, label, conns, streams, workdir)
                        record(dict(engine=e, block=block, position=pos, mix=label,
                                    connections=conns, streams=streams,
                                    started=f"{started:%H:%M:%S}", **r))
            finally:
                t.server_stop(e, workdir)
    finally:
        for e in engines:
            t.server_stop(e, workdir)
        shutil.rmtree(workdir, ignore_errors=True)

    head = [f"# bench/chbench.py {' '.join(sys.argv[1:])}", "",
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
            f"{os.cpu_count()} CPUs; " + "; ".join(f"{e} {v}" for e, v in versions.items())
            + f"; {a.warehouses} warehouses, {a.terminals} terminals, {a.blocks} blocks of "
            f"{a.warmup} s + {a.time} s runs, seed {a.seed}", ""]
    text = "\n".join(head) + "\n" + summary(rows, a.terminals)
    with open(base + ".md", "w") as f:
        f.write(text)
    print()
    print(f"Raw results: {os.path.relpath(base, ROOT)}.csv")
    print()
    print(text)


if __name__ == "__main__":
    main()
