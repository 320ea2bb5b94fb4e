//! `pay-server`: serve (default), worker, migrate, admin bootstrap, add-member,
//! verify-domain, create-oauth-app, create-native-platform, create-partner and
//! security-reset.

use anyhow::Context;
use clap::{Parser, Subcommand};
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::secret::Secret;
use pay_domain::tenancy::Role;
use pay_server::{
    bootstrap_json, build_dispatcher, build_pay, demo_bootstrap, init_tracing, open_store,
    Application, Config,
};

#[derive(Debug, Parser)]
#[command(
    name = "pay-server",
    version,
    about = "Self-hostable crypto payment collection service"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP server (the default).
    Serve,
    /// Run pending database migrations and exit.
    Migrate,
    /// Run only the background workers: the webhook dispatcher, the mailer, the expiry and
    /// billing schedulers (any number may run beside the servers).
    Worker,
    /// Operator commands.
    #[command(subcommand)]
    Admin(Admin),
}

#[derive(Debug, Subcommand)]
enum Admin {
    /// Create a user, a company owned by that user and an API key; prints one JSON object.
    /// Idempotent on the e-mail (an existing user gets no new secret).
    Bootstrap {
        #[arg(long)]
        company: String,
        #[arg(long)]
        email: String,
        /// Prefer PAY_BOOTSTRAP_PASSWORD in scripts, so the password stays out of `ps`.
        #[arg(long, env = "PAY_BOOTSTRAP_PASSWORD", hide_env_values = true)]
        password: String,
        /// The company's website (an absolute http(s) URL), shown by `GET .../company`.
        #[arg(long)]
        website: Option<String>,
    },
    /// Add a person to a company with a role (owner, admin or member); prints
    /// `{"userId"}`. A new e-mail creates the user with the password.
    AddMember {
        #[arg(long)]
        company_id: String,
        #[arg(long)]
        email: String,
        #[arg(long, default_value = "member")]
        role: String,
        /// Prefer PAY_MEMBER_PASSWORD in scripts.
        #[arg(long, env = "PAY_MEMBER_PASSWORD", hide_env_values = true)]
        password: String,
    },
    /// Mark a domain verified as the company's payment-link domain (once its DNS points at
    /// this service, with TLS): its links' hosted checkout URLs in webhooks and mails, cycle
    /// `paymentUrl`s and customer portal URLs are then on `https://<domain>`. Prints
    /// `{"companyId", "paymentLinkDomain"}`. One company per domain.
    VerifyDomain {
        #[arg(long)]
        company: String,
        /// A host name such as pay.example.com (no scheme, port or path).
        #[arg(long, required_unless_present = "clear")]
        domain: Option<String>,
        /// Remove the company's domain instead (back to PAY_PUBLIC_PAY_URL).
        #[arg(long, conflicts_with = "domain")]
        clear: bool,
    },
    /// Register an OAuth application; prints `{"clientId", "clientSecret"}`. The secret of a
    /// confidential application is shown this once (only its digest is stored); public
    /// applications get none.
    CreateOauthApp {
        #[arg(long)]
        name: String,
        /// An exact redirect URI (https, or http on a loopback host); repeat for several.
        #[arg(long = "redirect-uri", required = true)]
        redirect_uris: Vec<String>,
        /// The scopes the application may ever ask for, space-separated.
        #[arg(long)]
        scopes: String,
        /// A public client (browser or distributed plugin): no secret, PKCE alone.
        #[arg(long)]
        public: bool,
        /// Every token must be DPoP-bound (a token request without a proof is refused).
        #[arg(long)]
        dpop_bound: bool,
        /// Refresh-token lifetime in seconds (1 hour to 365 days; default 30 days).
        #[arg(long)]
        refresh_ttl: Option<i64>,
    },
    /// Create a commerce platform's template for its native installations; prints it. A
    /// template never changes (the same platform again is refused).
    CreateNativePlatform {
        /// The identifier a plugin's registration names (a-z, 0-9, -).
        #[arg(long)]
        platform: String,
        /// The name merchants see on the consent page.
        #[arg(long)]
        name: String,
        #[arg(long)]
        icon_url: Option<String>,
        #[arg(long)]
        support_url: Option<String>,
    },
    /// Create an onboarding partner; prints `{"partnerId", "onboardingSecret"}`. The secret
    /// (for `POST /api/partner/v1/onboarding/company`) is shown this once; only its digest is
    /// stored.
    CreatePartner {
        /// The name merchants see on the claim page ("<name> prepared this account").
        #[arg(long)]
        name: String,
    },
    /// End every access to a company (a suspected compromise): its members' sign-ins, every
    /// OAuth grant with its token families and stored token answers, and its API keys
    /// (disabled, not deleted); an official native installation keeps what a disconnect keeps
    /// (docs/native.md). Prints `{"companyId", "grantsRevoked", "signInsEnded",
    /// "apiKeysDisabled"}`; a rerun ends what is left (and counts only that).
    SecurityReset {
        #[arg(long)]
        company: String,
    },
}

fn main() -> anyhow::Result<()> {
    init_tracing();
    let cli = Cli::parse();
    let config = Config::from_env()?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config),
        Command::Migrate => {
            open_store(&config)?;
            Ok(())
        }
        Command::Worker => {
            check_chains(&config)?;
            let store = open_store(&config)?;
            let pay = build_pay(&config, store.clone())?;
            actix_rt::System::new().block_on(async move {
                pay_server::chains::spawn_watchers(&config, store, pay.clone())?;
                // A worker serves no `GET /metrics`: its counters are kept but not shown.
                let counters = pay_http::edge::metrics::Counters::default();
                actix_rt::spawn(pay_server::janitor::run(pay.clone(), counters.clone()));
                actix_rt::spawn(pay_server::scheduler::run(pay.clone(), counters.clone()));
                actix_rt::spawn(pay_server::billing::run(pay.clone(), counters));
                let dispatcher = build_dispatcher(&config, pay.clone())?;
                let mailer = pay_server::Mailer::from_config(&config, pay)?;
                tokio::select! {
                    _ = dispatcher.run() => {}
                    _ = mailer.run() => {}
                    _ = tokio::signal::ctrl_c() => tracing::info!("worker stopping"),
                }
                Ok(())
            })
        }
        Command::Admin(Admin::Bootstrap {
            company,
            email,
            password,
            website,
        }) => {
            // Checked before anything is created.
            if let Some(w) = website.as_deref() {
                pay_domain::kernel::validate::http_url("website", w.trim())
                    .map_err(|e| anyhow::anyhow!("bootstrap failed: {e}"))?;
            }
            let pay = build_pay(&config, open_store(&config)?)?;
            let outcome = pay
                .tenancy()
                .bootstrap(&company, &email, &Secret::new(password))
                .map_err(|e| anyhow::anyhow!("bootstrap failed: {e}"))?;
            if let Some(website) = website.as_deref() {
                pay.tenancy()
                    .set_company_website(outcome.company_id, Some(website))
                    .map_err(|e| anyhow::anyhow!("bootstrap failed: {e}"))?;
            }
            println!("{}", bootstrap_json(&outcome));
            Ok(())
        }
        Command::Admin(Admin::AddMember {
            company_id,
            email,
            role,
            password,
        }) => {
            let company = CompanyId::parse(&company_id)
                .ok_or_else(|| anyhow::anyhow!("--company-id must be a company UUID"))?;
            let role = Role::parse(&role)
                .ok_or_else(|| anyhow::anyhow!("--role must be owner, admin or member"))?;
            let pay = build_pay(&config, open_store(&config)?)?;
            let user = pay
                .tenancy()
                .add_member(company, &email, &Secret::new(password), role)
                .map_err(|e| anyhow::anyhow!("add-member failed: {e}"))?;
            println!("{}", serde_json::json!({ "userId": user.to_string() }));
            Ok(())
        }
        Command::Admin(Admin::VerifyDomain {
            company,
            domain,
            clear,
        }) => {
            let company = CompanyId::parse(&company)
                .ok_or_else(|| anyhow::anyhow!("--company must be a company UUID"))?;
            let pay = build_pay(&config, open_store(&config)?)?;
            let domain = if clear { None } else { domain };
            let set = pay
                .tenancy()
                .set_payment_link_domain(company, domain.as_deref())
                .map_err(|e| anyhow::anyhow!("verify-domain failed: {e}"))?;
            println!(
                "{}",
                serde_json::json!({ "companyId": company.to_string(), "paymentLinkDomain": set })
            );
            Ok(())
        }
        Command::Admin(Admin::CreateOauthApp {
            name,
            redirect_uris,
            scopes,
            public,
            dpop_bound,
            refresh_ttl,
        }) => {
            let pay = build_pay(&config, open_store(&config)?)?;
            let (app, secret) = pay
                .oauth()
                .register_application(pay_domain::oauth::NewApplication {
                    name,
                    redirect_uris,
                    scopes,
                    public,
                    dpop_bound,
                    refresh_ttl: refresh_ttl.map(time::Duration::seconds),
                })
                .map_err(|e| anyhow::anyhow!("create-oauth-app failed: {e}"))?;
            let mut out = serde_json::json!({ "clientId": app.client_id.to_string() });
            if let Some(secret) = secret {
                out["clientSecret"] = serde_json::json!(secret.expose());
            }
            println!("{out}");
            Ok(())
        }
        Command::Admin(Admin::CreateNativePlatform {
            platform,
            name,
            icon_url,
            support_url,
        }) => {
            let pay = build_pay(&config, open_store(&config)?)?;
            let p = pay
                .installations()
                .create_platform(pay_domain::installations::NewPlatform {
                    platform,
                    name,
                    icon_url,
                    support_url,
                })
                .map_err(|e| anyhow::anyhow!("create-native-platform failed: {e}"))?;
            println!(
                "{}",
                serde_json::json!({
                    "platform": p.platform,
                    "name": p.name,
                    "iconUrl": p.icon_url,
                    "supportUrl": p.support_url,
                    "scopes": pay_domain::oauth::scope_string(&p.scopes),
                })
            );
            Ok(())
        }
        Command::Admin(Admin::SecurityReset { company }) => {
            let company = CompanyId::parse(&company)
                .ok_or_else(|| anyhow::anyhow!("--company must be a company UUID"))?;
            let pay = build_pay(&config, open_store(&config)?)?;
            let reset = pay
                .installations()
                .security_reset(company)
                .map_err(|e| anyhow::anyhow!("security-reset failed: {e}"))?
                .ok_or_else(|| anyhow::anyhow!("security-reset failed: no company {company}"))?;
            println!(
                "{}",
                serde_json::json!({
                    "companyId": company.to_string(),
                    "grantsRevoked": reset.grants_revoked,
                    "signInsEnded": reset.sign_ins_ended,
                    "apiKeysDisabled": reset.api_keys_disabled,
                })
            );
            Ok(())
        }
        Command::Admin(Admin::CreatePartner { name }) => {
            let pay = build_pay(&config, open_store(&config)?)?;
            let (partner, secret) = pay
                .onboarding()
                .create_partner(&name)
                .map_err(|e| anyhow::anyhow!("create-partner failed: {e}"))?;
            println!(
                "{}",
                serde_json::json!({
                    "partnerId": partner.id.to_string(),
                    "onboardingSecret": secret.expose(),
                })
            );
            Ok(())
        }
    }
}

/// Under `PAY_PROCESSOR=onchain`: the chains file is valid and each node is the chain it
/// names, or the process does not start.
fn check_chains(config: &Config) -> anyhow::Result<()> {
    let chains = pay_server::chains::load(config)?;
    if chains.is_empty() {
        return Ok(());
    }
    actix_rt::System::new().block_on(pay_server::chains::check_nodes(&chains))
}

fn serve(config: Config) -> anyhow::Result<()> {
    check_chains(&config)?;
    let store = open_store(&config)?;
    let pay = build_pay(&config, store.clone())?;
    if let Some(banner) = demo_bootstrap(&config, &pay)? {
        println!("{banner}");
    }
    actix_rt::System::new().block_on(async move {
        let app = Application::build_with_store(&config, pay.clone(), store.clone())?;
        pay_server::chains::spawn_watchers(&config, store, pay)?;
        tracing::info!(listen = %config.listen, port = app.port(), base_url = %config.base_url, "serving");
        app.run().await.context("server stopped with an error")
    })
}
