#!/usr/bin/env python3
"""DPoP-protected reads: `GET /api/partner/v1/pay/payment-links/{uid}` with a DPoP-bound OAuth
token and a fresh ES256 proof per request (pre-generated; `get_with_dpop.lua` sends each once),
as a ratio to the bare loop verifying the same proofs with pay-dpop's `verify_proof` on the
same cores (`dpop_proofs verify`, in the same round). In the same round, the same GET with the
company's API key: the route without DPoP, the most a DPoP-protected read of it could reach,
and from the two, what DPoP adds per request. Both backends, several rounds, medians.

  python3 bench/dpop.py                 # 3 rounds x 10 s, 32 connections, both backends
  python3 bench/dpop.py --smoke         # one 1-second round on the debug build (CI)

Every round checks that it measured something (run.py's wrk checks: requests made, every answer
2xx, no socket errors; the loop verified every proof). Results: bench/out/dpop.json.
"""

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
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


def proofs_bin():
    return os.path.join(os.path.dirname(run.BIN), "dpop_proofs")


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


def measure(db_url, args, tmp):
    creds = run.bootstrap(db_url)
    srv = run.Server(db_url, args.workers)
    rounds = []
    try:
        key = os.path.join(tmp, "key")
        run.sh([proofs_bin(), "key", key])
        token = bound_token(srv, db_url, key)
        # The link is the grant's own (a grant reads only the links it created).
        links = srv.base + "/api/partner/v1/pay/payment-links"
        proof = run.sh([proofs_bin(), "one", key, "POST", links, token]).strip()
        link = run.http("POST", links, {"authorization": f"DPoP {token}", "DPoP": proof,
                                        "content-type": "application/json"},
                        {"title": "Bench", "amount": "10.00", "currency": "USDC"})
        url = f"{srv.base}/api/partner/v1/pay/payment-links/{link['uid']}"
        for r in range(args.rounds):
            # Fresh proofs each round (their iat must be within 300 s), as many as the round
            # can use; the loop verifies the very same file.
            path = os.path.join(tmp, f"proofs-{r}")
            run.sh([proofs_bin(), "many", key, "GET", url, token, str(args.proofs), path])
            served = run.wrk(url, args.seconds, args.connections, LUA,
                             env={"PROOFS": path, "TOKEN": token, "THREADS": str(WRK_THREADS)})
            loop = json.loads(run.sh([proofs_bin(), "verify", path, "GET", url, token,
                                      str(args.workers)]))
            # The same GET with the company's API key: the route without DPoP (no proof, no
            # token row, no jti write), the most any DPoP-protected read of it could reach.
            keyed = run.wrk(url, args.seconds, args.connections, run.GET_LUA,
                            env={"KEY_ID": creds["keyId"], "KEY_SECRET": creds["keySecret"]})
            ratio = served["rps"] / loop["per_sec"]
            # What DPoP adds to one request, in microseconds of the whole machine's time.
            added_us = 1e6 / served["rps"] - 1e6 / keyed["rps"]
            rounds.append({"served": served, "verify_loop": loop, "ratio": ratio, "api_key": keyed,
                           "api_key_ratio": keyed["rps"] / loop["per_sec"], "dpop_added_us": added_us})
            print(f"  round {r + 1}: {served['rps']:.0f} req/s (p99 {served['p99_ms']:.1f} ms), "
                  f"bare verify {loop['per_sec']:.0f}/s, ratio {ratio:.1%}; same GET with an API key "
                  f"{keyed['rps']:.0f} req/s ({keyed['rps'] / loop['per_sec']:.1%} of the loop); "
                  f"DPoP adds {added_us:.0f} us per request", flush=True)
    finally:
        srv.stop()
    return {"rounds": rounds,
            "median_rps": run.median([x["served"]["rps"] for x in rounds]),
            "median_verify_per_sec": run.median([x["verify_loop"]["per_sec"] for x in rounds]),
            "median_ratio": run.median([x["ratio"] for x in rounds]),
            "median_api_key_ratio": run.median([x["api_key_ratio"] for x in rounds]),
            "median_dpop_added_us": run.median([x["dpop_added_us"] for x in rounds])}


def main():
    ap = argparse.ArgumentParser()
    run.add_common_args(ap, rounds=3, seconds=10, connections=32)
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    ap.add_argument("--proofs", type=int, default=None,
                    help="proofs per round, more than the round sends (default 200000, smoke: 20000)")
    args = ap.parse_args()
    args.proofs = args.proofs or (20000 if args.smoke else 200000)
    run.require_tool("wrk", "wrk")
    if args.only != "sqlite":
        run.require_tool("psql", "postgresql-client")
    run.finish_args(args, rounds=3, seconds=10)
    tmp = tempfile.mkdtemp(prefix="pay-bench-dpop-")
    summary = {"connections": args.connections, "seconds": args.seconds, "rounds": args.rounds,
               "profile": args.profile, "workers": args.workers, "cpus": os.cpu_count()}
    try:
        if args.only in (None, "sqlite"):
            print("sqlite:", flush=True)
            summary["sqlite"] = measure(f"sqlite://{tmp}/bench.db", args, tmp)
        if args.only in (None, "postgres"):
            name = f"pay_bench_dpop_{os.getpid()}"
            run.psql(run.PG_URL, f"CREATE DATABASE {name}")
            try:
                print("postgres:", flush=True)
                summary["postgres"] = measure(run.with_db(run.PG_URL, name), args, tmp)
            finally:
                run.psql(run.PG_URL, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.smoke:
        print("smoke run ok: every figure measured, no errors; figures not written")
        return
    print(json.dumps({k: v for k, v in summary.items() if k not in ("sqlite", "postgres")}))
    for b in ("sqlite", "postgres"):
        if b in summary:
            s = summary[b]
            print(f"{b}: median {s['median_rps']:.0f} req/s, bare verify {s['median_verify_per_sec']:.0f}/s, "
                  f"ratio {s['median_ratio']:.1%}; API-key GET {s['median_api_key_ratio']:.1%} of the loop; "
                  f"DPoP adds {s['median_dpop_added_us']:.0f} us per request")
    os.makedirs(run.OUT, exist_ok=True)
    with open(os.path.join(run.OUT, "dpop.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    try:
        main()
    except run.BenchError as e:
        sys.exit(f"benchmark failed: {e}")
