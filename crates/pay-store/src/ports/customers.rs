//! `ContactStore` on `DieselStore`: contacts, upserted by e-mail key within a company and kind.
//! Written once for both backends.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError, QueryResult};
use pay_domain::customers::ports::ContactStore;
use pay_domain::customers::{Contact, ContactKind, ContactRef, GivenFields, Upserted};
use pay_domain::kernel::ids::{CompanyId, ContactId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::{Fault, PortResult};

use crate::conn::{write_transaction, AnyConnection};
use crate::rows::{ContactChanges, ContactRow, NewContactRow};
use crate::schema::contacts;
use crate::DieselStore;

/// The update half of an upsert, in one transaction: sets the given fields of the company's
/// contact with this kind and e-mail key and reads it back (on PostgreSQL the UPDATE's row
/// lock makes the read see this write); `None` when there is no such contact.
fn update_existing(
    conn: &mut AnyConnection,
    row: &NewContactRow<'_>,
    changes: &ContactChanges<'_>,
) -> QueryResult<Option<ContactRow>> {
    write_transaction(conn, |conn| {
        let mine = || {
            contacts::table
                .filter(contacts::company_id.eq(&row.company_id))
                .filter(contacts::kind.eq(row.kind))
                .filter(contacts::email_key.eq(&row.email_key))
        };
        if diesel::update(mine()).set(changes).execute(conn)? == 0 {
            return Ok(None);
        }
        mine()
            .select(ContactRow::as_select())
            .first(conn)
            .optional()
    })
}

impl ContactStore for DieselStore {
    fn upsert_contact(&self, contact: &Contact, given: GivenFields) -> PortResult<Upserted> {
        let row = NewContactRow::try_from(contact)?;
        let changes = ContactChanges::new(contact, given)?;
        // Update the contact of this e-mail, else insert; an insert that loses a race to a
        // concurrent one (the unique e-mail key index refuses it, on PostgreSQL once the other
        // commits) updates the winner's row instead. On SQLite the single writer serialises
        // the whole. A second refusal is another unique column (the uid): a fault.
        let outcome = self.write("upsert contact", |conn| {
            for _ in 0..2 {
                if let Some(found) = update_existing(conn, &row, &changes)? {
                    return Ok(Some(Err(found)));
                }
                match diesel::insert_into(contacts::table)
                    .values(&row)
                    .execute(conn)
                {
                    Ok(_) => return Ok(Some(Ok(()))),
                    Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(None)
        })?;
        match outcome {
            Some(Ok(())) => Ok(Upserted::Created(contact.clone())),
            Some(Err(found)) => Ok(Upserted::Updated(Contact::try_from(found)?)),
            None => Err(Fault::new(
                "upsert contact: unique violation (contacts.uid)",
            )),
        }
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
                .filter(contacts::kind.eq(kind.as_str()))
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
