//! The real `pay-server` binary as the binary tests run it: a throw-away directory, a server
//! started on a free loopback port and waited for until `/readyz` answers, its output
//! collected, a graceful stop or a `kill -9`, and a blocking HTTP call.
// Each test binary includes this file and uses part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_pay-server");

/// A directory removed when dropped; `db_url` is an SQLite database in it.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        let p = std::env::temp_dir().join(format!("pay-bin-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    pub fn db_url(&self) -> String {
        format!("sqlite://{}", self.0.join("pay.db").display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Collects a child's stream, line by line, as it comes.
pub fn collect(r: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let buf = Arc::new(Mutex::new(String::new()));
    let b = buf.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines().map_while(Result::ok) {
            let mut s = b.lock().unwrap();
            s.push_str(&line);
            s.push('\n');
        }
    });
    buf
}

/// A running `pay-server` with its standard output and log (standard error) collected.
pub struct Server {
    child: Child,
    pub base: String,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    /// Starts `command` (the binary with the test's environment) listening on a free port,
    /// and waits until it is ready.
    pub fn spawn(mut command: Command) -> Server {
        let port = free_port();
        let mut child = command
            .env("PAY_LISTEN", format!("127.0.0.1:{port}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        let s = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            stdout,
            stderr,
        };
        let ready = wait_until(Duration::from_secs(30), || {
            call("GET", &format!("{}/readyz", s.base), &[], None).0 == 200
        });
        assert!(ready, "server did not become ready; log:\n{}", s.log());
        s
    }

    /// What it printed so far (standard output).
    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    /// What it logged so far (standard error).
    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until the log contains `needle` (at most 10 s).
    pub fn wait_log(&self, needle: &str) -> bool {
        wait_until(Duration::from_secs(10), || self.log().contains(needle))
    }

    /// SIGINT (a graceful stop; killed after 10 s), then its standard output and log.
    pub fn stop(mut self) -> (String, String) {
        let _ = Command::new("kill")
            .arg("-INT")
            .arg(self.child.id().to_string())
            .status();
        wait_until(Duration::from_secs(10), || {
            self.child.try_wait().unwrap().is_some()
        });
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The collectors read what the process wrote last.
        std::thread::sleep(Duration::from_millis(100));
        let out = self.stdout.lock().unwrap().clone();
        (out, self.log())
    }

    /// SIGKILL (`kill -9`): no shutdown of any kind.
    pub fn kill9(mut self) {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9),
            "killed by SIGKILL"
        );
    }
}

/// A test that fails before `stop` or `kill9` leaves no server behind (its watchers and
/// workers would run on).
impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A blocking HTTP call: status (0 when unreachable), JSON body (null when not JSON), headers.
pub fn call(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut rb = reqwest::Client::new().request(method.parse().unwrap(), url);
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let Ok(res) = rb.send().await else {
            return (0, Value::Null, Default::default());
        };
        let status = res.status().as_u16();
        let h = res.headers().clone();
        let text = res.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::Null),
            h,
        )
    })
}

/// Signs in on the server at `base` as a member of `company` who may change its settings and
/// points the company's payment callback at `hook`; the callback as answered (its
/// `signingSecret`).
pub fn set_payment_callback(
    base: &str,
    email: &str,
    password: &str,
    company: &str,
    hook: &str,
) -> Value {
    let (status, body, h) = call(
        "POST",
        &format!("{base}/auth/login"),
        &[],
        Some(serde_json::json!({"email": email, "password": password})),
    );
    assert_eq!(status, 200, "{body}");
    let cookie = h["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let csrf = body["csrfToken"].as_str().unwrap().to_owned();
    let (status, callback, _) = call(
        "PUT",
        &format!("{base}/api/partner/v1/companies/{company}/payment-callback"),
        &[("cookie", cookie.as_str()), ("x-csrf-token", csrf.as_str())],
        Some(serde_json::json!({ "url": hook })),
    );
    assert_eq!(status, 200, "{callback}");
    callback
}

/// Waits for `done`, polling every 5 ms; false after `within`.
pub fn wait_until(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    done()
}

/// A one-thread HTTP receiver: answers 200 to every request and hands over each body.
pub fn receiver() -> (String, std::sync::mpsc::Receiver<(String, String)>) {
    receiver_failing_first(0)
}

/// The same, answering 503 to its first `failing` requests; it hands over every arrival.
pub fn receiver_failing_first(
    failing: usize,
) -> (String, std::sync::mpsc::Receiver<(String, String)>) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/hook",
        listener.local_addr().unwrap().port()
    );
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0u8; len];
            if reader.read_exact(&mut body).is_ok() {
                let answer: &[u8] = if n < failing {
                    b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                } else {
                    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
                };
                let _ = stream.write_all(answer);
                let _ = tx.send((head, String::from_utf8_lossy(&body).into_owned()));
            }
        }
    });
    (url, rx)
}
