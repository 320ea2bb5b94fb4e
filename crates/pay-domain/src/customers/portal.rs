//! The signed customer portal URL, as pure functions: `signature` = lower-case hex of
//! HMAC-SHA256, keyed with a portal key (a key of its own, never a webhook secret), over
//! `v1:{companyId}:{customerUid}:{expires}`; valid for 24 hours on the service clock; never
//! stored. Every parameter must be in its one canonical form, so that changing any character
//! of any of them fails.
//!
//! A URL never does more than the credential that minted it (`PortalRights`): one an OAuth
//! grant minted also carries `grant` and `access`, and is signed with a key derived from the
//! portal key and those two (`rights_key`), so that neither can be changed or dropped.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use time::Duration;

use crate::customers::PortalRefused;
use crate::kernel::hex;
use crate::kernel::ids::{CompanyId, ContactUid};
use crate::kernel::timestamp::Timestamp;
use crate::tenancy::Scope;

/// How long a portal URL is valid (the spec's Limits).
pub const PORTAL_URL_VALIDITY: Duration = Duration::hours(24);
/// The portal's path on the payment site.
pub const PORTAL_PATH: &str = "/portal";
/// The version tag that starts the signed string.
pub const SIGNATURE_VERSION: &str = "v1";
/// Length of `signature`: 32 bytes in hex.
pub const SIGNATURE_HEX_LEN: usize = 64;
/// Shortest key the signer accepts (bytes).
pub const MIN_KEY_LEN: usize = 32;

/// A portal signing key. Its bytes never print.
#[derive(Clone, PartialEq, Eq)]
pub struct PortalKey(Vec<u8>);

impl PortalKey {
    /// A key of at least `MIN_KEY_LEN` bytes; `None` when shorter.
    pub fn new(bytes: Vec<u8>) -> Option<PortalKey> {
        (bytes.len() >= MIN_KEY_LEN).then_some(PortalKey(bytes))
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes keys of any length: this cannot fail.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC accepts any key length")
    }
}

impl std::fmt::Debug for PortalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PortalKey(***)")
    }
}

/// The query parameters of a portal URL as they arrived (raw strings).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PortalParams {
    pub company: String,
    pub customer: String,
    pub expires: String,
    pub signature: String,
    /// Present (with `access`) exactly on a URL an OAuth grant minted.
    pub grant: Option<String>,
    pub access: Option<String>,
}

/// What a portal URL may do, from the credential that minted it. Every URL shows the
/// customer's own details and renames them (minting needs `pay:customers:write`); what it
/// may see and do of the customer's subscriptions follows the minter's subscription scopes,
/// and a grant's URL reaches only the subscriptions (with their invoice links) that grant
/// created, as the grant's own API calls do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortalRights {
    /// `None`: the company's every subscription of the customer (an API key or a signed-in
    /// member minted the URL). `Some`: only those the OAuth grant created.
    pub grant: Option<uuid::Uuid>,
    /// The subscriptions, their cycles and open invoices are shown (`pay:subscriptions:read`).
    pub see_subscriptions: bool,
    /// Pause, resume and cancel (`pay:subscriptions:write`).
    pub manage_subscriptions: bool,
}

impl PortalRights {
    /// An API key's or a signed-in member's URL: what the spec describes, company-wide.
    pub const COMPANY: PortalRights = PortalRights {
        grant: None,
        see_subscriptions: true,
        manage_subscriptions: true,
    };

    /// A URL of the OAuth grant `grant` holding `scopes`.
    pub fn of_grant(grant: uuid::Uuid, scopes: &[Scope]) -> PortalRights {
        PortalRights {
            grant: Some(grant),
            see_subscriptions: scopes.contains(&Scope::SubscriptionsRead),
            manage_subscriptions: scopes.contains(&Scope::SubscriptionsWrite),
        }
    }

    /// No more than `scopes` (what the grant approves when the URL is opened) allow.
    pub fn within(self, scopes: &[Scope]) -> PortalRights {
        PortalRights {
            see_subscriptions: self.see_subscriptions && scopes.contains(&Scope::SubscriptionsRead),
            manage_subscriptions: self.manage_subscriptions
                && scopes.contains(&Scope::SubscriptionsWrite),
            ..self
        }
    }

    /// The `access` parameter of a grant's URL.
    pub fn access(&self) -> &'static str {
        match (self.see_subscriptions, self.manage_subscriptions) {
            (true, true) => "read-write",
            (true, false) => "read",
            (false, true) => "write",
            (false, false) => "none",
        }
    }

    /// The rights a URL's `grant` and `access` name (both, in their canonical forms), or the
    /// company's when it has neither.
    fn parse(grant: Option<&str>, access: Option<&str>) -> Option<PortalRights> {
        let (grant, access) = match (grant, access) {
            (None, None) => return Some(PortalRights::COMPANY),
            (Some(g), Some(a)) => (g, a),
            _ => return None,
        };
        let id = uuid::Uuid::try_parse(grant)
            .ok()
            .filter(|u| u.hyphenated().to_string() == grant)?;
        let (see, manage) = match access {
            "read-write" => (true, true),
            "read" => (true, false),
            "write" => (false, true),
            "none" => (false, false),
            _ => return None,
        };
        Some(PortalRights {
            grant: Some(id),
            see_subscriptions: see,
            manage_subscriptions: manage,
        })
    }
}

/// What a verified signature vouches for (the expiry is checked apart, on the clock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedPortal {
    pub company: CompanyId,
    pub customer: ContactUid,
    /// Unix seconds.
    pub expires: i64,
    pub rights: PortalRights,
}

/// The exact signed string.
pub fn signing_input(company: CompanyId, customer: &ContactUid, expires: i64) -> String {
    format!("{SIGNATURE_VERSION}:{company}:{customer}:{expires}")
}

/// Lower-case hex HMAC-SHA256 of the signing input.
pub fn sign(key: &PortalKey, company: CompanyId, customer: &ContactUid, expires: i64) -> String {
    let mut mac = key.mac();
    mac.update(signing_input(company, customer, expires).as_bytes());
    hex::encode(&mac.finalize().into_bytes())
}

/// The key that signs a URL with `rights`: the portal key itself for the company's URLs, else
/// HMAC-SHA256 of the portal key over `rights:v1:{grant}:{access}`. The signed string stays
/// the spec's; a changed or dropped `grant` or `access` changes the key, so the signature
/// fails.
pub fn rights_key(key: &PortalKey, rights: &PortalRights) -> PortalKey {
    match rights.grant {
        None => key.clone(),
        Some(grant) => {
            let mut mac = key.mac();
            mac.update(
                format!("rights:{SIGNATURE_VERSION}:{grant}:{}", rights.access()).as_bytes(),
            );
            PortalKey(mac.finalize().into_bytes().to_vec())
        }
    }
}

/// The portal URL on `base` (an origin, with or without a trailing slash); a grant's URL
/// carries `grant` and `access` after the spec's four parameters.
pub fn portal_url(
    base: &str,
    company: CompanyId,
    customer: &ContactUid,
    expires: i64,
    rights: &PortalRights,
    signature: &str,
) -> String {
    let extra = match rights.grant {
        Some(grant) => format!("&grant={grant}&access={}", rights.access()),
        None => String::new(),
    };
    format!(
        "{}{PORTAL_PATH}?company={company}&customer={customer}&expires={expires}&signature={signature}{extra}",
        base.trim_end_matches('/')
    )
}

/// When a URL issued at `now` expires (unix seconds): `now` + 24 h, whole seconds down, so it
/// is never more than 24 h ahead of the clock that checks it.
pub fn expiry_for(now: Timestamp) -> i64 {
    now.plus(PORTAL_URL_VALIDITY).unix_seconds()
}

/// Checks the parameters' forms and the signature against each key (current first, then the
/// previous ones of a rotation), comparing MACs in constant time. Reads nothing.
pub fn verify_signature(
    keys: &[PortalKey],
    params: &PortalParams,
) -> Result<SignedPortal, PortalRefused> {
    let company = CompanyId::parse(&params.company)
        .filter(|c| c.to_string() == params.company)
        .ok_or(PortalRefused)?;
    let customer = ContactUid::parse(&params.customer).ok_or(PortalRefused)?;
    let expires = parse_expires(&params.expires).ok_or(PortalRefused)?;
    let rights = PortalRights::parse(params.grant.as_deref(), params.access.as_deref())
        .ok_or(PortalRefused)?;
    let given = unhex(&params.signature).ok_or(PortalRefused)?;
    let input = signing_input(company, &customer, expires);
    for key in keys {
        let mut mac = rights_key(key, &rights).mac();
        mac.update(input.as_bytes());
        // `verify_slice` compares in constant time.
        if mac.verify_slice(&given).is_ok() {
            return Ok(SignedPortal {
                company,
                customer,
                expires,
                rights,
            });
        }
    }
    Err(PortalRefused)
}

/// The token the portal's state-changing forms carry: lower-case hex HMAC-SHA256, with the
/// portal key, over `form:` + the signed string + `:` + the URL's signature. So it is bound to
/// one signed URL (company, customer, expiry and signature): it dies with that URL, and a
/// page of another customer, or of another URL, carries another one. Call it on parameters
/// `verify_signature` accepted (their canonical forms).
pub fn form_token(key: &PortalKey, params: &PortalParams) -> String {
    let mut mac = key.mac();
    mac.update(form_input(params).as_bytes());
    hex::encode(&mac.finalize().into_bytes())
}

fn form_input(p: &PortalParams) -> String {
    format!(
        "form:{SIGNATURE_VERSION}:{}:{}:{}:{}",
        p.company, p.customer, p.expires, p.signature
    )
}

/// Checks a form's token against each key (current first), in constant time. Reads nothing.
pub fn verify_form_token(
    keys: &[PortalKey],
    params: &PortalParams,
    token: &str,
) -> Result<(), PortalRefused> {
    let given = unhex(token).ok_or(PortalRefused)?;
    let input = form_input(params);
    for key in keys {
        let mut mac = key.mac();
        mac.update(input.as_bytes());
        if mac.verify_slice(&given).is_ok() {
            return Ok(());
        }
    }
    Err(PortalRefused)
}

/// The 24-hour window: `expires` must be after `now` and at most 24 h ahead of it.
pub fn check_expiry(expires: i64, now: Timestamp) -> Result<(), PortalRefused> {
    let at = expires.checked_mul(1000).ok_or(PortalRefused)?;
    let now_ms = now.unix_millis();
    if at <= now_ms || at > now.plus(PORTAL_URL_VALIDITY).unix_millis() {
        return Err(PortalRefused);
    }
    Ok(())
}

/// Canonical unix seconds: digits only, no sign, no leading zero, at most 12 digits.
fn parse_expires(s: &str) -> Option<i64> {
    let canonical = !s.is_empty()
        && s.len() <= 12
        && s.bytes().all(|b| b.is_ascii_digit())
        && (s == "0" || !s.starts_with('0'));
    if canonical {
        s.parse().ok()
    } else {
        None
    }
}

/// Lower-case hex of exactly 32 bytes; anything else is `None`.
fn unhex(s: &str) -> Option<Vec<u8>> {
    (s.len() == SIGNATURE_HEX_LEN)
        .then(|| hex::decode(s))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> PortalKey {
        PortalKey::new(vec![b; 32]).unwrap()
    }

    fn t(ms: i64) -> Timestamp {
        Timestamp::from_unix_millis(ms).unwrap()
    }

    const NOW: i64 = 1_795_327_640_123;

    fn signed(k: &PortalKey, expires: i64) -> PortalParams {
        let company = CompanyId::parse("0192f0c4-1a2b-7c3d-8e4f-0123456789ab").unwrap();
        let customer = ContactUid::parse("cus_AbCdEfGhIjKlMnOpQrStUvWx").unwrap();
        PortalParams {
            company: company.to_string(),
            customer: customer.to_string(),
            expires: expires.to_string(),
            signature: sign(k, company, &customer, expires),
            ..PortalParams::default()
        }
    }

    #[test]
    fn signs_the_spec_string() {
        let company = CompanyId::parse("0192f0c4-1a2b-7c3d-8e4f-0123456789ab").unwrap();
        let customer = ContactUid::parse("cus_AbCdEfGhIjKlMnOpQrStUvWx").unwrap();
        assert_eq!(
            signing_input(company, &customer, 1_795_414_040),
            "v1:0192f0c4-1a2b-7c3d-8e4f-0123456789ab:cus_AbCdEfGhIjKlMnOpQrStUvWx:1795414040"
        );
        // RFC 4231 test case 2 shape: HMAC-SHA256("Jefe", ...) is the library's; here the
        // known answer for our own input keeps the encoding fixed.
        let sig = sign(&key(7), company, &customer, 1_795_414_040);
        assert_eq!(sig.len(), 64);
        assert!(sig
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        let url = portal_url(
            "https://pay.example/",
            company,
            &customer,
            1,
            &PortalRights::COMPANY,
            &sig,
        );
        assert_eq!(
            url,
            format!("https://pay.example/portal?company={company}&customer={customer}&expires=1&signature={sig}")
        );
        assert!(format!("{:?}", key(7)).contains("***"));
        assert!(PortalKey::new(vec![1; 31]).is_none());
    }

    #[test]
    fn verifies_with_current_or_previous_keys_only() {
        let expires = expiry_for(t(NOW));
        let p = signed(&key(1), expires);
        assert!(verify_signature(&[key(1)], &p).is_ok());
        assert!(verify_signature(&[key(2), key(1)], &p).is_ok(), "rotation");
        assert_eq!(verify_signature(&[key(2)], &p), Err(PortalRefused));
        assert_eq!(verify_signature(&[], &p), Err(PortalRefused));
    }

    #[test]
    fn one_changed_character_in_any_parameter_is_refused() {
        let p = signed(&key(1), expiry_for(t(NOW)));
        let change = |s: &str, i: usize| -> String {
            let mut b = s.as_bytes().to_vec();
            b[i] = match b[i] {
                b'0' => b'1',
                b'a' => b'b',
                b'A' => b'B',
                b'-' => b'_',
                b'_' => b'-',
                c if c.is_ascii_digit() => b'0',
                c if c.is_ascii_lowercase() => c.to_ascii_uppercase(),
                c => c.to_ascii_lowercase(),
            };
            String::from_utf8(b).unwrap()
        };
        for i in 0..p.company.len() {
            let q = PortalParams {
                company: change(&p.company, i),
                ..p.clone()
            };
            assert_eq!(
                verify_signature(&[key(1)], &q),
                Err(PortalRefused),
                "company {i}"
            );
        }
        for i in 0..p.customer.len() {
            let q = PortalParams {
                customer: change(&p.customer, i),
                ..p.clone()
            };
            assert_eq!(
                verify_signature(&[key(1)], &q),
                Err(PortalRefused),
                "customer {i}"
            );
        }
        for i in 0..p.expires.len() {
            let q = PortalParams {
                expires: change(&p.expires, i),
                ..p.clone()
            };
            assert_eq!(
                verify_signature(&[key(1)], &q),
                Err(PortalRefused),
                "expires {i}"
            );
        }
        for i in 0..p.signature.len() {
            let q = PortalParams {
                signature: change(&p.signature, i),
                ..p.clone()
            };
            assert_eq!(
                verify_signature(&[key(1)], &q),
                Err(PortalRefused),
                "signature {i}"
            );
        }
        // Non-canonical forms of the same values.
        for q in [
            PortalParams {
                company: p.company.to_uppercase(),
                ..p.clone()
            },
            PortalParams {
                expires: format!("0{}", p.expires),
                ..p.clone()
            },
            PortalParams {
                expires: format!("+{}", p.expires),
                ..p.clone()
            },
            PortalParams {
                signature: p.signature.to_uppercase(),
                ..p.clone()
            },
            PortalParams {
                signature: p.signature[..62].to_owned(),
                ..p.clone()
            },
            PortalParams::default(),
        ] {
            assert_eq!(verify_signature(&[key(1)], &q), Err(PortalRefused));
        }
    }

    #[test]
    fn form_tokens_are_bound_to_one_signed_url() {
        let expires = expiry_for(t(NOW));
        let p = signed(&key(1), expires);
        let token = form_token(&key(1), &p);
        assert_eq!(token.len(), 64);
        assert_ne!(token, p.signature, "not the URL's own signature");
        assert_eq!(verify_form_token(&[key(1)], &p, &token), Ok(()));
        assert_eq!(verify_form_token(&[key(2), key(1)], &p, &token), Ok(()));
        assert_eq!(verify_form_token(&[key(2)], &p, &token), Err(PortalRefused));
        // Another URL of the same customer (a later expiry): another token.
        let later = signed(&key(1), expires + 60);
        assert_eq!(
            verify_form_token(&[key(1)], &later, &token),
            Err(PortalRefused)
        );
        // Another customer's page.
        let carol = PortalParams {
            customer: "cus_ZyXwVuTsRqPoNmLkJiHgFeDc".into(),
            ..p.clone()
        };
        assert_eq!(
            verify_form_token(&[key(1)], &carol, &token),
            Err(PortalRefused)
        );
        for bad in ["", "00", &token.to_uppercase(), &token[..63]] {
            assert_eq!(verify_form_token(&[key(1)], &p, bad), Err(PortalRefused));
        }
    }

    #[test]
    fn a_grant_url_cannot_change_or_drop_its_rights() {
        let grant = uuid::Uuid::parse_str("0192f0c4-1a2b-7c3d-8e4f-00000000000a").unwrap();
        let rights = PortalRights::of_grant(grant, &[Scope::SubscriptionsRead]);
        assert_eq!(rights.access(), "read");
        let expires = expiry_for(t(NOW));
        let company = CompanyId::parse("0192f0c4-1a2b-7c3d-8e4f-0123456789ab").unwrap();
        let customer = ContactUid::parse("cus_AbCdEfGhIjKlMnOpQrStUvWx").unwrap();
        let p = PortalParams {
            company: company.to_string(),
            customer: customer.to_string(),
            expires: expires.to_string(),
            signature: sign(&rights_key(&key(1), &rights), company, &customer, expires),
            grant: Some(grant.to_string()),
            access: Some("read".into()),
        };
        let url = portal_url("https://p.example", company, &customer, 1, &rights, "s");
        assert!(url.ends_with(&format!("&signature=s&grant={grant}&access=read")));
        let ok = verify_signature(&[key(1)], &p).unwrap();
        assert_eq!(ok.rights, rights);
        assert_ne!(rights_key(&key(1), &rights), key(1));
        for q in [
            PortalParams {
                access: Some("read-write".into()),
                ..p.clone()
            },
            PortalParams {
                access: Some("none".into()),
                ..p.clone()
            },
            PortalParams {
                access: None,
                ..p.clone()
            },
            PortalParams {
                grant: None,
                access: None,
                ..p.clone()
            },
            PortalParams {
                grant: Some(grant.to_string().to_uppercase()),
                ..p.clone()
            },
            PortalParams {
                grant: Some(uuid::Uuid::nil().to_string()),
                ..p.clone()
            },
            PortalParams {
                access: Some("admin".into()),
                ..p.clone()
            },
        ] {
            assert_eq!(verify_signature(&[key(1)], &q), Err(PortalRefused), "{q:?}");
        }
        // The company's URL (no grant) is the spec's, signed with the portal key itself.
        let company_url = signed(&key(1), expires);
        assert_eq!(
            verify_signature(&[key(1)], &company_url).unwrap().rights,
            PortalRights::COMPANY
        );
        // Fewer scopes when opened: fewer rights, never more.
        let all = PortalRights::of_grant(
            grant,
            &[Scope::SubscriptionsRead, Scope::SubscriptionsWrite],
        );
        assert_eq!(all.access(), "read-write");
        assert_eq!(all.within(&[Scope::SubscriptionsRead]), rights);
        assert_eq!(rights.within(&Scope::ALL), rights);
    }

    #[test]
    fn the_window_is_24_hours_ahead_at_most() {
        let now = t(NOW);
        let expires = expiry_for(now);
        assert_eq!(check_expiry(expires, now), Ok(()));
        assert_eq!(check_expiry(expires, now.plus(Duration::hours(23))), Ok(()));
        assert_eq!(
            check_expiry(expires, t(expires * 1000)),
            Err(PortalRefused),
            "expired at the second itself"
        );
        assert_eq!(
            check_expiry(expires, t(expires * 1000 + 1)),
            Err(PortalRefused)
        );
        assert_eq!(
            check_expiry(expires + 1, now.minus(Duration::seconds(1))),
            Err(PortalRefused),
            "more than 24 h ahead"
        );
        assert_eq!(check_expiry(i64::MAX, now), Err(PortalRefused));
    }
}
