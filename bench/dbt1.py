#!/usr/bin/env python3
"""DBT-1 benchmarks: loading the store against the server's own floor, and
many emulated users on one machine.

Two parts, against dbsweep's own scratch servers:

load    `dbsweep prepare dbt1 --items I --ebs E` on MariaDB and PostgreSQL,
        each followed on the same server by its floor: the same tables
        copied by the server itself — an empty copy of each loaded table
        with its primary key, `INSERT INTO copy SELECT * FROM table`, then
        the secondary indexes on the copies — on two connections (the
        tables split in two groups of about equal size, as dbsweep's two
        loaders), no client, no network, no parsing of row values. The
        ratio dbsweep / floor per pair, and its median and range.

eus     `dbsweep run dbt1 --eus U --threads C` with DBT-1's think time
        (exp:7.2s:cap=72s) and a ramp-up: the interactions per second it
        sustained (BT/s) against U / 7.13 s (the capped mean), the client's
        peak RSS (GNU time), its CPU as a share of the machine, and how late
        the users' timers fired (the schedule lag: the end of a user's think
        time to the start of its interaction, queueing for a connection
        included). `--client-threads 0,2` runs it with a thread per
        connection and on 2 event loops, --pairs pairs interleaved.
        `--transport tcp,unix` runs each over loopback TCP and over the
        server's unix socket (pgbench's and psql's default on one host),
        interleaved in the pairs, and prints the per-pair ratios unix / tcp.
        `--baseline OLD_DBSWEEP` runs each --client-threads value with
        this build and the old one, --pairs pairs interleaved (who goes
        first alternating), and prints the per-pair ratios of the client's
        CPU per interaction. `--perf-stat` counts the client's system calls
        and context switches (perf stat, the syscall tracepoints) per round
        trip (per sendto). `--floor` follows each run, in its pair, with
        pgbench (`-j` the run's event loops, `-c` its connections) offering
        the run's own statements a second (`-R`) as one-row primary-key
        selects on `item`: a lower bound on what any client pays for that
        many round trips on this machine (one small row an answer, where
        DBT-1's searches return up to 50), and the per-pair ratios of the
        client's CPU per round trip, dbsweep / pgbench (over TCP only).

Usage:
    bench/dbt1.py [--part load,eus] [--items 10000] [--ebs 100] [--pairs 3]
                  [--eus 20000] [--threads 64] [--ramp 2000] [--time 60]
                  [--engines mariadb,postgres] [--client-threads 0,2]
                  [--baseline OLD_DBSWEEP] [--perf-stat] [--transport tcp,unix]
                  [--floor]

Writes bench/results/dbt1-<date>.csv and .md and prints the tables.
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
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402

DBSWEEP = c.DBSWEEP

# The loaded tables, their primary keys, and the secondary indexes dbsweep
# builds after the load (src/workload/dbt1/schema.rs).
TABLES = {
    "country": ("co_id", []),
    "author": ("a_id", []),
    "item": ("i_id", ["CREATE INDEX {t}_subject ON {t} (i_subject, i_pub_date)",
                      "CREATE INDEX {t}_author ON {t} (i_a_id)"]),
    "customer": ("c_id", ["CREATE UNIQUE INDEX {t}_uname ON {t} (c_uname)"]),
    "address": ("addr_id", []),
    "orders": ("o_id", ["CREATE INDEX {t}_customer ON {t} (o_c_id, o_date)"]),
    "order_line": ("ol_o_id, ol_id", []),
    "cc_xacts": ("cx_o_id", []),
}
SECONDARY = {"item": ["item_subject", "item_author"], "customer": ["customer_uname"],
             "orders": ["orders_customer"]}


def sql_runner(engine, url):
    """A function running one SQL script on the server with its own client."""
    p = c.parts(url)
    if engine == "mariadb":
        argv = ["mysql", "-h", p["host"], "-P", p["port"], "-u", p["user"], p["db"]]
        env = dict(os.environ, MYSQL_PWD=p["password"])
    else:
        argv = ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", p["host"], "-p", p["port"],
                "-U", p["user"], p["db"]]
        env = dict(os.environ, PGPASSWORD=p["password"])

    def start(script):
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=env, text=True)

    def run(script):
        pr = start(script)
        _, err = pr.communicate(script)
        if pr.returncode != 0:
            raise SystemExit(f"{engine}: {err[-500:]}")
    return start, run


def copy_ddl(engine, t):
    pk, _ = TABLES[t]
    if engine == "mariadb":
        drops = "".join(f"ALTER TABLE {t}_f DROP INDEX {ix};\n" for ix in SECONDARY.get(t, []))
        return f"DROP TABLE IF EXISTS {t}_f;\nCREATE TABLE {t}_f LIKE {t};\n{drops}"
    return (f"DROP TABLE IF EXISTS {t}_f;\nCREATE TABLE {t}_f (LIKE {t});\n"
            f"ALTER TABLE {t}_f ADD PRIMARY KEY ({pk});\n")


def floor(engine, url):
    """The server's own time for the load's work, in seconds."""
    start, run = sql_runner(engine, url)
    run("".join(copy_ddl(engine, t) for t in TABLES))
    # Two groups of about equal size (order_line, customer and address are
    # most of the bytes), as dbsweep's two loaders share the tables.
    groups = [["customer", "item", "author", "country"],
              ["order_line", "address", "orders", "cc_xacts"]]
    t0 = time.monotonic()
    procs = []
    for g in groups:
        script = ""
        for t in g:
            script += f"INSERT INTO {t}_f SELECT * FROM {t};\n"
            script += "".join(ix.format(t=f"{t}_f") + ";\n" for ix in TABLES[t][1])
        p = start(script)
        p.stdin.write(script)
        p.stdin.close()
        procs.append(p)
    for p in procs:
        p.wait()
        if p.returncode != 0:
            raise SystemExit(f"{engine} floor: {p.stderr.read()[-500:]}")
    took = time.monotonic() - t0
    run("".join(f"DROP TABLE {t}_f;\n" for t in TABLES))
    return took


def load_part(args, workdir, urls):
    rows = []
    for engine, url in urls:
        for pair in range(args.pairs):
            subprocess.run([DBSWEEP, "cleanup", "dbt1", "--db", url], capture_output=True)
            c.settle()
            argv = [DBSWEEP, "prepare", "dbt1", "--db", url, f"--items={args.items}",
                    f"--ebs={args.ebs}"]
            t0 = time.monotonic()
            r = subprocess.run(argv, capture_output=True, text=True)
            took = time.monotonic() - t0
            if r.returncode != 0:
                raise SystemExit(f"prepare failed on {engine}: {r.stderr[-1000:]}")
            c.settle()
            f = floor(engine, url)
            row = dict(part="load", engine=engine, pair=pair + 1, dbsweep_s=took, floor_s=f,
                       ratio=took / f)
            print(row, flush=True)
            rows.append(row)
    return rows


def lat_pct(lat, p):
    for e in (lat or {}).get("percentiles", []):
        if abs(e["p"] - p) < 1e-9:
            return e["us"] / 1e3
    return None


def eus_part(args, workdir, urls):
    rows = []
    loops = [int(x) for x in args.client_threads.split(",")]
    for engine, url in urls:
        subprocess.run([DBSWEEP, "cleanup", "dbt1", "--db", url], capture_output=True)
        subprocess.run([DBSWEEP, "prepare", "dbt1", "--db", url, f"--items={args.items}",
                        "--ebs=10"], check=True, capture_output=True)
        # Pairs of runs, one per --client-threads value (0: a thread per
        # connection), build and transport, who goes first alternating.
        builds = ["new", "baseline"] if args.baseline else ["new"]
        arms = [(j, b, t) for j in loops for b in builds for t in args.transport.split(",")]
        for pair in range(args.pairs if len(arms) > 1 else 1):
            for j, build, transport in (arms[::-1] if pair % 2 else arms):
                at = url if transport == "tcp" else socket_url(engine, url, workdir)
                row = eus_run(args, workdir, engine, at, j, pair, build)
                row["transport"] = transport
                rows.append(row)
                # The floor runs over TCP (pgbench_argv's host and port).
                if args.floor and engine == "postgres" and build == "new" and transport == "tcp":
                    rows.append(floor_run(args, workdir, at, j, pair, row))
    return rows


# The floor's statement: one row by primary key from the store's items.
FLOOR_SQL = "\\set i random(1, {items})\nSELECT i_title, i_cost FROM item WHERE i_id = :i;\n"


def floor_run(args, workdir, url, loops, pair, run):
    """pgbench offering `run`'s statements a second as one-row selects, on
    as many connections and threads: its CPU per round trip."""
    c.settle()
    script = os.path.join(workdir, "floor.sql")
    with open(script, "w") as fh:
        fh.write(FLOOR_SQL.format(items=args.items))
    argv = c.pgbench_argv(url, script, args.threads, args.time, jobs=max(loops, 1))
    argv[1:1] = ["-R", f"{run['qps']:.0f}"]
    env = dict(os.environ, PGPASSWORD=c.parts(url)["password"] or "")
    rc, text, wall, cpu, _, rss = c.measured(argv, env=env, timeout=args.time * 4 + 60)
    n = re.search(r"number of transactions actually processed:\s+(\d+)", text)
    if rc != 0 or not n:
        print(text[-2000:])
        raise SystemExit(f"pgbench floor failed (exit {rc})")
    qps = int(n.group(1)) / args.time
    share = 100 * cpu / (args.time * os.cpu_count())
    row = dict(part="eus", engine="postgres", eus=args.eus, threads=args.threads,
               client_threads=loops, pair=pair, build="pgbench-floor",
               transport=run.get("transport"), qps=qps, rss_mb=rss / 1024,
               client_cpu_own_pct=share, client_us_per_rt=cpu / (qps * args.time) * 1e6,
               wall_s=wall, cpu_s=cpu)
    print(row, flush=True)
    return row


def socket_url(engine, url, workdir):
    """The scratch server's URL through its unix socket (the servers'
    layout: src/server/{postgres,mariadb}.rs)."""
    run = os.path.join(workdir, engine, "run")
    path = run if engine == "postgres" else os.path.join(run, "mysqld.sock")
    return f"{url}{'&' if '?' in url else '?'}socket={path}"


# The syscalls counted by --perf-stat (each a tracepoint), besides all of
# them and the context switches.
SYSCALLS = ["sendto", "write", "recvfrom", "epoll_wait", "epoll_pwait2", "timerfd_settime",
            "read", "futex"]


def perf_stat_argv(out):
    events = ["raw_syscalls:sys_enter", "context-switches"]
    events += [f"syscalls:sys_enter_{s}" for s in SYSCALLS]
    return ["perf", "stat", "-x,", "-o", out, "-e", ",".join(events), "--"]


def perf_counts(out):
    counts = {}
    with open(out) as fh:
        for line in fh:
            f = line.strip().split(",")
            if len(f) > 2 and f[0].isdigit():
                counts[f[2].split(":")[-1].removeprefix("sys_enter_")] = int(f[0])
    # A round trip is one send: sendto on TCP, write on a unix socket (the
    # standard library's UnixStream writes with write(2)); the client
    # writes nothing else of note.
    sends = (counts.get("sendto") or 0) + (counts.get("write") or 0)
    if not sends:
        return {}
    per = {f"{k}_per_send": v / sends for k, v in counts.items()}
    per["syscalls_per_send"] = per.pop("sys_enter_per_send", None)
    return per


def eus_run(args, workdir, engine, url, loops, pair, build="new"):
    c.settle()
    js = os.path.join(workdir, f"eus-{engine}.json")
    binary = args.baseline if build == "baseline" else DBSWEEP
    argv = [binary, "run", "dbt1", "--db", url, f"--items={args.items}", "--ebs=10",
            f"--eus={args.eus}", f"--threads={args.threads}", f"--ramp-up={args.ramp}",
            f"--warmup={args.warmup}", f"--time={args.time}", "--report-interval=0",
            "--json", js] + ([f"--client-threads={loops}"] if loops else [])
    stat = os.path.join(workdir, "perf-stat.txt")
    if args.perf_stat:
        argv = perf_stat_argv(stat) + argv
    rc, text, wall, cpu, _, rss = c.measured(argv, timeout=args.time * 4 + 600)
    if rc != 0:
        print(text[-2000:])
        raise SystemExit(f"dbsweep dbt1 failed on {engine} (exit {rc})")
    with open(js) as fh:
        r = json.load(fh)["result"]
    m = (r.get("metrics") or {}).get("figures") or {}
    share = lambda k: (m.get(k) or {}).get("value")  # noqa: E731
    lag = r["pacing"].get("lag")
    row = dict(part="eus", engine=engine, eus=args.eus, threads=args.threads,
               client_threads=loops, pair=pair, build=build,
               offered_bts=args.eus / 7.1967, bts=r["tps"],
               rss_mb=rss / 1024, client_cpu_pct=share("client_cpu_pct"),
               client_cpu_own_pct=100 * r["client_cpu"]["share_of_machine"],
               server_cpu_pct=share("server_cpu_pct"), machine_busy_pct=share("cpu_busy_pct"),
               lag_p50_ms=lat_pct(lag, 50.0), lag_p99_ms=lat_pct(lag, 99.0),
               lag_max_ms=(lag or {}).get("max_us", 0) / 1e3,
               latency_p99_ms=lat_pct(r["latency"], 99.0), wall_s=wall, cpu_s=cpu,
               qps=r["qps"])
    # The client's CPU per interaction: its share of the machine's CPUs
    # over the measured window, per interaction served.
    if row["bts"]:
        row["client_us_per_bt"] = (row["client_cpu_own_pct"] / 100 * os.cpu_count()
                                   / row["bts"] * 1e6)
    # And per round trip: per statement sent (one at a time, no pipeline).
    if row["qps"]:
        row["client_us_per_rt"] = (row["client_cpu_own_pct"] / 100 * os.cpu_count()
                                   / row["qps"] * 1e6)
    if args.perf_stat:
        row.update(perf_counts(stat))
    print(row, flush=True)
    return row


def table(rows):
    out = []
    loads = [r for r in rows if r["part"] == "load"]
    for engine in sorted({r["engine"] for r in loads}):
        mine = [r for r in loads if r["engine"] == engine]
        d = statistics.median(r["dbsweep_s"] for r in mine)
        f = statistics.median(r["floor_s"] for r in mine)
        ratios = [r["ratio"] for r in mine]
        out.append(f"| load | {engine} | dbsweep {d:.2f} s | floor {f:.2f} s | "
                   f"ratio of medians {d / f:.2f}× | per pair {statistics.median(ratios):.2f}× "
                   f"({min(ratios):.2f}–{max(ratios):.2f}) |")
    fmt = lambda v, f="{:.1f}": "-" if v is None else f.format(v)  # noqa: E731
    for r in rows:
        if r.get("build") == "pgbench-floor":
            out.append(f"| floor | pgbench -R {r['qps']:.0f} one-row selects on {r['threads']} "
                       f"connections, -j {r['client_threads'] or 1} | client CPU "
                       f"{fmt(r['client_cpu_own_pct'])} % of the machine, "
                       f"{fmt(r['client_us_per_rt'])} µs a round trip |")
            continue
        if r["part"] != "eus":
            continue
        out.append(
            f"| eus | {r['engine']} | {r['eus']} users on {r['threads']} connections"
            f"{', ' + str(r['client_threads']) + ' event loops' if r.get('client_threads') else ''}"
            f"{' (baseline build)' if r.get('build') == 'baseline' else ''}"
            f"{' over the unix socket' if r.get('transport') == 'unix' else ''}"
            f" | "
            f"BT/s {r['bts']:.0f} of {r['offered_bts']:.0f} offered | RSS {r['rss_mb']:.0f} MB | "
            f"client CPU {fmt(r['client_cpu_pct'])} % of the machine, "
            f"{fmt(r.get('client_us_per_bt'))} µs an interaction, "
            f"{fmt(r.get('client_us_per_rt'))} µs a round trip ({fmt(r.get('qps'), '{:.0f}')}/s) | "
            f"lag p50/p99/max {fmt(r['lag_p50_ms'], '{:.2f}')}/{fmt(r['lag_p99_ms'], '{:.2f}')}/"
            f"{fmt(r['lag_max_ms'], '{:.1f}')} ms |"
            + (f" syscalls/round trip {fmt(r.get('syscalls_per_send'), '{:.2f}')}, "
               f"recvfrom {fmt(r.get('recvfrom_per_send'), '{:.2f}')}, "
               f"context switches {fmt(r.get('context-switches_per_send'), '{:.2f}')} |"
               if "syscalls_per_send" in r else ""))
    out += build_ratios(rows) + transport_ratios(rows) + floor_ratios(rows)
    return "\n".join(out)


def build_ratios(rows):
    """This build over the baseline, per pair: the client's CPU per
    interaction and its share of the machine; the geometric mean and the
    pairs' range (the ratios, not a mean of the two builds' means)."""
    out = []
    eus = [r for r in rows if r["part"] == "eus" and r.get("build")]
    return arm_ratios(eus, "build", "new", "baseline", "transport")


def transport_ratios(rows):
    """Over the unix socket over loopback TCP, per pair, as build_ratios."""
    eus = [r for r in rows if r["part"] == "eus" and r.get("transport")]
    return arm_ratios(eus, "transport", "unix", "tcp", "build")


def floor_ratios(rows):
    """dbsweep's CPU per round trip over pgbench's floor, per pair."""
    eus = [r for r in rows if r["part"] == "eus" and r.get("build") in ("new", "pgbench-floor")]
    if not any(r["build"] == "pgbench-floor" for r in eus):
        return []
    return arm_ratios(eus, "build", "new", "pgbench-floor", "transport",
                      metrics=("client_us_per_rt", "client_cpu_own_pct"))


def arm_ratios(eus, field, num, den, other,
               metrics=("client_us_per_bt", "client_cpu_own_pct", "syscalls_per_send")):
    """The per-pair ratios of rows whose `field` is `num` over those whose
    `field` is `den`, the rest of the arm (`other`) alike."""
    out = []
    keys = sorted({(r["engine"], r["client_threads"], r.get(other) or "") for r in eus})
    for engine, loops, rest in keys:
        for metric in metrics:
            ratios = []
            for pair in sorted({r["pair"] for r in eus}):
                by = {r[field]: r for r in eus
                      if (r["engine"], r["client_threads"], r.get(other) or "", r["pair"])
                      == (engine, loops, rest, pair)}
                a, b = by.get(num, {}).get(metric), by.get(den, {}).get(metric)
                if a and b:
                    ratios.append(a / b)
            if ratios:
                g = statistics.geometric_mean(ratios)
                out.append(f"| ratio | {engine} | {loops} event loops {rest} | {metric}: {num} / "
                           f"{den} {g:.3f} over {len(ratios)} pairs ({min(ratios):.3f}–"
                           f"{max(ratios):.3f}) |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="load,eus")
    ap.add_argument("--items", type=int, default=10000)
    ap.add_argument("--ebs", type=int, default=100)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--eus", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=64)
    ap.add_argument("--ramp", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--time", type=int, default=60)
    ap.add_argument("--engines", default="mariadb,postgres")
    ap.add_argument("--client-threads", default="0",
                    help="eus: comma-separated --client-threads values, 0 = a thread per "
                         "connection; with two or more, --pairs interleaved runs of each")
    ap.add_argument("--baseline", metavar="OLD_DBSWEEP",
                    help="eus: also run each --client-threads value with this older build, "
                         "interleaved in pairs")
    ap.add_argument("--transport", default="tcp",
                    help="eus: comma-separated tcp,unix (the server's unix socket), interleaved "
                         "in the pairs")
    ap.add_argument("--floor", action="store_true",
                    help="eus: follow each PostgreSQL run with pgbench offering its statements a "
                         "second as one-row selects: the client's floor per round trip")
    ap.add_argument("--perf-stat", action="store_true",
                    help="eus: count the client's system calls and context switches per round "
                         "trip (perf stat)")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=c.ROOT, check=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    workdir = tempfile.mkdtemp(prefix="dbt1-bench-")
    os.chmod(workdir, 0o755)
    engines = args.engines.split(",")
    urls = []
    try:
        # The study's settings (studies/seed003-dbt1.toml): the store in
        # memory.
        settings = {"mariadb": ["innodb_buffer_pool_size=1G", "max_connections=300"],
                    "postgres": ["max_connections=300"]}
        for e in engines:
            urls.append((e, c.server_start(e, workdir, settings.get(e, []))))
        rows = []
        parts = args.part.split(",")
        if "load" in parts:
            rows += load_part(args, workdir, urls)
        if "eus" in parts:
            rows += eus_part(args, workdir, urls)
    finally:
        for e in engines:
            c.server_stop(e, workdir)
    base = os.path.join(c.ROOT, "bench", "results", f"dbt1-{stamp}")
    keys = sorted({k for r in rows for k in r})
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    t = table(rows)
    with open(base + ".md", "w") as f:
        f.write(f"# bench/dbt1.py {' '.join(sys.argv[1:])}\n\n{t}\n")
    print(t)
    print(f"results: {base}.csv")


if __name__ == "__main__":
    main()
