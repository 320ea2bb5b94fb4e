//! Keeps webhooks away from the service's own network (SSRF). A URL is checked before sending,
//! and names are checked again at connect time against every address they resolve to, so a
//! name that pointed somewhere public when the URL was saved cannot later be turned to an
//! internal address (DNS rebinding).

use std::fmt;
use std::net::SocketAddr;

use pay_domain::webhooks::{is_forbidden_ip, parse_target};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::Url;

/// A resolution the guard refused. Its message starts with `refused target:` so the transport
/// can tell it from an ordinary DNS failure and report it as such.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedTarget(pub String);

impl fmt::Display for RefusedTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused target: {}", self.0)
    }
}

impl std::error::Error for RefusedTarget {}

/// The resolver the webhook client connects through. Refuses the whole name when ANY address
/// is forbidden: picking the allowed ones would let an attacker's DNS answer mix a public
/// address with an internal one and win whenever the client falls back to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardedResolver {
    /// Development and tests only: lets names resolve to loopback and private addresses.
    pub allow_private: bool,
}

impl GuardedResolver {
    /// Resolves `host` and applies the guard; what `Resolve::resolve` does, without reqwest's
    /// types.
    pub async fn lookup(
        &self,
        host: &str,
    ) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
        // Port 0: the connector puts the URL's port on every address it gets back.
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
        if addrs.is_empty() {
            return Err(format!("{host} resolves to no address").into());
        }
        Ok(screen(host, addrs, self.allow_private)?)
    }
}

/// The guard's decision on one DNS answer: all of it, or none of it.
fn screen(
    host: &str,
    addrs: Vec<SocketAddr>,
    allow_private: bool,
) -> Result<Vec<SocketAddr>, RefusedTarget> {
    if !allow_private {
        if let Some(bad) = addrs.iter().find(|a| is_forbidden_ip(a.ip())) {
            return Err(RefusedTarget(format!(
                "{host} resolves to a forbidden address ({})",
                bad.ip()
            )));
        }
    }
    Ok(addrs)
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = *self;
        Box::pin(async move {
            let addrs = guard.lookup(name.as_str()).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Parses and checks a webhook URL before any connection, with the domain's one parse and
/// rules (`pay_domain::webhooks::parse_target`), the same the URL met when it was saved: the
/// connection goes to the host that parse judged.
pub(crate) fn parse_checked(url: &str, allow_private: bool) -> Result<Url, String> {
    parse_target(url, allow_private).map_err(|refusal| refusal.to_string())
}

/// See [`parse_checked`]; the error says why, without echoing the URL.
pub fn check_url(url: &str, allow_private: bool) -> Result<(), String> {
    parse_checked(url, allow_private).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_https_urls_pass() {
        for url in [
            "https://hooks.shop.example/pay",
            "https://hooks.shop.example:8443/pay?x=1#f",
            "https://93.184.216.34/hook",
            "https://[2606:4700:4700::1111]/hook",
            "https://[::ffff:8.8.8.8]/hook",
        ] {
            assert_eq!(check_url(url, false), Ok(()), "{url}");
        }
    }

    #[test]
    fn refused_without_allow_private() {
        for url in [
            "http://hooks.shop.example/pay",
            "ftp://hooks.shop.example/",
            "file:///etc/passwd",
            "https://user:pw@hooks.shop.example/",
            "https://user@hooks.shop.example/",
            "https://:pw@hooks.shop.example/",
            "https://127.0.0.1/",
            "https://127.0.0.1:8443/hook",
            "https://10.1.2.3/",
            "https://192.168.0.10/",
            "https://100.64.0.1/",
            "https://0.0.0.0/",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/",
            "https://[::]/",
            "https://[::ffff:127.0.0.1]/",
            "https://[::ffff:169.254.169.254]/",
            "https://[fd00::1]/",
            "https://[fe80::1]/",
            // Other spellings of 127.0.0.1 that a naive string check would miss.
            "https://2130706433/",
            "https://0x7f.0.0.1/",
            "https://127.1/",
            "https://0177.0.0.1/",
            // Trailing dots, empty labels, and IPv4 in other IPv6 transition forms.
            "https://127.0.0.1./",
            "https://127.0.0.1../",
            "https://127.0.0.1.../hook",
            "https://localhost../",
            "https://hooks..shop.example/",
            "https://[::ffff:0:127.0.0.1]/",
            "https://[::ffff:0:a9fe:a9fe]/latest",
            "https://[64:ff9b:1::a00:1]/",
            "https://[64:ff9b:1:7f00:1::]/",
            "not a url",
        ] {
            assert!(check_url(url, false).is_err(), "{url} must be refused");
        }
    }

    #[test]
    fn allow_private_opens_http_and_private_but_not_user_info() {
        for url in [
            "http://127.0.0.1:9000/hook",
            "https://[::1]/",
            "http://localhost:3000/",
        ] {
            assert_eq!(check_url(url, true), Ok(()), "{url}");
        }
        assert!(check_url("https://u:p@127.0.0.1/", true).is_err());
        assert!(check_url("ftp://127.0.0.1/", true).is_err());
    }

    #[test]
    fn errors_say_why() {
        assert!(check_url("http://x.example/", false)
            .unwrap_err()
            .contains("https only"));
        assert!(check_url("https://u:p@x.example/", false)
            .unwrap_err()
            .contains("user info"));
        let e = check_url("https://[::ffff:127.0.0.1]/", false).unwrap_err();
        assert!(e.contains("forbidden"), "{e}");
    }

    #[tokio::test]
    async fn resolver_refuses_names_of_private_addresses() {
        let guard = GuardedResolver {
            allow_private: false,
        };
        let e = guard.lookup("localhost").await.unwrap_err();
        assert!(e.to_string().starts_with("refused target: "), "{e}");
        assert!(e.downcast_ref::<RefusedTarget>().is_some());
        // Through the trait reqwest calls.
        let via_trait = guard.resolve("localhost".parse().unwrap()).await;
        assert!(via_trait.is_err());
        // The same name passes when private targets are allowed, so the refusal above is the
        // guard's and not a resolution failure.
        let open = GuardedResolver {
            allow_private: true,
        };
        let addrs: Vec<_> = open
            .resolve("localhost".parse().unwrap())
            .await
            .unwrap()
            .collect();
        assert!(
            !addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()),
            "{addrs:?}"
        );
    }

    #[tokio::test]
    async fn resolver_refuses_if_any_address_is_forbidden() {
        // A literal passed as a name resolves to itself: a stand-in for a DNS answer.
        let guard = GuardedResolver {
            allow_private: false,
        };
        for host in [
            "127.0.0.1",
            "169.254.169.254",
            "::1",
            "::ffff:10.0.0.1",
            "::ffff:0:127.0.0.1",
            "64:ff9b:1::a00:1",
        ] {
            let e = guard.lookup(host).await.unwrap_err();
            assert!(e.to_string().starts_with("refused target: "), "{host}: {e}");
        }
        assert!(
            guard.lookup("8.8.8.8").await.is_ok(),
            "public addresses pass"
        );
    }

    #[test]
    fn one_forbidden_address_refuses_the_whole_answer() {
        let a = |s: &str| -> SocketAddr { s.parse().unwrap() };
        let public = vec![a("93.184.216.34:0"), a("[2606:4700:4700::1111]:0")];
        assert_eq!(screen("x.example", public.clone(), false), Ok(public));
        for mixed in [
            vec![a("93.184.216.34:0"), a("10.0.0.5:0")],
            vec![a("10.0.0.5:0"), a("93.184.216.34:0")],
            vec![
                a("93.184.216.34:0"),
                a("[2606:4700:4700::1111]:0"),
                a("[::ffff:169.254.169.254]:0"),
            ],
        ] {
            let e = screen("x.example", mixed.clone(), false).unwrap_err();
            assert!(
                e.to_string().starts_with("refused target: x.example"),
                "{e}"
            );
            assert_eq!(screen("x.example", mixed.clone(), true), Ok(mixed));
        }
    }
}
