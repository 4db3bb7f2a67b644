#!/usr/bin/env python3
"""The live feed's cost: the point select at C connections (default 8) on
PostgreSQL with `--prometheus` scraped every second (by a thread of this
script, asking for OpenMetrics as Prometheus does) and without it,
interleaved per pair (the order reversed every other pair), so each
pair's ratio is within a minute. The goal: throughput with the feed
within the noise of without, i.e. the with/without ratios' range holds 1.

The server is started by dbsweep (`server start postgres`) in a scratch
directory; both runs measure with `--metrics on` (the feed's CPU figures
come from the sampler). The feed takes an interval sample every second,
which a run without `--report-interval` does not: `--intervals` gives
both runs `--report-interval 1`, leaving the feed and its scrapes the
only difference (the default compares what a user sees: the run with
the feed against the run without).

Usage:
    bench/prometheus.py [--pairs 6] [--time 20] [--threads 8]
                        [--rows 100000] [--intervals] [--no-build]

Writes bench/results/prometheus-<date>.csv and .md, and prints the table.
"""

import argparse
import csv
import datetime
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402  (the shared helpers of bench/clients.py)

ACCEPT = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Scraper(threading.Thread):
    """Scrapes http://127.0.0.1:PORT/metrics once a second until stopped;
    counts the scrapes answered and the slowest answer."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.url = f"http://127.0.0.1:{port}/metrics"
        self.stop = threading.Event()
        self.ok = 0
        self.slowest_ms = 0.0
        self.eof = True

    def run(self):
        next_at = time.monotonic()
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                req = urllib.request.Request(self.url, headers={"Accept": ACCEPT})
                with urllib.request.urlopen(req, timeout=5) as r:
                    body = r.read().decode()
                # Before the run binds, or after it ends, nothing answers.
                self.ok += 1
                self.eof = self.eof and body.endswith("# EOF\n")
                self.slowest_ms = max(self.slowest_ms, (time.monotonic() - t0) * 1e3)
            except OSError:
                pass
            next_at += 1.0
            self.stop.wait(max(0.0, next_at - time.monotonic()))


def run(url, a, workdir, feed):
    """(tps, scrapes answered, slowest scrape ms) of one run."""
    json_path = os.path.join(workdir, "d.json")
    extra = ["--metrics", "on"] + (["--report-interval", "1"] if a.intervals else [])
    scraper = None
    if feed:
        port = free_port()
        extra += ["--prometheus", f"127.0.0.1:{port}"]
        scraper = Scraper(port)
        scraper.start()
    argv = c.dbsweep_argv(url, "oltp_point_select", a.threads, a.time, a.rows, json_path,
                          extra=extra)
    try:
        rc, out, *_ = c.measured(argv, timeout=a.time * 3 + 60)
    finally:
        if scraper:
            scraper.stop.set()
            scraper.join()
    if rc != 0:
        sys.exit(f"dbsweep failed:\n{out[-2000:]}")
    tps = c.parse_dbsweep(json_path)["tps"]
    if not scraper:
        return tps, 0, 0.0
    if scraper.ok == 0 or not scraper.eof:
        sys.exit("the feed was not scraped (or a body did not end with # EOF)")
    return tps, scraper.ok, scraper.slowest_ms


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=6)
    p.add_argument("--time", type=int, default=20)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--rows", type=int, default=100000)
    p.add_argument("--intervals", action="store_true",
                   help="both runs with --report-interval 1 (the feed's own cost alone)")
    p.add_argument("--no-build", action="store_true")
    a = p.parse_args()
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=c.ROOT, check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=c.ROOT,
                            capture_output=True, text=True).stdout.strip()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        os.chmod(workdir, 0o755)
        url = c.server_start("postgres", workdir, [])
        try:
            subprocess.run([c.DBSWEEP, "prepare", "oltp_point_select", "--db", url,
                            f"--table-size={a.rows}", "--tables=1"], check=True,
                           capture_output=True)
            for pair in range(a.pairs):
                order = [True, False] if pair % 2 else [False, True]
                got = {}
                for feed in order:
                    c.settle()
                    got[feed] = run(url, a, workdir, feed)
                (with_tps, scrapes, slowest), (without_tps, _, _) = got[True], got[False]
                rows.append(dict(pair=pair, without_tps=without_tps, with_tps=with_tps,
                                 with_over_without=with_tps / without_tps, scrapes=scrapes,
                                 slowest_scrape_ms=round(slowest, 2)))
                print(f"pair {pair}: without {without_tps:,.0f} tps, with {with_tps:,.0f} tps "
                      f"({scrapes} scrapes, slowest {slowest:.1f} ms), "
                      f"with/without {with_tps / without_tps:.3f}", flush=True)
        finally:
            c.server_stop("postgres", workdir)

    base = os.path.join(c.ROOT, "bench", "results", f"prometheus-{stamp}")
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    ratio = sorted(r["with_over_without"] for r in rows)
    lines = [f"The live feed's cost, point select on PostgreSQL, {a.threads} connections, "
             f"{a.pairs} pairs of {a.time} s runs, scraped every second"
             + (", both with 1 s intervals" if a.intervals else "") + f", dbsweep {commit}", "",
             "| without tps | with --prometheus tps | with / without (range) | scrapes per run | "
             "slowest scrape |", "|---|---|---|---|---|",
             f"| {c.median([r['without_tps'] for r in rows]):,.0f} | "
             f"{c.median([r['with_tps'] for r in rows]):,.0f} | "
             f"{c.median(ratio):.3f} ({ratio[0]:.3f}–{ratio[-1]:.3f}) | "
             f"{c.median([r['scrapes'] for r in rows]):.0f} | "
             f"{max(r['slowest_scrape_ms'] for r in rows):.1f} ms |"]
    text = "\n".join(lines) + "\n"
    with open(base + ".md", "w") as f:
        f.write(text)
    print()
    print(text)
    print(f"wrote {base}.csv and .md")


if __name__ == "__main__":
    main()
