//! Evidence files survive a restart of the real binary: uploaded and linked on the embedded
//! default (bytes in `files/` beside the SQLite file), the server stopped gracefully and then
//! killed with `kill -9`, and after each start the expense still lists the file and the
//! download answers the same bytes. `PAY_FILES_DIR` moves the files elsewhere.

use std::process::Command;

use serde_json::{json, Value};

#[path = "support/process.rs"]
mod process;

use process::*;

const PDF: &[u8] = b"%PDF-1.4\n% restart\n%%EOF\n";

fn serve(dir: &TempDir, env: &[(&str, &str)]) -> Server {
    let mut command = Command::new(BIN);
    command
        .env("PAY_DATABASE_URL", dir.db_url())
        .env("PAY_LOG", "warn")
        .env_remove("PAY_BASE_URL")
        .env_remove("PAY_PUBLIC_PAY_URL")
        .env_remove("PAY_FILES_DIR")
        .env_remove("PAY_FILES_S3_BUCKET")
        .env_remove("PAY_DEMO")
        .envs(env.iter().copied());
    Server::spawn(command)
}

/// The credentials of a company made by `admin bootstrap`.
fn bootstrap(dir: &TempDir) -> (String, String, String) {
    let out = Command::new(BIN)
        .args([
            "admin",
            "bootstrap",
            "--company",
            "Files",
            "--email",
            "f@f.example",
        ])
        .args(["--password", "files password 12"])
        .env("PAY_DATABASE_URL", dir.db_url())
        .env("PAY_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = |k: &str| v[k].as_str().unwrap().to_owned();
    (s("companyId"), s("keyId"), s("keySecret"))
}

/// A blocking raw-body upload: status and JSON answer.
fn upload(base: &str, key: &[(&str, &str)], name: &str, bytes: &[u8]) -> (u16, Value) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut rb = reqwest::Client::new()
            .post(format!(
                "{base}/api/partner/v1/pay/bookkeeping/files?filename={name}"
            ))
            .body(bytes.to_vec());
        for (k, v) in key {
            rb = rb.header(*k, *v);
        }
        let res = rb.send().await.unwrap();
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    })
}

/// The download's bytes.
fn download(base: &str, key: &[(&str, &str)], path: &str) -> (u16, Vec<u8>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut rb = reqwest::Client::new().get(format!("{base}{path}"));
        for (k, v) in key {
            rb = rb.header(*k, *v);
        }
        let res = rb.send().await.unwrap();
        (res.status().as_u16(), res.bytes().await.unwrap().to_vec())
    })
}

/// The expense's files after a start: the same file, the same bytes.
fn still_there(base: &str, key: &[(&str, &str)], activity: &str, file: &Value) {
    let (st, detail, _) = call(
        "GET",
        &format!("{base}/api/partner/v1/pay/bookkeeping/wallet-activity/{activity}"),
        key,
        None,
    );
    assert_eq!(st, 200, "{detail}");
    assert_eq!(detail["expense"]["evidenceFiles"][0]["id"], file["id"]);
    let (st, bytes) = download(base, key, file["downloadPath"].as_str().unwrap());
    assert_eq!((st, bytes.as_slice()), (200, PDF));
}

#[test]
fn evidence_files_survive_a_restart_and_a_kill() {
    let dir = TempDir::new();
    let (company, key_id, key_secret) = bootstrap(&dir);
    let key = [
        ("x-svc-key-id", key_id.as_str()),
        ("x-svc-key-secret", key_secret.as_str()),
    ];
    let s = serve(&dir, &[]);
    let (st, file) = upload(&s.base, &key, "invoice.pdf", PDF);
    assert_eq!(st, 201, "{file}");
    let (st, activity, _) = call(
        "POST",
        &format!(
            "{}/api/partner/v1/pay/sandbox/wallet-activity/outgoing",
            s.base
        ),
        &key,
        Some(json!({
            "chain": "eip155:8453",
            "txHash": format!("0x{}", "9".repeat(64)),
            "logIndex": 0,
            "asset": "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            "amount": "3",
            "toAddress": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
        })),
    );
    assert_eq!(st, 201, "{activity}");
    let activity = activity["id"].as_str().unwrap().to_owned();
    let (st, saved, _) = call(
        "POST",
        &format!(
            "{}/api/partner/v1/pay/bookkeeping/expenses/from-activity",
            s.base
        ),
        &key,
        Some(json!({
            "walletActivityEventId": activity,
            "counterparty": {"newVendor": {"email": "v@v.example"}},
            "category": "Hosting",
            "description": "Servers",
            "evidenceFileIds": [file["id"]],
        })),
    );
    assert_eq!(st, 201, "{saved}");
    // The embedded default: `files/` beside the database.
    let on_disk = dir
        .0
        .join("files/evidence")
        .join(&company)
        .join(file["id"].as_str().unwrap());
    assert_eq!(std::fs::read(&on_disk).unwrap(), PDF);
    s.stop();

    let s = serve(&dir, &[]);
    still_there(&s.base, &key, &activity, &file);
    s.kill9();

    let s = serve(&dir, &[]);
    still_there(&s.base, &key, &activity, &file);
    s.stop();

    // Elsewhere with PAY_FILES_DIR: a new upload lands there.
    let elsewhere = dir.0.join("elsewhere");
    let s = serve(&dir, &[("PAY_FILES_DIR", elsewhere.to_str().unwrap())]);
    let (st, other) = upload(&s.base, &key, "second.pdf", PDF);
    assert_eq!(st, 201, "{other}");
    assert!(elsewhere
        .join("evidence")
        .join(&company)
        .join(other["id"].as_str().unwrap())
        .exists());
    s.stop();
}
