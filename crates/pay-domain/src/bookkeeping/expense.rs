//! The expense that explains one outgoing activity: the save's input and its rules, the
//! stored expense and its versions (who, when, what changed).

use crate::bookkeeping::{ActivityKey, MAX_EVIDENCE_PER_EXPENSE};
use crate::kernel::amount::Amount;
use crate::kernel::assets::fiat_decimals;
use crate::kernel::error::FieldError;
use crate::kernel::ids::{CompanyId, ContactId, EvidenceFileId, ExpenseId, WalletActivityId};
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;

/// Longest category.
pub const MAX_CATEGORY_CHARS: usize = 100;
/// Longest description.
pub const MAX_DESCRIPTION_CHARS: usize = 500;
/// Longest notes.
pub const MAX_NOTES_CHARS: usize = 5000;

/// How the expense names an activity: exactly one of id and key.
#[derive(Debug, Clone, PartialEq)]
pub enum ActivityRef {
    Id(WalletActivityId),
    Key(ActivityKey),
}

impl ActivityRef {
    /// The id or `<chain>:<txHash>:<index>` key form; `None` when it is neither.
    pub fn parse(s: &str) -> Option<ActivityRef> {
        WalletActivityId::parse(s)
            .map(ActivityRef::Id)
            .or_else(|| ActivityKey::parse(s).map(ActivityRef::Key))
    }
}

/// Who the counterparty is: a contact of the company, or a new vendor made inline (upserted by
/// e-mail, so a customer with that e-mail becomes customer and vendor).
#[derive(Debug, Clone, PartialEq)]
pub enum CounterpartyInput {
    Existing(String),
    NewVendor {
        email: String,
        name: Option<String>,
        client_id: Option<String>,
    },
}

/// The expense body, typed by the edge, not yet checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SaveExpenseInput {
    pub activity_id: Option<String>,
    pub activity_key: Option<String>,
    pub counterparty: Option<CounterpartyInput>,
    pub category: String,
    pub description: String,
    pub notes: Option<String>,
    pub fiat_currency: Option<String>,
    pub fiat_amount: Option<String>,
    pub tax_amount: Option<String>,
    /// The company's stored evidence files the expense links (the whole list: a file left
    /// out of a re-save is unlinked).
    pub evidence_file_ids: Vec<String>,
}

/// What an expense says (the part a save sets and the versions compare).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpenseFields {
    pub contact_id: ContactId,
    pub category: String,
    pub description: String,
    pub notes: Option<String>,
    /// ISO 4217 code of `fiat_amount` and `tax_amount`.
    pub fiat_currency: Option<String>,
    /// What the transfer was worth in `fiat_currency`.
    pub fiat_amount: Option<Amount>,
    /// Tax included, in `fiat_currency`.
    pub tax_amount: Option<Amount>,
    /// The linked evidence files, in id (upload) order.
    pub evidence_file_ids: Vec<EvidenceFileId>,
}

/// A checked save (the contact still to be resolved).
#[derive(Debug, Clone, PartialEq)]
pub struct ExpenseSave {
    pub activity: ActivityRef,
    pub counterparty: CounterpartyInput,
    pub category: String,
    pub description: String,
    pub notes: Option<String>,
    pub fiat_currency: Option<String>,
    pub fiat_amount: Option<Amount>,
    pub tax_amount: Option<Amount>,
    /// In id order, each once.
    pub evidence_file_ids: Vec<EvidenceFileId>,
}

impl SaveExpenseInput {
    /// Exactly one of `walletActivityEventId`/`walletActivityEventKey`; a counterparty;
    /// `category` and `description` one line of text (notes free text); `fiatAmount` and
    /// `taxAmount` need `fiatCurrency` (a known code), non-negative, in its minor units; at
    /// most 20 evidence file ids, each an id (a list of ids is a set: one given twice is
    /// linked once).
    pub fn check(self) -> Result<ExpenseSave, FieldError> {
        let activity = match (&self.activity_id, &self.activity_key) {
            (Some(id), None) => ActivityRef::Id(WalletActivityId::parse(id).ok_or_else(|| {
                FieldError::new(
                    "walletActivityEventId",
                    "walletActivityEventId is not an id",
                )
            })?),
            (None, Some(key)) => ActivityRef::Key(ActivityKey::parse(key).ok_or_else(|| {
                FieldError::new(
                    "walletActivityEventKey",
                    "walletActivityEventKey must be <chain>:<txHash>:<index>",
                )
            })?),
            _ => {
                return Err(FieldError::new(
                    "walletActivityEventId",
                    "give exactly one of walletActivityEventId and walletActivityEventKey",
                ))
            }
        };
        let counterparty = self.counterparty.ok_or_else(|| {
            FieldError::new(
                "counterparty",
                "counterparty is required (contactId or newVendor)",
            )
        })?;
        validate::text("category", &self.category, MAX_CATEGORY_CHARS, false)?;
        validate::text(
            "description",
            &self.description,
            MAX_DESCRIPTION_CHARS,
            false,
        )?;
        if let Some(n) = &self.notes {
            validate::text("notes", n, MAX_NOTES_CHARS, true)?;
        }
        let currency = self.fiat_currency.as_deref();
        let decimals = match currency {
            Some(c) => Some(fiat_decimals(c).ok_or_else(|| {
                FieldError::new("fiatCurrency", "fiatCurrency is not a known currency code")
            })?),
            None => None,
        };
        let fiat_amount = |field: &str, v: &Option<String>| -> Result<Option<Amount>, FieldError> {
            let Some(v) = v else { return Ok(None) };
            let d = decimals
                .ok_or_else(|| FieldError::new(field, format!("{field} needs fiatCurrency")))?;
            let a =
                Amount::parse(v, d).map_err(|e| FieldError::new(field, format!("{field}: {e}")))?;
            if a.value().is_negative() {
                return Err(FieldError::new(
                    field,
                    format!("{field} must not be negative"),
                ));
            }
            Ok(Some(a))
        };
        let amount = fiat_amount("fiatAmount", &self.fiat_amount)?;
        let tax = fiat_amount("taxAmount", &self.tax_amount)?;
        if currency.is_some() && amount.is_none() && tax.is_none() {
            return Err(FieldError::new(
                "fiatCurrency",
                "fiatCurrency goes with fiatAmount or taxAmount",
            ));
        }
        if self.evidence_file_ids.len() > MAX_EVIDENCE_PER_EXPENSE {
            return Err(FieldError::new(
                "evidenceFileIds",
                format!("evidenceFileIds takes at most {MAX_EVIDENCE_PER_EXPENSE} files"),
            ));
        }
        let mut files = Vec::with_capacity(self.evidence_file_ids.len());
        for (i, raw) in self.evidence_file_ids.iter().enumerate() {
            let field = format!("evidenceFileIds[{i}]");
            let id = EvidenceFileId::parse(raw)
                .ok_or_else(|| FieldError::new(&field, format!("{field} is not an id")))?;
            files.push(id);
        }
        files.sort();
        files.dedup();
        Ok(ExpenseSave {
            activity,
            counterparty,
            category: self.category.trim().to_owned(),
            description: self.description.trim().to_owned(),
            notes: self.notes,
            fiat_currency: self.fiat_currency,
            fiat_amount: amount,
            tax_amount: tax,
            evidence_file_ids: files,
        })
    }
}

/// Who saved: the credential, as links record their creator (`api_key:<partner id>`,
/// `user:<user id>`, `grant:<grant id>`).
pub type Actor = String;

/// One field an expense save changed: its wire name, and its value before and after as text
/// (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    pub field: &'static str,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// One save of an expense: who, when, what changed. Version 1 is the creation (every given
/// field changes from nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpenseVersion {
    pub expense_id: ExpenseId,
    pub version: i64,
    pub saved_at: Timestamp,
    pub saved_by: Actor,
    pub changes: Vec<FieldChange>,
}

/// The expense that explains one outgoing activity (one at most: the store's unique key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expense {
    pub id: ExpenseId,
    pub company_id: CompanyId,
    pub activity_id: WalletActivityId,
    pub fields: ExpenseFields,
    /// Compare-and-set counter: 1 at creation, +1 per save.
    pub version: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl ExpenseFields {
    /// Each field as the versions write it.
    fn texts(&self) -> [(&'static str, Option<String>); 8] {
        [
            ("contactId", Some(self.contact_id.to_string())),
            ("category", Some(self.category.clone())),
            ("description", Some(self.description.clone())),
            ("notes", self.notes.clone()),
            ("fiatCurrency", self.fiat_currency.clone()),
            (
                "fiatAmount",
                self.fiat_amount.as_ref().map(|a| a.as_str().to_owned()),
            ),
            (
                "taxAmount",
                self.tax_amount.as_ref().map(|a| a.as_str().to_owned()),
            ),
            (
                "evidenceFileIds",
                (!self.evidence_file_ids.is_empty()).then(|| {
                    let ids: Vec<String> = self
                        .evidence_file_ids
                        .iter()
                        .map(|f| f.to_string())
                        .collect();
                    ids.join(",")
                }),
            ),
        ]
    }

    /// What changes from `before` (`None`: a new expense) to `self`.
    pub fn changes_from(&self, before: Option<&ExpenseFields>) -> Vec<FieldChange> {
        let after = self.texts();
        let before = before.map(ExpenseFields::texts);
        after
            .into_iter()
            .enumerate()
            .filter_map(|(i, (field, to))| {
                let from = before.as_ref().and_then(|b| b[i].1.clone());
                (from != to).then_some(FieldChange { field, from, to })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "0xABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789";

    fn input() -> SaveExpenseInput {
        SaveExpenseInput {
            activity_id: Some("0192f0c4-1a2b-7c3d-8e4f-0123456789ab".into()),
            activity_key: None,
            counterparty: Some(CounterpartyInput::Existing("x".into())),
            category: "Hosting".into(),
            description: "November servers".into(),
            notes: None,
            fiat_currency: Some("EUR".into()),
            fiat_amount: Some("120.50".into()),
            tax_amount: Some("19.24".into()),
            evidence_file_ids: vec![],
        }
    }

    #[test]
    fn exactly_one_activity_reference() {
        let field = |i: SaveExpenseInput| i.check().unwrap_err().field;
        assert!(input().check().is_ok());
        let both = SaveExpenseInput {
            activity_key: Some(format!("eip155:1:{}:0", HASH.to_lowercase())),
            ..input()
        };
        assert_eq!(field(both), "walletActivityEventId");
        let neither = SaveExpenseInput {
            activity_id: None,
            ..input()
        };
        assert_eq!(field(neither), "walletActivityEventId");
        let by_key = SaveExpenseInput {
            activity_id: None,
            activity_key: Some(format!("eip155:1:{}:0", HASH.to_lowercase())),
            ..input()
        };
        assert!(matches!(
            by_key.check().unwrap().activity,
            ActivityRef::Key(_)
        ));
    }

    #[test]
    fn fiat_amounts_need_their_currency_and_files_are_ids() {
        let field = |i: SaveExpenseInput| i.check().unwrap_err().field;
        assert_eq!(
            field(SaveExpenseInput {
                fiat_currency: None,
                ..input()
            }),
            "fiatAmount"
        );
        assert_eq!(
            field(SaveExpenseInput {
                fiat_amount: None,
                tax_amount: None,
                ..input()
            }),
            "fiatCurrency"
        );
        assert_eq!(
            field(SaveExpenseInput {
                fiat_amount: Some("1.234".into()),
                ..input()
            }),
            "fiatAmount"
        );
        assert_eq!(
            field(SaveExpenseInput {
                tax_amount: Some("-1".into()),
                ..input()
            }),
            "taxAmount"
        );
        assert_eq!(
            field(SaveExpenseInput {
                fiat_currency: Some("XXX".into()),
                ..input()
            }),
            "fiatCurrency"
        );
        assert_eq!(
            field(SaveExpenseInput {
                category: " ".into(),
                ..input()
            }),
            "category"
        );
        assert_eq!(
            field(SaveExpenseInput {
                evidence_file_ids: vec!["f".into()],
                ..input()
            }),
            "evidenceFileIds[0]"
        );
        let a = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab".to_owned();
        let b = "0192f0c4-1a2b-7c3d-8e4f-0123456789aa".to_owned();
        assert_eq!(
            field(SaveExpenseInput {
                evidence_file_ids: vec![a.clone(); 21],
                ..input()
            }),
            "evidenceFileIds"
        );
        let sorted = SaveExpenseInput {
            evidence_file_ids: vec![a.clone(), b.clone(), a.clone()],
            ..input()
        }
        .check()
        .unwrap()
        .evidence_file_ids;
        assert_eq!(
            sorted.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
            [b, a]
        );
    }

    #[test]
    fn changes_name_each_field_that_moved() {
        let id = ContactId(uuid::Uuid::nil());
        let a = ExpenseFields {
            contact_id: id,
            category: "A".into(),
            description: "d".into(),
            notes: None,
            fiat_currency: None,
            fiat_amount: None,
            tax_amount: None,
            evidence_file_ids: vec![],
        };
        let created = a.changes_from(None);
        assert_eq!(
            created.iter().map(|c| c.field).collect::<Vec<_>>(),
            ["contactId", "category", "description"]
        );
        let b = ExpenseFields {
            category: "B".into(),
            notes: Some("n".into()),
            ..a.clone()
        };
        assert_eq!(
            b.changes_from(Some(&a)),
            vec![
                FieldChange {
                    field: "category",
                    from: Some("A".into()),
                    to: Some("B".into())
                },
                FieldChange {
                    field: "notes",
                    from: None,
                    to: Some("n".into())
                },
            ]
        );
        assert!(a.changes_from(Some(&a)).is_empty());
        let f = EvidenceFileId(uuid::Uuid::nil());
        let c = ExpenseFields {
            evidence_file_ids: vec![f],
            ..a.clone()
        };
        assert_eq!(
            c.changes_from(Some(&a)),
            vec![FieldChange {
                field: "evidenceFileIds",
                from: None,
                to: Some(f.to_string())
            }]
        );
    }
}
