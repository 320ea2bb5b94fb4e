#!/usr/bin/env python3
"""Foundation benchmark: pay-server beside its ceilings, measured side by side in one run.

For each backend (SQLite, PostgreSQL) and each of ROUNDS rounds, it measures with wrk on
loopback: create-link (POST), list-links (GET, 200 rows) and link detail (GET), and in the same
round the ceilings: a bare actix-web JSON handler (hello), pgbench inserting a 1 KB jsonb row,
pgbench selecting the same 200 rows and pgbench running the detail route's three queries in one
transaction (PostgreSQL), a bare single-writer insert loop and a bare loop running the detail
route's three queries on one connection per worker (SQLite), all with prepared statements.
Beside the route's own work it also measures pgbench running the create route's own INSERT
(PostgreSQL) and the bare handler sending a body as large as the list's; a route that does two
kinds of work on the same cores can go no faster than 1 / (1/a + 1/b) of their rates alone. It
reports medians and each ratio, plus pay-server's idle resident memory.

Usage: python3 bench/run.py [--rounds 3] [--seconds 10] [--connections 32] [--skip-build]
       python3 bench/run.py --smoke     # one 1-second round per figure on the debug build (CI)
Needs: wrk, psql and pgbench (Debian packages wrk, postgresql-client and, for pgbench, the
PostgreSQL server package postgresql), a local PostgreSQL (PAY_BENCH_POSTGRES_URL, default
postgres://postgres@127.0.0.1:5432/test). Targets loopback only.

Every measurement is checked: a wrk run with no requests, a non-2xx answer or a socket error, a
pgbench run with no or failed transactions, a zero rate or memory reading stops the run with a
non-zero exit status. A smoke run proves the scripts still work; its figures mean nothing.
"""
import argparse
import base64
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
PG_URL = os.environ.get("PAY_BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")
OUT = os.path.join(ROOT, "bench", "out")
# Seals webhook secrets at rest: PostgreSQL needs it in the environment of every pay-server
# command (SQLite generates pay.key beside its database file). One random key per run.
ENCRYPTION_KEY = base64.b64encode(os.urandom(32)).decode()
# The binaries of the chosen cargo profile (use_profile).
BIN = HELLO = LOOP = READ_LOOP = None


def use_profile(profile):
    """Points BIN, HELLO and LOOP at the binaries of a cargo profile ("release" or "dev")."""
    global BIN, HELLO, LOOP, READ_LOOP
    d = os.path.join(TARGET, "release" if profile == "release" else "debug")
    BIN, HELLO, LOOP, READ_LOOP = (os.path.join(d, n) for n in
                                   ("pay-server", "hello", "sqlite-insert-loop", "sqlite-read-loop"))


use_profile("release")


def build(profile):
    cmd = ["cargo", "build", "-p", "pay-server", "-p", "pay-bench-ceiling"]
    if profile == "release":
        cmd.append("--release")
    subprocess.run(cmd, cwd=ROOT, check=True)
    use_profile(profile)


def add_common_args(ap, rounds, seconds, connections):
    ap.add_argument("--rounds", type=int, default=None, help=f"default {rounds} (smoke: 1)")
    ap.add_argument("--seconds", type=int, default=None, help=f"default {seconds} (smoke: 1)")
    ap.add_argument("--connections", type=int, default=connections)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--smoke", action="store_true",
                    help="one short round per figure, checked, nothing written: the scripts still work")
    ap.add_argument("--profile", choices=["release", "dev"], default=None,
                    help="cargo profile of the binaries (default release; smoke: dev, the build the tests share)")


def finish_args(args, rounds, seconds):
    args.rounds = args.rounds or (1 if args.smoke else rounds)
    args.seconds = args.seconds or (1 if args.smoke else seconds)
    args.profile = args.profile or ("dev" if args.smoke else "release")
    if args.skip_build:
        use_profile(args.profile)
    else:
        build(args.profile)
    return args


def require_tool(tool, package):
    """Exits unless `tool` is there. PostgreSQL's tools must also answer `--version`: Debian's
    /usr/bin/pgbench is a wrapper from postgresql-client-common that fails when the real
    pgbench, shipped with the server package, is missing. (wrk has no such option.)"""
    ok = shutil.which(tool) is not None
    if ok and tool in ("psql", "pgbench"):
        ok = subprocess.run([tool, "--version"], capture_output=True).returncode == 0
    if not ok:
        sys.exit(f"{tool} not found: apt-get install -y {package}")


class BenchError(Exception):
    """A measurement that did not measure: no requests, errors, a zero reading."""


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise BenchError(f"{cmd[0]} exited with {r.returncode}\n{r.stdout}{r.stderr}")
    return r.stdout


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


def wrk(url, seconds, conns, script=None, env=None, threads=2):
    """wrk's requests per second and p99 latency; a run that sent nothing, got a non-2xx
    answer or had a socket error (connect, read, write, timeout) is not a measurement."""
    out = sh(wrk_cmd(url, seconds, conns, script, threads), env={**os.environ, **(env or {})})
    return wrk_result(url, out)


def wrk_cmd(url, seconds, conns, script=None, threads=2):
    cmd = ["wrk", f"-t{threads}", f"-c{conns}", f"-d{seconds}s", "--latency", url]
    if script:
        cmd[1:1] = ["-s", script]
    return cmd


def wrk_result(url, out):
    """wrk's output read and checked as `wrk` does."""
    requests = re.search(r"(\d+) requests in", out)
    if not requests or int(requests.group(1)) == 0:
        raise BenchError(f"{url}: no requests completed\n{out}")
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if non2xx:
        raise BenchError(f"{url}: {non2xx.group(1)} non-2xx responses\n{out}")
    errors = re.search(r"Socket errors: (.*)", out)
    if errors:
        raise BenchError(f"{url}: socket errors: {errors.group(1)}\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"\s99%\s+([\d.]+)(us|ms|s)", out)
    p99 = float(m.group(1)) * UNITS[m.group(2)]
    return {"rps": rps, "p99_ms": p99, "requests": int(requests.group(1))}


def pgbench(dburl, script_text, seconds, conns):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script_text)
        path = f.name
    u = urllib.parse.urlparse(dburl)
    # Prepared statements, as diesel uses: the strongest ceiling.
    cmd = ["pgbench", "-n", "-M", "prepared", "-c", str(conns), "-j", "2", "-T", str(seconds), "-f", path,
           "-h", u.hostname or "127.0.0.1", "-p", str(u.port or 5432), "-U", u.username or "postgres",
           "-r", u.path.lstrip("/")]
    try:
        out = sh(cmd)
    finally:
        os.unlink(path)
    processed = re.search(r"number of transactions actually processed: (\d+)", out)
    failed = re.search(r"number of failed transactions: (\d+)", out)
    if not processed or int(processed.group(1)) == 0:
        raise BenchError(f"pgbench: no transactions\n{out}")
    if failed and int(failed.group(1)) > 0:
        raise BenchError(f"pgbench: {failed.group(1)} failed transactions\n{out}")
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    lat = re.search(r"latency average = ([\d.]+) ms", out)
    return {"rps": tps, "avg_ms": float(lat.group(1)) if lat else None,
            "transactions": int(processed.group(1))}


def psql(dburl, sql):
    return sh(["psql", "-qAt", dburl, "-c", sql])


def with_db(url, name):
    u = urllib.parse.urlparse(url)
    return urllib.parse.urlunparse(u._replace(path="/" + name))


def server_env(db_url, **extra):
    """The environment of every pay-server command on `db_url` (serve and bootstrap alike)."""
    env = {**os.environ, "PAY_DATABASE_URL": db_url, "PAY_LOG": "warn", **extra}
    for name in ["PAY_BASE_URL", "PAY_ENCRYPTION_KEY", "PAY_ENCRYPTION_KEYS_OLD"]:
        env.pop(name, None)
    if db_url.startswith("postgres"):
        env["PAY_ENCRYPTION_KEY"] = ENCRYPTION_KEY
    return env


class Server:
    def __init__(self, db_url, workers, binary=None):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = server_env(db_url, PAY_LISTEN=f"127.0.0.1:{self.port}", PAY_DEMO="false",
                         PAY_WORKERS=str(workers))
        self.proc = subprocess.Popen([binary or BIN, "serve"], env=env, stdout=subprocess.DEVNULL)
        try:
            wait_ready(self.base + "/readyz")
        except Exception:
            self.proc.kill()
            raise

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise BenchError("no VmRSS line for pay-server")

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def bootstrap(db_url, binary=None):
    out = sh([binary or BIN, "admin", "bootstrap", "--company", "Bench Co", "--email", "bench@bench.example"],
             env=server_env(db_url, PAY_BOOTSTRAP_PASSWORD="bench password 123"))
    return json.loads(out)


CREATE_LUA = os.path.join(ROOT, "bench", "create_link.lua")
GET_LUA = os.path.join(ROOT, "bench", "get_with_key.lua")


def each_backend(only, name, measure):
    """`measure(backend, db_url)` on a SQLite file of its own, then on a PostgreSQL database of
    its own (or only the backend `only` names), each removed after: the results by backend."""
    out = {}
    tmp = tempfile.mkdtemp(prefix=f"pay-bench-{name}-")
    try:
        if only in (None, "sqlite"):
            print("sqlite:", flush=True)
            out["sqlite"] = measure("sqlite", f"sqlite://{tmp}/{name}.db")
        if only in (None, "postgres"):
            dbname = f"pay_bench_{name}_{os.getpid()}"
            psql(PG_URL, f"CREATE DATABASE {dbname}")
            try:
                print("postgres:", flush=True)
                out["postgres"] = measure("postgres", with_db(PG_URL, dbname))
            finally:
                psql(PG_URL, f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def median(xs):
    return statistics.median(xs)


# The detail route's own queries, as diesel sends them (PostgreSQL's statement log), for pgbench.
DETAIL_SQL = """BEGIN;
SELECT "payment_links"."id", "payment_links"."uid", "payment_links"."company_id", "payment_links"."status", "payment_links"."payload", "payment_links"."created_at", "payment_links"."updated_at", "payment_links"."expires_at", "payment_links"."created_by_kind", "payment_links"."created_by_id", "payment_links"."grant_id", "payment_links"."grant_subscription_id" FROM "payment_links" WHERE (("payment_links"."uid" = '{uid}') AND ("payment_links"."company_id" = '{company}')) LIMIT 1;
SELECT "payment_sessions"."id", "payment_sessions"."link_id", "payment_sessions"."company_id", "payment_sessions"."status", "payment_sessions"."previous_status", "payment_sessions"."version", "payment_sessions"."invoice_asset", "payment_sessions"."invoice_amount", "payment_sessions"."selected_sell_asset", "payment_sessions"."required_sell_amount", "payment_sessions"."expected_buy_amount", "payment_sessions"."destination_address", "payment_sessions"."deposit_address", "payment_sessions"."channel_id", "payment_sessions"."composite_channel_id", "payment_sessions"."source_chain", "payment_sessions"."expires_at", "payment_sessions"."settlement", "payment_sessions"."error_message", "payment_sessions"."created_at", "payment_sessions"."updated_at" FROM "payment_sessions" WHERE ("payment_sessions"."link_id" = '{link}') ORDER BY "payment_sessions"."created_at" DESC, "payment_sessions"."id" DESC LIMIT 1;
SELECT "timeline_events"."id", "timeline_events"."link_id", "timeline_events"."session_id", "timeline_events"."type", "timeline_events"."created_at", "timeline_events"."data" FROM "timeline_events" WHERE ("timeline_events"."link_id" = '{link}') ORDER BY "timeline_events"."created_at" ASC, "timeline_events"."id" ASC;
COMMIT;
"""


# The create route's INSERT as diesel sends it (PostgreSQL's statement log), with a fresh id and
# uid per transaction and the payload the benchmark's create sends, for pgbench.
OWN_INSERT_SQL = """INSERT INTO "payment_links" ("id", "uid", "company_id", "status", "payload", "created_at", "updated_at", "expires_at", "created_by_kind", "created_by_id", "grant_id", "anonymous", "grant_subscription_id") VALUES (gen_random_uuid()::text, substr(md5(random()::text), 1, 22), '{company}', 'active', '{{"title":"Bench order","amount":"12.50","currency":"USDC","asset":"eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","orderId":"bench-1","expirationTime":"24h","metadata":{{"cart":"mug"}},"runtimeMode":"merchant_target_net_v2","billingVersion":"v2","merchantName":"Bench Co","merchantPaymentLinkTheme":"system"}}', 1764000000000, 1764000000000, 1764086400000, 'api_key', '{by}', NULL, false, NULL);
"""


def shared(a, b):
    """The rate of doing two kinds of work per request on the same cores, each alone at `a`
    and `b` per second: 1 / (1/a + 1/b)."""
    return 1.0 / (1.0 / a + 1.0 / b)


class Hello:
    """A bare actix handler (`hello`) answering `/body` with `size` bytes, for one `with`."""

    def __init__(self, workers, size):
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/body"
        self.proc = subprocess.Popen([HELLO, f"127.0.0.1:{port}", str(workers), str(size)])

    def __enter__(self):
        try:
            wait_ready(self.url)
        except Exception:
            self.proc.kill()
            raise
        return self.url

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(10)


def http_raw(url, headers):
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as r:
        return r.read()


def run_backend(name, db_url, args, hello_url, rounds):
    creds = bootstrap(db_url)
    srv = Server(db_url, args.workers)
    try:
        return measure(name, db_url, args, hello_url, rounds, creds, srv)
    finally:
        srv.stop()


def measure(name, db_url, args, hello_url, rounds, creds, srv):
    env = {"KEY_ID": creds["keyId"], "KEY_SECRET": creds["keySecret"]}
    links = srv.base + "/api/partner/v1/pay/payment-links"
    hdrs = {"x-svc-key-id": creds["keyId"], "x-svc-key-secret": creds["keySecret"],
            "content-type": "application/json"}
    for i in range(args.seed):
        http("POST", links, hdrs, {"amount": "12.50", "title": f"seed {i}"})
    first = http("GET", links, hdrs)["data"][0]
    uid, link_id = first["uid"], first["id"]
    results = {k: [] for k in ["create", "list", "detail", "hello", "ceiling_insert", "ceiling_select",
                               "ceiling_detail", "ceiling_own_insert", "ceiling_body"]}
    for r in range(rounds):
        results["hello"].append(wrk(hello_url, args.seconds, args.connections))
        results["create"].append(wrk(links, args.seconds, args.connections, CREATE_LUA, env))
        if name == "postgres":
            # The create phase grew the table fast; fresh statistics (autovacuum would catch up)
            # so that the server and pgbench both get the index plan.
            psql(db_url, "ANALYZE payment_links")
        results["list"].append(wrk(links, args.seconds, args.connections, GET_LUA, env))
        # A bare actix handler sending a body as large as the list's, made once.
        with Hello(args.workers, len(http_raw(links, hdrs))) as body_url:
            results["ceiling_body"].append(wrk(body_url, args.seconds, args.connections))
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
            # The create route's own statement (its reads come from the server's read cache).
            results["ceiling_own_insert"].append(pgbench(
                db_url, OWN_INSERT_SQL.format(company=creds["companyId"], by=creds["userId"]),
                args.seconds, args.connections))
            results["ceiling_detail"].append(pgbench(
                db_url, DETAIL_SQL.format(uid=uid, company=creds["companyId"], link=link_id),
                args.seconds, args.connections))
        else:
            loop_db = os.path.join(tempfile.gettempdir(), f"pay-bench-loop-{os.getpid()}.db")
            try:
                rate = float(sh([LOOP, loop_db, str(args.seconds)]).strip())
            finally:
                for suffix in ["", "-wal", "-shm"]:
                    if os.path.exists(loop_db + suffix):
                        os.unlink(loop_db + suffix)
            if rate <= 0:
                raise BenchError(f"sqlite-insert-loop: {rate} inserts/s")
            results["ceiling_insert"].append({"rps": rate})
            # The server's own file (WAL mode: readers run beside the idle server).
            rate = float(sh([READ_LOOP, db_url.removeprefix("sqlite://"), str(args.seconds),
                             str(args.workers), uid, creds["companyId"]]).strip())
            if rate <= 0:
                raise BenchError(f"sqlite-read-loop: {rate} reads/s")
            results["ceiling_detail"].append({"rps": rate})
        print(f"  {name} round {r + 1}: create {results['create'][-1]['rps']:.0f}/s "
              f"list {results['list'][-1]['rps']:.0f}/s detail {results['detail'][-1]['rps']:.0f}/s "
              f"hello {results['hello'][-1]['rps']:.0f}/s ceiling-insert {results['ceiling_insert'][-1]['rps']:.0f}/s "
              f"ceiling-detail {results['ceiling_detail'][-1]['rps']:.0f}/s"
              + (f" ceiling-select {results['ceiling_select'][-1]['rps']:.0f}/s" if results["ceiling_select"] else "")
              + f" | create/insert {results['create'][-1]['rps'] / results['ceiling_insert'][-1]['rps']:.2f}"
              f" detail/ceiling {results['detail'][-1]['rps'] / results['ceiling_detail'][-1]['rps']:.2f}"
              f" detail/hello {results['detail'][-1]['rps'] / results['hello'][-1]['rps']:.3f}"
              + (f" list/select {results['list'][-1]['rps'] / results['ceiling_select'][-1]['rps']:.2f}" if results["ceiling_select"] else "")
              + f" | body {results['ceiling_body'][-1]['rps']:.0f}/s"
              + (f" own-insert {results['ceiling_own_insert'][-1]['rps']:.0f}/s"
                 f" create/own-insert {results['create'][-1]['rps'] / results['ceiling_own_insert'][-1]['rps']:.2f}"
                 f" list/shared(select, body) {results['list'][-1]['rps'] / shared(results['ceiling_select'][-1]['rps'], results['ceiling_body'][-1]['rps']):.2f}"
                 if results["ceiling_own_insert"] else
                 f" list/body {results['list'][-1]['rps'] / results['ceiling_body'][-1]['rps']:.2f}")
              + f" | p99 create {results['create'][-1]['p99_ms']:.1f} list {results['list'][-1]['p99_ms']:.1f}"
              f" detail {results['detail'][-1]['p99_ms']:.1f} ms",
              flush=True)
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
        "ceiling_select_rps": med("ceiling_select"), "ceiling_detail_rps": med("ceiling_detail"),
        "create_vs_insert_ceiling": ratio("create", "ceiling_insert"),
        "detail_vs_hello": ratio("detail", "hello"),
        "detail_vs_detail_ceiling": ratio("detail", "ceiling_detail"),
        "list_vs_select_ceiling": ratio("list", "ceiling_select"),
        "ceiling_body_rps": med("ceiling_body"), "ceiling_own_insert_rps": med("ceiling_own_insert"),
        "create_vs_own_insert": ratio("create", "ceiling_own_insert"),
        "list_vs_body": ratio("list", "ceiling_body"),
        "list_vs_shared_select_body": median([
            x["rps"] / shared(y["rps"], z["rps"])
            for x, y, z in zip(res["list"], res["ceiling_select"], res["ceiling_body"])])
        if res["ceiling_select"] else None,
        "rounds": res,
    }


def print_medians(name, s):
    """The medians of the per-round ratios, one line per backend."""
    fmt = lambda v, spec: "-" if v is None else format(v, spec)
    print(f"  {name} medians: create/insert {fmt(s['create_vs_insert_ceiling'], '.2f')} "
          f"(p99 {s['create_p99_ms']:.1f} ms), detail/ceiling {fmt(s['detail_vs_detail_ceiling'], '.2f')} "
          f"(p99 {s['detail_p99_ms']:.1f} ms), detail/hello {fmt(s['detail_vs_hello'], '.3f')}, "
          f"list/select {fmt(s['list_vs_select_ceiling'], '.2f')} (p99 {s['list_p99_ms']:.1f} ms)", flush=True)
    print(f"  {name} medians beside the route's own work: create/own-insert "
          f"{fmt(s['create_vs_own_insert'], '.2f')}, list/body {fmt(s['list_vs_body'], '.2f')}, "
          f"list/shared(select, body) {fmt(s['list_vs_shared_select_body'], '.2f')}", flush=True)


def idle_rss(db_url, workers, settle):
    srv = Server(db_url, workers)
    try:
        time.sleep(settle)
        kb = srv.rss_kb()
    finally:
        srv.stop()
    if not kb:
        raise BenchError("idle resident memory read as 0")
    return kb


def main():
    ap = argparse.ArgumentParser()
    add_common_args(ap, rounds=3, seconds=10, connections=32)
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    ap.add_argument("--seed", type=int, default=None, help="links created before the rounds (default 200, smoke: 20)")
    args = ap.parse_args()
    args.seed = args.seed if args.seed is not None else (20 if args.smoke else 200)
    for tool, package in [("wrk", "wrk"), ("psql", "postgresql-client"), ("pgbench", "postgresql")]:
        require_tool(tool, package)
    finish_args(args, rounds=3, seconds=10)
    os.makedirs(OUT, exist_ok=True)
    hello_port = free_port()
    hello = subprocess.Popen([HELLO, f"127.0.0.1:{hello_port}", str(args.workers)])
    hello_url = f"http://127.0.0.1:{hello_port}/hello"
    tmp = tempfile.mkdtemp(prefix="pay-bench-")
    summary = {"connections": args.connections, "seconds": args.seconds, "rounds": args.rounds,
               "profile": args.profile, "workers": args.workers, "cpus": os.cpu_count()}
    try:
        wait_ready(hello_url)
        if args.only in (None, "sqlite"):
            db = f"sqlite://{tmp}/bench.db"
            print("sqlite:", flush=True)
            summary["sqlite"] = summarize("sqlite", run_backend("sqlite", db, args, hello_url, args.rounds))
            print_medians("sqlite", summary["sqlite"])
            summary["sqlite"]["idle_rss_kb"] = idle_rss(db, args.workers, 0.5 if args.smoke else 2)
        if args.only in (None, "postgres"):
            name = f"pay_bench_{os.getpid()}"
            psql(PG_URL, f"CREATE DATABASE {name}")
            db = with_db(PG_URL, name)
            try:
                psql(db, "CREATE TABLE bench_rows (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), "
                         "payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())")
                print("postgres:", flush=True)
                summary["postgres"] = summarize("postgres", run_backend("postgres", db, args, hello_url, args.rounds))
                print_medians("postgres", summary["postgres"])
                summary["postgres"]["idle_rss_kb"] = idle_rss(db, args.workers, 0.5 if args.smoke else 2)
            finally:
                psql(PG_URL, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        hello.terminate()
        shutil.rmtree(tmp, ignore_errors=True)
    if args.smoke:
        print(f"smoke run ok ({', '.join(k for k in ('sqlite', 'postgres') if k in summary)}): "
              "every figure measured, no errors; figures not written")
        return
    print(json.dumps(summary, indent=2))
    with open(os.path.join(OUT, "foundation.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    try:
        main()
    except BenchError as e:
        sys.exit(f"benchmark failed: {e}")
