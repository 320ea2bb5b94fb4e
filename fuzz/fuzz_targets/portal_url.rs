//! The portal URL verifier (`pay_domain::customers::portal::verify_signature`). The input's
//! lines are the parameters (company, customer, expires, signature, then grant and access when
//! present). First as they are: an accepted URL is every parameter in its canonical form,
//! signed with the key, and `portal_url` of what was verified gives them back. Then signed
//! here with the key over the values read leniently (any UUID spelling, any integer), the
//! fourth line now naming signature characters to overwrite: it verifies exactly when every
//! parameter is canonical and the signature is the one computed (one spelling per URL).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pay_domain::customers::portal::{
    portal_url, rights_key, sign, verify_signature, PortalKey, PortalParams, PortalRights,
};
use pay_domain::kernel::ids::{CompanyId, ContactUid};

fn key() -> PortalKey {
    PortalKey::new(vec![42u8; 32]).expect("32 bytes")
}

fn lenient_rights(grant: Option<&str>, access: Option<&str>) -> Option<(PortalRights, bool)> {
    let (grant, access) = match (grant, access) {
        (None, None) => return Some((PortalRights::COMPANY, true)),
        (Some(g), Some(a)) => (g, a),
        _ => return None,
    };
    let id = uuid::Uuid::parse_str(grant).ok()?;
    let (see, manage) = match access.to_ascii_lowercase().as_str() {
        "read-write" => (true, true),
        "read" => (true, false),
        "write" => (false, true),
        "none" => (false, false),
        _ => return None,
    };
    let rights = PortalRights {
        grant: Some(id),
        see_subscriptions: see,
        manage_subscriptions: manage,
    };
    let canonical = id.hyphenated().to_string() == grant && rights.access() == access;
    Some((rights, canonical))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let field = |i: usize| lines.get(i).copied();
    let params = PortalParams {
        company: field(0).unwrap_or_default().to_owned(),
        customer: field(1).unwrap_or_default().to_owned(),
        expires: field(2).unwrap_or_default().to_owned(),
        signature: field(3).unwrap_or_default().to_owned(),
        grant: field(4).map(str::to_owned),
        access: field(5).map(str::to_owned),
    };
    let keys = [key()];
    if let Ok(signed) = verify_signature(&keys, &params) {
        let url = portal_url(
            "https://pay.example",
            signed.company,
            &signed.customer,
            signed.expires,
            &signed.rights,
            &params.signature,
        );
        let query = url.split_once('?').expect("a query").1;
        let mut expected = format!(
            "company={}&customer={}&expires={}&signature={}",
            params.company, params.customer, params.expires, params.signature
        );
        if let (Some(g), Some(a)) = (&params.grant, &params.access) {
            expected.push_str(&format!("&grant={g}&access={a}"));
        }
        assert_eq!(query, expected);
    }

    // Signed here over the lenient readings.
    let Some(company) = uuid::Uuid::parse_str(&params.company).ok().map(CompanyId) else {
        return;
    };
    let Some(customer) = ContactUid::parse(&params.customer) else {
        return;
    };
    let Ok(expires) = params.expires.parse::<i64>() else {
        return;
    };
    let Some((rights, rights_canonical)) =
        lenient_rights(params.grant.as_deref(), params.access.as_deref())
    else {
        return;
    };
    let correct = sign(&rights_key(&keys[0], &rights), company, &customer, expires);
    let mut signature = correct.clone().into_bytes();
    let len = signature.len();
    for pair in params.signature.as_bytes().chunks(2) {
        if let [at, byte] = pair {
            signature[usize::from(*at) % len] = *byte;
        }
    }
    let Ok(signature) = String::from_utf8(signature) else {
        return;
    };
    let canonical = company.to_string() == params.company
        && customer.to_string() == params.customer
        && expires >= 0
        && expires.to_string() == params.expires
        && params.expires.len() <= 12
        && rights_canonical
        && signature == correct;
    let given = PortalParams {
        signature,
        ..params
    };
    assert_eq!(
        verify_signature(&keys, &given).is_ok(),
        canonical,
        "{given:?}"
    );
});
