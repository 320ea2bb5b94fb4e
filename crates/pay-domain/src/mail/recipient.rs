//! Who may be written to: the address rules, and whether a link takes requests.

use crate::kernel::error::FieldError;
use crate::kernel::timestamp::Timestamp;
use crate::links::LinkNotActive;
use crate::links::{LinkState, PaymentLink};

/// Most characters of an address (RFC 5321's path limit less the brackets).
pub const MAX_EMAIL_LEN: usize = 254;

/// Most characters of the part before `@` (RFC 5321).
pub const MAX_LOCAL_LEN: usize = 64;

/// The recipient rule: trimmed, at most 254 characters, one `@`, a local part of at most 64
/// characters from RFC 5322's dot-atom (no quoted forms, no comments), and a domain of at least
/// two dot-separated labels of letters, digits and inner hyphens (international letters
/// allowed). Nothing that could break out of a header (spaces, controls, `<>,;:"()[]\`)
/// passes. Returns the address with its domain in lower case.
pub fn parse_recipient(field: &str, raw: &str) -> Result<String, FieldError> {
    let bad = || {
        Err(FieldError::new(
            field,
            format!("{field} must be an e-mail address"),
        ))
    };
    let value = raw.trim();
    if value.is_empty() || value.chars().count() > MAX_EMAIL_LEN {
        return bad();
    }
    let Some((local, domain)) = value.rsplit_once('@') else {
        return bad();
    };
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    let local_ok = !local.is_empty()
        && local.len() <= MAX_LOCAL_LEN
        && local
            .split('.')
            .all(|a| !a.is_empty() && a.chars().all(atext));
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.chars().count() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c == '-' || c.is_alphanumeric())
    };
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2 && labels.iter().all(|l| label_ok(l));
    if !(local_ok && domain_ok) {
        return bad();
    }
    Ok(format!("{local}@{}", domain.to_lowercase()))
}

/// Whether a link may be sent to a customer now: active, and not past its expiry.
pub fn check_link_accepts_requests(
    link: &PaymentLink,
    now: Timestamp,
) -> Result<(), LinkNotActive> {
    match LinkState::of(link, now) {
        LinkState::Active => Ok(()),
        state => Err(LinkNotActive { state }),
    }
}
