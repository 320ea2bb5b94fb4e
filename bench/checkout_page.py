#!/usr/bin/env python3
"""Checkout page benchmark: the hosted page's weight, and its latency and throughput under load
beside the bare actix hello handler, measured side by side in each round.

It starts pay-server on an embedded SQLite database (the default set-up, sandbox processor),
creates a link, and then:
- weight: the bytes of GET /pay/{uid} (the page carries its CSS, script and QR inline) for the
  first screen and for a session's deposit screen, and every URL the HTML references, to show
  that nothing loads from another origin;
- load: for each of ROUNDS rounds, wrk with C connections for S seconds on the page, then on the
  hello ceiling; p99 latency (wrk's latency is request written to response read: for a page this
  small on loopback it is time to first byte plus a few microseconds) and requests per second;
  the ratio is taken per round, then the median is quoted.

With --binary LABEL=PATH given twice or more, each build runs side by side on a database of its
own (same data: one link, one session), each round measures every build's page in turn (ABBA
order over the rounds) and the hello ceiling, and each build's rate is also given as a ratio to
the first build's in the same round (an A/B of two commits: build the older one elsewhere and
copy its binary out).

Usage: python3 bench/checkout_page.py [--rounds 3] [--seconds 10] [--connections 64] [--skip-build]
                                      [--binary LABEL=PATH ...]
       python3 bench/checkout_page.py --smoke   # one 1-second round on the debug build (CI)
Needs: wrk (Debian package wrk). Targets loopback only. Every measurement is checked as in
run.py (requests made, no errors, pages not empty); a failed check exits non-zero.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the foundation benchmark's helpers)

LIMIT_BYTES = 60 * 1024


def fetch(url, method="GET", headers=None, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    with urllib.request.urlopen(req) as r:
        return r.status, r.read()


def references(html):
    """Every URL an attribute of the page references (src, href, action)."""
    return re.findall(r'(?:src|href|action)="([^"]*)"', html)


def setup(label, binary, tmp, workers):
    """A server of `binary` on a SQLite database of its own (bootstrapped by that binary, so
    each build reads the schema it migrated), a link, and the page's weight on both screens."""
    db = f"sqlite://{tmp}/{label}.db"
    creds = run.bootstrap(db, binary)
    srv = run.Server(db, workers, binary)
    hdrs = {"x-svc-key-id": creds["keyId"], "x-svc-key-secret": creds["keySecret"],
            "content-type": "application/json"}
    link = run.http("POST", srv.base + "/api/partner/v1/pay/payment-links", hdrs,
                    {"amount": "12.50", "title": "Benchmark order", "description": "One page",
                     "skipQuoteAcceptance": True})
    page = f"{srv.base}/pay/{link['uid']}"
    _, first = fetch(page)
    view = run.http("GET", f"{srv.base}/api/public/checkout/{link['uid']}", {})
    asset = view["payAssets"][0]["assetIdentifier"]
    s = run.http("POST", f"{srv.base}/api/public/checkout/{link['uid']}/sessions",
                 {"content-type": "application/json"}, {"payAsset": asset})
    _, deposit = fetch(f"{page}?session={s['id']}")
    weight = {}
    for name, body in [("choose_asset", first), ("deposit", deposit)]:
        html = body.decode()
        if "<html" not in html:
            raise run.BenchError(f"{label} {name}: not an HTML page ({len(body)} bytes)")
        refs = references(html)
        foreign = [r for r in refs if re.match(r"^(https?:)?//", r) and not r.startswith(srv.base)]
        weight[name] = {"bytes": len(body), "limit": LIMIT_BYTES, "within": len(body) <= LIMIT_BYTES,
                        "references": refs, "foreign_references": foreign}
        print(f"{label} {name}: {len(body)} bytes, foreign references: {foreign}", flush=True)
    return srv, page, weight


def binaries(args):
    """(label, path) of each build to measure: --binary LABEL=PATH (repeatable), else the one
    built (or found with --skip-build) as `main`."""
    if not args.binary:
        return [("main", run.BIN)]
    out = []
    for b in args.binary:
        label, sep, path = b.partition("=")
        if not sep or not label or not os.path.isfile(path):
            raise run.BenchError(f"--binary {b}: want LABEL=PATH of a pay-server binary")
        out.append((label, os.path.abspath(path)))
    if len({label for label, _ in out}) != len(out):
        raise run.BenchError("--binary: the labels must differ")
    return out


def main():
    ap = argparse.ArgumentParser()
    run.add_common_args(ap, rounds=3, seconds=10, connections=64)
    ap.add_argument("--binary", action="append", metavar="LABEL=PATH",
                    help="a pay-server binary to measure (repeat for an A/B side by side: each on its "
                         "own database, alternating within each round; ratios to the first)")
    args = ap.parse_args()
    run.require_tool("wrk", "wrk")
    run.finish_args(args, rounds=3, seconds=10)
    builds = binaries(args)
    os.makedirs(run.OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="pay-page-bench-")
    hello_port = run.free_port()
    hello = subprocess.Popen([run.HELLO, f"127.0.0.1:{hello_port}", str(args.workers)])
    hello_url = f"http://127.0.0.1:{hello_port}/hello"
    servers = {}
    try:
        run.wait_ready(hello_url)
        pages, weight = {}, {}
        for label, binary in builds:
            servers[label], pages[label], weight[label] = setup(label, binary, tmp, args.workers)

        rounds = []
        for i in range(args.rounds):
            # ABBA over the rounds: a drift of the machine's load falls on every build alike.
            order = builds if i % 2 == 0 else builds[::-1]
            r = {"page": {label: run.wrk(pages[label], args.seconds, args.connections) for label, _ in order}}
            r["hello"] = run.wrk(hello_url, args.seconds, args.connections)
            r["ratio"] = {label: p["rps"] / r["hello"]["rps"] for label, p in r["page"].items()}
            first = builds[0][0]
            r["rate_vs_first"] = {label: p["rps"] / r["page"][first]["rps"] for label, p in r["page"].items()}
            rounds.append(r)
            print(f"round {i + 1}: " + "; ".join(
                f"{label} page {p['rps']:.0f}/s p99 {p['p99_ms']:.2f} ms (/{first} {r['rate_vs_first'][label]:.3f})"
                for label, p in r["page"].items()) + f"; hello {r['hello']['rps']:.0f}/s", flush=True)
        if args.smoke:
            print("smoke run ok: every figure measured, no errors; figures not written")
            return
        med = run.median
        summary = {
            "connections": args.connections, "seconds": args.seconds, "rounds": args.rounds,
            "profile": args.profile, "workers": args.workers, "cpus": os.cpu_count(),
            "load_average": os.getloadavg(), "hello_rps": med([r["hello"]["rps"] for r in rounds]),
            "targets": {"weight_bytes": LIMIT_BYTES, "p99_ms": 10, "ratio": 0.25},
            "builds": {label: {
                "binary": binary,
                "weight": weight[label],
                "page_rps": med([r["page"][label]["rps"] for r in rounds]),
                "page_p99_ms": med([r["page"][label]["p99_ms"] for r in rounds]),
                "ratio": med([r["ratio"][label] for r in rounds]),
                "rate_vs_first": med([r["rate_vs_first"][label] for r in rounds]),
                "rate_vs_first_per_round": [r["rate_vs_first"][label] for r in rounds],
            } for label, binary in builds},
            "per_round": rounds,
        }
        print(json.dumps({label: {k: v for k, v in b.items() if k not in ("weight", "binary")}
                          | {"bytes": {n: w["bytes"] for n, w in b["weight"].items()}}
                          for label, b in summary["builds"].items()}, indent=2))
        with open(os.path.join(run.OUT, "checkout_page.json"), "w") as f:
            json.dump(summary, f, indent=2)
    finally:
        for srv in servers.values():
            srv.stop()
        hello.terminate()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except run.BenchError as e:
        sys.exit(f"benchmark failed: {e}")
