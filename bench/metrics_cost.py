#!/usr/bin/env python3
"""What `GET /metrics` costs the request rates (issue 33): create-link and link detail with the
metrics on (`PAY_METRICS_TOKEN` set: the middleware counts and times every request) and off
(neither `PAY_METRICS_TOKEN` nor `PAY_METRICS_LISTEN`: requests pass through uncounted), A/B in
the same rounds, the order alternating from round to round (on first, then off first), one
server at a time on the same database. Each round's ratio on/off is taken side by side; the
medians of those ratios are quoted. The "on" server is scraped after its round and must have
counted the requests wrk made (the switch really switched).

Usage: python3 bench/metrics_cost.py [--rounds 3] [--seconds 10] [--connections 32] [--only sqlite|postgres]
       python3 bench/metrics_cost.py --smoke     # one 1-second round on the debug build (CI)
Needs: wrk, psql, a local PostgreSQL (PAY_BENCH_POSTGRES_URL). Targets loopback only.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the shared helpers: build, wrk, servers, checks)

TOKEN = "bench-metrics-token-0123456789abcdef"
CREATE = '{route="/api/partner/v1/pay/payment-links",method="POST",status="201"}'
DETAIL = '{route="/api/partner/v1/pay/payment-links/{uid}",method="GET",status="200"}'


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


def counted(base, series):
    req = urllib.request.Request(base + "/metrics", headers={"authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req) as r:
        text = r.read().decode()
    m = re.search(r"^pay_http_requests_total" + re.escape(series) + r" (\d+)", text, re.M)
    return int(m.group(1)) if m else 0


def measure_backend(name, db_url, args):
    creds = run.bootstrap(db_url)
    env = {"KEY_ID": creds["keyId"], "KEY_SECRET": creds["keySecret"]}
    hdrs = {"x-svc-key-id": creds["keyId"], "x-svc-key-secret": creds["keySecret"],
            "content-type": "application/json"}
    rates = {(route, m): [] for route in ["create", "detail"] for m in ["on", "off"]}
    ratios = {"create": [], "detail": []}
    uid = None
    for r in range(args.rounds):
        order = ["on", "off"] if r % 2 == 0 else ["off", "on"]
        got = {}
        for mode in order:
            srv = Server(db_url, args.workers, metrics=mode == "on")
            try:
                links = srv.base + "/api/partner/v1/pay/payment-links"
                if uid is None:
                    uid = run.http("POST", links, hdrs, {"amount": "12.50", "title": "detail"})["uid"]
                c = run.wrk(links, args.seconds, args.connections, run.CREATE_LUA, env)
                if name == "postgres":
                    run.psql(db_url, "ANALYZE payment_links")
                d = run.wrk(f"{links}/{uid}", args.seconds, args.connections, run.GET_LUA, env)
                if mode == "on":
                    seen = (counted(srv.base, CREATE), counted(srv.base, DETAIL))
                    if seen[0] < c["requests"] or seen[1] < d["requests"]:
                        raise run.BenchError(f"metrics on counted {seen}, wrk made {c['requests']}, {d['requests']}")
                else:
                    status = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                             srv.base + "/metrics"], capture_output=True, text=True).stdout
                    if status != "404":
                        raise run.BenchError(f"metrics off but /metrics answered {status}")
            finally:
                srv.stop()
            got[mode] = (c, d)
            rates[("create", mode)].append(c["rps"])
            rates[("detail", mode)].append(d["rps"])
        for i, route in enumerate(["create", "detail"]):
            ratios[route].append(got["on"][i]["rps"] / got["off"][i]["rps"])
        print(f"  {name} round {r + 1} ({' then '.join(order)}): create on {got['on'][0]['rps']:.0f}/s "
              f"off {got['off'][0]['rps']:.0f}/s ({ratios['create'][-1]:.3f}) | detail on {got['on'][1]['rps']:.0f}/s "
              f"off {got['off'][1]['rps']:.0f}/s ({ratios['detail'][-1]:.3f})", flush=True)
    out = {k: run.median(v) for k, v in ratios.items()}
    print(f"{name}: median on/off create {out['create']:.3f} ({run.median(rates[('create', 'on')]):.0f} against "
          f"{run.median(rates[('create', 'off')]):.0f}/s), detail {out['detail']:.3f} "
          f"({run.median(rates[('detail', 'on')]):.0f} against {run.median(rates[('detail', 'off')]):.0f}/s)",
          flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    run.add_common_args(ap, rounds=3, seconds=10, connections=32)
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    args = ap.parse_args()
    run.require_tool("wrk", "wrk")
    run.finish_args(args, rounds=3, seconds=10)
    tmp = tempfile.mkdtemp(prefix="pay-metrics-cost-")
    try:
        if args.only in (None, "sqlite"):
            print("sqlite:", flush=True)
            measure_backend("sqlite", f"sqlite://{tmp}/cost.db", args)
        if args.only in (None, "postgres"):
            dbname = f"pay_metrics_cost_{os.getpid()}"
            run.psql(run.PG_URL, f"CREATE DATABASE {dbname}")
            try:
                print("postgres:", flush=True)
                measure_backend("postgres", run.with_db(run.PG_URL, dbname), args)
            finally:
                run.psql(run.PG_URL, f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    if args.smoke:
        print("smoke run ok: every figure measured, no errors; figures not written")


if __name__ == "__main__":
    try:
        main()
    except run.BenchError as e:
        sys.exit(f"benchmark failed: {e}")
