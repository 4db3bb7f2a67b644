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

engine  the timing figures the tests no longer hold (a test asserts what the
        engine does; how close to the clock it comes depends on how busy the
        machine is, so it is measured here): on the fake driver, each case
        run on an idle machine and beside `--hogs` busy processes, the two
        conditions interleaved per repeat so the machine's drift hits both.
        open-rate  1000 a second on 2 connections (50 µs statements):
                   achieved / offered, schedule lag p99, arrivals left at
                   the end
        users      200 users thinking 50-150 ms on 4 connections: the rate
                   against U / T (2000) and against Little's law with the
                   measured latency, the timers' lag p99
        think      2 connections thinking 20 ms: transactions a second
                   against 100, latency p99 (think time excluded)
        deadline   a server that stops answering: the process's wall time
                   past its deadline (time + grace) and the measured window
        time-limit a 2 s run: the wall time past 2 s, the window past 2 s
        No server needed.

Usage:
    bench/pacing.py [--part users,rates,engine] [--users 100000] [--connections 64]
                    [--think 10s] [--rates 5000,100000] [--pairs 3]
                    [--time 10] [--threads 8] [--rows 100000] [--hogs N]

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


ENGINE_CASES = {
    # name: (extra arguments after `run oltp_point_select --db URL`, url)
    "open-rate": (["--rate=1000", "--arrival=uniform", "--threads=2", "--time=3"],
                  "fake://?latency=50us"),
    "users": (["--users=200", "--threads=4", "--think-time=uniform:50ms:150ms",
               "--warmup=1", "--time=2"], "fake://"),
    "think": (["--threads=2", "--think-time=fixed:20ms", "--time=1"], "fake://"),
    "deadline": (["--threads=2", "--time=0.5", "--grace=0.3"],
                 "fake://?latency=1ms&hang_after=40"),
    "time-limit": (["--threads=3", "--time=2"], "fake://?latency=200us"),
}


def engine_case(name, workdir):
    extra, url = ENGINE_CASES[name]
    js = os.path.join(workdir, f"engine-{name}.json")
    if os.path.exists(js):
        os.remove(js)
    argv = [DBSWEEP, "run", "oltp_point_select", "--db", url, "--report-interval=0",
            "--json", js] + extra
    rc, text, wall, cpu, _, _ = c.measured(argv, timeout=120)
    if rc != 0 or not os.path.exists(js):
        raise SystemExit(f"dbsweep {name} failed (exit {rc}): {text[-1000:]}")
    r = dbsweep_json(js)
    row = dict(case=name, wall_s=wall, measured_s=r["measured_s"], tps=r["tps"],
               latency_p99_ms=lat_pct(r["latency"], 99.0))
    p = r.get("pacing") or {}
    if "lag" in p:
        row["lag_p99_ms"] = lat_pct(p["lag"], 99.0)
    if name == "open-rate":
        row["achieved_over_offered"] = r["transactions"] / p["offered"]
        row["unstarted"] = p["unstarted"]
    elif name == "users":
        latency_s = r["latency"]["avg_us"] / 1e6
        row["over_u_t"] = r["tps"] / 2000.0
        row["over_little"] = r["tps"] / (200.0 / (0.100 + latency_s))
    elif name == "think":
        row["over_100"] = r["tps"] / 100.0
    elif name == "deadline":
        row["past_deadline_s"] = wall - 0.8
        row["abandoned"] = r["abandoned"]
    elif name == "time-limit":
        row["past_time_s"] = wall - 2.0
    return row


class Hogs:
    """`n` busy processes at normal priority while the block runs."""

    def __init__(self, n):
        self.n, self.procs = n, []

    def __enter__(self):
        self.procs = [subprocess.Popen(["bash", "-c", "while :; do :; done"])
                      for _ in range(self.n)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def engine_part(args, workdir):
    rows = []
    for rep in range(args.pairs):
        # Idle then loaded, loaded then idle: the order alternates.
        conditions = [0, args.hogs] if rep % 2 == 0 else [args.hogs, 0]
        for hogs in conditions:
            if hogs == 0:
                c.settle()
            with Hogs(hogs):
                for name in ENGINE_CASES:
                    row = dict(hogs=hogs, repeat=rep + 1, **engine_case(name, workdir))
                    print(row, flush=True)
                    rows.append(row)
    return rows


def engine_table(rows, hogs):
    figures = [
        ("open-rate", "achieved_over_offered", "achieved / offered", 4),
        ("open-rate", "lag_p99_ms", "schedule lag p99 ms", 3),
        ("open-rate", "unstarted", "arrivals left at the end", 0),
        ("users", "over_u_t", "rate / (U / T)", 4),
        ("users", "over_little", "rate / (U / (T + R))", 4),
        ("users", "lag_p99_ms", "timers' lag p99 ms", 3),
        ("think", "over_100", "rate / 100 per s", 4),
        ("think", "latency_p99_ms", "latency p99 ms (think excluded)", 3),
        ("deadline", "past_deadline_s", "wall s past time + grace (process included)", 3),
        ("deadline", "measured_s", "measured window s (time + grace = 0.8)", 3),
        ("time-limit", "past_time_s", "wall s past 2 s (process included)", 3),
        ("time-limit", "measured_s", "measured window s", 4),
    ]
    out = [f"Engine on the fake driver, {args_pairs(rows)} repeats each, idle and beside "
           f"{hogs} busy processes, interleaved: median (min–max)\n",
           "| case | figure | idle | busy |", "|---|---|---|---|"]
    for case, key, label, d in figures:
        cells = []
        for h in (0, hogs):
            xs = [r[key] for r in rows if r["case"] == case and r["hogs"] == h and key in r]
            cells.append("—" if not xs else
                         f"{fmt(statistics.median(xs), d)} ({fmt(min(xs), d)}–{fmt(max(xs), d)})")
        out.append(f"| {case} | {label} | {cells[0]} | {cells[1]} |")
    out.append("")
    return out


def args_pairs(rows):
    return max(r["repeat"] for r in rows)


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
    ap.add_argument("--hogs", type=int, default=os.cpu_count() or 2,
                    help="busy processes beside the engine part's loaded runs")
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
        engines = args.engines.split(",") if set(parts) - {"engine"} else []
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
            if "engine" in parts:
                rows = engine_part(args, workdir)
                keys = []
                for r in rows:
                    keys += [k for k in r if k not in keys]
                with open(base + "-engine.csv", "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=keys)
                    w.writeheader()
                    w.writerows(rows)
                md += engine_table(rows, args.hogs)
        finally:
            for e in urls:
                c.server_stop(e, workdir)
    text = "\n".join(md)
    with open(base + ".md", "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
