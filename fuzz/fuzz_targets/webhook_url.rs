//! The webhook URL checks: `validate_callback_url` (when a URL is saved), `parse_target` and
//! `pay_webhooks::check_url` (before each connection). The input is a URL, or after an odd
//! first byte what follows `https://` (to spend the time on hosts). What is saved is sent to;
//! what passes for production passes in development; an accepted URL is https, without user
//! info, with a host no literal-address or name rule refuses (`is_forbidden_ip`,
//! `host_refusal`), and its serialization, parsed again, is the same URL and passes again.
#![no_main]

use std::net::IpAddr;

use libfuzzer_sys::fuzz_target;
use pay_domain::webhooks::{host_refusal, is_forbidden_ip, parse_target, validate_callback_url};
use url::Host;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let url = if mode % 2 == 1 {
        format!("https://{text}")
    } else {
        text.to_owned()
    };
    for private in [false, true] {
        let target = parse_target(&url, private);
        assert_eq!(
            pay_webhooks::check_url(&url, private).is_ok(),
            target.is_ok()
        );
        if validate_callback_url("url", &url, private).is_ok() {
            assert!(target.is_ok(), "saved but refused when sent: {url:?}");
        }
    }
    if validate_callback_url("url", &url, false).is_ok() {
        assert!(validate_callback_url("url", &url, true).is_ok());
    }
    let Ok(parsed) = parse_target(&url, false) else {
        return;
    };
    assert!(parse_target(&url, true).is_ok());
    assert_eq!(parsed.scheme(), "https");
    assert!(parsed.username().is_empty() && parsed.password().is_none());
    let host = parsed.host().expect("an accepted URL has a host");
    match host {
        Host::Ipv4(v4) => assert!(!is_forbidden_ip(IpAddr::V4(v4)), "{url:?}"),
        Host::Ipv6(v6) => assert!(!is_forbidden_ip(IpAddr::V6(v6)), "{url:?}"),
        Host::Domain(_) => {}
    }
    let as_written = match host {
        Host::Ipv4(v4) => v4.to_string(),
        Host::Ipv6(v6) => v6.to_string(),
        Host::Domain(d) => d.to_owned(),
    };
    let saved = validate_callback_url("url", &url, false).is_ok();
    if saved {
        assert_eq!(host_refusal(&as_written), None, "{url:?}");
    }
    let again = parse_target(parsed.as_str(), false).expect("the serialization passes again");
    assert_eq!(again, parsed);
});
