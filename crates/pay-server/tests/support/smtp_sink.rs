//! A real SMTP server for tests: Python's `aiosmtpd` on a free loopback port, run as a child
//! process whose handler parses each message with Python's own `email` package (an independent
//! MIME decoder) and writes it to a JSON file. Without python3 or aiosmtpd the test prints a
//! SKIP line, or fails under `PAY_REQUIRE_ALL_TESTS=1` (`pip install aiosmtpd`).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const HANDLER: &str = r#"
import email, email.policy, json, os, sys, uuid
from aiosmtpd.controller import Controller

out, port = sys.argv[1], int(sys.argv[2])

class Handler:
    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        parts = {}
        for part in msg.walk():
            if part.get_content_type() in ("text/plain", "text/html"):
                parts[part.get_content_type()] = part.get_content()
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "from": str(msg["from"]),
            "to": str(msg["to"]),
            "subject": str(msg["subject"]),
            "message_id": str(msg["message-id"]),
            "content_type": msg.get_content_type(),
            "text": parts.get("text/plain"),
            "html": parts.get("text/html"),
            "raw": envelope.content.decode("utf-8", "replace"),
        }
        tmp = os.path.join(out, uuid.uuid4().hex + ".tmp")
        with open(tmp, "w") as f:
            json.dump(record, f)
        os.rename(tmp, tmp[:-4] + ".json")
        return "250 OK"

controller = Controller(Handler(), hostname="127.0.0.1", port=port)
controller.start()
print("READY", flush=True)
try:
    sys.stdin.read()
finally:
    controller.stop()
"#;

/// A running sink; stopped (the child killed) on drop.
pub struct SmtpSink {
    child: Child,
    pub port: u16,
    dir: PathBuf,
}

fn require_all() -> bool {
    std::env::var("PAY_REQUIRE_ALL_TESTS").as_deref() == Ok("1")
}

impl SmtpSink {
    /// Starts a sink, or returns `None` after a SKIP line when python3 or aiosmtpd is missing
    /// (a panic instead under `PAY_REQUIRE_ALL_TESTS=1`).
    pub fn start() -> Option<SmtpSink> {
        let probe = Command::new("python3")
            .args(["-c", "import aiosmtpd"])
            .output();
        if !probe.is_ok_and(|o| o.status.success()) {
            if require_all() {
                panic!("python3 with the aiosmtpd package is required (pip install aiosmtpd)");
            }
            eprintln!("SKIP: SMTP end-to-end test (pip install aiosmtpd to run it)");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("pay-smtp-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        // A port that was free a moment ago (aiosmtpd needs a fixed one to check its start).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new("python3")
            .args(["-c", HANDLER, dir.to_str().unwrap(), &port.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start python3");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "READY", "the SMTP sink did not start");
        Some(SmtpSink { child, port, dir })
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message received so far (oldest first by file time).
    pub fn messages(&self) -> Vec<Value> {
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&self.dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| (std::fs::metadata(&p).unwrap().modified().unwrap(), p))
            .collect();
        files.sort();
        files
            .into_iter()
            .map(|(_, p)| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
            .collect()
    }

    /// Waits until at least `n` messages arrived; returns them all.
    pub fn wait_for(&self, n: usize, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.messages();
            if got.len() >= n || Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
