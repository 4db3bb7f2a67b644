#!/usr/bin/env python3
"""Long runs in flat memory: dbsweep's resident memory over a long run
against PostgreSQL, with `--report-interval 1` and its metrics sampler on
(the two things that grow with a run's length), sampled every --sample
seconds.

Each configuration (--clients, default 64 and 1024) runs
`oltp_read_write` for --time seconds (default 3600) against a scratch
PostgreSQL that this script starts with `dbsweep server start postgres`
(max_connections raised to fit). Several configurations run one after the
other, or side by side with --parallel (their memory does not depend on
the machine's other load; their throughput does, and is not the point).

It reports, per configuration: the resident set at 5 minutes (the issue's
baseline: start-up and the histograms have settled by then), at the end of
the run and its peak, the growth from 5 minutes to the end, the growth per
hour fitted by least squares over the samples after 5 minutes, the size of
the record written and of its series file while it ran, and the
transactions. With --binary OTHER it runs the same for another build
first (e.g. one from before flat memory) for comparison.

The bookkeeping of a long run grows with its intervals and samples, not
with its seconds as such: `--report-interval 0.1 --metrics-interval 0.1`
makes 36 minutes hold as many intervals and samples as six hours at the
defaults (what the histograms of six hours of latencies would meet is not
in it).

Stopped with Ctrl-C (or SIGTERM), the runs are stopped as dbsweep stops on
Ctrl-C (their records kept) and the tables are written for the part that
ran, marked "stopped at N s".

Usage:
    bench/long_run.py [--time 3600] [--clients 64,1024] [--sample 60]
                      [--rows 100000] [--parallel] [--binary OTHER] [--no-build]
                      [--report-interval 1] [--metrics-interval 1]

A smoke test of the script itself (no meaning):
    bench/long_run.py --time 40 --clients 8 --sample 5 --rows 10000

Writes bench/results/long-run-<date>.csv (one row per sample) and .md,
and prints the table.
"""

import argparse
import datetime
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402  (the shared helpers of bench/clients.py)

ROOT = c.ROOT
BASELINE_S = 300
# The runs under way, to stop on Ctrl-C.
RUNNING = []


def rss_kb(pid):
    """VmRSS of `pid` in kB, or None once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def one(binary, url, clients, a, work, label, samples):
    json_path = os.path.join(work, f"{label}-{clients}.json")
    # The run's series file beside --json FILE (FILE.series.jsonl.gz),
    # removed once the record is written: its size is read while it runs.
    series = json_path[:-len(".json")] + ".series.jsonl.gz"
    argv = [binary, "run", "oltp_read_write", "--db", url, f"--table-size={a.rows}",
            "--tables=1", f"--threads={clients}", f"--time={a.time}",
            f"--report-interval={a.report_interval}",
            f"--metrics-interval={a.metrics_interval}", "--json", json_path]
    # A session of its own: Ctrl-C reaches it from this script, once.
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    RUNNING.append(p)
    start = time.monotonic()
    series_bytes = 0
    peak = 0
    while p.poll() is None:
        t = time.monotonic() - start
        kb = rss_kb(p.pid)
        if kb is not None:
            peak = max(peak, kb)
            size = os.path.getsize(series) if os.path.exists(series) else 0
            series_bytes = max(series_bytes, size)
            samples.append(dict(binary=label, clients=clients, t_s=round(t, 1), rss_kb=kb,
                                series_bytes=size))
            print(f"{label} {clients} clients: {t:7.0f} s  {kb / 1024:8.1f} MB", flush=True)
        # Sample every --sample seconds, and quickly near the start so
        # the 5-minute baseline is there in short runs too.
        wait = min(a.sample, 5) if t < BASELINE_S else a.sample
        until = time.monotonic() + wait
        while p.poll() is None and time.monotonic() < until:
            time.sleep(0.5)
    err = p.stderr.read()
    # 130: stopped by Ctrl-C, which keeps the record of the part that ran.
    stopped = p.returncode == 130 and os.path.exists(json_path)
    if p.returncode != 0 and not stopped:
        sys.exit(f"{' '.join(argv)} failed ({p.returncode}):\n{err}")
    rec = c.parse_dbsweep(json_path)
    return dict(peak_kb=peak, record_bytes=os.path.getsize(json_path),
                series_bytes=series_bytes, tps=rec.get("tps"),
                transactions=rec.get("transactions"),
                stopped_s=round(time.monotonic() - start) if stopped else None)


def summary(label, clients, samples, r, a):
    mine = [s for s in samples if s["binary"] == label and s["clients"] == clients]
    base_t = min(BASELINE_S, a.time / 4)
    after = [s for s in mine if s["t_s"] >= base_t]
    at5 = after[0]["rss_kb"] if after else None
    end = mine[-1]["rss_kb"] if mine else None
    slope = None
    if len(after) >= 2:
        xs = [s["t_s"] for s in after]
        ys = [s["rss_kb"] for s in after]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        if sxx > 0:
            slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx * 3600 / 1024
    return dict(binary=label, clients=clients, baseline_s=base_t,
                rss_at_baseline_mb=at5 / 1024 if at5 else None,
                rss_end_mb=end / 1024 if end else None,
                peak_mb=r["peak_kb"] / 1024,
                growth_mb=(end - at5) / 1024 if at5 and end else None,
                growth_mb_per_h=slope, record_mb=r["record_bytes"] / 1e6,
                series_mb=r["series_bytes"] / 1e6, tps=r["tps"],
                ran=f"stopped at {r['stopped_s']} s" if r["stopped_s"] else f"{a.time} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time", type=int, default=3600)
    ap.add_argument("--clients", default="64,1024")
    ap.add_argument("--sample", type=float, default=60)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--parallel", action="store_true")
    ap.add_argument("--binary", help="another dbsweep build to measure first")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--report-interval", type=float, default=1)
    ap.add_argument("--metrics-interval", type=float, default=1)
    a = ap.parse_args()
    # SIGTERM as Ctrl-C: both stop the runs and keep what they measured.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=ROOT, check=True)
    counts = [int(x) for x in a.clients.split(",")]
    binaries = ([("other", a.binary)] if a.binary else []) + [("this", c.DBSWEEP)]
    work = tempfile.mkdtemp(prefix="dbsweep-long-")
    os.chmod(work, 0o755)
    samples, rows = [], []
    # Side by side, the runs' connections add up.
    conns = sum(counts) if a.parallel else max(counts)
    url = c.server_start("postgres", work, [f"max_connections={conns + 20}"])
    try:
        subprocess.run([c.DBSWEEP, "prepare", "oltp_read_write", "--db", url,
                        f"--table-size={a.rows}", "--tables=1"], check=True, capture_output=True)
        stopped = False
        for label, binary in binaries:
            results = {}

            def go(n, done, label=label, binary=binary, results=results):
                try:
                    results[n] = one(binary, url, n, a, work, label, samples)
                except SystemExit as e:
                    # A failed run in a thread must fail the benchmark, not vanish.
                    print(e, file=sys.stderr, flush=True)
                    os._exit(1)
                finally:
                    done.set()

            # Each run in a thread (side by side with --parallel, else one
            # after the other), so that Ctrl-C reaches this thread alone.
            # Waited for by an Event each: a Thread.join interrupted by
            # Ctrl-C may return at once when called again (Python 3.11).
            groups = [counts] if a.parallel else [[n] for n in counts]
            events = []
            try:
                for g in groups:
                    events = [threading.Event() for _ in g]
                    for n, ev in zip(g, events):
                        threading.Thread(target=go, args=(n, ev)).start()
                    for ev in events:
                        ev.wait()
            except KeyboardInterrupt:
                print("stopping the runs (Ctrl-C): their records are kept", flush=True)
                for p in RUNNING:
                    if p.poll() is None:
                        p.send_signal(signal.SIGINT)
                for ev in events:
                    ev.wait()
                stopped = True
            rows += [summary(label, n, samples, results[n], a) for n in counts if n in results]
            if stopped:
                break
    finally:
        c.server_stop("postgres", work)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.join(ROOT, "bench", "results", f"long-run-{stamp}")
    with open(out + ".csv", "w") as f:
        f.write("binary,clients,t_s,rss_kb,series_bytes\n")
        for s in samples:
            f.write(f"{s['binary']},{s['clients']},{s['t_s']},{s['rss_kb']},{s['series_bytes']}\n")
    fmt = lambda v: "—" if v is None else (f"{v:.1f}" if isinstance(v, float) else str(v))  # noqa: E731
    if not rows:
        sys.exit("no run ended with a record: nothing to report")
    head = ("| build | clients | ran | RSS at {b:.0f} s (MB) | RSS at end (MB) | peak (MB) | "
            "growth after {b:.0f} s (MB) | growth per hour, fitted (MB) | record (MB) | "
            "series file (MB) | tps |")
    lines = [f"# Long run: {a.time} s of oltp_read_write on PostgreSQL, "
             f"--report-interval {a.report_interval:g}, metrics on every "
             f"{a.metrics_interval:g} s ({stamp})", "",
             head.format(b=rows[0]["baseline_s"]), "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r[k]) for k in (
            "binary", "clients", "ran", "rss_at_baseline_mb", "rss_end_mb", "peak_mb", "growth_mb",
            "growth_mb_per_h", "record_mb", "series_mb", "tps")) + " |")
    text = "\n".join(lines) + "\n"
    with open(out + ".md", "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {out}.csv and {out}.md")


if __name__ == "__main__":
    main()
