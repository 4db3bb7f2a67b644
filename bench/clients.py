#!/usr/bin/env python3
"""Client efficiency benchmark: dbsweep vs sysbench 1.0 (and pgbench on
PostgreSQL) driving the same scratch servers and the same sbtest table, at
rising client counts, interleaved A B A B so machine noise hits every tool
alike.

For each engine (MariaDB, PostgreSQL), workload (oltp_point_select,
oltp_read_only) and client count, each pair runs sysbench, dbsweep and (on
PostgreSQL) pgbench with a script of the same statements on the same table,
alternating which tool goes first. Client CPU and peak memory come from each
child's rusage (GNU time), so every tool is measured the same way: connecting,
preparing and the run itself.

Client CPU and peak memory come from GNU time (/usr/bin/time, Debian's
`time` package).

Usage:
    bench/clients.py [--pairs 3] [--time 8] [--clients 1,8,64,256,1024]
                     [--engines mariadb,postgres]
                     [--workloads oltp_point_select,oltp_read_only]
                     [--rows 1000000] [--connections 10000]
                     [--baseline OLD_DBSWEEP] [--baseline-args ARGS]
                     [--tools sysbench,dbsweep,pgbench]

`--baseline PATH` adds another dbsweep binary (e.g. a release build of an
earlier commit) as a tool of its own, interleaved with the others, and the
table gains its median, dbsweep / baseline and the range of that ratio per
pair: a regression check of dbsweep against itself. `--baseline-args ARGS`
gives the baseline extra `dbsweep run` options, and without `--baseline` it
is this very dbsweep: `--baseline-args="--metrics off"` measures what the
machine and server metrics cost (dbsweep / baseline = on / off). The
table's reading ms columns are the metrics sampler's average and longest
reading (/proc and the server's counters) per run, in wall time (which a
loaded machine stretches), and its sampling CPU column the CPU those
readings used, as a percentage of one core over the run. `--tools` chooses the
tools (pgbench runs on PostgreSQL only).

Needs the README's set-up plus `apt-get install sysbench` (pgbench comes with
postgresql). Writes bench/results/clients-<date>.csv and a Markdown table of
medians and ratios (bench/results/clients-<date>.md), and prints the table.
`--connections N` adds a run of N dbsweep clients against MariaDB (and
of the baseline, and sysbench with as many threads, for comparison) after
the sweep: with `--baseline-args="--client-threads 2"`, N connections on
two event loops beside N threads.
"""

import argparse
import csv
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DBSWEEP = os.path.join(ROOT, "target", "release", "dbsweep")


def measured(argv, env=None, timeout=None):
    """Runs argv under GNU time: (rc, output, wall s, cpu s, sys s, max RSS KiB).

    GNU time reports the child's own rusage; wait4 on a child forked from
    this Python process would count Python's pages in the peak RSS."""
    t0 = time.monotonic()
    with tempfile.NamedTemporaryFile("r") as tf, tempfile.TemporaryFile() as f:
        p = subprocess.Popen(["/usr/bin/time", "-f", "%U %S %M", "-o", tf.name] + argv,
                             stdout=f, stderr=subprocess.STDOUT, env=env)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        wall = time.monotonic() - t0
        f.seek(0)
        out = f.read().decode(errors="replace")
        last = (tf.read().strip().splitlines() or ["0 0 0"])[-1].split()
    try:
        user, sys_s, rss = float(last[0]), float(last[1]), int(last[2])
    except (ValueError, IndexError):
        user, sys_s, rss = 0.0, 0.0, 0
    return p.returncode, out, wall, user + sys_s, sys_s, rss


def idle_share(secs=0.5):
    """The share of this machine's CPU time that was idle over `secs`."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return v[3] + v[4], sum(v)
    i0, t0 = sample()
    time.sleep(secs)
    i1, t1 = sample()
    return (i1 - i0) / max(t1 - t0, 1)


def settle(limit=30.0):
    """Waits (up to `limit` s) until the machine is mostly idle, so that
    each run starts as quiet as the last: after 1024 clients, servers and
    the kernel take a while to release their threads and connections."""
    end = time.monotonic() + limit
    while idle_share() < 0.75 and time.monotonic() < end:
        pass


def server_start(kind, workdir, settings, cpus=None):
    argv = [DBSWEEP, "server", "start", kind, "--dir", os.path.join(workdir, kind)]
    if cpus is not None:
        argv += ["--cpus", cpus]
    for s in settings:
        argv += ["--set", s]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()
    return out.splitlines()[-1]


def server_stop(kind, workdir):
    subprocess.run([DBSWEEP, "server", "stop", "--dir", os.path.join(workdir, kind)],
                   capture_output=True)


def parts(url):
    u = urllib.parse.urlparse(url)
    return dict(user=u.username, password=u.password, host=u.hostname, port=str(u.port),
                db=u.path.lstrip("/"))


def sysbench_argv(engine, url, workload, clients, secs, rows):
    p = parts(url)
    drv = "mysql" if engine == "mariadb" else "pgsql"
    return ["sysbench", workload, f"--db-driver={drv}", f"--{drv}-host={p['host']}",
            f"--{drv}-port={p['port']}", f"--{drv}-user={p['user']}",
            f"--{drv}-password={p['password']}", f"--{drv}-db={p['db']}",
            f"--table-size={rows}", "--tables=1", f"--threads={clients}", f"--time={secs}",
            "--report-interval=0", "run"]


def dbsweep_argv(url, workload, clients, secs, rows, json_path, binary=DBSWEEP, extra=()):
    return [binary, "run", workload, "--db", url, f"--table-size={rows}", "--tables=1",
            f"--threads={clients}", f"--time={secs}", "--json", json_path, *extra]


# pgbench scripts with sysbench's statements on sbtest1 (defaults of
# oltp_point_select and oltp_read_only: 10 point selects, ranges of 100).
PGBENCH_SCRIPTS = {
    "oltp_point_select": "\\set id random(1, {rows})\nSELECT c FROM sbtest1 WHERE id=:id;\n",
    "oltp_read_only": (
        "\\set r random(1, {rows})\n"
        "BEGIN;\n"
        + "".join(f"\\set id{i} random(1, {{rows}})\nSELECT c FROM sbtest1 WHERE id=:id{i};\n"
                  for i in range(10))
        + "\\set a random(1, {hi})\nSELECT c FROM sbtest1 WHERE id BETWEEN :a AND :a + 99;\n"
        "\\set b random(1, {hi})\nSELECT SUM(k) FROM sbtest1 WHERE id BETWEEN :b AND :b + 99;\n"
        "\\set c random(1, {hi})\nSELECT c FROM sbtest1 WHERE id BETWEEN :c AND :c + 99 ORDER BY c;\n"
        "\\set d random(1, {hi})\n"
        "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN :d AND :d + 99 ORDER BY c;\n"
        "COMMIT;\n"),
}
QUERIES_PER_TXN = {"oltp_point_select": 1, "oltp_read_only": 16}


def pgbench_argv(url, script_path, clients, secs, jobs=None):
    """pgbench on `clients` connections over `jobs` threads (-j; by default
    one per CPU, at most one per connection)."""
    p = parts(url)
    jobs = jobs or min(clients, os.cpu_count() or 1)
    return ["pgbench", "-n", "-M", "prepared", "-h", p["host"], "-p", p["port"], "-U", p["user"],
            "-c", str(clients), "-j", str(jobs), "-T", str(secs),
            "-f", script_path, p["db"]]


def parse_sysbench(out):
    q = re.search(r"queries:\s+(\d+)\s+\(([\d.]+) per sec", out)
    t = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", out)
    if not q or not t:
        return None
    return dict(queries=int(q.group(1)), qps=float(q.group(2)), tps=float(t.group(2)))


def parse_dbsweep(json_path):
    try:
        with open(json_path) as f:
            r = json.load(f)["result"]
    except (OSError, ValueError, KeyError):
        return None
    m = r.get("metrics") or {}
    return dict(queries=r["queries"]["total"] if isinstance(r["queries"], dict) else r["queries"],
                qps=r["qps"], tps=r["tps"],
                reading_ms_avg=m.get("reading_ms_avg"), reading_ms_max=m.get("reading_ms_max"),
                sampling_cpu_pct=(100 * m["sampling_cpu_s"] / r["measured_s"]
                                  if m.get("sampling_cpu_s") is not None and r.get("measured_s")
                                  else None))


def parse_pgbench(out, workload):
    n = re.search(r"number of transactions actually processed:\s+(\d+)", out)
    t = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out)
    if not n or not t:
        return None
    k = QUERIES_PER_TXN[workload]
    return dict(queries=int(n.group(1)) * k, qps=float(t.group(1)) * k, tps=float(t.group(1)))


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--time", type=int, default=8)
    ap.add_argument("--clients", default="1,8,64,256,1024")
    ap.add_argument("--engines", default="mariadb,postgres")
    ap.add_argument("--workloads", default="oltp_point_select,oltp_read_only")
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--connections", type=int, default=0,
                    help="also run this many dbsweep clients against MariaDB")
    ap.add_argument("--baseline", metavar="OLD_DBSWEEP",
                    help="another dbsweep binary to compare this one with, interleaved")
    ap.add_argument("--baseline-args", default="", metavar="ARGS",
                    help="extra dbsweep run options of the baseline (alone: this dbsweep with them)")
    ap.add_argument("--tools", default="sysbench,dbsweep,pgbench")
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    if a.baseline_args and not a.baseline:
        a.baseline = DBSWEEP
    chosen = a.tools.split(",") + (["baseline"] if a.baseline else [])
    if "sysbench" in chosen and not shutil.which("sysbench"):
        sys.exit("sysbench not found: apt-get install sysbench")
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    clients = [int(c) for c in a.clients.split(",")]
    engines = a.engines.split(",")
    workloads = a.workloads.split(",")
    most = max(clients + [a.connections])

    work = tempfile.mkdtemp(prefix="dbsweep-bench-")
    os.chmod(work, 0o755)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    csv_path = os.path.join(ROOT, "bench", "results", f"clients-{stamp}.csv")
    md_path = csv_path[:-4] + ".md"
    fields = ["engine", "workload", "clients", "pair", "tool", "ok", "tps", "qps", "queries",
              "wall_s", "cpu_s", "sys_s", "cpu_us_per_query", "maxrss_kib", "load1",
              "reading_ms_avg", "reading_ms_max", "sampling_cpu_pct"]
    rows = []
    urls = {}
    scripts = {}
    for w in workloads:
        path = os.path.join(work, f"{w}.sql")
        with open(path, "w") as f:
            f.write(PGBENCH_SCRIPTS[w].format(rows=a.rows, hi=a.rows - 99))
        scripts[w] = path
    env = dict(os.environ)

    def start(e):
        """Starts engine e's scratch server, loads the table once and warms
        it; only one engine's server runs at a time, so that one server's
        background work (InnoDB purge and flushing, checkpoints) never lands
        in the other's measurements."""
        if e == "mariadb":
            s = [f"max_connections={most + 100}", "thread_cache_size=2000"]
        else:
            s = [f"max_connections={min(most, 2000) + 100}"]
        urls[e] = server_start(e, work, s)
        print(f"{e}: {urls[e]}", flush=True)
        if e == "postgres":
            env["PGPASSWORD"] = parts(urls[e])["password"]
        subprocess.run([DBSWEEP, "prepare", "oltp_read_only", "--db", urls[e],
                        f"--table-size={a.rows}", "--tables=1"], check=True,
                       capture_output=True)
        # Let the server finish what loading left behind (InnoDB purge
        # and page flushing, PostgreSQL's checkpoint) and warm its caches,
        # so that the first measured point is not the odd one out.
        if e == "postgres":
            subprocess.run(["psql", urls[e], "-qc", "VACUUM ANALYZE sbtest1"],
                           check=True, capture_output=True)
        subprocess.run([DBSWEEP, "run", "oltp_read_only", "--db", urls[e],
                        f"--table-size={a.rows}", "--tables=1", "--threads=8",
                        "--time=10"], check=True, capture_output=True)
        time.sleep(10)

    try:
        def one(e, w, c, pair, tool):
            jp = os.path.join(work, "run.json")
            if os.path.exists(jp):
                os.remove(jp)
            if tool == "sysbench":
                argv = sysbench_argv(e, urls[e], w, c, a.time, a.rows)
            elif tool == "dbsweep":
                argv = dbsweep_argv(urls[e], w, c, a.time, a.rows, jp)
            elif tool == "baseline":
                argv = dbsweep_argv(urls[e], w, c, a.time, a.rows, jp, binary=a.baseline,
                                    extra=a.baseline_args.split())
            else:
                argv = pgbench_argv(urls[e], scripts[w], c, a.time)
            settle()
            rc, out, wall, cpu, sys_s, rss = measured(argv, env=env, timeout=a.time * 6 + 120)
            if tool == "sysbench":
                r = parse_sysbench(out) if rc == 0 else None
            elif tool in ("dbsweep", "baseline"):
                r = parse_dbsweep(jp) if rc == 0 else None
            else:
                r = parse_pgbench(out, w) if rc == 0 else None
            row = dict(engine=e, workload=w, clients=c, pair=pair, tool=tool, ok=int(r is not None),
                       wall_s=round(wall, 3), cpu_s=round(cpu, 3), sys_s=round(sys_s, 3),
                       maxrss_kib=rss, load1=os.getloadavg()[0])
            if r:
                row.update(tps=round(r["tps"], 2), qps=round(r["qps"], 2), queries=r["queries"],
                           cpu_us_per_query=round(cpu * 1e6 / max(r["queries"], 1), 2),
                           reading_ms_avg=r.get("reading_ms_avg"),
                           reading_ms_max=r.get("reading_ms_max"),
                           sampling_cpu_pct=r.get("sampling_cpu_pct"))
            else:
                tail = "\n".join(out.strip().splitlines()[-3:])
                print(f"  {tool} failed (exit {rc}): {tail}", flush=True)
            rows.append(row)
            with open(csv_path, "w", newline="") as f:
                wr = csv.DictWriter(f, fieldnames=fields)
                wr.writeheader()
                wr.writerows(rows)
            print(f"{e:8} {w:18} {c:5} pair {pair} {tool:8} "
                  f"qps {row.get('qps', 0):>10} cpu/q {row.get('cpu_us_per_query', '-'):>7} us "
                  f"rss {rss // 1024} MiB", flush=True)

        for e in engines:
            start(e)
            for w in workloads:
                for c in clients:
                    tools = [t for t in ["sysbench", "dbsweep", "baseline", "pgbench"]
                             if t in chosen and (t != "pgbench" or e == "postgres")]
                    for pair in range(1, a.pairs + 1):
                        order = tools if pair % 2 else list(reversed(tools))
                        for t in order:
                            one(e, w, c, pair, t)
            if a.connections and e == "mariadb":
                for t in ["dbsweep", "baseline", "sysbench"]:
                    if t in chosen:
                        one("mariadb", "oltp_point_select", a.connections, 1, t)
            server_stop(e, work)
            del urls[e]
    finally:
        for e in urls:
            server_stop(e, work)
        shutil.rmtree(work, ignore_errors=True)

    md = table(rows)
    with open(md_path, "w") as f:
        f.write(md)
    print()
    print(f"Raw results: {os.path.relpath(csv_path, ROOT)}")
    print()
    print(md)


def table(rows):
    """Markdown: per point, median qps per tool, dbsweep/sysbench ratios of
    the medians and the range of the per-pair ratios (each pair ran back to
    back), client CPU per query and peak RSS."""
    keys = []
    for r in rows:
        k = (r["engine"], r["workload"], r["clients"])
        if k not in keys:
            keys.append(k)
    baseline = any(r["tool"] == "baseline" for r in rows)
    out = ["| engine | workload | clients | sysbench qps | dbsweep qps | pgbench qps "
           "| dbsweep / sysbench (goal ≥ 1.10) | per pair | CPU µs/query sysbench | dbsweep "
           "| CPU ratio (goal ≤ 0.80) | RSS MiB sysbench | dbsweep |"
           + (" baseline qps | dbsweep / baseline | per pair | CPU µs/query baseline |"
              if baseline else "")
           + " reading ms avg | max | sampling CPU % of a core |",
           "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"
           + ("---:|---:|---|---:|" if baseline else "") + "---:|---:|---:|"]

    def med(k, tool, field):
        return median([r.get(field) for r in rows
                       if (r["engine"], r["workload"], r["clients"]) == k and r["tool"] == tool
                       and r["ok"]])

    def f(x, fmt):
        return "" if x is None else format(x, fmt)

    def pair_range(k, other="sysbench"):
        by = {}
        for r in rows:
            if (r["engine"], r["workload"], r["clients"]) == k and r["ok"]:
                by.setdefault(r["pair"], {})[r["tool"]] = r["qps"]
        rs = sorted(p["dbsweep"] / p[other] for p in by.values()
                    if p.get("dbsweep") and p.get(other))
        return f"{rs[0]:.2f}–{rs[-1]:.2f}" if len(rs) > 1 else ""

    for k in keys:
        sb, ds, pg = (med(k, t, "qps") for t in ("sysbench", "dbsweep", "pgbench"))
        sc, dc = med(k, "sysbench", "cpu_us_per_query"), med(k, "dbsweep", "cpu_us_per_query")
        sr, dr = med(k, "sysbench", "maxrss_kib"), med(k, "dbsweep", "maxrss_kib")
        ratio = f"{ds / sb:.2f}" if sb and ds else ("sysbench failed" if ds else "")
        cratio = f"{dc / sc:.2f}" if sc and dc else ""
        line = (f"| {k[0]} | {k[1]} | {k[2]} | {f(sb, ',.0f')} | {f(ds, ',.0f')} | {f(pg, ',.0f')} "
                f"| {ratio} | {pair_range(k)} | {f(sc, '.1f')} | {f(dc, '.1f')} | {cratio} "
                f"| {f(sr and sr / 1024, '.0f')} | {f(dr and dr / 1024, '.0f')} |")
        if baseline:
            bs, bc = med(k, "baseline", "qps"), med(k, "baseline", "cpu_us_per_query")
            bratio = f"{ds / bs:.2f}" if bs and ds else ""
            line += (f" {f(bs, ',.0f')} | {bratio} | {pair_range(k, 'baseline')} "
                     f"| {f(bc, '.1f')} |")
        ra = med(k, "dbsweep", "reading_ms_avg")
        rm = max([r["reading_ms_max"] for r in rows if (r["engine"], r["workload"], r["clients"]) == k
                  and r["tool"] == "dbsweep" and r.get("reading_ms_max") is not None], default=None)
        sc_pct = med(k, "dbsweep", "sampling_cpu_pct")
        line += f" {f(ra, '.2f')} | {f(rm, '.2f')} | {f(sc_pct, '.2f')} |"
        out.append(line)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
