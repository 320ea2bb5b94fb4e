//! The field rules of a native registration body (the spec's "Native registration body"),
//! pure: the route reads the body, these check and normalise it before any proof or row is
//! looked at. Which template `platform` names, and the DPoP proofs, are checked after.

use crate::installations::model::is_platform_id;
use crate::kernel::error::FieldError;
use crate::kernel::validate;
use crate::webhooks::target::host_refusal;

/// The path every installation's redirect URI has on its site.
pub const CALLBACK_PATH: &str = "/pay/oauth/callback";
/// Longest `platformVersion`, `pluginVersion`.
pub const MAX_VERSION_LEN: usize = 64;
/// Longest `siteName`.
pub const MAX_SITE_NAME_LEN: usize = 200;

/// A registration body as read (required fields per the contract; the rest optional).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrationBody {
    pub platform: String,
    pub registration_id: String,
    pub site_url: String,
    pub redirect_uri: String,
    pub dpop_jkt: String,
    pub platform_version: Option<String>,
    pub plugin_version: Option<String>,
    pub site_name: Option<String>,
}

/// A body whose every field passed: the site as its normalised origin (lower-case host, no
/// default port) and the redirect URI built from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedRegistration {
    pub platform: String,
    pub registration_id: String,
    pub site_url: String,
    pub redirect_uri: String,
    pub dpop_jkt: String,
    pub platform_version: Option<String>,
    pub plugin_version: Option<String>,
    pub site_name: Option<String>,
}

const B64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Whether `value` is the canonical unpadded base64url spelling of exactly 32 bytes: 43
/// characters of the URL-safe alphabet whose last one carries zero padding bits (43 x 6 = 258
/// bits for 256: the last character's two low bits must be 0, else another string decodes to
/// the same bytes).
pub fn is_canonical_b64url_32(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() != 43 {
        return false;
    }
    let index = |b: u8| B64URL.iter().position(|&c| c == b);
    bytes.iter().all(|&b| index(b).is_some()) && index(bytes[42]).is_some_and(|i| i & 0b11 == 0)
}

/// The normalised origin of `value` when it is exactly one https origin: no user info, path
/// (not even `/`), query or fragment; the host lower-cased, port 443 dropped. A loopback,
/// private or reserved host is refused unless `allow_private` (the operator's private-targets
/// switch, for development).
pub fn https_origin(field: &str, value: &str, allow_private: bool) -> Result<String, FieldError> {
    let bad = |why: &str| FieldError::new(field, format!("{field} {why}"));
    validate::http_url(field, value)?;
    let Some(authority) = value.strip_prefix("https://") else {
        return Err(bad("must be an https origin"));
    };
    if authority.contains(['/', '?', '#']) {
        return Err(bad(
            "must be exactly an origin (https://host[:port]): no path, query or fragment",
        ));
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (h, rest) = v6
                .split_once(']')
                .ok_or_else(|| bad("must have a valid host"))?;
            (
                format!("[{}]", h.to_ascii_lowercase()),
                rest.strip_prefix(':'),
            )
        }
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
            None => (authority.to_ascii_lowercase(), None),
        },
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Some(why) = host_refusal(bare) {
        let private = why != "must have a valid host";
        if !(private && allow_private) {
            return Err(bad(why));
        }
    }
    Ok(match port {
        None | Some("443") => format!("https://{host}"),
        Some(p) => format!("https://{host}:{p}"),
    })
}

fn optional_text(field: &str, value: &Option<String>, max: usize) -> Result<(), FieldError> {
    match value {
        Some(v) => validate::text(field, v, max, false),
        None => Ok(()),
    }
}

impl RegistrationBody {
    /// Checks every field in the order of the spec's table; the first wrong one is the error.
    pub fn check(self, allow_private: bool) -> Result<CheckedRegistration, FieldError> {
        if !is_platform_id(&self.platform) {
            return Err(FieldError::new("platform", "unknown platform"));
        }
        if !is_canonical_b64url_32(&self.registration_id) {
            return Err(FieldError::new(
                "registrationId",
                "registrationId must be the canonical unpadded base64url of 32 random bytes (43 characters)",
            ));
        }
        let site_url = https_origin("siteUrl", &self.site_url, allow_private)?;
        let redirect_uri = format!("{site_url}{CALLBACK_PATH}");
        let given = self
            .redirect_uri
            .strip_suffix(CALLBACK_PATH)
            .and_then(|origin| https_origin("redirectUri", origin, allow_private).ok());
        if given.as_deref() != Some(site_url.as_str()) {
            return Err(FieldError::new(
                "redirectUri",
                format!(
                    "redirectUri must be exactly the siteUrl origin followed by {CALLBACK_PATH}"
                ),
            ));
        }
        if !is_canonical_b64url_32(&self.dpop_jkt) {
            return Err(FieldError::new(
                "dpopJkt",
                "dpopJkt must be the base64url SHA-256 JWK thumbprint of the installation's key (43 characters)",
            ));
        }
        optional_text("platformVersion", &self.platform_version, MAX_VERSION_LEN)?;
        optional_text("pluginVersion", &self.plugin_version, MAX_VERSION_LEN)?;
        optional_text("siteName", &self.site_name, MAX_SITE_NAME_LEN)?;
        Ok(CheckedRegistration {
            platform: self.platform,
            registration_id: self.registration_id,
            site_url,
            redirect_uri,
            dpop_jkt: self.dpop_jkt,
            platform_version: self.platform_version,
            plugin_version: self.plugin_version,
            site_name: self.site_name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "q0pJd3W8yFz4c3vV1b9Xo5nT7kLmR2sAeGhUiYwPxQA";
    const JKT: &str = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs";

    fn body() -> RegistrationBody {
        RegistrationBody {
            platform: "woocommerce".into(),
            registration_id: ID.into(),
            site_url: "https://Shop.Example".into(),
            redirect_uri: "https://shop.example/pay/oauth/callback".into(),
            dpop_jkt: JKT.into(),
            platform_version: Some("6.5.2".into()),
            plugin_version: Some("1.0.0".into()),
            site_name: Some("My Shop".into()),
        }
    }

    fn field(b: RegistrationBody, allow_private: bool) -> String {
        b.check(allow_private).unwrap_err().field
    }

    /// Each of `bads`, set into a good body by `set`, is refused on `name`.
    fn refused(name: &str, bads: &[&str], set: impl Fn(&mut RegistrationBody, String)) {
        for bad in bads {
            let mut b = body();
            set(&mut b, bad.to_string());
            assert_eq!(field(b, false), name, "{bad}");
        }
    }

    #[test]
    fn a_good_body_is_normalised() {
        let c = body().check(false).unwrap();
        assert_eq!(c.site_url, "https://shop.example");
        assert_eq!(c.redirect_uri, "https://shop.example/pay/oauth/callback");
        let checked = |site: &str, redirect: &str| {
            let b = RegistrationBody {
                site_url: site.into(),
                redirect_uri: redirect.into(),
                ..body()
            };
            b.check(false).unwrap()
        };
        let cb = "/pay/oauth/callback";
        let with_port = checked(
            "https://shop.example:443",
            &format!("https://shop.example{cb}"),
        );
        assert_eq!(with_port.site_url, "https://shop.example");
        let other = checked(
            "https://shop.example:8443",
            &format!("https://shop.example:8443{cb}"),
        );
        assert_eq!(other.redirect_uri, format!("https://shop.example:8443{cb}"));
        let minimal = RegistrationBody {
            platform_version: None,
            plugin_version: None,
            site_name: None,
            ..body()
        };
        assert!(minimal.check(false).is_ok());
    }

    #[test]
    fn the_registration_id_is_canonical_base64url_of_32_bytes() {
        assert!(is_canonical_b64url_32(ID));
        // The last character carries two padding bits: `A`, `E`, `I`... (index % 4 == 0) only.
        for last in ['B', 'C', 'D', 'F', 'R', '_', '-'] {
            let id = format!("{}{last}", &ID[..42]);
            assert!(!is_canonical_b64url_32(&id), "{id}");
            let b = RegistrationBody {
                registration_id: id,
                ..body()
            };
            assert_eq!(field(b, false), "registrationId");
        }
        let (longer, padded) = (format!("{ID}A"), format!("{}=", &ID[..42]));
        let (plus, slash) = (format!("{}+A", &ID[..41]), format!("{}/A", &ID[..41]));
        refused(
            "registrationId",
            &[&ID[..42], &longer, &padded, &plus, &slash, ""],
            |b, v| b.registration_id = v,
        );
    }

    #[test]
    fn the_site_is_exactly_one_public_https_origin() {
        let bads = [
            "http://shop.example",
            "https://user@shop.example",
            "https://user:pw@shop.example",
            "https://shop.example/",
            "https://shop.example/shop",
            "https://shop.example?x=1",
            "https://shop.example#top",
            "https://shop.example https://other.example",
            "shop.example",
            "https://",
            "https://127.0.0.1",
            "https://localhost",
            "https://10.0.0.7",
            "https://[::1]",
            "https://192.168.1.2:8443",
        ];
        refused("siteUrl", &bads, |b, v| b.site_url = v);
        // The private-targets switch lets a development site on this machine register.
        let local = RegistrationBody {
            site_url: "https://localhost:8443".into(),
            redirect_uri: "https://localhost:8443/pay/oauth/callback".into(),
            ..body()
        };
        assert_eq!(field(local.clone(), false), "siteUrl");
        assert_eq!(
            local.check(true).unwrap().redirect_uri,
            "https://localhost:8443/pay/oauth/callback"
        );
    }

    #[test]
    fn the_redirect_uri_is_the_site_callback_exactly() {
        let bads = [
            "https://shop.example/pay/oauth/callback/",
            "https://shop.example/pay/oauth/other",
            "https://shop.example/wp-admin/pay/oauth/callback",
            "https://shop.example/pay/oauth/callback?x=1",
            "https://shop.example/pay/oauth/callback#x",
            "https://other.example/pay/oauth/callback",
            "https://shop.example:8443/pay/oauth/callback",
            "http://shop.example/pay/oauth/callback",
            "https://evil.example@shop.example/pay/oauth/callback",
            "",
        ];
        refused("redirectUri", &bads, |b, v| b.redirect_uri = v);
        // The default port may be written or not, on either field.
        let b = RegistrationBody {
            redirect_uri: "https://SHOP.example:443/pay/oauth/callback".into(),
            ..body()
        };
        assert!(b.check(false).is_ok());
    }

    #[test]
    fn the_other_fields() {
        let b = RegistrationBody {
            platform: "Woo Commerce".into(),
            ..body()
        };
        assert_eq!(field(b, false), "platform");
        let (longer, padding_bits) = (format!("{JKT}A"), format!("{}B", &JKT[..42]));
        refused("dpopJkt", &["", "abc", &longer, &padding_bits], |b, v| {
            b.dpop_jkt = v
        });
        let b = RegistrationBody {
            site_name: Some("a\u{202e}b".into()),
            ..body()
        };
        assert_eq!(field(b, false), "siteName");
        let b = RegistrationBody {
            plugin_version: Some("1".repeat(65)),
            ..body()
        };
        assert_eq!(field(b, false), "pluginVersion");
        let b = RegistrationBody {
            platform_version: Some(String::new()),
            ..body()
        };
        assert_eq!(field(b, false), "platformVersion");
    }
}
