//! The local chain for tests: `anvil` from its npm package (`@foundry-rs/anvil`), started on a
//! free port, and the independent client (`tests/chain-js/tools.mjs`, viem) that deploys the
//! committed test contracts and sends payments. The packages are installed with `npm ci` from
//! the committed lock file when missing. Without `node`/`npm` the harness prints a `SKIP:` line
//! and gives `None`, except under `PAY_REQUIRE_ALL_TESTS=1`, where it panics.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The chain id anvil runs with by default.
pub const ANVIL_CHAIN_ID: u64 = 31337;

/// The directory of the npm packages and the client script.
pub fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chain-js")
}

fn require_all() -> bool {
    std::env::var("PAY_REQUIRE_ALL_TESTS").as_deref() == Ok("1")
}

fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The anvil binary of the installed npm package (its platform package ships it).
fn anvil_binary(dir: &Path) -> PathBuf {
    dir.join("node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil")
}

/// Installs the packages once per process (`npm ci`); `None` after a `SKIP:` line.
pub fn tools() -> Option<PathBuf> {
    if !runs("node") || !runs("npm") {
        let msg = "node and npm are needed for the local chain (anvil, viem)";
        assert!(!require_all(), "PAY_REQUIRE_ALL_TESTS=1 but {msg}");
        eprintln!("SKIP: chain test: {msg}");
        return None;
    }
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _installing = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tools_dir();
    if !anvil_binary(&dir).is_file() || !dir.join("node_modules/viem").is_dir() {
        // Another test binary may install at the same moment: npm ci into a fresh directory
        // is not safe to run twice at once, so one waits for the other's lock file.
        let lock = dir.join(".installing");
        let started = Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&lock)
            {
                Ok(_) => break,
                Err(_) if started.elapsed() < Duration::from_secs(300) => {
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => panic!("waiting for another npm ci in {}: {e}", dir.display()),
            }
        }
        let installed = anvil_binary(&dir).is_file() && dir.join("node_modules/viem").is_dir();
        let out = (!installed).then(|| {
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&dir)
                .output()
                .expect("npm runs")
        });
        let _ = std::fs::remove_file(&lock);
        if let Some(out) = out {
            assert!(
                out.status.success(),
                "npm ci failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    assert!(
        anvil_binary(&dir).is_file(),
        "the npm package @foundry-rs/anvil did not ship a linux-amd64 binary"
    );
    Some(dir)
}

/// A running anvil node, killed when dropped.
#[derive(Debug)]
pub struct Anvil {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    dir: PathBuf,
}

fn spawn(dir: &Path, port: u16, extra: &[&str]) -> Child {
    Command::new(anvil_binary(dir))
        .args(["--port", &port.to_string(), "--silent"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("anvil starts")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// One JSON-RPC call over a plain HTTP/1.1 connection (the harness stays synchronous).
pub fn rpc_call(url: &str, method: &str, params: Value) -> Result<Value, String> {
    let host = url
        .strip_prefix("http://")
        .ok_or("only http:// nodes")?
        .trim_end_matches('/');
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut stream = TcpStream::connect(host).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(|e| e.to_string())?;
    let (_, json_body) = answer.split_once("\r\n\r\n").ok_or("no HTTP body")?;
    let v: Value = serde_json::from_str(json_body).map_err(|e| format!("{e}: {json_body}"))?;
    if let Some(err) = v.get("error") {
        return Err(format!("{method}: {err}"));
    }
    Ok(v["result"].clone())
}

impl Anvil {
    /// Starts anvil on a free port with `extra` arguments (`None` after a `SKIP:` line) and
    /// waits until it answers.
    pub fn start(extra: &[&str]) -> Option<Anvil> {
        let dir = tools()?;
        let port = free_port();
        let child = spawn(&dir, port, extra);
        let anvil = Anvil {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dir,
        };
        anvil.wait_up();
        Some(anvil)
    }

    fn wait_up(&self) {
        let started = Instant::now();
        while rpc_call(&self.url, "eth_chainId", json!([])).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "anvil did not answer on {}",
                self.url
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the node: its port closes (a node gone away).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Stops the node and starts a fresh one (a new chain from block 0) on the same port.
    pub fn restart(&mut self) {
        self.stop();
        let port: u16 = self
            .url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("the node's port");
        self.child = spawn(&self.dir, port, &[]);
        self.wait_up();
    }

    /// A JSON-RPC call that must succeed.
    pub fn rpc(&self, method: &str, params: Value) -> Value {
        rpc_call(&self.url, method, params).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The head block number.
    pub fn head(&self) -> u64 {
        let v = self.rpc("eth_blockNumber", json!([]));
        u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
    }

    /// Mines `blocks` blocks (`anvil_mine`).
    pub fn mine(&self, blocks: u64) {
        self.rpc("anvil_mine", json!([format!("0x{blocks:x}")]));
    }

    /// Turns automatic mining (a block per transaction) on or off.
    pub fn automine(&self, on: bool) {
        self.rpc("evm_setAutomine", json!([on]));
    }

    /// `evm_snapshot`: the id to revert to.
    pub fn snapshot(&self) -> Value {
        self.rpc("evm_snapshot", json!([]))
    }

    /// `evm_revert` to a snapshot: the blocks after it leave the chain.
    pub fn revert(&self, id: &Value) {
        assert_eq!(self.rpc("evm_revert", json!([id])), json!(true));
    }

    /// Runs one command of the viem client against this node; its JSON answer.
    pub fn tool(&self, command: &str, args: Value) -> Value {
        let out = Command::new("node")
            .arg(self.dir.join("tools.mjs"))
            .arg(command)
            .arg(args.to_string())
            .env("RPC_URL", &self.url)
            .output()
            .expect("node runs");
        assert!(
            out.status.success(),
            "tools.mjs {command} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("one JSON line")
    }
}

impl Drop for Anvil {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
