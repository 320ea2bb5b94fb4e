//! Tenancy's ports: users, companies and memberships, sign-in sessions, API keys.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use pay_domain::kernel::events::EventRecord;
use pay_domain::kernel::ids::{CompanyId, KeyId, PartnerId, UserId};
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::settings::PaySettings;
use pay_domain::tenancy::keys::{Integration, StoredIntegration};
use pay_domain::tenancy::ports::{
    DomainWrite, IntegrationStore, NewTenant, SignInStore, StoredSignIn, TenancyStore,
};
use pay_domain::tenancy::{Company, Membership, Role, TeamMember, UserRecord};
use pay_domain::{Fault, PortResult};

use super::events::insert_events;
use crate::conn::write_transaction;
use crate::rows::{
    corrupt, parse_role, stored_integration, CompanyRow, IntegrationRow, MembershipRow,
    NewCompanyRow, NewIntegrationRow, NewMembershipRow, NewSessionRow, NewSettingsRow, NewUserRow,
    SessionRow, SettingsRow, StoredIntegrationRow, UserRow,
};
use crate::schema::{browser_sessions, companies, integrations, memberships, pay_settings, users};
use crate::DieselStore;

impl TenancyStore for DieselStore {
    fn create_tenant(&self, t: &NewTenant) -> PortResult<()> {
        let user = t.new_user.as_ref().map(NewUserRow::from);
        let company = NewCompanyRow::from(&t.company);
        let membership = NewMembershipRow {
            user_id: t.owner.to_string(),
            company_id: t.company.id.to_string(),
            role: Role::Owner.as_str(),
            created_at: t.company.created_at.unix_millis(),
        };
        let settings = NewSettingsRow::new(t.company.id, &t.settings, t.company.created_at);
        let integration = NewIntegrationRow::try_from(&t.integration)?;
        self.write("create tenant", |conn| {
            write_transaction(conn, |conn| {
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
                diesel::insert_into(integrations::table)
                    .values(&integration)
                    .execute(conn)?;
                Ok(())
            })
        })
    }

    fn user_by_email(&self, email: &str) -> PortResult<Option<UserRecord>> {
        self.run("user by email", |conn| {
            users::table
                .filter(users::email.eq(email))
                .select(UserRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(UserRecord::try_from)
        .transpose()
    }

    fn is_empty(&self) -> PortResult<bool> {
        let any = self.run("any user", |conn| {
            users::table
                .select(users::id)
                .first::<String>(conn)
                .optional()
        })?;
        Ok(any.is_none())
    }

    fn memberships(&self, user: UserId) -> PortResult<Vec<Membership>> {
        let rows: Vec<MembershipRow> = self.run("memberships", |conn| {
            memberships::table
                .inner_join(companies::table)
                .filter(memberships::user_id.eq(user.to_string()))
                .order((memberships::created_at.asc(), memberships::company_id.asc()))
                .select((memberships::company_id, companies::name, memberships::role))
                .load(conn)
        })?;
        rows.into_iter().map(Membership::try_from).collect()
    }

    fn members(&self, company: CompanyId) -> PortResult<Vec<TeamMember>> {
        // Two reads (a team has few members): its memberships, then their users.
        type Rows = (Vec<(String, String, i64)>, Vec<(String, String)>);
        let (rows, people): Rows = self.run("members", |conn| {
            let rows: Vec<(String, String, i64)> = memberships::table
                .filter(memberships::company_id.eq(company.to_string()))
                .select((
                    memberships::user_id,
                    memberships::role,
                    memberships::created_at,
                ))
                .load(conn)?;
            let ids: Vec<&String> = rows.iter().map(|(u, _, _)| u).collect();
            let people = users::table
                .filter(users::id.eq_any(ids))
                .select((users::id, users::email))
                .load(conn)?;
            Ok((rows, people))
        })?;
        let mut list = rows
            .into_iter()
            .filter_map(|(user, role, at)| {
                let email = people.iter().find(|(id, _)| *id == user)?.1.clone();
                Some((user, role, at, email))
            })
            .map(|(user, role, at, email)| {
                Ok(TeamMember {
                    user_id: UserId::parse(&user).ok_or_else(|| corrupt("memberships.user_id"))?,
                    email,
                    role: parse_role(&role)?,
                    since: Timestamp::from_unix_millis(at)
                        .ok_or_else(|| corrupt("memberships.created_at"))?,
                })
            })
            .collect::<PortResult<Vec<TeamMember>>>()?;
        list.sort_by(|a, b| (a.since, &a.email).cmp(&(b.since, &b.email)));
        Ok(list)
    }

    fn add_member(
        &self,
        new_user: Option<&UserRecord>,
        user: UserId,
        company: CompanyId,
        role: Role,
        at: Timestamp,
    ) -> PortResult<()> {
        let new_user = new_user.map(NewUserRow::from);
        let membership = NewMembershipRow {
            user_id: user.to_string(),
            company_id: company.to_string(),
            role: role.as_str(),
            created_at: at.unix_millis(),
        };
        self.write("add member", |conn| {
            write_transaction(conn, |conn| {
                if let Some(u) = &new_user {
                    diesel::insert_into(users::table).values(u).execute(conn)?;
                }
                diesel::insert_into(memberships::table)
                    .values(&membership)
                    .execute(conn)?;
                Ok(())
            })
        })
    }

    fn role(&self, user: UserId, company: CompanyId) -> PortResult<Option<Role>> {
        self.run("role", |conn| {
            memberships::table
                .find((user.to_string(), company.to_string()))
                .select(memberships::role)
                .first::<String>(conn)
                .optional()
        })?
        .map(|r| parse_role(&r))
        .transpose()
    }

    fn set_payment_link_domain(
        &self,
        company: CompanyId,
        domain: Option<&str>,
    ) -> PortResult<DomainWrite> {
        let id = company.to_string();
        self.cache.forget_company(company);
        let written = self.write("set payment link domain", |conn| {
            match diesel::update(companies::table.filter(companies::id.eq(&id)))
                .set(companies::payment_link_domain.eq(domain))
                .execute(conn)
            {
                Ok(0) => Ok(DomainWrite::NoCompany),
                Ok(_) => Ok(DomainWrite::Written),
                Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                    Ok(DomainWrite::Taken)
                }
                Err(e) => Err(e),
            }
        })?;
        // Dropped again: a read racing the write may have cached the old row meanwhile.
        self.cache.forget_company(company);
        Ok(written)
    }

    fn set_company_website(&self, company: CompanyId, website: Option<&str>) -> PortResult<bool> {
        let id = company.to_string();
        self.cache.forget_company(company);
        let n = self.write("set company website", |conn| {
            diesel::update(companies::table.filter(companies::id.eq(&id)))
                .set(companies::website.eq(website))
                .execute(conn)
        })?;
        // Dropped again: a read racing the write may have cached the old row meanwhile.
        self.cache.forget_company(company);
        Ok(n > 0)
    }

    fn advance_test_clock(
        &self,
        company: CompanyId,
        by_ms: i64,
        max_offset_ms: i64,
        event: Option<&EventRecord>,
    ) -> PortResult<Option<i64>> {
        let id = company.to_string();
        self.cache.forget_company(company);
        let moved = self.write("advance test clock", |conn| {
            write_transaction(conn, |conn| {
                let n = diesel::update(
                    companies::table
                        .filter(companies::id.eq(&id))
                        .filter(companies::test_clock_offset_ms.le(max_offset_ms - by_ms)),
                )
                .set(companies::test_clock_offset_ms.eq(companies::test_clock_offset_ms + by_ms))
                .execute(conn)?;
                if n == 0 {
                    return Ok(None);
                }
                if let Some(e) = event {
                    insert_events(conn, std::slice::from_ref(e))?;
                }
                companies::table
                    .filter(companies::id.eq(&id))
                    .select(companies::test_clock_offset_ms)
                    .first::<i64>(conn)
                    .map(Some)
            })
        })?;
        // Dropped again: a read racing the write may have cached the old offset meanwhile.
        self.cache.forget_company(company);
        Ok(moved)
    }

    fn company_with_settings(
        &self,
        company: CompanyId,
    ) -> PortResult<Option<(Company, PaySettings)>> {
        let generation = match self.cache.company(company) {
            Ok(hit) => return Ok(Some(hit)),
            Err(generation) => generation,
        };
        let row: Option<(CompanyRow, SettingsRow)> = self.run("company with settings", |conn| {
            companies::table
                .inner_join(pay_settings::table)
                .filter(companies::id.eq(company.to_string()))
                .select((CompanyRow::as_select(), SettingsRow::as_select()))
                .first(conn)
                .optional()
        })?;
        let found: Option<(Company, PaySettings)> = row
            .map(|(c, s)| Ok::<_, Fault>((c.try_into()?, s.try_into()?)))
            .transpose()?;
        if let Some(v) = &found {
            self.cache.put_company(generation, company, v);
        }
        Ok(found)
    }
}

impl SignInStore for DieselStore {
    fn insert_sign_in(&self, session: &StoredSignIn) -> PortResult<()> {
        let row = NewSessionRow::from(session);
        self.write("insert session", |conn| {
            diesel::insert_into(browser_sessions::table)
                .values(&row)
                .execute(conn)
        })?;
        Ok(())
    }

    fn sign_in_by_token(&self, token_digest: &SecretDigest) -> PortResult<Option<StoredSignIn>> {
        self.run("session by token", |conn| {
            browser_sessions::table
                .filter(browser_sessions::token_digest.eq(&token_digest.0))
                .select(SessionRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(StoredSignIn::try_from)
        .transpose()
    }

    fn delete_sign_in(&self, token_digest: &SecretDigest) -> PortResult<()> {
        self.write("delete session", |conn| {
            diesel::delete(
                browser_sessions::table.filter(browser_sessions::token_digest.eq(&token_digest.0)),
            )
            .execute(conn)
        })?;
        Ok(())
    }

    fn delete_member_sign_ins(&self, company: CompanyId) -> PortResult<u64> {
        let company = company.to_string();
        let n = self.write("delete member sessions", |conn| {
            write_transaction(conn, |conn| {
                let members: Vec<String> = memberships::table
                    .filter(memberships::company_id.eq(&company))
                    .select(memberships::user_id)
                    .load(conn)?;
                diesel::delete(
                    browser_sessions::table.filter(browser_sessions::user_id.eq_any(&members)),
                )
                .execute(conn)
            })
        })?;
        Ok(n as u64)
    }
}

impl IntegrationStore for DieselStore {
    fn insert_integration(&self, integration: &StoredIntegration) -> PortResult<()> {
        let row = NewIntegrationRow::try_from(integration)?;
        self.write("insert integration", |conn| {
            diesel::insert_into(integrations::table)
                .values(&row)
                .execute(conn)
        })?;
        Ok(())
    }

    fn integrations(&self, company: CompanyId) -> PortResult<Vec<Integration>> {
        let rows: Vec<IntegrationRow> = self.run("integrations", |conn| {
            integrations::table
                .filter(integrations::company_id.eq(company.to_string()))
                // Partner ids are v7 UUIDs: they break same-millisecond ties in creation order.
                .order((
                    integrations::created_at.desc(),
                    integrations::partner_id.desc(),
                ))
                .select(IntegrationRow::as_select())
                .load(conn)
        })?;
        rows.into_iter().map(Integration::try_from).collect()
    }

    fn integration_by_key_id(&self, key_id: &KeyId) -> PortResult<Option<StoredIntegration>> {
        let generation = match self.cache.key(key_id.as_str()) {
            Ok(hit) => return Ok(Some(hit)),
            Err(generation) => generation,
        };
        let row: Option<StoredIntegrationRow> = self.run("integration by key id", |conn| {
            integrations::table
                .filter(integrations::key_id.eq(key_id.as_str()))
                .select((IntegrationRow::as_select(), integrations::secret_digest))
                .first(conn)
                .optional()
        })?;
        let found = row.map(stored_integration).transpose()?;
        if let Some(i) = &found {
            self.cache.put_key(generation, i);
        }
        Ok(found)
    }

    fn set_integration_enabled(
        &self,
        company: CompanyId,
        partner: PartnerId,
        enabled: bool,
    ) -> PortResult<Option<Integration>> {
        self.cache.forget_keys();
        let company = company.to_string();
        let partner = partner.to_string();
        // RETURNING is not in the backends' common subset, hence the second read. A delete in
        // between yields `None`, as if the delete had come first.
        let row: Option<IntegrationRow> = self.write("set integration enabled", |conn| {
            let mine = integrations::table
                .filter(integrations::company_id.eq(&company))
                .filter(integrations::partner_id.eq(&partner));
            let changed = diesel::update(mine)
                .set(integrations::enabled.eq(enabled))
                .execute(conn)?;
            if changed == 0 {
                return Ok(None);
            }
            mine.select(IntegrationRow::as_select())
                .first(conn)
                .optional()
        })?;
        self.cache.forget_keys();
        row.map(Integration::try_from).transpose()
    }

    fn delete_integration(&self, company: CompanyId, partner: PartnerId) -> PortResult<bool> {
        self.cache.forget_keys();
        let n = self.write("delete integration", |conn| {
            diesel::delete(
                integrations::table
                    .filter(integrations::company_id.eq(company.to_string()))
                    .filter(integrations::partner_id.eq(partner.to_string())),
            )
            .execute(conn)
        })?;
        self.cache.forget_keys();
        Ok(n == 1)
    }

    fn touch_integration(&self, partner: PartnerId, at: Timestamp) -> PortResult<()> {
        self.write("touch integration", |conn| {
            diesel::update(integrations::table.find(partner.to_string()))
                .set(integrations::last_used_at.eq(at.unix_millis()))
                .execute(conn)
        })?;
        self.cache.touched(partner, at);
        Ok(())
    }
}
