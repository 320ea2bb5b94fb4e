//! `TokenRecoveryStore` on `DieselStore` (keyed token requests of native installations), and
//! the writes `OAuthStore`'s transactions make on them: answering a claim with the issuance,
//! erasing answers when their tokens are used or revoked. Written once for both backends.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError, QueryResult};
use pay_domain::kernel::ids::ApplicationId;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::oauth::recovery::{
    token_claim_step, HeldAnswer, TokenAnswer, TokenClaim, TokenClaimStep, TokenRecoveryStore,
    TokenRequestKey,
};
use pay_domain::PortResult;

use crate::conn::{write_transaction, AnyConnection};
use crate::rows::oauth::{AccessRow, FamilyRow, GrantRow, RefreshRow};
use crate::rows::recovery::TokenRequestRow;
use crate::schema::{
    oauth_access_tokens as access, oauth_families as families, oauth_grants as grants,
    oauth_refresh_tokens as refresh, oauth_token_requests as reqs,
};
use crate::DieselStore;

/// Answers the in-flight claim `a` names, inside the issuance's transaction; a claim no longer
/// in flight under its token fails it (`NotFound`, which rolls it back and is a fault, never
/// mistaken for a lost rotation).
pub(crate) fn answer_claim(conn: &mut AnyConnection, a: Option<&TokenAnswer>) -> QueryResult<()> {
    let Some(a) = a else { return Ok(()) };
    let n = diesel::update(
        reqs::table
            .filter(reqs::application_id.eq(a.key.application_id.to_string()))
            .filter(reqs::key_digest.eq(&a.key.key_digest))
            .filter(reqs::token.eq(&a.token))
            .filter(reqs::answered.eq(false)),
    )
    .set((
        reqs::answered.eq(true),
        reqs::company_id.eq(a.company_id.to_string()),
        reqs::grant_id.eq(a.grant_id.to_string()),
        reqs::family_id.eq(a.family_id.to_string()),
        reqs::access_digest.eq(&a.access_digest.0),
        reqs::refresh_digest.eq(&a.refresh_digest.0),
        reqs::answer_key_id.eq(&a.sealed.key_id),
        reqs::answer_sealed.eq(&a.sealed.sealed),
        reqs::answer_until.eq(a.until.unix_millis()),
    ))
    .execute(conn)?;
    if n == 1 {
        Ok(())
    } else {
        Err(DieselError::NotFound)
    }
}

/// Which held answers an erasure picks.
pub(crate) enum Erase<'a> {
    /// Their successor refresh token was used.
    Successor(&'a str),
    /// Their access token was revoked.
    Access(&'a str),
    /// Their family was revoked.
    Family(&'a str),
    /// Every answer of an application (its key changed: all its families were revoked).
    Application(&'a str),
    /// Every answer of a grant (disconnected).
    Grant(&'a str),
}

/// Erases the held answers `which` picks (the records stay, as their keys' tombstones).
pub(crate) fn erase_answers(conn: &mut AnyConnection, which: Erase<'_>) -> QueryResult<usize> {
    let held = reqs::table.filter(reqs::answer_sealed.is_not_null());
    let erase = (
        reqs::answer_sealed.eq(None::<String>),
        reqs::answer_key_id.eq(None::<String>),
    );
    match which {
        Erase::Successor(d) => diesel::update(held.filter(reqs::refresh_digest.eq(d)))
            .set(erase)
            .execute(conn),
        Erase::Access(d) => diesel::update(held.filter(reqs::access_digest.eq(d)))
            .set(erase)
            .execute(conn),
        Erase::Family(f) => diesel::update(held.filter(reqs::family_id.eq(f)))
            .set(erase)
            .execute(conn),
        Erase::Application(a) => diesel::update(held.filter(reqs::application_id.eq(a)))
            .set(erase)
            .execute(conn),
        Erase::Grant(g) => diesel::update(held.filter(reqs::grant_id.eq(g)))
            .set(erase)
            .execute(conn),
    }
}

/// One claim attempt inside a write transaction.
fn claim_once(
    conn: &mut AnyConnection,
    key: &TokenRequestKey,
    token: &str,
    now: Timestamp,
    lease_until: Timestamp,
) -> QueryResult<TokenClaim> {
    let app = key.application_id.to_string();
    let of_key = || {
        reqs::table
            .filter(reqs::application_id.eq(app.clone()))
            .filter(reqs::key_digest.eq(key.key_digest.clone()))
    };
    let row: Option<TokenRequestRow> = of_key()
        .select(TokenRequestRow::as_select())
        .first(conn)
        .optional()?;
    let found = row
        .as_ref()
        .map(TokenRequestRow::found)
        .transpose()
        .map_err(|e| DieselError::DeserializationError(e.to_string().into()))?;
    let claimed = || TokenClaim::Claimed {
        token: token.to_owned(),
    };
    match (token_claim_step(found.as_ref(), key, now), row) {
        (TokenClaimStep::Decided(claim), _) => Ok(claim),
        (TokenClaimStep::TakeOver, Some(old)) => {
            // Compare-and-set on the dead claim's token: one taker wins.
            let taken = diesel::update(
                of_key()
                    .filter(reqs::token.eq(&old.token))
                    .filter(reqs::answered.eq(false)),
            )
            .set((
                reqs::token.eq(token),
                reqs::lease_until.eq(lease_until.unix_millis()),
            ))
            .execute(conn)?;
            Ok(if taken == 1 {
                claimed()
            } else {
                TokenClaim::InFlight
            })
        }
        _ => {
            diesel::insert_into(reqs::table)
                .values((
                    reqs::application_id.eq(&app),
                    reqs::key_digest.eq(&key.key_digest),
                    reqs::request_digest.eq(&key.request_digest),
                    reqs::token.eq(token),
                    reqs::lease_until.eq(lease_until.unix_millis()),
                    reqs::created_at.eq(now.unix_millis()),
                    reqs::answered.eq(false),
                ))
                .execute(conn)?;
            Ok(claimed())
        }
    }
}

impl TokenRecoveryStore for DieselStore {
    fn claim_token_request(
        &self,
        key: &TokenRequestKey,
        token: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> PortResult<TokenClaim> {
        self.write("claim token request", |conn| {
            // A concurrent first claim fails our insert on the primary key (after waiting for
            // its commit on PostgreSQL): read again, the record is there now.
            let mut tries = 0;
            loop {
                tries += 1;
                match write_transaction(conn, |conn| claim_once(conn, key, token, now, lease_until))
                {
                    Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _))
                        if tries < 3 => {}
                    other => return other,
                }
            }
        })
    }

    fn release_token_request(&self, key: &TokenRequestKey, token: &str) -> PortResult<()> {
        self.write("release token request", |conn| {
            diesel::delete(
                reqs::table
                    .filter(reqs::application_id.eq(key.application_id.to_string()))
                    .filter(reqs::key_digest.eq(&key.key_digest))
                    .filter(reqs::token.eq(token))
                    .filter(reqs::answered.eq(false)),
            )
            .execute(conn)
            .map(drop)
        })
    }

    fn token_answer(
        &self,
        application: ApplicationId,
        key_digest: &str,
    ) -> PortResult<Option<HeldAnswer>> {
        // One statement: the answer and the state of its tokens from one snapshot.
        let row = self.run("token answer", |conn| {
            reqs::table
                .inner_join(access::table.on(reqs::access_digest.eq(access::digest.nullable())))
                .inner_join(refresh::table.on(reqs::refresh_digest.eq(refresh::digest.nullable())))
                .inner_join(families::table.on(families::id.eq(access::family_id)))
                .inner_join(grants::table.on(grants::id.eq(families::grant_id)))
                .filter(reqs::application_id.eq(application.to_string()))
                .filter(reqs::key_digest.eq(key_digest))
                .filter(reqs::answered.eq(true))
                .select((
                    TokenRequestRow::as_select(),
                    AccessRow::as_select(),
                    RefreshRow::as_select(),
                    FamilyRow::as_select(),
                    GrantRow::as_select(),
                ))
                .first(conn)
                .optional()
        })?;
        row.map(|(r, a, t, f, g)| r.held(a, t, f, g)).transpose()
    }

    fn erase_token_answer(&self, application: ApplicationId, key_digest: &str) -> PortResult<bool> {
        let n = self.write("erase token answer", |conn| {
            diesel::update(
                reqs::table
                    .filter(reqs::application_id.eq(application.to_string()))
                    .filter(reqs::key_digest.eq(key_digest))
                    .filter(reqs::answer_sealed.is_not_null()),
            )
            .set((
                reqs::answer_sealed.eq(None::<String>),
                reqs::answer_key_id.eq(None::<String>),
            ))
            .execute(conn)
        })?;
        Ok(n == 1)
    }

    fn prune_token_requests(&self, now: Timestamp, created_before: Timestamp) -> PortResult<u64> {
        let n = self.write("prune token requests", |conn| {
            write_transaction(conn, |conn| {
                let gone = diesel::delete(
                    reqs::table.filter(reqs::created_at.lt(created_before.unix_millis())),
                )
                .execute(conn)?;
                let erased = diesel::update(
                    reqs::table
                        .filter(reqs::answer_sealed.is_not_null())
                        .filter(reqs::answer_until.lt(now.unix_millis())),
                )
                .set((
                    reqs::answer_sealed.eq(None::<String>),
                    reqs::answer_key_id.eq(None::<String>),
                ))
                .execute(conn)?;
                Ok(gone + erased)
            })
        })?;
        Ok(n as u64)
    }
}
