#!/usr/bin/env python3
"""Foundation benchmark: pay-server beside its ceilings, measured side by side in one run.

For each backend (SQLite, PostgreSQL) and each of ROUNDS rounds, it measures with wrk on
loopback: create-link (POST), list-links (GET, 200 rows) and link detail (GET), and in the same
round the ceilings: a bare actix-web JSON handler (hello), pgbench inserting a 1 KB jsonb row
and pgbench selecting the same 200 rows (PostgreSQL), and a bare single-writer insert loop
(SQLite). It reports medians and each ratio, plus pay-server's idle resident memory.

Usage: python3 bench/run.py [--rounds 3] [--seconds 10] [--connections 32] [--skip-build]
Needs: wrk and pgbench (Debian packages wrk, postgresql-client), a local PostgreSQL
(PAY_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test). Targets loopback only.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BIN = os.path.join(TARGET, "release", "pay-server")
HELLO = os.path.join(TARGET, "release", "hello")
LOOP = os.path.join(TARGET, "release", "sqlite-insert-loop")
PG_URL = os.environ.get("PAY_BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")
OUT = os.path.join(ROOT, "bench", "out")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_ready(url, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except Exception:
            time.sleep(0.05)
    raise RuntimeError(f"{url} not ready")


def http(method, url, headers, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())


UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def wrk(url, seconds, conns, script=None, env=None):
    cmd = ["wrk", "-t2", f"-c{conns}", f"-d{seconds}s", "--latency", url]
    if script:
        cmd[1:1] = ["-s", script]
    out = sh(cmd, env={**os.environ, **(env or {})})
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"\s99%\s+([\d.]+)(us|ms|s)", out)
    p99 = float(m.group(1)) * UNITS[m.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    if non2xx:
        raise RuntimeError(f"{url}: {non2xx.group(1)} non-2xx responses\n{out}")
    return {"rps": rps, "p99_ms": p99, "socket_errors": errors.group(1) if errors else None}


def pgbench(dburl, script_text, seconds, conns):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script_text)
        path = f.name
    u = urllib.parse.urlparse(dburl)
    # Prepared statements, as diesel uses: the strongest ceiling.
    cmd = ["pgbench", "-n", "-M", "prepared", "-c", str(conns), "-j", "2", "-T", str(seconds), "-f", path,
           "-h", u.hostname or "127.0.0.1", "-p", str(u.port or 5432), "-U", u.username or "postgres",
           "-r", u.path.lstrip("/")]
    out = sh(cmd)
    os.unlink(path)
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    lat = re.search(r"latency average = ([\d.]+) ms", out)
    return {"rps": tps, "avg_ms": float(lat.group(1)) if lat else None}


def psql(dburl, sql):
    return sh(["psql", "-qAt", dburl, "-c", sql])


def with_db(url, name):
    u = urllib.parse.urlparse(url)
    return urllib.parse.urlunparse(u._replace(path="/" + name))


class Server:
    def __init__(self, db_url, workers):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PAY_DATABASE_URL": db_url, "PAY_LISTEN": f"127.0.0.1:{self.port}",
               "PAY_LOG": "warn", "PAY_DEMO": "false", "PAY_WORKERS": str(workers)}
        env.pop("PAY_BASE_URL", None)
        self.proc = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL)
        wait_ready(self.base + "/readyz")

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return None

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def bootstrap(db_url):
    out = sh([BIN, "admin", "bootstrap", "--company", "Bench Co", "--email", "bench@bench.example"],
             env={**os.environ, "PAY_DATABASE_URL": db_url, "PAY_LOG": "warn",
                  "PAY_BOOTSTRAP_PASSWORD": "bench password 123"})
    return json.loads(out)


CREATE_LUA = os.path.join(ROOT, "bench", "create_link.lua")
GET_LUA = os.path.join(ROOT, "bench", "get_with_key.lua")


def median(xs):
    return statistics.median(xs)


def run_backend(name, db_url, args, hello_url, rounds):
    creds = bootstrap(db_url)
    env = {"KEY_ID": creds["keyId"], "KEY_SECRET": creds["keySecret"]}
    srv = Server(db_url, args.workers)
    links = srv.base + "/api/partner/v1/pay/payment-links"
    hdrs = {"x-svc-key-id": creds["keyId"], "x-svc-key-secret": creds["keySecret"],
            "content-type": "application/json"}
    for i in range(200):
        http("POST", links, hdrs, {"amount": "12.50", "title": f"seed {i}"})
    uid = http("GET", links, hdrs)["data"][0]["uid"]
    results = {k: [] for k in ["create", "list", "detail", "hello", "ceiling_insert", "ceiling_select"]}
    for r in range(rounds):
        results["hello"].append(wrk(hello_url, args.seconds, args.connections))
        results["create"].append(wrk(links, args.seconds, args.connections, CREATE_LUA, env))
        if name == "postgres":
            # The create phase grew the table fast; fresh statistics (autovacuum would catch up)
            # so that the server and pgbench both get the index plan.
            psql(db_url, "ANALYZE payment_links")
        results["list"].append(wrk(links, args.seconds, args.connections, GET_LUA, env))
        results["detail"].append(wrk(f"{links}/{uid}", args.seconds, args.connections, GET_LUA, env))
        if name == "postgres":
            payload = json.dumps({"note": "x" * 980})
            results["ceiling_insert"].append(pgbench(
                db_url, f"INSERT INTO bench_rows (payload) VALUES ('{payload}'::jsonb);\n",
                args.seconds, args.connections))
            q = ("SELECT id, uid, company_id, status, payload, created_at, updated_at, expires_at, "
                 "created_by_kind, created_by_id, grant_id, anonymous FROM payment_links "
                 f"WHERE company_id = '{creds['companyId']}' AND anonymous = false "
                 "ORDER BY created_at DESC, id DESC LIMIT 200;\n")
            results["ceiling_select"].append(pgbench(db_url, q, args.seconds, args.connections))
        else:
            loop_db = os.path.join(tempfile.gettempdir(), f"pay-bench-loop-{os.getpid()}.db")
            rate = float(sh([LOOP, loop_db, str(args.seconds)]).strip())
            for suffix in ["", "-wal", "-shm"]:
                if os.path.exists(loop_db + suffix):
                    os.unlink(loop_db + suffix)
            results["ceiling_insert"].append({"rps": rate})
        print(f"  {name} round {r + 1}: create {results['create'][-1]['rps']:.0f}/s "
              f"list {results['list'][-1]['rps']:.0f}/s detail {results['detail'][-1]['rps']:.0f}/s "
              f"hello {results['hello'][-1]['rps']:.0f}/s ceiling-insert {results['ceiling_insert'][-1]['rps']:.0f}/s",
              flush=True)
    srv.stop()
    return results


def summarize(name, res):
    """Medians over rounds; each ratio is taken within its round (side by side), then the
    median of those ratios is quoted."""
    med = lambda k, f="rps": median([x[f] for x in res[k]]) if res[k] else None
    ratio = lambda a, b: median([x["rps"] / y["rps"] for x, y in zip(res[a], res[b])]) if res[b] else None
    return {
        "create_rps": med("create"), "create_p99_ms": med("create", "p99_ms"),
        "list_rps": med("list"), "list_p99_ms": med("list", "p99_ms"),
        "detail_rps": med("detail"), "detail_p99_ms": med("detail", "p99_ms"),
        "hello_rps": med("hello"), "ceiling_insert_rps": med("ceiling_insert"),
        "ceiling_select_rps": med("ceiling_select"),
        "create_vs_insert_ceiling": ratio("create", "ceiling_insert"),
        "detail_vs_hello": ratio("detail", "hello"),
        "list_vs_select_ceiling": ratio("list", "ceiling_select"),
        "rounds": res,
    }


def idle_rss(db_url, workers):
    srv = Server(db_url, workers)
    time.sleep(2)
    kb = srv.rss_kb()
    srv.stop()
    return kb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    args = ap.parse_args()
    for tool in ["wrk", "pgbench", "psql"]:
        if not shutil.which(tool):
            sys.exit(f"{tool} not found: apt-get install -y wrk postgresql-client")
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-p", "pay-server", "-p", "pay-bench-ceiling"],
                       cwd=ROOT, check=True)
    os.makedirs(OUT, exist_ok=True)
    hello_port = free_port()
    hello = subprocess.Popen([HELLO, f"127.0.0.1:{hello_port}", str(args.workers)])
    hello_url = f"http://127.0.0.1:{hello_port}/hello"
    wait_ready(hello_url)
    tmp = tempfile.mkdtemp(prefix="pay-bench-")
    summary = {"connections": args.connections, "seconds": args.seconds, "rounds": args.rounds,
               "workers": args.workers, "cpus": os.cpu_count()}
    try:
        if args.only in (None, "sqlite"):
            db = f"sqlite://{tmp}/bench.db"
            print("sqlite:", flush=True)
            summary["sqlite"] = summarize("sqlite", run_backend("sqlite", db, args, hello_url, args.rounds))
            summary["sqlite"]["idle_rss_kb"] = idle_rss(db, args.workers)
        if args.only in (None, "postgres"):
            name = f"pay_bench_{os.getpid()}"
            psql(PG_URL, f"CREATE DATABASE {name}")
            db = with_db(PG_URL, name)
            try:
                psql(db, "CREATE TABLE bench_rows (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), "
                         "payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())")
                print("postgres:", flush=True)
                summary["postgres"] = summarize("postgres", run_backend("postgres", db, args, hello_url, args.rounds))
                summary["postgres"]["idle_rss_kb"] = idle_rss(db, args.workers)
            finally:
                psql(PG_URL, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        hello.terminate()
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(summary, indent=2))
    with open(os.path.join(OUT, "foundation.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
