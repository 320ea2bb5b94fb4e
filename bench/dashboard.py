#!/usr/bin/env python3
"""The merchant dashboard's two figures of issue 32, per backend (SQLite, PostgreSQL):

1. The Payment links page with 200 rows (`GET /dashboard/{company}/links`, HTML, signed in with
   the bootstrap user's session cookie) against the JSON list of the same 200 links (`GET
   /api/partner/v1/pay/payment-links`, API key; the API has no `limit`: it always answers the
   200 newest), wrk on loopback, both in the same round (the order alternating), ROUNDS rounds:
   the ratio HTML/JSON is taken within each round, the median quoted. Target: >= 0.7.
2. The Home page (`GET /dashboard/{company}`: today's and 30 days' collected amounts per asset,
   payments per day, underpaid sessions, failing endpoints, overdue subscriptions, latest events)
   with SESSIONS payment sessions in the company, seeded with bulk SQL from rows of a real
   sandbox payment (one completed, one underpaid, made through the public routes first): spread
   over DAYS days, 80 % complete, 15 % expired, the rest pending quotes and a few underpaid;
   their rows of the daily roll-up `collected_days` made by the migration's own backfill (its
   INSERT ... SELECT, read from migrations/2026-11-28-200000_collected_days/up.sql).
   One connection (so a latency is one request's service time, no queueing), SECONDS per round,
   ROUNDS rounds, wrk's p99 (median of the rounds). The page's time bounds its aggregates'.
   Target: < 20 ms. Then the plan of each aggregate query (EXPLAIN QUERY PLAN on SQLite, EXPLAIN
   on PostgreSQL), printed and checked: an index, no scan of the table, no sort of the rows.

Every wrk run is checked (run.wrk: requests made, no non-2xx, no socket error); the pages are
checked to carry what they should (200 link rows; the seeded sessions' count in the chart).

Usage: python3 bench/dashboard.py [--rounds 3] [--seconds 10] [--connections 32] [--only sqlite|postgres]
       python3 bench/dashboard.py --smoke     # one 1-second round, 2,000 sessions, debug build (CI)
Needs: wrk, psql, a local PostgreSQL (PAY_BENCH_POSTGRES_URL). Targets loopback only.
"""
import argparse
import csv
import html
import io
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the shared helpers: build, wrk, servers, checks)

EMAIL, PASSWORD = "bench@bench.example", "bench password 123"
LINKS = "/api/partner/v1/pay/payment-links"
USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
DAY_MS = 86_400_000
LINK_TARGET, HOME_P99_MS = 0.7, 20.0
# The Home page's reads of the sessions, as the store sends them (values inlined), for the
# plans, each with the index it must read: `company_collected` (crates/pay-store/src/ports/
# collected.rs: the daily roll-up `collected_days`, a range of its primary key) and
# `company_sessions_in` (the underpaid list).
AGGREGATE_QUERIES = {
    "collected (completed sessions of the last 30 days, by UTC day and invoice asset)": {
        "sql": "SELECT day, invoice_asset, payments, units_high, units_low, fraction_high, "
               "fraction_low, fraction_digits FROM collected_days WHERE company_id = '{company}' "
               "AND day >= {first_day} ORDER BY day, invoice_asset",
        "table": "collected_days",
        "index": {"sqlite": "sqlite_autoindex_collected_days_1", "postgres": "collected_days_pkey"},
        # One company's roll-up is a few hundred rows (days x assets, two pages however many
        # sessions it has), which PostgreSQL rightly reads whole while the table holds that
        # company alone; with many companies it reads the primary key's range, in its order. The
        # plan is asked with sequential and bitmap scans off, so the check is that this range,
        # with no sort, is the read.
        "postgres_settings": "SET enable_seqscan = off; SET enable_bitmapscan = off; ",
    },
    "underpaid sessions (newest change first, 20)": {
        "sql": "SELECT * FROM payment_sessions WHERE company_id = '{company}' AND status = 'underpaid' "
               "AND updated_at >= 0 ORDER BY updated_at DESC, id DESC LIMIT 20",
        "table": "payment_sessions",
        "index": {b: "payment_sessions_company_status" for b in ("sqlite", "postgres")},
    },
}
# The roll-up's backfill, as the migration that made the table runs it: the seeded sessions are
# bulk inserted beside the server, so their roll-up rows are made the same way afterwards.
ROLL_UP_SQL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "migrations",
                           "2026-11-28-200000_collected_days", "up.sql")


def backfill_sql():
    """The migration's INSERT INTO collected_days ... SELECT ... (comments dropped)."""
    text = "\n".join(l.split("--")[0] for l in open(ROLL_UP_SQL).read().splitlines())
    start = text.index("INSERT INTO collected_days")
    return text[start:text.index(";", start)]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def browse(method, url, cookies, form=None):
    """One request of the merchant's browser: status, Location, body; cookies kept."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    h = {"cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())}
    if form is not None:
        h["content-type"] = "application/x-www-form-urlencoded"
        h["origin"] = url.split("/", 3)[0] + "//" + url.split("/", 3)[2]
    try:
        r = OPENER.open(urllib.request.Request(url, data=data, method=method, headers=h))
    except urllib.error.HTTPError as e:
        r = e
    for c in r.headers.get_all("set-cookie") or []:
        k, v = c.split(";")[0].split("=", 1)
        cookies[k] = v
    return r.status, r.headers.get("location"), r.read().decode()


def sign_in(base):
    """The bootstrap user signs in on `/signin`: the dashboard's session cookie."""
    cookies = {}
    status, _, page = browse("GET", base + "/signin", cookies)
    if status != 200:
        raise run.BenchError(f"GET /signin answered {status}")
    form = {html.unescape(n): html.unescape(v) for n, v in
            re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', page)}
    form.update(email=EMAIL, password=PASSWORD)
    status, _, body = browse("POST", base + "/signin", cookies, form)
    if status not in (200, 303) or "pay_session" not in cookies:
        raise run.BenchError(f"sign-in answered {status}: {body[:300]}")
    return f"pay_session={cookies['pay_session']}"


def get(url, headers):
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as r:
        return r.read().decode()


def call(method, url, headers, body=None):
    try:
        return run.http(method, url, {**headers, "content-type": "application/json"}, body)
    except urllib.error.HTTPError as e:
        raise run.BenchError(f"{method} {url}: {e.code} {e.read()[:300]!r}")


def pay(base, key, amount_share):
    """A link paid through the public checkout and the sandbox: the session after a deposit of
    `amount_share` of the required amount (1: complete; 0.5: underpaid)."""
    link = call("POST", base + LINKS, key, {"amount": "25.00", "title": "Seed order"})
    uid = link["uid"]
    s = call("POST", f"{base}/api/public/checkout/{uid}/sessions", {}, {"payAsset": USDC_BASE})
    if s["status"] == "quote":
        s = call("POST", f"{base}/api/public/checkout/{uid}/sessions/{s['id']}/accept", {})
    amount = f"{float(s['requiredSellAmount']) * amount_share:.6f}"
    s = call("POST", f"{base}{'/api/partner/v1/pay/sandbox/payment-links'}/{uid}/events", key,
             {"type": "deposit", "amount": amount})
    return s


COLUMNS = None  # payment_sessions' columns, read from the database


def session_rows(templates, link_ids, n, days, now_ms, company):
    """`n` sessions cloned from the real rows `templates` (status -> row dict): spread over the
    last `days` days, 80 % complete, 15 % expired, 4.9 % open quotes, 0.1 % underpaid."""
    rng = random.Random(32)
    for i in range(n):
        x = rng.random()
        status = ("complete" if x < 0.8 else "expired" if x < 0.95 else
                  "underpaid" if x < 0.951 else "quote")
        row = dict(templates["underpaid" if status == "underpaid" else "complete"])
        created = now_ms - rng.randrange(days * DAY_MS)
        updated = min(now_ms, created + rng.randrange(60_000, 900_000))
        amount = f"{rng.randrange(100, 50_000) / 100:.2f}"
        row.update(id=str(uuid.uuid4()), link_id=link_ids[i % len(link_ids)], company_id=company,
                   status=status, created_at=created, updated_at=updated, invoice_amount=amount,
                   invoice_asset="USD" if i % 4 == 0 else row["invoice_asset"],
                   expires_at=created + 3_600_000, version=1 if status == "quote" else 3)
        if status in ("quote", "expired"):
            row.update(settlement="{}", previous_status=None if status == "quote" else "quote")
        yield row


def seed_sessions(db_url, company, n, days, base, key):
    """`n` sessions of the company, bulk inserted (SQLite: executemany, 5,000 rows a
    transaction, no ANALYZE, as the server runs none; PostgreSQL: COPY, then VACUUM ANALYZE, as
    autovacuum would soon), after two real payments gave the rows their shape."""
    done = pay(base, key, 1)
    short = pay(base, key, 0.5)
    if done["status"] != "complete" or short["status"] != "underpaid":
        raise run.BenchError(f"sandbox payments ended {done['status']} and {short['status']}")
    now_ms = int(time.time() * 1000)
    if db_url.startswith("sqlite"):
        con = sqlite3.connect(db_url.removeprefix("sqlite://"), timeout=30)
        con.row_factory = sqlite3.Row
        templates = {s: dict(con.execute("SELECT * FROM payment_sessions WHERE id = ?", (x["id"],)).fetchone())
                     for s, x in (("complete", done), ("underpaid", short))}
        link_ids = [r[0] for r in con.execute("SELECT id FROM payment_links WHERE company_id = ?", (company,))]
        cols = list(templates["complete"])
        rows = [[r[c] for c in cols] for r in session_rows(templates, link_ids, n, days, now_ms, company)]
        # 5,000 rows a transaction: the server's own writers wait at most that long.
        for i in range(0, len(rows), 5000):
            with con:
                con.executemany(f"INSERT INTO payment_sessions ({', '.join(cols)}) VALUES "
                                f"({', '.join('?' for _ in cols)})", rows[i:i + 5000])
        with con:
            con.execute("DELETE FROM collected_days")
            con.execute(backfill_sql())
        con.close()
    else:
        def row_of(sid):
            out = run.psql(db_url, f"SELECT row_to_json(s) FROM payment_sessions s WHERE id = '{sid}'")
            return json.loads(out)
        templates = {"complete": row_of(done["id"]), "underpaid": row_of(short["id"])}
        link_ids = run.psql(db_url, f"SELECT id FROM payment_links WHERE company_id = '{company}'").split()
        cols = list(templates["complete"])
        buf = io.StringIO()
        w = csv.writer(buf)
        for r in session_rows(templates, link_ids, n, days, now_ms, company):
            w.writerow(["\\N" if r[c] is None else r[c] for c in cols])
        subprocess.run(["psql", "-qAt", db_url, "-v", "ON_ERROR_STOP=1", "-c",
                        f"COPY payment_sessions ({', '.join(cols)}) FROM STDIN WITH (FORMAT csv, NULL '\\N')"],
                       input=buf.getvalue(), text=True, check=True, capture_output=True)
        run.psql(db_url, f"BEGIN; DELETE FROM collected_days; {backfill_sql()}; COMMIT")
        run.psql(db_url, "VACUUM ANALYZE payment_sessions")
        run.psql(db_url, "VACUUM ANALYZE collected_days")
    return now_ms


def plans(db_url, company, first_day):
    """Each aggregate query's plan, printed; a scan of the table (not through its index) or a
    sort of the rows fails the run."""
    out = {}
    backend = "sqlite" if db_url.startswith("sqlite") else "postgres"
    for name, q in AGGREGATE_QUERIES.items():
        sql = q["sql"].format(company=company, first_day=first_day)
        if backend == "sqlite":
            con = sqlite3.connect(db_url.removeprefix("sqlite://"))
            plan = "\n".join(r[3] for r in con.execute("EXPLAIN QUERY PLAN " + sql))
            con.close()
            bad = re.search(rf"SCAN {q['table']}(?! USING)|TEMP B-TREE", plan)
        else:
            plan = run.psql(db_url, q.get("postgres_settings", "") + "EXPLAIN " + sql).strip()
            bad = re.search(r"Seq Scan|Sort", plan)
        print(f"    plan of {name}:\n      " + plan.replace("\n", "\n      "), flush=True)
        index = q["index"][backend]
        if bad or index not in plan:
            raise run.BenchError(f"{name}: not read through the index {index}")
        out[name] = plan
    return out


def measure_backend(name, db_url, args):
    creds = run.bootstrap(db_url)
    company = creds["companyId"]
    key = {"x-svc-key-id": creds["keyId"], "x-svc-key-secret": creds["keySecret"]}
    env = {"KEY_ID": creds["keyId"], "KEY_SECRET": creds["keySecret"]}
    srv = run.Server(db_url, args.workers)
    try:
        for i in range(args.links):
            call("POST", srv.base + LINKS, key, {"amount": "12.50", "title": f"Order {i}",
                                                 "orderId": f"order-{i}", "customerEmail": f"c{i}@example.com"})
        cookie = sign_in(srv.base)
        page_url = f"{srv.base}/dashboard/{company}/links"
        rows = get(page_url, {"cookie": cookie}).count('<td data-label="Link">')
        listed = len(json.loads(get(srv.base + LINKS, key))["data"])
        if rows != listed or rows != min(200, args.links):
            raise run.BenchError(f"links page shows {rows} rows, the JSON list {listed}")
        print(f"  {name}: {args.links} links; the page and the JSON list both show {rows}", flush=True)
        hdr = {"COOKIE": cookie}
        links = {"json": [], "html": []}
        for r in range(args.rounds):
            order = ("json", "html") if r % 2 == 0 else ("html", "json")
            for kind in order:
                if kind == "json":
                    links[kind].append(run.wrk(srv.base + LINKS, args.seconds, args.connections, run.GET_LUA, env))
                else:
                    links[kind].append(run.wrk(page_url, args.seconds, args.connections, COOKIE_LUA, hdr))
            print(f"  {name} round {r + 1}: links page {links['html'][-1]['rps']:.0f}/s, JSON list "
                  f"{links['json'][-1]['rps']:.0f}/s: {links['html'][-1]['rps'] / links['json'][-1]['rps']:.3f}",
                  flush=True)
        ratio = run.median([h["rps"] / j["rps"] for h, j in zip(links["html"], links["json"])])

        now_ms = seed_sessions(db_url, company, args.sessions, args.days, srv.base, key)
        home_url = f"{srv.base}/dashboard/{company}"
        page = get(home_url, {"cookie": cookie})
        charted = sum(int(n) for n in re.findall(r": (\d+) payments?</title>", page))
        if charted == 0:
            raise run.BenchError("the home page's chart shows no payment")
        print(f"  {name}: {args.sessions} sessions seeded over {args.days} days; the chart counts "
              f"{charted} completed payments in 30 days", flush=True)
        home = []
        for r in range(args.rounds):
            home.append(run.wrk(home_url, args.seconds, 1, COOKIE_LUA, hdr, threads=1))
            print(f"  {name} round {r + 1}: home page (1 connection) {home[-1]['rps']:.0f}/s, "
                  f"p99 {home[-1]['p99_ms']:.2f} ms", flush=True)
        got_plans = plans(db_url, company, now_ms // DAY_MS - 29)
    finally:
        srv.stop()
    out = {
        "links_html_rps": run.median([x["rps"] for x in links["html"]]),
        "links_json_rps": run.median([x["rps"] for x in links["json"]]),
        "links_html_over_json": ratio,
        "home_p99_ms": run.median([x["p99_ms"] for x in home]),
        "home_rps": run.median([x["rps"] for x in home]),
        "charted_payments": charted,
        "plans": got_plans,
        "rounds": {"links": links, "home": home},
    }
    print(f"{name}: links page / JSON list median {ratio:.3f} ({out['links_html_rps']:.0f} against "
          f"{out['links_json_rps']:.0f}/s; target >= {LINK_TARGET}); home page p99 median "
          f"{out['home_p99_ms']:.2f} ms with {args.sessions} sessions (target < {HOME_P99_MS:.0f} ms)",
          flush=True)
    return out


COOKIE_LUA = os.path.join(run.ROOT, "bench", "get_with_cookie.lua")


def main():
    ap = argparse.ArgumentParser()
    run.add_common_args(ap, rounds=3, seconds=10, connections=32)
    ap.add_argument("--only", choices=["sqlite", "postgres"])
    ap.add_argument("--links", type=int, default=220, help="links seeded (the list shows the 200 newest)")
    ap.add_argument("--sessions", type=int, default=None, help="sessions seeded (default 100000, smoke: 2000)")
    ap.add_argument("--days", type=int, default=100, help="days the seeded sessions spread over")
    args = ap.parse_args()
    args.sessions = args.sessions or (2000 if args.smoke else 100_000)
    run.require_tool("wrk", "wrk")
    run.require_tool("psql", "postgresql-client")
    run.finish_args(args, rounds=3, seconds=10)
    summary = {"rounds": args.rounds, "seconds": args.seconds, "connections": args.connections,
               "profile": args.profile, "workers": args.workers, "sessions": args.sessions,
               "days": args.days, "links": args.links}
    summary.update(run.each_backend(args.only, "dashboard",
                                    lambda name, db_url: measure_backend(name, db_url, args)))
    if args.smoke:
        print("smoke run ok: every figure measured, no errors; figures not written")
        return
    for b in ("sqlite", "postgres"):
        if b in summary:
            s = summary[b]
            print(f"{b}: links page {s['links_html_over_json']:.3f} of the JSON list "
                  f"({'met' if s['links_html_over_json'] >= LINK_TARGET else 'MISSED'}); home p99 "
                  f"{s['home_p99_ms']:.2f} ms ({'met' if s['home_p99_ms'] < HOME_P99_MS else 'MISSED'})")
    os.makedirs(run.OUT, exist_ok=True)
    with open(os.path.join(run.OUT, "dashboard.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    try:
        main()
    except run.BenchError as e:
        sys.exit(f"benchmark failed: {e}")
