#!/usr/bin/env python3
"""Context switches per transaction: dbsweep with a thread per connection,
dbsweep on event loops (`--client-threads 2`) and pgbench `-j 2`, driving
the same point select on PostgreSQL, interleaved per pair.

Each tool runs under `perf stat -e context-switches,cpu-migrations`, which
counts the client process's own threads only (perf follows the threads it
starts; the server's are not counted), in a closed loop at C connections
(default 8) and then at an offered rate of --rate-share of the first
pgbench closed loop's throughput (default 30 %). The counts are divided by
the transactions each run completed. Counts, unlike times, do not need a
quiet machine, but a busier one batches more per wake-up, so only the
interleaved ratios compare.

Usage:
    bench/switches.py [--pairs 3] [--time 5] [--threads 8] [--rows 100000]
                      [--rate-share 30] [--no-build]

Needs the README's set-up (PostgreSQL's binaries, pgbench) and Linux perf
with `perf_event_paranoid` ≤ 2. Writes bench/results/switches-<date>.csv and
.md, and prints the table.
"""

import argparse
import csv
import datetime
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402  (the shared helpers of bench/clients.py)

TOOLS = ["dbsweep", "dbsweep-j2", "pgbench"]


def perf(argv, env=None):
    """Runs argv under perf stat: (output, context switches, migrations)."""
    with tempfile.NamedTemporaryFile("r") as tf:
        p = subprocess.run(["perf", "stat", "-x,", "-o", tf.name, "-e",
                            "context-switches,cpu-migrations", "--"] + argv,
                           capture_output=True, text=True, env=env)
        counts = {}
        for line in tf.read().splitlines():
            f = line.split(",")
            if len(f) > 2 and f[0].strip().isdigit():
                counts[f[2]] = int(f[0])
    if p.returncode != 0:
        sys.exit(f"{argv[0]} failed (exit {p.returncode}):\n{(p.stdout + p.stderr)[-2000:]}")
    return p.stdout + p.stderr, counts.get("context-switches"), counts.get("cpu-migrations")


def run(tool, url, a, rate, workdir, script):
    if tool.startswith("dbsweep"):
        json_path = os.path.join(workdir, "d.json")
        extra = ["--client-threads", "2"] if tool == "dbsweep-j2" else []
        if rate:
            extra += ["--rate", str(rate)]
        argv = c.dbsweep_argv(url, "oltp_point_select", a.threads, a.time, a.rows, json_path,
                              extra=extra + ["--metrics", "off"])
        _, cs, mig = perf(argv)
        txns = c.parse_dbsweep(json_path)["tps"] * a.time
    else:
        argv = c.pgbench_argv(url, script, a.threads, a.time, jobs=2)
        if rate:
            argv[-1:-1] = ["-R", str(rate)]
        env = dict(os.environ, PGPASSWORD=c.parts(url)["password"] or "")
        out, cs, mig = perf(argv, env=env)
        txns = int(re.search(r"number of transactions actually processed:\s+(\d+)", out).group(1))
    return txns, cs, mig


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--time", type=int, default=5)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--rows", type=int, default=100000)
    p.add_argument("--rate-share", type=float, default=30.0)
    p.add_argument("--no-build", action="store_true")
    a = p.parse_args()
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=c.ROOT, check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=c.ROOT,
                            capture_output=True, text=True).stdout.strip()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        url = c.server_start("postgres", workdir, [])
        try:
            subprocess.run([c.DBSWEEP, "prepare", "oltp_point_select", "--db", url,
                            f"--table-size={a.rows}", "--tables=1"], check=True,
                           capture_output=True)
            script = os.path.join(workdir, "select.sql")
            with open(script, "w") as f:
                f.write(c.PGBENCH_SCRIPTS["oltp_point_select"].format(rows=a.rows))
            rate = None
            for pair in range(a.pairs):
                for mode in ["closed", "rate"]:
                    order = TOOLS[::-1] if pair % 2 else TOOLS
                    for tool in order:
                        r = rate if mode == "rate" else None
                        txns, cs, mig = run(tool, url, a, r, workdir, script)
                        if rate is None and tool == "pgbench":
                            rate = int(txns / a.time * a.rate_share / 100)
                        rows.append(dict(pair=pair, mode=mode, rate=r or "", tool=tool,
                                         txns=txns, switches=cs, migrations=mig,
                                         switches_per_txn=cs / max(txns, 1),
                                         migrations_per_txn=mig / max(txns, 1)))
                        print(f"pair {pair} {mode} {tool}: {txns:,.0f} txns, "
                              f"{cs / max(txns, 1):.3f} switches/txn, "
                              f"{mig / max(txns, 1):.4f} migrations/txn", flush=True)
        finally:
            c.server_stop("postgres", workdir)

    base = os.path.join(c.ROOT, "bench", "results", f"switches-{stamp}")
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    def per(tool, mode, key):
        return [r[key] for r in rows if r["tool"] == tool and r["mode"] == mode]

    lines = [f"Context switches per transaction, PostgreSQL point select, {a.threads} "
             f"connections, {a.pairs} pairs of {a.time} s, rate {rate}/s, dbsweep {commit}", "",
             "| mode | tool | switches/txn | migrations/txn | / pgbench switches (range) |",
             "|---|---|---|---|---|"]
    for mode in ["closed", "rate"]:
        for tool in TOOLS:
            s = per(tool, mode, "switches_per_txn")
            m = per(tool, mode, "migrations_per_txn")
            g = per("pgbench", mode, "switches_per_txn")
            ratios = sorted(x / y for x, y in zip(s, g) if y)
            cell = (f"{c.median(ratios):.2f} ({ratios[0]:.2f}–{ratios[-1]:.2f})"
                    if ratios else "—")
            lines.append(f"| {mode} | {tool} | {c.median(s):.3f} | {c.median(m):.4f} | {cell} |")
    text = "\n".join(lines) + "\n"
    with open(base + ".md", "w") as f:
        f.write(text)
    print()
    print(text)
    print(f"wrote {base}.csv and .md")


if __name__ == "__main__":
    main()
