//! docs/chains.md's complete run on a local chain, run as written: the shell blocks of "A
//! complete run on a local chain", in order, by bash, from a directory laid out as the
//! repository's root (its `crates/pay-chain/tests/chain-js` is the test tools' directory), on
//! free ports (`RPC_PORT`, `PAY_PORT`, which the blocks read) and the built binary. The block
//! that starts the server runs as the reader's second terminal does: in its own shell with a
//! fresh environment. What the reader types by hand is pasted where the page says: the key
//! from the server's banner. Every `"key":value` the page shows as an answer (`# -> ...`,
//! elided parts left out) must be in what the commands print, and the session must end
//! `complete` with the payment in its block. SQLite only: the page's flow takes the demo
//! company the server creates on an empty SQLite database (PostgreSQL runs the same watcher in
//! `chains.rs`).

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

#[path = "support/process.rs"]
mod process;

use process::*;

/// The shell blocks of the walk-through, in order.
fn walkthrough() -> (Vec<String>, String) {
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/chains.md"))
            .expect("docs/chains.md");
    let from = page
        .find("## A complete run on a local chain")
        .expect("the walk-through section");
    let to = page[from + 3..]
        .find("\n## ")
        .map_or(page.len(), |i| from + 3 + i);
    let section = &page[from..to];
    let (mut blocks, mut block, mut in_sh) = (Vec::new(), String::new(), false);
    for line in section.lines() {
        match (in_sh, line.trim_end()) {
            (false, "```sh") => in_sh = true,
            (true, "```") => {
                in_sh = false;
                blocks.push(std::mem::take(&mut block));
            }
            (true, l) => {
                block.push_str(l);
                block.push('\n');
            }
            _ => {}
        }
    }
    (blocks, section.to_owned())
}

/// The `"key":value` pairs of the answers the page shows (`# -> ...` and the comment lines
/// continuing it), and the strings of its lists, without those it elides (`...`).
fn shown_pairs(section: &str) -> Vec<String> {
    let mut pairs = Vec::new();
    let mut in_answer = false;
    for line in section.lines() {
        let line = line.trim_start();
        let text = if let Some(rest) = line.strip_prefix("# -> ") {
            in_answer = true;
            rest
        } else if in_answer && line.starts_with("#     ") {
            &line[1..]
        } else {
            in_answer = false;
            continue;
        };
        let mut rest = text;
        while let Some(start) = rest.find('"') {
            rest = &rest[start..];
            let Some(key_end) = rest[1..].find('"').map(|i| i + 1) else {
                break;
            };
            let after = &rest[key_end + 1..];
            let Some(value) = after.strip_prefix(':') else {
                // A string in a list.
                if !rest[..=key_end].contains("...") {
                    pairs.push(rest[..=key_end].to_owned());
                }
                rest = after;
                continue;
            };
            if value.starts_with(['{', '[']) {
                rest = &value[1..];
                continue;
            }
            let end = if let Some(v) = value.strip_prefix('"') {
                v.find('"').map(|i| i + 2)
            } else {
                value.find([',', '}', ']'])
            };
            let Some(end) = end else { break };
            let pair = format!("{}:{}", &rest[..=key_end], &value[..end]);
            if !pair.contains("...") {
                pairs.push(pair);
            }
            rest = &value[end..];
        }
    }
    pairs
}

/// Whether the machine has what the page needs (node and npm through the chain harness, bash,
/// curl, jq); `false` after a `SKIP:` line, a failure under `PAY_REQUIRE_ALL_TESTS=1`.
fn tools() -> Option<std::path::PathBuf> {
    let dir = pay_chain::testing::tools()?;
    let runs = |cmd: &str| {
        Command::new(cmd)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let missing: Vec<&str> = ["bash", "curl", "jq"]
        .into_iter()
        .filter(|c| !runs(c))
        .collect();
    if missing.is_empty() {
        return Some(dir);
    }
    assert!(
        std::env::var("PAY_REQUIRE_ALL_TESTS").as_deref() != Ok("1"),
        "the chains walk-through needs {missing:?}"
    );
    eprintln!("SKIP: the chains walk-through (missing {missing:?})");
    None
}

/// Stands in for what the reader has or does by hand, and stops at the first failure (an HTTP
/// error fails its `curl`, the body still printed): the packages are installed (the harness
/// ran `npm ci` from the same lock file; running it again would empty `node_modules` under the
/// other chain tests), `cargo run -p pay-server` is the binary this test was built with, and
/// the key is read from the banner of the server's terminal once it answers.
const PRELUDE: &str = r#"set -euo pipefail
curl() { command curl --fail-with-body --max-time 30 "$@"; }
npm() { if [ "${1:-}" = ci ]; then return 0; fi; command npm "$@"; }
banner() {
  for _ in $(seq 600); do
    if grep -q '^}' server.out 2>/dev/null \
      && command curl -s -o /dev/null "http://127.0.0.1:$PAY_PORT/readyz"; then
      sed -n '/^{/,/^}/p' server.out | jq -er ".$1"
      return
    fi
    sleep 0.05
  done
  echo "no banner from the server: $(cat server.out server.err)" >&2
  return 1
}
"#;

/// The second terminal's shell: `cargo run -p pay-server` runs the built binary.
const SERVER_PRELUDE: &str = r#"set -euo pipefail
cargo() { if [ "$*" = "run -p pay-server" ]; then exec "$PAY_TEST_BIN"; fi; command cargo "$@"; }
"#;

/// The key the reader pastes from the banner.
const KEY_LINE: &str = "export KEY_ID=mk_pay_...  KEY_SECRET=mksec_...";

/// After the page's commands: the session as the payer's page reads it once it is complete
/// (a loaded machine may take longer than the page's pauses), on a line of its own.
const EPILOGUE: &str = r#"
for _ in $(seq 600); do
  s=$(command curl -s $PAY/api/public/checkout/$LINK/sessions/$SESSION)
  [ "$(jq -r .status <<<"$s")" = complete ] && break
  sleep 0.05
done
echo "FINAL $s"
"#;

#[test]
fn the_chains_page_runs_on_a_local_chain_as_written() {
    let Some(tools_dir) = tools() else {
        return;
    };
    let (blocks, section) = walkthrough();
    assert!(blocks.len() >= 5, "the page's blocks: {blocks:?}");
    let starts: Vec<usize> = (0..blocks.len())
        .filter(|i| blocks[*i].contains("cargo run"))
        .collect();
    assert_eq!(starts.len(), 1, "one block starts the server: {blocks:?}");
    let server_block = starts[0];
    let key_lines = blocks.iter().filter(|b| b.contains(KEY_LINE)).count();
    assert_eq!(key_lines, 1, "the page has `{KEY_LINE}` once");

    // The reader's first terminal: the blocks in order, the server's block started in a fresh
    // shell in the background (its own terminal), the key pasted from its banner.
    let mut script = String::from(PRELUDE);
    for (i, block) in blocks.iter().enumerate() {
        if i == server_block {
            script.push_str(
                "env -i PATH=\"$PATH\" HOME=\"$HOME\" RPC_PORT=\"$RPC_PORT\" \
                 PAY_PORT=\"$PAY_PORT\" PAY_TEST_BIN=\"$PAY_TEST_BIN\" \
                 bash -c \"$SERVER_SCRIPT\" >server.out 2>server.err &\n",
            );
            continue;
        }
        script.push_str(&block.replace(
            KEY_LINE,
            "KEY_ID=$(banner keyId); KEY_SECRET=$(banner keySecret); export KEY_ID KEY_SECRET",
        ));
    }
    script.push_str(EPILOGUE);

    let dir = TempDir::new();
    let tools_parent = dir.0.join("crates/pay-chain/tests");
    std::fs::create_dir_all(&tools_parent).unwrap();
    std::os::unix::fs::symlink(&tools_dir, tools_parent.join("chain-js")).unwrap();
    let (rpc_port, pay_port) = (free_port(), free_port());
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg(&script)
        .current_dir(&dir.0)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", std::env::var("HOME").unwrap_or_default())
        .env("RPC_PORT", rpc_port.to_string())
        .env("PAY_PORT", pay_port.to_string())
        .env("PAY_TEST_BIN", BIN)
        .env(
            "SERVER_SCRIPT",
            format!("{SERVER_PRELUDE}{}", blocks[server_block]),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: anvil and the server it starts end with it.
        .process_group(0);
    let mut child = command.spawn().unwrap();
    let group = child.id();
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    let done = wait_until(Duration::from_secs(180), || {
        child.try_wait().unwrap().is_some()
    });
    let _ = Command::new("kill")
        .args(["-TERM", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
    if !done {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let out = stdout.lock().unwrap().clone();
    let err = stderr.lock().unwrap().clone();
    let server_log = std::fs::read_to_string(dir.0.join("server.err")).unwrap_or_default();
    let report = format!("--- stdout\n{out}\n--- stderr\n{err}\n--- server\n{server_log}");
    assert!(
        status.success(),
        "the walk-through failed ({status}):\n{report}"
    );

    // What the page shows the commands answer, they answered.
    let printed = format!("{out}{err}");
    let pairs = shown_pairs(&section);
    assert!(pairs.len() >= 10, "the page's answers: {pairs:?}");
    let missing: Vec<&String> = pairs.iter().filter(|p| !printed.contains(*p)).collect();
    assert!(
        missing.is_empty(),
        "the page shows {missing:?}, not printed:\n{report}"
    );
    // The end the page promises: the session complete, 25 TUSD in the page's block.
    let last = out
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("FINAL "))
        .expect("the session read at the end");
    let s: Value = serde_json::from_str(last).unwrap();
    assert_eq!(s["status"], "complete", "{s}\n{report}");
    assert_eq!(s["settlement"]["receivedAmount"], "25", "{s}");
    let transfers = s["settlement"]["transfers"].as_array().unwrap();
    assert_eq!(transfers.len(), 1, "{s}");
    assert_eq!(
        format!("\"blockNumber\":{}", transfers[0]["blockNumber"]),
        pairs
            .iter()
            .find(|p| p.starts_with("\"blockNumber\""))
            .cloned()
            .unwrap_or_default(),
        "the page's block: {s}"
    );
}

#[test]
fn the_answers_the_page_shows_are_read_as_pairs() {
    let section = "x\n# -> {\"a\":\"b\",\"c\":1, \"d\":\"0x...\",\"e\":[{\"f\":2}]}\n\
                   #     \"g\":[\"0xAb\", \"0x...\"],\"i\":true, ...}\n\
                   # not an answer \"h\":3\n";
    assert_eq!(
        shown_pairs(section),
        [
            "\"a\":\"b\"",
            "\"c\":1",
            "\"f\":2",
            "\"0xAb\"",
            "\"i\":true"
        ]
    );
}
