"""The tables bench/tpcc.py writes and prints: medians per tool, the ratios
of the medians and the per-pair ratios, dbsweep against each other tool
(BenchBase, sysbench-tpcc) in the order the pairs ran them, then the
failures."""

import statistics


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, f=".2f"):
    return "" if x is None else format(x, f)


def ratio_cells(rows, key, field, num, den, note=""):
    """'ratio of medians' and 'per pair: median (min–max)' of num / den."""
    by = {}
    for r in rows:
        if key(r) and r.get("ok") and r.get(field) is not None:
            by.setdefault(r["pair"], {})[r["tool"]] = r[field]
    a = med(p[num] for p in by.values() if num in p)
    b = med(p[den] for p in by.values() if den in p)
    per = sorted(p[num] / p[den] for p in by.values() if p.get(num) and p.get(den))
    whole = f"{a / b:.2f}×{note}" if a and b else ""
    if not per:
        return whole, ""
    return whole, f"{statistics.median(per):.2f}× ({per[0]:.2f}–{per[-1]:.2f})"


# The tools' names in the tables.
LABEL = {"benchbase": "BenchBase", "sysbench-tpcc": "sysbench-tpcc", "dbsweep": "dbsweep"}


def prepare_table(prep, args):
    bases = [t for t in args.tools if t != "dbsweep"]
    head = ["server"]
    for b in bases:
        head.append(LABEL[b])
        if b == "sysbench-tpcc":
            head.append("less its 30 s sleep")
    head += ["dbsweep", "floor"]
    for b in bases:
        head += [f"dbsweep / {LABEL[b]} (goal ≤ 0.5)", "per pair"]
        if b == "sysbench-tpcc":
            head += ["dbsweep / (sysbench-tpcc − 30 s)", "per pair"]
    head += ["dbsweep / floor (goal ≤ 1.25)", "per pair"]
    head += [f"size MB {LABEL[t]}" if i == 0 else LABEL[t] for i, t in enumerate(args.tools)]
    out = [f"### Prepare, {args.warehouses} warehouses, {args.load_threads} loaders "
           "(medians, s)", "", "| " + " | ".join(head) + " |",
           "|" + "|".join("---" if h in ("server", "per pair") else "---:" for h in head) + "|"]
    for e in dict.fromkeys(r["engine"] for r in prep):
        mine = [r for r in prep if r["engine"] == e]
        mine += [dict(r, tool="sysbench-less-sleep", seconds=r.get("seconds_less_sleep"))
                 for r in mine if r["tool"] == "sysbench-tpcc"]

        def m(tool, field="seconds", mine=mine):
            return med(r.get(field) for r in mine if r["tool"] == tool and r["ok"])

        def key(_):
            return True
        cells = [e]
        for b in bases:
            cells.append(fmt(m(b)))
            if b == "sysbench-tpcc":
                cells.append(fmt(m("sysbench-less-sleep")))
        cells += [fmt(m("dbsweep")), fmt(m("floor"))]
        for b in bases:
            cells += ratio_cells(mine, key, "seconds", "dbsweep", b)
            if b == "sysbench-tpcc":
                cells += ratio_cells(mine, key, "seconds", "dbsweep", "sysbench-less-sleep")
        cells += ratio_cells(mine, key, "seconds", "dbsweep", "floor")
        cells += [fmt(m(t, "size_mb"), ".0f") for t in args.tools]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    if "benchbase" in bases:
        out += ["BenchBase's time includes its JVM's start and its DDL (tables, indexes and "
                "foreign keys before the data); its own load time, from its log, is "
                "`seconds_own` in the CSV.", ""]
    return out


def run_table(runs, args):
    bases = [t for t in args.tools if t != "dbsweep"]
    tools = args.tools
    head = ["server", "connections"] + [f"{LABEL[t]} tps" for t in tools]
    for b in bases:
        head += [f"dbsweep / {LABEL[b]} (goal ≥ 1.0)", "per pair"]
    head += [f"client CPU µs/txn {LABEL[t]}" if i == 0 else LABEL[t]
             for i, t in enumerate(tools)]
    head += [f"CPU dbsweep / {LABEL[b]}" for b in bases]
    head += [f"errors/s {LABEL[t]}" if i == 0 else LABEL[t] for i, t in enumerate(tools)]
    out = [f"### Throughput, no wait, {args.warehouses} warehouses, {args.time} s after "
           f"{args.warmup} s warmup (medians)", "", "| " + " | ".join(head) + " |",
           "|" + "|".join("---" if h in ("server", "per pair") else "---:" for h in head) + "|"]
    points = dict.fromkeys((r["engine"], r["connections"]) for r in runs)
    for e, n in points:
        def key(r, e=e, n=n):
            return r["engine"] == e and r.get("connections") == n

        def m(tool, field, key=key):
            return med(r.get(field) for r in runs if key(r) and r["tool"] == tool and r["ok"])
        cells = [e, str(n)] + [fmt(m(t, "tps"), ",.1f") for t in tools]
        for b in bases:
            cells += ratio_cells(runs, key, "tps", "dbsweep", b)
        cpu = {t: m(t, "cpu_us_per_txn") for t in tools}
        cells += [fmt(cpu[t], ".0f") for t in tools]
        cells += [fmt(cpu["dbsweep"] / cpu[b] if cpu[b] and cpu["dbsweep"] else None)
                  for b in bases]
        cells += [fmt(m(t, "errors_per_s"), ".1f") for t in tools]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    if "sysbench-tpcc" in tools:
        out += ["sysbench-tpcc's errors/s include its rolled-back New-Orders (about 0.4 % of "
                "its transactions; dbsweep counts those as `new_order_rollback`, not as "
                "errors); both include deadlocks and lock waits retried.", ""]
    if "benchbase" in tools:
        out += ["BenchBase's tps: the transactions that started and ended in its measured "
                "window (its summary's \"Measured Requests\"), less the share of its run's "
                "outcomes that failed (a Delivery that found its NEW_ORDER row gone, an "
                "unexpected error); its rolled-back New-Orders count as transactions. Its "
                "errors/s: retried deadlocks, lock waits and serialization failures plus "
                "those failures, over its whole run (warmup included: its histograms cover "
                "it). Its client CPU is the JVM's, JIT and GC included, timed from its own "
                "\"warmup complete\" line.", ""]
    return out


def tables(rows, args):
    out = []
    prep = [r for r in rows if r["part"] == "prepare"]
    if prep:
        out += prepare_table(prep, args)
    runs = [r for r in rows if r["part"] == "run"]
    if runs:
        out += run_table(runs, args)
    failed = [r for r in rows if not r.get("ok")]
    if failed:
        out += ["### Failures", ""]
        out += [f"- {r['engine']} {r['part']} pair {r['pair']} {LABEL.get(r['tool'], r['tool'])}"
                f"{' at ' + str(r['connections']) + ' connections' if r.get('connections') else ''}"
                f": {r.get('error', '')}" for r in failed]
        out.append("")
    return "\n".join(out)
