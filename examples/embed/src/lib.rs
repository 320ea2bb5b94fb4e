//! An integrator's host embedding the domain crate: the service is built over the in-memory
//! stores and fakes of `pay_domain::testing` (a real host would pass its own adapters of the
//! same ports), then a merchant creates a payment link and a payer pays it through the
//! checkout, as the hosted page would, with the sandbox processor's deposit.

use std::sync::Arc;

use pay_domain::app::{Adapters, AppConfig, Pay, Stores};
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::kernel::assets::AssetCatalogue;
use pay_domain::kernel::ratelimit::RateLimits;
use pay_domain::kernel::secret::Secret;
use pay_domain::links::CreateLinkInput;
use pay_domain::sandbox::SandboxEvent;
use pay_domain::testing::{
    FakeCrypto, FakePortalKeys, FakePrices, FakeProcessor, FakeSealer, FakeSigner, FixedClock,
    MemFiles, MemStore,
};

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

/// The domain over in-memory adapters, on a clock that starts at `start_ms` (unix ms).
pub fn build(start_ms: i64) -> Pay {
    let store = Arc::new(MemStore::default());
    let clock = Arc::new(FixedClock(start_ms.into()));
    Pay::new(
        AppConfig {
            assets: AssetCatalogue::builtin(),
            public_pay_url: "https://pay.example".into(),
            limits: RateLimits::default(),
            sandbox: true,
            allow_private_targets: false,
            billing: Default::default(),
            oauth: Default::default(),
            webhook_circuit: Default::default(),
        },
        Stores::all_in(store),
        Adapters {
            clock: clock.clone(),
            crypto: Arc::new(FakeCrypto::default()),
            sealer: Arc::new(FakeSealer::default()),
            signer: Arc::new(FakeSigner::default()),
            wall_clock: clock,
            processor: Arc::new(FakeProcessor::default()),
            prices: Arc::new(FakePrices),
            portal_keys: Arc::new(FakePortalKeys::default()),
            files: Arc::new(MemFiles::default()),
        },
    )
}

/// A merchant signs up, creates a 25 USDC link with its API key, and a payer pays it.
pub fn create_and_pay(pay: &Pay) -> Result<Outcome, Error> {
    let tenant = pay.tenancy().bootstrap(
        "Acme Goods",
        "owner@acme.example",
        &Secret::new("a long password"),
    )?;
    let secret = tenant.key_secret.as_ref().map(Secret::expose);
    let merchant = pay
        .tenancy()
        .authenticate_api_key(Some(tenant.key_id.as_str()), secret)?;
    let link = pay.links().create_link(
        &merchant,
        CreateLinkInput {
            amount: "25".into(),
            asset: Some(BASE_USDC.into()),
            skip_quote_acceptance: Some(false),
            ..Default::default()
        },
    )?;
    let uid = link.uid.as_str();
    let quote = pay
        .checkout()
        .start_session(uid, BASE_USDC, "198.51.100.7")?;
    let pending = pay.checkout().accept_session(uid, &quote.id.to_string())?;
    let amount = pending.required_sell_amount;
    let paid = pay.sandbox().sandbox_event(
        Some(&merchant),
        uid,
        SandboxEvent::Deposit {
            amount,
            hold: false,
        },
        Some("deposit-1"),
        None,
    )?;
    let seen = pay.checkout().checkout_session(uid, &paid.id.to_string())?;
    Ok(Outcome {
        link_uid: uid.to_owned(),
        public_url: link.public_url(pay.public_pay_url()),
        statuses: vec![quote.status, pending.status, paid.status, seen.status],
    })
}
