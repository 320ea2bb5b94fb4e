//! The file store conformance suite (`pay_domain::testing::conformance::files`) on both
//! adapters: local disk in a fresh directory, and S3 against a local `moto_server` (PyPI
//! `moto[server]`) that the test starts on a free loopback port and stops after. Without
//! `moto_server` the S3 case prints `SKIP:` and passes, unless `PAY_REQUIRE_ALL_TESTS=1`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pay_domain::bookkeeping::FileStore;
use pay_domain::testing::conformance::files::file_store_keeps_its_contract;
use pay_files::{LocalFiles, S3Config, S3Files};

/// A fresh directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!("pay-files-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn local_disk_keeps_the_contract() {
    let dir = TempDir::new();
    let root = dir.0.join("files");
    let store = LocalFiles::open(&root).unwrap();
    file_store_keeps_its_contract(&store, "t");
    // Nothing was written outside the root, and no temporary file is left behind.
    let outside: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, ["files"]);
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            assert!(
                !e.file_name().to_string_lossy().starts_with(".tmp"),
                "{e:?}"
            );
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            }
        }
    }
    // What one store wrote, another over the same root reads (a restart).
    store.put("evidence/c/kept", b"%PDF-kept").unwrap();
    drop(store);
    let again = LocalFiles::open(&root).unwrap();
    assert_eq!(
        again.get("evidence/c/kept").unwrap().as_deref(),
        Some(&b"%PDF-kept"[..])
    );
}

/// A `moto_server` child, killed on drop.
struct Moto {
    child: Child,
    port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `moto_server` on a free loopback port and waits until it answers; `None` (after a
/// SKIP line) when it is not installed, a panic then under `PAY_REQUIRE_ALL_TESTS=1`.
fn start_moto() -> Option<Moto> {
    let port = free_port();
    let child = Command::new("moto_server")
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            if std::env::var("PAY_REQUIRE_ALL_TESTS").is_ok_and(|v| v == "1") {
                panic!(
                    "PAY_REQUIRE_ALL_TESTS=1 but moto_server cannot start ({e}): \
                     pip install 'moto[server]'"
                );
            }
            eprintln!("SKIP: S3 file store test (moto_server: {e}; pip install 'moto[server]')");
            return None;
        }
    };
    let moto = Moto { child, port };
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "moto_server did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(moto)
}

/// Creates `bucket` (moto takes unsigned requests).
fn create_bucket(port: u16, bucket: &str) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn s3_compatible_storage_keeps_the_contract() {
    let Some(moto) = start_moto() else { return };
    create_bucket(moto.port, "evidence");
    let config = |prefix: Option<&str>| S3Config {
        bucket: "evidence".into(),
        endpoint: Some(format!("http://127.0.0.1:{}", moto.port)),
        region: "us-east-1".into(),
        access_key_id: "test".into(),
        secret_access_key: "test".into(),
        prefix: prefix.map(Into::into),
    };
    let store = S3Files::new(&config(None)).unwrap();
    file_store_keeps_its_contract(&store, "t");
    // A prefix keeps objects apart; the secret never shows in a debug print.
    let prefixed = S3Files::new(&config(Some("instance-a"))).unwrap();
    prefixed.put("evidence/x/1", b"%PDF-a").unwrap();
    assert_eq!(store.get("evidence/x/1").unwrap(), None);
    assert_eq!(
        store.get("instance-a/evidence/x/1").unwrap().as_deref(),
        Some(&b"%PDF-a"[..])
    );
    assert!(!format!("{:?}", config(None)).contains("secret_access_key: \"test\""));
    // Used from a blocking thread of another runtime, as the server does.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let got = rt.block_on(async move {
        tokio::task::spawn_blocking(move || prefixed.get("evidence/x/1").unwrap())
            .await
            .unwrap()
    });
    assert_eq!(got.as_deref(), Some(&b"%PDF-a"[..]));
}
