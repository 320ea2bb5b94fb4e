//! `ContactStore` on `DieselStore`: contacts, upserted by e-mail key within a company (a new
//! role makes a customer or vendor both), and their known wallet addresses. Written once for
//! both backends.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError, QueryResult};
use pay_domain::customers::ports::ContactStore;
use pay_domain::customers::{
    Contact, ContactKind, ContactQuery, ContactRef, ContactWithWallets, GivenFields, Upserted,
};
use pay_domain::kernel::ids::{CompanyId, ContactId};
use pay_domain::kernel::keyed::Seal;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::{Fault, PortResult};

use crate::conn::{write_transaction, AnyConnection};
use crate::rows::{ContactChanges, ContactRow, NewContactRow};
use crate::schema::{contact_wallets, contacts};
use crate::DieselStore;

/// The update half of an upsert, inside the upsert's transaction: sets the given fields (and
/// the role) of the company's contact with this e-mail key and reads it back (on PostgreSQL
/// the UPDATE's row lock makes the read see this write); `None` when there is no such contact.
fn update_existing(
    conn: &mut AnyConnection,
    row: &NewContactRow<'_>,
    changes: &ContactChanges<'_>,
) -> QueryResult<Option<ContactRow>> {
    let mine = || {
        contacts::table
            .filter(contacts::company_id.eq(&row.company_id))
            .filter(contacts::email_key.eq(&row.email_key))
    };
    if diesel::update(mine()).set(changes).execute(conn)? == 0 {
        return Ok(None);
    }
    // A role the contact does not have yet makes it both (one statement: atomic).
    diesel::update(
        mine()
            .filter(contacts::kind.ne(row.kind))
            .filter(contacts::kind.ne(ContactKind::Both.as_str())),
    )
    .set(contacts::kind.eq(ContactKind::Both.as_str()))
    .execute(conn)?;
    mine()
        .select(ContactRow::as_select())
        .first(conn)
        .optional()
}

/// A domain refusal inside a transaction (a corrupt row, a sealer fault): rolls it back.
fn inside(e: Fault) -> DieselError {
    DieselError::DeserializationError(Box::new(e))
}

diesel::define_sql_function! {
    /// SQL `lower` (both backends): the search compares without case.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

/// `text` with LIKE's wildcards and the escape character escaped (`\\`).
pub(crate) fn like_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl ContactStore for DieselStore {
    fn upsert_contact_sealed(
        &self,
        contact: &Contact,
        given: GivenFields,
        seal: Seal<'_, Upserted>,
    ) -> PortResult<Option<Upserted>> {
        let row = NewContactRow::try_from(contact)?;
        let changes = ContactChanges::new(contact, given)?;
        // In one transaction: update the contact of this e-mail, else insert, then the keyed
        // answer of what was done. An insert that loses a race to a concurrent one (the unique
        // e-mail key index refuses it, on PostgreSQL once the other commits) rolls back and
        // runs again, updating the winner's row. On SQLite the single writer serialises the
        // whole. A second refusal is another unique column (the uid): a fault.
        self.write("upsert contact", |conn| {
            for _ in 0..2 {
                let done = write_transaction(conn, |conn| {
                    let upserted = match update_existing(conn, &row, &changes)? {
                        Some(found) => Upserted::Updated(Contact::try_from(found).map_err(inside)?),
                        None => {
                            diesel::insert_into(contacts::table)
                                .values(&row)
                                .execute(conn)?;
                            Upserted::Created(contact.clone())
                        }
                    };
                    if let Some(c) = seal(&upserted).map_err(inside)? {
                        super::grant_webhooks::complete(conn, &c)?;
                    }
                    Ok(upserted)
                });
                match done {
                    Ok(upserted) => return Ok(Some(upserted)),
                    // The claim was taken over: nothing written.
                    Err(DieselError::RollbackTransaction) => return Ok(None),
                    Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {}
                    Err(e) => return Err(e),
                }
            }
            Err(DieselError::DatabaseError(
                DatabaseErrorKind::UniqueViolation,
                Box::new("upsert contact: unique violation (contacts.uid)".to_owned()),
            ))
        })
    }

    fn contacts(
        &self,
        company: CompanyId,
        kind: ContactKind,
        limit: usize,
    ) -> PortResult<Vec<Contact>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.run("contacts", |conn| {
            contacts::table
                .filter(contacts::company_id.eq(company.to_string()))
                .filter(
                    contacts::kind
                        .eq(kind.as_str())
                        .or(contacts::kind.eq(ContactKind::Both.as_str())),
                )
                .order((contacts::created_at.desc(), contacts::id.desc()))
                .limit(limit)
                .select(ContactRow::as_select())
                .load(conn)
        })?
        .into_iter()
        .map(Contact::try_from)
        .collect()
    }

    fn contact(&self, company: CompanyId, by: &ContactRef) -> PortResult<Option<Contact>> {
        self.run("contact", |conn| {
            let q = contacts::table
                .filter(contacts::company_id.eq(company.to_string()))
                .select(ContactRow::as_select());
            match by {
                ContactRef::Id(id) => q
                    .filter(contacts::id.eq(id.to_string()))
                    .first(conn)
                    .optional(),
                ContactRef::Uid(uid) => q
                    .filter(contacts::uid.eq(uid.as_str()))
                    .first(conn)
                    .optional(),
            }
        })?
        .map(Contact::try_from)
        .transpose()
    }

    fn search_contacts(
        &self,
        company: CompanyId,
        query: &ContactQuery,
        limit: usize,
    ) -> PortResult<Vec<ContactWithWallets>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let pattern = format!("%{}%", like_escaped(&query.lowered()));
        let key = pay_domain::customers::wallet_key(&query.text);
        let company_text = company.to_string();
        let (found, wallets) = self.run("search contacts", |conn| {
            let mut q = contacts::table
                .filter(contacts::company_id.eq(&company_text))
                .filter(
                    lower(contacts::email)
                        .like(&pattern)
                        .escape('\\')
                        .or(lower(contacts::name.assume_not_null())
                            .like(&pattern)
                            .escape('\\')
                            .and(contacts::name.is_not_null()))
                        .or(lower(contacts::client_id.assume_not_null())
                            .like(&pattern)
                            .escape('\\')
                            .and(contacts::client_id.is_not_null()))
                        .or(contacts::id.eq_any(
                            contact_wallets::table
                                .filter(contact_wallets::company_id.eq(&company_text))
                                .filter(contact_wallets::address_key.eq(&key))
                                .select(contact_wallets::contact_id),
                        )),
                )
                .into_boxed();
            if let Some(role) = query.role {
                q = q.filter(
                    contacts::kind
                        .eq(role.as_str())
                        .or(contacts::kind.eq(ContactKind::Both.as_str())),
                );
            }
            let found: Vec<ContactRow> = q
                .order((contacts::created_at.desc(), contacts::id.desc()))
                .limit(limit)
                .select(ContactRow::as_select())
                .load(conn)?;
            let ids: Vec<String> = found.iter().map(|c| c.id().to_owned()).collect();
            let wallets: Vec<(String, String)> = contact_wallets::table
                .filter(contact_wallets::contact_id.eq_any(&ids))
                .order((
                    contact_wallets::created_at.asc(),
                    contact_wallets::address_key.asc(),
                ))
                .select((contact_wallets::contact_id, contact_wallets::address))
                .load(conn)?;
            Ok((found, wallets))
        })?;
        found
            .into_iter()
            .map(|row| {
                let contact = Contact::try_from(row)?;
                let id = contact.id.to_string();
                Ok(ContactWithWallets {
                    wallets: wallets
                        .iter()
                        .filter(|(c, _)| *c == id)
                        .map(|(_, a)| a.clone())
                        .collect(),
                    contact,
                })
            })
            .collect()
    }

    fn add_contact_wallet(
        &self,
        company: CompanyId,
        contact: ContactId,
        address: &str,
        address_key: &str,
        at: Timestamp,
    ) -> PortResult<()> {
        // Known already (also a concurrent insert that won): nothing to do.
        self.write("add contact wallet", |conn| {
            match diesel::insert_into(contact_wallets::table)
                .values((
                    contact_wallets::contact_id.eq(contact.to_string()),
                    contact_wallets::company_id.eq(company.to_string()),
                    contact_wallets::address.eq(address),
                    contact_wallets::address_key.eq(address_key),
                    contact_wallets::created_at.eq(at.unix_millis()),
                ))
                .execute(conn)
            {
                Ok(_) | Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                    Ok(())
                }
                Err(e) => Err(e),
            }
        })
    }

    fn contacts_with_wallet(
        &self,
        company: CompanyId,
        address_key: &str,
    ) -> PortResult<Vec<Contact>> {
        let company_text = company.to_string();
        self.run("contacts with wallet", |conn| {
            contacts::table
                .filter(contacts::company_id.eq(&company_text))
                .filter(
                    contacts::id.eq_any(
                        contact_wallets::table
                            .filter(contact_wallets::company_id.eq(&company_text))
                            .filter(contact_wallets::address_key.eq(address_key))
                            .select(contact_wallets::contact_id),
                    ),
                )
                .order((contacts::created_at.desc(), contacts::id.desc()))
                .select(ContactRow::as_select())
                .load(conn)
        })?
        .into_iter()
        .map(Contact::try_from)
        .collect()
    }

    fn rename_contact(
        &self,
        company: CompanyId,
        id: ContactId,
        name: Option<&str>,
        at: Timestamp,
    ) -> PortResult<bool> {
        let n = self.write("rename contact", |conn| {
            diesel::update(
                contacts::table
                    .filter(contacts::company_id.eq(company.to_string()))
                    .filter(contacts::id.eq(id.to_string())),
            )
            .set((
                contacts::name.eq(name),
                contacts::updated_at.eq(at.unix_millis()),
            ))
            .execute(conn)
        })?;
        Ok(n == 1)
    }
}

impl pay_domain::customers::ports::GrantScopes for DieselStore {
    fn approved_scopes(
        &self,
        company: CompanyId,
        grant: uuid::Uuid,
    ) -> PortResult<Option<Vec<pay_domain::tenancy::Scope>>> {
        use crate::schema::oauth_grants as grants;
        let row = self.run("approved scopes", |conn| {
            grants::table
                .filter(grants::id.eq(grant.hyphenated().to_string()))
                .filter(grants::company_id.eq(company.to_string()))
                .filter(grants::revoked_at.is_null())
                .select(crate::rows::oauth::GrantRow::as_select())
                .first(conn)
                .optional()
        })?;
        Ok(row
            .map(pay_domain::oauth::Grant::try_from)
            .transpose()?
            .map(|g| g.scopes))
    }
}
