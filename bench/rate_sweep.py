#!/usr/bin/env python3
"""Rate sweep: latency against offered load on PostgreSQL, the same levels
offered by dbsweep, by pgbench and (where it does not abort) by sysbench,
interleaved per pair so machine noise hits every tool alike.

The statement is oltp_point_select's (SELECT c FROM sbtest1 WHERE id = ?,
prepared) on C connections (default 8), against a scratch PostgreSQL that
this script starts with `dbsweep server start postgres`, as
studies/rate-sweep.toml does:

peak    closed loops first (dbsweep, and pgbench for comparison), --pairs
        of them interleaved: the median of dbsweep's is the peak the
        levels are shares of (the study's calibration point).
levels  open loops at each share of the peak (default 10 %, 20 %, …,
        120 %): dbsweep --rate R, pgbench -R R (-M prepared, -c C, -j 2,
        the SELECT in a script file, its per-transaction log) and sysbench
        --rate R. dbsweep and pgbench measure each transaction from its
        scheduled start (pgbench's latency under -R includes the schedule
        lag, as dbsweep's does); sysbench from when a thread took the
        event, so its p99 leaves the queue out (noted in the table).
        The first --warmup seconds of each run are not counted (dbsweep's
        --warmup; pgbench's log entries of those seconds are dropped;
        sysbench has no warmup under --rate and runs --time only).

For each tool it reports the highest level sustained — median p99 ≤ the
goal (default 10 ms) with at most 1 % of the offered load unserved (and
within three standard deviations of a Poisson count for pgbench and
sysbench, whose logs hold no count of unsent arrivals) — and the p99 at
10 %, 50 % and 90 % of the peak: medians over the pairs with each pair's
range. dbsweep's schedule lag p99 is reported beside its p99. With
`--metrics both` dbsweep runs twice per pair, with its metrics sampler on
and off (`--metrics off`), so the sampler's cost shows in the lag at low
load. `--client-threads 1,2` adds dbsweep with its connections on 1 and 2
event-loop threads (`dbsweep-j1`, `dbsweep-j2`), interleaved with the rest;
the levels stay shares of the threaded dbsweep's peak. `--baseline PATH`
adds another dbsweep build (e.g. a release build of an earlier commit) in
the event-loop variants (every variant without `--client-threads`), named
`baseline…`, interleaved with the rest.

Usage:
    bench/rate_sweep.py [--pairs 3] [--time 10] [--warmup 2] [--threads 8]
                        [--rows 100000] [--levels 10,20,30,40,50,60,70,80,90,100,110,120]
                        [--goal-ms 10] [--tools dbsweep,pgbench,sysbench]
                        [--metrics on|off|both] [--client-threads 1,2] [--settle 30]
                        [--baseline OLD_DBSWEEP] [--no-build]

A smoke test of the script itself (a few seconds per level, no meaning):
    bench/rate_sweep.py --pairs 1 --time 2 --warmup 0 --levels 10,50 --rows 10000 --settle 0

Needs the README's set-up (PostgreSQL's binaries; pgbench comes with
them), GNU time, and `apt-get install sysbench` for its column. Writes
bench/results/rate-sweep-<date>.csv (one row per run) and .md, and prints
the tables.
"""

import argparse
import csv
import datetime
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402  (the shared helpers of bench/clients.py)

ROOT = c.ROOT
DBSWEEP = c.DBSWEEP

# At most this share of a level's offered load may go unserved (skipped or
# never started) for it to count as sustained, as the study report's rule.
UNSERVED_PCT = 1.0


def pct(sorted_xs, p):
    """The p-th percentile of sorted values (nearest rank)."""
    if not sorted_xs:
        return None
    k = max(1, math.ceil(p / 100 * len(sorted_xs)))
    return sorted_xs[k - 1]


def lat_pct(lat, p):
    for e in (lat or {}).get("percentiles", []):
        if abs(e["p"] - p) < 1e-9:
            return e["us"] / 1e3
    return None


def dbsweep_run(url, a, rate, workdir, extra):
    """One dbsweep run with `extra` arguments: closed loop when rate is None.
    `extra` may start with ("--binary", PATH): another dbsweep build."""
    js = os.path.join(workdir, "run.json")
    if os.path.exists(js):
        os.remove(js)
    binary = DBSWEEP
    if extra[:1] == ["--binary"]:
        binary, extra = extra[1], extra[2:]
    argv = [binary, "run", "oltp_point_select", "--db", url, f"--table-size={a.rows}",
            f"--threads={a.threads}", f"--time={a.time}", f"--warmup={a.warmup}",
            "--percentiles=50,99", "--json", js]
    if rate is not None:
        argv.append(f"--rate={rate}")
    argv += extra
    rc, text, wall, cpu, *_ = c.measured(argv, timeout=(a.time + a.warmup) * 6 + 60)
    if rc != 0 or not os.path.exists(js):
        return dict(rc=rc, note=tail(text))
    with open(js) as f:
        r = json.load(f)["result"]
    out = dict(rc=rc, achieved=r["tps"], p50_ms=lat_pct(r.get("latency"), 50.0),
               p99_ms=lat_pct(r.get("latency"), 99.0), cpu_s=cpu, wall_s=wall)
    p = r.get("pacing")
    if p and p.get("offered"):
        unserved = (p.get("skipped") or 0) + (p.get("unstarted") or 0)
        out.update(offered=p["offered"], unserved_pct=100 * unserved / p["offered"],
                   lag_p99_ms=lat_pct(p.get("lag"), 99.0))
    return out


def pgbench_run(url, a, rate, script, workdir):
    """One pgbench run with its per-transaction log (-l): latency from the
    scheduled start under -R; the first --warmup seconds dropped."""
    p = c.parts(url)
    for f in os.listdir(workdir):
        if f.startswith("pgb"):
            os.remove(os.path.join(workdir, f))
    secs = a.time + a.warmup
    argv = ["pgbench", "-n", "-M", "prepared", "-h", p["host"], "-p", p["port"], "-U", p["user"],
            "-c", str(a.threads), "-j", str(min(a.threads, 2)), "-T", str(secs),
            "-l", "--log-prefix", os.path.join(workdir, "pgb"), "-f", script, p["db"]]
    if rate is not None:
        argv[-3:-3] = ["-R", str(rate)]
    env = dict(os.environ, PGPASSWORD=p["password"] or "")
    started = time.time()
    rc, text, wall, cpu, *_ = c.measured(argv, env=env, timeout=secs * 6 + 60)
    if rc != 0:
        return dict(rc=rc, note=tail(text))
    # Log lines: client, transaction, latency µs, script, epoch s, µs
    # [, schedule lag µs] — stamped when the transaction ended.
    begin = started + a.warmup
    lat, lag, n = [], [], 0
    first, last = None, None
    for f in os.listdir(workdir):
        if not f.startswith("pgb"):
            continue
        with open(os.path.join(workdir, f)) as fh:
            for line in fh:
                x = line.split()
                if len(x) < 6 or x[2] == "skipped":
                    continue
                end = int(x[4]) + int(x[5]) / 1e6
                first = end if first is None else min(first, end)
                last = end if last is None else max(last, end)
                if end < begin:
                    continue
                n += 1
                lat.append(int(x[2]) / 1e3)
                if len(x) >= 7:
                    lag.append(int(x[6]) / 1e3)
    if not lat:
        return dict(rc=rc, note="no transactions logged after the warmup")
    lat.sort()
    lag.sort()
    window = max(last - max(begin, first), 1e-9)
    out = dict(rc=rc, achieved=n / window, p50_ms=pct(lat, 50), p99_ms=pct(lat, 99),
               lag_p99_ms=pct(lag, 99), cpu_s=cpu, wall_s=wall)
    if rate is not None:
        out.update(offered=round(rate * window),
                   unserved_pct=max(0.0, 100 * (1 - n / (rate * window))))
    return out


def sysbench_run(url, a, rate):
    """One sysbench run; latency from when a thread took the event."""
    argv = c.sysbench_argv("postgres", url, "oltp_point_select", a.threads, a.time, a.rows)
    argv = argv[:-1] + ["--percentile=99", "--histogram=off", "run"]
    if rate is not None:
        argv[-1:-1] = [f"--rate={rate}"]
    rc, text, wall, cpu, *_ = c.measured(argv, timeout=a.time * 6 + 60)
    t = re_find(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", text)
    p99 = re_find(r"99th percentile:\s+([\d.]+)", text)
    if rc != 0 or not t:
        return dict(rc=rc, note=tail(text))
    out = dict(rc=rc, achieved=float(t[1]), p99_ms=float(p99[0]) if p99 else None, cpu_s=cpu,
               wall_s=wall)
    if rate is not None:
        out.update(offered=round(rate * a.time),
                   unserved_pct=max(0.0, 100 * (1 - float(t[1]) / rate)))
    return out


def re_find(pattern, text):
    m = re.search(pattern, text)
    return m.groups() if m else None


def tail(text):
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return " / ".join(lines[-2:])[:200]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def span(xs, d):
    xs = sorted(x for x in xs if x is not None)
    if len(xs) < 2:
        return ""
    return f"{xs[0]:.{d}f}–{xs[-1]:.{d}f}"


def fmt(x, d=2):
    return "—" if x is None else f"{x:,.{d}f}"


def sustained(rows, goal_ms, time_s):
    """Whether a level's runs (one tool, all pairs) kept the goal: median
    p99 within it and the median unserved share within UNSERVED_PCT (for
    a tool without a count of unsent arrivals, within three standard
    deviations of a Poisson count's noise too)."""
    ok = [r for r in rows if r.get("p99_ms") is not None]
    if not ok or len(ok) < len(rows):
        return False
    p99 = med([r["p99_ms"] for r in ok])
    unserved = med([r.get("unserved_pct") for r in ok]) or 0.0
    if rows[0]["tool"].startswith(("dbsweep", "baseline")):
        allowed = UNSERVED_PCT
    else:
        expected = max(rows[0]["rate"] * time_s, 1)
        allowed = max(UNSERVED_PCT, 300 / math.sqrt(expected))
    return p99 <= goal_ms and unserved <= allowed


def report(rows, a, peak, peaks):
    tools = []
    for r in rows:
        if r["level"] is not None and r["tool"] not in tools:
            tools.append(r["tool"])
    levels = sorted({r["level"] for r in rows if r["level"] is not None})
    md = [f"Rate sweep: oltp_point_select on PostgreSQL, {a.threads} connections, "
          f"{a.warmup} s warmup + {a.time} s per run, {a.pairs} pair(s) interleaved; "
          f"closed-loop peak (dbsweep, median) {fmt(peak, 0)}/s"
          + "".join(f"; {t} closed loop {fmt(v, 0)}/s" for t, v in peaks.items() if t != "dbsweep")
          + f"; goal p99 ≤ {a.goal_ms} ms with ≤ {UNSERVED_PCT} % unserved.", ""]
    md.append("| tool | highest level sustained | its rate /s | p99 ms at 10 % (pairs) "
              "| at 50 % (pairs) | at 90 % (pairs) | lag p99 ms at 10 % (pairs) |")
    md.append("|---|---:|---:|---|---|---|---|")
    for t in tools:
        mine = [r for r in rows if r["tool"] == t and r["level"] is not None]
        best = None
        for lv in levels:
            at = [r for r in mine if r["level"] == lv]
            if at and sustained(at, a.goal_ms, a.time):
                best = lv
        rate = next((r["rate"] for r in mine if r["level"] == best), None)

        def at(lv, field, d=3):
            xs = [r.get(field) for r in mine if r["level"] == lv]
            m = med(xs)
            if m is None:
                return "—"
            s = span(xs, d)
            return f"{m:.{d}f}" + (f" ({s})" if s else "")
        md.append(f"| {t} | {'none' if best is None else f'{best} %'} | "
                  f"{'—' if rate is None else f'{rate:,}'} | {at(10, 'p99_ms')} | "
                  f"{at(50, 'p99_ms')} | {at(90, 'p99_ms')} | {at(10, 'lag_p99_ms')} |")
    md.append("")
    md.append("Every level (medians over the pairs; per-pair range of p99 in brackets):")
    md.append("")
    md.append("| level | rate /s | tool | achieved /s | p50 ms | p99 ms (pairs) | lag p99 ms "
              "| unserved % | client CPU s | sustained | note |")
    md.append("|---:|---:|---|---:|---:|---|---:|---:|---:|---|---|")
    for lv in levels:
        for t in tools:
            rs = [r for r in rows if r["tool"] == t and r["level"] == lv]
            if not rs:
                continue
            p99s = [r.get("p99_ms") for r in rs]
            s = span(p99s, 3)
            note = next((r["note"] for r in rs if r.get("note")), "")
            if t == "sysbench":
                note = note or "latency from when a thread took the event"
            md.append(f"| {lv} % | {rs[0]['rate']:,} | {t} | {fmt(med([r.get('achieved') for r in rs]), 0)} "
                      f"| {fmt(med([r.get('p50_ms') for r in rs]), 3)} "
                      f"| {fmt(med(p99s), 3)}{f' ({s})' if s else ''} "
                      f"| {fmt(med([r.get('lag_p99_ms') for r in rs]), 3)} "
                      f"| {fmt(med([r.get('unserved_pct') for r in rs]), 2)} "
                      f"| {fmt(med([r.get('cpu_s') for r in rs]), 2)} "
                      f"| {'yes' if sustained(rs, a.goal_ms, a.time) else 'no'} | {note} |")
    return "\n".join(md) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--levels", default="10,20,30,40,50,60,70,80,90,100,110,120")
    ap.add_argument("--goal-ms", type=float, default=10.0)
    ap.add_argument("--tools", default="dbsweep,pgbench,sysbench")
    ap.add_argument("--metrics", choices=["on", "off", "both"], default="on")
    ap.add_argument("--client-threads", default="", metavar="J[,J…]",
                    help="add dbsweep on J event-loop threads (--client-threads J) as a tool of its own")
    ap.add_argument("--baseline", metavar="OLD_DBSWEEP",
                    help="add another dbsweep build as a tool of its own (baseline-jJ for each "
                         "--client-threads J; baseline without them), interleaved with the rest")
    ap.add_argument("--settle", type=float, default=30.0,
                    help="wait up to this many seconds for a quiet machine before each run")
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    levels = [int(x) for x in a.levels.split(",")]
    tools = a.tools.split(",")
    if "sysbench" in tools and not shutil.which("sysbench"):
        print("sysbench not found (apt-get install sysbench): its column is left out", flush=True)
        tools.remove("sysbench")
    if "pgbench" in tools and not shutil.which("pgbench"):
        sys.exit("pgbench not found: it comes with PostgreSQL's client (apt-get install postgresql)")
    # dbsweep's variants: (name, extra arguments).
    dbsweeps = {"on": [("dbsweep", [])], "off": [("dbsweep", ["--metrics", "off"])],
                "both": [("dbsweep", []), ("dbsweep-metrics-off", ["--metrics", "off"])]}[a.metrics]
    for j in [int(x) for x in a.client_threads.split(",") if x]:
        dbsweeps.append((f"dbsweep-j{j}", ["--client-threads", str(j)]))
    if a.baseline:
        # The other build in the event-loop variants when there are any (the
        # levels are the threaded dbsweep's shares), else in every variant.
        mine = [(n, x) for n, x in dbsweeps if "--client-threads" in x] or list(dbsweeps)
        dbsweeps += [(n.replace("dbsweep", "baseline", 1), ["--binary", a.baseline] + x)
                     for n, x in mine]
    runners = [x for t in tools for x in (dbsweeps if t == "dbsweep" else [(t, None)])]
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    base = os.path.join(ROOT, "bench", "results", f"rate-sweep-{stamp}")
    fields = ["level", "rate", "pair", "tool", "rc", "offered", "achieved", "unserved_pct",
              "p50_ms", "p99_ms", "lag_p99_ms", "cpu_s", "wall_s", "note"]
    rows = []

    def keep(row):
        rows.append(row)
        with open(base + ".csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        shown = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}
        print(shown, flush=True)

    work = tempfile.mkdtemp(prefix="dbsweep-rates-")
    os.chmod(work, 0o755)
    url = None
    try:
        url = c.server_start("postgres", work, ["max_connections=200"])
        print(f"postgres: {url}", flush=True)
        subprocess.run([DBSWEEP, "prepare", "oltp_point_select", "--db", url,
                        f"--table-size={a.rows}"], check=True, capture_output=True)
        subprocess.run(["psql", url, "-qc", "VACUUM ANALYZE sbtest1"], check=True,
                       capture_output=True)
        script = os.path.join(work, "point.sql")
        with open(script, "w") as f:
            f.write(c.PGBENCH_SCRIPTS["oltp_point_select"].format(rows=a.rows))

        def one(tool, extra, rate, level, pair):
            c.settle(a.settle)
            if extra is not None:
                r = dbsweep_run(url, a, rate, work, extra)
            elif tool == "pgbench":
                r = pgbench_run(url, a, rate, script, work)
            else:
                r = sysbench_run(url, a, rate)
            keep(dict(level=level, rate=rate, pair=pair, tool=tool, **r))
            return r

        # The closed-loop peak: the levels are its shares.
        peaks = {}
        closed = [(t, m) for t, m in runners
                  if t == "pgbench" or (m is not None and "metrics-off" not in t)]
        for pair in range(1, a.pairs + 1):
            for tool, extra in (closed if pair % 2 else list(reversed(closed))):
                one(tool, extra, None, None, pair)
        for tool, _ in closed:
            peaks[tool] = med([r.get("achieved") for r in rows
                               if r["tool"] == tool and r["level"] is None])
        peak = peaks.get("dbsweep")
        if not peak:
            sys.exit("dbsweep's closed loop failed: no peak to take shares of")

        for level in levels:
            rate = max(1, round(peak * level / 100))
            for pair in range(1, a.pairs + 1):
                order = runners if pair % 2 else list(reversed(runners))
                for tool, extra in order:
                    one(tool, extra, rate, level, pair)
    finally:
        if url:
            c.server_stop("postgres", work)
        shutil.rmtree(work, ignore_errors=True)

    md = report(rows, a, peak, peaks)
    with open(base + ".md", "w") as f:
        f.write(md)
    print()
    print(f"Raw results: {os.path.relpath(base + '.csv', ROOT)}")
    print()
    print(md)


if __name__ == "__main__":
    main()
