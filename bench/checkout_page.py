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

Usage: python3 bench/checkout_page.py [--rounds 3] [--seconds 10] [--connections 64] [--skip-build]
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


def main():
    ap = argparse.ArgumentParser()
    run.add_common_args(ap, rounds=3, seconds=10, connections=64)
    args = ap.parse_args()
    run.require_tool("wrk", "wrk")
    run.finish_args(args, rounds=3, seconds=10)
    os.makedirs(run.OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="pay-page-bench-")
    db = f"sqlite://{tmp}/bench.db"
    hello_port = run.free_port()
    hello = subprocess.Popen([run.HELLO, f"127.0.0.1:{hello_port}", str(args.workers)])
    hello_url = f"http://127.0.0.1:{hello_port}/hello"
    srv = None
    try:
        run.wait_ready(hello_url)
        creds = run.bootstrap(db)
        srv = run.Server(db, args.workers)
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
                raise run.BenchError(f"{name}: not an HTML page ({len(body)} bytes)")
            refs = references(html)
            foreign = [r for r in refs if re.match(r"^(https?:)?//", r) and not r.startswith(srv.base)]
            weight[name] = {"bytes": len(body), "limit": LIMIT_BYTES, "within": len(body) <= LIMIT_BYTES,
                            "references": refs, "foreign_references": foreign}
            print(f"{name}: {len(body)} bytes, foreign references: {foreign}", flush=True)

        rounds = []
        for i in range(args.rounds):
            p = run.wrk(page, args.seconds, args.connections)
            h = run.wrk(hello_url, args.seconds, args.connections)
            r = {"page": p, "hello": h, "ratio": p["rps"] / h["rps"]}
            rounds.append(r)
            print(f"round {i + 1}: page {p['rps']:.0f}/s p99 {p['p99_ms']:.2f} ms; "
                  f"hello {h['rps']:.0f}/s; ratio {r['ratio']:.2f}", flush=True)
        if args.smoke:
            print("smoke run ok: every figure measured, no errors; figures not written")
            return
        med = run.median
        summary = {
            "connections": args.connections, "seconds": args.seconds, "rounds": args.rounds,
            "profile": args.profile, "workers": args.workers, "cpus": os.cpu_count(), "weight": weight,
            "page_rps": med([r["page"]["rps"] for r in rounds]),
            "page_p99_ms": med([r["page"]["p99_ms"] for r in rounds]),
            "hello_rps": med([r["hello"]["rps"] for r in rounds]),
            "ratio": med([r["ratio"] for r in rounds]),
            "targets": {"weight_bytes": LIMIT_BYTES, "p99_ms": 10, "ratio": 0.25},
            "per_round": rounds,
        }
        print(json.dumps({k: v for k, v in summary.items() if k not in ("per_round", "weight")}, indent=2))
        with open(os.path.join(run.OUT, "checkout_page.json"), "w") as f:
            json.dump(summary, f, indent=2)
    finally:
        if srv:
            srv.stop()
        hello.terminate()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except run.BenchError as e:
        sys.exit(f"benchmark failed: {e}")
