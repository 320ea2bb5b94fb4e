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

/// What a contact is to the company (its roles): one contact per e-mail, a customer, a vendor
/// or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContactKind {
    /// Someone the company bills (payment links, subscriptions, the portal).
    Customer,
    /// Someone who bills the company (bookkeeping).
    Vendor,
    /// Both of the above.
    Both,
}

impl ContactKind {
    pub const ALL: [ContactKind; 3] = [
        ContactKind::Customer,
        ContactKind::Vendor,
        ContactKind::Both,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ContactKind::Customer => "customer",
            ContactKind::Vendor => "vendor",
            ContactKind::Both => "both",
        }
    }

    pub fn parse(s: &str) -> Option<ContactKind> {
        ContactKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether a contact of these roles has `role` (`Both` has every role).
    pub fn has(self, role: ContactKind) -> bool {
        self == role || self == ContactKind::Both
    }

    /// The roles after a contact of `self` is also given `role`.
    pub fn with(self, role: ContactKind) -> ContactKind {
        if self.has(role) {
            self
        } else {
            ContactKind::Both
        }
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

/// A wallet address as compared: `0x` hex (EVM) is case-insensitive, so it is lower-cased;
/// other encodings (base58, bech32) are kept as given, trimmed.
pub fn wallet_key(address: &str) -> String {
    let t = address.trim();
    if t.starts_with("0x") || t.starts_with("0X") {
        t.to_ascii_lowercase()
    } else {
        t.to_owned()
    }
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

/// Most contacts a search answers with.
pub const SEARCH_LIMIT: usize = 50;

/// A search of the company's contacts: `text` (at least one character, at most 200) matches a
/// part of the name, e-mail or clientId without case, or a known wallet address exactly
/// (`0x` addresses without case); `role` keeps the contacts that have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactQuery {
    pub text: String,
    pub role: Option<ContactKind>,
}

impl ContactQuery {
    pub fn parse(text: &str, role: Option<&str>) -> Result<ContactQuery, FieldError> {
        let text = text.trim();
        validate::text("q", text, MAX_NAME_CHARS, false)?;
        let role = match role {
            Some(r) => Some(
                ContactKind::parse(r)
                    .filter(|k| *k != ContactKind::Both)
                    .ok_or_else(|| FieldError::new("role", "role must be customer or vendor"))?,
            ),
            None => None,
        };
        Ok(ContactQuery {
            text: text.to_owned(),
            role,
        })
    }

    /// The text lower-cased, for the substring match.
    pub fn lowered(&self) -> String {
        self.text.to_lowercase()
    }
}

/// A contact with its known wallet addresses (search answers).
#[derive(Debug, Clone, PartialEq)]
pub struct ContactWithWallets {
    pub contact: Contact,
    pub wallets: Vec<String>,
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

impl From<ContactId> for ContactRef {
    fn from(id: ContactId) -> Self {
        ContactRef::Id(id)
    }
}

impl From<ContactUid> for ContactRef {
    fn from(uid: ContactUid) -> Self {
        ContactRef::Uid(uid)
    }
}

impl From<&ContactUid> for ContactRef {
    fn from(uid: &ContactUid) -> Self {
        ContactRef::Uid(uid.clone())
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

    #[test]
    fn roles_merge_into_both() {
        use ContactKind::*;
        let table = [
            (Customer, Customer, Customer),
            (Customer, Vendor, Both),
            (Vendor, Customer, Both),
            (Vendor, Vendor, Vendor),
            (Both, Customer, Both),
            (Both, Vendor, Both),
        ];
        for (from, add, to) in table {
            assert_eq!(from.with(add), to, "{from} + {add}");
            assert!(to.has(add));
        }
        assert!(!Customer.has(Vendor));
        assert!(!Vendor.has(Customer));
    }

    #[test]
    fn queries_need_text_and_take_single_roles() {
        assert_eq!(ContactQuery::parse("  ", None).unwrap_err().field, "q");
        assert_eq!(
            ContactQuery::parse("a", Some("both")).unwrap_err().field,
            "role"
        );
        let q = ContactQuery::parse(" Ann ", Some("vendor")).unwrap();
        assert_eq!(
            (q.lowered().as_str(), q.role),
            ("ann", Some(ContactKind::Vendor))
        );
    }
}
