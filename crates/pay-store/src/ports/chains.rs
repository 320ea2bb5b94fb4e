//! The chain processor's ports on `DieselStore`: the merchants' keys (with the next child index
//! taken atomically from one counter per key, whichever companies set it), the sessions' deposit addresses, and the watcher's lease and recent blocks
//! per chain. Written once for both backends.

use diesel::prelude::*;
use diesel::result::{Error as DieselError, QueryResult};
use pay_domain::chains::ports::{Derive, WalletStore, WatchStore};
use pay_domain::chains::{AddressRequest, ChainWatch, DepositAddress, StoredWallet};
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::PortResult;

use crate::conn::{write_transaction, AnyConnection};
use crate::schema::{
    chain_blocks, chain_deposit_addresses, chain_key_counters, chain_wallet_keys, chain_wallets,
    chain_watchers,
};
use crate::DieselStore;

/// The only family built so far.
const EVM: &str = "evm";

fn corrupt(what: &str) -> DieselError {
    DieselError::DeserializationError(format!("chain tables: bad {what}").into())
}

fn instant(ms: i64) -> QueryResult<Timestamp> {
    Timestamp::from_unix_millis(ms).ok_or_else(|| corrupt("instant"))
}

fn index(i: i64) -> QueryResult<u32> {
    u32::try_from(i).map_err(|_| corrupt("index"))
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = chain_deposit_addresses, check_for_backend(crate::conn::MultiBackend))]
struct AddressRow {
    session_id: String,
    company_id: String,
    chain_code: String,
    asset_identifier: String,
    xpub: String,
    derivation_index: i64,
    address: String,
    created_at: i64,
    watch_until: i64,
}

impl AddressRow {
    fn decode(self) -> QueryResult<DepositAddress> {
        Ok(DepositAddress {
            company_id: CompanyId::parse(&self.company_id).ok_or_else(|| corrupt("company_id"))?,
            session_id: uuid::Uuid::parse_str(&self.session_id)
                .map_err(|_| corrupt("session_id"))?,
            chain_code: self.chain_code,
            asset_identifier: self.asset_identifier,
            xpub: self.xpub,
            index: index(self.derivation_index)?,
            address: self.address,
            created_at: instant(self.created_at)?,
            watch_until: instant(self.watch_until)?,
        })
    }
}

/// The company's current wallet with its key's next index.
fn current_wallet(
    conn: &mut AnyConnection,
    company: CompanyId,
) -> QueryResult<Option<StoredWallet>> {
    let row = chain_wallets::table
        .inner_join(
            chain_wallet_keys::table.on(chain_wallet_keys::company_id
                .eq(chain_wallets::company_id)
                .and(chain_wallet_keys::family.eq(chain_wallets::family))
                .and(chain_wallet_keys::xpub.eq(chain_wallets::xpub))),
        )
        .filter(chain_wallets::company_id.eq(company.to_string()))
        .filter(chain_wallets::family.eq(EVM))
        .select((
            chain_wallets::xpub,
            chain_wallet_keys::fingerprint,
            chain_wallet_keys::next_index,
            chain_wallets::created_at,
            chain_wallets::updated_at,
        ))
        .first::<(String, String, i64, i64, i64)>(conn)
        .optional()?;
    row.map(|(xpub, fingerprint, next, created, updated)| {
        Ok(StoredWallet {
            company_id: company,
            xpub,
            fingerprint,
            next_index: index(next)?,
            created_at: instant(created)?,
            updated_at: instant(updated)?,
        })
    })
    .transpose()
}

/// `INSERT ... ON CONFLICT DO NOTHING` on either backend; the rows inserted.
macro_rules! insert_or_skip {
    ($conn:expr, $insert:expr) => {
        match $conn {
            AnyConnection::Postgresql(pg) => $insert.on_conflict_do_nothing().execute(pg),
            AnyConnection::Sqlite(sqlite) => $insert.on_conflict_do_nothing().execute(sqlite),
        }
    };
}

impl WalletStore for DieselStore {
    fn put_wallet(
        &self,
        company: CompanyId,
        xpub: &str,
        fingerprint: &str,
        at: Timestamp,
    ) -> PortResult<StoredWallet> {
        let c = company.to_string();
        let ms = at.unix_millis();
        self.write("put wallet", |conn| {
            write_transaction(conn, |conn| {
                insert_or_skip!(
                    conn,
                    diesel::insert_into(chain_wallet_keys::table).values((
                        chain_wallet_keys::company_id.eq(&c),
                        chain_wallet_keys::family.eq(EVM),
                        chain_wallet_keys::xpub.eq(xpub),
                        chain_wallet_keys::fingerprint.eq(fingerprint),
                        chain_wallet_keys::next_index.eq(0_i64),
                        chain_wallet_keys::created_at.eq(ms),
                    ))
                )?;
                // The key's counter, shared with every company that sets the same key.
                insert_or_skip!(
                    conn,
                    diesel::insert_into(chain_key_counters::table).values((
                        chain_key_counters::family.eq(EVM),
                        chain_key_counters::xpub.eq(xpub),
                        chain_key_counters::next_index.eq(0_i64),
                    ))
                )?;
                let updated = diesel::update(chain_wallets::table.find((&c, EVM)))
                    .set((
                        chain_wallets::xpub.eq(xpub),
                        chain_wallets::updated_at.eq(ms),
                    ))
                    .execute(conn)?;
                if updated == 0 {
                    insert_or_skip!(
                        conn,
                        diesel::insert_into(chain_wallets::table).values((
                            chain_wallets::company_id.eq(&c),
                            chain_wallets::family.eq(EVM),
                            chain_wallets::xpub.eq(xpub),
                            chain_wallets::created_at.eq(ms),
                            chain_wallets::updated_at.eq(ms),
                        ))
                    )?;
                }
                current_wallet(conn, company)?.ok_or(DieselError::NotFound)
            })
        })
    }

    fn wallet(&self, company: CompanyId) -> PortResult<Option<StoredWallet>> {
        self.run("read wallet", |conn| current_wallet(conn, company))
    }

    fn delete_wallet(&self, company: CompanyId) -> PortResult<bool> {
        self.write("delete wallet", |conn| {
            diesel::delete(chain_wallets::table.find((company.to_string(), EVM)))
                .execute(conn)
                .map(|n| n > 0)
        })
    }

    fn assign_address(
        &self,
        request: &AddressRequest,
        derive: Derive<'_>,
    ) -> PortResult<Option<DepositAddress>> {
        let c = request.company_id.to_string();
        let session = request.session_id.to_string();
        let existing = |conn: &mut AnyConnection| {
            chain_deposit_addresses::table
                .find(&session)
                .select(AddressRow::as_select())
                .first(conn)
                .optional()
        };
        let row = self.write("assign deposit address", |conn| {
            write_transaction(conn, |conn| {
                if let Some(row) = existing(conn)? {
                    return Ok(Some(row));
                }
                let Some(xpub) = chain_wallets::table
                    .find((&c, EVM))
                    .select(chain_wallets::xpub)
                    .first::<String>(conn)
                    .optional()?
                else {
                    return Ok(None);
                };
                // One counter per key, not per company: two companies that set the same key
                // (two brands on one wallet) never share an address (issue 31).
                let counter = chain_key_counters::table.find((EVM, &xpub));
                // The update takes the counter's row lock (PostgreSQL) or runs under the write
                // lock (SQLite): two starts, of one company or two, never read the same index.
                let (taken, address) = loop {
                    let moved = diesel::update(counter)
                        .set(chain_key_counters::next_index.eq(chain_key_counters::next_index + 1))
                        .execute(conn)?;
                    if moved == 0 {
                        return Err(corrupt("key without its counter"));
                    }
                    let next: i64 = counter.select(chain_key_counters::next_index).first(conn)?;
                    let taken = next - 1;
                    // An index BIGINT holds but BIP32 does not (hardened range) ends the key.
                    let i = u32::try_from(taken)
                        .ok()
                        .filter(|i| *i < 0x8000_0000)
                        .ok_or_else(|| corrupt("exhausted key"))?;
                    if let Some(address) = derive(&xpub, i) {
                        break (taken, address);
                    }
                };
                // What this company's `nextIndex` shows: one past the highest child it was
                // handed (every child below it has been handed out, maybe to another company).
                // Under the counter's lock, so `taken` only grows here.
                diesel::update(chain_wallet_keys::table.find((&c, EVM, &xpub)))
                    .set(chain_wallet_keys::next_index.eq(taken + 1))
                    .execute(conn)?;
                let inserted = insert_or_skip!(
                    conn,
                    diesel::insert_into(chain_deposit_addresses::table).values((
                        chain_deposit_addresses::session_id.eq(&session),
                        chain_deposit_addresses::company_id.eq(&c),
                        chain_deposit_addresses::chain_code.eq(&request.chain_code),
                        chain_deposit_addresses::asset_identifier.eq(&request.asset_identifier),
                        chain_deposit_addresses::xpub.eq(&xpub),
                        chain_deposit_addresses::derivation_index.eq(taken),
                        chain_deposit_addresses::address.eq(address.to_ascii_lowercase()),
                        chain_deposit_addresses::created_at.eq(request.at.unix_millis()),
                        chain_deposit_addresses::watch_until.eq(request.watch_until.unix_millis()),
                    ))
                )?;
                // A concurrent call for the same session won (PostgreSQL): its address stands
                // and this index stays unused.
                let _ = inserted;
                existing(conn)
            })
        })?;
        row.map(|r| {
            r.decode()
                .map_err(|e| pay_domain::Fault::caused("database (decode deposit address)", e))
        })
        .transpose()
    }

    fn session_address(&self, session: uuid::Uuid) -> PortResult<Option<DepositAddress>> {
        let row = self.run("read deposit address", |conn| {
            chain_deposit_addresses::table
                .find(session.to_string())
                .select(AddressRow::as_select())
                .first(conn)
                .optional()
        })?;
        row.map(|r| {
            r.decode()
                .map_err(|e| pay_domain::Fault::caused("database (decode deposit address)", e))
        })
        .transpose()
    }
}

impl WatchStore for DieselStore {
    fn claim_chain_lease(
        &self,
        chain_code: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> PortResult<bool> {
        self.write("claim chain lease", |conn| {
            insert_or_skip!(
                conn,
                diesel::insert_into(chain_watchers::table)
                    .values(chain_watchers::chain_code.eq(chain_code))
            )?;
            let free = chain_watchers::lease_holder
                .is_null()
                .or(chain_watchers::lease_until.le(now.unix_millis()))
                .or(chain_watchers::lease_holder.eq(holder));
            diesel::update(chain_watchers::table.find(chain_code).filter(free))
                .set((
                    chain_watchers::lease_holder.eq(holder),
                    chain_watchers::lease_until.eq(until.unix_millis()),
                ))
                .execute(conn)
                .map(|n| n == 1)
        })
    }

    fn recent_blocks(&self, chain_code: &str) -> PortResult<Vec<(u64, String)>> {
        let rows: Vec<(i64, String)> = self.run("read recent blocks", |conn| {
            chain_blocks::table
                .filter(chain_blocks::chain_code.eq(chain_code))
                .order(chain_blocks::block_number.asc())
                .select((chain_blocks::block_number, chain_blocks::block_hash))
                .load(conn)
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|(n, h)| u64::try_from(n).ok().map(|n| (n, h)))
            .collect())
    }

    fn save_block(&self, chain_code: &str, number: u64, hash: &str, keep: u64) -> PortResult<()> {
        let n =
            i64::try_from(number).map_err(|_| pay_domain::Fault::new("block number beyond i64"))?;
        let floor = n.saturating_sub(i64::try_from(keep).unwrap_or(i64::MAX));
        self.write("save block", |conn| {
            write_transaction(conn, |conn| {
                diesel::delete(
                    chain_blocks::table
                        .filter(chain_blocks::chain_code.eq(chain_code))
                        .filter(
                            chain_blocks::block_number
                                .ge(n)
                                .or(chain_blocks::block_number.lt(floor)),
                        ),
                )
                .execute(conn)?;
                diesel::insert_into(chain_blocks::table)
                    .values((
                        chain_blocks::chain_code.eq(chain_code),
                        chain_blocks::block_number.eq(n),
                        chain_blocks::block_hash.eq(hash),
                    ))
                    .execute(conn)?;
                Ok(())
            })
        })
    }

    fn rewind(&self, chain_code: &str, common: Option<u64>) -> PortResult<()> {
        let above = common.map_or(-1, |c| i64::try_from(c).unwrap_or(i64::MAX));
        self.write("rewind blocks", |conn| {
            diesel::delete(
                chain_blocks::table
                    .filter(chain_blocks::chain_code.eq(chain_code))
                    .filter(chain_blocks::block_number.gt(above)),
            )
            .execute(conn)
            .map(|_| ())
        })
    }

    fn watched_addresses(
        &self,
        chain_code: &str,
        now: Timestamp,
    ) -> PortResult<Vec<DepositAddress>> {
        let rows = self.run("read watched addresses", |conn| {
            chain_deposit_addresses::table
                .filter(chain_deposit_addresses::chain_code.eq(chain_code))
                .filter(chain_deposit_addresses::watch_until.gt(now.unix_millis()))
                .select(AddressRow::as_select())
                .load(conn)
        })?;
        rows.into_iter()
            .map(|r| {
                r.decode()
                    .map_err(|e| pay_domain::Fault::caused("database (decode deposit address)", e))
            })
            .collect()
    }

    fn handed_addresses(&self, addresses: &[String]) -> PortResult<Vec<DepositAddress>> {
        let mut found = Vec::new();
        // Bounded lists: a block's senders and receivers can be many.
        for chunk in addresses.chunks(500) {
            let rows = self.run("read handed addresses", |conn| {
                chain_deposit_addresses::table
                    .filter(chain_deposit_addresses::address.eq_any(chunk))
                    .select(AddressRow::as_select())
                    .load(conn)
            })?;
            for r in rows {
                found.push(r.decode().map_err(|e| {
                    pay_domain::Fault::caused("database (decode deposit address)", e)
                })?);
            }
        }
        Ok(found)
    }

    fn record_read(
        &self,
        chain_code: &str,
        head: u64,
        read_to: u64,
        at: Timestamp,
    ) -> PortResult<()> {
        let head = i64::try_from(head).unwrap_or(i64::MAX);
        let read_to = i64::try_from(read_to).unwrap_or(i64::MAX);
        self.write("record chain read", |conn| {
            insert_or_skip!(
                conn,
                diesel::insert_into(chain_watchers::table)
                    .values(chain_watchers::chain_code.eq(chain_code))
            )?;
            diesel::update(chain_watchers::table.find(chain_code))
                .set((
                    chain_watchers::head_number.eq(Some(head)),
                    chain_watchers::head_seen_at.eq(Some(at.unix_millis())),
                    chain_watchers::read_number.eq(Some(read_to)),
                    chain_watchers::failing_since.eq(None::<i64>),
                ))
                .execute(conn)
                .map(|_| ())
        })
    }

    fn record_failure(&self, chain_code: &str, at: Timestamp) -> PortResult<()> {
        self.write("record chain failure", |conn| {
            insert_or_skip!(
                conn,
                diesel::insert_into(chain_watchers::table)
                    .values(chain_watchers::chain_code.eq(chain_code))
            )?;
            diesel::update(
                chain_watchers::table
                    .find(chain_code)
                    .filter(chain_watchers::failing_since.is_null()),
            )
            .set(chain_watchers::failing_since.eq(Some(at.unix_millis())))
            .execute(conn)
            .map(|_| ())
        })
    }

    fn watch_state(&self, chain_code: &str) -> PortResult<Option<ChainWatch>> {
        type Row = (Option<i64>, Option<i64>, Option<i64>, Option<i64>);
        let row: Option<Row> = self.run("read chain watch", |conn| {
            chain_watchers::table
                .find(chain_code)
                .select((
                    chain_watchers::head_number,
                    chain_watchers::head_seen_at,
                    chain_watchers::read_number,
                    chain_watchers::failing_since,
                ))
                .first(conn)
                .optional()
        })?;
        let decode = |(head, seen, read, failing): Row| -> QueryResult<ChainWatch> {
            Ok(ChainWatch {
                head: head.map(|h| u64::try_from(h).unwrap_or(0)),
                read_at: seen.map(instant).transpose()?,
                read_to: read.map(|r| u64::try_from(r).unwrap_or(0)),
                failing_since: failing.map(instant).transpose()?,
            })
        };
        row.map(|r| {
            decode(r).map_err(|e| pay_domain::Fault::caused("database (decode chain watch)", e))
        })
        .transpose()
    }
}
