//! The binary as an operator runs it: the first-start demo banner, the README's curl walk-through
//! with the printed key, `migrate`, `admin bootstrap`, and a log that never carries a secret.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "support/process.rs"]
mod process;

use process::*;

/// A server on the test's SQLite database, logging at `log`, with `env` added.
fn serve(dir: &TempDir, log: &str, env: &[(&str, &str)]) -> Server {
    let mut command = Command::new(BIN);
    command
        .envs(env.iter().copied())
        .env("PAY_DATABASE_URL", dir.db_url())
        .env("PAY_LOG", log)
        .env_remove("PAY_BASE_URL")
        .env_remove("PAY_PUBLIC_PAY_URL")
        .env_remove("PAY_DEMO");
    Server::spawn(command)
}

fn banner_json(stdout: &str) -> Value {
    let start = stdout.find('{').expect("a JSON object in the banner");
    let end = stdout.find("\n}").expect("end of the JSON object") + 2;
    serde_json::from_str(&stdout[start..end]).unwrap()
}

/// The shell blocks of the README's walk-through (from "A first payment link with curl" to
/// "Configuration"), in order, as one script. A line that starts the server (`cargo run`) is
/// left out: the test runs the server itself, with the environment that line gives.
fn readme_walkthrough() -> (String, Vec<String>) {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let from = readme
        .find("## A first payment link with curl")
        .expect("the walk-through section");
    let to = from + readme[from..].find("## Configuration").expect("its end");
    let (mut script, mut starts, mut in_sh) = (String::new(), Vec::new(), false);
    for line in readme[from..to].lines() {
        match (in_sh, line.trim_end()) {
            (false, "```sh") => in_sh = true,
            (true, "```") => in_sh = false,
            (true, l) if l.contains("cargo run") => starts.push(l.to_owned()),
            (true, l) => {
                script.push_str(l);
                script.push('\n');
            }
            _ => {}
        }
    }
    (script, starts)
}

/// What the walk-through needs on the machine: bash, curl with `--fail-with-body` (7.76),
/// jq and python3. `None` (with a `SKIP:` line) without one, a failure under
/// `PAY_REQUIRE_ALL_TESTS=1`.
fn walkthrough_tools() -> Option<()> {
    let ok = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let missing: Vec<&str> = [
        ("bash", ok("bash", &["-c", "true"])),
        ("curl 7.76+", ok("curl", &["--fail-with-body", "--version"])),
        ("jq", ok("jq", &["--version"])),
        ("python3", ok("python3", &["--version"])),
    ]
    .into_iter()
    .filter(|(_, there)| !there)
    .map(|(name, _)| name)
    .collect();
    if missing.is_empty() {
        return Some(());
    }
    if std::env::var("PAY_REQUIRE_ALL_TESTS").as_deref() == Ok("1") {
        panic!("the README walk-through needs {missing:?}");
    }
    eprintln!("SKIP: the README walk-through (missing {missing:?})");
    None
}

/// Runs the README's walk-through, its own text, against `base` with the banner's values
/// pasted where it says: the script's standard output (the local receiver prints there).
fn run_readme(dir: &TempDir, base: &str, creds: &Value) -> String {
    let (text, starts) = readme_walkthrough();
    // The server the walk-through restarts is this one: started with that line's environment.
    assert_eq!(
        starts,
        ["PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS=true cargo run -p pay-server"],
        "the README starts the server as this test does"
    );
    let mut script = text;
    for (placeholder, value) in [
        (
            "KEY_ID=mk_pay_...",
            format!("KEY_ID={}", creds["keyId"].as_str().unwrap()),
        ),
        (
            "KEY_SECRET=mksec_...",
            format!("KEY_SECRET={}", creds["keySecret"].as_str().unwrap()),
        ),
        (
            "PASSWORD=demo-...",
            format!("PASSWORD={}", creds["password"].as_str().unwrap()),
        ),
        // The test's server and receiver listen on free ports, not the README's.
        (
            "127.0.0.1:8080",
            base.trim_start_matches("http://").to_owned(),
        ),
        ("127.0.0.1:9000", format!("127.0.0.1:{}", free_port())),
    ] {
        assert!(script.contains(placeholder), "the README has {placeholder}");
        script = script.replace(placeholder, &value);
    }
    // Pasted as a newcomer would, but stopping at the first failure: an HTTP error fails its
    // curl (the body still printed), and the receiver it starts stops with the script.
    let prelude = "set -euo pipefail\n\
                   trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n\
                   curl() { command curl --fail-with-body --max-time 30 \"$@\"; }\n";
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!("{prelude}{script}"))
        .current_dir(&dir.0)
        .env_remove("KEY_ID")
        .env_remove("KEY_SECRET")
        .env_remove("PASSWORD")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    let done = wait_until(Duration::from_secs(180), || {
        child.try_wait().unwrap().is_some()
    });
    if !done {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let out = stdout.lock().unwrap().clone();
    let err = stderr.lock().unwrap().clone();
    assert!(
        status.success(),
        "the README walk-through failed ({status}):\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    out
}

#[test]
fn first_start_prints_demo_credentials_once_and_the_readme_walkthrough_works() {
    let dir = TempDir::new();
    let s = serve(
        &dir,
        "info",
        &[("PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")],
    );
    // The banner is printed before the server is ready.
    let creds = banner_json(&s.stdout());
    let key_id = creds["keyId"].as_str().unwrap().to_owned();
    let secret = creds["keySecret"].as_str().unwrap().to_owned();
    assert!(key_id.starts_with("mk_pay_") && secret.starts_with("mksec_"));
    assert_eq!(creds["email"], "demo@example.com");
    let auth = [
        ("x-svc-key-id", key_id.as_str()),
        ("x-svc-key-secret", secret.as_str()),
    ];
    let api = format!("{}/api/partner/v1/pay", s.base);
    if walkthrough_tools().is_some() {
        let out = run_readme(&dir, &s.base, &creds);
        // The local receiver printed the test event.
        assert!(out.contains("pay.webhook.test"), "{out}");
        // The link was paid, then paused and archived.
        let (_, list, _) = call("GET", &format!("{api}/payment-links"), &auth, None);
        let order = list["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["payload"]["title"] == "Order 42")
            .expect("the README's link")
            .clone();
        assert_eq!(order["status"], "archived");
        let uid = order["uid"].as_str().unwrap();
        let (_, detail, _) = call("GET", &format!("{api}/payment-links/{uid}"), &auth, None);
        assert_eq!(detail["latestSession"]["status"], "complete", "{detail}");
        // The subscription's cycle 0 was paid in full (not underpaid by the fee settings);
        // a month on, cycle 1 is overdue.
        let (_, subs, _) = call("GET", &format!("{api}/subscriptions"), &auth, None);
        let sub = &subs["data"][0];
        assert_eq!(sub["cycles"][0]["status"], "paid", "{sub}");
        assert_eq!(sub["status"], "overdue", "{sub}");
        assert_eq!(sub["cycles"][1]["status"], "overdue", "{sub}");
    }
    let (out, _) = s.stop();
    assert_eq!(
        out.matches(secret.as_str()).count(),
        1,
        "the secret is printed once"
    );
    // Second start on the same database: no banner, same data.
    let s = serve(&dir, "info", &[]);
    let (st, _, _) = call(
        "GET",
        &format!("{}/api/partner/v1/pay/payment-links", s.base),
        &auth,
        None,
    );
    assert_eq!(st, 200);
    let (out, _) = s.stop();
    assert!(
        !out.contains("keySecret") && !out.contains(secret.as_str()),
        "printed once only: {out}"
    );
}

#[test]
fn migrate_and_admin_bootstrap_are_scriptable() {
    let dir = TempDir::new();
    let command = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env("PAY_DATABASE_URL", dir.db_url())
            .env("PAY_LOG", "warn")
            .env("PAY_BOOTSTRAP_PASSWORD", "a long enough password")
            .output()
            .unwrap()
    };
    let run = |args: &[&str]| {
        let out = command(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(run(&["migrate"]), "");
    // A bad website is refused before anything is created.
    let refused = command(&[
        "admin",
        "bootstrap",
        "--company",
        "Acme",
        "--email",
        "ops@acme.example",
        "--website",
        "acme.example",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("website"));
    let first: Value = serde_json::from_str(&run(&[
        "admin",
        "bootstrap",
        "--company",
        "Acme",
        "--email",
        "Ops@Acme.example",
        "--website",
        "https://acme.example",
    ]))
    .unwrap();
    // Created now, with its secret: the refused run created nothing.
    for k in ["companyId", "userId", "keyId", "keySecret", "formKeyId"] {
        assert!(
            first[k].as_str().is_some_and(|v| !v.is_empty()),
            "{k}: {first}"
        );
    }
    // Idempotent on the e-mail (case-insensitive): same ids, and the secret is not shown again.
    let again: Value = serde_json::from_str(&run(&[
        "admin",
        "bootstrap",
        "--company",
        "Acme",
        "--email",
        "ops@acme.example",
    ]))
    .unwrap();
    assert_eq!(again["companyId"], first["companyId"]);
    assert_eq!(again["keyId"], first["keyId"]);
    assert_eq!(again["keySecret"], Value::Null);
    // An operator adds a member, who can then sign in.
    let company = first["companyId"].as_str().unwrap();
    let out = Command::new(BIN)
        .args([
            "admin",
            "add-member",
            "--company-id",
            company,
            "--email",
            "Dev@Acme.example",
            "--role",
            "member",
        ])
        .env("PAY_DATABASE_URL", dir.db_url())
        .env("PAY_LOG", "warn")
        .env("PAY_MEMBER_PASSWORD", "member password 123")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let member: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(member["userId"].as_str().unwrap().len(), 36);
    let out = Command::new(BIN)
        .args([
            "admin",
            "add-member",
            "--company-id",
            company,
            "--email",
            "dev@acme.example",
            "--role",
            "chief",
        ])
        .env("PAY_DATABASE_URL", dir.db_url())
        .env("PAY_MEMBER_PASSWORD", "member password 123")
        .output()
        .unwrap();
    assert!(!out.status.success(), "unknown role refused");
    // A bad e-mail fails with a message and a non-zero exit.
    let out = Command::new(BIN)
        .args([
            "admin",
            "bootstrap",
            "--company",
            "X",
            "--email",
            "nope",
            "--password",
            "long enough pw",
        ])
        .env("PAY_DATABASE_URL", dir.db_url())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("email"));
    // A bootstrapped database does not print a demo banner.
    let s = serve(&dir, "info", &[]);
    let (st, body, _) = call(
        "POST",
        &format!("{}/auth/login", s.base),
        &[],
        Some(json!({"email": "dev@acme.example", "password": "member password 123"})),
    );
    assert_eq!(st, 200, "{body}");
    let (out, _) = s.stop();
    assert!(!out.contains("keySecret"));
}

#[test]
fn no_secret_password_or_session_cookie_reaches_the_log() {
    let dir = TempDir::new();
    let password = "a very secret password 42";
    let boot = Command::new(BIN)
        .args([
            "admin",
            "bootstrap",
            "--company",
            "Logco",
            "--email",
            "log@co.example",
            "--password",
            password,
        ])
        .env("PAY_DATABASE_URL", dir.db_url())
        .env("PAY_LOG", "trace")
        .output()
        .unwrap();
    assert!(boot.status.success());
    let creds: Value = serde_json::from_slice(&boot.stdout).unwrap();
    let boot_log = String::from_utf8_lossy(&boot.stderr).to_string();
    let key_id = creds["keyId"].as_str().unwrap().to_owned();
    let secret = creds["keySecret"].as_str().unwrap().to_owned();
    let company = creds["companyId"].as_str().unwrap().to_owned();

    let s = serve(&dir, "trace", &[]);
    let auth = [
        ("x-svc-key-id", key_id.as_str()),
        ("x-svc-key-secret", secret.as_str()),
    ];
    // Sign in (a wrong password first), manage keys, use keys right and wrong.
    call(
        "POST",
        &format!("{}/auth/login", s.base),
        &[],
        Some(json!({"email": "log@co.example", "password": "wrong password 1"})),
    );
    let (st, body, h) = call(
        "POST",
        &format!("{}/auth/login", s.base),
        &[],
        Some(json!({"email": "log@co.example", "password": password})),
    );
    assert_eq!(st, 200);
    let csrf = body["csrfToken"].as_str().unwrap().to_owned();
    let cookie = h["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let token = cookie.trim_start_matches("pay_session=").to_owned();
    let session = [("cookie", cookie.as_str()), ("x-csrf-token", csrf.as_str())];
    let (st, created, _) = call(
        "POST",
        &format!("{}/api/partner/v1/companies/{company}/integrations", s.base),
        &session,
        Some(json!({"name": "k2", "appSlug": "pay"})),
    );
    assert_eq!(st, 201);
    let secret2 = created["integration"]["keySecret"]
        .as_str()
        .unwrap()
        .to_owned();
    let (st, cb, _) = call(
        "PUT",
        &format!(
            "{}/api/partner/v1/companies/{company}/payment-callback",
            s.base
        ),
        &session,
        Some(json!({"url": "https://hooks.logco.example/pay"})),
    );
    assert_eq!(st, 200, "{cb}");
    let signing = cb["signingSecret"].as_str().unwrap().to_owned();
    call(
        "GET",
        &format!("{}/api/partner/v1/pay/payment-links", s.base),
        &auth,
        None,
    );
    call(
        "POST",
        &format!("{}/api/partner/v1/pay/payment-links", s.base),
        &auth,
        Some(json!({"amount": "1"})),
    );
    call(
        "GET",
        &format!("{}/api/partner/v1/pay/settings", s.base),
        &[
            ("x-svc-key-id", key_id.as_str()),
            ("x-svc-key-secret", "mksec_wrong_secret_value"),
        ],
        None,
    );
    call(
        "GET",
        &format!("{}/api/partner/v1/companies", s.base),
        &session,
        None,
    );
    call("POST", &format!("{}/auth/logout", s.base), &session, None);
    let (_, log) = s.stop();
    let log = format!("{boot_log}{log}");
    assert!(
        log.contains("request_id="),
        "log lines carry the request id:\n{log}"
    );
    assert!(log
        .lines()
        .filter(|l| l.contains("request finished"))
        .all(|l| l.contains("request_id=")));
    for (what, value) in [
        ("password", password),
        ("wrong password", "wrong password 1"),
        ("key secret", secret.as_str()),
        ("new key secret", secret2.as_str()),
        ("wrong secret", "mksec_wrong_secret_value"),
        ("session token", token.as_str()),
        ("csrf token", csrf.as_str()),
        ("webhook signing secret", signing.as_str()),
    ] {
        assert!(!log.contains(value), "the {what} reached the log");
    }
}

/// A company made by `admin bootstrap`, with its owner and API key.
struct Merchant {
    company: String,
    email: String,
    password: String,
    key_id: String,
    key_secret: String,
}

impl Merchant {
    fn bootstrap(dir: &TempDir, name: &str, email: &str, password: &str) -> Merchant {
        let boot = Command::new(BIN)
            .args(["admin", "bootstrap", "--company", name, "--email", email])
            .args(["--password", password])
            .env("PAY_DATABASE_URL", dir.db_url())
            .env("PAY_LOG", "warn")
            .output()
            .unwrap();
        assert!(
            boot.status.success(),
            "{}",
            String::from_utf8_lossy(&boot.stderr)
        );
        let creds: Value = serde_json::from_slice(&boot.stdout).unwrap();
        let text = |k: &str| creds[k].as_str().unwrap().to_owned();
        Merchant {
            company: text("companyId"),
            email: email.to_owned(),
            password: password.to_owned(),
            key_id: text("keyId"),
            key_secret: text("keySecret"),
        }
    }

    /// The API-key headers.
    fn key(&self) -> Vec<(&str, &str)> {
        vec![
            ("x-svc-key-id", self.key_id.as_str()),
            ("x-svc-key-secret", self.key_secret.as_str()),
        ]
    }

    /// Signs the owner in, points the company payment callback at `hook`, creates a link and
    /// queues a test event for it: the callback's signing secret and the delivery's id.
    fn queue_test_event(&self, base: &str, hook: &str) -> (String, String) {
        let cb = set_payment_callback(base, &self.email, &self.password, &self.company, hook);
        let (_, link, _) = call(
            "POST",
            &format!("{base}/api/partner/v1/pay/payment-links"),
            &self.key(),
            Some(json!({"amount": "5"})),
        );
        let (st, queued, _) = call(
            "POST",
            &format!("{base}/api/partner/v1/pay/webhook-requests/test"),
            &self.key(),
            Some(json!({"paymentLinkUid": link["uid"]})),
        );
        assert_eq!(st, 202, "{queued}");
        (
            cb["signingSecret"].as_str().unwrap().to_owned(),
            queued["data"][0]["id"].as_str().unwrap().to_owned(),
        )
    }
}

#[test]
fn a_queued_delivery_survives_a_restart() {
    let dir = TempDir::new();
    let m = Merchant::bootstrap(&dir, "Restart", "r@r.example", "restart password 1");
    let key = m.key();
    let (hook, arrived) = receiver();

    // First run: the dispatcher is off, so the event stays queued.
    let s = serve(
        &dir,
        "info",
        &[
            ("PAY_DISPATCHER", "false"),
            ("PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
        ],
    );
    let (secret, id) = m.queue_test_event(&s.base, &hook);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        arrived.try_recv().is_err(),
        "nothing sent while the dispatcher is off"
    );
    s.stop();

    // The embedded default generated its encryption key beside the database, private.
    let key_file = dir.0.join("pay.key");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&key_file).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);

    // Second run, dispatcher on: the queued delivery arrives, signed.
    let s = serve(
        &dir,
        "info",
        &[("PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")],
    );
    let (head, body) = arrived
        .recv_timeout(Duration::from_secs(20))
        .expect("the delivery arrives after the restart");
    let head = head.to_ascii_lowercase();
    assert!(head.contains(&format!("x-pay-delivery-id: {id}")), "{head}");
    let sig = head
        .lines()
        .find_map(|l| l.strip_prefix("x-pay-signature: "))
        .unwrap()
        .trim()
        .to_owned();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    pay_webhooks::verify(&secret, &sig, body.as_bytes(), now, 300)
        .expect("signed with the callback's secret");
    let (_, log, _) = call(
        "GET",
        &format!("{}/api/partner/v1/pay/webhook-requests", s.base),
        &key,
        None,
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut status = log["data"][0]["status"].as_str().unwrap_or("").to_owned();
    while status != "succeeded" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        let (_, log, _) = call(
            "GET",
            &format!("{}/api/partner/v1/pay/webhook-requests", s.base),
            &key,
            None,
        );
        status = log["data"][0]["status"].as_str().unwrap_or("").to_owned();
    }
    assert_eq!(status, "succeeded");
    s.stop();
}

/// The per-company test clock lives in the database: a separate `pay-server worker` process
/// sends a retry as soon as the company's clock (moved through `serve`) makes it due, and a
/// restart of `serve` keeps the clock.
#[test]
fn a_company_clock_survives_a_restart_and_a_separate_worker_follows_it() {
    let dir = TempDir::new();
    let m = Merchant::bootstrap(&dir, "Clock", "c@c.example", "clock password 12");
    let key = m.key();
    let env = [
        ("PAY_DISPATCHER", "false"),
        ("PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
    ];
    let s = serve(&dir, "info", &env);
    let (hook, arrived) = receiver_failing_first(1);
    m.queue_test_event(&s.base, &hook);

    // The worker, a process of its own, makes the first attempt: 503, a retry in 5 minutes.
    let mut worker = Command::new(BIN)
        .arg("worker")
        .envs(env.iter().copied())
        .env("PAY_DATABASE_URL", dir.db_url())
        .env("PAY_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    arrived
        .recv_timeout(Duration::from_secs(20))
        .expect("the first attempt");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        arrived.try_recv().is_err(),
        "the retry waits for its five minutes"
    );

    // The company's clock moves five minutes through `serve`; the worker sees it.
    let (st, moved, _) = call(
        "POST",
        &format!("{}/api/partner/v1/pay/sandbox/clock", s.base),
        &key,
        Some(json!({"advanceSeconds": 301})),
    );
    assert_eq!(st, 200, "{moved}");
    let (head, _) = arrived
        .recv_timeout(Duration::from_secs(20))
        .expect("the retry falls due on the company's clock");
    assert!(
        head.to_ascii_lowercase().contains("x-pay-attempt: 2"),
        "{head}"
    );
    let _ = worker.kill();
    let _ = worker.wait();

    // A restart keeps the clock.
    s.stop();
    let s = serve(&dir, "info", &env);
    let (st, now, _) = call(
        "GET",
        &format!("{}/api/partner/v1/pay/sandbox/clock", s.base),
        &key,
        None,
    );
    assert_eq!(st, 200, "{now}");
    let at = |v: &Value| {
        time::OffsetDateTime::parse(
            v["now"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap()
        .unix_timestamp()
    };
    let real = time::OffsetDateTime::now_utc().unix_timestamp();
    assert!(at(&now) - real >= 300, "{now} vs real {real}");
    assert!(at(&now) >= at(&moved), "{now} vs {moved}");
    s.stop();
}

/// `admin create-native-platform`: the template it printed, with the official native scopes;
/// a template never changes (the same platform again is refused and the first kept), and a
/// wrong field is refused naming it.
#[test]
fn admin_create_native_platform_writes_an_immutable_template() {
    let dir = TempDir::new();
    let command = |args: &[&str]| {
        let out = Command::new(BIN)
            .arg("admin")
            .arg("create-native-platform")
            .args(args)
            .env("PAY_DATABASE_URL", dir.db_url())
            .env("PAY_LOG", "warn")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, out, err) = command(&[
        "--platform",
        "woocommerce",
        "--name",
        " WooCommerce ",
        "--icon-url",
        "https://cdn.example/woo.png",
        "--support-url",
        "https://support.example/woo",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let printed: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        printed,
        json!({
            "platform": "woocommerce",
            "name": "WooCommerce",
            "iconUrl": "https://cdn.example/woo.png",
            "supportUrl": "https://support.example/woo",
            "scopes": "company:read pay:payment-links:read pay:payment-links:write pay:webhooks:read pay:webhooks:write",
        })
    );
    let (code, out, err) = command(&["--platform", "woocommerce", "--name", "Other"]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(err.contains("exists already"), "{err}");
    for (args, field) in [
        (
            &["--platform", "Woo Commerce", "--name", "W"][..],
            "platform",
        ),
        (&["--platform", "shopware", "--name", " "][..], "name"),
        (
            &[
                "--platform",
                "shopware",
                "--name",
                "S",
                "--icon-url",
                "http://cdn.example/i.png",
            ][..],
            "iconUrl",
        ),
        (
            &[
                "--platform",
                "shopware",
                "--name",
                "S",
                "--support-url",
                "support.example",
            ][..],
            "supportUrl",
        ),
    ] {
        let (code, out, err) = command(args);
        assert_eq!((code, out.as_str()), (Some(1), ""), "{args:?}");
        assert!(err.contains(field), "{args:?}: {err}");
    }
}

/// `admin create-partner`: prints the partner's id and its onboarding secret (shown this once),
/// which the database holds only as a digest; a blank name is refused.
#[test]
fn admin_create_partner_prints_the_secret_once() {
    let dir = TempDir::new();
    let command = |name: &str| {
        let out = Command::new(BIN)
            .args(["admin", "create-partner", "--name", name])
            .env("PAY_DATABASE_URL", dir.db_url())
            .env("PAY_LOG", "warn")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, out, err) = command("Northwind Agency");
    assert_eq!(code, Some(0), "{err}");
    let printed: Value = serde_json::from_str(out.trim()).unwrap();
    let mut keys: Vec<&String> = printed.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["onboardingSecret", "partnerId"]);
    assert!(uuid::Uuid::parse_str(printed["partnerId"].as_str().unwrap()).is_ok());
    let secret = printed["onboardingSecret"].as_str().unwrap();
    assert!(secret.starts_with("obs_") && secret.len() == 47, "{secret}");
    let db = dir.db_url().trim_start_matches("sqlite://").to_owned();
    for file in [db.clone(), format!("{db}-wal")] {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the secret itself is not stored ({file})"
        );
    }
    let (code, again, _) = command("Northwind Agency");
    assert_eq!(code, Some(0));
    assert_ne!(again, out, "another partner, another secret");
    let (code, out, err) = command(" ");
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(err.contains("name"), "{err}");
}

/// `admin security-reset`: against a running server, the owner's sign-in stops working at once
/// and the API key within the read cache's second; it prints what it ended (a rerun ends nothing more); an unknown company and
/// a malformed id are refused.
#[test]
fn admin_security_reset_ends_the_sign_ins_and_keys() {
    let dir = TempDir::new();
    let m = Merchant::bootstrap(&dir, "Reset", "o@reset.example", "reset password 12");
    let s = serve(&dir, "warn", &[]);
    let (status, body, h) = call(
        "POST",
        &format!("{}/auth/login", s.base),
        &[],
        Some(json!({"email": m.email, "password": m.password})),
    );
    assert_eq!(status, 200, "{body}");
    let cookie = h["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let company = format!("{}/api/partner/v1/pay/company", s.base);
    let signed_in = [("cookie", cookie.as_str())];
    assert_eq!(call("GET", &company, &m.key(), None).0, 200);
    assert_eq!(call("GET", &company, &signed_in, None).0, 200);

    let command = |id: &str| {
        let out = Command::new(BIN)
            .args(["admin", "security-reset", "--company", id])
            .env("PAY_DATABASE_URL", dir.db_url())
            .env("PAY_LOG", "warn")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, out, err) = command(&m.company);
    assert_eq!(code, Some(0), "{err}");
    let printed: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        printed,
        json!({"companyId": m.company, "grantsRevoked": 0, "signInsEnded": 1, "apiKeysDisabled": 1})
    );
    // The sign-in at once; the key once the server's read cache of it lapses
    // (`PAY_READ_CACHE_MS`, 1 s), as for a key disabled through another instance.
    assert_eq!(call("GET", &company, &signed_in, None).0, 401);
    assert!(wait_until(Duration::from_secs(5), || call(
        "GET",
        &company,
        &m.key(),
        None
    )
    .0 == 401));

    let (code, out, _) = command(&m.company);
    assert_eq!(code, Some(0));
    let printed: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (&printed["signInsEnded"], &printed["apiKeysDisabled"]),
        (&json!(0), &json!(0))
    );
    let (code, out, err) = command(&uuid::Uuid::now_v7().to_string());
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(err.contains("no company"), "{err}");
    let (code, out, err) = command("acme");
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(err.contains("UUID"), "{err}");
    s.stop();
}
