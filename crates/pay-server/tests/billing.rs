//! Billing in the binary as an operator runs it: `serve` and `worker` each issue a cycle whose
//! lead time (`PAY_BILLING_LEAD_SECS`) has come, with nobody else running the scheduler's step
//! (this test process only writes the subscription into the same database and reads it back);
//! `admin verify-domain` puts a company's hosted URLs on its own domain; two server processes
//! on one PostgreSQL database bill 1,000 subscriptions with no cycle issued twice and every
//! status webhook sent exactly once.

use std::process::{Command, Stdio};
use std::time::Duration;

use pay_domain::app::Pay;
use pay_domain::customers::UpsertContactInput;
use pay_domain::kernel::ids::SubscriptionUid;
use pay_domain::kernel::secret::Secret;
use pay_domain::subscriptions::{CreateSubscriptionInput, CycleStatus, SubscriptionView};
use pay_domain::tenancy::Principal;
use pay_server::{build_pay, open_store, Config};

#[path = "support/process.rs"]
mod process;

use process::*;

/// 8 days: a weekly subscription's cycle 1 (due in 7 days) is within the lead at once.
const LEAD_SECS: &str = "691200";

/// The domain over the test's database, as an operator's script would open it.
fn open(dir: &TempDir) -> (Pay, Config) {
    let mut config = Config::for_database(&dir.db_url());
    // Another process (the binary) writes the company: read it afresh every time.
    config.read_cache = Duration::ZERO;
    let pay = build_pay(&config, open_store(&config).unwrap()).unwrap();
    (pay, config)
}

fn merchant(pay: &Pay) -> Principal {
    let b = pay
        .tenancy()
        .bootstrap(
            "Billing",
            "b@billing.example",
            &Secret::new("billing password 1"),
        )
        .unwrap();
    pay.tenancy()
        .authenticate_api_key(
            Some(b.key_id.as_str()),
            b.key_secret.as_ref().map(Secret::expose),
        )
        .unwrap()
}

fn weekly(pay: &Pay, key: &Principal, email: &str) -> SubscriptionView {
    let v = pay
        .subscriptions()
        .create_subscription(
            key,
            CreateSubscriptionInput {
                customer_email: email.into(),
                label: "Seat".into(),
                amount_usd: "5".into(),
                cadence: "weekly".into(),
                timezone: "UTC".into(),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(v.cycles.len(), 1, "cycle 0 only, issued by the create");
    v
}

/// Waits until the process issued cycle 1 of `v` (open, with its invoice link).
fn wait_for_cycle_one(pay: &Pay, key: &Principal, v: &SubscriptionView, log: impl Fn() -> String) {
    let uid = v.subscription.uid.clone();
    let mut last = None;
    let issued = wait_until(Duration::from_secs(20), || {
        let now = pay.subscriptions().get_subscription(key, &uid).unwrap();
        // Created (scheduled), then opened with its link: wait for the second write.
        let done = now.cycles.len() == 2 && now.cycles[1].status == CycleStatus::Open;
        last = Some(now);
        done
    });
    let got = last.unwrap();
    assert!(issued, "cycle 1 not issued: {got:?}\nlog:\n{}", log());
    let c1 = &got.cycles[1];
    assert_eq!((c1.sequence, c1.status), (1, CycleStatus::Open));
    assert!(c1.payment_link_uid.is_some(), "{c1:?}");
    assert_eq!(
        c1.due_at.unix_millis() - got.cycles[0].due_at.unix_millis(),
        7 * 24 * 3600 * 1000,
        "a week after cycle 0"
    );
    assert_eq!(got.cycles[0].status, CycleStatus::Open, "cycle 0 untouched");
}

#[test]
fn serve_and_worker_issue_a_due_cycle_and_stop_gracefully() {
    let dir = TempDir::new();
    let (pay, config) = open(&dir);
    let key = merchant(&pay);
    let sealing_key = config.encryption_key.clone().unwrap();
    let env = [
        ("PAY_DATABASE_URL", dir.db_url()),
        ("PAY_ENCRYPTION_KEY", sealing_key),
        ("PAY_BILLING_LEAD_SECS", LEAD_SECS.into()),
        ("PAY_LOG", "info".into()),
        ("PAY_DEMO", "false".into()),
    ];

    // `serve` issues it.
    let first = weekly(&pay, &key, "one@shop.example");
    let mut command = Command::new(BIN);
    command.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    let s = Server::spawn(command);
    wait_for_cycle_one(&pay, &key, &first, || s.log());
    assert!(s.wait_log("billing round"), "{}", s.log());
    let (_, log) = s.stop();
    assert!(log.contains("billing scheduler running"), "{log}");

    // With `serve` gone, a `worker` issues the next one.
    let second = weekly(&pay, &key, "two@shop.example");
    let worker = Command::new(BIN)
        .arg("worker")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut worker = worker;
    let log = collect(worker.stderr.take().unwrap());
    wait_for_cycle_one(&pay, &key, &second, || log.lock().unwrap().clone());
    // SIGINT: the worker stops by itself, successfully.
    let _ = Command::new("kill")
        .arg("-INT")
        .arg(worker.id().to_string())
        .status();
    let stopped = wait_until(Duration::from_secs(10), || {
        worker.try_wait().unwrap().is_some()
    });
    let status = if stopped {
        worker.wait().unwrap()
    } else {
        let _ = worker.kill();
        panic!("the worker did not stop on SIGINT")
    };
    assert!(status.success(), "{status:?}");

    // The first subscription was not issued twice by either process.
    let uid = first.subscription.uid.clone();
    let again = pay.subscriptions().get_subscription(&key, &uid).unwrap();
    assert_eq!(again.cycles.len(), 2, "{again:?}");
}

/// `admin verify-domain` as an operator script runs it: its output, its refusals (exit status
/// 1 with the reason), and its effect on the company's portal URL and cycle `paymentUrl`.
#[test]
fn admin_verify_domain_moves_the_company_urls_to_its_domain() {
    let dir = TempDir::new();
    let (pay, config) = open(&dir);
    let key = merchant(&pay);
    let company = key.company_id.to_string();
    let admin = |args: &[&str]| {
        let out = Command::new(BIN)
            .arg("admin")
            .arg("verify-domain")
            .args(args)
            .env("PAY_DATABASE_URL", dir.db_url())
            .env("PAY_ENCRYPTION_KEY", config.encryption_key.clone().unwrap())
            .env("PAY_LOG", "warn")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, out, err) = admin(&["--company", &company, "--domain", " Pay.Shop.example "]);
    assert_eq!(code, Some(0), "{err}");
    let printed: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        printed,
        serde_json::json!({"companyId": company, "paymentLinkDomain": "pay.shop.example"})
    );

    let bob = pay
        .customers()
        .upsert_customer(
            &key,
            UpsertContactInput {
                email: "bob@shop.example".into(),
                name: None,
                client_id: None,
                metadata: None,
            },
        )
        .unwrap()
        .into_contact();
    let portal = pay.customers().portal_link(&key, &bob.uid).unwrap();
    assert!(
        portal
            .url
            .starts_with("https://pay.shop.example/portal?company="),
        "{}",
        portal.url
    );
    let v = weekly(&pay, &key, "bob@shop.example");
    let uid = v.cycles[0].payment_link_uid.clone().unwrap();
    assert_eq!(
        pay.subscriptions().payment_url(&v.cycles[0]),
        Some(format!("https://pay.shop.example/pay/{uid}"))
    );

    // Refusals: a bad domain, an unknown company, a domain another company has, no domain.
    for (args, says) in [
        (
            vec![
                "--company",
                company.as_str(),
                "--domain",
                "https://x.example",
            ],
            "domain",
        ),
        (
            vec![
                "--company",
                "0190f5d2-7c3e-7a4b-9d1e-2f3a4b5c6d7e",
                "--domain",
                "x.example",
            ],
            "not found",
        ),
        (vec!["--company", "acme", "--domain", "x.example"], "UUID"),
        (vec!["--company", company.as_str()], "--domain"),
    ] {
        let (code, out, err) = admin(&args);
        assert_ne!(code, Some(0), "{args:?}: {out}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let other = pay
        .tenancy()
        .bootstrap(
            "Other",
            "o@other.example",
            &Secret::new("other password 12"),
        )
        .unwrap();
    let (code, _, err) = admin(&[
        "--company",
        &other.company_id.to_string(),
        "--domain",
        "pay.shop.example",
    ]);
    assert_ne!(code, Some(0));
    assert!(err.contains("another company"), "{err}");

    // Cleared: back on the public payment site.
    let (code, out, err) = admin(&["--company", &company, "--clear"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\"paymentLinkDomain\":null"), "{out}");
    let url = pay.subscriptions().payment_url(&v.cycles[0]).unwrap();
    assert_eq!(url, format!("{}/pay/{uid}", config.public_pay_url));
}

/// Acceptance: two `serve` processes (each with its billing scheduler and webhook dispatcher)
/// on one PostgreSQL database over 1,000 weekly subscriptions whose company clock moved 8 days
/// ahead: each subscription gets exactly its cycles 1 and 2 issued (one invoice link each,
/// no stray link), and exactly one `active -> overdue` webhook arrives per subscription.
#[test]
fn two_instances_on_postgres_bill_each_cycle_and_send_each_webhook_once() {
    use pay_domain::links::ports::{LinkFilter, PaymentLinkStore};
    use pay_domain::tenancy::ports::TenancyStore;
    use pay_domain::webhooks::CallbackKind;
    const N: usize = 1_000;
    let Some(db) = pay_store::testing::TestDb::postgres() else {
        return;
    };
    let mut config = Config::for_database(&db.url);
    config.read_cache = Duration::ZERO;
    let store = open_store(&config).unwrap();
    let pay = build_pay(&config, store.clone()).unwrap();
    let key = merchant(&pay);
    let signed_in = {
        let out = pay
            .tenancy()
            .login(
                "b@billing.example",
                &Secret::new("billing password 1"),
                "127.0.0.1",
            )
            .unwrap();
        pay.tenancy()
            .authenticate_sign_in(out.session_token.expose())
            .unwrap()
    };
    let (hook, arrived) = receiver();
    pay.webhooks()
        .put_company_callback(
            &signed_in,
            key.company_id,
            CallbackKind::CompanyPayment,
            &hook,
        )
        .unwrap();
    let mut uids = std::collections::HashSet::new();
    for i in 0..N {
        let v = weekly(&pay, &key, &format!("c{i}@shop.example"));
        uids.insert(v.subscription.uid.to_string());
    }
    // The company's clock moves 8 days (the store alone: no billing runs in this process):
    // cycle 0 is a day overdue, cycle 1 (due in 7 days) and cycle 2 (in 14) are within the
    // week's lead, cycle 3 is not.
    store
        .advance_test_clock(key.company_id, 8 * 24 * 3_600_000 + 60_000, i64::MAX, None)
        .unwrap()
        .unwrap();

    let env = [
        ("PAY_DATABASE_URL", db.url.clone()),
        ("PAY_ENCRYPTION_KEY", config.encryption_key.clone().unwrap()),
        ("PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true".into()),
        ("PAY_LOG", "info".into()),
        ("PAY_DEMO", "false".into()),
    ];
    let servers: Vec<Server> = (0..2)
        .map(|_| {
            let mut command = Command::new(BIN);
            command.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
            Server::spawn(command)
        })
        .collect();

    let mut got: Vec<String> = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(240);
    while got.len() < N && std::time::Instant::now() < deadline {
        if let Ok((_, body)) = arrived.recv_timeout(Duration::from_secs(1)) {
            let b: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(b["type"], "pay.subscription.status_changed", "{b}");
            assert_eq!(b["data"]["reason"], "cycle_one_day_overdue");
            assert_eq!(b["data"]["previousStatus"], "active");
            got.push(b["subscription"]["uid"].as_str().unwrap().to_owned());
        }
    }
    // Anything late would be a duplicate: give the dispatchers a moment more.
    std::thread::sleep(Duration::from_secs(3));
    while let Ok((_, body)) = arrived.try_recv() {
        let b: serde_json::Value = serde_json::from_str(&body).unwrap();
        got.push(b["subscription"]["uid"].as_str().unwrap().to_owned());
    }
    let logs: Vec<String> = servers.into_iter().map(|s| s.stop().1).collect();
    // Which instance did the work (the claim decides; printed for the record).
    for (i, log) in logs.iter().enumerate() {
        eprintln!(
            "instance {i}: {} billing rounds with work",
            log.matches("billing round").count()
        );
    }
    let distinct: std::collections::HashSet<String> = got.iter().cloned().collect();
    assert_eq!(
        distinct, uids,
        "one webhook for every subscription; logs: {logs:?}"
    );
    assert_eq!(got.len(), N, "no webhook duplicated");

    let mut cycle_links = std::collections::HashSet::new();
    for uid in &uids {
        let uid = SubscriptionUid::parse(uid).unwrap();
        let v = pay.subscriptions().get_subscription(&key, &uid).unwrap();
        assert_eq!(v.subscription.status.as_str(), "overdue");
        let seqs: Vec<u32> = v.cycles.iter().map(|c| c.sequence).collect();
        assert_eq!(seqs, [0, 1, 2], "{uid}: {v:?}");
        for c in &v.cycles {
            assert!(c.status.is_unpaid(), "{c:?}");
            assert!(cycle_links.insert(c.payment_link_uid.clone().unwrap()));
        }
    }
    // Every payment link of the company is one cycle's invoice: none issued and dropped.
    let links = store
        .links(key.company_id, LinkFilter::default(), 10 * N)
        .unwrap();
    assert_eq!(links.len(), 3 * N);
    assert!(links.iter().all(|l| cycle_links.contains(&l.uid)));
}
