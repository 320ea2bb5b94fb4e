//! A real third-party OAuth client drives the whole flow against the real binary: the npm
//! packages `oauth4webapi` and `dpop` on Node (`tests/oauth-client/flow.mjs`) discover the
//! server, sign the merchant in and approve on the server's own pages, exchange the code with
//! PKCE and a DPoP proof, create and read a payment link and read the company with DPoP
//! proofs, refresh, and then either detect rotation (the spent refresh token refused, its
//! family revoked) or revoke.
//! It runs once with an ES256 key and once with an Ed25519 key (the `dpop` package writes
//! `alg: Ed25519`), on SQLite and on PostgreSQL, and again on a server requiring DPoP nonces
//! (`PAY_DPOP_NONCES`), whose `use_dpop_nonce` answers both libraries follow.
//!
//! A native installation runs the same way (`tests/oauth-client/native.mjs`, see `native_flow`),
//! with the merchant's consent given in a real headless Chromium (`chromium` and
//! `chromedriver`; the same `SKIP:` rule).
//!
//! The packages are installed with `npm ci` (from the committed `package-lock.json`) when
//! `node_modules` is missing. Without `node` or `npm` the test prints a `SKIP:` line and passes,
//! except under `PAY_REQUIRE_ALL_TESTS=1`, where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use pay_store::testing::TestDb;
use serde_json::Value;

#[path = "support/process.rs"]
mod process;

use process::*;

const EMAIL: &str = "owner@shop.example";
const PASSWORD: &str = "client password 1";
const REDIRECT: &str = "http://127.0.0.1:9/oauth/callback";
const SCOPES: &str = "company:read pay:payment-links:read pay:payment-links:write";
/// A fixed key sealing secrets at rest (PostgreSQL requires one).
const ENCRYPTION_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oauth-client")
}

fn require_all() -> bool {
    std::env::var("PAY_REQUIRE_ALL_TESTS").as_deref() == Ok("1")
}

/// `program --version`, when it runs.
fn version(program: &str) -> Option<String> {
    let out = Command::new(program).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Node's major version from `v20.1.0`.
fn node_major(v: &str) -> Option<u32> {
    v.strip_prefix('v')?.split('.').next()?.parse().ok()
}

/// The client's directory with its packages installed, or `None` after the SKIP line (a
/// panic under `PAY_REQUIRE_ALL_TESTS=1`).
fn client() -> Option<PathBuf> {
    let node = version("node").and_then(|v| node_major(&v));
    if node.is_none_or(|major| major < 20) || version("npm").is_none() {
        let msg = "node (20 or later) and npm are needed";
        assert!(!require_all(), "PAY_REQUIRE_ALL_TESTS=1 but {msg}");
        eprintln!("SKIP: OAuth client test with oauth4webapi and dpop: {msg}");
        return None;
    }
    let dir = client_dir();
    // The two tests of this binary run at once: one installs, the other waits for it.
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _installing = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if !dir.join("node_modules/oauth4webapi").is_dir() || !dir.join("node_modules/dpop").is_dir() {
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "npm ci failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Some(dir)
}

/// Chromium and chromedriver, or `None` after the SKIP line (a panic under
/// `PAY_REQUIRE_ALL_TESTS=1`).
fn chromium() -> Option<(PathBuf, PathBuf)> {
    let find = |names: &[&str]| {
        let path = std::env::var_os("PATH")?;
        names.iter().find_map(|name| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
    };
    match (
        find(&["chromium", "chromium-browser", "google-chrome"]),
        find(&["chromedriver"]),
    ) {
        (Some(browser), Some(driver)) => Some((browser, driver)),
        _ => {
            let msg = "chromium and chromedriver are needed (apt-get install -y chromium chromium-driver)";
            assert!(!require_all(), "PAY_REQUIRE_ALL_TESTS=1 but {msg}");
            eprintln!("SKIP: native installation test in Chromium: {msg}");
            None
        }
    }
}

/// Runs `pay-server` `args` on `db` and returns the JSON it prints.
fn admin(db: &str, args: &[&str]) -> Value {
    let out = Command::new(BIN)
        .args(args)
        .env("PAY_DATABASE_URL", db)
        .env("PAY_ENCRYPTION_KEY", ENCRYPTION_KEY)
        .env("PAY_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One run of a client script: its steps (one JSON object per line).
fn run_client(dir: &Path, script: &str, server: &Server, env: &[(&str, &str)]) -> Vec<Value> {
    let out = Command::new("node")
        .arg(script)
        .current_dir(dir)
        .env("PAY_BASE", &server.base)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the client failed:\n{stdout}\n{}\nserver log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        server.log()
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn step<'a>(steps: &'a [Value], name: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no step {name} in {steps:?}"))
}

/// The merchant of the flows: `admin bootstrap`'s output.
fn owner(db: &str) -> Value {
    admin(
        db,
        &[
            "admin",
            "bootstrap",
            "--company",
            "Client Shop",
            "--email",
            EMAIL,
            "--password",
            PASSWORD,
        ],
    )
}

/// The server of the flows on `db`, with server DPoP nonces (`PAY_DPOP_NONCES`) when `nonces`.
fn server(db: &str, nonces: bool) -> Server {
    let mut command = Command::new(BIN);
    command
        .env("PAY_DATABASE_URL", db)
        .env("PAY_ENCRYPTION_KEY", ENCRYPTION_KEY)
        .env("PAY_LOG", "warn")
        .env("PAY_DPOP_NONCES", if nonces { "true" } else { "false" })
        .env_remove("PAY_BASE_URL")
        .env_remove("PAY_AUTH_URL")
        .env_remove("PAY_DEMO");
    Server::spawn(command)
}

/// The flow on `db`, with server DPoP nonces (`PAY_DPOP_NONCES`) when `nonces`.
fn whole_flow(db: &str, nonces: bool) {
    let Some(dir) = client() else { return };
    let owner = owner(db);
    let app = admin(
        db,
        &[
            "admin",
            "create-oauth-app",
            "--name",
            "Node Plugin",
            "--redirect-uri",
            REDIRECT,
            "--scopes",
            SCOPES,
            "--public",
            "--dpop-bound",
        ],
    );
    assert!(app.get("clientSecret").is_none(), "a public app: {app}");
    let server = server(db, nonces);
    let company = owner["companyId"].as_str().unwrap();
    let client_id = app["clientId"].as_str().unwrap();
    let mut uids = Vec::new();
    for (alg, end) in [("ES256", "reuse"), ("Ed25519", "revoke")] {
        let steps = run_client(
            &dir,
            "flow.mjs",
            &server,
            &[
                ("CLIENT_ID", client_id),
                ("REDIRECT_URI", REDIRECT),
                ("EMAIL", EMAIL),
                ("PASSWORD", PASSWORD),
                ("COMPANY_ID", company),
                ("ALG", alg),
                ("END", end),
            ],
        );
        let algs = &step(&steps, "discovery")["algs"];
        for listed in ["ES256", "EdDSA", "Ed25519"] {
            assert!(
                algs.as_array().unwrap().iter().any(|a| a == listed),
                "{algs}"
            );
        }
        assert_eq!(step(&steps, "proof_alg")["alg"], alg);
        let token = step(&steps, "token");
        assert_eq!(token["token_type"], "dpop");
        assert_eq!(token["scope"], SCOPES);
        assert_eq!(token["expires_in"], 900);
        step(&steps, "signed_in");
        step(&steps, "approved");
        let identity = step(&steps, "company");
        assert_eq!(
            (&identity["id"], &identity["name"]),
            (&owner["companyId"], &Value::from("Client Shop"))
        );
        step(&steps, "replay_refused");
        step(&steps, "refreshed");
        step(
            &steps,
            if end == "reuse" {
                "rotation_detected"
            } else {
                "revoked"
            },
        );
        step(&steps, "done");
        // With nonces, oauth4webapi retried the code exchange and the `dpop` calls retried
        // their first request, each with the nonce the server sent; without, nothing retried.
        let retries = steps
            .iter()
            .filter(|s| s["step"] == "dpop_nonce_retry")
            .count();
        assert_eq!(retries, if nonces { 2 } else { 0 }, "{steps:?}");
        uids.push(step(&steps, "link")["uid"].as_str().unwrap().to_owned());
    }
    // What the client created is the company's, seen through the owner's API key.
    let key = [
        ("x-svc-key-id", owner["keyId"].as_str().unwrap()),
        ("x-svc-key-secret", owner["keySecret"].as_str().unwrap()),
    ];
    for uid in &uids {
        let (status, body, _) = call(
            "GET",
            &format!("{}/api/partner/v1/pay/payment-links/{uid}", server.base),
            &key,
            None,
        );
        assert_eq!(status, 200, "{body}");
        let title = body["payload"]["title"].as_str().unwrap_or_default();
        assert!(title.starts_with("Order via "), "{body}");
    }
    server.stop();
}

/// A native installation as a store plugin runs it (`tests/oauth-client/native.mjs`): keys
/// and proofs by the `dpop` package, register (201) and again (200), consent on the pages,
/// tokens, a payment link, a webhook subscription; a key rotation with `DPoP-Previous`, the
/// consent that accepts it, the old family revoked and the new one working. Once per key type,
/// the second run on a server requiring nonces.
fn native_flow(db: &str, shot: bool) {
    let Some(dir) = client() else { return };
    let Some((browser, driver)) = chromium() else {
        return;
    };
    // `PAY_UPDATE_SCREENSHOTS=1` writes the consent page to docs/images.
    let screenshot =
        (shot && std::env::var("PAY_UPDATE_SCREENSHOTS").as_deref() == Ok("1")).then(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/images/native-consent.png")
        });
    let owner = owner(db);
    let platform = admin(
        db,
        &[
            "admin",
            "create-native-platform",
            "--platform",
            "woocommerce",
            "--name",
            "Woo Pay Connector",
        ],
    );
    assert_eq!(platform["platform"], "woocommerce");
    let company = owner["companyId"].as_str().unwrap();
    for (alg, nonces) in [("ES256", false), ("Ed25519", true)] {
        let server = server(db, nonces);
        let mut env = vec![
            ("PLATFORM", "woocommerce"),
            ("PLATFORM_NAME", "Woo Pay Connector"),
            ("EMAIL", EMAIL),
            ("PASSWORD", PASSWORD),
            ("COMPANY_ID", company),
            ("ALG", alg),
            ("CHROMIUM", browser.to_str().unwrap()),
            ("CHROMEDRIVER", driver.to_str().unwrap()),
        ];
        if let (Some(path), false) = (&screenshot, nonces) {
            env.push(("SCREENSHOT", path.to_str().unwrap()));
        }
        let steps = run_client(&dir, "native.mjs", &server, &env);
        let client = &step(&steps, "registered")["client_id"];
        assert!(client.as_str().unwrap().starts_with("svc_app_"), "{client}");
        for name in [
            "registered_again",
            "signed_in_in_chromium",
            "approved_in_chromium",
            "token",
            "link",
            "webhook_subscription",
            "rotation_registered",
            "old_family_revoked",
            "new_family_works",
            "done",
        ] {
            step(&steps, name);
        }
        server.stop();
    }
}

#[test]
fn a_native_installation_with_the_dpop_package_on_sqlite() {
    let db = TestDb::sqlite();
    native_flow(&db.url, true);
}

#[test]
fn a_native_installation_with_the_dpop_package_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    native_flow(&db.url, false);
}

#[test]
fn oauth4webapi_and_dpop_drive_the_whole_flow_on_sqlite() {
    let db = TestDb::sqlite();
    whole_flow(&db.url, false);
}

#[test]
fn oauth4webapi_and_dpop_follow_server_nonces_on_sqlite() {
    let db = TestDb::sqlite();
    whole_flow(&db.url, true);
}

#[test]
fn oauth4webapi_and_dpop_follow_server_nonces_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    whole_flow(&db.url, true);
}

#[test]
fn oauth4webapi_and_dpop_drive_the_whole_flow_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    whole_flow(&db.url, false);
}
