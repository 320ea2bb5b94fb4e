//! Fakes of the other ports: a clock the test moves, deterministic randomness and digests, a
//! sealer and a signer that record what they did, a processor and a price table.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::checkout::ports::{DepositChannel, PriceSource, Processor, SettlementTransfer};
use crate::kernel::amount::{Decimal, Rounding};
use crate::kernel::assets::DestinationAsset;
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::*;
use crate::kernel::ports::{Clock, Crypto, SecretSealer};
use crate::kernel::secret::SealedSecret;
use crate::kernel::secret::{Secret, SecretDigest};
use crate::kernel::timestamp::Timestamp;
use crate::webhooks::ports::WebhookSigner;
use time::Duration;

/// A clock the test moves (unix milliseconds).
#[derive(Debug)]
pub struct FixedClock(pub AtomicI64);

impl FixedClock {
    pub fn advance(&self, d: Duration) {
        self.0
            .fetch_add(d.whole_milliseconds() as i64, Ordering::SeqCst);
    }
}

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(self.0.load(Ordering::SeqCst)).unwrap()
    }
}

pub const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Deterministic crypto: a counter for randomness and uuids; digests and hashes are readable.
#[derive(Debug, Default)]
pub struct FakeCrypto {
    pub counter: AtomicU64,
    /// The `phc` argument of every `verify_password` call.
    pub verify_calls: Mutex<Vec<Option<String>>>,
    pub hash_calls: AtomicU64,
}

impl FakeCrypto {
    pub fn tick(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub fn verify_calls(&self) -> Vec<Option<String>> {
        self.verify_calls.lock().unwrap().clone()
    }

    pub fn reset_verify_calls(&self) {
        self.verify_calls.lock().unwrap().clear();
    }
}

impl Crypto for FakeCrypto {
    fn random_alphanumeric(&self, len: usize) -> String {
        // The counter in base 62, left-padded with '0' (distinct counters, distinct strings).
        let mut n = self.tick();
        let mut out = vec![b'0'; len];
        for slot in out.iter_mut().rev() {
            *slot = BASE62[(n % 62) as usize];
            n /= 62;
        }
        String::from_utf8(out).unwrap()
    }

    fn new_uuid(&self) -> uuid::Uuid {
        uuid::Uuid::from_u128(u128::from(self.tick()))
    }

    fn digest(&self, secret: &str) -> SecretDigest {
        SecretDigest(format!("d:{secret}"))
    }

    fn digest_matches(&self, secret: &str, digest: &SecretDigest) -> bool {
        self.digest(secret) == *digest
    }

    fn hash_password(&self, password: &str) -> PortResult<String> {
        self.hash_calls.fetch_add(1, Ordering::SeqCst);
        Ok(format!("h:{password}"))
    }

    fn verify_password(&self, password: &str, phc: Option<&str>) -> bool {
        self.verify_calls
            .lock()
            .unwrap()
            .push(phc.map(str::to_owned));
        phc == Some(format!("h:{password}").as_str())
    }
}

/// The key id `FakeSealer` seals with.
pub const SEAL_KEY_ID: &str = "k1";
/// An older key `FakeSealer` still opens (values under it are not current).
pub const OLD_SEAL_KEY_ID: &str = "k0";

/// Sealing that a test can read: `{aad}|{secret}` under key `k1`; opening needs the same aad.
/// Values under `k0` open too but are not current (as after a key rotation).
#[derive(Debug, Default)]
pub struct FakeSealer {
    /// The aad of every `seal` call.
    pub sealed_with: Mutex<Vec<String>>,
    /// The aad of every `open` call.
    pub opened_with: Mutex<Vec<String>>,
}

impl FakeSealer {
    pub fn sealed(secret: &str, aad: &str) -> SealedSecret {
        SealedSecret {
            key_id: SEAL_KEY_ID.into(),
            sealed: format!("{aad}|{secret}"),
        }
    }

    /// A value as an older key sealed it.
    pub fn sealed_under_old_key(secret: &str, aad: &str) -> SealedSecret {
        SealedSecret {
            key_id: OLD_SEAL_KEY_ID.into(),
            ..FakeSealer::sealed(secret, aad)
        }
    }

    pub fn seal_calls(&self) -> Vec<String> {
        self.sealed_with.lock().unwrap().clone()
    }
}

impl SecretSealer for FakeSealer {
    fn seal(&self, secret: &Secret, aad: &str) -> PortResult<SealedSecret> {
        self.sealed_with.lock().unwrap().push(aad.to_owned());
        Ok(FakeSealer::sealed(secret.expose(), aad))
    }

    fn open(&self, sealed: &SealedSecret, aad: &str) -> PortResult<Secret> {
        self.opened_with.lock().unwrap().push(aad.to_owned());
        if sealed.key_id != SEAL_KEY_ID && sealed.key_id != OLD_SEAL_KEY_ID {
            return Err(Fault::new("unknown sealing key"));
        }
        sealed
            .sealed
            .strip_prefix(aad)
            .and_then(|rest| rest.strip_prefix('|'))
            .map(Secret::new)
            .ok_or_else(|| Fault::new("cannot open: other associated data"))
    }

    fn is_current(&self, sealed: &SealedSecret) -> bool {
        sealed.key_id == SEAL_KEY_ID
    }
}

/// One `signature_header` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignCall {
    pub secrets: Vec<String>,
    pub t: i64,
    pub body: String,
}

/// Records what signed; the header names the secrets so tests can see them:
/// `t={t},v1={secret1},v1={secret2}`.
#[derive(Debug, Default)]
pub struct FakeSigner {
    pub calls: Mutex<Vec<SignCall>>,
}

impl FakeSigner {
    pub fn calls(&self) -> Vec<SignCall> {
        self.calls.lock().unwrap().clone()
    }

    pub fn last(&self) -> SignCall {
        self.calls().pop().expect("the signer was called")
    }
}

impl WebhookSigner for FakeSigner {
    fn signature_header(&self, secrets: &[Secret], t: i64, body: &[u8]) -> String {
        let secrets: Vec<String> = secrets.iter().map(|s| s.expose().to_owned()).collect();
        let mut header = format!("t={t}");
        for s in &secrets {
            header.push_str(&format!(",v1={s}"));
        }
        self.calls.lock().unwrap().push(SignCall {
            secrets,
            t,
            body: String::from_utf8(body.to_vec()).unwrap(),
        });
        header
    }
}

/// USD prices: ETH 2000, every other asset 1.
#[derive(Debug)]
pub struct FakePrices;

/// The asset the fake prices at 2000 USD.
pub const ETH: &str = "eip155:1/slip44:60";

pub fn usd_price(asset: &str) -> Decimal {
    Decimal::parse(if asset == ETH { "2000" } else { "1" }).unwrap()
}

impl PriceSource for FakePrices {
    fn price(&self, asset: &str, unit: &str) -> PortResult<Option<Decimal>> {
        let of_unit = match unit {
            "USD" => Decimal::parse("1").unwrap(),
            "EUR" => return Ok(None),
            other => usd_price(other),
        };
        Ok(usd_price(asset).checked_div(of_unit, 18, Rounding::Down))
    }
}

/// Takes every asset, 1 % fee, a deterministic channel per session; wallets can be removed.
#[derive(Debug, Default)]
pub struct FakeProcessor {
    pub no_wallet: Mutex<Vec<String>>,
    pub channels: AtomicU64,
}

impl Processor for FakeProcessor {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn fee_percent(&self) -> Decimal {
        Decimal::parse("1").unwrap()
    }
    fn supports(&self, _asset: &DestinationAsset) -> bool {
        true
    }
    fn merchant_wallet(
        &self,
        company: CompanyId,
        asset: &DestinationAsset,
    ) -> PortResult<Option<String>> {
        if self
            .no_wallet
            .lock()
            .unwrap()
            .contains(&asset.asset_identifier)
        {
            return Ok(None);
        }
        Ok(Some(format!("wallet-{company}-{}", asset.chain_code)))
    }
    fn open_channel(
        &self,
        session: uuid::Uuid,
        asset: &DestinationAsset,
        _amount: Decimal,
    ) -> PortResult<DepositChannel> {
        self.channels.fetch_add(1, Ordering::SeqCst);
        Ok(DepositChannel {
            channel_id: format!("ch-{session}"),
            composite_channel_id: format!("{}:ch-{session}", asset.chain_code),
            deposit_address: format!("dep-{session}"),
            source_chain: asset.chain_code.clone(),
        })
    }
    fn settlement_transfer(
        &self,
        session: uuid::Uuid,
        asset: &DestinationAsset,
        _amount: Decimal,
        _destination: &str,
    ) -> PortResult<Option<SettlementTransfer>> {
        let chain = asset.asset_identifier.split('/').next().unwrap_or_default();
        Ok(Some(SettlementTransfer {
            chain: chain.to_owned(),
            tx_hash: format!("0x{}", session.simple()),
            index: 0,
            from_address: "processor-hot-wallet".to_owned(),
        }))
    }
}

/// Portal keys the test rotates: `current` signs, `previous` still verify.
#[derive(Debug)]
pub struct FakePortalKeys {
    pub keys: Mutex<(u8, Vec<u8>)>,
}

impl Default for FakePortalKeys {
    fn default() -> Self {
        FakePortalKeys {
            keys: Mutex::new((1, vec![])),
        }
    }
}

impl FakePortalKeys {
    /// A new current key; the old one stays accepted.
    pub fn rotate(&self) {
        let mut k = self.keys.lock().unwrap();
        let old = k.0;
        k.1.push(old);
        k.0 = old + 1;
    }

    /// Forgets every previous key.
    pub fn drop_previous(&self) {
        self.keys.lock().unwrap().1.clear();
    }

    fn key(b: u8) -> crate::customers::portal::PortalKey {
        crate::customers::portal::PortalKey::new(vec![b; 32]).unwrap()
    }
}

impl crate::customers::ports::PortalKeys for FakePortalKeys {
    fn current(&self) -> crate::customers::portal::PortalKey {
        Self::key(self.keys.lock().unwrap().0)
    }

    fn previous(&self) -> Vec<crate::customers::portal::PortalKey> {
        self.keys
            .lock()
            .unwrap()
            .1
            .iter()
            .map(|b| Self::key(*b))
            .collect()
    }
}

/// File bytes in memory, keyed as the file store port says (unsafe keys refused).
#[derive(Debug, Default)]
pub struct MemFiles {
    pub objects: Mutex<std::collections::BTreeMap<String, Vec<u8>>>,
}

impl MemFiles {
    fn checked(key: &str) -> PortResult<&str> {
        if crate::bookkeeping::file_key_is_safe(key) {
            Ok(key)
        } else {
            Err(Fault::new("file store: unsafe key"))
        }
    }

    fn objects(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<String, Vec<u8>>> {
        self.objects.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl crate::bookkeeping::FileStore for MemFiles {
    fn put(&self, key: &str, bytes: &[u8]) -> PortResult<()> {
        let key = Self::checked(key)?;
        self.objects().insert(key.to_owned(), bytes.to_vec());
        Ok(())
    }

    fn get(&self, key: &str) -> PortResult<Option<Vec<u8>>> {
        let key = Self::checked(key)?;
        Ok(self.objects().get(key).cloned())
    }

    fn delete(&self, key: &str) -> PortResult<()> {
        let key = Self::checked(key)?;
        self.objects().remove(key);
        Ok(())
    }
}
