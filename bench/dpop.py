#!/usr/bin/env python3
"""DPoP-protected reads: `GET /api/partner/v1/pay/payment-links/{uid}` with a DPoP-bound OAuth
token and a fresh ES256 proof per request (pre-generated; `get_with_dpop.lua` sends each once),
as a ratio to the bare loop verifying the same proofs with pay-dpop's `verify_proof` on the
same cores (`dpop_proofs verify`, in the same round). In the same round, the same GET with the
company's API key: the route without DPoP, the most a DPoP-protected read of it could reach,
and from the two, what DPoP adds per request. Both backends, several rounds, medians.

  python3 bench/dpop.py                 # 3 rounds x 10 s, 32 connections, both backends
  python3 bench/dpop.py --smoke         # one 1-second round on the debug build (CI)
  python3 bench/dpop.py --baseline DIR  # also an older build (DIR/release/pay-server), A/B per round

The DPoP target is the DPoP GET's rate over the API-key GET's, same build, same round. Each wrk
run also reads the server's CPU time (/proc/<pid>/stat utime + stime, plus PostgreSQL's backends
of the server's database) over the run: requests per CPU-second, i.e. per busy core. Beside it,
in every round, the reference DPoP implementation (the npm `oidc-provider`, bench/oidc-provider,
installed with `npm ci`) serves a DPoP-bound `GET /me` (its userinfo) from its own in-memory
store on one Node process, with fresh proofs from the same generator; `--no-peer` leaves it out.

Every round checks that it measured something (run.py's wrk checks: requests made, every answer
2xx, no socket errors; the loop verified every proof). Results: bench/out/dpop.json.
"""

import argparse
import html
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the shared helpers: build, wrk, servers, checks)

REDIRECT = "http://127.0.0.1:9/oauth/callback"
SCOPES = "pay:payment-links:read pay:payment-links:write"
VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
LUA = os.path.join(run.ROOT, "bench", "get_with_dpop.lua")
WRK_THREADS = 2


PEER_DIR = os.path.join(run.ROOT, "bench", "oidc-provider")
# The proof generator and the bare verification loop: the measured build's (the harness, not
# a subject of the A/B comparison).
PROOFS_BIN = None


def proofs_bin():
    return PROOFS_BIN


def cpu_seconds(pids):
    """utime + stime of the processes `pids` (all their threads), in seconds."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def pg_backends(db_url):
    """The PostgreSQL backend processes serving the database of `db_url` (the server's pool)."""
    name = urllib.parse.urlparse(db_url).path.lstrip("/")
    out = run.psql(run.PG_URL, f"SELECT pid FROM pg_stat_activity WHERE datname = '{name}'")
    return [int(x) for x in out.split()]


def children_cpu_seconds():
    """User + system CPU seconds of this script's finished children (wrk, once it ended)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_wrk(url, seconds, conns, lua, env, watched):
    """run.wrk, polled: its output, and wrk's own CPU seconds before the first request (its Lua
    `init`, which reads the round's proofs: a cost per run, not per request) and in all. The
    first request is when the watched processes' CPU first moves (polled every 20 ms)."""
    proc = subprocess.Popen(run.wrk_cmd(url, seconds, conns, lua), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **env})
    server0 = cpu_seconds(watched)
    setup = None
    while proc.poll() is None:
        if setup is None and cpu_seconds(watched) > server0:
            setup = cpu_seconds([proc.pid])
        time.sleep(0.02)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise run.BenchError(f"wrk exited with {proc.returncode}\n{out}{err}")
    return out, setup or 0.0


def loaded(url, seconds, conns, lua, env, pids):
    """run.wrk, and the CPU seconds the processes `pids()` used meanwhile: requests per
    CPU-second (per busy core). Also the client's own CPU (wrk and its Lua script, on the same
    cores), per request, without its setup: what the load generator takes from the server's
    cores while the requests run."""
    watched = pids()
    before = cpu_seconds(watched)
    client_before = children_cpu_seconds()
    out, setup = timed_wrk(url, seconds, conns, lua, env or {}, watched)
    res = run.wrk_result(url, out)
    cpu = cpu_seconds(watched) - before
    if cpu <= 0:
        raise run.BenchError(f"{url}: no CPU time measured")
    res["cpu_s"] = cpu
    res["per_core"] = res["requests"] / cpu
    res["client_cpu_s"] = children_cpu_seconds() - client_before
    res["client_setup_s"] = setup
    res["client_us_per_request"] = 1e6 * (res["client_cpu_s"] - setup) / res["requests"]
    return res


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


def browse(opener, method, url, cookies, form=None, headers=None):
    """One request of the merchant's browser: status, Location, body; cookies kept."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    h = {"cookie": "; ".join(f"{k}={v}" for k, v in cookies.items()), **(headers or {})}
    if form is not None:
        h["content-type"] = "application/x-www-form-urlencoded"
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        r = opener.open(req)
    except urllib.error.HTTPError as e:
        r = e
    for c in r.headers.get_all("set-cookie") or []:
        k, v = c.split(";")[0].split("=", 1)
        cookies[k] = v
    return r.status, r.headers.get("location"), r.read().decode()


def hidden(page):
    return [(html.unescape(n), html.unescape(v))
            for n, v in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', page)]


def bound_token(srv, db_url, key):
    """A DPoP-bound access token for `key`: a public app, the owner signs in and approves on
    the pages, the code is exchanged with a proof of `key`."""
    app = json.loads(run.sh([run.BIN, "admin", "create-oauth-app", "--name", "Bench App",
                             "--redirect-uri", REDIRECT, "--scopes", SCOPES, "--public",
                             "--dpop-bound"], env=run.server_env(db_url)))
    cid = app["clientId"]
    q = urllib.parse.urlencode({"response_type": "code", "client_id": cid, "redirect_uri": REDIRECT,
                                "scope": SCOPES, "state": "s", "code_challenge": CHALLENGE,
                                "code_challenge_method": "S256"})
    opener = urllib.request.build_opener(NoRedirect)
    cookies = {}
    authorize = f"{srv.base}/oauth/authorize?{q}"
    _, to_signin, _ = browse(opener, "GET", authorize, cookies)
    _, _, page = browse(opener, "GET", srv.base + to_signin, cookies)
    form = {"email": "bench@bench.example", "password": "bench password 123", **dict(hidden(page))}
    status, back, _ = browse(opener, "POST", srv.base + "/signin", cookies, form)
    if status != 303:
        raise run.BenchError(f"sign-in answered {status}")
    _, _, consent = browse(opener, "GET", srv.base + back, cookies)
    company = re.search(r'name="company_id" value="([^"]*)"', consent).group(1)
    form = dict(hidden(consent))
    form.update(company_id=company, decision="approve")
    _, to, _ = browse(opener, "POST", srv.base + "/oauth/authorize", cookies, form)
    code = urllib.parse.parse_qs(urllib.parse.urlparse(to).query)["code"][0]
    proof = run.sh([proofs_bin(), "one", key, "POST", srv.base + "/oauth/token"]).strip()
    body = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "client_id": cid,
                                   "redirect_uri": REDIRECT, "code_verifier": VERIFIER}).encode()
    req = urllib.request.Request(srv.base + "/oauth/token", data=body, method="POST",
                                 headers={"DPoP": proof,
                                          "content-type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(req) as r:
        tokens = json.loads(r.read())
    if tokens["token_type"] != "DPoP":
        raise run.BenchError(f"not a DPoP-bound token: {tokens}")
    return tokens["access_token"]


class Subject:
    """One pay-server build serving one database: a DPoP-bound token, its link, the API key."""

    def __init__(self, label, bindir, db_url, args, tmp):
        self.label, self.bindir, self.db_url, self.tmp = label, bindir, db_url, tmp
        self.use()
        self.creds = run.bootstrap(db_url)
        self.srv = run.Server(db_url, args.workers)
        try:
            self.key = os.path.join(tmp, f"key-{label}")
            run.sh([proofs_bin(), "key", self.key])
            self.token = bound_token(self.srv, db_url, self.key)
            # The link is the grant's own (a grant reads only the links it created).
            links = self.srv.base + "/api/partner/v1/pay/payment-links"
            proof = run.sh([proofs_bin(), "one", self.key, "POST", links, self.token]).strip()
            link = run.http("POST", links, {"authorization": f"DPoP {self.token}", "DPoP": proof,
                                            "content-type": "application/json"},
                            {"title": "Bench", "amount": "10.00", "currency": "USDC"})
            self.url = f"{self.srv.base}/api/partner/v1/pay/payment-links/{link['uid']}"
        except Exception:
            self.srv.stop()
            raise

    def use(self):
        """Points run.BIN (bootstrap, admin commands, the server) at this build."""
        run.BIN = os.path.join(self.bindir, "pay-server")

    def pids(self):
        pids = [self.srv.proc.pid]
        if self.db_url.startswith("postgres"):
            pids += pg_backends(self.db_url)
        return pids

    def round(self, r, args, verify):
        # Fresh proofs each round (their iat must be within 300 s), as many as the round can
        # use; the loop verifies the very same file.
        path = os.path.join(self.tmp, f"proofs-{self.label}-{r}")
        run.sh([proofs_bin(), "many", self.key, "GET", self.url, self.token, str(args.proofs), path])
        served = loaded(self.url, args.seconds, args.connections, LUA,
                        {"PROOFS": path, "TOKEN": self.token, "THREADS": str(WRK_THREADS)}, self.pids)
        # The same GET with the company's API key: the route without DPoP (no proof, no token
        # row, no jti write), the most any DPoP-protected read of it could reach.
        keyed = loaded(self.url, args.seconds, args.connections, run.GET_LUA,
                       {"KEY_ID": self.creds["keyId"], "KEY_SECRET": self.creds["keySecret"]},
                       self.pids)
        out = {"served": served, "api_key": keyed, "dpop_over_api_key": served["rps"] / keyed["rps"],
               # What DPoP adds to one request, in microseconds of the whole machine's time.
               "dpop_added_us": 1e6 / served["rps"] - 1e6 / keyed["rps"]}
        line = (f"  round {r + 1} {self.label}: DPoP {served['rps']:.0f} req/s (p99 "
                f"{served['p99_ms']:.1f} ms, {served['per_core']:.0f}/CPU-s), API key "
                f"{keyed['rps']:.0f} req/s ({keyed['per_core']:.0f}/CPU-s): DPoP/API key "
                f"{out['dpop_over_api_key']:.1%}, DPoP adds {out['dpop_added_us']:.0f} us; "
                f"wrk's CPU per request {served['client_us_per_request']:.0f} us (DPoP) against "
                f"{keyed['client_us_per_request']:.0f} us (API key)")
        if verify:
            loop = json.loads(run.sh([proofs_bin(), "verify", path, "GET", self.url, self.token,
                                      str(args.workers)]))
            out["verify_loop"] = loop
            out["ratio"] = served["rps"] / loop["per_sec"]
            line += f"; bare verify {loop['per_sec']:.0f}/s (DPoP GET {out['ratio']:.1%} of it)"
        os.unlink(path)
        print(line, flush=True)
        return out

    def stop(self):
        self.srv.stop()


class Peer:
    """oidc-provider (bench/oidc-provider/serve.js) on one Node process: a DPoP-bound access
    token for the benchmark's key, `GET /me` with a fresh proof per request."""

    def __init__(self, tmp):
        self.tmp = tmp
        if not os.path.isdir(os.path.join(PEER_DIR, "node_modules")):
            run.sh(["npm", "ci", "--no-audit", "--no-fund"], cwd=PEER_DIR)
        self.key = os.path.join(tmp, "key-peer")
        run.sh([proofs_bin(), "key", self.key])
        jkt = run.sh([proofs_bin(), "jkt", self.key]).strip()
        port = run.free_port()
        self.url = f"http://127.0.0.1:{port}/me"
        self.proc = subprocess.Popen(["node", "serve.js"], cwd=PEER_DIR, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True,
                                     env={**os.environ, "PORT": str(port), "JKT": jkt})
        # Its start-up warnings (in-memory adapter, development keys) come first.
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.token = json.loads(line)["token"]
                break
        else:
            self.proc.kill()
            raise run.BenchError("oidc-provider did not start")

    def round(self, r, args):
        path = os.path.join(self.tmp, f"proofs-peer-{r}")
        run.sh([proofs_bin(), "many", self.key, "GET", self.url, self.token, str(args.proofs), path])
        res = loaded(self.url, args.seconds, args.connections, LUA,
                     {"PROOFS": path, "TOKEN": self.token, "THREADS": str(WRK_THREADS)},
                     lambda: [self.proc.pid])
        os.unlink(path)
        print(f"  round {r + 1} oidc-provider: DPoP GET /me {res['rps']:.0f} req/s (p99 "
              f"{res['p99_ms']:.1f} ms), {res['per_core']:.0f}/CPU-s "
              f"({res['cpu_s']:.1f} CPU-s over {args.seconds} s)", flush=True)
        return res

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def peer_available():
    """node 20+ and npm, else a printed SKIP line."""
    ok = shutil.which("node") and shutil.which("npm")
    if ok:
        major = run.sh(["node", "-p", "process.versions.node.split('.')[0]"]).strip()
        ok = int(major) >= 20
    if not ok:
        print("SKIP: oidc-provider peer (needs node 20 or later and npm)", flush=True)
    return bool(ok)


def measure(db_url, args, tmp, builds, peer):
    """Rounds on one backend: in each, every build (the measured one first) and the peer."""
    subjects = []
    try:
        for label, bindir, url in builds(db_url):
            subjects.append(Subject(label, bindir, url, args, tmp))
        rounds = []
        for r in range(args.rounds):
            one = {s.label: s.round(r, args, verify=(s is subjects[0])) for s in subjects}
            if peer:
                one["oidc-provider"] = peer.round(r, args)
            rounds.append(one)
    finally:
        for s in subjects:
            s.stop()
    summary = {"rounds": rounds}
    for s in subjects:
        mine = [x[s.label] for x in rounds]
        summary[s.label] = {
            "median_dpop_rps": run.median([x["served"]["rps"] for x in mine]),
            "median_api_key_rps": run.median([x["api_key"]["rps"] for x in mine]),
            "median_dpop_over_api_key": run.median([x["dpop_over_api_key"] for x in mine]),
            "median_dpop_per_core": run.median([x["served"]["per_core"] for x in mine]),
            "median_api_key_per_core": run.median([x["api_key"]["per_core"] for x in mine]),
            "median_dpop_added_us": run.median([x["dpop_added_us"] for x in mine]),
            "median_client_us_dpop": run.median([x["served"]["client_us_per_request"] for x in mine]),
            "median_client_us_api_key": run.median([x["api_key"]["client_us_per_request"]
                                                    for x in mine]),
        }
        if "ratio" in mine[0]:
            summary[s.label]["median_ratio_to_verify_loop"] = run.median([x["ratio"] for x in mine])
    if peer:
        mine = [x["oidc-provider"] for x in rounds]
        summary["oidc-provider"] = {"median_rps": run.median([x["rps"] for x in mine]),
                                    "median_per_core": run.median([x["per_core"] for x in mine])}
    return summary


def main():
    global PROOFS_BIN
    ap = argparse.ArgumentParser()
    run.add_common_args(ap, rounds=3, seconds=10, connections=32)
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    ap.add_argument("--proofs", type=int, default=None,
                    help="proofs per round, more than the round sends (default 200000, smoke: 20000)")
    ap.add_argument("--baseline", metavar="DIR",
                    help="a cargo target dir of an older build (DIR/<profile>/pay-server), measured "
                         "in the same rounds on its own database (A/B)")
    ap.add_argument("--no-peer", action="store_true", help="leave out oidc-provider")
    args = ap.parse_args()
    args.proofs = args.proofs or (20000 if args.smoke else 200000)
    run.require_tool("wrk", "wrk")
    if args.only != "sqlite":
        run.require_tool("psql", "postgresql-client")
    run.finish_args(args, rounds=3, seconds=10)
    bindir = os.path.dirname(run.BIN)
    PROOFS_BIN = os.path.join(bindir, "dpop_proofs")
    base_dir = None
    if args.baseline:
        base_dir = os.path.join(args.baseline, "release" if args.profile == "release" else "debug")
        if not os.path.exists(os.path.join(base_dir, "pay-server")):
            sys.exit(f"no pay-server in {base_dir}")
    tmp = tempfile.mkdtemp(prefix="pay-bench-dpop-")
    summary = {"connections": args.connections, "seconds": args.seconds, "rounds": args.rounds,
               "profile": args.profile, "workers": args.workers, "cpus": os.cpu_count()}
    peer = None
    try:
        if not args.no_peer and peer_available():
            peer = Peer(tmp)
        if args.only in (None, "sqlite"):
            print("sqlite:", flush=True)

            def sqlite_builds(_):
                yield "new", bindir, f"sqlite://{tmp}/bench.db"
                if base_dir:
                    yield "base", base_dir, f"sqlite://{tmp}/bench-base.db"
            summary["sqlite"] = measure(None, args, tmp, sqlite_builds, peer)
        if args.only in (None, "postgres"):
            names = [f"pay_bench_dpop_{os.getpid()}"] + ([f"pay_bench_dpop_base_{os.getpid()}"] if base_dir else [])
            for name in names:
                run.psql(run.PG_URL, f"CREATE DATABASE {name}")
            try:
                print("postgres:", flush=True)

                def pg_builds(_):
                    yield "new", bindir, run.with_db(run.PG_URL, names[0])
                    if base_dir:
                        yield "base", base_dir, run.with_db(run.PG_URL, names[1])
                summary["postgres"] = measure(None, args, tmp, pg_builds, peer)
            finally:
                for name in names:
                    run.psql(run.PG_URL, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        if peer:
            peer.stop()
        run.BIN = os.path.join(bindir, "pay-server")
        shutil.rmtree(tmp, ignore_errors=True)
    if args.smoke:
        print("smoke run ok: every figure measured, no errors; figures not written")
        return
    print(json.dumps({k: v for k, v in summary.items() if k not in ("sqlite", "postgres")}))
    for b in ("sqlite", "postgres"):
        if b not in summary:
            continue
        for label in ("new", "base"):
            if label in summary[b]:
                m = summary[b][label]
                print(f"{b} {label}: medians DPoP {m['median_dpop_rps']:.0f} req/s "
                      f"({m['median_dpop_per_core']:.0f}/CPU-s), API key {m['median_api_key_rps']:.0f} "
                      f"req/s ({m['median_api_key_per_core']:.0f}/CPU-s), DPoP/API key "
                      f"{m['median_dpop_over_api_key']:.1%}, DPoP adds {m['median_dpop_added_us']:.0f} us; "
                      f"wrk CPU per request {m['median_client_us_dpop']:.0f} us (DPoP), "
                      f"{m['median_client_us_api_key']:.0f} us (API key)")
        if "oidc-provider" in summary[b]:
            m = summary[b]["oidc-provider"]
            print(f"{b} oidc-provider: median {m['median_rps']:.0f} req/s, "
                  f"{m['median_per_core']:.0f}/CPU-s")
    os.makedirs(run.OUT, exist_ok=True)
    with open(os.path.join(run.OUT, "dpop.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    try:
        main()
    except run.BenchError as e:
        sys.exit(f"benchmark failed: {e}")
