"""BenchBase's TPC-C for bench/tpcc.py: where its built distribution is,
the configuration file the script writes for it, its command lines, and
its figures read back from the files it writes.

BenchBase (https://github.com/cmu-db/benchbase) is run as it is, from
outside: one distribution per engine (`mvn clean package -P postgres`, then
`-P mariadb`, each target/benchbase-PROFILE.tgz unpacked), started from its
own directory (it reads config/plugin.xml relative to it). Its tables have
dbsweep's names (warehouse, customer, …), so they live in a database of
their own, `benchbase`, on the same server.

What the configuration sets, read from its source (the commit
bench/README.md names):
- the mix: <weights>10,10,1,1,1</weights>. Phase.chooseTransaction draws
  `nextInt((int) totalWeight) + 1` and walks the cumulative weights, so
  these weights draw 1..23 exactly as sysbench-tpcc's uniform(1, 23) does
  and dbsweep's --weights 10,10,1,1,1 deals them (BenchBase only warns that
  they do not add up to 100). Percentages would not do: 43.48,43.48,4.35,
  4.35,4.34 are drawn as 1..100 against 43.48, 86.96, … — 43/43/5/4/5 %.
- no waits: <rate>unlimited</rate> (no work queue: each terminal runs its
  next transaction at once) and no pre-/postExecutionWait (its PostgreSQL
  sample configuration ships the spec's keying and think times commented
  out).
- isolation: RR on MariaDB, RC on PostgreSQL, as sysbench-tpcc's
  --trx_level and dbsweep's server defaults (BenchBase's own default is
  SERIALIZABLE).
- the loader: <loaderThreads> = --load-threads, <batchsize> 128 (its
  default; rows per JDBC batch), the JDBC URLs of its sample
  configurations (PostgreSQL with reWriteBatchedInserts, MariaDB with
  useServerPrepStmts).
"""

import datetime
import json
import os
import re
import urllib.parse
import xml.sax.saxutils
import zipfile

DB = "benchbase"
TABLES = ["warehouse", "district", "customer", "history", "item", "stock", "oorder",
          "new_order", "order_line"]
ISOLATION = {"mariadb": "TRANSACTION_REPEATABLE_READ", "postgres": "TRANSACTION_READ_COMMITTED"}
WEIGHTS = "10,10,1,1,1"
TYPES = ["NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel"]
# ThreadBench's log line when the warmup ends and the measured window
# starts: the client CPU is read from there.
MEASURE_LINE = "Warmup complete, starting measurements"
DRIVER = {"mariadb": ("org.mariadb.jdbc.Driver", "mariadb-java-client"),
          "postgres": ("org.postgresql.Driver", "postgresql")}


def dist(root, engine):
    """The distribution for engine under root: root itself if it is one
    with the engine's JDBC driver, else root/benchbase-ENGINE or
    root/target/benchbase-ENGINE. None when there is none."""
    for d in (root, os.path.join(root, f"benchbase-{engine}"),
              os.path.join(root, "target", f"benchbase-{engine}")):
        lib = os.path.join(d, "lib")
        if (os.path.exists(os.path.join(d, "benchbase.jar")) and os.path.isdir(lib)
                and any(f.startswith(DRIVER[engine][1] + "-") for f in os.listdir(lib))):
            return d
    return None


def check(root, engines):
    """Every engine's distribution, {engine: dir}; ValueError naming what
    is missing and how to build it."""
    out = {}
    for e in engines:
        d = dist(root, e)
        if d is None:
            raise ValueError(
                f"--benchbase {root}: no BenchBase distribution for {e} (benchbase.jar and "
                f"lib/{DRIVER[e][1]}-*.jar) in it, in {root}/benchbase-{e} or "
                f"{root}/target/benchbase-{e}: build it with `mvn clean package -P {e} "
                f"-DskipTests` and unpack target/benchbase-{e}.tgz there")
        out[e] = d
    return out


def revision(dirs, given):
    """The commit the distributions were built from: their jar's
    git.properties (written when built from a git checkout), else --benchbase-rev."""
    for d in dirs.values():
        try:
            with zipfile.ZipFile(os.path.join(d, "benchbase.jar")) as z:
                props = z.read("git.properties").decode()
        except (OSError, KeyError, zipfile.BadZipFile):
            continue
        m = re.search(r"git\.commit\.id\.abbrev=(\S+)", props)
        if m:
            return m.group(1)
    return given or "(not built from a git checkout: give --benchbase-rev)"


def db_url(url):
    """dbsweep's URL for the server, on BenchBase's database."""
    u = urllib.parse.urlparse(url)
    return urllib.parse.urlunparse(u._replace(path="/" + DB))


def reset_db(query, engine, url):
    """BenchBase's database, dropped and created empty (query: the
    script's one-statement client, on dbsweep's database)."""
    query(engine, url, f"DROP DATABASE IF EXISTS {DB}")
    query(engine, url, f"CREATE DATABASE {DB}")


def config(engine, url, warehouses, terminals, load_threads, warmup, secs, bench="tpcc",
           weights=WEIGHTS, types=TYPES):
    """BenchBase's configuration file for the server at url (dbsweep's
    URL): the text of its XML. `warehouses` is its <scalefactor>; another
    benchmark (bench, its weights and transaction types) the same way."""
    u = urllib.parse.urlparse(url)
    if engine == "mariadb":
        jdbc = f"jdbc:mariadb://{u.hostname}:{u.port}/{DB}?useServerPrepStmts"
    else:
        jdbc = (f"jdbc:postgresql://{u.hostname}:{u.port}/{DB}?sslmode=disable"
                f"&ApplicationName={bench}&reWriteBatchedInserts=true")

    def esc(s):
        return xml.sax.saxutils.escape(urllib.parse.unquote(s or ""))
    types = "".join(f"        <transactiontype><name>{t}</name></transactiontype>\n"
                    for t in types)
    return f"""<?xml version="1.0"?>
<parameters>
    <type>{engine.upper()}</type>
    <driver>{DRIVER[engine][0]}</driver>
    <url>{esc(jdbc)}</url>
    <username>{esc(u.username)}</username>
    <password>{esc(u.password)}</password>
    <isolation>{ISOLATION[engine]}</isolation>
    <batchsize>128</batchsize>
    <loaderThreads>{load_threads}</loaderThreads>
    <scalefactor>{warehouses}</scalefactor>
    <terminals>{terminals}</terminals>
    <works>
        <work>
            <warmup>{warmup}</warmup>
            <time>{secs}</time>
            <rate>unlimited</rate>
            <weights>{weights}</weights>
        </work>
    </works>
    <transactiontypes>
{types}    </transactiontypes>
</parameters>
"""


def argv(d, cfg, resdir, load, bench="tpcc"):
    """`java -jar benchbase.jar` for the prepare (--create --load) or the
    run (--execute), its files written to resdir."""
    steps = (["--create=true", "--load=true", "--execute=false"] if load
             else ["--create=false", "--load=false", "--execute=true"])
    return ["java", "-jar", os.path.join(d, "benchbase.jar"), "-b", bench, "-c", cfg, *steps,
            "-d", resdir, "--json-histograms", os.path.join(resdir, "histograms.json")]


def write_config(workdir, name, text):
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def load_errors(out):
    """BenchBase's loader logs a failed batch and goes on (TPCCLoader
    catches the SQLException), so its exit status does not tell: its
    [ERROR] lines."""
    return [x for x in out.splitlines() if x.startswith("[ERROR]")]


def check_load(query, engine, url, warehouses):
    """What is wrong with the loaded tables, or None: the rows of the
    tables whose sizes the spec fixes."""
    want = {"item": 100000, "warehouse": warehouses, "district": 10 * warehouses,
            "stock": 100000 * warehouses, "customer": 30000 * warehouses,
            "oorder": 30000 * warehouses}
    bad = []
    for t, n in want.items():
        got = int(query(engine, db_url(url), f"SELECT count(*) FROM {t}"))
        if got != n:
            bad.append(f"{t} has {got} rows, not {n}")
    return "; ".join(bad) or None


def _type(key):
    """'com.oltpbenchmark.benchmarks.tpcc.procedures.NewOrder/01' -> 'NewOrder'."""
    return key.split("/")[0].rsplit(".", 1)[-1]


def parse_run(resdir, run_s):
    """The run's figures from the files BenchBase wrote to resdir, or None.

    Its summary's "Measured Requests" are the transactions that started
    and ended inside the measured window ("Elapsed Time"), whatever their
    outcome (Worker.run records a latency when the state was MEASURE
    before and after). The outcomes come from its histograms (the
    --json-histograms file), which cover the whole run, warmup included
    (Worker.doWork counts every attempt): a New-Order aborted on its
    unused item is a completed transaction, as the other tools count it;
    other aborts (a Delivery whose DELETE found its NEW_ORDER row gone)
    and unexpected errors are failures, and their share of the run's
    outcomes is taken out of the window's requests. Its own "Goodput"
    divides the whole run's successes by the window, so it is not used."""
    try:
        names = os.listdir(resdir)
        summary = next(n for n in names if n.endswith(".summary.json"))
        with open(os.path.join(resdir, summary)) as f:
            s = json.load(f)
        with open(os.path.join(resdir, "histograms.json")) as f:
            h = json.load(f)
    except (OSError, StopIteration, ValueError):
        return None

    def counts(kind):
        return {_type(k): v for k, v in (h.get(kind) or {}).get("HISTOGRAM", {}).items()}
    done, aborted = counts("completed"), counts("aborted")
    rejected, unexpected = counts("rejected"), counts("unexpected")
    rolled_back = aborted.get("NewOrder", 0)
    failed = sum(aborted.values()) - rolled_back + sum(unexpected.values())
    outcomes = sum(done.values()) + sum(aborted.values()) + sum(unexpected.values())
    window_s = s["Elapsed Time (nanoseconds)"] / 1e9
    requests = s["Measured Requests"]
    ok_share = 1 - failed / outcomes if outcomes else 1.0
    txns = requests * ok_share
    mix = {}
    raw = next((n for n in names if n.endswith(".raw.csv")), None)
    if raw:
        with open(os.path.join(resdir, raw)) as f:
            next(f, None)
            for line in f:
                name = line.split(",", 2)[1]
                mix[name] = mix.get(name, 0) + 1
    n = sum(mix.values())
    why = [f"{t} aborted {k}" for t, k in aborted.items() if k and t != "NewOrder"]
    why += [f"{t} unexpected error {k}" for t, k in unexpected.items() if k]
    return dict(tps=txns / window_s, window_s=round(window_s, 3), transactions=round(txns),
                errors_per_s=(sum(rejected.values()) + failed) / max(run_s, 1e-9),
                retries=sum(rejected.values()), failed=failed, rolled_back=rolled_back,
                transactions_all=outcomes, requests=requests,
                new_order_pct=round(100 * mix.get("NewOrder", 0) / n, 2) if n else None,
                failures="; ".join(why) or None)


# log4j's time stamp in BenchBase's lines: "[INFO ] 2026-11-26 07:37:00,123 [main] …"
STAMP = re.compile(r"^\[\w+\s*\] (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")


def load_seconds(out):
    """Its own time from "Loading data into TPCC database..." to "Finished
    loading data into …" (the load without the JVM's start and the DDL),
    from its log's time stamps; None without them."""
    marks = {}
    for line in out.splitlines():
        m = STAMP.match(line)
        if not m:
            continue
        t = (datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").timestamp()
             + int(m.group(2)) / 1000)
        if "Loading data into" in line:
            marks.setdefault("start", t)
        elif "Finished loading data into" in line:
            marks["end"] = t
    if "start" in marks and "end" in marks:
        return marks["end"] - marks["start"]
    return None
