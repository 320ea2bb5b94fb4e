//! The merchant's EVM wallet use cases (put, read, delete) and the deposit address a session
//! gets, over the wallet port only.

use std::sync::Arc;

use crate::kernel::error::{NotFound, PortResult};
use crate::kernel::ports::Clock;
use crate::tenancy::{Principal, Scope};

use super::model::{AddressRequest, DepositAddress, StoredWallet, WalletView, FIRST_ADDRESSES};
use super::ports::WalletStore;
use super::xpub::Xpub;
use super::WalletError;

/// The wallet use cases.
#[derive(Clone)]
pub struct ChainService {
    clock: Arc<dyn Clock>,
    store: Arc<dyn WalletStore>,
}

impl std::fmt::Debug for ChainService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainService").finish_non_exhaustive()
    }
}

/// The EIP-55 address of child `0/<index>` of `xpub` (a stored key, so it parses): the
/// derivation `WalletStore::assign_address` takes.
pub fn derive_address(xpub: &str, index: u32) -> Option<String> {
    Xpub::parse(xpub).ok()?.address(index)
}

impl ChainService {
    /// The service over its own ports: real time (wallet timestamps) and the wallet store.
    pub fn new(clock: Arc<dyn Clock>, store: Arc<dyn WalletStore>) -> ChainService {
        ChainService { clock, store }
    }

    /// Sets the company's extended public key (`pay:settings:write`). A private key is refused
    /// before anything else happens to it: it is neither stored nor logged nor echoed.
    pub fn put_wallet(&self, p: &Principal, xpub: &str) -> Result<WalletView, WalletError> {
        p.authorize(Scope::SettingsWrite)?;
        let key = Xpub::parse(xpub)?;
        let stored = self.store.put_wallet(
            p.company_id,
            key.as_str(),
            &key.fingerprint(),
            self.clock.now(),
        )?;
        Ok(view(&key, stored))
    }

    /// The company's wallet (`pay:settings:read`); `NotFound` when it has none.
    pub fn wallet(&self, p: &Principal) -> Result<WalletView, WalletError> {
        p.authorize(Scope::SettingsRead)?;
        let stored = self
            .store
            .wallet(p.company_id)?
            .ok_or(NotFound { kind: "wallet" })?;
        let key = Xpub::parse(&stored.xpub)
            .map_err(|_| crate::Fault::new("a stored extended public key does not parse"))?;
        Ok(view(&key, stored))
    }

    /// Removes the company's key (`pay:settings:write`); `NotFound` when it had none. Sessions
    /// already started keep their addresses.
    pub fn delete_wallet(&self, p: &Principal) -> Result<(), WalletError> {
        p.authorize(Scope::SettingsWrite)?;
        if self.store.delete_wallet(p.company_id)? {
            Ok(())
        } else {
            Err(NotFound { kind: "wallet" }.into())
        }
    }

    /// Whether the company has a key (a start on an EVM asset needs one).
    pub fn has_wallet(&self, company: crate::kernel::ids::CompanyId) -> PortResult<bool> {
        Ok(self.store.wallet(company)?.is_some())
    }

    /// The session's deposit address (the same one when asked again); `None` when the company
    /// has no key.
    pub fn deposit_address(&self, request: &AddressRequest) -> PortResult<Option<DepositAddress>> {
        self.store.assign_address(request, &derive_address)
    }
}

fn view(key: &Xpub, wallet: StoredWallet) -> WalletView {
    WalletView {
        first_addresses: (0..FIRST_ADDRESSES)
            .filter_map(|i| key.address(i))
            .collect(),
        wallet,
    }
}
