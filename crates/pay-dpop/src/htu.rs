//! `htu` comparison (RFC 9449 section 4.3, step 9): both the proof's `htu` and the request URI
//! the caller built from the configured public origin are reduced to one canonical spelling,
//! then compared byte for byte.
//!
//! What is normalised, following RFC 3986 sections 6.2.2 and 6.2.3: scheme and host case, the
//! default port (`:443` for https, `:80` for http, and an empty port), an empty path (`/`),
//! and the case of percent-encoding hex digits. Query and fragment are dropped from both sides:
//! section 4.3 says to ignore them, and they are not what the proof binds, so a client that
//! leaves its query in `htu` is not refused. What is not normalised, on purpose: dot segments
//! and percent-encoded unreserved characters. Routers disagree on those, and a proof must
//! never match a path that could reach another handler; a literal comparison cannot.

/// The canonical form of an absolute `http` or `https` URI without query and fragment, or
/// `None` when it is not one (relative, another scheme, userinfo, a bad port, characters
/// outside RFC 3986...).
pub(crate) fn normalize(uri: &str) -> Option<String> {
    if !uri.bytes().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    let uri = match uri.find(['?', '#']) {
        Some(end) => &uri[..end],
        None => uri,
    };
    let (scheme, rest) = uri.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "https" => 443,
        "http" => 80,
        _ => return None,
    };
    let (authority, path) = match rest.find('/') {
        Some(slash) => rest.split_at(slash),
        None => (rest, ""),
    };
    let (host, port) = split_host_port(authority)?;
    let mut out = String::with_capacity(uri.len());
    out.push_str(&scheme);
    out.push_str("://");
    out.push_str(&host.to_ascii_lowercase());
    if let Some(port) = port {
        if port != default_port {
            out.push(':');
            out.push_str(&port.to_string());
        }
    }
    if path.is_empty() {
        out.push('/');
    } else {
        push_path(&mut out, path)?;
    }
    Some(out)
}

/// Host and optional port. Userinfo is refused (RFC 9110 section 4.2.4 forbids it in http(s)
/// URIs); an IPv6 literal keeps its brackets; an empty port (`host:`) counts as absent.
fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if authority.contains('@') {
        return None;
    }
    let (host, port) = if authority.starts_with('[') {
        let close = authority.find(']')?;
        let (host, after) = authority.split_at(close + 1);
        let inner = &host[1..host.len() - 1];
        if inner.is_empty()
            || !inner
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        {
            return None;
        }
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        let (host, port) = match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        let reg_name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
        if host.is_empty() || !host.bytes().all(reg_name) {
            return None;
        }
        (host, port)
    };
    let port = match port {
        None | Some("") => None,
        Some(digits) => {
            if digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(digits.parse::<u16>().ok()?)
        }
    };
    Some((host, port))
}

/// Appends a path made of RFC 3986 `pchar`s and slashes, with percent-encodings upper-cased.
fn push_path(out: &mut String, path: &str) -> Option<()> {
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push('%');
            out.push(hex[0].to_ascii_uppercase() as char);
            out.push(hex[1].to_ascii_uppercase() as char);
            i += 3;
            continue;
        }
        // unreserved, sub-delims, then the other pchars and the segment separator.
        let allowed = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || matches!(
                b,
                b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
            )
            || matches!(b, b':' | b'@' | b'/');
        if !allowed {
            return None;
        }
        out.push(b as char);
        i += 1;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn equivalent_spellings_meet() {
        let canonical = Some("https://api.example.com/v1/token".to_owned());
        for uri in [
            "https://api.example.com/v1/token",
            "HTTPS://API.Example.COM/v1/token",
            "https://api.example.com:443/v1/token",
            "https://api.example.com:/v1/token",
            "https://api.example.com/v1/token?x=1&y=2",
            "https://api.example.com/v1/token#frag",
            "https://api.example.com/v1/token?q#f",
        ] {
            assert_eq!(normalize(uri), canonical, "{uri}");
        }
        assert_eq!(normalize("http://h:80"), Some("http://h/".to_owned()));
        assert_eq!(
            normalize("http://h:8080/"),
            Some("http://h:8080/".to_owned())
        );
        assert_eq!(normalize("https://h:80/"), Some("https://h:80/".to_owned()));
        assert_eq!(normalize("http://h:443/"), Some("http://h:443/".to_owned()));
        assert_eq!(normalize("https://h:0443/"), Some("https://h/".to_owned()));
        assert_eq!(
            normalize("https://h/a%2fb"),
            Some("https://h/a%2Fb".to_owned())
        );
        assert_eq!(
            normalize("https://[::1]:8443/x"),
            Some("https://[::1]:8443/x".to_owned())
        );
        assert_eq!(
            normalize("https://[::1]:443/x"),
            Some("https://[::1]/x".to_owned())
        );
    }

    #[test]
    fn paths_are_compared_literally_apart_from_hex_case() {
        assert_ne!(normalize("https://h/Token"), normalize("https://h/token"));
        assert_ne!(
            normalize("https://h/a/../token"),
            normalize("https://h/token")
        );
        assert_ne!(normalize("https://h/%74oken"), normalize("https://h/token"));
        assert_ne!(normalize("https://h/token/"), normalize("https://h/token"));
    }

    #[test]
    fn what_is_not_an_absolute_http_uri_is_refused() {
        for uri in [
            "",
            "/v1/token",
            "//h/v1/token",
            "ftp://h/x",
            "https:/h/x",
            "https://",
            "https:///x",
            "https://user@h/x",
            "https://h:99999/x",
            "https://h:12a/x",
            "https://h:1:2/x",
            "https://h x/",
            "https://h/a b",
            "https://h/a\"b",
            "https://h/a%2",
            "https://h/a%zz",
            "https://h\u{e9}/",
            "https://[::1/x",
            "https://[]/x",
            "https://[::1]x/",
            "https://h\t/",
        ] {
            assert_eq!(normalize(uri), None, "{uri:?}");
        }
    }
}
