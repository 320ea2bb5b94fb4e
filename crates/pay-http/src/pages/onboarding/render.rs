//! The claim pages as HTML: askama templates (`templates/claim.html`, `claimed.html`) on the
//! one base layout (the pages' part of the style sheet under the response's CSP nonce, no
//! script), every interpolated value escaped by the kernel's escaper.

use askama::Template;
use pay_domain::onboarding::ClaimView;

use crate::pages::layout::{html, Layout};
use crate::pages::oauth::render::scope_words;

/// What a claim page offers, besides the draft.
pub enum Offer<'a> {
    /// Signed in: one button (the form carries the session's CSRF token); `switch` is the
    /// sign-in page's address to use another account.
    Claim { csrf: &'a str, switch: &'a str },
    /// Not signed in: the sign-up form, and a link to the sign-in page that comes back here.
    /// After a refusal the e-mail typed is filled in again.
    SignUp {
        signin: &'a str,
        email: Option<&'a str>,
        error: Option<&'a str>,
    },
}

/// The application a claim connects: its name, the scopes in words and their names, and where
/// the merchant is sent afterwards.
struct App<'a> {
    name: &'a str,
    scopes: Vec<(&'static str, &'static str)>,
    redirect_uri: &'a str,
}

#[derive(Template)]
#[template(path = "claim.html")]
struct ClaimPage<'a> {
    layout: Layout<'a>,
    action: &'a str,
    partner: &'a str,
    company: &'a str,
    website: Option<&'a str>,
    app: Option<App<'a>>,
    /// "and connect" when the claim also connects an application.
    verb: &'static str,
    min_password: usize,
    offer: Offer<'a>,
}

/// The claim page of an open draft; its forms post to `action` (signed in) or
/// `action`/signup (a new account).
pub fn claim(nonce: &str, action: &str, view: &ClaimView, offer: Offer<'_>) -> String {
    let r = &view.draft.request;
    let title = format!("Set up {}", r.company_name);
    html(&ClaimPage {
        layout: Layout::card(nonce, &title),
        action,
        partner: &view.partner_name,
        company: &r.company_name,
        website: r.company_website.as_deref(),
        app: view.app.as_ref().map(|app| App {
            name: &app.app_name,
            scopes: app
                .scopes
                .iter()
                .map(|s| (scope_words(*s), s.as_str()))
                .collect(),
            redirect_uri: &app.redirect_uri,
        }),
        verb: if view.app.is_some() {
            "and connect"
        } else {
            ""
        },
        min_password: pay_domain::tenancy::MIN_PASSWORD_LEN,
        offer,
    })
}

#[derive(Template)]
#[template(path = "claimed.html")]
struct ClaimedPage<'a> {
    layout: Layout<'a>,
    company: &'a str,
    partner: &'a str,
}

/// After a claim without `oauth`: the company exists and the merchant owns it.
pub fn ready(nonce: &str, company_name: &str, partner_name: &str) -> String {
    let title = format!("{company_name} is ready");
    html(&ClaimedPage {
        layout: Layout::card(nonce, &title),
        company: company_name,
        partner: partner_name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pay_domain::kernel::ids::{DraftId, OnboardingPartnerId};
    use pay_domain::kernel::timestamp::Timestamp;
    use pay_domain::onboarding::{Draft, DraftRequest, DraftStatus};

    #[test]
    fn every_value_is_escaped() {
        let at = Timestamp::from_unix_millis(0).unwrap();
        let view = ClaimView {
            draft: Draft {
                id: DraftId(uuid::Uuid::nil()),
                partner_id: OnboardingPartnerId(uuid::Uuid::nil()),
                idempotency_key: "k".into(),
                request: DraftRequest {
                    company_name: "<b>Acme</b>".into(),
                    company_website: Some("https://a.example/?a=\"1\"".into()),
                    oauth: None,
                },
                created_at: at,
                expires_at: at,
                claimed_at: None,
                company_id: None,
            },
            status: DraftStatus::Open,
            partner_name: "P & <Q>".into(),
            app: None,
        };
        let html = claim(
            "n0",
            "/onboarding/claim/obc_x",
            &view,
            Offer::SignUp {
                signin: "/signin?return_to=x",
                email: Some("\"><x"),
                error: Some("<e>"),
            },
        );
        assert!(!html.contains("<b>Acme"));
        assert!(html.contains("&lt;b&gt;Acme"));
        assert!(html.contains("P &amp; &lt;Q&gt;"));
        assert!(!html.contains("\"><x"));
        assert!(!html.contains("<e>"));
        assert!(html.contains("action=\"/onboarding/claim/obc_x/signup\""));
        // A refused sign-up keeps the e-mail typed, styled like every form of the site.
        assert!(html.contains("<div class=\"fld\"><label for=\"email\">E-mail</label><input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"username\" value=\"&quot;&gt;&lt;x\""), "{html}");
        assert!(
            html.contains("<style nonce=\"n0\">") && html.contains(".fld{"),
            "{html}"
        );
        assert!(
            html.contains("<p class=\"err\" role=\"alert\" id=\"signup-error\">&lt;e&gt;</p>"),
            "{html}"
        );
    }
}
