//! The one HTML escaper, for everything a page or a mail interpolates (the hosted checkout, the
//! gateway's error pages, payment-request mails): titles, merchant names and URLs are user
//! input. One function for element content and quoted attribute values, plus the URL filter
//! that keeps `javascript:` and friends out of `href`.

/// The bidirectional controls that reorder the text after them (embeddings, overrides and
/// isolates, U+202A to U+202E and U+2066 to U+2069; `Ann\u{202E}gpj.exe` reads as
/// `Annexe.jpg`). Text fields refuse them (`validate::text`); pages and mails neutralise any a
/// stored value still holds (`escape`, `plain_text`). The marks (U+200E, U+200F, U+061C)
/// reorder nothing after them and stay allowed.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` for a plain-text mail part or header: each bidirectional control becomes the
/// replacement character.
pub fn plain_text(s: &str) -> String {
    s.chars()
        .map(|c| if is_bidi_control(c) { '\u{FFFD}' } else { c })
        .collect()
}

/// Escapes `s` for HTML element content and for a double- or single-quoted attribute value.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    escape_into(&mut out, s);
    out
}

/// Appends `s` escaped to `out`: runs of plain ASCII are copied whole (a page escapes every
/// field of every row it lists), the rest is looked at one character at a time.
pub fn escape_into(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(s.len());
    let (mut run, mut i) = (0, 0);
    while i < bytes.len() {
        let b = bytes[i];
        // Plain: printable ASCII but the five markup characters, and tab and newline.
        if matches!(b, b'\t' | b'\n' | 0x20..=0x7e)
            && !matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'')
        {
            i += 1;
            continue;
        }
        out.push_str(&s[run..i]);
        let c = s[i..].chars().next().unwrap_or('\u{FFFD}');
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Controls other than tab and newline have no business in a page (and NUL is a
            // parse error); they become the replacement character, as do the bidirectional
            // controls.
            c if c.is_control() || is_bidi_control(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
        i += c.len_utf8();
        run = i;
    }
    out.push_str(&s[run..]);
}

/// A URL fit for `href`: absolute `http(s)`, no whitespace or controls, escaped. Anything else
/// (a `javascript:` or `data:` URL that slipped through, a relative path) is `None` and the
/// link is left out.
pub fn safe_url(url: &str) -> Option<String> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let web = lower.starts_with("https://") || lower.starts_with("http://");
    let clean = !url.chars().any(|c| c.is_whitespace() || c.is_control());
    (web && clean && url.len() > 8).then(|| escape(url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_ampersands() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(escape("Acme & Sons <Ltd>"), "Acme &amp; Sons &lt;Ltd&gt;");
        // Already escaped text is escaped again (no double-decoding surprises).
        assert_eq!(escape("&amp;"), "&amp;amp;");
        assert_eq!(escape("café ☕ 日本"), "café ☕ 日本");
        assert_eq!(escape("a\u{0}b\u{7}c\nd"), "a\u{FFFD}b\u{FFFD}c\nd");
        assert_eq!(escape(""), "");
    }

    #[test]
    fn an_escaped_value_cannot_leave_its_attribute() {
        let hostile = r#"" onmouseover="alert(1)" x='"#;
        let html = format!("<a title=\"{}\">", escape(hostile));
        assert_eq!(html.matches('"').count(), 2, "{html}");
        assert!(!html.contains('\''), "{html}");
    }

    #[test]
    fn only_web_urls_become_links() {
        assert_eq!(
            safe_url("https://shop.example/ok?a=1&b=\"2\"").as_deref(),
            Some("https://shop.example/ok?a=1&amp;b=&quot;2&quot;")
        );
        assert!(safe_url("HTTP://shop.example/").is_some());
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,<b>",
            "//evil.example/",
            "/relative",
            "https://shop.example/a b",
            "https://shop.example/\n",
            "https://",
            "",
        ] {
            assert_eq!(safe_url(bad), None, "{bad}");
        }
    }

    /// The escaper one character at a time, as it was written first: the fast path must
    /// give the same text for any input.
    fn escape_by_char(s: &str) -> String {
        let mut out = String::new();
        for c in s.chars() {
            match c {
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '"' => out.push_str("&quot;"),
                '\'' => out.push_str("&#39;"),
                c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
                c if is_bidi_control(c) => out.push('\u{FFFD}'),
                c => out.push(c),
            }
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn the_fast_path_escapes_as_one_character_at_a_time(s in "\\PC*|[\\x00-\\x7f\\u{80}-\\u{9f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}&<>\"'a\\t\\n]*") {
            proptest::prop_assert_eq!(escape(&s), escape_by_char(&s));
        }
    }

    #[test]
    fn bidi_controls_are_neutralised() {
        assert_eq!(escape("Ann\u{202E}gpj.exe"), "Ann\u{FFFD}gpj.exe");
        assert_eq!(
            escape("\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}"),
            "\u{FFFD}".repeat(8)
        );
        assert_eq!(plain_text("a\u{2067}b"), "a\u{FFFD}b");
        // Right-to-left text and the marks stay.
        assert_eq!(escape("דנה \u{200F}x"), "דנה \u{200F}x");
        assert!(!is_bidi_control('\u{200E}') && !is_bidi_control('\u{2029}'));
    }
}
