//! OAuth use cases: registration, the authorization decision, resource authentication and
//! revocation. The token endpoint's grants are in `oauth/tokens.rs`.

mod tokens;

use super::*;
use pay_domain::oauth::{
    AuthorizeRequest, ClientAuth, ClientType, NewApplication, OAuthConfig, OAuthError, ProofFacts,
    TokenResponse,
};

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const CB: &str = "https://shop.example/cb";
const JKT: &str = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";
const OTHER_JKT: &str = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";
const HTU: &str = "https://pay.example/api/partner/v1/pay/payment-links";

/// A company with its owner signed in, and one application.
struct Ctx {
    w: World,
    owner: BootstrapOutcome,
    signed_in: SignedIn,
    client: ClientAuth,
}

fn ctx(public: bool, dpop_bound: bool) -> Ctx {
    let w = world();
    let owner = w.tenant("Acme", "ann@example.com");
    let (_, signed_in) = w.sign_in("ann@example.com");
    let app_scopes = "company:read pay:payment-links:read pay:payment-links:write";
    let (app, secret) = w
        .pay
        .oauth()
        .register_application(new_app(public, dpop_bound, app_scopes))
        .unwrap();
    let client = ClientAuth {
        client_id: app.client_id.to_string(),
        secret,
    };
    Ctx {
        w,
        owner,
        signed_in,
        client,
    }
}

fn new_app(public: bool, dpop_bound: bool, scopes: &str) -> NewApplication {
    NewApplication {
        name: "Shop connector".into(),
        redirect_uris: vec![CB.into(), "http://127.0.0.1:8123/cb".into()],
        scopes: scopes.into(),
        public,
        dpop_bound,
        refresh_ttl: None,
    }
}

impl Ctx {
    fn req(&self, scope: &str) -> AuthorizeRequest {
        AuthorizeRequest {
            client_id: self.client.client_id.clone(),
            redirect_uri: CB.into(),
            scope: scope.into(),
            state: Some("xyz 123".into()),
            code_challenge: CHALLENGE.into(),
            dpop_jkt: None,
        }
    }

    /// An approved code for `scope`.
    fn code(&self, scope: &str) -> String {
        self.code_for(&self.req(scope))
    }

    fn code_for(&self, req: &AuthorizeRequest) -> String {
        let issued = self
            .w
            .pay
            .oauth()
            .authorize(&self.signed_in, self.owner.company_id, req)
            .unwrap();
        issued.code.expose().to_owned()
    }

    fn exchange(
        &self,
        code: &str,
        proof: Option<&ProofFacts>,
    ) -> Result<TokenResponse, OAuthError> {
        self.w
            .pay
            .oauth()
            .exchange_code(&self.client, code, CB, VERIFIER, proof)
    }

    /// Tokens for `scope`, without DPoP.
    fn tokens(&self, scope: &str) -> TokenResponse {
        self.exchange(&self.code(scope), None).unwrap()
    }

    fn refresh(
        &self,
        t: &TokenResponse,
        scope: Option<&str>,
        proof: Option<&ProofFacts>,
    ) -> Result<TokenResponse, OAuthError> {
        self.w
            .pay
            .oauth()
            .refresh(&self.client, t.refresh_token.expose(), scope, proof)
    }

    fn auth(&self, t: &TokenResponse, proof: Option<&ProofFacts>) -> Result<Principal, OAuthError> {
        self.w
            .pay
            .oauth()
            .authenticate_access_token(t.access_token.expose(), proof)
    }

    /// A fresh proof of `jkt` (distinct `jti` per `n`) made now.
    fn proof(&self, jkt: &str, n: u8) -> ProofFacts {
        ProofFacts {
            jkt: jkt.into(),
            jti_digest: [n; 32],
            htu: HTU.into(),
            iat: self.w.now().unix_seconds(),
        }
    }
}

/// The RFC code of a refusal (`no_redirect`, `denied`, `invalid` for the others).
fn code_of<T: std::fmt::Debug>(r: Result<T, OAuthError>) -> &'static str {
    match r {
        Err(OAuthError::Refused(x)) => x.code.as_str(),
        Err(OAuthError::Resource(x)) => x.code.as_str(),
        Err(OAuthError::NoRedirect(_)) => "no_redirect",
        Err(OAuthError::Denied(Denied::Forbidden)) => "denied",
        Err(OAuthError::Invalid(_)) => "invalid",
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn registration_shows_a_confidential_secret_once_and_stores_its_digest() {
    let w = world();
    let (app, secret) = w
        .pay
        .oauth()
        .register_application(new_app(false, false, "pay:settings:read company:read"))
        .unwrap();
    let secret = secret.expect("confidential apps get a secret");
    assert!(secret.expose().starts_with("ocs_") && secret.expose().len() == 47);
    assert!(app.client_id.as_str().starts_with("oc_"));
    assert_eq!(app.client_type, ClientType::Confidential);
    assert_eq!(app.scopes, vec![Scope::CompanyRead, Scope::SettingsRead]);
    assert_eq!(app.refresh_ttl, Duration::days(30));
    assert_eq!(app.template, None);
    let stored = w.store.tables().oauth.applications[0].clone();
    assert_eq!(stored.app, app);
    assert_eq!(
        stored.secret_digest,
        Some(SecretDigest(format!("d:{}", secret.expose())))
    );
    assert!(!format!("{:?}", stored).contains(secret.expose()));

    let (public, none) = w
        .pay
        .oauth()
        .register_application(new_app(true, true, "company:read"))
        .unwrap();
    assert_eq!(
        (public.client_type, public.dpop_bound, none.is_none()),
        (ClientType::Public, true, true)
    );
    assert_eq!(w.store.tables().oauth.applications[1].secret_digest, None);
}

#[test]
fn registration_refuses_bad_input_and_writes_nothing() {
    let w = world();
    w.store.reset_calls();
    for (input, field) in [
        (new_app(false, false, "pay:everything"), "scopes"),
        (new_app(false, false, ""), "scopes"),
        (
            NewApplication {
                redirect_uris: vec!["http://shop.example/cb".into()],
                ..new_app(false, false, "company:read")
            },
            "redirectUris[0]",
        ),
        (
            NewApplication {
                name: "".into(),
                ..new_app(false, false, "company:read")
            },
            "name",
        ),
    ] {
        assert_eq!(
            field_of(
                w.pay
                    .oauth()
                    .register_application(input)
                    .map_err(|e| match e {
                        OAuthError::Invalid(f) => f,
                        other => panic!("{other:?}"),
                    })
            ),
            field
        );
    }
    assert_eq!(w.store.writes(), 0);
}

#[test]
fn unknown_client_or_redirect_uri_is_never_redirected() {
    let c = ctx(false, false);
    let oauth = c.w.pay.oauth();
    let mut req = c.req("company:read");
    req.client_id = "oc_unknownunknownunknownunknown00".into();
    assert_eq!(code_of(oauth.check_authorization(&req)), "no_redirect");
    req.client_id = "not a client".into();
    assert_eq!(code_of(oauth.check_authorization(&req)), "no_redirect");
    for uri in [
        "https://shop.example/cb/",
        "https://shop.example/CB",
        "https://evil.example/cb",
    ] {
        let mut req = c.req("company:read");
        req.redirect_uri = uri.into();
        assert_eq!(
            code_of(oauth.check_authorization(&req)),
            "no_redirect",
            "{uri}"
        );
        let r = oauth.authorize(&c.signed_in, c.owner.company_id, &req);
        assert_eq!(code_of(r), "no_redirect");
    }
}

#[test]
fn the_other_authorization_refusals_carry_their_rfc_code() {
    let c = ctx(false, false);
    let oauth = c.w.pay.oauth();
    let ok = c.req("company:read pay:payment-links:read");
    let view = oauth.check_authorization(&ok).unwrap();
    assert_eq!(
        view.scopes,
        vec![Scope::CompanyRead, Scope::PaymentLinksRead]
    );
    assert_eq!(view.app_name, "Shop connector");
    assert_eq!(view.state.as_deref(), Some("xyz 123"));
    let cases: Vec<(AuthorizeRequest, &str)> = vec![
        (c.req("pay:settings:read"), "invalid_scope"),
        (c.req("pay:unknown"), "invalid_scope"),
        (c.req(""), "invalid_scope"),
        (c.req("company:read company:read"), "invalid_scope"),
        (
            AuthorizeRequest {
                code_challenge: VERIFIER[..42].into(),
                ..ok.clone()
            },
            "invalid_request",
        ),
        (
            AuthorizeRequest {
                code_challenge: "plain".into(),
                ..ok.clone()
            },
            "invalid_request",
        ),
        (
            AuthorizeRequest {
                state: Some("".into()),
                ..ok.clone()
            },
            "invalid_request",
        ),
        (
            AuthorizeRequest {
                state: Some("a\nb".into()),
                ..ok.clone()
            },
            "invalid_request",
        ),
        (
            AuthorizeRequest {
                state: Some("s".repeat(1025)),
                ..ok.clone()
            },
            "invalid_request",
        ),
        (
            AuthorizeRequest {
                dpop_jkt: Some("short".into()),
                ..ok.clone()
            },
            "invalid_request",
        ),
    ];
    c.w.store.reset_calls();
    for (req, expect) in cases {
        assert_eq!(code_of(oauth.check_authorization(&req)), expect, "{req:?}");
        let r = oauth.authorize(&c.signed_in, c.owner.company_id, &req);
        assert_eq!(code_of(r), expect, "{req:?}");
    }
    assert_eq!(c.w.store.writes(), 0);
}

#[test]
fn approving_needs_membership_with_settings_manage() {
    let c = ctx(false, false);
    let req = c.req("company:read");
    let other = c.w.tenant("Other", "bob@example.com");
    let oauth = c.w.pay.oauth();
    c.w.store.reset_calls();
    assert_eq!(
        code_of(oauth.authorize(&c.signed_in, other.company_id, &req)),
        "denied"
    );
    let member =
        c.w.member(c.owner.company_id, "max@example.com", Role::Member);
    c.w.store.reset_calls();
    assert_eq!(
        code_of(oauth.authorize(&member, c.owner.company_id, &req)),
        "denied"
    );
    assert_eq!(c.w.store.writes(), 0);
    let admin =
        c.w.member(c.owner.company_id, "ada@example.com", Role::Admin);
    assert!(oauth.authorize(&admin, c.owner.company_id, &req).is_ok());
}

#[test]
fn authorizing_creates_one_grant_and_a_sixty_second_code() {
    let c = ctx(false, false);
    let oauth = c.w.pay.oauth();
    let first = oauth
        .authorize(&c.signed_in, c.owner.company_id, &c.req("company:read"))
        .unwrap();
    assert!(first.code.expose().starts_with("oac_"));
    assert_eq!(first.state.as_deref(), Some("xyz 123"));
    assert_eq!(first.redirect_uri, CB);
    assert_eq!(first.expires_at, c.w.now().plus(Duration::seconds(60)));
    {
        let t = c.w.store.tables();
        let code = &t.oauth.codes[0];
        assert_eq!(
            code.digest,
            SecretDigest(format!("d:{}", first.code.expose()))
        );
        assert_eq!(code.code_challenge, CHALLENGE);
        let g = &t.oauth.grants[0];
        assert_eq!((g.id, g.company_id), (first.grant_id, c.owner.company_id));
        assert_eq!(g.scopes, vec![Scope::CompanyRead]);
    }
    // A second consent keeps the grant (its links and subscription stay with it).
    let second = oauth
        .authorize(
            &c.signed_in,
            c.owner.company_id,
            &c.req("pay:payment-links:read"),
        )
        .unwrap();
    assert_eq!(second.grant_id, first.grant_id);
    let t = c.w.store.tables();
    assert_eq!(t.oauth.grants.len(), 1);
    assert_eq!(t.oauth.grants[0].scopes, vec![Scope::PaymentLinksRead]);
    assert_eq!(t.oauth.families.len(), 2);
}

#[test]
fn an_access_token_resolves_to_the_grants_company_and_scopes() {
    let c = ctx(false, false);
    let t = c.tokens("company:read pay:payment-links:read");
    let p = c.auth(&t, None).unwrap();
    assert_eq!(p.company_id, c.owner.company_id);
    let grant_id = c.w.store.tables().oauth.grants[0].id;
    assert_eq!(
        p.credential,
        Credential::OAuthGrant {
            grant_id: grant_id.0,
            scopes: vec![Scope::CompanyRead, Scope::PaymentLinksRead],
            dpop_bound: false,
        }
    );
    assert_eq!(
        p.authorize(Scope::PaymentLinksWrite),
        Err(Denied::MissingScope {
            scope: Scope::PaymentLinksWrite,
            dpop_bound: false
        })
    );
    // Another company's link is not found through this token.
    let other = c.w.tenant("Other", "bob@example.com");
    let foreign = c.w.new_link(&c.w.key_principal(&other));
    let r = c.w.pay.links().get_link(&p, &foreign.uid);
    assert_eq!(r, Err(LinkError::NotFound(LINK_NOT_FOUND)));
    // A narrower consent later caps the token at once.
    c.code("company:read");
    let p = c.auth(&t, None).unwrap();
    assert_eq!(
        p.authorize(Scope::PaymentLinksRead),
        Err(Denied::MissingScope {
            scope: Scope::PaymentLinksRead,
            dpop_bound: false
        })
    );
    assert_eq!(p.authorize(Scope::CompanyRead), Ok(()));
}

#[test]
fn unknown_malformed_expired_and_revoked_access_tokens_are_invalid_token() {
    let c = ctx(false, false);
    let oauth = c.w.pay.oauth();
    for bad in [
        "",
        "oat_",
        "oat_nope",
        "Bearer",
        &"oat_a".repeat(40),
        "ort_abc",
    ] {
        assert_eq!(
            code_of(oauth.authenticate_access_token(bad, None)),
            "invalid_token"
        );
    }
    let t = c.tokens("company:read");
    c.w.advance(Duration::minutes(15) - Duration::milliseconds(1));
    assert!(c.auth(&t, None).is_ok());
    c.w.advance(Duration::milliseconds(1));
    assert_eq!(code_of(c.auth(&t, None)), "invalid_token");
    let t = c.tokens("company:read");
    oauth.revoke(&c.client, t.access_token.expose()).unwrap();
    assert_eq!(code_of(c.auth(&t, None)), "invalid_token");
}

#[test]
fn the_access_token_lifetime_is_configurable() {
    let mut c = ctx(false, false);
    c.w.pay = Pay::new(
        AppConfig {
            assets: AssetCatalogue::builtin(),
            public_pay_url: "https://pay.example".into(),
            limits: Default::default(),
            sandbox: true,
            allow_private_targets: false,
            billing: Default::default(),
            oauth: OAuthConfig {
                access_ttl: Duration::minutes(5),
                ..OAuthConfig::default()
            },
            webhook_circuit: Default::default(),
            events_kept: pay_domain::webhooks::EVENTS_KEPT_DEFAULT,
        },
        Stores::all_in(c.w.store.clone()),
        Adapters {
            clock: c.w.clock.clone(),
            crypto: c.w.crypto.clone(),
            sealer: c.w.sealer.clone(),
            signer: c.w.signer.clone(),
            wall_clock: c.w.wall.clone(),
            processor: c.w.processor.clone(),
            prices: Arc::new(FakePrices),
            portal_keys: c.w.portal_keys.clone(),
            files: c.w.files.clone(),
        },
    );
    let t = c.tokens("company:read");
    assert_eq!(t.expires_in_secs, 300);
    c.w.advance(Duration::minutes(5));
    assert_eq!(code_of(c.auth(&t, None)), "invalid_token");
}

#[test]
fn a_bound_token_needs_a_fresh_proof_of_its_key() {
    let c = ctx(false, false);
    let t = c
        .exchange(&c.code("company:read"), Some(&c.proof(JKT, 1)))
        .unwrap();
    assert_eq!(t.token_type.as_str(), "DPoP");
    // As Bearer (no proof): refused; another key: refused.
    assert_eq!(code_of(c.auth(&t, None)), "invalid_token");
    assert_eq!(
        code_of(c.auth(&t, Some(&c.proof(OTHER_JKT, 2)))),
        "invalid_dpop_proof"
    );
    assert!(c.auth(&t, Some(&c.proof(JKT, 3))).is_ok());
    // The same jti again is a replay, also for another token of the key.
    assert_eq!(
        code_of(c.auth(&t, Some(&c.proof(JKT, 3)))),
        "invalid_dpop_proof"
    );
    // Another htu with that jti is another pair.
    let mut elsewhere = c.proof(JKT, 3);
    elsewhere.htu = "https://pay.example/api/partner/v1/pay/company".into();
    assert!(c.auth(&t, Some(&elsewhere)).is_ok());
    // An unbound token presented with a proof is refused.
    let bearer = c.tokens("company:read");
    assert_eq!(bearer.token_type.as_str(), "Bearer");
    assert_eq!(
        code_of(c.auth(&bearer, Some(&c.proof(JKT, 9)))),
        "invalid_token"
    );
    assert!(c.auth(&bearer, None).is_ok());
}

#[test]
fn a_replayed_proof_sent_twice_at_once_passes_once() {
    let c = ctx(false, false);
    let t = c
        .exchange(&c.code("company:read"), Some(&c.proof(JKT, 1)))
        .unwrap();
    let proof = c.proof(JKT, 7);
    let ok = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|_| s.spawn(|| c.auth(&t, Some(&proof)).is_ok()))
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .filter(|ok| *ok)
            .count()
    });
    assert_eq!(ok, 1);
    // The jti is kept for the proof's window.
    let kept = c.w.store.tables().oauth.jtis.last().unwrap().2;
    assert_eq!(kept, c.w.now().plus(Duration::seconds(300)));
}

#[test]
fn revocation_answers_ok_and_revokes_only_the_clients_own_tokens() {
    let c = ctx(false, false);
    let oauth = c.w.pay.oauth();
    let t = c.tokens("company:read");
    let t2 = c.tokens("company:read");
    // Unknown, malformed: OK, nothing written.
    c.w.store.reset_calls();
    for token in [
        "",
        "oat_unknown",
        "ort_unknown",
        "whatever",
        &"x".repeat(500),
    ] {
        oauth.revoke(&c.client, token).unwrap();
    }
    assert_eq!(c.w.store.writes(), 0);
    // Another client's token: OK, and it still works.
    let (other_app, other_secret) = oauth
        .register_application(new_app(false, false, "company:read"))
        .unwrap();
    let other = ClientAuth {
        client_id: other_app.client_id.to_string(),
        secret: other_secret,
    };
    oauth.revoke(&other, t.refresh_token.expose()).unwrap();
    oauth.revoke(&other, t.access_token.expose()).unwrap();
    assert!(c.auth(&t, None).is_ok());
    assert!(c.refresh(&t, None, None).is_ok());
    // Bad client authentication is the one error.
    let wrong = ClientAuth {
        secret: Some(Secret::new("ocs_wrong")),
        ..c.client.clone()
    };
    assert_eq!(
        code_of(oauth.revoke(&wrong, t2.access_token.expose())),
        "invalid_client"
    );
    // An access token: that token only.
    oauth.revoke(&c.client, t2.access_token.expose()).unwrap();
    assert_eq!(code_of(c.auth(&t2, None)), "invalid_token");
    let t3 = c.refresh(&t2, None, None).unwrap();
    assert!(c.auth(&t3, None).is_ok());
    // A refresh token: its whole family.
    oauth.revoke(&c.client, t3.refresh_token.expose()).unwrap();
    assert_eq!(code_of(c.auth(&t3, None)), "invalid_token");
    assert_eq!(code_of(c.refresh(&t3, None, None)), "invalid_grant");
    oauth.revoke(&c.client, t3.refresh_token.expose()).unwrap();
}

#[test]
fn prune_forgets_old_jtis_and_long_expired_tokens() {
    let c = ctx(false, false);
    let t = c
        .exchange(&c.code("company:read"), Some(&c.proof(JKT, 1)))
        .unwrap();
    assert!(c.auth(&t, Some(&c.proof(JKT, 2))).is_ok());
    let counts = |c: &Ctx| {
        let t = c.w.store.tables();
        let o = &t.oauth;
        (
            o.jtis.len(),
            o.codes.len(),
            o.access_tokens.len(),
            o.refresh_tokens.len(),
        )
    };
    c.w.pay.prune().unwrap();
    assert_eq!(counts(&c), (2, 1, 1, 1));
    c.w.advance(Duration::seconds(301));
    c.w.pay.prune().unwrap();
    assert_eq!(counts(&c), (0, 1, 1, 1), "the jtis past their window");
    c.w.advance(Duration::days(1) + Duration::minutes(15));
    c.w.pay.prune().unwrap();
    assert_eq!(
        counts(&c),
        (0, 0, 0, 1),
        "the code and the access token a day past expiry"
    );
}
