//! Contacts: who a company bills (customers) and, with bookkeeping, who bills it (vendors).
//! One record type for both, told apart by `kind`; the e-mail, trimmed and compared without
//! case, is the upsert key within a company and kind.

use std::fmt;

use serde_json::{Map, Value};

use crate::kernel::error::FieldError;
use crate::kernel::ids::{CompanyId, ContactId, ContactUid};
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;

/// The spec's list limit, as for links: up to 200 newest.
pub const LIST_LIMIT: usize = 200;
/// Longest `name` and `clientId`.
pub const MAX_NAME_CHARS: usize = 200;

/// What a contact is to the company.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContactKind {
    /// Someone the company bills (payment links, subscriptions, the portal).
    Customer,
    /// Someone who bills the company (bookkeeping).
    Vendor,
}

impl ContactKind {
    pub const ALL: [ContactKind; 2] = [ContactKind::Customer, ContactKind::Vendor];

    pub fn as_str(self) -> &'static str {
        match self {
            ContactKind::Customer => "customer",
            ContactKind::Vendor => "vendor",
        }
    }

    pub fn parse(s: &str) -> Option<ContactKind> {
        ContactKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for ContactKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A contact as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Contact {
    pub id: ContactId,
    pub uid: ContactUid,
    pub company_id: CompanyId,
    pub kind: ContactKind,
    /// As first given, trimmed.
    pub email: String,
    pub name: Option<String>,
    pub client_id: Option<String>,
    pub metadata: Map<String, Value>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Contact {
    /// The upsert key: the e-mail, trimmed and lower-cased.
    pub fn email_key(&self) -> String {
        email_key(&self.email)
    }
}

/// The upsert key of an e-mail address: trimmed and lower-cased (ASCII and Unicode).
pub fn email_key(email: &str) -> String {
    email.trim().to_lowercase()
}

/// Which fields of a contact an upsert sets; the others keep their stored value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GivenFields {
    pub name: bool,
    pub client_id: bool,
    pub metadata: bool,
}

/// What an upsert did.
#[derive(Debug, Clone, PartialEq)]
pub enum Upserted {
    /// A new contact (the API's 201).
    Created(Contact),
    /// The contact with this e-mail, updated (the API's 200).
    Updated(Contact),
}

impl Upserted {
    pub fn contact(&self) -> &Contact {
        match self {
            Upserted::Created(c) | Upserted::Updated(c) => c,
        }
    }

    pub fn into_contact(self) -> Contact {
        match self {
            Upserted::Created(c) | Upserted::Updated(c) => c,
        }
    }

    pub fn was_created(&self) -> bool {
        matches!(self, Upserted::Created(_))
    }
}

/// The upsert body (`{email, name?, clientId?, metadata?}`), typed by the edge, not yet checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpsertContactInput {
    pub email: String,
    pub name: Option<String>,
    pub client_id: Option<String>,
    pub metadata: Option<Map<String, Value>>,
}

/// Field names the upsert route takes.
pub const UPSERT_CONTACT_FIELDS: &[&str] = &["email", "name", "clientId", "metadata"];

/// The checked upsert: trimmed e-mail, and which fields it sets.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactUpsert {
    pub email: String,
    pub name: Option<String>,
    pub client_id: Option<String>,
    pub metadata: Option<Map<String, Value>>,
}

impl UpsertContactInput {
    /// Applies the rules: `email` trimmed and plausible; `name` and `clientId` one line of at
    /// most 200 characters (an empty `name` is refused: leave it out); `metadata` within the
    /// metadata limits.
    pub fn check(self) -> Result<ContactUpsert, FieldError> {
        let email = self.email.trim().to_owned();
        validate::email("email", &email)?;
        if let Some(n) = &self.name {
            validate::text("name", n, MAX_NAME_CHARS, false)?;
        }
        if let Some(c) = &self.client_id {
            validate::text("clientId", c, MAX_NAME_CHARS, false)?;
        }
        if let Some(m) = &self.metadata {
            validate::metadata("metadata", m)?;
        }
        Ok(ContactUpsert {
            email,
            name: self.name,
            client_id: self.client_id,
            metadata: self.metadata,
        })
    }
}

impl ContactUpsert {
    /// Which fields the upsert sets on an existing contact.
    pub fn given(&self) -> GivenFields {
        GivenFields {
            name: self.name.is_some(),
            client_id: self.client_id.is_some(),
            metadata: self.metadata.is_some(),
        }
    }
}

/// How a route names a contact: its internal id or its public uid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContactRef {
    Id(ContactId),
    Uid(ContactUid),
}

impl ContactRef {
    /// The id or uid form; `None` when it is neither (nothing can match it).
    pub fn parse(s: &str) -> Option<ContactRef> {
        ContactId::parse(s)
            .map(ContactRef::Id)
            .or_else(|| ContactUid::parse(s).map(ContactRef::Uid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_is_trimmed_and_keyed_without_case() {
        let c = UpsertContactInput {
            email: "  Ann.Lee@Example.COM \n".into(),
            ..Default::default()
        }
        .check()
        .unwrap();
        assert_eq!(c.email, "Ann.Lee@Example.COM");
        assert_eq!(email_key(&c.email), "ann.lee@example.com");
        assert_eq!(c.given(), GivenFields::default());
    }

    #[test]
    fn bad_fields_are_named() {
        let field = |i: UpsertContactInput| i.check().unwrap_err().field;
        let ok = || UpsertContactInput {
            email: "a@b.example".into(),
            ..Default::default()
        };
        assert_eq!(
            field(UpsertContactInput {
                email: "nope".into(),
                ..ok()
            }),
            "email"
        );
        assert_eq!(
            field(UpsertContactInput {
                email: "   ".into(),
                ..ok()
            }),
            "email"
        );
        assert_eq!(
            field(UpsertContactInput {
                name: Some(String::new()),
                ..ok()
            }),
            "name"
        );
        assert_eq!(
            field(UpsertContactInput {
                client_id: Some("x".repeat(201)),
                ..ok()
            }),
            "clientId"
        );
        let big: Map<String, Value> = (0..51).map(|i| (i.to_string(), Value::Null)).collect();
        assert_eq!(
            field(UpsertContactInput {
                metadata: Some(big),
                ..ok()
            }),
            "metadata"
        );
    }

    #[test]
    fn refs_are_ids_or_uids() {
        let id = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab";
        assert!(matches!(ContactRef::parse(id), Some(ContactRef::Id(_))));
        let uid = format!("cus_{}", "a".repeat(24));
        assert!(matches!(ContactRef::parse(&uid), Some(ContactRef::Uid(_))));
        assert_eq!(ContactRef::parse("cus_short"), None);
        for k in ContactKind::ALL {
            assert_eq!(ContactKind::parse(k.as_str()), Some(k));
        }
    }
}
