//! OAuth test support: a DPoP key generated per test (ES256 with ring) signing proofs,
//! applications registered through the domain (as `admin create-oauth-app`), codes issued
//! for a signed-in owner, and form posts to the token endpoint.

use base64::Engine;
use reqwest::Method;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};

use crate::helpers::{read, Tenant, TestApp};

pub const REDIRECT: &str = "https://shop.example/oauth/cb";
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

pub fn now_unix() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// A client's DPoP key pair.
pub struct DpopKey {
    key: EcdsaKeyPair,
    rng: SystemRandom,
    pub jwk: Value,
    pub jkt: String,
}

impl DpopKey {
    pub fn generate() -> DpopKey {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let point = key.public_key().as_ref();
        let jwk =
            json!({"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..65])});
        let jkt = pay_dpop::jwk_thumbprint(&jwk).unwrap();
        DpopKey { key, rng, jwk, jkt }
    }

    /// A proof with these claims, signed.
    pub fn sign(&self, claims: &Value) -> String {
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let sig = self.key.sign(&self.rng, input.as_bytes()).unwrap();
        format!("{input}.{}", b64(sig.as_ref()))
    }

    /// A fresh proof for `method` at `htu`, with `ath` of `token` when given.
    pub fn proof(&self, method: &str, htu: &str, token: Option<&str>) -> String {
        self.proof_with_nonce(method, htu, token, None)
    }

    /// The same carrying a server-issued `nonce` when given.
    pub fn proof_with_nonce(
        &self,
        method: &str,
        htu: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> String {
        let mut claims = json!({
            "jti": uuid::Uuid::new_v4().to_string(),
            "htm": method,
            "htu": htu,
            "iat": now_unix(),
        });
        if let Some(t) = token {
            claims["ath"] = json!(pay_dpop::access_token_hash(t));
        }
        if let Some(n) = nonce {
            claims["nonce"] = json!(n);
        }
        self.sign(&claims)
    }
}

/// A registered application.
#[derive(Debug, Clone)]
pub struct App {
    pub client_id: String,
    pub secret: Option<String>,
}

pub async fn register(app: &TestApp, scopes: &str, public: bool, dpop_bound: bool) -> App {
    let pay = app.pay.clone();
    let input = pay_domain::oauth::NewApplication {
        name: "Shop <Plugin>".into(),
        redirect_uris: vec![REDIRECT.into()],
        scopes: scopes.into(),
        public,
        dpop_bound,
        refresh_ttl: None,
    };
    let (a, secret) = tokio::task::spawn_blocking(move || pay.oauth().register_application(input))
        .await
        .unwrap()
        .unwrap();
    App {
        client_id: a.client_id.to_string(),
        secret: secret.map(|s| s.expose().to_owned()),
    }
}

/// A code for `client` approved by `t`'s owner on `t`'s company, through the domain (the
/// consent page's own tests go through the browser flow).
pub async fn code_for(app: &TestApp, t: &Tenant, client: &App, scope: &str) -> String {
    code_with_redirect(app, t, &client.client_id, REDIRECT, scope).await
}

/// The same for the client `client_id` with this redirect URI.
pub async fn code_with_redirect(
    app: &TestApp,
    t: &Tenant,
    client_id: &str,
    redirect: &str,
    scope: &str,
) -> String {
    let pay = app.pay.clone();
    let (email, password) = (t.email.clone(), t.password.clone());
    let company = pay_domain::kernel::ids::CompanyId::parse(&t.company_id).unwrap();
    let req = pay_domain::oauth::AuthorizeRequest {
        client_id: client_id.into(),
        redirect_uri: redirect.into(),
        scope: scope.into(),
        state: Some("st".into()),
        code_challenge: CHALLENGE.into(),
        dpop_jkt: None,
    };
    tokio::task::spawn_blocking(move || {
        let login = pay
            .tenancy()
            .login(
                &email,
                &pay_domain::kernel::secret::Secret::new(password),
                "127.0.0.1",
            )
            .unwrap();
        let signed_in = pay
            .tenancy()
            .authenticate_sign_in(login.session_token.expose())
            .unwrap();
        let issued = pay.oauth().authorize(&signed_in, company, &req).unwrap();
        issued.code.expose().to_owned()
    })
    .await
    .unwrap()
}

pub fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// The configured base URL plus `path`: what a proof's `htu` must name.
pub fn htu(app: &TestApp, path: &str) -> String {
    format!("{}{}", app.config.base_url.trim_end_matches('/'), path)
}

/// POST /oauth/token with `pairs`, client_secret_basic when the app has a secret (else its
/// client_id in the body), and a proof when `key` is given.
pub async fn token(
    app: &TestApp,
    client: &App,
    pairs: &[(&str, &str)],
    key: Option<&DpopKey>,
) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
    let proof = key.map(|k| k.proof("POST", &htu(app, "/oauth/token"), None));
    token_with_proof(app, client, pairs, proof).await
}

/// The same with this `DPoP` header, when given.
pub async fn token_with_proof(
    app: &TestApp,
    client: &App,
    pairs: &[(&str, &str)],
    proof: Option<String>,
) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
    let mut pairs = pairs.to_vec();
    let mut req = app
        .anon(Method::POST, "/oauth/token")
        .header("content-type", "application/x-www-form-urlencoded");
    match &client.secret {
        Some(secret) => req = req.basic_auth(&client.client_id, Some(secret)),
        None => pairs.push(("client_id", &client.client_id)),
    }
    if let Some(p) = proof {
        req = req.header("DPoP", p);
    }
    let res = req.body(form(&pairs)).send().await.unwrap();
    let headers = res.headers().clone();
    let (status, body) = read(res).await;
    (status, body, headers)
}

pub async fn exchange(
    app: &TestApp,
    client: &App,
    code: &str,
    key: Option<&DpopKey>,
) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
    token(
        app,
        client,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ],
        key,
    )
    .await
}

/// A request with `Authorization: DPoP` and a fresh proof for it.
pub fn with_dpop(
    app: &TestApp,
    key: &DpopKey,
    method: Method,
    path: &str,
    token: &str,
) -> reqwest::RequestBuilder {
    let proof = key.proof(method.as_str(), &htu(app, path), Some(token));
    app.anon(method, path)
        .header("authorization", format!("DPoP {token}"))
        .header("DPoP", proof)
}

/// All `WWW-Authenticate` values of a response, joined by ` | `.
pub fn challenges(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A Bearer access token of a confidential application holding `scope`, approved by the main
/// tenant's owner.
pub async fn access_token(app: &TestApp, scope: &str) -> String {
    let client = register(app, scope, false, false).await;
    let code = code_for(app, &app.t, &client, scope).await;
    let (status, t, _) = exchange(app, &client, &code, None).await;
    assert_eq!(status, 200, "{t}");
    t["access_token"].as_str().unwrap().to_owned()
}
