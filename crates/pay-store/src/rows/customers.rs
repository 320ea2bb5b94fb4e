//! Contact rows: what is read, what is inserted, and what an upsert's update sets.

use diesel::prelude::*;
use pay_domain::customers::{Contact, ContactKind, GivenFields};
use pay_domain::kernel::ids::{CompanyId, ContactId, ContactUid};
use pay_domain::{Fault, PortResult};
use serde_json::{Map, Value};

use super::{corrupt, id, instant};
use crate::conn::MultiBackend;
use crate::schema::contacts;

/// A JSON object column (`metadata`).
pub(crate) fn json_object(text: &str, column: &str) -> PortResult<Map<String, Value>> {
    serde_json::from_str(text).map_err(|_| corrupt(column))
}

pub(crate) fn json_text(map: &Map<String, Value>) -> PortResult<String> {
    serde_json::to_string(map).map_err(|e| Fault::caused("encoding metadata", e))
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = contacts, check_for_backend(MultiBackend))]
pub(crate) struct ContactRow {
    id: String,
    uid: String,
    company_id: String,
    kind: String,
    email: String,
    name: Option<String>,
    client_id: Option<String>,
    metadata: String,
    created_at: i64,
    updated_at: i64,
}

impl ContactRow {
    pub(crate) fn id(&self) -> &str {
        &self.id
    }
}

impl TryFrom<ContactRow> for Contact {
    type Error = Fault;

    fn try_from(r: ContactRow) -> PortResult<Contact> {
        Ok(Contact {
            id: id(&r.id, ContactId::parse, "contacts.id")?,
            uid: id(&r.uid, ContactUid::parse, "contacts.uid")?,
            company_id: id(&r.company_id, CompanyId::parse, "contacts.company_id")?,
            kind: ContactKind::parse(&r.kind).ok_or_else(|| corrupt("contacts.kind"))?,
            email: r.email,
            name: r.name,
            client_id: r.client_id,
            metadata: json_object(&r.metadata, "contacts.metadata")?,
            created_at: instant(r.created_at, "contacts.created_at")?,
            updated_at: instant(r.updated_at, "contacts.updated_at")?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = contacts, treat_none_as_default_value = false)]
pub(crate) struct NewContactRow<'a> {
    id: String,
    uid: &'a str,
    pub(crate) company_id: String,
    pub(crate) kind: &'static str,
    email: &'a str,
    pub(crate) email_key: String,
    name: Option<&'a str>,
    client_id: Option<&'a str>,
    metadata: String,
    created_at: i64,
    updated_at: i64,
}

impl<'a> TryFrom<&'a Contact> for NewContactRow<'a> {
    type Error = Fault;

    fn try_from(c: &'a Contact) -> PortResult<Self> {
        Ok(NewContactRow {
            id: c.id.to_string(),
            uid: c.uid.as_str(),
            company_id: c.company_id.to_string(),
            kind: c.kind.as_str(),
            email: &c.email,
            email_key: c.email_key(),
            name: c.name.as_deref(),
            client_id: c.client_id.as_deref(),
            metadata: json_text(&c.metadata)?,
            created_at: c.created_at.unix_millis(),
            updated_at: c.updated_at.unix_millis(),
        })
    }
}

/// What an upsert of an existing contact sets: the given fields (`None`: left as stored;
/// `Some(None)`: cleared) and `updated_at`.
#[derive(AsChangeset)]
#[diesel(table_name = contacts)]
pub(crate) struct ContactChanges<'a> {
    name: Option<Option<&'a str>>,
    client_id: Option<Option<&'a str>>,
    metadata: Option<String>,
    updated_at: i64,
}

impl<'a> ContactChanges<'a> {
    pub(crate) fn new(c: &'a Contact, given: GivenFields) -> PortResult<Self> {
        Ok(ContactChanges {
            name: given.name.then_some(c.name.as_deref()),
            client_id: given.client_id.then_some(c.client_id.as_deref()),
            metadata: given.metadata.then(|| json_text(&c.metadata)).transpose()?,
            updated_at: c.updated_at.unix_millis(),
        })
    }
}
