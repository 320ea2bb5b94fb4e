//! The token endpoint: client authentication, code redemption (PKCE, one use, replay revokes
//! the family), refresh rotation (one winner, reuse revokes the family, bound keys, scopes).

use super::*;

#[test]
fn a_code_is_redeemed_once_for_bearer_tokens() {
    let c = ctx(false, false);
    let code = c.code("company:read pay:payment-links:read");
    let t = c.exchange(&code, None).unwrap();
    assert_eq!(t.token_type.as_str(), "Bearer");
    assert_eq!(t.expires_in_secs, 900);
    assert_eq!(t.scopes, vec![Scope::CompanyRead, Scope::PaymentLinksRead]);
    assert!(t.access_token.expose().starts_with("oat_") && t.access_token.expose().len() == 47);
    assert!(t.refresh_token.expose().starts_with("ort_"));
    let tables = c.w.store.snapshot();
    let o = &tables.oauth;
    assert_eq!(o.codes[0].used_at, Some(c.w.now()));
    assert_eq!(
        o.access_tokens[0].digest,
        SecretDigest(format!("d:{}", t.access_token.expose()))
    );
    assert_eq!(
        o.access_tokens[0].expires_at,
        c.w.now().plus(Duration::minutes(15))
    );
    assert_eq!(
        o.refresh_tokens[0].expires_at,
        c.w.now().plus(Duration::days(30))
    );
    assert_eq!(o.access_tokens[0].family_id, o.codes[0].family_id);
}

#[test]
fn client_authentication_failures_are_invalid_client() {
    let c = ctx(false, false);
    let code = c.code("company:read");
    let oauth = c.w.pay.oauth();
    let secret = c.client.secret.clone();
    for client in [
        ClientAuth {
            secret: None,
            ..c.client.clone()
        },
        ClientAuth {
            secret: Some(Secret::new("ocs_wrong")),
            ..c.client.clone()
        },
        ClientAuth {
            client_id: "oc_00000000000000000000000000000000".into(),
            secret: secret.clone(),
        },
        ClientAuth {
            client_id: "".into(),
            secret: secret.clone(),
        },
    ] {
        let r = oauth.exchange_code(&client, &code, CB, VERIFIER, None);
        assert_eq!(code_of(r), "invalid_client");
    }
    // A public client must not send a secret.
    let p = ctx(true, false);
    let code = p.code("company:read");
    let with_secret = ClientAuth {
        secret: Some(Secret::new("ocs_x")),
        ..p.client.clone()
    };
    let r =
        p.w.pay
            .oauth()
            .exchange_code(&with_secret, &code, CB, VERIFIER, None);
    assert_eq!(code_of(r), "invalid_client");
    assert!(
        p.exchange(&code, None).is_ok(),
        "the refusals did not burn the code"
    );
}

#[test]
fn a_code_needs_its_client_redirect_uri_verifier_and_sixty_seconds() {
    let c = ctx(false, false);
    let oauth = c.w.pay.oauth();
    let code = c.code("company:read");
    let other_verifier = "a".repeat(43);
    for (redirect, verifier) in [
        ("http://127.0.0.1:8123/cb", VERIFIER),
        ("https://shop.example/cb/", VERIFIER),
        (CB, other_verifier.as_str()),
        (CB, CHALLENGE),
        (CB, ""),
        (CB, &VERIFIER[..42]),
    ] {
        let r = oauth.exchange_code(&c.client, &code, redirect, verifier, None);
        assert_eq!(code_of(r), "invalid_grant", "{redirect} {verifier}");
    }
    for bad in ["", "oac_unknown", "ort_x", &"oac_".repeat(40)] {
        assert_eq!(code_of(c.exchange(bad, None)), "invalid_grant");
    }
    // Another client's code.
    let (app2, s2) = oauth
        .register_application(new_app(false, false, "company:read"))
        .unwrap();
    let other = ClientAuth {
        client_id: app2.client_id.to_string(),
        secret: s2,
    };
    let r = oauth.exchange_code(&other, &code, CB, VERIFIER, None);
    assert_eq!(code_of(r), "invalid_grant");
    assert_eq!(c.w.store.tables().oauth.families[0].revoked_at, None);
    // 60 s on real time.
    c.w.advance(Duration::seconds(60));
    assert_eq!(code_of(c.exchange(&code, None)), "invalid_grant");
    let fresh = c.code("company:read");
    c.w.advance(Duration::seconds(59));
    assert!(c.exchange(&fresh, None).is_ok());
}

#[test]
fn a_second_redemption_revokes_everything_the_first_issued() {
    let c = ctx(false, false);
    let code = c.code("company:read");
    let t = c.exchange(&code, None).unwrap();
    let rotated = c.refresh(&t, None, None).unwrap();
    let unrelated = c.tokens("company:read");
    assert_eq!(code_of(c.exchange(&code, None)), "invalid_grant");
    assert_eq!(code_of(c.auth(&t, None)), "invalid_token");
    assert_eq!(code_of(c.auth(&rotated, None)), "invalid_token");
    assert_eq!(code_of(c.refresh(&rotated, None, None)), "invalid_grant");
    assert!(
        c.auth(&unrelated, None).is_ok(),
        "another family is untouched"
    );
    // Late too: a replay after the code's expiry still revokes.
    let code = c.code("company:read");
    let t = c.exchange(&code, None).unwrap();
    c.w.advance(Duration::minutes(2));
    assert_eq!(code_of(c.exchange(&code, None)), "invalid_grant");
    assert_eq!(code_of(c.refresh(&t, None, None)), "invalid_grant");
}

#[test]
fn concurrent_redemptions_of_one_code_give_one_token_set() {
    let c = ctx(false, false);
    let code = c.code("company:read");
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..6)
            .map(|_| s.spawn(|| c.exchange(&code, None)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    for r in results.iter().filter(|r| r.is_err()) {
        assert_eq!(code_of(r.clone()), "invalid_grant");
    }
    // The losers were replays: the family is revoked.
    assert!(c.w.store.tables().oauth.families[0].revoked_at.is_some());
}

#[test]
fn dpop_binding_at_the_token_endpoint() {
    // A dpop_bound application refuses a token request without a proof.
    let c = ctx(true, true);
    let code = c.code("company:read");
    assert_eq!(code_of(c.exchange(&code, None)), "invalid_dpop_proof");
    let t = c.exchange(&code, Some(&c.proof(JKT, 1))).unwrap();
    assert_eq!(t.token_type.as_str(), "DPoP");
    assert_eq!(
        c.w.store.tables().oauth.refresh_tokens[0].jkt.as_deref(),
        Some(JKT)
    );
    assert_eq!(code_of(c.refresh(&t, None, None)), "invalid_dpop_proof");
    // A code bound with dpop_jkt needs a proof of that key.
    let c = ctx(false, false);
    let req = AuthorizeRequest {
        dpop_jkt: Some(JKT.into()),
        ..c.req("company:read")
    };
    let code = c.code_for(&req);
    assert_eq!(code_of(c.exchange(&code, None)), "invalid_dpop_proof");
    assert_eq!(
        code_of(c.exchange(&code, Some(&c.proof(OTHER_JKT, 1)))),
        "invalid_dpop_proof"
    );
    assert!(c.exchange(&code, Some(&c.proof(JKT, 2))).is_ok());
    // A token request's proof is single use too.
    let code = c.code("company:read");
    assert_eq!(
        code_of(c.exchange(&code, Some(&c.proof(JKT, 2)))),
        "invalid_dpop_proof"
    );
    assert!(c.exchange(&code, Some(&c.proof(JKT, 3))).is_ok());
}

#[test]
fn refresh_rotates_and_a_spent_token_revokes_the_family() {
    let c = ctx(false, false);
    let t1 = c.tokens("company:read pay:payment-links:read");
    c.w.advance(Duration::minutes(20));
    let t2 = c.refresh(&t1, None, None).unwrap();
    assert_ne!(t2.refresh_token, t1.refresh_token);
    assert_eq!(t2.scopes, vec![Scope::CompanyRead, Scope::PaymentLinksRead]);
    assert!(c.auth(&t2, None).is_ok());
    {
        let t = c.w.store.tables();
        let rts = &t.oauth.refresh_tokens;
        assert_eq!(rts[0].spent_at, Some(c.w.now()));
        assert_eq!(rts[1].expires_at, c.w.now().plus(Duration::days(30)));
    }
    let t3 = c.refresh(&t2, None, None).unwrap();
    // t1's refresh token again: a replay; the whole family goes.
    assert_eq!(code_of(c.refresh(&t1, None, None)), "invalid_grant");
    for t in [&t2, &t3] {
        assert_eq!(code_of(c.auth(t, None)), "invalid_token");
    }
    assert_eq!(code_of(c.refresh(&t3, None, None)), "invalid_grant");
}

#[test]
fn two_refreshes_with_one_token_at_once_have_one_winner() {
    let c = ctx(false, false);
    let t = c.tokens("company:read");
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| s.spawn(|| c.refresh(&t, None, None)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    assert_eq!(
        c.w.store.tables().oauth.refresh_tokens.len(),
        2,
        "the loser wrote nothing"
    );
    // The loser presented a spent token: the family is revoked (RFC 9700 section 4.14.2).
    assert!(c.w.store.tables().oauth.families[0].revoked_at.is_some());
}

#[test]
fn refresh_may_narrow_but_never_widen_scopes() {
    let c = ctx(false, false);
    let t = c.tokens("company:read pay:payment-links:read");
    let narrow = c.refresh(&t, Some("company:read"), None).unwrap();
    assert_eq!(narrow.scopes, vec![Scope::CompanyRead]);
    let p = c.auth(&narrow, None).unwrap();
    assert_eq!(
        p.authorize(Scope::PaymentLinksRead),
        Err(Denied::MissingScope {
            scope: Scope::PaymentLinksRead,
            dpop_bound: false
        })
    );
    // The refresh token keeps the family's scopes: the next refresh may ask for both again.
    let both = c.refresh(&narrow, None, None).unwrap();
    assert_eq!(
        both.scopes,
        vec![Scope::CompanyRead, Scope::PaymentLinksRead]
    );
    c.w.store.reset_calls();
    for scope in [
        "pay:payment-links:write",
        "company:read pay:payment-links:write",
        "pay:unknown",
        "",
    ] {
        assert_eq!(
            code_of(c.refresh(&both, Some(scope), None)),
            "invalid_scope",
            "{scope}"
        );
    }
    assert_eq!(c.w.store.writes(), 0, "a refused refresh spends nothing");
    assert!(c.refresh(&both, None, None).is_ok());
}

#[test]
fn refresh_tokens_expire_and_belong_to_their_client() {
    let c = ctx(false, false);
    let t = c.tokens("company:read");
    let oauth = c.w.pay.oauth();
    let (app2, s2) = oauth
        .register_application(new_app(false, false, "company:read"))
        .unwrap();
    let other = ClientAuth {
        client_id: app2.client_id.to_string(),
        secret: s2,
    };
    let r = oauth.refresh(&other, t.refresh_token.expose(), None, None);
    assert_eq!(code_of(r), "invalid_grant");
    assert_eq!(
        code_of(oauth.refresh(&c.client, "ort_nope", None, None)),
        "invalid_grant"
    );
    assert_eq!(
        code_of(oauth.refresh(&c.client, t.access_token.expose(), None, None)),
        "invalid_grant"
    );
    c.w.advance(Duration::days(30));
    assert_eq!(code_of(c.refresh(&t, None, None)), "invalid_grant");
}

#[test]
fn a_bound_refresh_token_refreshes_only_with_its_key() {
    let c = ctx(false, false);
    let t = c
        .exchange(&c.code("company:read"), Some(&c.proof(JKT, 1)))
        .unwrap();
    assert_eq!(code_of(c.refresh(&t, None, None)), "invalid_dpop_proof");
    assert_eq!(
        code_of(c.refresh(&t, None, Some(&c.proof(OTHER_JKT, 2)))),
        "invalid_dpop_proof"
    );
    let t2 = c.refresh(&t, None, Some(&c.proof(JKT, 3))).unwrap();
    assert_eq!(t2.token_type.as_str(), "DPoP");
    assert!(c.auth(&t2, Some(&c.proof(JKT, 4))).is_ok());
    // A replayed proof at the token endpoint.
    assert_eq!(
        code_of(c.refresh(&t2, None, Some(&c.proof(JKT, 3)))),
        "invalid_dpop_proof"
    );
    // An unbound family becomes bound when a proof comes with its refresh.
    let u = c.tokens("company:read");
    let bound = c.refresh(&u, None, Some(&c.proof(OTHER_JKT, 5))).unwrap();
    assert_eq!(bound.token_type.as_str(), "DPoP");
    assert_eq!(code_of(c.refresh(&bound, None, None)), "invalid_dpop_proof");
}
