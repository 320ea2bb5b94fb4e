//! Who receives an event, where, and with which signing secret; and which addresses a webhook
//! may never reach (the SSRF table, checked when a URL is saved and again at connect time).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use time::Duration;
use url::{Host, Url};

use crate::kernel::error::FieldError;
use crate::kernel::ids::CompanyId;
use crate::kernel::secret::{SealedSecret, Secret};
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;

/// Signing secrets are `whsec_` plus this many base62 characters (about 256 random bits).
pub const SECRET_RANDOM_LEN: usize = 43;
pub const SECRET_PREFIX: &str = "whsec_";
/// After a rotation the previous secret still signs (a second `v1=`) for this long.
pub const ROTATION_GRACE: Duration = Duration::hours(24);

/// The owner of a callback (spec, Events: three owners; grant subscriptions come with OAuth).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallbackKind {
    /// The company payment callback of the developer settings (API-key integrations).
    CompanyPayment,
    /// The legacy shared callback; used only when no company payment callback is set.
    LegacyShared,
    /// The per-link `webhookUrl` of an anonymous link.
    AnonymousLink,
    /// An OAuth grant's webhook subscription (the OAuth work fills this in).
    Grant,
}

impl CallbackKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CallbackKind::CompanyPayment => "company_payment",
            CallbackKind::LegacyShared => "legacy_shared",
            CallbackKind::AnonymousLink => "anonymous_link",
            CallbackKind::Grant => "grant",
        }
    }

    pub fn parse(s: &str) -> Option<CallbackKind> {
        [
            CallbackKind::CompanyPayment,
            CallbackKind::LegacyShared,
            CallbackKind::AnonymousLink,
            CallbackKind::Grant,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// A signing secret as stored: sealed, plus what reads may show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSigningSecret {
    pub sealed: SealedSecret,
    pub last4: String,
    pub created_at: Timestamp,
}

/// A company-level callback (payment or legacy shared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompanyCallback {
    pub company_id: CompanyId,
    pub kind: CallbackKind,
    pub url: String,
    pub secret: StoredSigningSecret,
    /// The secret before the last rotation, and until when it still signs.
    pub previous: Option<(StoredSigningSecret, Timestamp)>,
    pub updated_at: Timestamp,
    /// Starts at 1 and grows by one with each save (compare-and-set).
    pub version: u64,
}

impl CompanyCallback {
    /// The secrets that sign a delivery attempted at `now`: the current one, and the previous
    /// one while its grace period lasts.
    pub fn live_secrets(&self, now: Timestamp) -> Vec<&StoredSigningSecret> {
        let mut v = vec![&self.secret];
        if let Some((prev, until)) = &self.previous {
            if *until > now {
                v.push(prev);
            }
        }
        v
    }

    /// Associated data binding a sealed secret to its row, so a ciphertext copied to another
    /// company's row does not open.
    pub fn aad(company: CompanyId, kind: CallbackKind) -> String {
        format!("webhook_callbacks:{company}:{}", kind.as_str())
    }
}

/// The per-link callback of an anonymous link, keyed by the link's uid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkWebhook {
    pub link_uid: String,
    pub url: String,
    pub secret: StoredSigningSecret,
}

impl LinkWebhook {
    /// Associated data binding the sealed secret to its link.
    pub fn aad(link_uid: &str) -> String {
        format!("link_webhooks:{link_uid}")
    }
}

/// A new signing secret from a random base62 string of `SECRET_RANDOM_LEN` characters.
pub fn signing_secret(random: &str) -> Secret {
    Secret::new(format!("{SECRET_PREFIX}{random}"))
}

/// The last four characters, which reads may show.
pub fn last4(secret: &Secret) -> String {
    let s = secret.expose();
    s[s.len().saturating_sub(4)..].to_owned()
}

/// Whether a webhook may never be sent to this address: loopback, private, link-local
/// (the cloud metadata address included), CGNAT, unspecified, broadcast, multicast,
/// documentation and reserved ranges, in IPv4 and IPv6, and IPv6 forms embedding such an IPv4
/// address (mapped, compatible, NAT64, 6to4). In IPv6 only global unicast (`2000::/3`) can
/// pass, besides the mapped, compatible and well-known NAT64 forms of a public IPv4 address;
/// the IPv4-translated `::ffff:0:0:0/96` and the local-use NAT64 `64:ff9b:1::/48` never do.
pub fn is_forbidden_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_forbidden_v4(v4),
        IpAddr::V6(v6) => is_forbidden_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn is_forbidden_v4(ip: Ipv4Addr) -> bool {
    const NETS: &[([u8; 4], u32)] = &[
        ([0, 0, 0, 0], 8),       // "this network"
        ([10, 0, 0, 0], 8),      // private
        ([100, 64, 0, 0], 10),   // carrier-grade NAT
        ([127, 0, 0, 0], 8),     // loopback
        ([169, 254, 0, 0], 16),  // link-local, cloud metadata
        ([172, 16, 0, 0], 12),   // private
        ([192, 0, 0, 0], 24),    // IETF protocol assignments
        ([192, 0, 2, 0], 24),    // documentation
        ([192, 88, 99, 0], 24),  // 6to4 relay anycast
        ([192, 168, 0, 0], 16),  // private
        ([198, 18, 0, 0], 15),   // benchmarking
        ([198, 51, 100, 0], 24), // documentation
        ([203, 0, 113, 0], 24),  // documentation
        ([224, 0, 0, 0], 4),     // multicast
        ([240, 0, 0, 0], 4),     // reserved, broadcast
    ];
    NETS.iter().any(|(net, p)| in_v4(ip, *net, *p))
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix)
    };
    (u128::from(ip) & mask) == (u128::from(Ipv6Addr::from(net)) & mask)
}

fn is_forbidden_v6(ip: Ipv6Addr) -> bool {
    let bits = u128::from(ip);
    // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d: judge the IPv4 address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_forbidden_v4(v4);
    }
    if bits >> 32 == 0 {
        // ::, ::1 and the deprecated compatible form.
        return bits <= 1 || is_forbidden_v4(Ipv4Addr::from(bits as u32));
    }
    // NAT64 64:ff9b::/96 (the well-known prefix) embeds an IPv4 address in its last 32 bits.
    if in_v6(ip, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96) {
        return is_forbidden_v4(Ipv4Addr::from(bits as u32));
    }
    // Only 2000::/3 is global unicast. Everything else is reserved, unique local, link-local
    // or multicast, and reaches nothing public: among them the rest of ::/8, with the
    // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765) and the local-use NAT64 64:ff9b:1::/48
    // (RFC 8215, the IPv4 address wherever RFC 6052 puts it).
    if !in_v6(ip, [0x2000, 0, 0, 0, 0, 0, 0, 0], 3) {
        return true;
    }
    // 6to4 2002::/16 embeds one in bits 16..48.
    if in_v6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        return is_forbidden_v4(Ipv4Addr::from((bits >> 80) as u32));
    }
    // The special ranges inside 2000::/3.
    const NETS: &[([u16; 8], u32)] = &[
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23), // IETF protocol assignments (Teredo etc.)
        ([0x2001, 0x0db8, 0, 0, 0, 0, 0, 0], 32), // documentation
        ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20), // documentation (RFC 9637)
    ];
    NETS.iter().any(|(net, p)| in_v6(ip, *net, *p))
}

/// A webhook URL refused by [`parse_target`]. `Display` says why without echoing the URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetRefusal {
    /// Not a URL a client can send to (the parser's reason).
    Invalid(String),
    /// A scheme other than `https` (or `http` when private targets are allowed).
    Scheme(String),
    /// `user:password@` in the URL.
    UserInfo,
    /// A literal address in a forbidden range, in whatever spelling the URL gave it.
    Forbidden(IpAddr),
    /// A name with an empty label (`127.0.0.1..`, `a..b`).
    MalformedName(String),
}

impl fmt::Display for TargetRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetRefusal::Invalid(why) => write!(f, "invalid url: {why}"),
            TargetRefusal::Scheme(s) => write!(f, "scheme {s} is not allowed (https only)"),
            TargetRefusal::UserInfo => f.write_str("user info in the url is not allowed"),
            TargetRefusal::Forbidden(ip) => write!(f, "{ip} is a forbidden address"),
            TargetRefusal::MalformedName(h) => write!(f, "{h} is not a valid host name"),
        }
    }
}

/// The one parse of a webhook URL, shared by the check when it is saved and the check before
/// each connection: the WHATWG URL parser (the one the HTTP client sends with), so the host
/// judged is the host connected to, whatever its spelling (`2130706433`, `0x7f.1`, `127.1`,
/// a trailing dot, percent-escapes and full-width digits are all read as the client reads
/// them). Refused: a scheme other than `https` (`http` too when private targets are allowed),
/// user info, and, unless private targets are allowed, a literal address in a forbidden range
/// or a name with an empty label. A name is judged again at connect time by every address it
/// resolves to; the resolver never sees a literal address, so this is its only check.
pub fn parse_target(url: &str, allow_private: bool) -> Result<Url, TargetRefusal> {
    let parsed = Url::parse(url).map_err(|e| TargetRefusal::Invalid(e.to_string()))?;
    match parsed.scheme() {
        "https" => {}
        "http" if allow_private => {}
        other => return Err(TargetRefusal::Scheme(other.to_owned())),
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(TargetRefusal::UserInfo);
    }
    let host = parsed
        .host()
        .ok_or_else(|| TargetRefusal::Invalid("url has no host".into()))?;
    if !allow_private {
        match host {
            Host::Ipv4(v4) if is_forbidden_v4(v4) => {
                return Err(TargetRefusal::Forbidden(IpAddr::V4(v4)))
            }
            Host::Ipv6(v6) if is_forbidden_v6(v6) => {
                return Err(TargetRefusal::Forbidden(IpAddr::V6(v6)))
            }
            Host::Domain(name) if is_malformed_name(name) => {
                return Err(TargetRefusal::MalformedName(name.to_owned()))
            }
            _ => {}
        }
    }
    Ok(parsed)
}

/// Whether a host name has an empty label once one trailing dot (the fully qualified spelling
/// of the same name: "localhost." is localhost) is set aside: `127.0.0.1..`, `.example`,
/// `a..b`. URL parsers and resolvers read such names differently, so none is a target.
fn is_malformed_name(host: &str) -> bool {
    let name = host.strip_suffix('.').unwrap_or(host);
    name.is_empty() || name.split('.').any(str::is_empty)
}

/// Why a host (as written in a URL, an IPv6 literal without its brackets) may not be a
/// target, or `None` when it may: a name with an empty label, `localhost` and its subdomains,
/// or a literal address in a forbidden range in any spelling the URL parser reads (the same
/// parse as [`parse_target`]).
pub fn host_refusal(host: &str) -> Option<&'static str> {
    let bracketed = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    let Ok(url) = Url::parse(&format!("https://{bracketed}/")) else {
        return Some("must have a valid host");
    };
    match url.host() {
        Some(Host::Ipv4(v4)) => is_forbidden_v4(v4).then_some(PRIVATE_HOST),
        Some(Host::Ipv6(v6)) => is_forbidden_v6(v6).then_some(PRIVATE_HOST),
        Some(Host::Domain(name)) if is_malformed_name(name) => Some("must have a valid host"),
        Some(Host::Domain(name)) if is_localhost(name) => Some(PRIVATE_HOST),
        _ => None,
    }
}

/// `localhost` and its subdomains, in any letter case, with or without the trailing dot.
fn is_localhost(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// Why a callback's host is refused when it names a loopback, private or reserved address.
const PRIVATE_HOST: &str = "must be a public address";

/// What a refused callback URL's message adds: how a developer reaches a receiver on their own
/// machine (the switch is the operator's; production keeps it off).
pub const PRIVATE_TARGETS_HINT: &str = "(to reach a receiver on this machine or a private network \
     in development, start the server with PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS=true)";

/// Checks a callback URL when it is saved: the URL rules of every stored URL (at most 2,048
/// characters, no user info, a host), then [`parse_target`], the same parse and rules the
/// connection is checked with; and, at save time only, no `localhost` name (a name is
/// otherwise left to the connect-time check of the addresses it resolves to).
pub fn validate_callback_url(
    field: &str,
    url: &str,
    allow_private: bool,
) -> Result<(), FieldError> {
    validate::http_url(field, url)?;
    let private = || {
        FieldError::new(
            field,
            format!("{field} {PRIVATE_HOST} {PRIVATE_TARGETS_HINT}"),
        )
    };
    let parsed = parse_target(url, allow_private).map_err(|refusal| match refusal {
        TargetRefusal::Scheme(_) => FieldError::new(
            field,
            format!("{field} must use https {PRIVATE_TARGETS_HINT}"),
        ),
        TargetRefusal::UserInfo => {
            FieldError::new(field, format!("{field} must not contain user info"))
        }
        TargetRefusal::Forbidden(_) => private(),
        TargetRefusal::Invalid(_) | TargetRefusal::MalformedName(_) => {
            FieldError::new(field, format!("{field} must have a valid host"))
        }
    })?;
    match parsed.host() {
        Some(Host::Domain(name)) if !allow_private && is_localhost(name) => Err(private()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn forbidden_ranges() {
        for s in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "10.255.255.255",
            "100.64.0.1",
            "100.127.255.255",
            "127.0.0.1",
            "127.1.2.3",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "2002:0a00:0001::1",
            "100::1",
            "2001:db8::1",
            "2001::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
        ] {
            assert!(is_forbidden_ip(ip(s)), "{s} must be refused");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for s in [
            "1.1.1.1",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.169.0.1",
            "93.184.216.34",
            "2606:4700:4700::1111",
            "2a00:1450:4001:81c::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:0808:0808::1",
        ] {
            assert!(!is_forbidden_ip(ip(s)), "{s} is public");
        }
    }

    #[test]
    fn ipv4_in_other_ipv6_transition_forms_is_refused() {
        for s in [
            // IPv4-translated (RFC 2765, SIIT) ::ffff:0:a.b.c.d: the whole range.
            "::ffff:0:127.0.0.1",
            "::ffff:0:7f00:1",
            "::ffff:0:10.0.0.1",
            "::ffff:0:169.254.169.254",
            "::ffff:0:8.8.8.8",
            "::ffff:0:0:0",
            // Local-use NAT64 (RFC 8215) 64:ff9b:1::/48, wherever RFC 6052 puts the IPv4.
            "64:ff9b:1::",
            "64:ff9b:1::7f00:1",
            "64:ff9b:1::10.0.0.1",
            "64:ff9b:1:7f00:1::",
            "64:ff9b:1:ffff:ffff::8.8.8.8",
            // The rest of ::/8 is reserved: nothing public lives there.
            "64:ff9b:2::1",
            "64:ff9b:0:0:1::7f00:1",
            "::1:0:0:0",
            "0:0:0:1::1",
            "ff:ffff::1",
            // Outside global unicast 2000::/3: reserved (0100::/8 beside the discard-only
            // 100::/64, 4000::/2 ...), SRv6 segment ids 5f00::/16 (RFC 9602).
            "100:0:0:1::1",
            "1ff::1",
            "4000::1",
            "5f00::1",
            "e000::1",
            // Documentation (RFC 9637).
            "3fff::1",
            "3fff:fff:ffff::1",
        ] {
            assert!(is_forbidden_ip(ip(s)), "{s} must be refused");
        }
        // Still public: the well-known NAT64 prefix and the mapped form of public addresses,
        // and addresses just outside the new ranges.
        for s in [
            "64:ff9b::8.8.8.8",
            "::ffff:8.8.8.8",
            "2000::1",
            "2c0f:fb50:4003::1",
            "3ffe:ffff::1",
            "3fff:1000::1",
        ] {
            assert!(!is_forbidden_ip(ip(s)), "{s} is public");
        }
    }

    #[test]
    fn trailing_dots_and_transition_forms_are_refused_when_saving() {
        let passed: Vec<&str> = [
            "https://127.0.0.1./hook",
            "https://127.0.0.1../hook",
            "https://127.0.0.1.../hook",
            "https://127.1./hook",
            "https://0x7f000001./hook",
            "https://localhost./hook",
            "https://localhost../hook",
            "https://LOCALHOST./hook",
            "https://api.localhost./hook",
            "https://api.localhost../hook",
            "https://.127.0.0.1/hook",
            "https://127..0.0.1/hook",
            "https://hooks..shop.example/pay",
            "https://hooks.shop.example../pay",
            "https://169.254.169.254.:8443/latest",
            "https://[::ffff:0:127.0.0.1]/hook",
            "https://[::ffff:0:7f00:1]:8443/hook",
            "https://[::ffff:0:a9fe:a9fe]/latest",
            "https://[64:ff9b:1::a00:1]/hook",
            "https://[64:ff9b:1::]/hook",
            "https://[64:ff9b:1:7f00:1::]/hook",
        ]
        .into_iter()
        .filter(|bad| {
            !matches!(
                validate_callback_url("url", bad, false),
                Err(FieldError { ref field, .. }) if field == "url"
            )
        })
        .collect();
        assert_eq!(passed, Vec::<&str>::new(), "all of these must be refused");
        // One trailing dot is the fully qualified spelling of a public name: still fine.
        for good in [
            "https://hooks.shop.example./pay",
            "https://93.184.216.34./hook",
            "https://[64:ff9b::808:808]/hook",
        ] {
            assert_eq!(validate_callback_url("url", good, false), Ok(()), "{good}");
        }
    }

    #[test]
    fn url_rules_when_saving() {
        assert!(validate_callback_url("url", "https://hooks.shop.example/pay", false).is_ok());
        assert!(validate_callback_url("url", "https://93.184.216.34/hook", false).is_ok());
        for bad in [
            "http://hooks.shop.example/pay",
            "https://user:pw@hooks.shop.example/",
            "https://127.0.0.1/hook",
            "https://[::1]/hook",
            "https://[::ffff:10.0.0.1]:8443/hook",
            "https://169.254.169.254/latest/meta-data",
            "https://localhost:8443/hook",
            "https://localhost./hook",
            "https://api.localhost/hook",
            "https://127.1/hook",
            "https://2130706433/hook",
            "https://0x7f.0.0.1/hook",
            "https://0x7f000001/hook",
            "https://0177.0.0.1/hook",
            "https://10.1/hook",
            "https://0xa9fea9fe/hook",
            "ftp://x.example/",
            // Spellings only the URL parser reads as an address: judged as it reads them.
            "https://127.0.0.1%2e/hook",
            "https://%31%32%37.0.0.1/hook",
            "https://\u{ff11}\u{ff12}\u{ff17}.0.0.1/hook",
        ] {
            let e = validate_callback_url("url", bad, false).unwrap_err();
            assert!(
                matches!(e, FieldError { ref field, .. } if field == "url"),
                "{bad}"
            );
        }
        // Development and tests: http and private targets allowed, user info still not.
        assert!(validate_callback_url("url", "http://127.0.0.1:9000/hook", true).is_ok());
        assert!(validate_callback_url("url", "https://u:p@127.0.0.1/", true).is_err());
    }

    #[test]
    fn the_connection_is_checked_with_the_same_parse() {
        // What the save refuses for its address, the connect-time check refuses too, and a
        // name is left to the resolver there.
        for bad in [
            "https://2130706433/",
            "https://127.0.0.1%2e/",
            "https://[::ffff:0:a9fe:a9fe]/",
            "https://127.0.0.1../",
        ] {
            assert!(validate_callback_url("url", bad, false).is_err(), "{bad}");
            assert!(parse_target(bad, false).is_err(), "{bad}");
        }
        assert_eq!(
            parse_target("https://0x7f.1/", false),
            Err(TargetRefusal::Forbidden("127.0.0.1".parse().unwrap()))
        );
        assert!(parse_target("https://localhost/", false).is_ok());
        assert_eq!(
            parse_target("https://hooks.shop.example/pay", false)
                .unwrap()
                .host_str(),
            Some("hooks.shop.example")
        );
    }

    #[test]
    fn secrets_and_rotation() {
        let s = signing_secret("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ");
        assert!(s.expose().starts_with("whsec_"));
        assert_eq!(s.expose().len(), 6 + SECRET_RANDOM_LEN);
        assert_eq!(last4(&s), "NOPQ");
        let t = |ms| Timestamp::from_unix_millis(ms).unwrap();
        let stored = |k: &str| StoredSigningSecret {
            sealed: SealedSecret {
                key_id: "k1".into(),
                sealed: k.into(),
            },
            last4: "xxxx".into(),
            created_at: t(0),
        };
        let cb = CompanyCallback {
            company_id: CompanyId(uuid::Uuid::nil()),
            kind: CallbackKind::CompanyPayment,
            url: "https://x.example".into(),
            secret: stored("new"),
            previous: Some((stored("old"), t(1000))),
            updated_at: t(0),
            version: 1,
        };
        assert_eq!(cb.live_secrets(t(999)).len(), 2);
        assert_eq!(cb.live_secrets(t(1000)).len(), 1);
        assert_eq!(cb.live_secrets(t(1000))[0].sealed.sealed, "new");
        for k in [
            "company_payment",
            "legacy_shared",
            "anonymous_link",
            "grant",
        ] {
            assert_eq!(CallbackKind::parse(k).unwrap().as_str(), k);
        }
        assert!(!format!("{:?}", stored("secretbytes").sealed).contains("secretbytes"));
    }
}
