#!/usr/bin/env python3
"""TLS's cost: the point select at C connections (default 8) over TLS and
plain, for dbsweep (a thread per connection, and on two event loops) and
the ecosystem's client on the same server — pgbench with PGSSLMODE on
PostgreSQL, sysbench with --mysql-ssl on MariaDB — interleaved per pair.

The server is started by dbsweep with --tls (a throw-away CA, and a client
certificate it signed, which sysbench 1.0 always sends); plain runs
ask for no TLS (sslmode=disable / ssl-mode=DISABLED, --mysql-ssl=off), TLS
runs for it without checking (require / REQUIRED, --mysql-ssl=on), as the
goal says. Each pair runs every tool plain and over TLS back to back (the
order reversed every other pair), so each tool's TLS / plain ratio is
within minutes; the claim is dbsweep's ratio against the other client's,
per pair.

Usage:
    bench/tls.py [--engines postgres,mariadb] [--pairs 4] [--time 10]
                 [--threads 8] [--rows 100000] [--no-build]

Writes bench/results/tls-<date>.csv and .md, and prints the table.
"""

import argparse
import csv
import datetime
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clients as c  # noqa: E402  (the shared helpers of bench/clients.py)


def server_start_tls(kind, workdir):
    argv = [c.DBSWEEP, "server", "start", kind, "--dir", os.path.join(workdir, kind), "--tls"]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()
    return out.splitlines()[-1]


def with_query(url, query):
    return url.split("?")[0] + "?" + query


def run(kind, tool, url, tls, a, workdir, script):
    """Transactions per second of one run."""
    base = url.split("?")[0]
    if tool.startswith("dbsweep"):
        q = {("postgres", False): "sslmode=disable", ("postgres", True): "sslmode=require",
             ("mariadb", False): "ssl-mode=DISABLED", ("mariadb", True): "ssl-mode=REQUIRED"}
        json_path = os.path.join(workdir, "d.json")
        extra = ["--client-threads", "2"] if tool == "dbsweep-j2" else []
        argv = c.dbsweep_argv(with_query(base, q[(kind, tls)]), "oltp_point_select", a.threads,
                              a.time, a.rows, json_path, extra=extra + ["--metrics", "off"])
        _, out, *_ = c.measured(argv)
        r = c.parse_dbsweep(json_path)
        with open(json_path) as f:
            settings = json.load(f)["target"]["settings"]
        got = settings.get("dbsweep.tls" if kind == "postgres" else "tls", "?")
        if (got != "off") != tls:
            sys.exit(f"{tool} tls={tls} ran with TLS {got!r}")
        return r["tps"]
    if tool == "pgbench":
        argv = c.pgbench_argv(base, script, a.threads, a.time)
        env = dict(os.environ, PGPASSWORD=c.parts(base)["password"] or "",
                   PGSSLMODE="require" if tls else "disable")
        _, out, *_ = c.measured(argv, env=env)
        return c.parse_pgbench(out, "oltp_point_select")["tps"]
    argv = c.sysbench_argv("mariadb", base, "oltp_point_select", a.threads, a.time, a.rows)
    argv.insert(-1, f"--mysql-ssl={'on' if tls else 'off'}")
    # sysbench 1.0 reads cacert.pem, client-cert.pem and client-key.pem
    # from its working directory: the server's CA and the client
    # certificate it signed, from the server's tls/.
    sb = os.path.join(workdir, "sysbench-tls")
    if not os.path.isdir(sb):
        os.mkdir(sb)
        tls_dir = os.path.join(workdir, kind, "tls")
        for mine, theirs in [("ca.crt", "cacert.pem"), ("client.crt", "client-cert.pem"),
                             ("client.key", "client-key.pem")]:
            os.symlink(os.path.join(tls_dir, mine), os.path.join(sb, theirs))
    here = os.getcwd()
    os.chdir(sb)
    try:
        _, out, *_ = c.measured(argv)
    finally:
        os.chdir(here)
    r = c.parse_sysbench(out)
    if r is None:
        sys.exit(f"sysbench failed:\n{out[-2000:]}")
    return r["tps"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engines", default="postgres,mariadb")
    p.add_argument("--pairs", type=int, default=4)
    p.add_argument("--time", type=int, default=10)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--rows", type=int, default=100000)
    p.add_argument("--no-build", action="store_true")
    a = p.parse_args()
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q"], cwd=c.ROOT, check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=c.ROOT,
                            capture_output=True, text=True).stdout.strip()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    rows = []
    for kind in a.engines.split(","):
        other = "pgbench" if kind == "postgres" else "sysbench"
        tools = ["dbsweep", "dbsweep-j2", other]
        with tempfile.TemporaryDirectory() as workdir:
            os.chmod(workdir, 0o755)
            url = server_start_tls(kind, workdir)
            try:
                subprocess.run([c.DBSWEEP, "prepare", "oltp_point_select", "--db", url,
                                f"--table-size={a.rows}", "--tables=1"], check=True,
                               capture_output=True)
                script = os.path.join(workdir, "select.sql")
                with open(script, "w") as f:
                    f.write(c.PGBENCH_SCRIPTS["oltp_point_select"].format(rows=a.rows))
                for pair in range(a.pairs):
                    order = tools[::-1] if pair % 2 else tools
                    for tool in order:
                        modes = [True, False] if pair % 2 else [False, True]
                        tps = {}
                        for tls in modes:
                            c.settle()
                            tps[tls] = run(kind, tool, url, tls, a, workdir, script)
                        rows.append(dict(engine=kind, pair=pair, tool=tool, plain_tps=tps[False],
                                         tls_tps=tps[True], tls_over_plain=tps[True] / tps[False]))
                        print(f"{kind} pair {pair} {tool}: plain {tps[False]:,.0f} tps, "
                              f"TLS {tps[True]:,.0f} tps, TLS/plain {tps[True] / tps[False]:.3f}",
                              flush=True)
            finally:
                c.server_stop(kind, workdir)

    base = os.path.join(c.ROOT, "bench", "results", f"tls-{stamp}")
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [f"TLS's cost, point select, {a.threads} connections, {a.pairs} pairs of "
             f"{a.time} s runs, dbsweep {commit}", "",
             "| engine | tool | plain tps | TLS tps | TLS / plain (range) | "
             "its TLS/plain ÷ the other client's (range) |", "|---|---|---|---|---|---|"]
    for kind in a.engines.split(","):
        other = "pgbench" if kind == "postgres" else "sysbench"
        for tool in ["dbsweep", "dbsweep-j2", other]:
            mine = [r for r in rows if r["engine"] == kind and r["tool"] == tool]
            theirs = [r for r in rows if r["engine"] == kind and r["tool"] == other]
            ratio = sorted(r["tls_over_plain"] for r in mine)
            vs = sorted(m["tls_over_plain"] / t["tls_over_plain"] for m, t in zip(mine, theirs))
            lines.append(
                f"| {kind} | {tool} | {c.median([r['plain_tps'] for r in mine]):,.0f} | "
                f"{c.median([r['tls_tps'] for r in mine]):,.0f} | "
                f"{c.median(ratio):.3f} ({ratio[0]:.3f}–{ratio[-1]:.3f}) | "
                + ("—" if tool == other else
                   f"{c.median(vs):.3f} ({vs[0]:.3f}–{vs[-1]:.3f})") + " |")
    text = "\n".join(lines) + "\n"
    with open(base + ".md", "w") as f:
        f.write(text)
    print()
    print(text)
    print(f"wrote {base}.csv and .md")


if __name__ == "__main__":
    main()
