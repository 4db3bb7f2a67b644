#!/usr/bin/env python3
"""Pacing benchmark: many users on few connections, and fixed arrival rates
side by side with pgbench and sysbench.

Two parts, both against dbsweep's own scratch servers:

users   dbsweep with --users U --threads C and an exponential think time:
        its peak memory (GNU time's maximum RSS of the whole process), its
        CPU, the transactions a second it ran against U / T, and how late
        the users' timers fired (the schedule lag of the measured window:
        intended start to actual start, which is the timers' lateness while
        the connections keep up). On PostgreSQL (the real case) and on the
        fake driver with instant transactions (`fake://`: the timers and
        the queue alone).

rates   the same statement (oltp_point_select's SELECT c FROM sbtest1 WHERE
        id = ?) at a fixed rate on C connections by dbsweep --rate, pgbench
        --rate (a script of that statement, prepared) and sysbench --rate,
        interleaved per pair; at a rate the server sustains and at one far
        above its capacity. Per tool: achieved rate, latency p50 / p99 as
        the tool measures it (dbsweep and pgbench from each transaction's
        scheduled start; sysbench from when a thread took the event), and
        what it says above capacity (sysbench stops when its event queue
        fills).

Usage:
    bench/pacing.py [--part users,rates] [--users 100000] [--connections 64]
                    [--think 10s] [--rates 5000,100000] [--pairs 3]
                    [--time 10] [--threads 8] [--rows 100000]

Needs the README's set-up plus `apt-get install sysbench` and GNU time.
Writes bench/results/pacing-<date>.csv and .md and prints the tables.
"""

import argparse
import csv
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402  (the shared helpers of bench/clients.py)

ROOT = c.ROOT
DBSWEEP = c.DBSWEEP


def pct(sorted_xs, p):
    if not sorted_xs:
        return None
    i = min(len(sorted_xs) - 1, max(0, int(round(p / 100 * len(sorted_xs) + 0.5)) - 1))
    return sorted_xs[i]


def dbsweep_json(path):
    with open(path) as f:
        return json.load(f)["result"]


def lat_pct(lat, p):
    for e in lat.get("percentiles", []):
        if abs(e["p"] - p) < 1e-9:
            return e["us"] / 1e3
    return None


def users_part(args, workdir, url, rows):
    out = []
    targets = [("postgres", url), ("fake", "fake://")]
    for name, u in targets:
        js = os.path.join(workdir, f"users-{name}.json")
        argv = [DBSWEEP, "run", "oltp_point_select", "--db", u, f"--table-size={rows}",
                f"--users={args.users}", f"--threads={args.connections}",
                f"--think-time=exp:{args.think}", f"--warmup={args.warmup}",
                f"--time={args.time_users}", "--report-interval=0", "--json", js]
        c.settle()
        rc, text, wall, cpu, _, rss = c.measured(argv)
        if rc != 0:
            print(text[-2000:])
            raise SystemExit(f"dbsweep --users failed on {name} (exit {rc})")
        r = dbsweep_json(js)
        lag = r["pacing"]["lag"]
        think_s = parse_seconds(args.think)
        row = dict(target=name, users=args.users, connections=args.connections,
                   think=args.think, expected_tps=args.users / think_s, tps=r["tps"],
                   rss_mb=rss / 1024, cpu_s=cpu, wall_s=wall,
                   lag_p50_ms=lat_pct(lag, 50.0), lag_p99_ms=lat_pct(lag, 99.0),
                   lag_max_ms=lag["max_us"] / 1e3,
                   latency_p99_ms=lat_pct(r["latency"], 99.0))
        print(row, flush=True)
        out.append(row)
    return out


def parse_seconds(s):
    m = re.fullmatch(r"([\d.]+)(ms|s)?", s)
    v = float(m.group(1))
    return v / 1e3 if m.group(2) == "ms" else v


def pgbench_rate(url, script, rate, threads, secs, workdir):
    p = c.parts(url)
    prefix = os.path.join(workdir, "pgb")
    for f in os.listdir(workdir):
        if f.startswith("pgb"):
            os.remove(os.path.join(workdir, f))
    argv = ["pgbench", "-n", "-M", "prepared", "-h", p["host"], "-p", p["port"], "-U", p["user"],
            "-c", str(threads), "-j", str(min(threads, os.cpu_count() or 1)), "-T", str(secs),
            "-R", str(rate), "-l", "--log-prefix", prefix, "-f", script, p["db"]]
    env = dict(os.environ, PGPASSWORD=p["password"])
    rc, text, *_ = c.measured(argv, env=env, timeout=secs * 6 + 60)
    lat = []
    lag = []
    skipped = 0
    for f in os.listdir(workdir):
        if not f.startswith("pgb"):
            continue
        with open(os.path.join(workdir, f)) as fh:
            for line in fh:
                x = line.split()
                if len(x) < 6:
                    continue
                if x[2] == "skipped":
                    skipped += 1
                    continue
                lat.append(int(x[2]) / 1e3)
                if len(x) >= 7:
                    lag.append(int(x[6]) / 1e3)
    lat.sort()
    lag.sort()
    tps = re.search(r"tps = ([\d.]+) \(without initial connection time\)", text)
    return dict(rc=rc, achieved=float(tps.group(1)) if tps else None,
                p50_ms=pct(lat, 50), p99_ms=pct(lat, 99), max_ms=lat[-1] if lat else None,
                lag_p99_ms=pct(lag, 99), note=last_words(text, rc))


def last_words(text, rc):
    for pat in [r"FATAL: [^\n]*", r"rate limit schedule lag: [^\n]*", r"error[^\n]*"]:
        m = re.search(pat, text)
        if m:
            return m.group(0)[:160]
    return f"exit {rc}"


def sysbench_rate(engine, url, rate, threads, secs, rows):
    argv = c.sysbench_argv(engine, url, "oltp_point_select", threads, secs, rows)
    argv = argv[:-1] + [f"--rate={rate}", "--percentile=99", "--histogram=off", "run"]
    rc, text, *_ = c.measured(argv, timeout=secs * 6 + 60)
    t = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", text)
    p99 = re.search(r"99th percentile:\s+([\d.]+)", text)
    mx = re.search(r"max:\s+([\d.]+)", text)
    return dict(rc=rc, achieved=float(t.group(2)) if t else None, p50_ms=None,
                p99_ms=float(p99.group(1)) if p99 else None,
                max_ms=float(mx.group(1)) if mx else None, lag_p99_ms=None,
                note=last_words(text, rc))


def dbsweep_rate(url, rate, threads, secs, rows, workdir):
    js = os.path.join(workdir, "rate.json")
    if os.path.exists(js):
        os.remove(js)
    argv = [DBSWEEP, "run", "oltp_point_select", "--db", url, f"--table-size={rows}",
            f"--threads={threads}", f"--time={secs}", f"--rate={rate}", "--report-interval=0",
            "--json", js]
    rc, text, *_ = c.measured(argv, timeout=secs * 6 + 60)
    if rc != 0 or not os.path.exists(js):
        return dict(rc=rc, achieved=None, p50_ms=None, p99_ms=None, max_ms=None,
                    lag_p99_ms=None, note=last_words(text, rc))
    r = dbsweep_json(js)
    p = r["pacing"]
    note = (f"offered {p['offered']}, not started {p['unstarted']}, "
            f"lag p99 {lat_pct(p['lag'], 99.0):.1f} ms")
    return dict(rc=rc, achieved=p["achieved_per_s"], p50_ms=lat_pct(r["latency"], 50.0),
                p99_ms=lat_pct(r["latency"], 99.0), max_ms=r["latency"]["max_us"] / 1e3,
                lag_p99_ms=lat_pct(p["lag"], 99.0), note=note)


def rates_part(args, workdir, urls, rows):
    rows_out = []
    script = os.path.join(workdir, "point.sql")
    with open(script, "w") as f:
        f.write(c.PGBENCH_SCRIPTS["oltp_point_select"].format(rows=rows))
    for engine, url in urls.items():
        tools = ["dbsweep", "sysbench"] + (["pgbench"] if engine == "postgres" else [])
        for rate in args.rates:
            for pair in range(args.pairs):
                order = tools if pair % 2 == 0 else list(reversed(tools))
                for tool in order:
                    c.settle()
                    if tool == "dbsweep":
                        r = dbsweep_rate(url, rate, args.threads, args.time, rows, workdir)
                    elif tool == "sysbench":
                        r = sysbench_rate(engine, url, rate, args.threads, args.time, rows)
                    else:
                        r = pgbench_rate(url, script, rate, args.threads, args.time, workdir)
                    row = dict(engine=engine, rate=rate, pair=pair + 1, tool=tool, **r)
                    print(row, flush=True)
                    rows_out.append(row)
    return rows_out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, d=1):
    return "—" if x is None else f"{x:,.{d}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", default="users,rates")
    ap.add_argument("--users", type=int, default=100000)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--think", default="10s")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--time-users", type=int, default=30)
    ap.add_argument("--rates", default="5000,100000")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--engines", default="postgres,mariadb")
    args = ap.parse_args()
    args.rates = [int(x) for x in args.rates.split(",")]
    parts = args.part.split(",")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    base = os.path.join(ROOT, "bench", "results", f"pacing-{stamp}")
    md = []
    with tempfile.TemporaryDirectory() as workdir:
        os.chmod(workdir, 0o755)
        engines = args.engines.split(",")
        urls = {}
        pg_settings = ["max_connections=200"]
        try:
            for e in engines:
                urls[e] = c.server_start(e, workdir, pg_settings if e == "postgres" else [])
                subprocess.run([DBSWEEP, "prepare", "oltp_point_select", "--db", urls[e],
                                f"--table-size={args.rows}"], check=True, capture_output=True)
            if "users" in parts and "postgres" in urls:
                rows = users_part(args, workdir, urls["postgres"], args.rows)
                with open(base + "-users.csv", "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=list(rows[0]))
                    w.writeheader()
                    w.writerows(rows)
                md.append(f"Users: {args.users} on {args.connections} connections, think time "
                          f"exp:{args.think}, warmup {args.warmup} s, measured {args.time_users} s\n")
                md.append("| target | expected U/T per s | achieved per s | max RSS MB | client CPU s "
                          "| timer lag p50 ms | p99 ms | max ms | latency p99 ms |")
                md.append("|---|---|---|---|---|---|---|---|---|")
                for r in rows:
                    md.append(f"| {r['target']} | {fmt(r['expected_tps'])} | {fmt(r['tps'])} | "
                              f"{fmt(r['rss_mb'])} | {fmt(r['cpu_s'])} | {fmt(r['lag_p50_ms'], 3)} | "
                              f"{fmt(r['lag_p99_ms'], 3)} | {fmt(r['lag_max_ms'], 1)} | "
                              f"{fmt(r['latency_p99_ms'], 2)} |")
                md.append("")
            if "rates" in parts:
                rows = rates_part(args, workdir, urls, args.rows)
                with open(base + "-rates.csv", "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=list(rows[0]))
                    w.writeheader()
                    w.writerows(rows)
                md.append(f"Rates: oltp_point_select, {args.threads} connections, {args.time} s, "
                          f"{args.pairs} pairs interleaved (medians; notes from the last pair)\n")
                md.append("| engine | rate | tool | achieved per s | p50 ms | p99 ms | max ms "
                          "| lag p99 ms | exit | what it says |")
                md.append("|---|---|---|---|---|---|---|---|---|---|")
                keys = sorted({(r["engine"], r["rate"], r["tool"]) for r in rows},
                              key=lambda k: (k[0], k[1], k[2]))
                for k in keys:
                    rs = [r for r in rows if (r["engine"], r["rate"], r["tool"]) == k]
                    md.append(f"| {k[0]} | {k[1]:,} | {k[2]} | {fmt(med([r['achieved'] for r in rs]))} | "
                              f"{fmt(med([r['p50_ms'] for r in rs]), 3)} | "
                              f"{fmt(med([r['p99_ms'] for r in rs]), 3)} | "
                              f"{fmt(med([r['max_ms'] for r in rs]), 1)} | "
                              f"{fmt(med([r['lag_p99_ms'] for r in rs]), 3)} | "
                              f"{','.join(sorted({str(r['rc']) for r in rs}))} | {rs[-1]['note']} |")
                md.append("")
        finally:
            for e in urls:
                c.server_stop(e, workdir)
    text = "\n".join(md)
    with open(base + ".md", "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
