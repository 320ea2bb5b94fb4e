#!/usr/bin/env python3
"""Memory under a long mixed load: pay-server's resident memory sampled while links are created,
pages and API reads are served, payments are made end to end in the sandbox and their webhooks
delivered to a local receiver, for MINUTES minutes per backend.

The load, in cycles until the time is up (each cycle a few seconds):
- wrk: create links (POST), list them, read one link's detail, read its hosted checkout page;
- beside it, a payer thread making payments through the public routes: an anonymous link with a
  `webhookUrl` (the local receiver), a checkout session, accept, a sandbox deposit of the
  required amount (the session completes): each payment sends webhooks, which the dispatcher delivers.

It reads VmRSS every SAMPLE seconds. The figure is the growth from the end of the warm-up
(the first WARMUP seconds: caches, pools and allocator arenas fill) to the end: the median of
the last three samples over the median of the three samples at the end of the warm-up. It also
reports the idle RSS of the freshly started server (before any load). Target (issue 13): idle
< 30 MB, growth < 10 %.

Usage: python3 bench/soak.py [--minutes 10] [--only sqlite|postgres] [--skip-build]
       python3 bench/soak.py --smoke     # 20 s on the debug build (CI): checks, no figures
Needs: wrk. Targets loopback only. Every wrk run is checked as in run.py; every payment must
settle and every webhook the server reports sent must reach the receiver.
"""
import argparse
import http.server
import json
import os
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the shared helpers: build, wrk, servers, checks)

ETH = "eip155:1/slip44:60"
PAYOUT = "0x52908400098527886E0F7030069857D2E4169EE7"
CREATE_LUA = os.path.join(run.ROOT, "bench", "create_link.lua")
GET_LUA = os.path.join(run.ROOT, "bench", "get_with_key.lua")


class Receiver:
    """A local webhook receiver answering 204 at once; counts what it got."""

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", 0)))
                with outer.lock:
                    outer.count += 1
                self.send_response(204)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def call(method, url, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    h = {"content-type": "application/json", **(headers or {})}
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        raise run.BenchError(f"{method} {url}: {e.code} {e.read()[:300]!r}")


def pay_once(base, receiver_url, i):
    """One payment end to end through the public routes; returns the paid session."""
    _, link = call("POST", base + "/api/public/anonymous-payment-links", {
        "amount": "0.01", "title": f"soak {i}",
        "settlement": {"priorities": [{"asset": ETH, "address": PAYOUT}]},
        "webhookUrl": receiver_url,
    })
    uid = link["uid"]
    _, s = call("POST", f"{base}/api/public/checkout/{uid}/sessions", {"payAsset": ETH})
    if s["status"] == "quote":
        _, s = call("POST", f"{base}/api/public/checkout/{uid}/sessions/{s['id']}/accept")
    events = f"{base}/api/public/sandbox/payment-links/{uid}/events"
    # The full amount: the sandbox takes the session to `complete` at once.
    _, s = call("POST", events, {"type": "deposit", "amount": s["requiredSellAmount"]})
    return uid, s


class Payer(threading.Thread):
    def __init__(self, base, receiver_url):
        super().__init__(daemon=True)
        self.base, self.receiver_url = base, receiver_url
        self.done, self.error, self.last_uid = 0, None, None
        self.stop_flag = threading.Event()

    def run(self):
        try:
            while not self.stop_flag.is_set():
                uid, s = pay_once(self.base, self.receiver_url, self.done)
                if s["status"] != "complete":
                    raise run.BenchError(f"payment {uid} ended {s['status']}")
                self.last_uid = uid
                self.done += 1
        except Exception as e:  # reported by the main thread
            self.error = e


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise run.BenchError("no VmRSS line")


def soak(name, db_url, args):
    creds = run.bootstrap(db_url)
    receiver = Receiver()
    env_extra = {"PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
                 "PAY_RATE_LIMIT_ANONYMOUS_LINKS": "1000000/60",
                 "PAY_RATE_LIMIT_CHECKOUT_STARTS": "1000000/60"}
    old = dict(os.environ)
    os.environ.update(env_extra)
    try:
        srv = run.Server(db_url, args.workers)
    finally:
        os.environ.clear()
        os.environ.update(old)
    payer = None
    try:
        time.sleep(1)
        idle = rss_kb(srv.proc.pid)
        key = {"KEY_ID": creds["keyId"], "KEY_SECRET": creds["keySecret"]}
        links = srv.base + "/api/partner/v1/pay/payment-links"
        hdrs = {"x-svc-key-id": creds["keyId"], "x-svc-key-secret": creds["keySecret"]}
        _, first = call("POST", links, {"amount": "12.50", "title": "soak"}, hdrs)
        uid = first["uid"]
        payer = Payer(srv.base, receiver.url)
        payer.start()
        samples, requests = [], 0
        start = time.time()
        next_sample = start
        total = args.seconds
        step = max(1, min(3, total // 20))
        while time.time() - start < total:
            for url, script in [(links, CREATE_LUA), (links, GET_LUA), (f"{links}/{uid}", GET_LUA),
                                (f"{srv.base}/pay/{uid}", None)]:
                r = run.wrk(url, step, args.connections, script, key)
                requests += r["requests"]
                if time.time() >= next_sample:
                    samples.append((round(time.time() - start, 1), rss_kb(srv.proc.pid)))
                    print(f"  {name} t={samples[-1][0]:>6}s rss {samples[-1][1]} kB "
                          f"requests {requests} payments {payer.done} webhooks {receiver.count}",
                          flush=True)
                    next_sample += args.sample
                if payer.error:
                    raise run.BenchError(f"payer: {payer.error}")
        payer.stop_flag.set()
        payer.join(60)
        if payer.error:
            raise run.BenchError(f"payer: {payer.error}")
        if payer.done == 0:
            raise run.BenchError("no payment was made")
        # Every payment's webhook reaches the receiver: the dispatcher shares the database with
        # the load and may trail it; it drains once the load stops.
        stopped = time.time()
        while receiver.count < payer.done and time.time() < stopped + 120:
            time.sleep(0.2)
        drain = time.time() - stopped
        print(f"  {name}: webhooks drained {drain:.1f} s after the load stopped", flush=True)
        if receiver.count < payer.done:
            raise run.BenchError(f"{payer.done} payments but only {receiver.count} webhooks received")
        warm = [kb for t, kb in samples if t <= args.warmup][-3:] or [samples[0][1]]
        end = [kb for _, kb in samples[-3:]]
        growth = statistics.median(end) / statistics.median(warm) - 1
        return {"idle_rss_kb": idle, "warm_rss_kb": statistics.median(warm),
                "end_rss_kb": statistics.median(end), "max_rss_kb": max(kb for _, kb in samples),
                "growth": growth, "requests": requests, "payments": payer.done,
                "webhooks_received": receiver.count, "webhook_drain_s": drain, "seconds": total,
                "samples": samples}
    finally:
        if payer:
            payer.stop_flag.set()
        srv.stop()
        receiver.stop()


def main():
    ap = argparse.ArgumentParser()
    run.add_common_args(ap, rounds=1, seconds=600, connections=8)
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    ap.add_argument("--minutes", type=float, default=None, help="load time per backend (default 10)")
    ap.add_argument("--sample", type=float, default=10, help="seconds between RSS samples")
    args = ap.parse_args()
    run.require_tool("wrk", "wrk")
    run.finish_args(args, rounds=1, seconds=600)
    args.seconds = 20 if args.smoke else int((args.minutes or 10) * 60)
    args.sample = 2 if args.smoke else args.sample
    args.warmup = max(args.seconds * 0.1, 2 * args.sample)
    out = {}
    import tempfile
    tmp = tempfile.mkdtemp(prefix="pay-soak-")
    try:
        if args.only in (None, "sqlite"):
            print("sqlite:", flush=True)
            out["sqlite"] = soak("sqlite", f"sqlite://{tmp}/soak.db", args)
        if args.only in (None, "postgres"):
            dbname = f"pay_soak_{os.getpid()}"
            run.psql(run.PG_URL, f"CREATE DATABASE {dbname}")
            try:
                print("postgres:", flush=True)
                out["postgres"] = soak("postgres", run.with_db(run.PG_URL, dbname), args)
            finally:
                run.psql(run.PG_URL, f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    for name, r in out.items():
        print(f"{name}: idle {r['idle_rss_kb']} kB, after warm-up {r['warm_rss_kb']:.0f} kB, "
              f"end {r['end_rss_kb']:.0f} kB (max {r['max_rss_kb']}), growth {r['growth'] * 100:.1f} %, "
              f"{r['requests']} requests, {r['payments']} payments, {r['webhooks_received']} webhooks "
              f"in {r['seconds']} s", flush=True)
    if args.smoke:
        print("smoke run ok: every figure measured, no errors; figures not written")
        return
    os.makedirs(run.OUT, exist_ok=True)
    with open(os.path.join(run.OUT, "soak.json"), "w") as f:
        json.dump(out, f, indent=2)


if __name__ == "__main__":
    try:
        main()
    except run.BenchError as e:
        sys.exit(f"benchmark failed: {e}")
