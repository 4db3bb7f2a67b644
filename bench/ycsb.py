#!/usr/bin/env python3
"""YCSB against BenchBase's ycsb: dbsweep's `ycsb` workload and CMU's
BenchBase (its `ycsb` benchmark, run as it is from its built distribution,
as bench/tpcc.py runs its `tpcc`), side by side on the same scratch servers,
interleaved pair by pair (BenchBase, then dbsweep, then again) so that the
machine's drift hits both alike.

Per server (MariaDB and PostgreSQL, each started by this script with
`dbsweep server start KIND`, one at a time), both tools load their own
table of --records rows (BenchBase's `usertable` in a database of its own,
`benchbase`, dbsweep's in the server's default database), then for each
workload (--workloads, default a,c) and each connection count
(--connections, default 8,64) the pairs run: throughput in operations per
second over the measured window, and the client's CPU per operation read
from /proc over the window's steady part (1 s inside each end) — the whole
process, the JVM's JIT and garbage collector included, as dbsweep's own.
Goals (issue 43): dbsweep's throughput ≥ BenchBase's, with less client CPU
per operation.

What is set equal:
- the table: 10 text fields of 100 characters; --records rows
  (BenchBase's <scalefactor> is thousands of rows);
- the mix: YCSB's A (50 % read, 50 % update) and C (100 % read) —
  BenchBase's <weights> over ReadRecord, InsertRecord, ScanRecord,
  UpdateRecord, DeleteRecord, ReadModifyWriteRecord are 50,0,0,50,0,0 and
  100,0,0,0,0,0; its UpdateRecord sets all ten fields, so dbsweep runs with
  --writeallfields on; both read every field;
- the request distribution: zipfian with constant 0.99 (BenchBase's
  skewFactor default);
- no waits (BenchBase's <rate>unlimited</rate>), the same warmup and
  measured window (BenchBase's <warmup> and <time>);
- isolation: the servers' defaults (RR on MariaDB, RC on PostgreSQL; the
  sample configuration's SERIALIZABLE is not used);
- prepared statements: BenchBase's JDBC URLs as its sample configurations
  (MariaDB with useServerPrepStmts, PostgreSQL's driver preparing on the
  server from its fifth execution), dbsweep's default (prepared on the
  server).

What differs, as BenchBase is (its source at the commit the results name):
- each operation is a transaction: BenchBase's Worker sets autocommit off
  and commits after every procedure (a COMMIT round trip per operation);
  dbsweep autocommits each statement, as YCSB's JDBC binding does by
  default (jdbc.autocommit=true);
- keys: BenchBase's `ycsb_key` is an INT drawn by a plain zipfian over the
  records (the hottest keys are 0, 1, 2 …, neighbours on one page); YCSB's
  and dbsweep's are VARCHAR(255) `user` + FNV hash drawn by the scrambled
  zipfian (the same skew's hot keys spread over the table).

Usage:
  bench/ycsb.py --benchbase /tmp/bb-dist --benchbase-rev 65322e95 --pairs 3
  bench/ycsb.py --benchbase /tmp/bb-dist --quick      # smoke run
"""

import argparse
import csv
import datetime
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402
import tpcc as t  # noqa: E402
import tpcc_benchbase as bb  # noqa: E402

ROOT = c.ROOT
# ReadRecord, InsertRecord, ScanRecord, UpdateRecord, DeleteRecord,
# ReadModifyWriteRecord: the order of the configuration's transaction types.
BB_TYPES = ["ReadRecord", "InsertRecord", "ScanRecord", "UpdateRecord", "DeleteRecord",
            "ReadModifyWriteRecord"]
BB_WEIGHTS = {"a": "50,0,0,50,0,0", "b": "95,0,0,5,0,0", "c": "100,0,0,0,0,0"}


def bb_config(engine, url, records, terminals, load_threads, workload, warmup, secs):
    """BenchBase's ycsb configuration for the server at url (dbsweep's URL):
    its <scalefactor> is thousands of rows."""
    return bb.config(engine, url, f"{records / 1000:g}", terminals, load_threads, warmup, secs,
                     bench="ycsb", weights=BB_WEIGHTS[workload], types=BB_TYPES)


def bb_argv(d, cfg, resdir, load):
    return bb.argv(d, cfg, resdir, load, bench="ycsb")


def load(args, engine, url, workdir, record):
    """Both tools' tables, each load timed (one row per tool)."""
    bb.reset_db(t.query, engine, url)
    d = args.bb_dirs[engine]
    resdir = os.path.join(workdir, "benchbase-load")
    cfg = bb.write_config(workdir, "ycsb-load.xml", bb_config(
        engine, url, args.records, 1, args.load_threads, "c", 1, 1))
    t.settle(args)
    rc, out, wall, cpu, _ = t.run_sampled(bb_argv(d, cfg, resdir, load=True), [], 3600, cwd=d)
    own = bb.load_seconds(out)
    rows = t.query(engine, bb.db_url(url), "SELECT count(*) FROM usertable")
    error = None
    if rc != 0 or bb.load_errors(out) or int(rows) != args.records:
        error = f"exit {rc}, {rows} rows: {t.tail(out)}"
    record(dict(engine=engine, part="load", pair=1, tool="benchbase", ok=int(not error),
                seconds=round(wall, 3), seconds_own=own and round(own, 3),
                client_cpu_s=round(cpu, 3), error=error))
    subprocess.run([args.dbsweep, "cleanup", "ycsb", "--db", url], capture_output=True)
    t.settle(args)
    rc, out, wall, cpu, _ = t.run_sampled(
        [args.dbsweep, "prepare", "ycsb", "--db", url, f"--recordcount={args.records}",
         f"--threads={args.load_threads}"], [], 3600)
    record(dict(engine=engine, part="load", pair=1, tool="dbsweep", ok=int(rc == 0),
                seconds=round(wall, 3), client_cpu_s=round(cpu, 3),
                error=None if rc == 0 else f"exit {rc}: {t.tail(out)}"))
    if engine == "postgres":
        t.query(engine, url, "VACUUM ANALYZE")
        t.query(engine, bb.db_url(url), "VACUUM ANALYZE")


def tool_run(args, tool, engine, url, workload, conns, workdir):
    """(argv, cwd, CPU marks, the marks' anchor, a function reading its
    figures once it exited 0)."""
    secs, warmup = args.time, args.warmup
    inner = [1, secs - 1] if secs > 3 else [0, secs]
    if tool == "benchbase":
        d = args.bb_dirs[engine]
        resdir = os.path.join(workdir, "benchbase-run")
        shutil.rmtree(resdir, ignore_errors=True)
        cfg = bb.write_config(workdir, "ycsb-run.xml", bb_config(
            engine, url, args.records, conns, args.load_threads, workload, warmup, secs))
        return (bb_argv(d, cfg, resdir, load=False), d, inner, bb.MEASURE_LINE,
                lambda out: bb.parse_run(resdir, warmup + secs))
    js = os.path.join(workdir, "run.json")
    if os.path.exists(js):
        os.remove(js)
    argv = [args.dbsweep, "run", "ycsb", "--db", url, f"--workload={workload}",
            f"--recordcount={args.records}", "--writeallfields=on", f"--threads={conns}",
            f"--warmup={warmup}", f"--time={secs}", "--json", js, *args.dbsweep_args.split()]
    return argv, None, [warmup + m for m in inner], None, lambda out: t.parse_db_run(js)


def run_part(args, engine, url, record, workdir):
    for workload in args.workloads:
        for conns in args.connections:
            for pair in range(1, args.pairs + 1):
                for tool in ("benchbase", "dbsweep"):
                    argv, cwd, marks, anchor, parse = tool_run(args, tool, engine, url,
                                                               workload, conns, workdir)
                    t.settle(args)
                    rc, out, wall, cpu_all, samples = t.run_sampled(
                        argv, marks, timeout=args.warmup + args.time + 300, cwd=cwd,
                        anchor=anchor)
                    r = parse(out) if rc == 0 else None
                    rate = t.cpu_rate(samples)
                    row = dict(engine=engine, part="run", workload=workload, pair=pair,
                               tool=tool, connections=conns, ok=int(r is not None),
                               wall_s=round(wall, 3), client_cpu_s=round(cpu_all, 3),
                               cpu_cores=None if rate is None else round(rate, 4))
                    if r:
                        row.update(ops=round(r["tps"], 1), operations=r["transactions"],
                                   window_s=r["window_s"], failed=r.get("failed"),
                                   errors_per_s=round(r["errors_per_s"], 3))
                        if rate is not None and r["tps"] > 0:
                            row["cpu_us_per_op"] = round(rate * 1e6 / r["tps"], 1)
                    else:
                        why = t.tail(out) if rc else "no result: " + t.tail(out, 2)
                        row["error"] = f"exit {rc}: {why}"
                    record(row)


def geo(xs):
    return math.exp(statistics.fmean(math.log(x) for x in xs))


def tables(rows, args):
    """The summary: per engine, workload and connections, each tool's
    figures per pair and dbsweep/BenchBase per pair (geometric mean and
    range)."""
    out = []
    loads = [r for r in rows if r["part"] == "load"]
    if loads:
        out += ["| engine | tool | load of the rows (s) | its own log (s) |", "|---|---|---|---|"]
        for r in loads:
            out.append(f"| {r['engine']} | {r['tool']} | {r.get('seconds')} | "
                       f"{r.get('seconds_own') or ''} |")
        out.append("")
    out += ["| engine | workload | connections | BenchBase ops/s | dbsweep ops/s | "
            "throughput dbsweep/BenchBase (range) | BenchBase client µs/op | "
            "dbsweep client µs/op | CPU/op dbsweep/BenchBase (range) |",
            "|---|---|---|---|---|---|---|---|---|"]
    runs = [r for r in rows if r["part"] == "run"]
    keys = sorted({(r["engine"], r["workload"], r["connections"]) for r in runs})
    for e, w, n in keys:
        by = {}
        for r in runs:
            if (r["engine"], r["workload"], r["connections"]) == (e, w, n) and r["ok"]:
                by.setdefault(r["pair"], {})[r["tool"]] = r

        def col(tool, field):
            return ", ".join(f"{by[p][tool][field]:,.1f}" for p in sorted(by)
                             if tool in by[p] and by[p][tool].get(field))

        def ratio(field):
            xs = [by[p]["dbsweep"][field] / by[p]["benchbase"][field] for p in sorted(by)
                  if len(by[p]) == 2 and by[p]["dbsweep"].get(field)
                  and by[p]["benchbase"].get(field)]
            if not xs:
                return "—"
            return f"{geo(xs):.2f}× ({min(xs):.2f}–{max(xs):.2f}; {len(xs)} pairs)"
        out.append(f"| {e} | {w.upper()} | {n} | {col('benchbase', 'ops')} | "
                   f"{col('dbsweep', 'ops')} | {ratio('ops')} | "
                   f"{col('benchbase', 'cpu_us_per_op')} | {col('dbsweep', 'cpu_us_per_op')} | "
                   f"{ratio('cpu_us_per_op')} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchbase", metavar="DIR", required=True,
                    help="BenchBase's built distributions: DIR/benchbase-ENGINE per engine")
    ap.add_argument("--benchbase-rev", metavar="COMMIT",
                    help="the commit BenchBase was built from, when its jar does not say")
    ap.add_argument("--engines", default="mariadb,postgres")
    ap.add_argument("--workloads", default="a,c", help="YCSB letters among a, b, c")
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--connections", default="8,64")
    ap.add_argument("--time", type=int, default=30, help="measured seconds of each run")
    ap.add_argument("--warmup", type=int, default=10, help="seconds of load before measuring")
    ap.add_argument("--load-threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--port", type=int, default=55600,
                    help="MariaDB's port; PostgreSQL's is the next one")
    ap.add_argument("--dbsweep", metavar="BINARY",
                    help="the dbsweep to measure (default: this checkout's release build)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--dbsweep-args", default="", metavar="ARGS")
    ap.add_argument("--settle", type=float, default=30.0, metavar="S",
                    help="wait up to S s before each step for the machine to be 75 %% idle")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 10,000 records, 1 pair, 2 s warmup, 8 s runs, 5 s settle")
    a = ap.parse_args()
    if a.quick:
        a.records, a.pairs, a.warmup, a.time, a.settle = 10000, 1, 2, 8, 5.0
    a.connections = [int(x) for x in a.connections.split(",")]
    a.workloads = a.workloads.split(",")
    for w in a.workloads:
        if w not in BB_WEIGHTS:
            ap.error(f"--workloads: {w!r}: give a, b or c (BenchBase's ycsb has no D, E or F "
                     "with YCSB's meaning)")
    if a.records % 1000:
        ap.error(f"--records {a.records}: BenchBase loads thousands of rows; give a multiple "
                 "of 1000")
    engines = a.engines.split(",")
    for e in engines:
        if e not in t.SETTINGS:
            ap.error(f"--engines: unknown engine {e!r}: give mariadb, postgres or both")
    a.benchbase = os.path.abspath(a.benchbase)
    try:
        a.bb_dirs = bb.check(a.benchbase, engines)
    except ValueError as e:
        ap.error(str(e))
    for prog in ("mysql", "psql", "java"):
        if not shutil.which(prog):
            sys.exit(f"{prog} not found (apt-get install mariadb-client postgresql-client "
                     "openjdk-17-jre-headless)")
    if a.dbsweep:
        a.dbsweep = os.path.abspath(a.dbsweep)
    else:
        a.dbsweep = c.DBSWEEP
        if not a.no_build:
            subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    c.DBSWEEP = t.c.DBSWEEP = a.dbsweep

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    base = os.path.join(ROOT, "bench", "results", f"ycsb-{stamp}")
    fields = ["engine", "part", "workload", "pair", "tool", "connections", "ok", "seconds",
              "seconds_own", "ops", "operations", "window_s", "failed", "errors_per_s",
              "cpu_cores", "cpu_us_per_op", "client_cpu_s", "wall_s", "load1", "error"]
    rows = []

    def record(row):
        row["load1"] = round(os.getloadavg()[0], 2)
        rows.append(row)
        with open(base + ".csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
        shown = {k: v for k, v in row.items() if k not in ("engine", "part", "pair", "tool")}
        print(f"{row['engine']:8} {row['part']:5} pair {row['pair']} {row['tool']:9} {shown}",
              flush=True)

    workdir = tempfile.mkdtemp(prefix="dbsweep-ycsb-")
    os.chmod(workdir, 0o755)
    versions = {}
    try:
        for i, e in enumerate(engines):
            url = t.server_start(e, workdir, a.port + i, t.SETTINGS[e])
            print(f"{e}: {url}", flush=True)
            try:
                versions[e] = t.query(e, url, "SELECT version()").splitlines()[0].split(" on ")[0]
                load(a, e, url, workdir, record)
                run_part(a, e, url, record, workdir)
            finally:
                t.server_stop(e, workdir)
    finally:
        for e in engines:
            t.server_stop(e, workdir)
        shutil.rmtree(workdir, ignore_errors=True)

    head = [f"# bench/ycsb.py {' '.join(sys.argv[1:])}", "",
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
            f"{os.cpu_count()} CPUs; BenchBase {bb.revision(a.bb_dirs, a.benchbase_rev)}; "
            + "; ".join(f"{e} {v}" for e, v in versions.items())
            + f"; {a.records:,} records; {a.warmup} s warmup, {a.time} s measured", ""]
    text = "\n".join(head) + "\n" + tables(rows, a)
    with open(base + ".md", "w") as f:
        f.write(text)
    print()
    print(f"Raw results: {os.path.relpath(base, ROOT)}.csv")
    print()
    print(text)


if __name__ == "__main__":
    main()
