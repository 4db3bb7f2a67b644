#!/usr/bin/env python3
"""Many load machines: one run split over 3 Slurm nodes against the same
run from one process, and the cost of merging 64 shards' records.

Throughput: a Slurm cluster of three nodes on this machine (`lg1`-`lg3`,
one slurmd each, one CPU each, this script's own munge key and
slurm.conf in a scratch directory, as tests/slurm.rs starts it) and a
scratch PostgreSQL (`dbsweep server start postgres`). For each client
count (--clients, default 64 and 1024) and each of --pairs pairs, the same
`dbsweep run WORKLOAD --threads C` runs once as one process and once as
`--nodes 3 --launcher slurm` (its three shards on the three nodes), the
order alternating from pair to pair. Per run: the throughput, the shards'
largest start skew and clock offset (from the merged record), and the peak
resident set (VmHWM from /proc, read every 0.2 s) of the coordinator or
single process and of each worker. The table gives medians, the ratio of
the medians and the median and range of the per-pair ratios.

Merge cost: --merge-shards (64) shards of one run, `--shard I/64` with
`--report-interval 1` for --merge-time (60) seconds, run side by side
against the same server; then `dbsweep merge` of their 64 records, timed
--merge-repeats (3) times (wall and CPU, GNU time).

--pin: the server on CPU 1 (`dbsweep server start --cpus 1`), every
client process on CPU 0 (the run under `taskset -c 0`, its local workers
and Slurm's daemons with their tasks inheriting it): the clients and the
server no longer share a CPU, so a difference between one process and
three shards is the clients' own, not the server's share of the machine.

Usage:
    bench/nodes.py [--pairs 3] [--time 30] [--clients 64,1024] [--no-build]
                   [--launcher slurm|local] [--pin]
    bench/nodes.py --quick       # smoke run of the script (no meaning)

Needs root (Slurm's daemons) and Debian's slurm-wlm (installed with
apt-get when missing). Writes bench/results/nodes-<date>.csv and .md.
"""

import argparse
import csv
import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402  (the shared helpers of bench/clients.py)

ROOT = c.ROOT
NODES = ["lg1", "lg2", "lg3"]
# --pin: the clients' CPU and the server's.
CLIENT_CPU, SERVER_CPU = "0", "1"


class Cluster:
    """Three slurmd on this machine, started by their pids, stopped by them."""

    def __init__(self, pin=False):
        self.pin = pin
        if not os.path.exists("/usr/sbin/slurmctld"):
            subprocess.run(["apt-get", "install", "-y", "-q", "slurm-wlm"], check=True,
                           stdout=subprocess.DEVNULL)
        self.dir = tempfile.mkdtemp(prefix="dbsweep-bench-slurm-")
        os.chmod(self.dir, 0o755)
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.procs = []
        d = lambda f: os.path.join(self.dir, f)  # noqa: E731
        with open(d("munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(d("munge.key"), 0o400)
        self.socket = d("munge.socket")
        self.daemon("munged", ["munged", "--foreground", "--force", f"--key-file={d('munge.key')}",
                               f"--socket={self.socket}", f"--pid-file={d('munged.pid')}",
                               f"--log-file={d('munged.log')}", f"--seed-file={d('munged.seed')}"])
        self.wait("munged's socket", lambda: os.path.exists(self.socket))
        os.makedirs(d("state"))
        for n in NODES:
            os.makedirs(d(f"spool-{n}"))
        nodes = "".join(f"NodeName={n} NodeAddr=127.0.0.1 Port={17101 + i} CPUs=1 State=UNKNOWN\n"
                        for i, n in enumerate(NODES))
        host = socket.gethostname()
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=dbsweepbench
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort=17100
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.socket}
CredType=cred/munge
StateSaveLocation={d('state')}
SlurmdSpoolDir={self.dir}/spool-%n
SlurmctldPidFile={self.dir}/slurmctld.pid
SlurmdPidFile={self.dir}/slurmd-%n.pid
SlurmctldLogFile={self.dir}/slurmctld.log
SlurmdLogFile={self.dir}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/linear
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
MinJobAge=5
{nodes}PartitionName=lg Nodes=lg[1-3] Default=YES MaxTime=INFINITE State=UP
""")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.daemon("slurmctld", ["slurmctld", "-D", "-c", "-f", self.conf])
        for n in NODES:
            self.daemon(n, ["slurmd", "-D", "-N", n, "-f", self.conf])

        def idle():
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=self.env,
                                 capture_output=True, text=True).stdout
            return sum(1 for line in out.splitlines() if line.rstrip().endswith(" idle")) == 3
        self.wait("three idle Slurm nodes", idle)

    def daemon(self, name, argv):
        if self.pin:
            argv = ["taskset", "-c", CLIENT_CPU] + argv
        out = open(os.path.join(self.dir, f"{name}.out"), "w")
        self.procs.append((name, subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                                  stderr=subprocess.STDOUT,
                                                  env=dict(os.environ, SLURM_CONF=self.conf))))

    def wait(self, what, ready):
        until = time.monotonic() + 60
        while not ready():
            for name, p in self.procs:
                if p.poll() is not None:
                    sys.exit(f"{name} exited ({p.returncode}) while waiting for {what}; "
                             f"logs in {self.dir}")
            if time.monotonic() > until:
                sys.exit(f"no {what} after 60 s; logs in {self.dir}")
            time.sleep(0.2)

    def stop(self):
        for _, p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def hwm_kb(pid):
    """VmHWM (peak resident set) of `pid` in kB, or None once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def workers_now():
    """Pids of the `dbsweep worker` processes running now."""
    found = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        if len(cmd) > 1 and cmd[0].endswith(b"dbsweep") and cmd[1] == b"worker":
            found.append(int(e))
    return found


def one(url, a, clients, nodes, env, work, tag):
    """One run: (record's figures, the coordinator's peak RSS, each worker's)."""
    json_path = os.path.join(work, f"{tag}.json")
    argv = [c.DBSWEEP, "run", a.workload, "--db", url, f"--table-size={a.rows}", "--tables=1",
            f"--threads={clients}", f"--time={a.time}", f"--warmup={a.warmup}",
            "--json", json_path]
    argv += a.run_args.split()
    if nodes:
        argv += ["--nodes", str(nodes), "--launcher", a.launcher]
    if a.pin:
        argv = ["taskset", "-c", CLIENT_CPU] + argv
    c.settle()
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env=env)
    peak, workers = 0, {}
    err = []
    reader = threading.Thread(target=lambda: err.extend(p.stderr.readlines()), daemon=True)
    reader.start()
    while p.poll() is None:
        peak = max(peak, hwm_kb(p.pid) or 0)
        if nodes:
            for w in workers_now():
                workers[w] = max(workers.get(w, 0), hwm_kb(w) or 0)
        time.sleep(0.2)
    reader.join(5)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        print(f"  {tag}: exit {p.returncode}: {''.join(err[-5:])}", file=sys.stderr)
        return None
    with open(json_path) as f:
        r = json.load(f)["result"]
    row = dict(clients=clients, mode=f"{a.launcher} x{nodes}" if nodes else "1 process",
               tps=r["tps"], transactions=r["transactions"], wall_s=round(wall, 2),
               coordinator_rss_mb=round(peak / 1024, 1),
               worker_rss_mb=";".join(f"{v / 1024:.1f}" for v in sorted(workers.values())),
               client_cpu_us=(r.get("client_cpu") or {}).get("us_per_transaction"))
    # The server's CPU per transaction and the machine's busy share: what
    # sets throughput where the server, not the client, is the limit.
    figs = (r.get("metrics") or {}).get("figures") or {}
    for name, key in (("server_cpu_us_per_transaction", "server_cpu_us"),
                      ("cpu_busy_pct", "busy_pct"), ("client_cpu_pct", "client_pct"),
                      ("context_switches_per_transaction", "cs_per_txn")):
        v = (figs.get(name) or {}).get("value")
        row[key] = round(v, 1) if v is not None else None
    if nodes:
        sh = r["shards"]
        co = sh["coordinator"]
        row.update(max_start_skew_ms=round(co["max_start_skew_s"] * 1e3, 3),
                   max_clock_offset_ms=round(max(abs(x["clock_offset_s"]) for x in sh["rows"]) * 1e3, 3),
                   shard_tps=";".join(f"{x.get('tps', 0):.1f}" for x in sh["rows"]),
                   shard_nodes=";".join(str(x["node"]) for x in sh["rows"]))
    return row


def merge_cost(url, a, work):
    """Runs --merge-shards shards of one run side by side, then times `dbsweep merge`."""
    n = a.merge_shards
    d = os.path.join(work, "merge")
    os.makedirs(d, exist_ok=True)
    paths = [os.path.join(d, f"s{i}.json") for i in range(n)]
    c.settle()
    procs = [subprocess.Popen([c.DBSWEEP, "run", a.workload, "--db", url, f"--table-size={a.rows}",
                               "--tables=1", f"--threads={n}", f"--time={a.merge_time}",
                               "--rand-seed=7", f"--shard={i}/{n}", "--report-interval=1",
                               "--json", paths[i]],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for i in range(n)]
    for i, p in enumerate(procs):
        _, e = p.communicate()
        if p.returncode != 0:
            sys.exit(f"shard {i} of the merge input failed: {e.strip()[-400:]}")
    size = sum(os.path.getsize(x) for x in paths)
    rows = []
    for k in range(a.merge_repeats):
        out = os.path.join(d, f"merged-{k}.json")
        rc, text, wall, cpu, _, rss = c.measured([c.DBSWEEP, "merge", *paths, "--json", out])
        if rc != 0:
            sys.exit(f"dbsweep merge failed: {text[-400:]}")
        with open(out) as f:
            merged = json.load(f)["result"]
        rows.append(dict(shards=n, run_s=a.merge_time, records_mb=round(size / 1e6, 2),
                         merge_wall_s=round(wall, 3), merge_cpu_s=round(cpu, 3),
                         merge_rss_mb=round(rss / 1024, 1),
                         intervals=len(merged.get("intervals") or []),
                         transactions=merged["transactions"]))
        print(f"merge of {n} records ({size / 1e6:.1f} MB): {wall:.3f} s wall, {cpu:.3f} s CPU",
              flush=True)
    return rows


def summarise(rows, out):
    lines = ["| clients | 1 process tps | 3 Slurm shards tps | ratio of medians | per-pair ratio "
             "median (range) | max start skew ms | max clock offset ms | coordinator / single "
             "RSS MB | worker RSS MB |",
             "|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for cl in sorted({r["clients"] for r in rows}):
        one_p = [r for r in rows if r["clients"] == cl and r["mode"] == "1 process"]
        sl = [r for r in rows if r["clients"] == cl and r["mode"] != "1 process"]
        pairs = [(x["tps"], y["tps"]) for x, y in zip(one_p, sl)]
        ratios = [b / a for a, b in pairs if a]
        m1, m3 = c.median([r["tps"] for r in one_p]), c.median([r["tps"] for r in sl])
        rss_w = [float(v) for r in sl for v in r["worker_rss_mb"].split(";") if v]
        lines.append(
            f"| {cl} | {m1:.1f} | {m3:.1f} | {m3 / m1:.3f} | {c.median(ratios):.3f} "
            f"({min(ratios):.3f}–{max(ratios):.3f}) | "
            f"{c.median([r['max_start_skew_ms'] for r in sl]):.2f} "
            f"(max {max(r['max_start_skew_ms'] for r in sl):.2f}) | "
            f"{c.median([r['max_clock_offset_ms'] for r in sl]):.3f} | "
            f"{c.median([r['coordinator_rss_mb'] for r in sl]):.1f} / "
            f"{c.median([r['coordinator_rss_mb'] for r in one_p]):.1f} | "
            f"{min(rss_w):.1f}–{max(rss_w):.1f} |")
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--time", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--clients", default="64,1024")
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--workload", default="oltp_read_only")
    ap.add_argument("--merge-shards", type=int, default=64)
    ap.add_argument("--merge-time", type=int, default=60)
    ap.add_argument("--merge-repeats", type=int, default=3)
    ap.add_argument("--launcher", default="slurm", choices=["slurm", "local"])
    ap.add_argument("--run-args", default="", help="more options for every run, e.g. '--metrics off'")
    ap.add_argument("--skip-merge", action="store_true")
    ap.add_argument("--keep-merge", metavar="DIR",
                    help="copy the merge's shard records to DIR (to profile the merge)")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--quick", action="store_true", help="1 pair, 5 s runs, 8 and 64 clients")
    ap.add_argument("--pin", action="store_true",
                    help="the server on CPU 1, the clients (and Slurm's daemons) on CPU 0")
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.pairs, a.time, a.warmup, a.clients = 1, 5, 1, "8,64"
        a.merge_shards, a.merge_time, a.merge_repeats = 8, 5, 1
    if os.geteuid() != 0:
        sys.exit("bench/nodes.py needs root: it starts Slurm's daemons")
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=ROOT, check=True)
    clients = [int(x) for x in a.clients.split(",")]
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = os.path.join(ROOT, "bench", "results", f"nodes-{stamp}")
    work = tempfile.mkdtemp(prefix="dbsweep-bench-nodes-")
    os.chmod(work, 0o755)
    cluster = Cluster(a.pin) if not a.skip_throughput else None
    url = c.server_start("postgres", work, [f"max_connections={max(clients) + 100}"],
                         cpus=SERVER_CPU if a.pin else None)
    rows, merges = [], []
    try:
        subprocess.run([c.DBSWEEP, "prepare", a.workload, "--db", url, f"--table-size={a.rows}",
                        "--tables=1"], check=True, stdout=subprocess.DEVNULL)
        if cluster:
            for cl in clients:
                for k in range(a.pairs):
                    order = [0, 3] if k % 2 == 0 else [3, 0]
                    got = {}
                    for nodes in order:
                        tag = f"c{cl}-p{k}-{a.launcher if nodes else 'one'}"
                        got[nodes] = one(url, a, cl, nodes, cluster.env, work, tag)
                        if got[nodes]:
                            print(f"{cl} clients, pair {k + 1}, {got[nodes]['mode']}: "
                                  f"{got[nodes]['tps']:.1f} tps", flush=True)
                    if got[0] and got[3]:
                        for nodes in (0, 3):
                            got[nodes]["pair"] = k + 1
                            rows.append(got[nodes])
        if not a.skip_merge:
            merges = merge_cost(url, a, work)
            if a.keep_merge:
                shutil.copytree(os.path.join(work, "merge"), a.keep_merge, dirs_exist_ok=True)
    finally:
        c.server_stop("postgres", work)
        if cluster:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    if rows:
        keys = list(dict.fromkeys(k for r in rows for k in r))
        with open(base + ".csv", "w", newline="") as f:
            w = csv.DictWriter(f, keys)
            w.writeheader()
            w.writerows(rows)
        print(summarise(rows, base + ".md"))
    if merges:
        with open(base + "-merge.csv", "w", newline="") as f:
            w = csv.DictWriter(f, list(merges[0]))
            w.writeheader()
            w.writerows(merges)
        print(f"merge: median {c.median([m['merge_wall_s'] for m in merges]):.3f} s wall "
              f"for {merges[0]['shards']} records of {merges[0]['run_s']} s "
              f"({merges[0]['records_mb']} MB, {merges[0]['intervals']} intervals)")
    print(f"results in {base}.*")


if __name__ == "__main__":
    main()
