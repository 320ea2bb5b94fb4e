//! Grant webhook subscriptions (saved by compare-and-set, with a keyed request's answer in the
//! same transaction) and `IdempotencyStore` on `DieselStore`. Written once for both backends.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError, QueryResult};
use pay_domain::kernel::idempotency::{
    claim_step, Claim, ClaimStep, Completion, Found, IdempotencyStore, IdempotentRequest,
};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::webhooks::GrantSubscription;
use pay_domain::PortResult;

use crate::conn::{write_transaction, AnyConnection};
use crate::rows::{
    uuid_text, GrantSubscriptionRow, IdempotencyRow, NewGrantSubscriptionRow, NewIdempotencyRow,
};
use crate::schema::{grant_webhook_subscriptions, idempotency_keys};
use crate::DieselStore;

/// Whether an error is a lost race that writes nothing: a concurrent first insert (unique
/// key), or a compare-and-set that failed after an earlier statement of the transaction.
fn lost_race(e: &DieselError) -> bool {
    matches!(
        e,
        DieselError::RollbackTransaction
            | DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)
    )
}

pub(super) fn grant_subscription(
    store: &DieselStore,
    grant: uuid::Uuid,
) -> PortResult<Option<GrantSubscription>> {
    store
        .run("grant webhook subscription", |conn| {
            grant_webhook_subscriptions::table
                .filter(grant_webhook_subscriptions::grant_id.eq(uuid_text(grant)))
                .select(GrantSubscriptionRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(GrantSubscription::try_from)
        .transpose()
}

pub(super) fn save_grant_subscription(
    store: &DieselStore,
    sub: &GrantSubscription,
    completion: Option<&Completion>,
) -> PortResult<bool> {
    let row = NewGrantSubscriptionRow::from(sub);
    store.write("save grant webhook subscription", |conn| {
        let saved = write_transaction(conn, |conn| {
            let written = if row.version <= 1 {
                // The first version: only if the grant has none (a concurrent first save
                // fails on the unique grant and rolls back).
                diesel::insert_into(grant_webhook_subscriptions::table)
                    .values(&row)
                    .execute(conn)?
            } else {
                diesel::update(
                    grant_webhook_subscriptions::table
                        .filter(grant_webhook_subscriptions::grant_id.eq(&row.grant_id))
                        .filter(grant_webhook_subscriptions::version.eq(row.version - 1)),
                )
                .set(&row)
                .execute(conn)?
            };
            if written != 1 {
                return Err(DieselError::RollbackTransaction);
            }
            if let Some(c) = completion {
                complete(conn, c)?;
            }
            Ok(())
        });
        match saved {
            Ok(()) => Ok(true),
            Err(e) if lost_race(&e) => Ok(false),
            Err(e) => Err(e),
        }
    })
}

/// Marks a claimed idempotency record answered, inside the transaction of its request's
/// effect (every keyed write calls this). The claim taken over by another request (its token
/// gone) is `RollbackTransaction`: the effect must not happen twice.
pub(super) fn complete(conn: &mut AnyConnection, c: &Completion) -> QueryResult<()> {
    if answer(conn, c)? {
        Ok(())
    } else {
        Err(DieselError::RollbackTransaction)
    }
}

/// Marks a claimed idempotency record answered; false (nothing written) when the claim was
/// taken over or answered already.
pub(super) fn answer(conn: &mut AnyConnection, c: &Completion) -> QueryResult<bool> {
    let answered = diesel::update(
        idempotency_keys::table
            .filter(idempotency_keys::scope.eq(&c.scope))
            .filter(idempotency_keys::idem_key.eq(&c.key))
            .filter(idempotency_keys::token.eq(&c.token))
            .filter(idempotency_keys::answer_sealed.is_null()),
    )
    .set((
        idempotency_keys::answer_key_id.eq(&c.answer.key_id),
        idempotency_keys::answer_sealed.eq(&c.answer.sealed),
    ))
    .execute(conn)?;
    Ok(answered == 1)
}

/// A keyed write: `f` and, with a completion, its answer in ONE transaction; false when the
/// claim was taken over (nothing written).
pub(super) fn write_keyed(
    store: &DieselStore,
    what: &'static str,
    completion: Option<&Completion>,
    f: impl FnOnce(&mut AnyConnection) -> QueryResult<()>,
) -> PortResult<bool> {
    store.write(what, |conn| {
        let written = write_transaction(conn, |conn| {
            f(conn)?;
            match completion {
                Some(c) => complete(conn, c),
                None => Ok(()),
            }
        });
        match written {
            Ok(()) => Ok(true),
            Err(DieselError::RollbackTransaction) => Ok(false),
            Err(e) => Err(e),
        }
    })
}

/// One claim attempt inside a write transaction (see `IdempotencyStore::claim_idempotency_key`).
fn claim_once(
    conn: &mut AnyConnection,
    request: &IdempotentRequest,
    token: &str,
    now: Timestamp,
    lease_until: Timestamp,
) -> QueryResult<Claim> {
    let key = request.key.as_str();
    let found: Option<IdempotencyRow> = idempotency_keys::table
        .filter(idempotency_keys::scope.eq(&request.scope))
        .filter(idempotency_keys::idem_key.eq(key))
        .select(IdempotencyRow::as_select())
        .first(conn)
        .optional()?;
    let claimed = || Claim::Claimed {
        token: token.to_owned(),
    };
    let old_token = found.as_ref().map(|r| r.token.clone());
    let found = match found {
        Some(r) => Some(Found {
            answer: r.answer(),
            lease_until: Timestamp::from_unix_millis(r.lease_until).ok_or_else(|| {
                DieselError::DeserializationError("corrupt idempotency_keys.lease_until".into())
            })?,
            fingerprint: r.fingerprint,
        }),
        None => None,
    };
    match (claim_step(found, request, now), old_token) {
        (ClaimStep::Decided(claim), _) => Ok(claim),
        (ClaimStep::TakeOver, Some(old_token)) => {
            // Compare-and-set on the dead claim's token: one taker wins.
            let taken = diesel::update(
                idempotency_keys::table
                    .filter(idempotency_keys::scope.eq(&request.scope))
                    .filter(idempotency_keys::idem_key.eq(key))
                    .filter(idempotency_keys::token.eq(&old_token))
                    .filter(idempotency_keys::answer_sealed.is_null()),
            )
            .set((
                idempotency_keys::token.eq(token),
                idempotency_keys::lease_until.eq(lease_until.unix_millis()),
            ))
            .execute(conn)?;
            Ok(if taken == 1 {
                claimed()
            } else {
                Claim::InFlight
            })
        }
        _ => {
            diesel::insert_into(idempotency_keys::table)
                .values(&NewIdempotencyRow {
                    scope: &request.scope,
                    idem_key: key,
                    fingerprint: &request.fingerprint,
                    token,
                    lease_until: lease_until.unix_millis(),
                    answer_key_id: None,
                    answer_sealed: None,
                    created_at: now.unix_millis(),
                })
                .execute(conn)?;
            Ok(claimed())
        }
    }
}

impl IdempotencyStore for DieselStore {
    fn claim_idempotency_key(
        &self,
        request: &IdempotentRequest,
        token: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> PortResult<Claim> {
        self.write("claim idempotency key", |conn| {
            // A concurrent first claim of the key fails our insert on the primary key (after
            // waiting for its commit on PostgreSQL): read again, the record is there now.
            let mut tries = 0;
            loop {
                tries += 1;
                match write_transaction(conn, |conn| {
                    claim_once(conn, request, token, now, lease_until)
                }) {
                    Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _))
                        if tries < 3 => {}
                    other => return other,
                }
            }
        })
    }

    fn release_idempotency_key(&self, scope: &str, key: &str, token: &str) -> PortResult<()> {
        self.write("release idempotency key", |conn| {
            diesel::delete(
                idempotency_keys::table
                    .filter(idempotency_keys::scope.eq(scope))
                    .filter(idempotency_keys::idem_key.eq(key))
                    .filter(idempotency_keys::token.eq(token))
                    .filter(idempotency_keys::answer_sealed.is_null()),
            )
            .execute(conn)
            .map(drop)
        })
    }

    fn prune_idempotency_keys(&self, before: Timestamp) -> PortResult<u64> {
        let n = self.write("prune idempotency keys", |conn| {
            diesel::delete(
                idempotency_keys::table
                    .filter(idempotency_keys::created_at.lt(before.unix_millis())),
            )
            .execute(conn)
        })?;
        Ok(n as u64)
    }
}
