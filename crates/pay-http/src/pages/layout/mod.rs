//! The one base layout of the askama pages (`templates/base.html`) and its one style sheet
//! (`site.css`, inline under the response's CSP nonce, as the checkout serves its own), the
//! escaper every template goes through (the kernel's), and the response with the checkout's
//! security headers. A page is a `#[derive(Template)]` struct holding a `Layout`.

use actix_web::http::{header, StatusCode};
use actix_web::HttpResponse;
use std::sync::LazyLock;

use askama::Template;

use crate::pages::checkout::csp_with_form_target;

/// The dark palette, written once in the style sheet's place of `DARK`: the dark theme's and,
/// under `prefers-color-scheme: dark`, the system theme's.
const DARK: &str = "--bg:#111113;--fg:#f4f4f5;--card:#1c1c1f;--mut:#a1a1aa;--bd:#3f3f46;\
--soft:#27272a;--ac:#60a5fa;--acfg:#0b1220;--ok:#22c55e;--bad:#f87171;--warn:#fbbf24;\
--focus:#93c5fd;color-scheme:dark";

/// The one style sheet (`site.css`), as written.
pub const SITE_CSS: &str = include_str!("site.css");

/// Which part of the style sheet a page inlines: each is a prefix of the next, so the hosted
/// checkout carries only its own rules (its size is benchmarked) and the dashboard all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sheet {
    /// The hosted checkout: up to `/*! pages */`.
    Checkout,
    /// The other public pages (portal, sign-in, consent, claim, gateway): up to
    /// `/*! dashboard */`.
    Pages,
    /// The dashboard: the whole sheet.
    Dashboard,
}

/// The three prefixes, the palette filled in, comments and line breaks taken out.
static SHEETS: LazyLock<[String; 3]> = LazyLock::new(|| {
    let cut = |marker: &str| SITE_CSS.find(marker).unwrap_or(SITE_CSS.len());
    let ready = |css: &str| {
        let mut out = String::with_capacity(css.len() + 2 * DARK.len());
        let mut rest = css;
        while let Some(at) = rest.find("/*") {
            out.push_str(&rest[..at]);
            rest = rest[at..]
                .find("*/")
                .map_or("", |end| &rest[at + end + 2..]);
        }
        out.push_str(rest);
        out.replace("DARK", DARK).replace('\n', "")
    };
    [
        ready(&SITE_CSS[..cut("/*! pages */")]),
        ready(&SITE_CSS[..cut("/*! dashboard */")]),
        ready(SITE_CSS),
    ]
});

impl Sheet {
    /// The part's CSS, ready to inline.
    pub fn css(self) -> &'static str {
        let i = match self {
            Sheet::Checkout => 0,
            Sheet::Pages => 1,
            Sheet::Dashboard => 2,
        };
        &SHEETS[i]
    }
}

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
    /// The response's CSP nonce (the inline style sheet and script).
    pub nonce: &'a str,
    /// The `<title>` (and the `<h1>` of a one-card page).
    pub title: &'a str,
    /// The part of the style sheet the page inlines (`Sheet::css`).
    pub css: &'static str,
    /// The class of `<main>`: `page` (one narrow card), `wide` (the dashboard), `page portal`.
    pub main: &'static str,
    /// The theme class on `<html>` (`t-system`, `t-light`, `t-dark`) and its `color-scheme`.
    pub theme: &'static str,
    pub scheme: &'static str,
    /// The inline script (the checkout's), under the nonce; the pages work without it.
    pub script: Option<&'static str>,
    /// Without JavaScript, reload after this `content` (`5`, or `3;url=...`).
    pub refresh: Option<String>,
}

impl<'a> Layout<'a> {
    /// A narrow single-card page.
    pub fn card(nonce: &'a str, title: &'a str) -> Layout<'a> {
        Layout {
            nonce,
            title,
            css: Sheet::Pages.css(),
            main: "page",
            theme: "t-system",
            scheme: "light dark",
            script: None,
            refresh: None,
        }
    }

    /// A wide page (the dashboard's screens).
    pub fn wide(nonce: &'a str, title: &'a str) -> Layout<'a> {
        Layout {
            css: Sheet::Dashboard.css(),
            main: "wide",
            ..Layout::card(nonce, title)
        }
    }

    /// The `color-scheme` of a theme class.
    pub fn themed(self, theme: pay_domain::tenancy::Theme) -> Layout<'a> {
        use pay_domain::tenancy::Theme;
        let (theme, scheme) = match theme {
            Theme::Light => ("t-light", "light"),
            Theme::Dark => ("t-dark", "dark"),
            Theme::System => ("t-system", "light dark"),
        };
        Layout {
            theme,
            scheme,
            ..self
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
        assert!(out.contains(".fld{"), "the pages' part: {out}");
        assert!(!out.contains(".top{"), "not the dashboard's: {out}");
        assert!(
            out.contains("<html lang=\"en\" class=\"t-system\">"),
            "{out}"
        );
    }

    #[test]
    fn each_sheet_is_a_prefix_of_the_next_with_the_palette_filled_in() {
        let (c, p, d) = (
            Sheet::Checkout.css(),
            Sheet::Pages.css(),
            Sheet::Dashboard.css(),
        );
        assert!(p.starts_with(c) && d.starts_with(p) && c.len() < p.len() && p.len() < d.len());
        assert!(c.contains(".t-dark{--bg:#111113"), "{c}");
        assert!(c.contains("@media (prefers-color-scheme:dark){.t-system{--bg:#111113"));
        assert!(c.contains(".qr{") && !c.contains(".fld{") && !c.contains(".top{"));
        assert!(d.contains(".top{") && d.contains(".secret{"));
        for css in [c, p, d] {
            assert!(!css.contains('\n') && !css.contains("/*") && !css.contains("DARK"));
        }
    }
}
