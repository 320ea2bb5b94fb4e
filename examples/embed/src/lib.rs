//! An integrator's host embedding the domain crate: payment links and the hosted checkout
//! (with what they need: the merchants' tenancy, the webhook outbox the checkout queues its
//! events in, and the sandbox to pay), each service built with its public constructor over its
//! own ports. The storage ports are the host's own small store (`store::HostStore`); the other
//! adapters are the host's (`adapters`) or the project's adapter crates without I/O
//! (`pay-auth`, `pay-processor`). Then a merchant creates a payment link and a payer pays it
//! through the checkout, as the hosted page would, with the sandbox processor's deposit.

pub mod adapters;
pub mod store;

use std::sync::Arc;

use pay_auth::AuthCrypto;
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::{CheckoutAdapters, CheckoutService};
use pay_domain::kernel::assets::AssetCatalogue;
use pay_domain::kernel::events::EventConsumer;
use pay_domain::kernel::ratelimit::RateLimits;
use pay_domain::kernel::secret::Secret;
use pay_domain::kernel::service::{Kernel, KernelParts};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::{CreateLinkInput, LinkService};
use pay_domain::sandbox::{SandboxEvent, SandboxService};
use pay_domain::tenancy::TenancyService;
use pay_domain::webhooks::{WebhookAdapters, WebhookService};
use pay_processor::{SandboxPrices, SandboxProcessor};

pub use store::HostStore;

use adapters::{HmacSigner, HostClock, OneKeySealer};

/// Each context returns its own error enum; a host that runs several use cases in a row can
/// collect them as one boxed error (or match each where it calls it).
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// USDC on Base, one of the built-in settlement assets.
pub const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

/// What happened to the link and its payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub link_uid: String,
    pub public_url: String,
    pub statuses: Vec<SessionStatus>,
}

/// The services this host uses, nothing else of the domain.
#[derive(Clone)]
pub struct Host {
    pub kernel: Kernel,
    pub tenancy: TenancyService,
    pub links: LinkService,
    /// Held here: it consumes the link service's stop events (it ends a stopped link's
    /// sessions) for as long as it lives.
    pub checkout: Arc<CheckoutService>,
    pub sandbox: SandboxService,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("kernel", &self.kernel)
            .finish_non_exhaustive()
    }
}

/// The services over the host's store and adapters, on a clock that starts at `start_ms`
/// (unix ms) and runs on real time.
pub fn build(start_ms: i64) -> Host {
    let store = Arc::new(HostStore::default());
    let start = Timestamp::from_unix_millis(start_ms).expect("a start within the calendar");
    let clock = Arc::new(HostClock::starting_at(start));
    // Sealed secrets live as long as the store, in memory: so does their key.
    let sealer = OneKeySealer::new("host-1", &rand::random());
    let kernel = Kernel::new(KernelParts {
        clock: clock.clone(),
        crypto: Arc::new(AuthCrypto::new()),
        sealer: Arc::new(sealer),
        rate_limits: store.clone(),
        assets: AssetCatalogue::builtin(),
        public_pay_url: "https://pay.example".into(),
        limits: RateLimits::default(),
        events: store.clone(),
        idempotency: store.clone(),
    });
    let tenancy = TenancyService::new(kernel.clone(), store.clone());
    let links = LinkService::new(kernel.clone(), tenancy.clone(), store.clone(), false);
    let webhooks = WebhookService::new(
        kernel.clone(),
        tenancy.clone(),
        Arc::new(links.clone()),
        store.clone(),
        WebhookAdapters {
            signer: Arc::new(HmacSigner),
            wall_clock: clock,
            allow_private_targets: false,
            circuit: Default::default(),
            events_kept: pay_domain::webhooks::EVENTS_KEPT_DEFAULT,
        },
    );
    let checkout = Arc::new(CheckoutService::new(
        kernel.clone(),
        tenancy.clone(),
        links.clone(),
        webhooks,
        store,
        CheckoutAdapters {
            processor: Arc::new(SandboxProcessor::new()),
            prices: Arc::new(SandboxPrices::builtin()),
        },
    ));
    let consumer: Arc<dyn EventConsumer> = checkout.clone();
    kernel.events().subscribe(&consumer);
    let sandbox = SandboxService::new(
        kernel.clone(),
        tenancy.clone(),
        links.clone(),
        (*checkout).clone(),
        true,
    );
    Host {
        kernel,
        tenancy,
        links,
        checkout,
        sandbox,
    }
}

/// A merchant signs up, creates a 25 USDC link with its API key, and a payer pays it.
pub fn create_and_pay(host: &Host) -> Result<Outcome, Error> {
    let tenant = host.tenancy.bootstrap(
        "Acme Goods",
        "owner@acme.example",
        &Secret::new("a long password"),
    )?;
    let secret = tenant.key_secret.as_ref().map(Secret::expose);
    let merchant = host
        .tenancy
        .authenticate_api_key(Some(tenant.key_id.as_str()), secret)?;
    let link = host.links.create_link(
        &merchant,
        CreateLinkInput {
            amount: "25".into(),
            asset: Some(BASE_USDC.into()),
            skip_quote_acceptance: Some(false),
            ..Default::default()
        },
    )?;
    let uid = &link.uid;
    let quote = host
        .checkout
        .start_session(uid, BASE_USDC, "198.51.100.7")?;
    let pending = host.checkout.accept_session(uid, quote.id)?;
    let amount = pending.required_sell_amount;
    let paid = host.sandbox.sandbox_event(
        Some(&merchant),
        uid,
        SandboxEvent::Deposit {
            amount,
            hold: false,
        },
        Some("deposit-1"),
        None,
    )?;
    let seen = host.checkout.checkout_session(uid, paid.id)?;
    Ok(Outcome {
        link_uid: uid.to_string(),
        public_url: link.public_url(host.kernel.public_pay_url()),
        statuses: vec![quote.status, pending.status, paid.status, seen.status],
    })
}
