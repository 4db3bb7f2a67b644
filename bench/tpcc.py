#!/usr/bin/env python3
"""TPC-C against sysbench-tpcc and BenchBase: dbsweep's `tpcc` workload,
Percona-Lab's sysbench-tpcc (tpcc.lua, run as it is on the system's sysbench
1.0) and CMU's BenchBase (its `tpcc`, run as it is from its built
distribution; bench/tpcc_benchbase.py), either or both, side by side on the
same scratch servers, interleaved pair by pair (BenchBase, sysbench-tpcc,
then dbsweep, then again) so that the machine's drift hits all alike. What
follows says "sysbench-tpcc"; BenchBase takes the same steps, and what it
sets equal and what differs is in tpcc_benchbase.py and bench/README.md.

Two figures per server (MariaDB and PostgreSQL, each started by this script
with `dbsweep server start KIND --port P --dir D`, one server at a time):

prepare  The time to load W warehouses (default 10): `sysbench tpcc.lua
         --scale=W prepare` and `dbsweep prepare tpcc --warehouses W`, both
         with the same number of loaders (--load-threads, default the
         machine's CPUs), each after dropping its own tables; then, on the
         same server, the floor: dbsweep's nine freshly loaded tables copied
         by the server itself (`INSERT INTO copy SELECT * FROM table` on
         --load-threads connections, the tables shared out by size, then the
         primary keys on PostgreSQL, where dbsweep also builds them after the
         data, and the two secondary indexes) — no client, no network, no
         parsing, as bench/dbt1.py measures the floor of DBT-1's load.
         Goals: dbsweep ≤ 0.5 × sysbench-tpcc's time, and ≤ 1.25 × the floor.
         sysbench-tpcc's prepare sleeps 30 s between creating its tables and
         loading them ("Waiting on tables 30 sec"): the table gives its time
         as measured and without that sleep, and the ratio for both.

run      Throughput at 8 and 64 connections (--connections) in no-wait mode
         on the data the last prepare pair left (sysbench-tpcc's and
         dbsweep's tables live side by side in the same database,
         BenchBase's in a database of its own; the servers' caches are sized
         for all three), each run --warmup s of load then --time s measured. Beside
         each tool's transactions per second, its client CPU per
         transaction: utime + stime of the client process from
         /proc/PID/stat, read once the warmup is over and again just before
         the window ends (1 s inside both ends), divided by the window's
         transactions per second. Goal: dbsweep ≥ 1.0 × sysbench-tpcc's
         throughput.

What is set equal. sysbench-tpcc has no think or keying time and draws each
transaction's warehouse and district at random: dbsweep runs with --no-wait
--all-warehouses. Its mix draws a number from 1..23 per transaction:
New-Order 1–10 (43.5 %), Payment 11–20 (43.5 %), Order-Status 21,
Delivery 22, Stock-Level 23 (4.3 % each): dbsweep runs with --weights
10,10,1,1,1 (a deck of 23 cards per terminal, so the same shares, met
exactly every 23 transactions of a terminal where sysbench-tpcc meets them
on average; the spec's deck is 45,43,4,4,4). Delivery runs inline in both
(one transaction over the ten districts). --scale=W --tables=1 for
sysbench-tpcc, --warehouses W for dbsweep; --threads=C and --threads C.
Isolation: sysbench-tpcc's --trx_level sets its session's level; dbsweep
leaves the server's default, so --trx_level=RR on MariaDB (REPEATABLE READ,
both tools) and RC on PostgreSQL (READ COMMITTED, both; sysbench-tpcc's own
default RR would give it PostgreSQL's snapshot isolation and its
serialization failures). --use_fk=0: dbsweep declares no foreign keys. Both
count every completed transaction, a rolled-back New-Order (about 1 %)
included: sysbench-tpcc counts it as an event and an "ignored error",
dbsweep as a `new_order_rollback`. Deadlocks are retried by both
(sysbench-tpcc restarts the event; dbsweep retries with fresh inputs).

What differs, as sysbench-tpcc is (read from its tpcc_run.lua and
tpcc_common.lua): its other_ware() loops until it draws the home
warehouse, so its 1 % remote New-Order lines and 15 % remote Payments stay
in the home warehouse (dbsweep's go to another); its New-Order updates only
S_QUANTITY (dbsweep also S_YTD, S_ORDER_CNT, S_REMOTE_CNT) and its
rollback falls on the second-to-last line; its Payment leaves
C_PAYMENT_CNT; its Order-Status reads the lines of order number D_ID, not
the customer's last order (an argument out of place in its format call);
it sends SQL text with literals, where dbsweep uses server-side prepared
statements (`--dbsweep-args="--db-ps-mode disable"` gives dbsweep
sysbench's protocol). Its data is not the spec's (strings of one repeated
letter, e.g.), and it creates its indexes before loading, with four more
secondary indexes than dbsweep's two (stock by item, order_line by supply
warehouse and item, history by customer and by district).

Getting sysbench-tpcc (not part of this repository):
    git clone https://github.com/Percona-Lab/sysbench-tpcc /tmp/sysbench-tpcc
or from a bare mirror of it:
    mkdir /tmp/sysbench-tpcc
    git --git-dir=MIRROR archive HEAD | tar -x -C /tmp/sysbench-tpcc

Usage:
    bench/tpcc.py [--sysbench-tpcc DIR] [--benchbase DIR]
                  [--engines mariadb,postgres] [--part prepare,run] [--warehouses 10] [--pairs 3]
                  [--connections 8,64] [--time 60] [--warmup 10]
                  [--load-threads N] [--port 55500] [--dbsweep BINARY]
                  [--dbsweep-args ARGS] [--set KIND:NAME=VALUE] [--settle 30]
                  [--sysbench-tpcc-rev COMMIT] [--benchbase-rev COMMIT]
                  [--quick]

Example (the measurement, on a quiet machine; about 45 minutes):
    bench/tpcc.py --sysbench-tpcc /tmp/sysbench-tpcc --pairs 3
    bench/tpcc.py --benchbase /tmp/bb-dist --pairs 3
A smoke run (2 warehouses, 1 pair, 10 s runs; its figures mean nothing):
    bench/tpcc.py --sysbench-tpcc /tmp/sysbench-tpcc --quick

Needs the README's set-up plus `apt-get install sysbench` for sysbench-tpcc,
a Java runtime for BenchBase (17 for its commit 65322e95), and the mysql and
psql clients, for the floor. Builds the release binary first unless
--dbsweep names one (or --no-build). Writes
bench/results/tpcc-<date>.csv (one row per run) and .md (medians, ratios
of the medians, per-pair ratio ranges), and prints the tables.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402
import dbt1  # noqa: E402
import tpcc_benchbase as bb  # noqa: E402
from tpcc_tables import tables  # noqa: E402

ROOT = c.ROOT
TICK = os.sysconf("SC_CLK_TCK")

# sysbench-tpcc's mix (tpcc.lua's event(): uniform(1, 23)) as dbsweep's deck.
WEIGHTS = "10,10,1,1,1"
# The session isolation dbsweep runs at (the server's default), in
# sysbench-tpcc's words.
TRX_LEVEL = {"mariadb": "RR", "postgres": "RC"}
# Room for the three tools' tables at 10 warehouses (about 1 GB each) in
# the server's cache; dbsweep's base settings give 1 GB.
SETTINGS = {"mariadb": ["innodb_buffer_pool_size=4G"], "postgres": ["shared_buffers=4GB"]}
# What sysbench-tpcc's prepare sleeps between creating tables and loading.
SB_SLEEP_S = 30.0

# dbsweep's tables (src/workload/tpcc/schema.rs): primary key, secondary
# indexes built after the load.
TABLES = {
    "warehouse": ("w_id", []),
    "district": ("d_w_id, d_id", []),
    "customer": ("c_w_id, c_d_id, c_id", [("customer_name", "c_w_id, c_d_id, c_last, c_first")]),
    "history": (None, []),
    "item": ("i_id", []),
    "stock": ("s_w_id, s_i_id", []),
    "orders": ("o_w_id, o_d_id, o_id", [("orders_customer", "o_w_id, o_d_id, o_c_id, o_id")]),
    "new_order": ("no_w_id, no_d_id, no_o_id", []),
    "order_line": ("ol_w_id, ol_d_id, ol_o_id, ol_number", []),
}
# Their sizes, MB per warehouse (the items: in all), roughly: rows × bytes.
EST_MB = {"stock": 32, "order_line": 21, "customer": 20, "history": 1.5, "orders": 1.2,
          "new_order": 0.2, "item": 8, "district": 0.01, "warehouse": 0.001}
# sysbench-tpcc's tables with --tables=1.
SB_TABLES = ["warehouse1", "district1", "customer1", "history1", "item1", "stock1", "orders1",
             "new_orders1", "order_line1"]


# ---------------------------------------------------------------- servers


def server_start(kind, workdir, port, settings):
    argv = [c.DBSWEEP, "server", "start", kind, "--dir", os.path.join(workdir, kind),
            "--port", str(port)]
    for s in settings:
        argv += ["--set", s]
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"could not start {kind}: {r.stderr.strip()[-1000:]}")
    return r.stdout.strip().splitlines()[-1]


def server_stop(kind, workdir):
    subprocess.run([c.DBSWEEP, "server", "stop", "--dir", os.path.join(workdir, kind)],
                   capture_output=True)


def query(engine, url, sql):
    """One statement through the server's own client; its output's text."""
    p = c.parts(url)
    if engine == "mariadb":
        argv = ["mysql", "-N", "-B", "-h", p["host"], "-P", p["port"], "-u", p["user"],
                "-e", sql, p["db"]]
        env = dict(os.environ, MYSQL_PWD=p["password"])
    else:
        argv = ["psql", "-tAq", "-v", "ON_ERROR_STOP=1", "-h", p["host"], "-p", p["port"],
                "-U", p["user"], "-c", sql, p["db"]]
        env = dict(os.environ, PGPASSWORD=p["password"])
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{engine}: {sql[:80]}: {r.stderr.strip()[-500:]}")
    return r.stdout.strip()


def table_sizes(engine, url, tables):
    """{table: bytes with its indexes} as the server's catalog gives them
    (InnoDB's: estimates from its statistics)."""
    names = ", ".join(f"'{t}'" for t in tables)
    if engine == "mariadb":
        # Fresh statistics first: InnoDB refreshes them in the background.
        query(engine, url, "ANALYZE TABLE " + ", ".join(tables))
        sql = ("SELECT table_name, data_length + index_length FROM information_schema.tables "
               f"WHERE table_schema = DATABASE() AND table_name IN ({names})")
    else:
        sql = ("SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relkind = 'r' "
               f"AND relnamespace = 'public'::regnamespace AND relname IN ({names})")
    out = {}
    for line in query(engine, url, sql).splitlines():
        name, _, size = line.replace("|", "\t").partition("\t")
        out[name.strip()] = int(size.strip() or 0)
    return out


# ---------------------------------------------------------------- the tools


def sb_argv(args, engine, url, command, threads, extra=()):
    """sysbench-tpcc's command line, run from its directory (tpcc.lua
    requires its tpcc_*.lua from the current directory)."""
    p = c.parts(url)
    drv = "mysql" if engine == "mariadb" else "pgsql"
    return ["sysbench", "tpcc.lua", f"--db-driver={drv}", f"--{drv}-host={p['host']}",
            f"--{drv}-port={p['port']}", f"--{drv}-user={p['user']}",
            f"--{drv}-password={p['password']}", f"--{drv}-db={p['db']}",
            f"--scale={args.warehouses}", "--tables=1", "--use_fk=0",
            f"--trx_level={TRX_LEVEL[engine]}", f"--threads={threads}", *extra, command]


def sb_cleanup(args, engine, url):
    subprocess.run(sb_argv(args, engine, url, "cleanup", 1), cwd=args.sysbench_tpcc,
                   capture_output=True)


def db_cleanup(args, url):
    subprocess.run([args.dbsweep, "cleanup", "tpcc", "--db", url], capture_output=True)


def settle(args):
    """Waits (up to --settle s) until the machine is at least 75 % idle, so
    that each run starts as quiet as the last (bench/clients.py)."""
    c.settle(args.settle)


def tail(out, n=4):
    """Why a tool failed: its FATAL/ERROR lines if it printed any, else its
    last lines."""
    lines = [x.strip() for x in out.strip().splitlines() if x.strip()]
    why = [x for x in lines if re.search(r"FATAL|ERROR|error", x)]
    return " / ".join((why or lines)[-n:])


def proc_cpu(pid):
    """utime + stime of process pid (all its threads), seconds; None when
    it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def run_sampled(argv, marks, timeout, cwd=None, env=None, anchor=None):
    """Runs argv, reading its CPU from /proc at `marks` (seconds after the
    start, or after the first output line holding `anchor` when given).
    Returns (rc, output, wall s, total CPU s from its rusage, [(t, cpu s)
    per mark reached while it ran])."""
    with tempfile.TemporaryFile() as f:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, cwd=cwd, env=env)
        samples = []
        pending = sorted(marks)
        zero = None if anchor else 0.0
        seen, tail_ = 0, b""

        def exited():
            # Not reaped (WNOWAIT): /proc/PID stays readable until wait4.
            return os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None

        while not exited():
            now = time.monotonic() - t0
            if zero is None:
                # The child shares the file's offset: read with pread.
                chunk = os.pread(f.fileno(), 1 << 16, seen)
                seen += len(chunk)
                tail_ += chunk
                if anchor.encode() in tail_:
                    zero = now
                tail_ = tail_[-len(anchor):]
            elif pending and now - zero >= pending[0]:
                pending.pop(0)
                cpu = proc_cpu(p.pid)
                if cpu is not None:
                    samples.append((now, cpu))
            if now > timeout:
                p.kill()
            time.sleep(0.05)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        f.seek(0)
        out = f.read().decode(errors="replace")
    return p.returncode, out, wall, ru.ru_utime + ru.ru_stime, samples


def cpu_rate(samples):
    """CPU seconds per second between the first and last sample."""
    if len(samples) < 2 or samples[-1][0] <= samples[0][0]:
        return None
    (ta, ca), (tb, cb) = samples[0], samples[-1]
    return (cb - ca) / (tb - ta)


# sysbench.report_default's line (its Lua prints "err/s N", the C one "err/s: N").
SB_INTERVAL = re.compile(r"\[\s*(\d+)s \] thds: \d+ tps: ([\d.]+) qps: ([\d.]+).*?"
                         r"err/s:? ([\d.]+)")


def parse_sb_run(out, warmup, secs):
    """The window's figures from sysbench's per-second reports (its 1.0
    has no warmup option: the run lasts warmup + time and the first
    `warmup` seconds are left out)."""
    win = [(float(tps), float(err)) for t, tps, _, err in SB_INTERVAL.findall(out)
           if warmup < int(t) <= warmup + secs]
    if not win:
        return None
    total = re.search(r"transactions:\s+(\d+)", out)
    ignored = re.search(r"ignored errors:\s+(\d+)", out)
    return dict(tps=statistics.mean(x for x, _ in win), window_s=len(win),
                transactions=round(sum(x for x, _ in win)),
                errors_per_s=statistics.mean(e for _, e in win),
                transactions_all=int(total.group(1)) if total else None,
                ignored_errors_all=int(ignored.group(1)) if ignored else None)


def parse_db_run(path):
    try:
        with open(path) as f:
            r = json.load(f)["result"]
    except (OSError, ValueError, KeyError):
        return None
    types = {t["name"]: t["count"] for t in r.get("transaction_types", [])}
    errors = r.get("errors") or {}
    return dict(tps=r["tps"], window_s=r["measured_s"], transactions=r["transactions"],
                errors_per_s=sum(errors.values()) / max(r["measured_s"], 1e-9),
                retries=r.get("retries"), failed=r.get("failed_transactions"),
                rolled_back=types.get("new_order_rollback"),
                own_cpu_us=(r.get("client_cpu") or {}).get("us_per_transaction"))


# ---------------------------------------------------------------- prepare


def floor(args, engine, url):
    """The server's own time to build dbsweep's loaded tables again: empty
    copies (MariaDB: with the primary key, InnoDB's table itself),
    `INSERT … SELECT` of every table on --load-threads connections, the
    tables shared out largest first, then (PostgreSQL) the primary keys and
    the secondary indexes on the copies. Seconds."""
    start, run = dbt1.sql_runner(engine, url)
    setup = ""
    for t, (_, ixs) in TABLES.items():
        setup += f"DROP TABLE IF EXISTS {t}_f;\n"
        if engine == "mariadb":
            setup += f"CREATE TABLE {t}_f LIKE {t};\n"
            setup += "".join(f"ALTER TABLE {t}_f DROP INDEX {name};\n" for name, _ in ixs)
        else:
            setup += f"CREATE TABLE {t}_f (LIKE {t});\n"
    run(setup)
    # Shared out by their expected sizes (the catalog's figures lag a
    # fresh load on MariaDB), so that every pair splits the same way.
    sizes = {t: mb * (1 if t == "item" else args.warehouses) for t, mb in EST_MB.items()}
    groups = [[] for _ in range(max(1, args.load_threads))]
    load = [0] * len(groups)
    for t in sorted(TABLES, key=lambda t: -sizes.get(t, 0)):
        i = load.index(min(load))
        groups[i].append(t)
        load[i] += sizes.get(t, 0)
    scripts = []
    for g in groups:
        s = ""
        for t in g:
            pk, ixs = TABLES[t]
            s += f"INSERT INTO {t}_f SELECT * FROM {t};\n"
            if engine == "postgres" and pk:
                s += f"ALTER TABLE {t}_f ADD PRIMARY KEY ({pk});\n"
            s += "".join(f"CREATE INDEX {name}_f ON {t}_f ({cols});\n" for name, cols in ixs)
        if s:
            scripts.append(s)
    t0 = time.monotonic()
    procs = []
    for s in scripts:
        p = start(s)
        p.stdin.write(s)
        p.stdin.close()
        procs.append(p)
    for p in procs:
        p.wait()
    took = time.monotonic() - t0
    for p in procs:
        if p.returncode != 0:
            raise SystemExit(f"{engine} floor: {p.stderr.read()[-500:]}")
    run("".join(f"DROP TABLE {t}_f;\n" for t in TABLES))
    return took


def bb_load(args, engine, url, workdir):
    """BenchBase's prepare into its emptied database: its `--create=true
    --load=true`, timed. Returns (row fields, error or None)."""
    d = args.bb_dirs[engine]
    cfg = bb.write_config(workdir, "benchbase-load.xml", bb.config(
        engine, url, args.warehouses, 1, args.load_threads, 0, 1))
    resdir = os.path.join(workdir, "benchbase-load")
    rc, out, wall, cpu, _ = run_sampled(bb.argv(d, cfg, resdir, load=True), [], timeout=7200,
                                        cwd=d)
    row = dict(seconds=round(wall, 3), client_cpu_s=round(cpu, 3))
    own = bb.load_seconds(out)
    if own is not None:
        row["seconds_own"] = round(own, 3)
    if rc != 0:
        return row, f"exit {rc}: {tail(out)}"
    errors = bb.load_errors(out)
    if errors:
        return row, "its loader logged: " + " / ".join(errors[-3:])[-500:]
    return row, bb.check_load(query, engine, url, args.warehouses)


def prepare_part(args, engine, url, record, workdir):
    for pair in range(1, args.pairs + 1):
        # Every tool's tables dropped before any of them loads, so that
        # each loads on a server holding the same.
        if args.benchbase:
            bb.reset_db(query, engine, url)
        if args.sysbench_tpcc:
            sb_cleanup(args, engine, url)
        db_cleanup(args, url)
        if args.benchbase:
            settle(args)
            fields, error = bb_load(args, engine, url, workdir)
            row = dict(engine=engine, part="prepare", pair=pair, tool="benchbase",
                       ok=int(error is None), **fields)
            if error:
                row["error"] = error
            else:
                row["size_mb"] = round(sum(table_sizes(engine, bb.db_url(url), bb.TABLES)
                                           .values()) / 1e6, 1)
            record(row)

        if args.sysbench_tpcc:
            settle(args)
            rc, out, wall, cpu, _ = run_sampled(
                sb_argv(args, engine, url, "prepare", args.load_threads), [], timeout=7200,
                cwd=args.sysbench_tpcc)
            row = dict(engine=engine, part="prepare", pair=pair, tool="sysbench-tpcc",
                       ok=int(rc == 0), seconds=round(wall, 3),
                       seconds_less_sleep=round(wall - SB_SLEEP_S, 3),
                       client_cpu_s=round(cpu, 3))
            if rc == 0:
                row["size_mb"] = round(sum(table_sizes(engine, url, SB_TABLES).values()) / 1e6,
                                       1)
            else:
                row["error"] = f"exit {rc}: {tail(out)}"
            record(row)

        settle(args)
        rc, out, wall, cpu, _ = run_sampled(
            [args.dbsweep, "prepare", "tpcc", "--db", url, f"--warehouses={args.warehouses}",
             f"--threads={args.load_threads}"], [], timeout=7200)
        row = dict(engine=engine, part="prepare", pair=pair, tool="dbsweep", ok=int(rc == 0),
                   seconds=round(wall, 3), client_cpu_s=round(cpu, 3))
        if rc != 0:
            row["error"] = f"exit {rc}: {tail(out)}"
            record(row)
            continue
        row["size_mb"] = round(sum(table_sizes(engine, url, TABLES).values()) / 1e6, 1)
        record(row)

        settle(args)
        record(dict(engine=engine, part="prepare", pair=pair, tool="floor", ok=1,
                    seconds=round(floor(args, engine, url), 3)))


def ensure_loaded(args, engine, url, workdir):
    """Without the prepare part: every tool's tables, loaded once (untimed)."""
    if args.benchbase:
        bb.reset_db(query, engine, url)
        _, error = bb_load(args, engine, url, workdir)
        if error:
            print(f"  BenchBase prepare failed: {error}")
    if args.sysbench_tpcc:
        sb_cleanup(args, engine, url)
        r = subprocess.run(sb_argv(args, engine, url, "prepare", args.load_threads),
                           cwd=args.sysbench_tpcc, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"  sysbench-tpcc prepare failed (exit {r.returncode}): "
                  f"{tail(r.stdout + r.stderr)}")
    db_cleanup(args, url)
    subprocess.run([args.dbsweep, "prepare", "tpcc", "--db", url,
                    f"--warehouses={args.warehouses}", f"--threads={args.load_threads}"],
                   check=True, capture_output=True)


# ---------------------------------------------------------------- run


def tool_run(args, tool, engine, url, conns, workdir):
    """One tool's run at conns connections: (argv, cwd, CPU marks, the
    marks' anchor, a function reading its figures once it exited 0)."""
    secs, warmup = args.time, args.warmup
    # The CPU window: 1 s inside the load's steady part.
    inner = [1, secs - 1] if secs > 3 else [0, secs]
    if tool == "benchbase":
        d = args.bb_dirs[engine]
        resdir = os.path.join(workdir, "benchbase-run")
        shutil.rmtree(resdir, ignore_errors=True)
        cfg = bb.write_config(workdir, "benchbase-run.xml", bb.config(
            engine, url, args.warehouses, conns, args.load_threads, warmup, secs))
        # The JVM's start and its terminals' connections come before its
        # warmup: the window is timed from its own "warmup complete" line.
        return (bb.argv(d, cfg, resdir, load=False), d, inner, bb.MEASURE_LINE,
                lambda out: bb.parse_run(resdir, warmup + secs))
    marks = [warmup + m for m in inner]
    if tool == "sysbench-tpcc":
        argv = sb_argv(args, engine, url, "run", conns,
                       [f"--time={warmup + secs}", "--report-interval=1"])
        return argv, args.sysbench_tpcc, marks, None, lambda out: parse_sb_run(out, warmup, secs)
    js = os.path.join(workdir, "run.json")
    if os.path.exists(js):
        os.remove(js)
    argv = [args.dbsweep, "run", "tpcc", "--db", url, f"--warehouses={args.warehouses}",
            f"--threads={conns}", "--no-wait", "--all-warehouses", f"--weights={WEIGHTS}",
            f"--warmup={warmup}", f"--time={secs}", "--json", js, *args.dbsweep_args.split()]
    if conns > 10 * args.warehouses:
        # More connections than the scale's terminals: one terminal each
        # (their homes do not matter with --all-warehouses).
        argv.append(f"--users={conns}")
    return argv, None, marks, None, lambda out: parse_db_run(js)


def run_part(args, engine, url, record, workdir):
    if engine == "postgres":
        # sysbench-tpcc's and BenchBase's tables have no statistics yet
        # (dbsweep analyses its own after the load): the same start for all.
        query(engine, url, "VACUUM ANALYZE")
        if args.benchbase:
            query(engine, bb.db_url(url), "VACUUM ANALYZE")
    env = dict(os.environ)
    for conns in args.connections:
        for pair in range(1, args.pairs + 1):
            for tool in args.tools:
                argv, cwd, marks, anchor, parse = tool_run(args, tool, engine, url, conns,
                                                           workdir)
                settle(args)
                rc, out, wall, cpu_all, samples = run_sampled(
                    argv, marks, timeout=args.warmup + args.time + 300, cwd=cwd, env=env,
                    anchor=anchor)
                r = parse(out) if rc == 0 else None
                rate = cpu_rate(samples)
                row = dict(engine=engine, part="run", pair=pair, tool=tool, connections=conns,
                           ok=int(r is not None), wall_s=round(wall, 3),
                           client_cpu_s=round(cpu_all, 3),
                           cpu_cores=None if rate is None else round(rate, 4))
                if r:
                    row.update({k: (round(v, 4) if isinstance(v, float) else v)
                                for k, v in r.items()})
                    if rate is not None and r["tps"] > 0:
                        row["cpu_us_per_txn"] = round(rate * 1e6 / r["tps"], 1)
                else:
                    why = tail(out) if rc else "no result in its output: " + tail(out, 2)
                    row["error"] = f"exit {rc}: {why}"
                record(row)


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sysbench-tpcc", metavar="DIR",
                    help="a checkout of Percona-Lab/sysbench-tpcc (holds tpcc.lua)")
    ap.add_argument("--sysbench-tpcc-rev", metavar="COMMIT",
                    help="the commit DIR holds, for the results when DIR is no git checkout")
    ap.add_argument("--benchbase", metavar="DIR",
                    help="BenchBase's built distributions: DIR/benchbase-ENGINE (or "
                    "DIR/target/benchbase-ENGINE, or DIR itself) per engine")
    ap.add_argument("--benchbase-rev", metavar="COMMIT",
                    help="the commit BenchBase was built from, for the results when its jar "
                    "does not say")
    ap.add_argument("--engines", default="mariadb,postgres")
    ap.add_argument("--part", default="prepare,run", help="prepare,run (default), or one of them")
    ap.add_argument("--warehouses", type=int, default=10)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--connections", default="8,64")
    ap.add_argument("--time", type=int, default=60, help="measured seconds of each run")
    ap.add_argument("--warmup", type=int, default=10, help="seconds of load before measuring")
    ap.add_argument("--load-threads", type=int, default=os.cpu_count() or 1,
                    help="loaders of every tool's prepare and the floor's connections")
    ap.add_argument("--port", type=int, default=55500,
                    help="MariaDB's port; PostgreSQL's is the next one")
    ap.add_argument("--dbsweep", metavar="BINARY",
                    help="the dbsweep to measure (default: this checkout's release build)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--dbsweep-args", default="", metavar="ARGS",
                    help="extra `dbsweep run` options, e.g. \"--db-ps-mode disable\"")
    ap.add_argument("--set", action="append", default=[], metavar="KIND:NAME=VALUE",
                    help="a server setting beyond the script's, e.g. mariadb:innodb_flush_log_at_trx_commit=2")
    ap.add_argument("--settle", type=float, default=30.0, metavar="S",
                    help="wait up to S s before each step for the machine to be 75 %% idle")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 2 warehouses, 1 pair, 2 s warmup, 10 s runs, 5 s settle")
    a = ap.parse_args()
    if a.quick:
        a.warehouses, a.pairs, a.warmup, a.time, a.settle = 2, 1, 2, 10, 5.0
    a.connections = [int(x) for x in a.connections.split(",")]
    engines = a.engines.split(",")
    for e in engines:
        if e not in SETTINGS:
            ap.error(f"--engines: unknown engine {e!r}: give mariadb, postgres or both")
    if not a.sysbench_tpcc and not a.benchbase:
        ap.error("nothing to compare dbsweep with: give --sysbench-tpcc DIR, --benchbase DIR "
                 "or both")
    # The order each pair runs them in.
    a.tools = [t for t, on in (("benchbase", a.benchbase), ("sysbench-tpcc", a.sysbench_tpcc),
                               ("dbsweep", True)) if on]
    progs = ["mysql", "psql"]
    if a.sysbench_tpcc:
        a.sysbench_tpcc = os.path.abspath(a.sysbench_tpcc)
        if not os.path.exists(os.path.join(a.sysbench_tpcc, "tpcc.lua")):
            sys.exit(f"no tpcc.lua in {a.sysbench_tpcc}: git clone "
                     "https://github.com/Percona-Lab/sysbench-tpcc there")
        progs.append("sysbench")
    if a.benchbase:
        a.benchbase = os.path.abspath(a.benchbase)
        try:
            a.bb_dirs = bb.check(a.benchbase, engines)
        except ValueError as e:
            ap.error(str(e))
        progs.append("java")
    for prog in progs:
        if not shutil.which(prog):
            sys.exit(f"{prog} not found (apt-get install sysbench mariadb-client "
                     "postgresql-client openjdk-17-jre-headless)")
    if a.dbsweep:
        a.dbsweep = os.path.abspath(a.dbsweep)
    else:
        a.dbsweep = c.DBSWEEP
        if not a.no_build:
            subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    # clients.py's and dbt1.py's helpers call this binary.
    c.DBSWEEP = dbt1.DBSWEEP = a.dbsweep
    parts = a.part.split(",")
    extra = {}
    for s in a.set:
        kind, _, kv = s.partition(":")
        extra.setdefault(kind, []).append(kv)

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    base = os.path.join(ROOT, "bench", "results", f"tpcc-{stamp}")
    fields = ["engine", "part", "pair", "tool", "connections", "ok", "seconds",
              "seconds_less_sleep", "seconds_own", "size_mb", "tps", "transactions", "window_s",
              "errors_per_s", "retries", "failed", "rolled_back", "transactions_all",
              "ignored_errors_all", "requests", "new_order_pct", "cpu_cores", "cpu_us_per_txn",
              "own_cpu_us", "client_cpu_s", "wall_s", "load1", "failures", "error"]
    rows = []

    def record(row):
        row["load1"] = round(os.getloadavg()[0], 2)
        rows.append(row)
        with open(base + ".csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
        shown = {k: v for k, v in row.items() if k not in ("engine", "part", "pair", "tool")}
        print(f"{row['engine']:8} {row['part']:7} pair {row['pair']} {row['tool']:13} {shown}",
              flush=True)

    workdir = tempfile.mkdtemp(prefix="dbsweep-tpcc-")
    os.chmod(workdir, 0o755)
    versions = {}
    try:
        for i, e in enumerate(engines):
            url = server_start(e, workdir, a.port + i, SETTINGS[e] + extra.get(e, []))
            print(f"{e}: {url}", flush=True)
            try:
                versions[e] = query(e, url, "SELECT version()").splitlines()[0].split(" on ")[0]
                if "prepare" in parts:
                    prepare_part(a, e, url, record, workdir)
                elif "run" in parts:
                    ensure_loaded(a, e, url, workdir)
                if "run" in parts:
                    run_part(a, e, url, record, workdir)
            finally:
                server_stop(e, workdir)
    finally:
        for e in engines:
            server_stop(e, workdir)
        shutil.rmtree(workdir, ignore_errors=True)

    tools = []
    if a.benchbase:
        tools.append(f"BenchBase {bb.revision(a.bb_dirs, a.benchbase_rev)}")
    if a.sysbench_tpcc:
        sb_rev = (subprocess.run(["git", "-C", a.sysbench_tpcc, "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True).stdout.strip()
                  or a.sysbench_tpcc_rev or "(not a git checkout: give --sysbench-tpcc-rev)")
        tools.append(f"sysbench-tpcc {sb_rev}")
    head = [f"# bench/tpcc.py {' '.join(sys.argv[1:])}", "",
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
            f"{os.cpu_count()} CPUs; " + "; ".join(tools) + "; "
            + "; ".join(f"{e} {v}" for e, v in versions.items())
            + f"; dbsweep run options: --no-wait --all-warehouses --weights {WEIGHTS} "
            + a.dbsweep_args, ""]
    text = "\n".join(head) + "\n" + tables(rows, a)
    with open(base + ".md", "w") as f:
        f.write(text)
    print()
    print(f"Raw results: {os.path.relpath(base, ROOT)}.csv")
    print()
    print(text)


if __name__ == "__main__":
    main()
