//! The EVM settlement wallet routes: the key and what the merchant checks (fingerprint, first
//! addresses equal to an independent derivation), private keys refused and kept nowhere,
//! credentials, scopes and companies.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::oauth_support::access_token;
use crate::on_both_backends;

const WALLET: &str = "/api/partner/v1/pay/settlement-wallets/evm";

/// The account key `m/44'/60'/0'` of the development mnemonic `test test ... junk`.
const DEV_XPUB: &str = "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP";
/// Its children 0/0, 0/1, 0/2: the first funded accounts anvil and hardhat publish for that
/// mnemonic (not computed by this project).
const DEV_ADDRESSES: [&str; 3] = [
    "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
];
/// BIP32 test vector 1: the master key, public and private.
const VECTOR1_XPUB: &str = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8";
const VECTOR1_XPRV: &str = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi";

async fn send(app: &TestApp, m: Method, body: Option<Value>) -> (reqwest::StatusCode, Value) {
    let mut r = app.req(m, WALLET);
    if let Some(b) = body {
        r = r.json(&b);
    }
    read(r.send().await.unwrap()).await
}

async fn put_get_delete(app: TestApp) {
    assert_error(&send(&app, Method::GET, None).await, 404, "not_found", None);
    let got = send(&app, Method::PUT, Some(json!({"xpub": DEV_XPUB}))).await;
    assert_eq!(got.0, 200, "{}", got.1);
    let w = &got.1;
    assert_eq!(w["family"], "evm");
    assert_eq!(w["xpub"], DEV_XPUB);
    assert_eq!(w["derivation"], "0/*");
    assert_eq!(w["firstAddresses"], json!(DEV_ADDRESSES));
    assert_eq!(w["nextIndex"], 0);
    assert_eq!(w["fingerprint"].as_str().unwrap().len(), 8);
    assert_eq!(w["createdAt"], w["updatedAt"]);
    let keys: Vec<_> = w.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "family",
            "xpub",
            "fingerprint",
            "derivation",
            "firstAddresses",
            "nextIndex",
            "createdAt",
            "updatedAt"
        ]
    );
    assert_eq!(
        send(&app, Method::GET, None).await,
        got,
        "GET shows the same"
    );

    // BIP32 test vector 1's master key has the fingerprint the vector gives.
    let got = send(&app, Method::PUT, Some(json!({"xpub": VECTOR1_XPUB}))).await;
    assert_eq!(got.0, 200, "{}", got.1);
    assert_eq!(got.1["fingerprint"], "3442193e");
    assert_eq!(got.1["xpub"], VECTOR1_XPUB);

    let gone = app.req(Method::DELETE, WALLET).send().await.unwrap();
    assert_eq!(gone.status(), 204);
    assert_error(&send(&app, Method::GET, None).await, 404, "not_found", None);
    assert_error(
        &send(&app, Method::DELETE, None).await,
        404,
        "not_found",
        None,
    );
}

/// The text of the whole database, as a dump tool writes it.
fn database_dump(app: &TestApp) -> String {
    let url = &app.config.database_url;
    let out = match url.strip_prefix("sqlite://") {
        Some(path) => std::process::Command::new("sqlite3")
            .args([path, ".dump"])
            .output(),
        None => std::process::Command::new("pg_dump").arg(url).output(),
    }
    .expect("the dump tool runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn private_keys_are_refused_and_kept_nowhere(app: TestApp) {
    let tprv = format!("tprv{}", &VECTOR1_XPRV[4..]);
    for key in [VECTOR1_XPRV, tprv.as_str(), &format!(" {VECTOR1_XPRV} ")] {
        let got = send(&app, Method::PUT, Some(json!({"xpub": key}))).await;
        assert_error(&got, 400, "private_key_refused", Some("xpub"));
        assert!(
            !got.1.to_string().contains(&VECTOR1_XPRV[4..30]),
            "not echoed"
        );
    }
    assert_error(&send(&app, Method::GET, None).await, 404, "not_found", None);
    for bad in [
        json!("xpub123"),
        json!(""),
        json!("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"),
    ] {
        let got = send(&app, Method::PUT, Some(json!({"xpub": bad}))).await;
        assert_error(&got, 400, "validation_failed", Some("xpub"));
    }
    let got = send(&app, Method::PUT, Some(json!({"xpub": 5}))).await;
    assert_eq!(got.0, 400, "{}", got.1);
    let got = send(
        &app,
        Method::PUT,
        Some(json!({"xpub": DEV_XPUB, "xprv": "x"})),
    )
    .await;
    assert_error(&got, 400, "unknown_field", Some("xprv"));
    // A valid key after the refusals: stored; the private key is nowhere in the database.
    assert_eq!(
        send(&app, Method::PUT, Some(json!({"xpub": DEV_XPUB})))
            .await
            .0,
        200
    );
    let dump = database_dump(&app);
    assert!(dump.contains(DEV_XPUB), "the dump holds the public key");
    assert!(
        !dump.contains(&VECTOR1_XPRV[4..40]),
        "no private key in the database"
    );
}

async fn credentials_scopes_and_companies(app: TestApp) {
    let routes = [
        (Method::PUT, Some(json!({"xpub": DEV_XPUB}))),
        (Method::GET, None),
        (Method::DELETE, None),
    ];
    for (m, b) in &routes {
        let mut r = app.anon(m.clone(), WALLET);
        if let Some(b) = b {
            r = r.json(b);
        }
        assert_eq!(read(r.send().await.unwrap()).await.0, 401, "{m}: none");
        let mut r = app
            .anon(m.clone(), WALLET)
            .header("x-svc-key-id", &app.t.key_id)
            .header("x-svc-key-secret", "mksec_wrong");
        if let Some(b) = b {
            r = r.json(b);
        }
        let got = read(r.send().await.unwrap()).await;
        assert_eq!(
            (got.0.as_u16(), got.1["error"].as_str()),
            (401, Some("Invalid pay API credentials")),
            "{m}: wrong secret"
        );
    }
    // Another company has its own wallet: it never sees or removes this one.
    assert_eq!(
        send(&app, Method::PUT, Some(json!({"xpub": DEV_XPUB})))
            .await
            .0,
        200
    );
    let other = app.new_tenant("Other Shop").await;
    let got = read(
        app.as_tenant(&other, Method::GET, WALLET)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    let got = app
        .as_tenant(&other, Method::DELETE, WALLET)
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 404);
    assert_eq!(send(&app, Method::GET, None).await.0, 200, "still there");

    // A member without settings.manage reads and cannot write; the owner writes.
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    let got = read(
        app.in_session(&member, Method::GET, WALLET)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    let got = read(
        app.in_session(&member, Method::PUT, WALLET)
            .json(&json!({"xpub": VECTOR1_XPUB}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    let got = read(
        app.in_session(&member, Method::DELETE, WALLET)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    let owner = app.login_owner(&app.t).await;
    let got = read(
        app.in_session(&owner, Method::PUT, WALLET)
            .json(&json!({"xpub": VECTOR1_XPUB}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);

    // OAuth: another scope reads nothing; settings:read reads and cannot write.
    let refused = |got: &(reqwest::StatusCode, Value)| {
        (got.0.as_u16(), got.1["error"].as_str().map(str::to_owned))
            == (401, Some("Invalid pay API credentials".to_owned()))
    };
    let links = access_token(&app, "pay:payment-links:read").await;
    for (m, b) in &routes {
        let mut r = app.anon(m.clone(), WALLET).bearer_auth(&links);
        if let Some(b) = b {
            r = r.json(b);
        }
        let got = read(r.send().await.unwrap()).await;
        assert!(refused(&got), "{m}: {}", got.1);
    }
    let reader = access_token(&app, "pay:settings:read").await;
    let got = read(
        app.anon(Method::GET, WALLET)
            .bearer_auth(&reader)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    let got = read(
        app.anon(Method::PUT, WALLET)
            .bearer_auth(&reader)
            .json(&json!({"xpub": DEV_XPUB}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(refused(&got), "{}", got.1);
    let writer = access_token(&app, "pay:settings:write").await;
    let got = read(
        app.anon(Method::PUT, WALLET)
            .bearer_auth(&writer)
            .json(&json!({"xpub": DEV_XPUB}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    assert_eq!(got.1["firstAddresses"], json!(DEV_ADDRESSES));
}

on_both_backends!(
    put_get_delete,
    private_keys_are_refused_and_kept_nowhere,
    credentials_scopes_and_companies,
);
