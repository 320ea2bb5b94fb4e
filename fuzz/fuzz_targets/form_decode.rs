//! The form decoder (`pay_http::edge::form::decode_form`, over `percent_decode`), two ways:
//! the input as a body: when the strict decoder accepts it, the WHATWG parser of the `url`
//! crate (`form_urlencoded::parse`, lenient) reads the same pairs, and encoding them again
//! decodes to them; and the input as pairs (names and values split at NUL): encoded by
//! `form_urlencoded::Serializer` as a browser does, they decode to exactly themselves.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pay_http::edge::form::{decode_form, percent_decode};

fn encode(pairs: &[(String, String)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}

fuzz_target!(|data: &[u8]| {
    if let Ok(pairs) = decode_form(data) {
        let lenient: Vec<(String, String)> = form_urlencoded::parse(data)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        assert_eq!(pairs, lenient, "the strict and the WHATWG readings differ");
        let again = encode(&pairs);
        assert_eq!(decode_form(again.as_bytes()).ok(), Some(pairs));
    }
    if let Ok(decoded) = percent_decode(data) {
        // A component holds no `&` or `=` split: decoding it alone is decoding it as a value.
        if !data.contains(&b'&') {
            let body = [b"x=".as_slice(), data].concat();
            assert_eq!(
                decode_form(&body).ok(),
                Some(vec![("x".to_owned(), decoded)])
            );
        }
    }
    let text = String::from_utf8_lossy(data);
    let parts: Vec<&str> = text.split('\0').collect();
    let pairs: Vec<(String, String)> = parts
        .chunks(2)
        .map(|c| (c[0].to_owned(), c.get(1).copied().unwrap_or("").to_owned()))
        .collect();
    let body = encode(&pairs);
    let decoded = decode_form(body.as_bytes()).expect("a browser's encoding decodes");
    // An empty name with an empty value encodes as `=`, kept; nothing is dropped.
    assert_eq!(decoded, pairs);
});
