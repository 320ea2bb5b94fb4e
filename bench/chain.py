#!/usr/bin/env python3
"""Chain watcher benchmark (`PAY_PROCESSOR=onchain`): a local anvil node (npm
`@foundry-rs/anvil`, the test harness's package), pay-server on an embedded SQLite database
with one chain (a test token at par and the coin), a merchant key and ADDRESSES open sessions
(each its own deposit address, watched), then per round:

(a) throughput: the server is stopped, BLOCKS blocks of 100 token transfers each (to 100
    distinct deposit addresses) are mined, the server starts again and its watcher catches
    up. The rate is the transfers applied per second, from the first to the last one applied
    (each session's `:seen` processor event, its `applied_at` written by the server); the
    ceiling, in the same round before the server starts, is the node itself: eth_getLogs of
    those blocks' Transfer events, one block per call, read and decoded by this script
    (transfers per second the node can hand out at all). Every transfer must be applied
    exactly once (the count of `:seen` events is checked).
(b) detection delay: with the server running and caught up, SAMPLES times a transfer is sent
    to a deposit address and its block mined at a random moment of the poll cycle; the delay
    is from the mine call's answer (the block exists) to the session read back as `processing`
    (the public session route polled every 5 ms). Target: median <= one poll interval + 50 ms.

Rounds are repeated, figures are medians. Loopback only.

Usage: python3 bench/chain.py [--rounds 3] [--addresses 1000] [--blocks 10] [--samples 20]
                              [--poll-ms 200] [--skip-build]
       python3 bench/chain.py --smoke   # one short round on the debug build (CI)
Needs node and npm (the chain tools are installed with `npm ci` when missing).
Results: bench/out/chain.json.
"""
import argparse
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the shared helpers: build, servers, checks)

TOOLS = os.path.join(run.ROOT, "crates", "pay-chain", "tests", "chain-js")
ANVIL = os.path.join(TOOLS, "node_modules", "@foundry-rs", "anvil-linux-amd64", "bin", "anvil")
TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
PAYER = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"  # anvil's first development account
PER_BLOCK = 100
PASSWORD = "bench password 123"


class Conn:
    """A kept-alive HTTP/1.1 connection to one origin: JSON in, JSON out."""

    def __init__(self, base):
        u = urllib.parse.urlparse(base)
        self.host, self.port = u.hostname, u.port
        self.c = http.client.HTTPConnection(self.host, self.port, timeout=60)

    def call(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        h = {"content-type": "application/json", **(headers or {})}
        for attempt in range(2):
            try:
                self.c.request(method, path, body=data, headers=h)
                r = self.c.getresponse()
                raw = r.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.c.close()
                self.c = http.client.HTTPConnection(self.host, self.port, timeout=60)
                if attempt:
                    raise
        v = json.loads(raw) if raw else None
        if r.status >= 300:
            raise run.BenchError(f"{method} {path}: {r.status} {raw[:300]!r}")
        return v


class Node:
    """anvil, started on a free port and killed at the end."""

    def __init__(self):
        self.port = run.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([ANVIL, "--port", str(self.port), "--silent"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.conn = Conn(self.url)
        deadline = time.time() + 30
        while True:
            try:
                self.rpc("eth_chainId")
                break
            except Exception:
                if time.time() > deadline:
                    raise run.BenchError("anvil did not answer")
                time.sleep(0.05)

    def rpc(self, method, *params):
        v = self.conn.call("POST", "/", {"jsonrpc": "2.0", "id": 1, "method": method,
                                         "params": list(params)})
        if "error" in v:
            raise run.BenchError(f"{method}: {v['error']}")
        return v["result"]

    def batch(self, calls):
        body = [{"jsonrpc": "2.0", "id": i, "method": m, "params": p}
                for i, (m, p) in enumerate(calls)]
        out = self.conn.call("POST", "/", body)
        errors = [a["error"] for a in out if "error" in a]
        if errors:
            raise run.BenchError(f"batch: {errors[:3]}")
        return [a["result"] for a in sorted(out, key=lambda a: a["id"])]

    def head(self):
        return int(self.rpc("eth_blockNumber"), 16)

    def tool(self, command, args):
        out = run.sh(["node", os.path.join(TOOLS, "tools.mjs"), command, json.dumps(args)],
                     env={**os.environ, "RPC_URL": self.url})
        return json.loads(out)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def ensure_tools():
    if not shutil.which("node") or not shutil.which("npm"):
        sys.exit("node and npm are needed (the local chain's tools)")
    if not os.path.isfile(ANVIL) or not os.path.isdir(os.path.join(TOOLS, "node_modules", "viem")):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=TOOLS, check=True)


def transfer_call(token, to, units):
    data = "0xa9059cbb" + to[2:].lower().rjust(64, "0") + format(units, "x").rjust(64, "0")
    return ("eth_sendTransaction", [{"from": PAYER, "to": token, "data": data, "gas": "0x186a0"}])


class Chain:
    """The chains file, the database and the server of one run."""

    def __init__(self, tmp, node, token, poll_ms, workers):
        self.db_path = os.path.join(tmp, "bench.db")
        self.db = f"sqlite://{self.db_path}"
        self.chains = os.path.join(tmp, "chains.json")
        self.workers = workers
        with open(self.chains, "w") as f:
            json.dump([{"chainCode": "bench", "kind": "evm", "chainId": 31337,
                        "chainName": "Bench anvil", "rpcUrl": node.url, "confirmations": 2,
                        "pollIntervalMs": poll_ms, "assets": [
                            {"assetIdentifier": f"eip155:31337/erc20:{token}", "symbol": "TUSD",
                             "name": "Test USD", "decimals": 6, "usdPrice": "1"},
                            {"assetIdentifier": "eip155:31337/slip44:60", "symbol": "ETH",
                             "name": "Ether", "decimals": 18, "usdPrice": "2500"}]}], f)
        self.proc = None
        self.base = None

    def env(self, **extra):
        return run.server_env(self.db, PAY_PROCESSOR="onchain", PAY_CHAINS_FILE=self.chains,
                              PAY_DEMO="false", PAY_READ_CACHE_MS="0",
                              PAY_RATE_LIMIT_CHECKOUT_STARTS="1000000/60", **extra)

    def bootstrap(self):
        out = run.sh([run.BIN, "admin", "bootstrap", "--company", "Bench Co", "--email",
                      "bench@bench.example"], env=self.env(PAY_BOOTSTRAP_PASSWORD=PASSWORD))
        return json.loads(out)

    def start(self):
        port = run.free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [run.BIN, "serve"], stdout=subprocess.DEVNULL,
            env=self.env(PAY_LISTEN=f"127.0.0.1:{port}", PAY_WORKERS=str(self.workers)))
        run.wait_ready(self.base + "/readyz")
        return Conn(self.base)

    def stop(self):
        if self.proc:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None

    def seen(self):
        """The transfers applied so far: (count, first and last applied_at in ms)."""
        with sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=10) as c:
            return c.execute("SELECT count(*), min(applied_at), max(applied_at) FROM processor_events "
                             "WHERE event_id LIKE 'eip155:%:seen'").fetchone()

    def processing(self):
        """Sessions still processing (their settlement not written yet)."""
        with sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=10) as c:
            return c.execute("SELECT count(*) FROM payment_sessions "
                             "WHERE status = 'processing'").fetchone()[0]

    def seen_since(self, after_ms):
        with sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=10) as c:
            return c.execute("SELECT count(*), min(applied_at), max(applied_at) FROM processor_events "
                             "WHERE event_id LIKE 'eip155:%:seen' AND applied_at > ?",
                             (after_ms,)).fetchone()


def open_sessions(api, key, token_id, n):
    """n links and a started session of each: (link uid, session id, deposit address)."""
    hdrs = {"x-svc-key-id": key["keyId"], "x-svc-key-secret": key["keySecret"]}
    out = []
    for i in range(n):
        link = api.call("POST", "/api/partner/v1/pay/payment-links",
                        {"amount": "1000000", "asset": token_id, "title": f"Bench {i}",
                         "skipQuoteAcceptance": True}, hdrs)
        s = api.call("POST", f"/api/public/checkout/{link['uid']}/sessions",
                     {"payAsset": token_id})
        if s.get("status") != "pending" or not s.get("depositAddress"):
            raise run.BenchError(f"session {i} did not open: {s}")
        out.append((link["uid"], s["id"], s["depositAddress"]))
    return out


def ceiling(node, token, blocks):
    """The node's eth_getLogs of the blocks' Transfer events, one block per call, decoded:
    transfers per second."""
    started = time.perf_counter()
    found = 0
    for b in blocks:
        logs = node.rpc("eth_getLogs", {"fromBlock": hex(b), "toBlock": hex(b), "address": [token],
                                        "topics": [TRANSFER_TOPIC]})
        for log in logs:
            int(log["data"], 16)
            found += 1
    elapsed = time.perf_counter() - started
    if found != len(blocks) * PER_BLOCK:
        raise run.BenchError(f"the node returned {found} transfers for {len(blocks)} blocks")
    return found / elapsed


def throughput(node, chain, token, sessions, blocks, cursor):
    """(a): the blocks mined while the server is down, then its catch-up."""
    chain.stop()
    before, _, last_before = chain.seen()
    node.rpc("evm_setAutomine", False)
    mined = []
    for _ in range(blocks):
        calls = []
        for _ in range(PER_BLOCK):
            calls.append(transfer_call(token, sessions[cursor % len(sessions)][2], 1_000_000))
            cursor += 1
        node.batch(calls)
        node.rpc("anvil_mine", "0x1")
        head = node.head()
        count = int(node.rpc("eth_getBlockTransactionCountByNumber", hex(head)), 16)
        if count != PER_BLOCK:
            raise run.BenchError(f"block {head} holds {count} transfers, not {PER_BLOCK}")
        mined.append(head)
    node.rpc("anvil_mine", "0x1")
    node.rpc("evm_setAutomine", True)
    node_rate = ceiling(node, token, mined)
    api = chain.start()
    want = blocks * PER_BLOCK
    deadline = time.time() + 300
    while True:
        count, first, last = chain.seen_since(last_before or 0)
        if count >= want:
            break
        if time.time() > deadline:
            raise run.BenchError(f"the watcher applied {count} of {want} transfers")
        time.sleep(0.05)
    # Every batch block is final: the watcher settles each session after its transfer.
    while chain.processing():
        if time.time() > deadline:
            raise run.BenchError("sessions left processing after the catch-up")
        time.sleep(0.05)
    total, _, _ = chain.seen()
    if total != before + want:
        raise run.BenchError(f"{total - before} transfers applied, {want} sent: not once each")
    rate = (want - 1) / max((last - first) / 1000, 1e-3)
    return api, cursor, {"transfers": want, "watcher_tps": rate, "node_getlogs_tps": node_rate,
                         "ratio": rate / node_rate, "ms_per_block": PER_BLOCK / rate * 1000}


def delays(node, api, token, sessions, samples, poll_ms, cursor):
    """(b): block mined to session `processing`, in ms."""
    out = []
    node.rpc("evm_setAutomine", False)
    try:
        for _ in range(samples):
            link, sid, address = sessions[cursor % len(sessions)]
            cursor += 1
            path = f"/api/public/checkout/{link}/sessions/{sid}"
            if api.call("GET", path)["status"] == "processing":
                raise run.BenchError(f"session {sid} already processing")
            time.sleep(random.uniform(0, poll_ms / 1000))
            node.batch([transfer_call(token, address, 1_000_000)])
            node.rpc("anvil_mine", "0x1")
            mined = time.perf_counter()
            while api.call("GET", path)["status"] != "processing":
                if time.perf_counter() - mined > 30:
                    raise run.BenchError(f"session {sid} never processing")
                time.sleep(0.005)
            out.append((time.perf_counter() - mined) * 1000)
        node.rpc("anvil_mine", "0x1")
    finally:
        node.rpc("evm_setAutomine", True)
    return out, cursor


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=None, help="default 3 (smoke: 1)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--smoke", action="store_true",
                    help="one short round, checked, nothing written: the script still works")
    ap.add_argument("--profile", choices=["release", "dev"], default=None,
                    help="cargo profile of the binaries (default release; smoke: dev)")
    ap.add_argument("--addresses", type=int, default=None, help="default 1000 (smoke: 20)")
    ap.add_argument("--blocks", type=int, default=None, help="default 10 (smoke: 2)")
    ap.add_argument("--samples", type=int, default=None, help="default 20 (smoke: 3)")
    ap.add_argument("--poll-ms", type=int, default=200)
    args = ap.parse_args()
    args.seconds = None
    run.finish_args(args, rounds=3, seconds=1)
    args.addresses = args.addresses or (20 if args.smoke else 1000)
    args.blocks = args.blocks or (2 if args.smoke else 10)
    args.samples = args.samples or (3 if args.smoke else 20)
    if args.addresses < PER_BLOCK and not args.smoke:
        sys.exit(f"--addresses must be at least {PER_BLOCK}")
    ensure_tools()
    os.makedirs(run.OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="pay-chain-bench-")
    node = Node()
    chain = None
    try:
        token = node.tool("deploy", {})["token"].lower()
        token_id = f"eip155:31337/erc20:{token}"
        chain = Chain(tmp, node, token, args.poll_ms, args.workers)
        key = chain.bootstrap()
        api = chain.start()
        hdrs = {"x-svc-key-id": key["keyId"], "x-svc-key-secret": key["keySecret"]}
        xpub = node.tool("xpub", {"account": 1})["xpub"]
        api.call("PUT", "/api/partner/v1/pay/settlement-wallets/evm", {"xpub": xpub}, hdrs)
        started = time.perf_counter()
        sessions = open_sessions(api, key, token_id, args.addresses)
        print(f"{len(sessions)} sessions open ({time.perf_counter() - started:.1f} s)", flush=True)
        cursor = 0
        rounds = []
        for i in range(args.rounds):
            api, cursor, t = throughput(node, chain, token, sessions, args.blocks, cursor)
            d, cursor = delays(node, api, token, sessions, args.samples, args.poll_ms, cursor)
            r = {**t, "delay_ms": d, "delay_median_ms": run.median(d),
                 "delay_max_ms": max(d)}
            rounds.append(r)
            print(f"round {i + 1}: watcher {t['watcher_tps']:.0f} transfers/s "
                  f"({t['ms_per_block']:.0f} ms per {PER_BLOCK}-transfer block); node eth_getLogs "
                  f"{t['node_getlogs_tps']:.0f}/s; ratio {t['ratio']:.3f}; delay median "
                  f"{r['delay_median_ms']:.0f} ms, max {r['delay_max_ms']:.0f} ms "
                  f"(poll {args.poll_ms} ms)", flush=True)
        if args.smoke:
            print("smoke run ok: every transfer applied once, every delay measured; figures not written")
            return
        med = run.median
        summary = {
            "profile": args.profile, "cpus": os.cpu_count(), "workers": args.workers,
            "addresses": args.addresses, "blocks_per_round": args.blocks,
            "transfers_per_block": PER_BLOCK, "samples_per_round": args.samples,
            "poll_ms": args.poll_ms, "confirmations": 2, "rounds": args.rounds,
            "watcher_tps": med([r["watcher_tps"] for r in rounds]),
            "node_getlogs_tps": med([r["node_getlogs_tps"] for r in rounds]),
            "ratio": med([r["ratio"] for r in rounds]),
            "ms_per_block": med([r["ms_per_block"] for r in rounds]),
            "delay_median_ms": med([r["delay_median_ms"] for r in rounds]),
            "delay_max_ms": med([r["delay_max_ms"] for r in rounds]),
            "targets": {"delay_median_ms": args.poll_ms + 50},
            "per_round": rounds,
        }
        print(json.dumps({k: v for k, v in summary.items() if k != "per_round"}, indent=2))
        with open(os.path.join(run.OUT, "chain.json"), "w") as f:
            json.dump(summary, f, indent=2)
    finally:
        if chain:
            chain.stop()
        node.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except run.BenchError as e:
        sys.exit(f"benchmark failed: {e}")
