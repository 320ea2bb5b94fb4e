//! The sign-in, consent and error pages as HTML: the checkout's style sheet under the
//! response's CSP nonce, no script, every interpolated value escaped by the one escaper.

use std::fmt::Write;

use pay_domain::kernel::html::escape;
use pay_domain::oauth::ConsentView;
use pay_domain::tenancy::{Membership, Scope};

/// What the merchant reads for each scope on the consent page.
pub fn scope_words(scope: Scope) -> &'static str {
    match scope {
        Scope::CompanyRead => "See your company's name and when it joined",
        Scope::PaymentLinksRead => "See your payment links and their payments",
        Scope::PaymentLinksWrite => "Create payment links and pause, resume or archive them",
        Scope::CustomersRead => "See your customers",
        Scope::CustomersWrite => "Add and change your customers",
        Scope::SubscriptionsRead => "See your subscriptions",
        Scope::SubscriptionsWrite => "Create and change your subscriptions",
        Scope::SettingsRead => "See your payment settings",
        Scope::SettingsWrite => "Change your payment settings",
        Scope::WebhooksRead => "See its webhook deliveries",
        Scope::WebhooksWrite => "Manage its own webhook subscription",
        Scope::BookkeepingRead => "See your wallet activity and expenses",
        Scope::BookkeepingWrite => "Record expenses for your outgoing transfers",
    }
}

pub(crate) fn document(nonce: &str, title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\">\
         <title>{}</title><style nonce=\"{}\">{}</style></head>\n\
         <body class=\"t-system\"><main class=\"page\"><div class=\"card\">\n<h1>{}</h1>\n{body}</div></main></body></html>\n",
        escape(title),
        escape(nonce),
        crate::pages::checkout::render::stylesheet(),
        escape(title),
    )
}

/// A page that says what went wrong, with no link onwards (never a redirect).
pub fn problem(nonce: &str, heading: &str, message: &str) -> String {
    document(
        nonce,
        heading,
        &format!("<p role=\"alert\">{}</p>\n", escape(message)),
    )
}

/// The sign-in form; it posts back to `action` and then returns to `return_to`.
pub fn signin(nonce: &str, action: &str, return_to: Option<&str>, error: Option<&str>) -> String {
    let mut body = String::new();
    if let Some(e) = error {
        let _ = writeln!(body, "<p class=\"note\" role=\"alert\">{}</p>", escape(e));
    }
    let _ = write!(
        body,
        "<form method=\"post\" action=\"{}\">\n\
         <p><label for=\"email\">E-mail</label><br><input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"username\" required></p>\n\
         <p><label for=\"password\">Password</label><br><input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required></p>\n",
        escape(action)
    );
    if let Some(r) = return_to {
        let _ = writeln!(
            body,
            "<input type=\"hidden\" name=\"return_to\" value=\"{}\">",
            escape(r)
        );
    }
    body.push_str("<div class=\"actions\"><button class=\"btn primary\" type=\"submit\">Sign in</button></div>\n</form>\n");
    document(nonce, "Sign in", &body)
}

/// The consent page: the application, the scopes in words, the companies to pick from, and
/// the request's fields carried as hidden inputs with the CSRF token.
pub fn consent(
    nonce: &str,
    action: &str,
    view: &ConsentView,
    companies: &[Membership],
    hidden: &[(&str, &str)],
) -> String {
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<p><strong>{}</strong> asks to connect to your account. It will be able to:</p>\n<ul class=\"scopes\">",
        escape(&view.app_name)
    );
    for s in &view.scopes {
        let _ = writeln!(
            body,
            "<li>{} <small class=\"muted\">({})</small></li>",
            escape(scope_words(*s)),
            escape(s.as_str())
        );
    }
    body.push_str("</ul>\n");
    let _ = writeln!(body, "<form method=\"post\" action=\"{}\">", escape(action));
    for (name, value) in hidden {
        let _ = writeln!(
            body,
            "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
            escape(name),
            escape(value)
        );
    }
    if companies.is_empty() {
        body.push_str("<p class=\"note\" role=\"alert\">Only a company's owner or admin can connect an app, and you are neither in any company.</p>\n");
    } else {
        body.push_str("<fieldset><legend>Company</legend><div class=\"opts\">\n");
        for (i, m) in companies.iter().enumerate() {
            let _ = writeln!(
                body,
                "<label class=\"opt\"><input type=\"radio\" name=\"company_id\" value=\"{}\"{}> {}</label>",
                escape(&m.company_id.to_string()),
                if i == 0 { " checked" } else { "" },
                escape(&m.company_name)
            );
        }
        body.push_str("</div></fieldset>\n");
    }
    let _ = writeln!(
        body,
        "<p class=\"muted\">You will be sent back to {}.</p>",
        escape(&view.redirect_uri)
    );
    body.push_str("<div class=\"actions\">");
    if !companies.is_empty() {
        body.push_str("<button class=\"btn primary\" type=\"submit\" name=\"decision\" value=\"approve\">Allow</button>");
    }
    body.push_str("<button class=\"btn quiet\" type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></div>\n</form>\n");
    document(nonce, &format!("Connect {}", view.app_name), &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pay_domain::kernel::ids::{ClientId, CompanyId};
    use pay_domain::tenancy::Role;

    #[test]
    fn every_value_is_escaped() {
        let view = ConsentView {
            client_id: ClientId::parse(&format!("oc_{}", "a".repeat(32))).unwrap(),
            app_name: "<script>x</script>".into(),
            redirect_uri: "https://a.example/cb?a=1&b=\"2\"".into(),
            scopes: vec![Scope::CompanyRead],
            state: None,
        };
        let companies = [Membership {
            company_id: CompanyId(uuid::Uuid::nil()),
            company_name: "A & <B>".into(),
            role: Role::Owner,
        }];
        let html = consent(
            "n0",
            "/oauth/authorize",
            &view,
            &companies,
            &[("state", "\"><x")],
        );
        assert!(!html.contains("<script>x"));
        assert!(html.contains("&lt;script&gt;"));
        assert!(html.contains("A &amp; &lt;B&gt;"));
        assert!(!html.contains("\"><x"));
        assert!(html.contains("<style nonce=\"n0\">"));
        assert!(
            html.contains("See your company's name and when it joined")
                || html.contains("See your company&#39;s")
        );
    }
}
