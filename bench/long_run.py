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

Usage:
    bench/long_run.py [--time 3600] [--clients 64,1024] [--sample 60]
                      [--rows 100000] [--parallel] [--binary OTHER] [--no-build]

A smoke test of the script itself (no meaning):
    bench/long_run.py --time 40 --clients 8 --sample 5 --rows 10000

Writes bench/results/long-run-<date>.csv (one row per sample) and .md,
and prints the table.
"""

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402  (the shared helpers of bench/clients.py)

ROOT = c.ROOT
BASELINE_S = 300


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
    series = json_path[:-len(".json")] + ".series.jsonl"
    argv = [binary, "run", "oltp_read_write", "--db", url, f"--table-size={a.rows}",
            "--tables=1", f"--threads={clients}", f"--time={a.time}",
            "--report-interval=1", "--json", json_path]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
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
        time.sleep(min(a.sample, 5) if t < BASELINE_S else a.sample)
    err = p.stderr.read()
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({p.returncode}):\n{err}")
    rec = c.parse_dbsweep(json_path)
    return dict(peak_kb=peak, record_bytes=os.path.getsize(json_path),
                series_bytes=series_bytes, tps=rec.get("tps"),
                transactions=rec.get("transactions"))


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
                series_mb=r["series_bytes"] / 1e6, tps=r["tps"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time", type=int, default=3600)
    ap.add_argument("--clients", default="64,1024")
    ap.add_argument("--sample", type=float, default=60)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--parallel", action="store_true")
    ap.add_argument("--binary", help="another dbsweep build to measure first")
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
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
        for label, binary in binaries:
            results = {}

            def go(n, label=label, binary=binary, results=results):
                try:
                    results[n] = one(binary, url, n, a, work, label, samples)
                except SystemExit as e:
                    # A failed run in a thread must fail the benchmark, not vanish.
                    print(e, file=sys.stderr, flush=True)
                    os._exit(1)

            if a.parallel:
                threads = [threading.Thread(target=go, args=(n,)) for n in counts]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            else:
                for n in counts:
                    go(n)
            rows += [summary(label, n, samples, results[n], a) for n in counts]
    finally:
        c.server_stop("postgres", work)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.join(ROOT, "bench", "results", f"long-run-{stamp}")
    with open(out + ".csv", "w") as f:
        f.write("binary,clients,t_s,rss_kb,series_bytes\n")
        for s in samples:
            f.write(f"{s['binary']},{s['clients']},{s['t_s']},{s['rss_kb']},{s['series_bytes']}\n")
    fmt = lambda v: "—" if v is None else (f"{v:.1f}" if isinstance(v, float) else str(v))  # noqa: E731
    head = ("| build | clients | RSS at {b:.0f} s (MB) | RSS at end (MB) | peak (MB) | growth after "
            "{b:.0f} s (MB) | growth per hour, fitted (MB) | record (MB) | series file (MB) | tps |")
    lines = [f"# Long run: {a.time} s of oltp_read_write on PostgreSQL, --report-interval 1, "
             f"metrics on ({stamp})", "",
             head.format(b=rows[0]["baseline_s"]), "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r[k]) for k in (
            "binary", "clients", "rss_at_baseline_mb", "rss_end_mb", "peak_mb", "growth_mb",
            "growth_mb_per_h", "record_mb", "series_mb", "tps")) + " |")
    text = "\n".join(lines) + "\n"
    with open(out + ".md", "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {out}.csv and {out}.md")


if __name__ == "__main__":
    main()
