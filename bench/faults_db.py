"""What the database holds for payments whose webhook a fault script missed (bench/faults.py):
each link's session, its timeline, its deliveries (event, status, attempts, next attempt,
lease, last error) and their attempts, beside what the receiver got, so that a miss says
whether the event was never written, or written and parked, leased or backed off."""
import json
import sqlite3
import subprocess
import time


def query(db_url, sql):
    """Rows of `sql` (strings) on a `sqlite://` or `postgres://` URL."""
    if db_url.startswith("sqlite://"):
        con = sqlite3.connect(db_url[len("sqlite://"):], timeout=10)
        try:
            return [[None if v is None else str(v) for v in row] for row in con.execute(sql)]
        finally:
            con.close()
    out = subprocess.run(["psql", "-qAt", "-F", "\x1f", "-R", "\x1e", db_url, "-c", sql],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    text = out.stdout[:-1] if out.stdout.endswith("\n") else out.stdout
    return [[v if v != "" else None for v in r.split("\x1f")] for r in text.split("\x1e") if r.strip()]


def quoted(values):
    return ",".join("'" + v.replace("'", "''") + "'" for v in values)


def ago(ms, now_ms):
    """`t-3.2s` / `t+300.0s` relative to now, or `-`."""
    if ms is None:
        return "-"
    return f"t{(int(ms) - now_ms) / 1000:+.1f}s"


def session_status(body):
    try:
        return (json.loads(body).get("session") or {}).get("status")
    except (ValueError, AttributeError):
        return None


def explain(db_url, uids, received_ids, limit=10):
    """Lines describing what the database holds for each link uid in `uids` (at most `limit`);
    `received_ids` is the set of delivery ids the receiver got."""
    uids = sorted(uids)[:limit]
    if not uids:
        return []
    now_ms = int(time.time() * 1000)
    lines = []
    try:
        sessions = query(db_url, f"""
            SELECT l.uid, l.status, s.id, s.status, s.version
            FROM payment_links l LEFT JOIN payment_sessions s ON s.link_id = l.id
            WHERE l.uid IN ({quoted(uids)}) ORDER BY l.uid""")
        timeline = query(db_url, f"""
            SELECT l.uid, t.type, count(*) FROM payment_links l JOIN timeline_events t ON t.link_id = l.id
            WHERE l.uid IN ({quoted(uids)}) GROUP BY l.uid, t.type ORDER BY l.uid, t.type""")
        deliveries = query(db_url, f"""
            SELECT payment_link_uid, id, event, status, attempts, next_attempt_at, lease_until,
                   last_attempt_at, last_response_status, last_error, created_at, body
            FROM webhook_deliveries WHERE payment_link_uid IN ({quoted(uids)})
            ORDER BY payment_link_uid, created_at, id""")
        ids = [d[1] for d in deliveries]
        attempts = query(db_url, f"""
            SELECT delivery_id, number, at, status_code, duration_ms, error FROM webhook_attempts
            WHERE delivery_id IN ({quoted(ids)}) ORDER BY delivery_id, number""") if ids else []
        circuits = query(db_url, "SELECT url, failures, failing_since, paused_until, pauses "
                                 "FROM webhook_endpoint_circuits")
    except (RuntimeError, sqlite3.Error) as e:
        return [f"  (could not read the database: {e})"]
    for uid in uids:
        for _, link_status, sid, status, version in [s for s in sessions if s[0] == uid]:
            kinds = ", ".join(f"{k} x{n}" for u, k, n in timeline if u == uid)
            lines.append(f"  {uid}: link {link_status}, session {sid} {status} v{version}; timeline: {kinds}")
        mine = [d for d in deliveries if d[0] == uid]
        if not mine:
            lines.append("    no delivery rows at all (the event was never written)")
        for (_, did, event, status, n, next_at, lease, last_at, last_code, last_error,
             created, body) in mine:
            got = "received" if did in received_ids else "NOT received"
            lines.append(
                f"    delivery {did} {event} (session {session_status(body)}): {status}, {n} attempts, "
                f"created {ago(created, now_ms)}, next {ago(next_at, now_ms)}, lease {ago(lease, now_ms)}, "
                f"last {ago(last_at, now_ms)} {last_code or ''} {last_error or ''}; {got}")
            for _, num, at, code, dur, error in [a for a in attempts if a[0] == did]:
                lines.append(f"      attempt {num} at {ago(at, now_ms)}: {code or '-'} {error or ''} {dur} ms")
    for url, failures, since, paused, pauses in circuits:
        lines.append(f"  circuit {url}: {failures} failures since {ago(since, now_ms)}, "
                     f"paused until {ago(paused, now_ms)}, {pauses} pauses")
    return lines


# What a receiver's failure is recorded as (pay_domain::webhooks::AttemptError): the receiver
# did not answer in time or could not be reached.
RECEIVER_FAILURES = {"timed out", "connection failed"}
# The spec's retry schedule: "retried up to 10 times at 5-minute intervals".
RETRY_INTERVAL_MS = 5 * 60 * 1000


def completing_states(db_url, uids, received_ids):
    """For each link uid, where its completing `status_changed` (session `complete`) stands in
    the database: `scheduled` (a delivery to every callback, each received or retrying after a
    recorded receiver failure, its next attempt one retry interval after it: not lost, due
    after the script's wait), `due` (still to be sent: pending, or leased by a send under way)
    or `lost` (never written, given up, or retrying off the schedule). Unreadable: `{}`."""
    if not uids:
        return {}
    try:
        rows = query(db_url, f"""
            SELECT payment_link_uid, id, status, attempts, next_attempt_at, last_attempt_at, last_error, body
            FROM webhook_deliveries
            WHERE payment_link_uid IN ({quoted(sorted(uids))}) AND event = 'status_changed'""")
    except (RuntimeError, sqlite3.Error):
        return {}
    states = {uid: "lost" for uid in uids}
    mine = {}
    for uid, *rest in rows:
        if session_status(rest[-1]) == "complete":
            mine.setdefault(uid, []).append(rest)
    for uid, deliveries in mine.items():
        state = "scheduled"
        for did, status, n, next_at, last_at, last_error, _ in deliveries:
            if did in received_ids:
                continue
            if status == "pending":
                state = "due"
            elif (status == "retrying" and int(n) >= 1 and last_error in RECEIVER_FAILURES
                  and next_at is not None and last_at is not None
                  and int(next_at) - int(last_at) == RETRY_INTERVAL_MS):
                continue
            else:
                state = "lost"
                break
        states[uid] = state
    return states
