#!/usr/bin/env python3
"""Where profiling's cost comes from: the same dbsweep run (PostgreSQL,
oltp_point_select) with no perf on the machine, beside `perf record -a`
sampling at 1 Hz (its events open, almost no samples taken) and at 99 Hz
(what `--profile` runs), interleaved round by round so that drift hits
all three alike. A cost present at 1 Hz comes from perf's events being
open at all (the kernel's scheduler hooks on every context switch), not
from the samples.

Usage: python3 bench/profile_cost.py --db URL [--clients 8] [--rounds 5]
       [--time 10]
Writes bench/results/profile-cost-STAMP.csv and prints the ratios.
"""
import argparse, csv, datetime, os, re, signal, statistics, subprocess, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "dbsweep")


def run(db, clients, seconds, hz):
    perf = None
    if hz:
        perf = subprocess.Popen(
            ["perf", "record", "-q", "-a", "-e", "cpu-clock", "-F", str(hz),
             "--call-graph", "fp", "-k", "monotonic", "-o", "/tmp/profile-cost.data"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
    out = subprocess.run(
        [BIN, "run", "oltp_point_select", "--db", db, "--table-size", "100000",
         "--threads", str(clients), "--time", str(seconds), "--warmup", "1"],
        capture_output=True, text=True, check=True).stdout
    if perf:
        perf.send_signal(signal.SIGINT)
        perf.wait()
    qps = float(re.search(r"queries:\s+\d+ \(([\d.]+) per sec", out).group(1))
    return qps


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--db", required=True)
    a.add_argument("--clients", type=int, default=8)
    a.add_argument("--rounds", type=int, default=5)
    a.add_argument("--time", type=int, default=10)
    args = a.parse_args()
    stamp = datetime.datetime.utcnow().strftime("%Y%m%d-%H%M%S")
    path = os.path.join(ROOT, "bench", "results", f"profile-cost-{stamp}.csv")
    rows = []
    for r in range(args.rounds):
        # Rotate the order each round: none first, then 1 Hz first, ...
        order = [0, 1, 99][r % 3:] + [0, 1, 99][:r % 3]
        for hz in order:
            qps = run(args.db, args.clients, args.time, hz)
            rows.append({"round": r, "hz": hz, "clients": args.clients, "qps": qps})
            print(f"round {r} perf {hz or 'off'} Hz: {qps:.0f} qps", flush=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["round", "hz", "clients", "qps"])
        w.writeheader()
        w.writerows(rows)
    by = lambda hz: {x["round"]: x["qps"] for x in rows if x["hz"] == hz}
    off = by(0)
    for hz in (1, 99):
        ratios = [off[r] / q for r, q in by(hz).items()]
        print(f"off / perf at {hz} Hz: median {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f}-{max(ratios):.3f}), {len(ratios)} rounds")
    print(path)


if __name__ == "__main__":
    main()
