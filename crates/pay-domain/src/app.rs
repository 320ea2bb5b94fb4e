//! The server's composition root: one service per context, each built with its public
//! constructor over its own ports, once, from the adapters. Adapters reach the use cases
//! through the services (`pay.links()`, `pay.checkout()`, ...); no port is public here. A host
//! that embeds only some contexts builds their services itself, with the same constructors.

use std::sync::Arc;

use crate::bookkeeping::ports::BookkeepingStore;
use crate::bookkeeping::{BookkeepingService, FileStore};
use crate::chains::ports::WalletStore;
use crate::chains::ChainService;
use crate::checkout::ports::{PriceSource, Processor};
use crate::checkout::{CheckoutAdapters, CheckoutService, CheckoutStore};
use crate::customers::ports::{CustomerPorts, PortalKeys};
use crate::customers::CustomerService;
use crate::installations::ports::InstallationPorts;
use crate::installations::InstallationService;
use crate::kernel::assets::AssetCatalogue;
use crate::kernel::error::PortResult;
use crate::kernel::events::{DrainReport, EventConsumer, EventStore, Events, DRAIN_BATCH};
use crate::kernel::ports::{Clock, Crypto, HealthCheck, SecretSealer};
use crate::kernel::ratelimit::{RateLimitStore, RateLimits};
use crate::kernel::service::{Kernel, KernelParts};
use crate::kernel::timestamp::Timestamp;
use crate::links::ports::LinkPorts;
use crate::links::LinkService;
use crate::mail::{MailService, MailStore};
use crate::oauth::ports::OAuthPorts;
use crate::oauth::{OAuthConfig, OAuthService};
use crate::onboarding::ports::OnboardingPorts;
use crate::onboarding::OnboardingService;
use crate::sandbox::ports::ClockFollower;
use crate::sandbox::SandboxService;
use crate::settings::ports::SettingsStore;
use crate::settings::SettingsService;
use crate::subscriptions::ports::SubscriptionStore;
use crate::subscriptions::{BillingConfig, SubscriptionService};
use crate::tenancy::ports::TenancyPorts;
use crate::tenancy::TenancyService;
use crate::webhooks::ports::{WebhookSigner, WebhookStore};
use crate::webhooks::{WebhookAdapters, WebhookService};

/// Every context's store ports. `Stores::all_in` fills them from one object that implements
/// them all (as `pay-store` does); an integrator may give each its own.
#[derive(Clone)]
pub struct Stores {
    pub tenancy: Arc<dyn TenancyPorts>,
    pub links: Arc<dyn LinkPorts>,
    pub settings: Arc<dyn SettingsStore + Send + Sync>,
    pub checkout: Arc<dyn CheckoutStore + Send + Sync>,
    pub webhooks: Arc<dyn WebhookStore + Send + Sync>,
    pub mail: Arc<dyn MailStore + Send + Sync>,
    pub customers: Arc<dyn CustomerPorts>,
    pub subscriptions: Arc<dyn SubscriptionStore + Send + Sync>,
    pub bookkeeping: Arc<dyn BookkeepingStore + Send + Sync>,
    /// The merchants' EVM keys and deposit addresses (the chain processor).
    pub chains: Arc<dyn WalletStore>,
    pub oauth: Arc<dyn OAuthPorts>,
    pub installations: Arc<dyn InstallationPorts>,
    /// Onboarding partners and their drafts.
    pub onboarding: Arc<dyn OnboardingPorts>,
    pub rate_limits: Arc<dyn RateLimitStore + Send + Sync>,
    /// The outbox of domain events (what one context decided and others react to).
    pub events: Arc<dyn EventStore + Send + Sync>,
    pub health: Arc<dyn HealthCheck + Send + Sync>,
}

impl std::fmt::Debug for Stores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stores").finish_non_exhaustive()
    }
}

impl Stores {
    /// Every port from one store.
    pub fn all_in<S: PayStore + 'static>(store: Arc<S>) -> Stores {
        Stores {
            tenancy: store.clone(),
            links: store.clone(),
            settings: store.clone(),
            checkout: store.clone(),
            webhooks: store.clone(),
            mail: store.clone(),
            customers: store.clone(),
            subscriptions: store.clone(),
            bookkeeping: store.clone(),
            chains: store.clone(),
            oauth: store.clone(),
            installations: store.clone(),
            onboarding: store.clone(),
            rate_limits: store.clone(),
            events: store.clone(),
            health: store,
        }
    }
}

/// The adapters besides storage.
#[derive(Clone)]
pub struct Adapters {
    /// Real time of the process (tests stand in for it).
    pub clock: Arc<dyn Clock>,
    pub crypto: Arc<dyn Crypto>,
    pub sealer: Arc<dyn SecretSealer>,
    pub signer: Arc<dyn WebhookSigner>,
    /// Real time, for webhook signature timestamps, whatever `clock` is.
    pub wall_clock: Arc<dyn Clock>,
    pub processor: Arc<dyn Processor>,
    pub prices: Arc<dyn PriceSource>,
    /// The customer portal URL signing keys (a key of their own, with rotation).
    pub portal_keys: Arc<dyn PortalKeys>,
    /// The bytes of private evidence files (local disk, object storage).
    pub files: Arc<dyn FileStore>,
}

impl std::fmt::Debug for Adapters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Adapters").finish_non_exhaustive()
    }
}

/// The operator's configuration the use cases read.
#[derive(Debug, Clone)]
pub struct AppConfig {
    pub assets: AssetCatalogue,
    /// `{public_pay_url}`: where hosted checkout pages live.
    pub public_pay_url: String,
    /// What each rate-limited entry point allows.
    pub limits: RateLimits,
    /// Sandbox mode: the sandbox events route and the companies' test clocks are on.
    pub sandbox: bool,
    /// Development and tests: allow http and private addresses as callback targets.
    pub allow_private_targets: bool,
    /// The billing scheduler's settings (invoice lead time, lease).
    pub billing: BillingConfig,
    /// Access-token lifetime and the DPoP proof window.
    pub oauth: OAuthConfig,
    /// When a failing webhook endpoint is paused (default: failing for an hour).
    pub webhook_circuit: crate::webhooks::CircuitRule,
    /// How long the event log keeps an event (`webhooks::EVENTS_KEPT_DEFAULT`: 30 days).
    pub events_kept: time::Duration,
}

/// The service's use cases, one service per context: a handle, cloned into every handler,
/// blocking call and background loop, so a clone is one reference count and a move copies a
/// pointer (the services together are kilobytes: copied into each task, they were a tenth of a
/// request's instructions).
#[derive(Clone)]
pub struct Pay {
    s: Arc<Services>,
}

/// What a `Pay` handle points to.
struct Services {
    k: Kernel,
    tenancy: TenancyService,
    settings: SettingsService,
    links: LinkService,
    webhooks: WebhookService,
    checkout: Arc<CheckoutService>,
    sandbox: SandboxService,
    mail: MailService,
    customers: CustomerService,
    /// Shared with the sandbox, which hands it the company clock's steps (`ClockFollower`),
    /// and with the event outbox (it pays the cycle of a completed session).
    subscriptions: Arc<SubscriptionService>,
    /// Shared with the event outbox (it records a completed session's incoming transfer).
    bookkeeping: Arc<BookkeepingService>,
    oauth: OAuthService,
    chains: ChainService,
    installations: InstallationService,
    onboarding: OnboardingService,
    health: Arc<dyn HealthCheck + Send + Sync>,
}

impl std::fmt::Debug for Pay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pay")
            .field("public_pay_url", &self.s.k.public_pay_url)
            .finish_non_exhaustive()
    }
}

impl Pay {
    /// Builds every service over its ports. The reacting contexts consume the domain events
    /// of the deciding ones (a completed session pays its cycle and records its incoming
    /// transfer; a stopped link ends its sessions), and the billing scheduler walks with each
    /// moved test clock, for as long as this value or a clone lives.
    pub fn new(config: AppConfig, stores: Stores, adapters: Adapters) -> Pay {
        let k = Kernel::new(KernelParts {
            clock: adapters.clock,
            crypto: adapters.crypto,
            sealer: adapters.sealer,
            rate_limits: stores.rate_limits,
            assets: config.assets,
            public_pay_url: config.public_pay_url,
            limits: config.limits,
            events: stores.events,
            idempotency: stores.webhooks.clone(),
        });
        let tenancy = TenancyService::new(k.clone(), stores.tenancy);
        let settings = SettingsService::new(k.clone(), tenancy.clone(), stores.settings);
        let links = LinkService::new(
            k.clone(),
            tenancy.clone(),
            stores.links,
            config.allow_private_targets,
        );
        let webhooks = WebhookService::new(
            k.clone(),
            tenancy.clone(),
            Arc::new(links.clone()),
            stores.webhooks,
            WebhookAdapters {
                signer: adapters.signer,
                wall_clock: adapters.wall_clock.clone(),
                allow_private_targets: config.allow_private_targets,
                circuit: config.webhook_circuit,
                events_kept: config.events_kept,
            },
        );
        let processor = adapters.processor.clone();
        let checkout = Arc::new(CheckoutService::new(
            k.clone(),
            tenancy.clone(),
            links.clone(),
            webhooks.clone(),
            stores.checkout,
            CheckoutAdapters {
                processor: adapters.processor,
                prices: adapters.prices,
            },
        ));
        let consumer: Arc<dyn EventConsumer> = checkout.clone();
        k.events.subscribe(&consumer);
        let sandbox = SandboxService::new(
            k.clone(),
            tenancy.clone(),
            links.clone(),
            (*checkout).clone(),
            config.sandbox,
        );
        let mail = MailService::new(k.clone(), tenancy.clone(), links.clone(), stores.mail);
        let customers = CustomerService::new(
            k.clone(),
            tenancy.clone(),
            stores.customers,
            adapters.portal_keys,
        );
        let subscriptions = Arc::new(SubscriptionService::new(
            k.clone(),
            tenancy.clone(),
            customers.clone(),
            links.clone(),
            webhooks.clone(),
            mail.clone(),
            stores.subscriptions,
            config.billing,
        ));
        let follower: Arc<dyn ClockFollower> = subscriptions.clone();
        sandbox.follow(&follower);
        let consumer: Arc<dyn EventConsumer> = subscriptions.clone();
        k.events.subscribe(&consumer);
        let bookkeeping = Arc::new(BookkeepingService::new(
            k.clone(),
            tenancy.clone(),
            customers.clone(),
            stores.bookkeeping,
            adapters.files,
            processor,
            config.sandbox,
        ));
        let consumer: Arc<dyn EventConsumer> = bookkeeping.clone();
        k.events.subscribe(&consumer);
        let oauth = OAuthService::new(k.clone(), tenancy.clone(), stores.oauth, config.oauth);
        let chains = ChainService::new(adapters.wall_clock.clone(), stores.chains);
        let installations = InstallationService::new(
            k.clone(),
            oauth.clone(),
            webhooks.clone(),
            stores.installations,
            config.allow_private_targets,
        );
        let onboarding =
            OnboardingService::new(k.clone(), tenancy.clone(), oauth.clone(), stores.onboarding);
        let s = Arc::new(Services {
            k,
            tenancy,
            settings,
            links,
            webhooks,
            checkout,
            sandbox,
            mail,
            customers,
            subscriptions,
            bookkeeping,
            oauth,
            chains,
            installations,
            onboarding,
            health: stores.health,
        });
        Pay { s }
    }

    /// The merchant's EVM wallet (extended public key) and the deposit addresses it gives.
    pub fn chains(&self) -> &ChainService {
        &self.s.chains
    }

    pub fn tenancy(&self) -> &TenancyService {
        &self.s.tenancy
    }

    pub fn settings(&self) -> &SettingsService {
        &self.s.settings
    }

    pub fn links(&self) -> &LinkService {
        &self.s.links
    }

    pub fn webhooks(&self) -> &WebhookService {
        &self.s.webhooks
    }

    pub fn checkout(&self) -> &CheckoutService {
        &self.s.checkout
    }

    pub fn sandbox(&self) -> &SandboxService {
        &self.s.sandbox
    }

    pub fn mail(&self) -> &MailService {
        &self.s.mail
    }

    pub fn customers(&self) -> &CustomerService {
        &self.s.customers
    }

    pub fn subscriptions(&self) -> &SubscriptionService {
        &self.s.subscriptions
    }

    pub fn bookkeeping(&self) -> &BookkeepingService {
        &self.s.bookkeeping
    }

    pub fn oauth(&self) -> &OAuthService {
        &self.s.oauth
    }

    pub fn installations(&self) -> &InstallationService {
        &self.s.installations
    }

    pub fn onboarding(&self) -> &OnboardingService {
        &self.s.onboarding
    }

    /// Real time (the process clock).
    pub fn now(&self) -> Timestamp {
        self.s.k.now()
    }

    /// `{public_pay_url}`: where hosted checkout pages live.
    pub fn public_pay_url(&self) -> &str {
        &self.s.k.public_pay_url
    }

    /// `len` random characters from `[A-Za-z0-9]` (nonces, markers).
    pub fn random_alphanumeric(&self, len: usize) -> String {
        self.s.k.crypto.random_alphanumeric(len)
    }

    /// Readiness: the database answers.
    pub fn ready(&self) -> PortResult<()> {
        self.s.health.ping()
    }

    /// Housekeeping: forgets expired sign-in sessions, rate-limit hits older than the longest
    /// window that counts them, old sent or failed mails, DPoP `jti`s past their window and
    /// OAuth codes and tokens a day past their expiry, and idempotency records past the 24
    /// hours they are kept, and evidence files no expense has linked for a day, and domain
    /// events done for a day. Returns how
    /// many rows went.
    pub fn prune(&self) -> PortResult<u64> {
        let now = self.s.k.now();
        let rows = self
            .s
            .health
            .prune(now, now.minus(self.s.k.limits.longest_window()))?;
        Ok(rows
            + self.s.mail.prune(now)?
            + self.s.oauth.prune()?
            + self.s.webhooks.prune(now)?
            + self.s.bookkeeping.clean_orphan_evidence(now)?
            + self.s.k.events.prune(now.minus(EVENTS_KEPT))?)
    }

    /// The drain of the event outbox: replays what a crash (or a failed reaction) left
    /// between a deciding write and its reactions, one round of at most `DRAIN_BATCH`
    /// events. Safe on every instance at once (claims are leased; reactions deduplicate by
    /// event id).
    pub fn drain_events(&self) -> PortResult<DrainReport> {
        self.s.k.events.drain(self.s.k.now(), DRAIN_BATCH)
    }

    /// The event outbox (tests stage a crash between a deciding write and its reactions).
    pub fn events(&self) -> &Events {
        &self.s.k.events
    }
}

/// How long a done domain event (and its consumption records) is kept.
const EVENTS_KEPT: time::Duration = time::Duration::days(1);

pub use crate::sandbox::clock::MAX_ADVANCE_SECS as MAX_CLOCK_ADVANCE_SECS;

/// Every store port, as one object (what `Stores::all_in` takes).
pub trait PayStore:
    TenancyPorts
    + LinkPorts
    + SettingsStore
    + CheckoutStore
    + WebhookStore
    + MailStore
    + CustomerPorts
    + SubscriptionStore
    + BookkeepingStore
    + WalletStore
    + OAuthPorts
    + InstallationPorts
    + OnboardingPorts
    + RateLimitStore
    + EventStore
    + HealthCheck
    + Send
    + Sync
{
}

impl<T> PayStore for T where
    T: TenancyPorts
        + LinkPorts
        + SettingsStore
        + CheckoutStore
        + WebhookStore
        + MailStore
        + CustomerPorts
        + SubscriptionStore
        + BookkeepingStore
        + WalletStore
        + OAuthPorts
        + InstallationPorts
        + OnboardingPorts
        + RateLimitStore
        + EventStore
        + HealthCheck
        + Send
        + Sync
{
}

#[cfg(test)]
mod tests {
    use super::Pay;

    /// `Pay` is cloned into every handler, blocking call, background loop and test, and held
    /// by value in their futures and tokio tasks: it stays a pointer. (As a struct of services
    /// it was 9 KiB: each blocking call copied it into its task several times, and debug
    /// builds overflowed the 2 MiB test thread with it.)
    #[test]
    fn pay_is_a_handle() {
        assert_eq!(std::mem::size_of::<Pay>(), std::mem::size_of::<usize>());
    }
}
