//! `OnboardingStore` on `DieselStore`: partners found by their secret's digest, drafts unique
//! per partner and idempotency key, and the claim: one compare-and-set on the draft, then the
//! company with its owner, in one transaction.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use pay_domain::kernel::ids::{DraftId, OnboardingPartnerId};
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::onboarding::ports::{ClaimedTenant, OnboardingStore};
use pay_domain::onboarding::{Partner, StoredDraft, StoredPartner};
use pay_domain::tenancy::Role;
use pay_domain::PortResult;

use crate::conn::write_transaction;
use crate::rows::onboarding::{DraftRow, NewPartnerRow, PartnerRow};
use crate::rows::{NewCompanyRow, NewMembershipRow, NewSettingsRow, NewUserRow};
use crate::schema::{
    companies, memberships, onboarding_drafts as drafts, onboarding_partners as partners,
    pay_settings, users,
};
use crate::DieselStore;

impl OnboardingStore for DieselStore {
    fn insert_partner(&self, partner: &StoredPartner) -> PortResult<()> {
        let row = NewPartnerRow::from(partner);
        self.write("insert onboarding partner", |conn| {
            diesel::insert_into(partners::table)
                .values(&row)
                .execute(conn)
                .map(|_| ())
        })
    }

    fn partner_by_secret(&self, digest: &SecretDigest) -> PortResult<Option<Partner>> {
        self.run("onboarding partner by secret", |conn| {
            partners::table
                .filter(partners::secret_digest.eq(&digest.0))
                .select(PartnerRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(Partner::try_from)
        .transpose()
    }

    fn insert_draft(&self, draft: &StoredDraft) -> PortResult<bool> {
        let row = DraftRow::from(draft);
        let (partner, key) = (row_partner(draft), draft.draft.idempotency_key.clone());
        self.write("insert onboarding draft", |conn| {
            match diesel::insert_into(drafts::table)
                .values(&row)
                .execute(conn)
            {
                Ok(_) => Ok(true),
                Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info)) => {
                    // The partner's key (a concurrent call won), or never in practice a
                    // random id or digest: tell them apart by reading.
                    let taken = drafts::table
                        .filter(drafts::partner_id.eq(&partner))
                        .filter(drafts::idempotency_key.eq(&key))
                        .count()
                        .get_result::<i64>(conn)?;
                    if taken == 1 {
                        Ok(false)
                    } else {
                        Err(DieselError::DatabaseError(
                            DatabaseErrorKind::UniqueViolation,
                            info,
                        ))
                    }
                }
                Err(e) => Err(e),
            }
        })
    }

    fn draft_by_key(
        &self,
        partner: OnboardingPartnerId,
        key: &str,
    ) -> PortResult<Option<StoredDraft>> {
        self.run("onboarding draft by key", |conn| {
            drafts::table
                .filter(drafts::partner_id.eq(partner.to_string()))
                .filter(drafts::idempotency_key.eq(key))
                .select(DraftRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(StoredDraft::try_from)
        .transpose()
    }

    fn draft_by_claim(&self, digest: &SecretDigest) -> PortResult<Option<(StoredDraft, Partner)>> {
        let row = self.run("onboarding draft by claim", |conn| {
            drafts::table
                .inner_join(partners::table)
                .filter(drafts::claim_digest.eq(&digest.0))
                .select((DraftRow::as_select(), PartnerRow::as_select()))
                .first(conn)
                .optional()
        })?;
        row.map(|(d, p)| Ok((StoredDraft::try_from(d)?, Partner::try_from(p)?)))
            .transpose()
    }

    fn claim_draft(
        &self,
        draft: DraftId,
        at: Timestamp,
        tenant: &ClaimedTenant,
    ) -> PortResult<bool> {
        let user = tenant.new_user.as_ref().map(NewUserRow::from);
        let company = NewCompanyRow::from(&tenant.company);
        let membership = NewMembershipRow {
            user_id: tenant.owner.to_string(),
            company_id: tenant.company.id.to_string(),
            role: Role::Owner.as_str(),
            created_at: tenant.company.created_at.unix_millis(),
        };
        let settings = NewSettingsRow::new(
            tenant.company.id,
            &tenant.settings,
            tenant.company.created_at,
        );
        let (draft, company_id, at) = (
            draft.to_string(),
            tenant.company.id.to_string(),
            at.unix_millis(),
        );
        self.write("claim onboarding draft", |conn| {
            let outcome = write_transaction(conn, |conn| {
                // The compare-and-set first: on PostgreSQL a concurrent claim waits on the
                // row's lock here and then finds it claimed.
                let won = diesel::update(
                    drafts::table
                        .filter(drafts::id.eq(&draft))
                        .filter(drafts::claimed_at.is_null())
                        .filter(drafts::expires_at.gt(at)),
                )
                .set((
                    drafts::claimed_at.eq(Some(at)),
                    drafts::company_id.eq(Some(&company_id)),
                ))
                .execute(conn)?;
                if won != 1 {
                    return Err(DieselError::RollbackTransaction);
                }
                if let Some(user) = &user {
                    diesel::insert_into(users::table)
                        .values(user)
                        .execute(conn)?;
                }
                diesel::insert_into(companies::table)
                    .values(&company)
                    .execute(conn)?;
                diesel::insert_into(memberships::table)
                    .values(&membership)
                    .execute(conn)?;
                diesel::insert_into(pay_settings::table)
                    .values(&settings)
                    .execute(conn)?;
                Ok(())
            });
            match outcome {
                Ok(()) => Ok(true),
                Err(DieselError::RollbackTransaction) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }
}

fn row_partner(draft: &StoredDraft) -> String {
    draft.draft.partner_id.to_string()
}
