//! The in-memory store: the merchants' EVM keys and the deposit addresses handed out.

use super::MemStore;
use crate::chains::ports::{Derive, WalletStore};
use crate::chains::{AddressRequest, DepositAddress, StoredWallet};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::CompanyId;
use crate::kernel::timestamp::Timestamp;

/// A key a company set: (company, xpub, fingerprint, next index, created).
pub type KeyRow = (CompanyId, String, String, u32, Timestamp);
/// The current key: (company, xpub, created, updated).
pub type WalletRow = (CompanyId, String, Timestamp, Timestamp);

fn current(t: &super::Tables, company: CompanyId) -> Option<StoredWallet> {
    let (_, xpub, created_at, updated_at) = t.wallets.iter().find(|w| w.0 == company)?;
    let (_, _, fingerprint, next_index, _) = t
        .wallet_keys
        .iter()
        .find(|k| k.0 == company && &k.1 == xpub)?;
    Some(StoredWallet {
        company_id: company,
        xpub: xpub.clone(),
        fingerprint: fingerprint.clone(),
        next_index: *next_index,
        created_at: *created_at,
        updated_at: *updated_at,
    })
}

impl WalletStore for MemStore {
    fn put_wallet(
        &self,
        company: CompanyId,
        xpub: &str,
        fingerprint: &str,
        at: Timestamp,
    ) -> PortResult<StoredWallet> {
        self.count_call("put_wallet");
        let mut t = self.write();
        if !t.companies.iter().any(|(c, _)| c.id == company) {
            return Err(Fault::new("foreign key: company"));
        }
        if !t.wallet_keys.iter().any(|k| k.0 == company && k.1 == xpub) {
            t.wallet_keys
                .push((company, xpub.to_owned(), fingerprint.to_owned(), 0, at));
        }
        match t.wallets.iter_mut().find(|w| w.0 == company) {
            Some(w) => {
                w.1 = xpub.to_owned();
                w.3 = at;
            }
            None => t.wallets.push((company, xpub.to_owned(), at, at)),
        }
        current(&t, company).ok_or_else(|| Fault::new("wallet vanished"))
    }

    fn wallet(&self, company: CompanyId) -> PortResult<Option<StoredWallet>> {
        self.count_call("wallet");
        Ok(current(&self.tables(), company))
    }

    fn delete_wallet(&self, company: CompanyId) -> PortResult<bool> {
        self.count_call("delete_wallet");
        let mut t = self.write();
        let before = t.wallets.len();
        t.wallets.retain(|w| w.0 != company);
        Ok(t.wallets.len() < before)
    }

    fn assign_address(
        &self,
        request: &AddressRequest,
        derive: Derive<'_>,
    ) -> PortResult<Option<DepositAddress>> {
        self.count_call("assign_address");
        let mut t = self.write();
        if let Some(a) = t
            .deposit_addresses
            .iter()
            .find(|a| a.session_id == request.session_id)
        {
            return Ok(Some(a.clone()));
        }
        let Some(xpub) = t
            .wallets
            .iter()
            .find(|w| w.0 == request.company_id)
            .map(|w| w.1.clone())
        else {
            return Ok(None);
        };
        // The key's counter, shared by every company that set it (issue 31): one past the
        // highest child any of them was handed (every index taken is handed out here).
        let mut i = t
            .wallet_keys
            .iter()
            .filter(|k| k.1 == xpub)
            .map(|k| k.3)
            .max()
            .unwrap_or(0);
        let (index, address) = loop {
            if i >= 0x8000_0000 {
                return Err(Fault::new("exhausted key"));
            }
            if let Some(address) = derive(&xpub, i) {
                break (i, address);
            }
            i += 1;
        };
        let key = t
            .wallet_keys
            .iter_mut()
            .find(|k| k.0 == request.company_id && k.1 == xpub)
            .ok_or_else(|| Fault::new("current key without its row"))?;
        key.3 = index + 1;
        let a = DepositAddress {
            company_id: request.company_id,
            session_id: request.session_id,
            chain_code: request.chain_code.clone(),
            asset_identifier: request.asset_identifier.clone(),
            xpub,
            index,
            address: address.to_ascii_lowercase(),
            created_at: request.at,
            watch_until: request.watch_until,
        };
        t.deposit_addresses.push(a.clone());
        Ok(Some(a))
    }

    fn session_address(&self, session: uuid::Uuid) -> PortResult<Option<DepositAddress>> {
        self.count_call("session_address");
        Ok(self
            .tables()
            .deposit_addresses
            .iter()
            .find(|a| a.session_id == session)
            .cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chains::Xpub;
    use crate::testing::conformance::fixtures::{company, ts};

    const KEY: &str = "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP";

    fn derive(xpub: &str, i: u32) -> Option<String> {
        Xpub::parse(xpub).ok()?.address(i)
    }

    fn assign(store: &MemStore, company_id: CompanyId) -> u32 {
        let request = AddressRequest {
            company_id,
            session_id: uuid::Uuid::new_v4(),
            chain_code: "local".into(),
            asset_identifier: "eip155:31337/slip44:60".into(),
            at: ts(1_000),
            watch_until: ts(100_000),
        };
        store
            .assign_address(&request, &derive)
            .unwrap()
            .unwrap()
            .index
    }

    /// Issue 31, as the SQL stores do: one counter per key, each company's `next_index` one
    /// past its own highest child.
    #[test]
    fn two_companies_with_one_key_get_disjoint_indices() {
        let store = MemStore::default();
        let (a, b) = (company(&store), company(&store));
        for c in [a, b] {
            assert_eq!(store.put_wallet(c, KEY, "fp", ts(0)).unwrap().next_index, 0);
        }
        assert_eq!([assign(&store, a), assign(&store, a)], [0, 1]);
        assert_eq!([assign(&store, b), assign(&store, a)], [2, 3]);
        assert_eq!(store.wallet(a).unwrap().unwrap().next_index, 4);
        assert_eq!(store.wallet(b).unwrap().unwrap().next_index, 3);
    }
}
