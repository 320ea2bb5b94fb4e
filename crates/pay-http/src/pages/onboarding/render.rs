//! The claim pages as HTML: the OAuth pages' document (the checkout's style sheet under the
//! response's CSP nonce, no script), every interpolated value escaped by the one escaper.

use std::fmt::Write;

use pay_domain::kernel::html::escape;
use pay_domain::onboarding::ClaimView;

use crate::pages::oauth::render::{document, scope_words};

/// What a claim page offers, besides the draft.
pub enum Offer<'a> {
    /// Signed in: one button (the form carries the session's CSRF token); `switch` is the
    /// sign-in page's address to use another account.
    Claim { csrf: &'a str, switch: &'a str },
    /// Not signed in: the sign-up form, and a link to the sign-in page that comes back here.
    SignUp {
        signin: &'a str,
        email: Option<&'a str>,
        error: Option<&'a str>,
    },
}

/// What the merchant is about to own, and which application it connects.
fn intro(view: &ClaimView, body: &mut String) {
    let r = &view.draft.request;
    let _ = write!(
        body,
        "<p><strong>{}</strong> prepared an account for <strong>{}</strong>",
        escape(&view.partner_name),
        escape(&r.company_name)
    );
    if let Some(w) = &r.company_website {
        let _ = write!(body, " <small class=\"muted\">({})</small>", escape(w));
    }
    body.push_str(". You will be its owner.</p>\n");
    if let Some(app) = &view.app {
        let _ = writeln!(
            body,
            "<p>It also connects <strong>{}</strong>, which will be able to:</p>\n<ul class=\"scopes\">",
            escape(&app.app_name)
        );
        for s in &app.scopes {
            let _ = writeln!(
                body,
                "<li>{} <small class=\"muted\">({})</small></li>",
                escape(scope_words(*s)),
                escape(s.as_str())
            );
        }
        body.push_str("</ul>\n");
        let _ = writeln!(
            body,
            "<p class=\"muted\">Afterwards you will be sent to {}.</p>",
            escape(&app.redirect_uri)
        );
    }
}

/// The claim page of an open draft; its forms post to `action` (signed in) or
/// `action`/signup (a new account).
pub fn claim(nonce: &str, action: &str, view: &ClaimView, offer: Offer<'_>) -> String {
    let mut body = String::new();
    intro(view, &mut body);
    let verb = if view.app.is_some() {
        "and connect"
    } else {
        ""
    };
    match offer {
        Offer::Claim { csrf, switch } => {
            let _ = writeln!(
                body,
                "<form method=\"post\" action=\"{}\">\n<input type=\"hidden\" name=\"csrf_token\" value=\"{}\">\n\
                 <div class=\"actions\"><button class=\"btn primary\" type=\"submit\">Create {} {}</button></div>\n</form>",
                escape(action),
                escape(csrf),
                escape(&view.draft.request.company_name),
                verb
            );
            let _ = writeln!(
                body,
                "<p class=\"muted\">Not you? <a href=\"{}\">Sign in with another account</a>.</p>",
                escape(switch)
            );
        }
        Offer::SignUp {
            signin,
            email,
            error,
        } => {
            if let Some(e) = error {
                let _ = writeln!(body, "<p class=\"note\" role=\"alert\">{}</p>", escape(e));
            }
            let _ = write!(
                body,
                "<h2>Create your account</h2>\n<form method=\"post\" action=\"{}/signup\">\n\
                 <p><label for=\"email\">E-mail</label><br><input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"username\" value=\"{}\" required></p>\n\
                 <p><label for=\"password\">Password <small class=\"muted\">(at least {} characters)</small></label><br><input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"new-password\" minlength=\"{}\" required></p>\n\
                 <div class=\"actions\"><button class=\"btn primary\" type=\"submit\">Create account {}</button></div>\n</form>\n",
                escape(action),
                escape(email.unwrap_or("")),
                pay_domain::tenancy::MIN_PASSWORD_LEN,
                pay_domain::tenancy::MIN_PASSWORD_LEN,
                verb
            );
            let _ = writeln!(
                body,
                "<p class=\"muted\">Already have an account? <a href=\"{}\">Sign in</a> to add {} to it.</p>",
                escape(signin),
                escape(&view.draft.request.company_name)
            );
        }
    }
    document(
        nonce,
        &format!("Set up {}", view.draft.request.company_name),
        &body,
    )
}

/// After a claim without `oauth`: the company exists and the merchant owns it.
pub fn ready(nonce: &str, company_name: &str, partner_name: &str) -> String {
    document(
        nonce,
        &format!("{company_name} is ready"),
        &format!(
            "<p role=\"status\">You own <strong>{}</strong> now. You can go back to {}.</p>\n",
            escape(company_name),
            escape(partner_name)
        ),
    )
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
    }
}
