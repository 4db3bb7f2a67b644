#!/usr/bin/env python3
"""TPC-C with waits: dbsweep's `tpcc` workload as the specification runs
it — every terminal keying and thinking (docs/tpcc.md) — at 100
warehouses, 1,000 terminals sharing 32 connections, with the client's
memory and CPU read from /proc beside the run.

What it does, in order:

server   A scratch server (`--engine postgres`, the default, or `mariadb`)
         started by `dbsweep server start KIND` on a port the kernel
         chooses, with its cache sized for the data (--cache; see CACHE
         below for the defaults and why).

prepare  `dbsweep prepare tpcc --warehouses W --threads L`, timed (L =
         --load-threads, default the machine's CPUs), and the database's
         size after it (PostgreSQL: pg_database_size; MariaDB: the
         tables' data and index lengths after ANALYZE). Then what the load
         left dirty is written out before the run, so that the run does
         not start with the load's checkpoint: PostgreSQL `CHECKPOINT`;
         MariaDB `innodb_max_dirty_pages_pct = 0` until the dirty pages
         are below 1 % of the pool (at most --flush-limit s), then its old
         value back. Both timed.

run      `dbsweep run tpcc --warehouses W --threads C --time T --warmup U
         --ramp-up R --report-interval 10 --json FILE` with the default
         keying and think times and the metrics sampler on. The 10 × W
         terminals start R per second (--ramp-up: each terminal's first
         transaction at its turn, so that the first transactions — which
         have no keying time — do not all arrive at once); the window opens
         --settle s after the last one started (U = ramp + settle), once
         their cycles have drifted apart. T = 600 s by default: a
         terminal's cycle is 21 s on average (a New-Order's 18 s keying and
         12 s mean think time; Payment 3 + 12 s; the others 7–12 s), so
         in 10 minutes each terminal completes about 28 transactions and
         the 1,000 about 28,000: some 12,800 New-Orders (tpmC within about
         1 % of its rate) and about 1,100 of each 4 % type, enough for a
         90th percentile each. An audited TPC-C result measures at least
         2 hours of steady state (revision 5.0 on); 10 minutes is the
         shortest window whose figures hold still, not an audit.

samples  While the run lasts, every --sample s (default 5): the client's
         VmRSS and VmHWM from /proc/PID/status and its utime + stime from
         /proc/PID/stat, each sample placed on the run's timeline (the
         record's `released_unix_us`: ramp-up, warmup, window).

Reported (the run record's `result.tpcc`, `result.errors`,
`result.client_cpu` and `result.metrics`, docs/json.md): tpmC and the
efficiency against the specification's maximum 12.86 × W; NOPM by the
client and by the database (`server_nopm`, the change of
sum(D_NEXT_O_ID)); each type's p90 against its limit; the mix against its
minimums; errors by kind, retries and failed transactions; the client's
CPU over the window from the /proc samples (share of one core, µs per
transaction; the record's own figure beside it); the server's CPU per
transaction (the record's figure) and per New-Order (its window CPU over
the window's New-Orders); the client's RSS at 1 minute, at the end of the
warmup, at the end, its peak (VmHWM), and the growth from the warmup's
end to the run's end.

Usage:
    bench/tpcc_waits.py [--engine postgres|mariadb] [--warehouses 100]
                        [--connections 32] [--time 600] [--ramp-up R]
                        [--settle 60] [--sample 5] [--cache SIZE]
                        [--load-threads N] [--workdir DIR] [--dbsweep BINARY]
                        [--no-build] [--quick]

The measurement (a quiet machine; about 15 minutes of load on PostgreSQL
plus about 30 minutes of run):
    bench/tpcc_waits.py
    bench/tpcc_waits.py --engine mariadb
A smoke run (2 warehouses, 20 terminals on 2 connections, 10 s ramp-up,
10 s settle, 60 s measured; its figures mean nothing):
    bench/tpcc_waits.py --quick

Needs the README's set-up (and the psql or mysql client for the sizes).
Builds the release binary first unless --dbsweep names one (or
--no-build). Writes bench/results/tpcc-waits-<date>.csv (the RSS and CPU
series) and .md (the summary), and prints the summary.
"""

import argparse
import csv
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402
import tpcc  # noqa: E402

ROOT = c.ROOT

# The server's cache. PostgreSQL reads through the OS page cache, so its
# shared_buffers need not hold everything: 8 GB (a third of the 24 GiB
# machine, the usual advice) keeps the hot part of the ~11 GB of 100
# warehouses (stock and customers under NURand, the newest orders) and
# the page cache the rest. InnoDB reads with O_DIRECT (MariaDB's default
# since 10.6), so its buffer pool is its only cache: 12 GB holds all of
# the ~9 GB of 100 warehouses and what a run adds.
CACHE = {"postgres": "8GB", "mariadb": "12G"}
# Bytes on disk per warehouse after the load, roughly (the smoke runs of
# bench/tpcc.py: 223 MB at 2 warehouses on PostgreSQL, 186 MB on MariaDB),
# and what the server needs besides (PostgreSQL's max_wal_size 4 GB,
# InnoDB's redo log) — for the check that the disk has room.
MB_PER_WAREHOUSE = {"postgres": 110, "mariadb": 95}
EXTRA_MB = {"postgres": 5000, "mariadb": 1500}
# The specification's maximum tpmC per warehouse with its waits.
TPMC_PER_WAREHOUSE = 12.86


# ---------------------------------------------------------------- /proc


def proc_sample(pid):
    """(VmRSS kB, VmHWM kB, utime + stime s) of pid; None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            status = f.read()
    except OSError:
        return None
    mem = {}
    for line in status.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            mem[key] = int(rest.split()[0])
    cpu = tpcc.proc_cpu(pid)
    if cpu is None or len(mem) < 2:
        return None
    return mem["VmRSS"], mem["VmHWM"], cpu


def run_sampled(argv, every, log_path):
    """Runs argv (its output to log_path), sampling it every `every` s.
    Returns (exit status, wall s, rusage CPU s, rusage peak RSS kB,
    [samples]), a sample being {unix_s, rss_kb, hwm_kb, cpu_s}."""
    samples = []
    with open(log_path, "wb") as log:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        nxt = t0
        while True:
            # Not reaped (WNOWAIT): /proc/PID stays readable until wait4.
            if os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                break
            now = time.monotonic()
            if now >= nxt:
                s = proc_sample(p.pid)
                if s is not None:
                    samples.append(dict(unix_s=time.time(), rss_kb=s[0], hwm_kb=s[1],
                                        cpu_s=s[2]))
                nxt += every
            time.sleep(min(0.2, max(0.0, nxt - time.monotonic())))
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
    return (os.waitstatus_to_exitcode(status), wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss,
            samples)


# ---------------------------------------------------------------- the server


def database_bytes(engine, url):
    """The database's size on disk: PostgreSQL's pg_database_size, MariaDB's
    tables' data and index lengths (InnoDB's estimates, after ANALYZE)."""
    if engine == "postgres":
        return int(tpcc.query(engine, url, "SELECT pg_database_size(current_database())"))
    return sum(tpcc.table_sizes(engine, url, tpcc.TABLES).values())


def flush_after_load(engine, url, limit):
    """Writes out what the load left dirty, so that the run does not start
    with the load's checkpoint. Seconds taken, and a note when the limit
    cut it short or the server refused."""
    t0 = time.monotonic()
    try:
        return flush(engine, url, limit, t0)
    except SystemExit as e:
        return time.monotonic() - t0, f"not done: {e}"


def flush(engine, url, limit, t0):
    if engine == "postgres":
        tpcc.query(engine, url, "CHECKPOINT")
        return time.monotonic() - t0, ""

    def status(name):
        out = tpcc.query(engine, url, f"SHOW GLOBAL STATUS LIKE '{name}'")
        return int(out.split()[-1])
    old = tpcc.query(engine, url, "SELECT @@innodb_max_dirty_pages_pct")
    tpcc.query(engine, url, "SET GLOBAL innodb_max_dirty_pages_pct = 0")
    try:
        while True:
            dirty = status("Innodb_buffer_pool_pages_dirty")
            if dirty <= status("Innodb_buffer_pool_pages_total") // 100:
                return time.monotonic() - t0, ""
            if time.monotonic() - t0 > limit:
                return time.monotonic() - t0, f"{dirty} pages still dirty after {limit} s"
            time.sleep(2)
    finally:
        tpcc.query(engine, url, f"SET GLOBAL innodb_max_dirty_pages_pct = {old}")


def check_disk(engine, workdir, warehouses):
    need = warehouses * MB_PER_WAREHOUSE[engine] + EXTRA_MB[engine]
    free = shutil.disk_usage(workdir).free // 10**6
    if free < need:
        print(f"{workdir} has {free:,} MB free and {warehouses} warehouses on {engine} need "
              f"about {need:,} MB: give --workdir on a larger disk, or fewer --warehouses",
              file=sys.stderr)
        sys.exit(2)


# ---------------------------------------------------------------- figures


def at(samples, t):
    """The first sample at or after t s on the run's timeline."""
    return next((s for s in samples if s["t_s"] >= t), None)


def summarise(rec, samples, a):
    """The table's figures from the record and the /proc samples."""
    r = rec["result"]
    t = r.get("tpcc") or {}
    m = r.get("metrics") or {}
    warmup = rec["run"]["warmup_s"] or 0.0
    window = r["measured_s"]
    released = rec["released_unix_us"] / 1e6
    for s in samples:
        s["t_s"] = round(s["unix_s"] - released, 1)
        s["phase"] = ("start" if s["t_s"] < 0 else "ramp-up" if s["t_s"] < a.ramp_s
                      else "warmup" if s["t_s"] < warmup else "window")
    f = dict(tpmc=t.get("tpmc"), max_tpmc=TPMC_PER_WAREHOUSE * a.warehouses,
             efficiency_pct=t.get("efficiency_pct"),
             efficiency_absent=t.get("efficiency_absent"),
             nopm=t.get("nopm"), server_nopm=t.get("server_nopm"),
             server_nopm_absent=t.get("server_nopm_absent"),
             tpm=t.get("tpm"), server_tpm=t.get("server_tpm"),
             terminals=t.get("terminals"), types=t.get("types") or [], mix=t.get("mix") or [],
             errors=r.get("errors") or {}, retries=r.get("retries"),
             failed=r.get("failed_transactions"), transactions=r["transactions"],
             tps=r["tps"], window_s=window, warmup_s=warmup)
    # The client's CPU over the window, from the samples inside it.
    win = [s for s in samples if warmup <= s["t_s"] <= warmup + window]
    if len(win) >= 2 and win[-1]["t_s"] > win[0]["t_s"]:
        rate = (win[-1]["cpu_s"] - win[0]["cpu_s"]) / (win[-1]["t_s"] - win[0]["t_s"])
        f["client_cpu_core_pct"] = 100 * rate
        f["client_cpu_us_per_txn"] = rate * 1e6 / r["tps"] if r["tps"] else None
    own = r.get("client_cpu") or {}
    f["own_cpu_us_per_txn"] = own.get("us_per_transaction")
    # The server's CPU: the record's figure per transaction, and per New-Order.
    fig = m.get("figures") or {}
    per_txn = fig.get("server_cpu_us_per_transaction")
    f["server_cpu_us_per_txn"] = per_txn.get("value") if per_txn else None
    srv = ((m.get("window") or {}).get("server")) or {}
    new_orders = (t.get("tpmc") or 0) * window / 60
    if srv.get("cpu_user_s") is not None and new_orders:
        f["server_cpu_us_per_new_order"] = (
            (srv["cpu_user_s"] + srv["cpu_system_s"]) * 1e6 / new_orders)
    f["server_cpu_absent"] = "; ".join(
        f"{g.get('what')}: {g.get('why')}" for g in m.get("gaps") or []
        if g.get("what") in ("server process", "server CPU")) or None
    # Memory.
    minute = at(samples, 60)
    settled = at(samples, warmup)
    end = samples[-1] if samples else None
    f["rss_1min_mb"] = minute["rss_kb"] / 1024 if minute else None
    f["rss_warmup_end_mb"] = settled["rss_kb"] / 1024 if settled else None
    f["rss_end_mb"] = end["rss_kb"] / 1024 if end else None
    f["rss_peak_mb"] = max((s["hwm_kb"] for s in samples), default=0) / 1024 or None
    if settled and end and end is not settled:
        f["rss_growth_mb"] = (end["rss_kb"] - settled["rss_kb"]) / 1024
        f["rss_growth_from_s"] = settled["t_s"]
        f["rss_growth_to_s"] = end["t_s"]
    return f


def fmt(x, spec=".1f"):
    return "—" if x is None else format(x, spec)


def table(f, a, info):
    out = [f"# bench/tpcc_waits.py {' '.join(sys.argv[1:])}", "",
           f"{info['when']} UTC; {os.cpu_count()} CPUs, load average {info['load']}; "
           f"{info['version']}; {info['settings']}"
           + ("; **smoke run (--quick): its figures mean nothing**" if a.quick else ""), "",
           f"`{info['command']}`", "",
           "| figure | value |", "|---|---|"]

    def row(k, v):
        out.append(f"| {k} | {v} |")
    row("warehouses, terminals, connections",
        f"{a.warehouses}, {fmt(f['terminals'], 'd') if f['terminals'] else '—'}, "
        f"{a.connections}")
    row("prepare (s), loaders", f"{info['prepare_s']:.1f}, {a.load_threads}")
    row("database after prepare (MB)", fmt(info["size_mb"], ",.0f"))
    row("database after the run (MB)", fmt(info.get("size_after_mb"), ",.0f"))
    row("writing out the load's dirty pages (s)",
        f"{info['flush_s']:.1f}" + (f" ({info['flush_note']})" if info["flush_note"] else ""))
    row("ramp-up, warmup, window (s)",
        f"{a.ramp_s:.1f} ({a.ramp_up:.4g} terminals/s), {f['warmup_s']:.0f}, {f['window_s']:.1f}")
    row("tpmC", fmt(f["tpmc"], ",.1f"))
    row("maximum tpmC, 12.86 × W", fmt(f["max_tpmc"], ",.1f"))
    row("efficiency (%)", fmt(f["efficiency_pct"], ".1f") if f["efficiency_pct"] is not None
        else f"— ({f['efficiency_absent']})")
    row("NOPM: client, database",
        f"{fmt(f['nopm'], ',.1f')}, "
        + (fmt(f["server_nopm"], ",.1f") if f["server_nopm"] is not None
           else f"— ({f['server_nopm_absent']})"))
    row("transactions, per second", f"{f['transactions']:,}, {f['tps']:.2f}")
    for ty in f["types"]:
        lim = ty.get("limit_s")
        verdict = {True: "within", False: "**above**", None: "—"}[ty.get("within")]
        row(f"{ty['name']}: count, p90 (ms) against its limit",
            f"{ty.get('count', 0):,}, {fmt(ty.get('p90_ms'), ',.1f')} "
            f"/ {fmt(lim, 'g')} s: {verdict}")
    mix = ", ".join(f"{x['name']} {fmt(x.get('share_pct'), '.2f')} % "
                    f"(≥ {fmt(x.get('min_pct'), 'g')}: {'meets' if x.get('meets') else 'below'})"
                    for x in f["mix"])
    row("mix", mix or "—")
    errs = ", ".join(f"{k} {v:,}" for k, v in sorted(f["errors"].items()) if v) or "none"
    row("errors by kind; retries; failed", f"{errs}; {fmt(f['retries'], ',')}; "
        f"{fmt(f['failed'], ',')}")
    row("client CPU over the window (% of one core)", fmt(f.get("client_cpu_core_pct"), ".2f"))
    row("client CPU per transaction (µs): /proc; the record's",
        f"{fmt(f.get('client_cpu_us_per_txn'), ',.0f')}; {fmt(f['own_cpu_us_per_txn'], ',.0f')}")
    row("client CPU, whole process (s, rusage)", f"{info['client_cpu_s']:.1f}")
    srv = (f"{fmt(f['server_cpu_us_per_txn'], ',.0f')}; "
           f"{fmt(f.get('server_cpu_us_per_new_order'), ',.0f')}")
    if f["server_cpu_us_per_txn"] is None and f["server_cpu_absent"]:
        srv += f" ({f['server_cpu_absent']})"
    row("server CPU (µs): per transaction; per New-Order", srv)
    row("client RSS (MB): at 1 min; at the warmup's end; at the end; peak (VmHWM, rusage)",
        f"{fmt(f['rss_1min_mb'])}; {fmt(f['rss_warmup_end_mb'])}; {fmt(f['rss_end_mb'])}; "
        f"{fmt(f['rss_peak_mb'])}")
    growth = fmt(f.get("rss_growth_mb"), "+.1f")
    if f.get("rss_growth_mb") is not None:
        growth += f" (from {f['rss_growth_from_s']:.0f} s to {f['rss_growth_to_s']:.0f} s)"
    row("client RSS growth after the warmup (MB)", growth)
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=["postgres", "mariadb"], default="postgres")
    ap.add_argument("--warehouses", type=int, default=100)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--time", type=int, default=600, help="measured seconds (default 600)")
    ap.add_argument("--ramp-up", type=float, metavar="R",
                    help="terminals started per second (default: all within 60 s)")
    ap.add_argument("--settle", type=float, default=60.0, metavar="S",
                    help="seconds of warmup after the last terminal has started")
    ap.add_argument("--sample", type=float, default=5.0, metavar="S",
                    help="seconds between the client's /proc samples")
    ap.add_argument("--cache", metavar="SIZE",
                    help="shared_buffers / innodb_buffer_pool_size (default: 8GB / 12G)")
    ap.add_argument("--load-threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--flush-limit", type=float, default=900.0, metavar="S",
                    help="MariaDB: seconds to wait at most for the load's dirty pages")
    ap.add_argument("--workdir", help="where the server's data goes (default: a temporary "
                    "directory)")
    ap.add_argument("--dbsweep", metavar="BINARY",
                    help="the dbsweep to measure (default: this checkout's release build)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 2 warehouses, 2 connections, 10 s ramp-up, 10 s settle, "
                    "60 s measured")
    a = ap.parse_args()
    if a.quick:
        a.warehouses, a.connections, a.time, a.settle = 2, 2, 60, 10.0
        a.ramp_up = a.ramp_up or 2.0
    terminals = 10 * a.warehouses
    if a.warehouses < 1 or not 1 <= a.connections <= terminals:
        print(f"--connections {a.connections} with --warehouses {a.warehouses}: give 1 to "
              f"{terminals} connections (10 terminals per warehouse share them)", file=sys.stderr)
        sys.exit(2)
    if a.ramp_up is None:
        a.ramp_up = terminals / 60.0
    if not a.ramp_up > 0:
        print(f"--ramp-up {a.ramp_up}: give a positive number of terminals per second",
              file=sys.stderr)
        sys.exit(2)
    a.ramp_s = (terminals - 1) / a.ramp_up
    warmup = math.ceil(a.ramp_s + a.settle)
    client = "psql" if a.engine == "postgres" else "mysql"
    if not shutil.which(client):
        sys.exit(f"{client} not found (apt-get install postgresql-client mariadb-client)")
    if a.dbsweep:
        a.dbsweep = os.path.abspath(a.dbsweep)
    else:
        a.dbsweep = c.DBSWEEP
        if not a.no_build:
            subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    c.DBSWEEP = a.dbsweep

    work = a.workdir or tempfile.mkdtemp(prefix="dbsweep-tpcc-waits-")
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o755)
    check_disk(a.engine, work, a.warehouses)
    cache = a.cache or CACHE[a.engine]
    setting = ("shared_buffers" if a.engine == "postgres" else "innodb_buffer_pool_size")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    base = os.path.join(ROOT, "bench", "results", f"tpcc-waits-{stamp}")
    info = dict(settings=f"{setting} = {cache}")
    try:
        url = c.server_start(a.engine, work, [f"{setting}={cache}"])
        print(f"{a.engine}: {url}", flush=True)
        info["version"] = tpcc.query(a.engine, url, "SELECT version()").splitlines()[0]
        info["version"] = info["version"].split(" on ")[0]

        t0 = time.monotonic()
        subprocess.run([a.dbsweep, "prepare", "tpcc", "--db", url,
                        f"--warehouses={a.warehouses}", f"--threads={a.load_threads}"],
                       check=True, stdout=subprocess.DEVNULL)
        info["prepare_s"] = time.monotonic() - t0
        info["size_mb"] = database_bytes(a.engine, url) / 1e6
        print(f"prepare: {info['prepare_s']:.1f} s, {info['size_mb']:,.0f} MB", flush=True)
        info["flush_s"], info["flush_note"] = flush_after_load(a.engine, url, a.flush_limit)
        print(f"load's dirty pages written out: {info['flush_s']:.1f} s {info['flush_note']}",
              flush=True)

        js = os.path.join(work, "run.json")
        argv = [a.dbsweep, "run", "tpcc", "--db", url, f"--warehouses={a.warehouses}",
                f"--threads={a.connections}",
                f"--ramp-up={a.ramp_up:g}", f"--warmup={warmup:g}", f"--time={a.time}",
                "--report-interval=10", "--json", js]
        info["command"] = " ".join(argv[:3] + ["--db", "URL"] + argv[5:-1] + ["run.json"])
        print(info["command"], flush=True)
        c.settle(30)
        log = base + ".log"
        rc, wall, cpu, maxrss, samples = run_sampled(argv, a.sample, log)
        info["client_cpu_s"] = cpu
        info["maxrss_kb"] = maxrss
        if rc != 0:
            with open(log) as f:
                sys.exit(f"dbsweep run failed (exit {rc}):\n" + f.read()[-3000:])
        os.remove(log)
        with open(js) as f:
            rec = json.load(f)
        info["size_after_mb"] = database_bytes(a.engine, url) / 1e6
    finally:
        c.server_stop(a.engine, work)
        if not a.workdir:
            shutil.rmtree(work, ignore_errors=True)

    f = summarise(rec, samples, a)
    # The process's own peak, to its exit (the record written included).
    f["rss_peak_mb"] = max(f["rss_peak_mb"] or 0, info["maxrss_kb"] / 1024)
    info["when"] = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}"
    info["load"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    with open(base + ".csv", "w", newline="") as out:
        w = csv.DictWriter(out, fieldnames=["t_s", "phase", "rss_kb", "hwm_kb", "cpu_s",
                                            "cpu_core_pct"])
        w.writeheader()
        prev = None
        for s in samples:
            pct = (100 * (s["cpu_s"] - prev["cpu_s"]) / (s["t_s"] - prev["t_s"])
                   if prev and s["t_s"] > prev["t_s"] else None)
            w.writerow(dict(t_s=s["t_s"], phase=s["phase"], rss_kb=s["rss_kb"],
                            hwm_kb=s["hwm_kb"], cpu_s=round(s["cpu_s"], 2),
                            cpu_core_pct=None if pct is None else round(pct, 2)))
            prev = s
    text = table(f, a, info)
    with open(base + ".md", "w") as out:
        out.write(text)
    print()
    print(f"Series: {os.path.relpath(base, ROOT)}.csv")
    print()
    print(text)


if __name__ == "__main__":
    main()
