//! The sign-in, consent and error pages: askama templates on the base layout (its style sheet
//! under the response's CSP nonce, no script), every value escaped by the kernel's escaper.

use askama::Template;
use pay_domain::oauth::ConsentView;
use pay_domain::tenancy::{Membership, Scope};

use crate::pages::layout::{html, Layout};

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

#[derive(Template)]
#[template(path = "problem.html")]
struct ProblemPage<'a> {
    layout: Layout<'a>,
    message: &'a str,
}

/// A page that says what went wrong, with no link onwards (never a redirect).
pub fn problem(nonce: &str, heading: &str, message: &str) -> String {
    html(&ProblemPage {
        layout: Layout::card(nonce, heading),
        message,
    })
}

#[derive(Template)]
#[template(path = "signin.html")]
struct SignInPage<'a> {
    layout: Layout<'a>,
    action: &'a str,
    return_to: Option<&'a str>,
    email: &'a str,
    error: Option<&'a str>,
}

/// The sign-in form; it posts back to `action` and then returns to `return_to`. After a
/// refusal the e-mail typed is filled in again.
pub fn signin(
    nonce: &str,
    action: &str,
    return_to: Option<&str>,
    email: Option<&str>,
    error: Option<&str>,
) -> String {
    html(&SignInPage {
        layout: Layout::card(nonce, "Sign in"),
        action,
        return_to,
        email: email.unwrap_or_default(),
        error,
    })
}

#[derive(Template)]
#[template(path = "consent.html")]
struct ConsentPage<'a> {
    layout: Layout<'a>,
    action: &'a str,
    app_name: &'a str,
    redirect_uri: &'a str,
    /// Each scope in words, and its name.
    scopes: Vec<(&'static str, &'static str)>,
    /// The company id and name of each company the user may connect.
    companies: Vec<(String, &'a str)>,
    hidden: &'a [(&'a str, &'a str)],
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
    let title = format!("Connect {}", view.app_name);
    html(&ConsentPage {
        layout: Layout::card(nonce, &title),
        action,
        app_name: &view.app_name,
        redirect_uri: &view.redirect_uri,
        scopes: view
            .scopes
            .iter()
            .map(|s| (scope_words(*s), s.as_str()))
            .collect(),
        companies: companies
            .iter()
            .map(|m| (m.company_id.to_string(), m.company_name.as_str()))
            .collect(),
        hidden,
    })
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
        assert!(html.contains("See your company&#39;s name and when it joined"));
    }

    #[test]
    fn a_refused_sign_in_keeps_the_email_escaped() {
        let html = signin(
            "n0",
            "/signin",
            Some("/dashboard"),
            Some("a\"><b>@x.example"),
            Some("Invalid e-mail or password."),
        );
        assert!(
            html.contains("name=\"email\" type=\"email\" value=\"a&quot;&gt;&lt;b&gt;@x.example\""),
            "{html}"
        );
        assert!(html.contains("role=\"alert\""), "{html}");
        assert!(html.contains("aria-invalid=\"true\""), "{html}");
        assert!(
            html.contains("name=\"return_to\" value=\"/dashboard\""),
            "{html}"
        );
        let fresh = signin("n0", "/signin", None, None, None);
        assert!(fresh.contains("type=\"email\" value=\"\""), "{fresh}");
        assert!(!fresh.contains("return_to"), "{fresh}");
    }
}
