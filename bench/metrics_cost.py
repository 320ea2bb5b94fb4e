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

`--instructions N` measures instead what the metrics add in instructions, which no other load
on the machine changes: each round starts the "on" and the "off" server in turn (ABBA over the
rounds) under valgrind's callgrind (`--instr-atstart=no`: uninstrumented until asked), one
worker, the outbox workers off (PAY_DISPATCHER=false: their polls would fall into the window),
warms each route up with 200 requests, then per route counts the server's instructions (every
thread) over N requests sent one after another on one keep-alive connection
(`callgrind_control`: zero, instrumentation on, the requests, dump, off) and over an idle
window as long as the requests took (what runs without requests: the schedulers' timers). The
figure is instructions per request on/off, per round and its median; the idle window's count
is printed beside it.

Usage: python3 bench/metrics_cost.py [--rounds 3] [--pairs 6] [--seconds 2] [--connections 32] [--only sqlite|postgres]
       python3 bench/metrics_cost.py --instructions 2000 [--rounds 3]   # callgrind, needs valgrind
       python3 bench/metrics_cost.py --smoke     # one round of one 1-second pair on the debug build (CI)
Needs: wrk, psql, a local PostgreSQL (PAY_BENCH_POSTGRES_URL). Targets loopback only.
"""
import argparse
import glob
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
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


class CallgrindServer:
    """pay-server under callgrind, uninstrumented until `count` asks; one worker, no outbox
    workers, the metrics on or off."""

    def __init__(self, db_url, metrics, out):
        self.port = run.free_port()
        self.out = out
        env = run.server_env(db_url, PAY_LISTEN=f"127.0.0.1:{self.port}", PAY_DEMO="false",
                             PAY_WORKERS="1", PAY_DISPATCHER="false")
        env.pop("PAY_METRICS_TOKEN", None)
        env.pop("PAY_METRICS_LISTEN", None)
        if metrics:
            env["PAY_METRICS_TOKEN"] = TOKEN
        self.proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                                      f"--callgrind-out-file={out}", run.BIN, "serve"],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            run.wait_ready(f"http://127.0.0.1:{self.port}/readyz", timeout=180)
        except Exception:
            self.proc.kill()
            raise

    def control(self, *opts):
        subprocess.run(["callgrind_control", *opts, str(self.proc.pid)], capture_output=True, check=True)

    def send(self, method, path, headers, body, n):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            for _ in range(n):
                c.request(method, path, body=body, headers=headers)
                r = c.getresponse()
                r.read()
                if r.status not in (200, 201):
                    raise run.BenchError(f"{method} {path}: {r.status}")
        finally:
            c.close()

    def count(self, label, work):
        """Instructions of the server (every thread) while `work()` runs; the seconds it took."""
        for f in glob.glob(self.out + ".*"):
            os.remove(f)
        self.control("--zero")
        self.control("--instr=on")
        t0 = time.time()
        work()
        took = time.time() - t0
        self.control(f"--dump={label}")
        self.control("--instr=off")
        total = 0
        for _ in range(100):
            files = glob.glob(self.out + ".*")
            if files:
                break
            time.sleep(0.1)
        for f in files:
            with open(f) as fh:
                total += next(int(line.split()[1]) for line in fh if line.startswith("totals:"))
            os.remove(f)
        if total <= 0:
            raise run.BenchError(f"callgrind counted nothing for {label}")
        return total, took

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def instructions_backend(name, db_url, args):
    tmp = tempfile.mkdtemp(prefix="pay-metrics-callgrind-")
    try:
        return instructions_rounds(name, db_url, args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def instructions_rounds(name, db_url, args, tmp):
    creds = run.bootstrap(db_url)
    hdrs = {"x-svc-key-id": creds["keyId"], "x-svc-key-secret": creds["keySecret"],
            "content-type": "application/json"}
    path = "/api/partner/v1/pay/payment-links"
    create_body = json.dumps({"amount": "12.50", "title": "Bench order", "orderId": "bench-1"})
    rounds = []
    for r in range(args.rounds):
        one = {}
        for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
            srv = CallgrindServer(db_url, mode == "on", os.path.join(tmp, f"cg-{name}-{mode}-{r}"))
            try:
                uid = run.http("POST", f"http://127.0.0.1:{srv.port}{path}", hdrs,
                               {"amount": "12.50", "title": "detail"})["uid"]
                routes = {"create": ("POST", path, create_body), "detail": ("GET", f"{path}/{uid}", None)}
                for method, p, body in routes.values():
                    srv.send(method, p, hdrs, body, 200)
                got = {}
                for route, (method, p, body) in routes.items():
                    total, took = srv.count(route, lambda: srv.send(method, p, hdrs, body, args.instructions))
                    idle, _ = srv.count(f"{route}-idle", lambda: time.sleep(took))
                    got[route] = {"per_request": total / args.instructions, "seconds": took,
                                  "idle_per_request": idle / args.instructions}
                # The switch really switched: "on" counted every request, "off" has no /metrics.
                scrape = urllib.request.Request(f"http://127.0.0.1:{srv.port}/metrics",
                                                headers={"authorization": f"Bearer {TOKEN}"})
                try:
                    with urllib.request.urlopen(scrape) as res:
                        text = res.read().decode()
                except urllib.error.HTTPError as e:
                    text = None if e.code == 404 else f"status {e.code}"
                if mode == "off" and text is not None:
                    raise run.BenchError(f"metrics off but /metrics answered: {text[:80]}")
                if mode == "on":
                    for route in ("create", "detail"):
                        m = re.search(r"^pay_http_requests_total" + re.escape(SERIES[route]) + r" (\d+)",
                                      text or "", re.M)
                        if not m or int(m.group(1)) < args.instructions + 200:
                            raise run.BenchError(f"metrics on did not count every {route} request")
                one[mode] = got
            finally:
                srv.stop()
        for route in ("create", "detail"):
            one[route] = one["on"][route]["per_request"] / one["off"][route]["per_request"]
        rounds.append(one)
        print(f"  {name} round {r + 1} ({args.instructions} requests per route): "
              + " | ".join(f"{route} on {one['on'][route]['per_request']:,.0f} off "
                           f"{one['off'][route]['per_request']:,.0f} instructions/request ({one[route]:.4f}; "
                           f"idle window {one['on'][route]['idle_per_request']:,.0f} and "
                           f"{one['off'][route]['idle_per_request']:,.0f} per request)"
                           for route in ("create", "detail")), flush=True)
    out = {"rounds": rounds}
    for route in ("create", "detail"):
        out[route] = run.median([x[route] for x in rounds])
        print(f"{name} {route}: instructions per request on/off rounds "
              f"{', '.join(f'{x[route]:.4f}' for x in rounds)}, median {out[route]:.4f}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    run.add_common_args(ap, rounds=3, seconds=2, connections=32)
    ap.add_argument("--pairs", type=int, default=None, help="A/B pairs per route and round (default 6, smoke: 1)")
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    ap.add_argument("--instructions", type=int, default=None, metavar="N",
                    help="count instructions per request under callgrind over N requests per route "
                         "and round instead of timing wrk runs (needs valgrind)")
    args = ap.parse_args()
    args.pairs = args.pairs or (1 if args.smoke else 6)
    if args.instructions:
        run.require_tool("valgrind", "valgrind")
        run.finish_args(args, rounds=3, seconds=2)
        return instructions_main(args)
    run.require_tool("wrk", "wrk")
    run.finish_args(args, rounds=3, seconds=2)
    summary = {"rounds": args.rounds, "pairs": args.pairs, "seconds": args.seconds,
               "connections": args.connections, "profile": args.profile, "workers": args.workers}
    summary.update(run.each_backend(args.only, "metrics_cost",
                                    lambda name, db_url: measure_backend(name, db_url, args)))
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


def instructions_main(args):
    summary = {"rounds": args.rounds, "requests": args.instructions, "profile": args.profile}
    summary.update(run.each_backend(args.only, "metrics_instructions",
                                    lambda name, db_url: instructions_backend(name, db_url, args)))
    if args.smoke:
        print("smoke run ok: every figure measured, no errors; figures not written")
        return
    for b in ("sqlite", "postgres"):
        for route in ("create", "detail"):
            if b in summary:
                x = summary[b][route]
                print(f"{b} {route}: metrics add {x - 1:+.2%} instructions per request: "
                      f"{'under' if x <= 1 + TARGET else 'NOT under'} {TARGET:.0%}")
    os.makedirs(run.OUT, exist_ok=True)
    with open(os.path.join(run.OUT, "metrics_instructions.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    try:
        main()
    except run.BenchError as e:
        sys.exit(f"benchmark failed: {e}")
