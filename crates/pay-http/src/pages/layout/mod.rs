//! The one base layout of the askama pages (`templates/base.html`) and its one style sheet
//! (`site.css`, inline under the response's CSP nonce, as the checkout serves its own), the
//! escaper every template goes through (the kernel's), and the response with the checkout's
//! security headers. A page is a `#[derive(Template)]` struct holding a `Layout`.

use actix_web::http::{header, StatusCode};
use actix_web::HttpResponse;
use askama::Template;

use crate::pages::checkout::csp_with_form_target;

/// The style sheet of every page on the base layout.
pub const SITE_CSS: &str = include_str!("site.css");

/// Length of a page's CSP nonce.
pub const NONCE_LEN: usize = 22;

/// askama's escaper for `.html` templates (`askama.toml`): the kernel's `escape_into`, the one
/// HTML escaper (which also neutralises controls and bidirectional overrides).
#[derive(Debug, Clone, Copy, Default)]
pub struct KernelHtml;

impl askama::filters::Escaper for KernelHtml {
    fn write_escaped_str<W: std::fmt::Write>(&self, mut dest: W, s: &str) -> std::fmt::Result {
        let mut out = String::with_capacity(s.len() + 8);
        pay_domain::kernel::html::escape_into(&mut out, s);
        dest.write_str(&out)
    }
}

/// What the base layout needs besides a page's content.
#[derive(Debug, Clone)]
pub struct Layout<'a> {
    /// The response's CSP nonce (the inline style sheet).
    pub nonce: &'a str,
    /// The `<title>` and the `<h1>`.
    pub title: &'a str,
    /// The style sheet (always `SITE_CSS`; a field so the template reads it unescaped).
    pub css: &'static str,
    /// A wide page (the dashboard) rather than one narrow card (sign-in, consent).
    pub wide: bool,
}

impl<'a> Layout<'a> {
    /// A narrow single-card page.
    pub fn card(nonce: &'a str, title: &'a str) -> Layout<'a> {
        Layout {
            nonce,
            title,
            css: SITE_CSS,
            wide: false,
        }
    }

    /// A wide page (the dashboard's screens).
    pub fn wide(nonce: &'a str, title: &'a str) -> Layout<'a> {
        Layout {
            wide: true,
            ..Layout::card(nonce, title)
        }
    }
}

/// A page's HTML. Rendering a template of ours fails only on a `Display` error of a value it
/// shows, which none of ours has; the fault is logged and the page says so.
pub fn html(page: &impl Template) -> String {
    page.render().unwrap_or_else(|e| {
        tracing::error!(error = %e, "page template failed to render");
        "<!doctype html><title>Error</title><p>Something went wrong.</p>".to_owned()
    })
}

/// A rendered page with the checkout's security headers: no caching, no sniffing, the
/// referrer kept to this origin, and the nonce'd CSP (forms may also end at `form_origin`).
pub fn respond(
    status: StatusCode,
    nonce: &str,
    form_origin: Option<&str>,
    body: String,
) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        // `same-origin`, not `no-referrer`: under `no-referrer` browsers send `Origin: null`
        // with the page's own form posts, which the origin check refuses.
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            csp_with_form_target(nonce, None, form_origin),
        ))
        .body(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Template)]
    #[template(
        source = "{% extends \"base.html\" %}{% block content %}<p>{{ text }}</p>{% endblock %}",
        ext = "html"
    )]
    struct Probe<'a> {
        layout: Layout<'a>,
        text: &'a str,
    }

    #[test]
    fn templates_escape_through_the_kernel_escaper() {
        let page = Probe {
            layout: Layout::card("n0", "A & <B>"),
            text: "<script>x</script>'\u{202E}\u{0}",
        };
        let out = html(&page);
        assert!(
            out.contains("<p>&lt;script&gt;x&lt;/script&gt;&#39;\u{FFFD}\u{FFFD}</p>"),
            "{out}"
        );
        assert!(out.contains("<title>A &amp; &lt;B&gt;</title>"), "{out}");
        assert!(out.contains("<style nonce=\"n0\">"), "{out}");
        assert!(out.contains(".card{"), "the style sheet is inline: {out}");
    }
}
