#!/usr/bin/env python3
"""What `GET /metrics` costs the request rates (issue 33): create-link and link detail with the
metrics on (`PAY_METRICS_TOKEN` set: the middleware counts and times every request) and off
(neither `PAY_METRICS_TOKEN` nor `PAY_METRICS_LISTEN`: requests pass through uncounted).

Both servers run side by side on the same database for the whole backend (same binary, only
the switch differs), each warmed up before the rounds. A round is PAIRS short A/B pairs per
route in ABBA order (on-off, off-on, on-off, ...), so a drift of the shared machine's load
within a round falls on both sides alike. Each pair gives two ratios on/off:
  - the request rate (wrk's requests per second): 1 - ratio is the rate the metrics cost;
  - the server's CPU time per request (utime + stime of the pay-server process over the wrk
    run, /proc/<pid>/stat, as bench/dpop.py reads it): ratio - 1 is the work the metrics add.
    This one is far less sensitive to what else runs on the machine, since it counts only the
    server's own CPU time. On PostgreSQL the database's backends are left out (their work is
    the same on and off), so the share is of the server's work alone: an upper bound of the
    share of the whole request.
A round's figure is the median of its pairs' ratios; the run's figure is the median of the
rounds' figures (each printed). The target (issue 33): under 3 %, i.e. rate ratio >= 0.97 and
CPU-per-request ratio <= 1.03.

The "on" server must have counted every request wrk made in its runs (its counter scraped
before and after), the "off" one must answer `/metrics` 404: the switch really switched.

Usage: python3 bench/metrics_cost.py [--rounds 3] [--pairs 6] [--seconds 2] [--connections 32] [--only sqlite|postgres]
       python3 bench/metrics_cost.py --smoke     # one round of one 1-second pair on the debug build (CI)
Needs: wrk, psql, a local PostgreSQL (PAY_BENCH_POSTGRES_URL). Targets loopback only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the shared helpers: build, wrk, servers, checks)

TOKEN = "bench-metrics-token-0123456789abcdef"
SERIES = {
    "create": '{route="/api/partner/v1/pay/payment-links",method="POST",status="201"}',
    "detail": '{route="/api/partner/v1/pay/payment-links/{uid}",method="GET",status="200"}',
}
TARGET = 0.03


class Server(run.Server):
    """run.Server with the metrics on or off."""

    def __init__(self, db_url, workers, metrics):
        saved = os.environ.get("PAY_METRICS_TOKEN")
        os.environ.pop("PAY_METRICS_TOKEN", None)
        os.environ.pop("PAY_METRICS_LISTEN", None)
        if metrics:
            os.environ["PAY_METRICS_TOKEN"] = TOKEN
        try:
            super().__init__(db_url, workers)
        finally:
            os.environ.pop("PAY_METRICS_TOKEN", None)
            if saved is not None:
                os.environ["PAY_METRICS_TOKEN"] = saved
        self.metrics = metrics

    def cpu_seconds(self):
        """utime + stime of the server process (all its threads), in seconds."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def counted(self, route):
        req = urllib.request.Request(self.base + "/metrics", headers={"authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(req) as r:
            text = r.read().decode()
        m = re.search(r"^pay_http_requests_total" + re.escape(SERIES[route]) + r" (\d+)", text, re.M)
        return int(m.group(1)) if m else 0


def loaded(srv, route, url, args, env):
    """One wrk run against `srv`: its rate, and the server's CPU time per request (us)."""
    lua = run.CREATE_LUA if route == "create" else run.GET_LUA
    before_count = srv.counted(route) if srv.metrics else None
    before = srv.cpu_seconds()
    res = run.wrk(url, args.seconds, args.connections, lua, env)
    cpu = srv.cpu_seconds() - before
    if cpu <= 0:
        raise run.BenchError(f"{url}: no server CPU time measured")
    if srv.metrics:
        seen = srv.counted(route) - before_count
        if seen < res["requests"]:
            raise run.BenchError(f"metrics on counted {seen} {route} requests, wrk made {res['requests']}")
    res["cpu_us"] = cpu * 1e6 / res["requests"]
    return res


def measure_backend(name, db_url, args):
    creds = run.bootstrap(db_url)
    env = {"KEY_ID": creds["keyId"], "KEY_SECRET": creds["keySecret"]}
    hdrs = {"x-svc-key-id": creds["keyId"], "x-svc-key-secret": creds["keySecret"],
            "content-type": "application/json"}
    servers = {}
    try:
        for mode in ("on", "off"):
            servers[mode] = Server(db_url, args.workers, metrics=mode == "on")
        status = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                 servers["off"].base + "/metrics"], capture_output=True, text=True).stdout
        if status != "404":
            raise run.BenchError(f"metrics off but /metrics answered {status}")
        path = "/api/partner/v1/pay/payment-links"
        uid = run.http("POST", servers["on"].base + path, hdrs, {"amount": "12.50", "title": "detail"})["uid"]
        urls = {mode: {"create": s.base + path, "detail": f"{s.base}{path}/{uid}"} for mode, s in servers.items()}
        if not args.smoke:
            # Warm-up, not counted: each server's caches, statements and connections.
            for route in ("create", "detail"):
                for mode in ("on", "off"):
                    loaded(servers[mode], route, urls[mode][route], args, env)
        # Each server's CPU while idle (its background jobs: dispatcher, scheduler, leases):
        # counted into CPU per request too, whichever server holds the jobs' leases. Printed,
        # so a run can tell a background difference from the metrics'.
        idle_s = 0.5 if args.smoke else 3
        before = {m: s.cpu_seconds() for m, s in servers.items()}
        time.sleep(idle_s)
        idle = {m: (s.cpu_seconds() - before[m]) * 1000 / idle_s for m, s in servers.items()}
        print(f"  {name}: idle CPU on {idle['on']:.0f} ms/s, off {idle['off']:.0f} ms/s "
              f"(over {idle_s} s)", flush=True)
        rounds = []
        for r in range(args.rounds):
            one = {}
            for route in ("create", "detail"):
                if name == "postgres" and route == "detail":
                    run.psql(db_url, "ANALYZE payment_links")
                pairs = []
                for p in range(args.pairs):
                    order = ("on", "off") if p % 2 == 0 else ("off", "on")
                    got = {m: loaded(servers[m], route, urls[m][route], args, env) for m in order}
                    pairs.append({"order": order, "on": got["on"], "off": got["off"],
                                  "rate": got["on"]["rps"] / got["off"]["rps"],
                                  "cpu": got["on"]["cpu_us"] / got["off"]["cpu_us"]})
                one[route] = {
                    "pairs": pairs,
                    "rate": run.median([x["rate"] for x in pairs]),
                    "cpu": run.median([x["cpu"] for x in pairs]),
                    "on_rps": run.median([x["on"]["rps"] for x in pairs]),
                    "off_rps": run.median([x["off"]["rps"] for x in pairs]),
                    "on_cpu_us": run.median([x["on"]["cpu_us"] for x in pairs]),
                    "off_cpu_us": run.median([x["off"]["cpu_us"] for x in pairs]),
                }
            rounds.append(one)
            print(f"  {name} round {r + 1} ({args.pairs} ABBA pairs x {args.seconds} s per route): "
                  + " | ".join(f"{route} on {o['on_rps']:.0f}/s off {o['off_rps']:.0f}/s rate on/off "
                               f"{o['rate']:.3f}, CPU/request on {o['on_cpu_us']:.1f} us off "
                               f"{o['off_cpu_us']:.1f} us ({o['cpu']:.3f})"
                               for route, o in one.items()), flush=True)
    finally:
        for s in servers.values():
            s.stop()
    out = {"rounds": rounds, "idle_cpu_ms_per_s": idle}
    for route in ("create", "detail"):
        out[route] = {k: run.median([x[route][k] for x in rounds])
                      for k in ("rate", "cpu", "on_rps", "off_rps", "on_cpu_us", "off_cpu_us")}
        out[route]["all_pairs_rate"] = run.median([p["rate"] for x in rounds for p in x[route]["pairs"]])
        out[route]["all_pairs_cpu"] = run.median([p["cpu"] for x in rounds for p in x[route]["pairs"]])
        o = out[route]
        rates = ", ".join(f"{x[route]['rate']:.3f}" for x in rounds)
        cpus = ", ".join(f"{x[route]['cpu']:.3f}" for x in rounds)
        print(f"{name} {route}: rate on/off rounds {rates}, median {o['rate']:.3f} (all pairs "
              f"{o['all_pairs_rate']:.3f}); CPU per request on/off rounds {cpus}, median {o['cpu']:.3f} "
              f"(all pairs {o['all_pairs_cpu']:.3f}; {o['on_cpu_us']:.1f} against {o['off_cpu_us']:.1f} us)",
              flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    run.add_common_args(ap, rounds=3, seconds=2, connections=32)
    ap.add_argument("--pairs", type=int, default=None, help="A/B pairs per route and round (default 6, smoke: 1)")
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    args = ap.parse_args()
    args.pairs = args.pairs or (1 if args.smoke else 6)
    run.require_tool("wrk", "wrk")
    run.finish_args(args, rounds=3, seconds=2)
    tmp = tempfile.mkdtemp(prefix="pay-metrics-cost-")
    summary = {"rounds": args.rounds, "pairs": args.pairs, "seconds": args.seconds,
               "connections": args.connections, "profile": args.profile, "workers": args.workers}
    try:
        if args.only in (None, "sqlite"):
            print("sqlite:", flush=True)
            summary["sqlite"] = measure_backend("sqlite", f"sqlite://{tmp}/cost.db", args)
        if args.only in (None, "postgres"):
            dbname = f"pay_metrics_cost_{os.getpid()}"
            run.psql(run.PG_URL, f"CREATE DATABASE {dbname}")
            try:
                print("postgres:", flush=True)
                summary["postgres"] = measure_backend("postgres", run.with_db(run.PG_URL, dbname), args)
            finally:
                run.psql(run.PG_URL, f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.smoke:
        print("smoke run ok: every figure measured, no errors; figures not written")
        return
    for b in ("sqlite", "postgres"):
        for route in ("create", "detail"):
            if b in summary:
                o = summary[b][route]
                ok = o["rate"] >= 1 - TARGET and o["cpu"] <= 1 + TARGET
                print(f"{b} {route}: metrics cost {1 - o['rate']:+.1%} of the rate, {o['cpu'] - 1:+.1%} "
                      f"CPU per request: {'under' if ok else 'NOT under'} {TARGET:.0%}")
    os.makedirs(run.OUT, exist_ok=True)
    with open(os.path.join(run.OUT, "metrics_cost.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    try:
        main()
    except run.BenchError as e:
        sys.exit(f"benchmark failed: {e}")
