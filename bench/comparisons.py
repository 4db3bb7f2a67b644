#!/usr/bin/env python3
"""Comparisons on a noisy machine: does a study tell a real difference from
the machine drifting under it?

Two PostgreSQL servers dbsweep starts itself (Debian's build), sysbench's
point select at a few clients, blocks of a fixed length. Busy processes
(`--hogs`, at normal priority: "an ordinary background job") start when
half of the study's points are stored and stay until it ends — the drift
of a shared machine, made on purpose. Each part is one study, then
`dbsweep report --format json`; the row is the comparison of `b` against
`a` at the cell (`comparisons[]`) and the drift the report states.

aa-interleaved  the same server twice (a and b identical), interleaved:
                the goal is `equivalent` or `inconclusive`, never a rank
aa-sequential   the same, target after target: b runs in the hogged half,
                and the paired ratio shows the drift as a difference
ab-interleaved  b really slower (`--slow`, a setting that costs it 10-20 %),
                interleaved under the same hogs: the goal is `worse`
width           aa interleaved without hogs: the interval's half-width at
                `--blocks` blocks of `--time` seconds on this machine

Usage:
    bench/comparisons.py [--parts aa-interleaved,aa-sequential,ab-interleaved,width]
                         [--time 10] [--blocks 5] [--clients 4] [--hogs 2]
                         [--slow "log_min_duration_statement=0"] [--rows 10000]

Needs the README's set-up. Writes bench/results/comparisons-<date>.csv
(a row per part), -points.csv (every point's start and throughput) and .md,
and prints the table.
"""

import argparse
import csv
import datetime
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DBSWEEP = os.path.join(ROOT, "target", "release", "dbsweep")


def study_text(name, order, args, slow):
    b_settings = ""
    if slow:
        k, v = slow.split("=", 1)
        b_settings = f'settings = {{ {k} = "{v}" }}'
    return f"""
name = "{name}"
out = "out"
order = "{order}"
clients = [{args.clients}]

[[target]]
name = "a"
server = "postgres"

[[target]]
name = "b"
server = "postgres"
{b_settings}

[[workload]]
name = "oltp_point_select"
options = {{ table-size = {args.rows} }}
warmup = 2
time = {args.time}
repeats = {args.blocks}
"""


def stored(db):
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
            return c.execute("SELECT count(*) FROM point").fetchone()[0]
    except sqlite3.Error:
        return 0


def run_part(part, args, workdir):
    order = "sequential" if part == "aa-sequential" else "interleaved"
    slow = args.slow if part == "ab-interleaved" else None
    hogs = 0 if part == "width" else args.hogs
    d = os.path.join(workdir, part)
    os.makedirs(d)
    os.chmod(d, 0o755)
    with open(os.path.join(d, "s.toml"), "w") as f:
        f.write(study_text(part.replace("-", "_"), order, args, slow))
    total = 2 * args.blocks
    p = subprocess.Popen([DBSWEEP, "study", "s.toml"], cwd=d,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    procs = []
    hog_at = None
    t0 = time.monotonic()
    while p.poll() is None:
        if hogs and not procs and stored(os.path.join(d, "out", "results.db")) >= total // 2:
            procs = [subprocess.Popen(["bash", "-c", "while :; do :; done"]) for _ in range(hogs)]
            hog_at = time.monotonic() - t0
        time.sleep(0.5)
    for h in procs:
        h.kill()
        h.wait()
    if p.returncode != 0:
        raise SystemExit(f"{part}: dbsweep study failed: {p.stderr.read()[-2000:]}")
    js = os.path.join(d, "r.json")
    subprocess.run([DBSWEEP, "report", "out", "--format", "json", "--out", js], cwd=d,
                   check=True, capture_output=True)
    with open(js) as f:
        doc = json.load(f)
    c = next(x for x in doc["comparisons"]
             if x["series"].split(" (")[0] == "b" and x["metric"] == "tps" and x["clients"] == args.clients)
    drift = (doc.get("drift") or [{}])[0]
    half = None
    if c["ci_low"] is not None:
        half = (c["ci_high"] - c["ci_low"]) / 2
    row = dict(part=part, order=order, slow=slow or "", hogs=hogs,
               hogs_from_s=round(hog_at, 1) if hog_at else "", blocks=c["blocks"],
               ratio=c["ratio"], ci_low=c["ci_low"], ci_high=c["ci_high"],
               half_width_pct=None if half is None else half * 100, verdict=c["verdict"],
               drift_pct=drift.get("drift_pct"), paired_spread_pct=drift.get("paired_spread_pct"),
               wall_s=round(time.monotonic() - t0, 1))
    # Every point's throughput and start, so the noise can be read where
    # it happened.
    row["points"] = sorted(
        (p["started_unix_us"] // 1000 / 1000, p["target"], p["repeat"], p["figures"]["tps"])
        for p in doc["points"] if p.get("figures") and p.get("started_unix_us"))
    print({k: v for k, v in row.items() if k != "points"}, flush=True)
    return row


def fmt(x, d=3):
    return "—" if x is None or x == "" else (f"{x:.{d}f}" if isinstance(x, float) else str(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="aa-interleaved,aa-sequential,ab-interleaved,width")
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--hogs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--slow", default="log_min_duration_statement=0")
    ap.add_argument("--rows", type=int, default=10000)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    base = os.path.join(ROOT, "bench", "results", f"comparisons-{stamp}")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        os.chmod(workdir, 0o755)
        for part in args.parts.split(","):
            rows.append(run_part(part, args, workdir))
    with open(base + "-points.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["part", "started_unix_s", "target", "block", "tps"])
        for r in rows:
            for p in r["points"]:
                w.writerow([r["part"], *p])
    for r in rows:
        del r["points"]
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    md = [f"b against a, oltp_point_select at {args.clients} clients, {args.blocks} blocks of "
          f"{args.time} s; busy processes from half the points on (hogs)\n",
          "| part | order | b's setting | hogs | ratio | 95 % interval | ± % | verdict "
          "| drift % | paired spread % |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['part']} | {r['order']} | {r['slow'] or '—'} | {r['hogs']} | "
                  f"{fmt(r['ratio'])} | {fmt(r['ci_low'])}–{fmt(r['ci_high'])} | "
                  f"{fmt(r['half_width_pct'], 1)} | {r['verdict']} | {fmt(r['drift_pct'], 1)} | "
                  f"{fmt(r['paired_spread_pct'], 1)} |")
    text = "\n".join(md)
    with open(base + ".md", "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
