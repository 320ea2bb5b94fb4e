//! What the chain tests share: the chains file of a local anvil, the binary with the onchain
//! processor, and a shop (a company with its server) that starts sessions and reads them as the
//! payer's page does. Each chain test binary includes it after `support/process.rs`.
// Each test binary includes this file and uses part of it.
#![allow(dead_code)]

use std::process::Command;

use pay_chain::testing::{Anvil, ANVIL_CHAIN_ID};
use pay_store::testing::TestDb;
use serde_json::{json, Value};

use super::process::*;

pub const ENCRYPTION_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// The chains file of one local chain: its native coin at a fixed price and, when given, a
/// token at par and the price feed for the coin instead.
pub fn chains_file(rpc_url: &str, chain_id: u64, token: Option<&str>, feed: Option<&str>) -> Value {
    let eth_price = match feed {
        Some(f) => json!({"priceFeed": f, "maxPriceAgeSecs": 600}),
        None => json!({"usdPrice": "2500"}),
    };
    let mut eth = json!({"assetIdentifier": format!("eip155:{chain_id}/slip44:60"),
                         "symbol": "ETH", "name": "Ether", "decimals": 18});
    eth.as_object_mut()
        .unwrap()
        .extend(eth_price.as_object().unwrap().clone());
    let mut assets = vec![eth];
    if let Some(t) = token {
        assets.push(
            json!({"assetIdentifier": format!("eip155:{chain_id}/erc20:{t}"),
                           "symbol": "TUSD", "name": "Test USD", "decimals": 6, "usdPrice": "1"}),
        );
    }
    json!([{"chainCode": "local", "kind": "evm", "chainId": chain_id, "chainName": "Local anvil",
            "rpcUrl": rpc_url, "confirmations": 2, "pollIntervalMs": 100, "assets": assets}])
}

/// The binary with the onchain processor over `db_url` and the chains file in `dir`.
pub fn command(dir: &TempDir, db_url: &str, chains: &Value) -> Command {
    let path = dir.0.join("chains.json");
    std::fs::write(&path, chains.to_string()).unwrap();
    let mut c = Command::new(BIN);
    c.env_remove("PAY_BASE_URL")
        .env_remove("PAY_PUBLIC_PAY_URL")
        .env_remove("PAY_ASSETS_FILE")
        .env("PAY_DATABASE_URL", db_url)
        .env("PAY_ENCRYPTION_KEY", ENCRYPTION_KEY)
        .env("PAY_DEMO", "false")
        .env("PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")
        .env("PAY_PROCESSOR", "onchain")
        .env("PAY_CHAINS_FILE", &path)
        .env("PAY_LOG", "warn")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE");
    c
}

/// Bootstraps a company; its API key headers.
pub fn bootstrap(c: Command) -> [(String, String); 2] {
    bootstrap_company(c).0
}

/// Bootstraps a company; its API key headers and its id.
pub fn bootstrap_company(mut c: Command) -> ([(String, String); 2], String) {
    let out = c
        .args([
            "admin",
            "bootstrap",
            "--company",
            "Chain Shop",
            "--email",
            "ops@chain.example",
            "--password",
            "a long enough password",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        [
            ("x-svc-key-id".into(), v["keyId"].as_str().unwrap().into()),
            (
                "x-svc-key-secret".into(),
                v["keySecret"].as_str().unwrap().into(),
            ),
        ],
        v["companyId"].as_str().unwrap().into(),
    )
}

pub fn headers(key: &[(String, String); 2]) -> Vec<(&str, &str)> {
    key.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// A company on an onchain server over `db_url`: its key headers, the server, the chain's
/// contracts (`token`, `feed`).
pub struct Shop {
    pub server: Server,
    pub key: [(String, String); 2],
    pub company: String,
    pub token: String,
    pub feed: String,
}

impl Shop {
    pub fn open(anvil: &Anvil, dir: &TempDir, db_url: &str) -> Shop {
        let deployed = anvil.tool("deploy", json!({}));
        let token = deployed["token"].as_str().unwrap().to_owned();
        let feed = deployed["feed"].as_str().unwrap().to_owned();
        let chains = chains_file(&anvil.url, ANVIL_CHAIN_ID, Some(&token), Some(&feed));
        let (key, company) = bootstrap_company(command(dir, db_url, &chains));
        let server = Server::spawn(command(dir, db_url, &chains));
        Shop {
            server,
            key,
            company,
            token,
            feed,
        }
    }

    pub fn api(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let (status, v, _) = call(
            method,
            &format!("{}/api/partner/v1/pay{path}", self.server.base),
            &headers(&self.key),
            body,
        );
        (status, v)
    }

    pub fn public(&self, path: &str, body: Option<Value>) -> (u16, Value) {
        let (status, v, _) = call(
            "POST",
            &format!("{}/api/public/checkout{path}", self.server.base),
            &[],
            body,
        );
        (status, v)
    }

    pub fn token_id(&self) -> String {
        format!("eip155:31337/erc20:{}", self.token.to_ascii_lowercase())
    }

    /// A link of `amount` (in `fiat`, else in `asset`) settling in `asset`; its uid.
    pub fn link(&self, amount: &str, asset: &str, fiat: Option<&str>) -> String {
        let mut body = json!({"amount": amount, "asset": asset, "title": "Order",
                              "skipQuoteAcceptance": true});
        if let Some(f) = fiat {
            body["fiatCurrency"] = json!(f);
        }
        let (status, link) = self.api("POST", "/payment-links", Some(body));
        assert_eq!(status, 201, "{link}");
        link["uid"].as_str().unwrap().to_owned()
    }

    /// Starts a session of `link` paying in `asset` (review skipped: its channel is open).
    pub fn start(&self, link: &str, asset: &str) -> (u16, Value) {
        self.public(
            &format!("/{link}/sessions"),
            Some(json!({"payAsset": asset})),
        )
    }
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The databases a chain case runs on: SQLite, and PostgreSQL when configured.
pub fn databases() -> Vec<TestDb> {
    let mut dbs = vec![TestDb::sqlite()];
    dbs.extend(TestDb::postgres());
    dbs
}

impl Shop {
    /// Signs in as the owner and points the company's payment callback at `hook`.
    pub fn callback(&self, hook: &str) {
        set_payment_callback(
            &self.server.base,
            "ops@chain.example",
            "a long enough password",
            &self.company,
            hook,
        );
    }

    /// Sets the company's key to the account key `account` of the development mnemonic.
    pub fn wallet(&self, anvil: &Anvil, account: u32) {
        let xpub = anvil.tool("xpub", json!({"account": account}))["xpub"].clone();
        let (status, w) = self.api(
            "PUT",
            "/settlement-wallets/evm",
            Some(json!({"xpub": xpub})),
        );
        assert_eq!(status, 200, "{w}");
    }

    /// The session as the payer's page reads it.
    pub fn session(&self, link: &str, id: &str) -> Value {
        let (status, s, _) = call(
            "GET",
            &format!(
                "{}/api/public/checkout/{link}/sessions/{id}",
                self.server.base
            ),
            &[],
            None,
        );
        assert_eq!(status, 200, "{s}");
        s
    }

    /// Waits (10 s at most) until the session has `status`; the session.
    pub fn wait_status(&self, link: &str, id: &str, status: &str) -> Value {
        let mut last = Value::Null;
        let reached = wait_until(std::time::Duration::from_secs(30), || {
            last = self.session(link, id);
            last["status"] == status
        });
        assert!(
            reached,
            "never {status}: {last}\nlog:\n{}",
            self.server.log()
        );
        last
    }

    /// A started session of a new link of `amount` in `asset`: (link uid, session id, address).
    pub fn pending(&self, amount: &str, asset: &str) -> (String, String, String) {
        let link = self.link(amount, asset, None);
        let (status, s) = self.start(&link, asset);
        assert_eq!(
            (status, s["status"].as_str()),
            (201, Some("pending")),
            "{s}"
        );
        let id = s["id"].as_str().unwrap().to_owned();
        (link, id, s["depositAddress"].as_str().unwrap().to_owned())
    }
}

/// The settlement webhooks of `session` that arrived within `wait`.
pub fn settlements(
    deliveries: &std::sync::mpsc::Receiver<(String, String)>,
    session: &str,
    wait: std::time::Duration,
) -> usize {
    std::thread::sleep(wait);
    deliveries
        .try_iter()
        .filter(|(_, body)| {
            let v: Value = serde_json::from_str(body).unwrap_or_default();
            v["type"] == "pay.payment.settlement_updated" && body.contains(session)
        })
        .count()
}

/// Moves the session's deposit deadline a second into the past, as if its window had gone by
/// (there is no test clock under `onchain`): the expiry work, every second, then ends it
/// (`payment_request_expired`).
pub fn expire_session(db_url: &str, session: &str) {
    use diesel::{Connection, RunQueryDsl};
    let past = i64::try_from(now_secs()).unwrap() * 1000 - 1000;
    let sql = format!("UPDATE payment_sessions SET expires_at = {past} WHERE id = '{session}'");
    let changed = match db_url.strip_prefix("sqlite://") {
        Some(path) => {
            let mut c = diesel::SqliteConnection::establish(path).unwrap();
            diesel::sql_query("PRAGMA busy_timeout = 10000")
                .execute(&mut c)
                .unwrap();
            diesel::sql_query(sql).execute(&mut c).unwrap()
        }
        None => {
            let mut c = diesel::PgConnection::establish(db_url).unwrap();
            diesel::sql_query(sql).execute(&mut c).unwrap()
        }
    };
    assert_eq!(changed, 1, "session {session}");
}

/// The `pay.payment.*` webhooks of `session` delivered so far, by type.
pub fn webhook_types(
    deliveries: &std::sync::mpsc::Receiver<(String, String)>,
    seen: &mut Vec<String>,
    session: &str,
) {
    for (_, body) in deliveries.try_iter() {
        let v: Value = serde_json::from_str(&body).unwrap_or_default();
        if body.contains(session) {
            seen.push(v["type"].as_str().unwrap_or_default().to_owned());
        }
    }
}

/// Anvil's first development account: the payer.
pub const PAYER: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

impl Shop {
    /// The company's wallet activity, newest first.
    pub fn activity(&self) -> Vec<Value> {
        let (status, list) = self.api("GET", "/bookkeeping/wallet-activity", None);
        assert_eq!(status, 200, "{list}");
        list["data"].as_array().unwrap().clone()
    }
}

/// The activity with `key`; exactly one.
pub fn one<'a>(list: &'a [Value], key: &str) -> &'a Value {
    let found: Vec<&Value> = list.iter().filter(|a| a["key"] == key).collect();
    assert_eq!(found.len(), 1, "{key} in {list:#?}");
    found[0]
}
