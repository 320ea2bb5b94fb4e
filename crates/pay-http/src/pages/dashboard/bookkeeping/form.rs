//! The expense form of an outgoing transfer: every field of the JSON save
//! (`createBookkeepingExpenseFromActivity`) as page fields, and its evidence upload, posted as
//! `multipart/form-data` (`edge::multipart`): the text fields are read by `ExpenseForm` as a
//! urlencoded page form is (unknown or repeated names refused), the one file field is
//! `evidence`.

use pay_domain::bookkeeping::{CounterpartyInput, ExpenseDetail, SaveExpenseInput};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::edge::multipart::Part;
use crate::pages::dashboard::flow::given;

/// The name of the form's file field.
pub(crate) const EVIDENCE_FIELD: &str = "evidence";

/// The `contact_id` choice that makes a new vendor of the `vendor_*` fields.
pub(crate) const NEW_VENDOR: &str = "new";

/// The expense form (`multipart/form-data`): the counterparty (a contact, or a new vendor),
/// the expense's texts and amounts, a file to remove and a file to add.
#[derive(Debug, Default, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpenseForm {
    pub csrf_token: Option<String>,
    /// A contact's `uid` (or `id`), or `new`: a new vendor from the `vendor_*` fields.
    pub contact_id: Option<String>,
    /// The new vendor's e-mail (a contact with this e-mail gains the vendor role).
    pub vendor_email: Option<String>,
    pub vendor_name: Option<String>,
    pub vendor_client_id: Option<String>,
    /// 1 to 100 characters.
    pub category: Option<String>,
    /// 1 to 500 characters.
    pub description: Option<String>,
    /// At most 5,000 characters.
    pub notes: Option<String>,
    /// ISO 4217 code of the fiat amount and the tax.
    pub fiat_currency: Option<String>,
    pub fiat_amount: Option<String>,
    pub tax_amount: Option<String>,
    /// The id of a linked evidence file to unlink with this save.
    pub remove_evidence: Option<String>,
    /// A PDF, PNG, JPEG or WebP (sniffed from the bytes), at most 10 MiB: uploaded and linked
    /// with this save.
    // The reader takes this file part apart from the text fields (`split`).
    #[schema(value_type = Option<String>, format = Binary)]
    pub evidence: Option<String>,
}

/// A file the form carries: its name and bytes.
pub(crate) struct Upload {
    pub filename: String,
    pub bytes: Vec<u8>,
}

/// The text fields as (name, value) pairs and the file, if one was chosen.
pub(crate) type Split = (Vec<(String, String)>, Option<Upload>);

/// The form's parts as the urlencoded pairs its struct reads and the file, if one was chosen
/// (a browser sends an empty part without a name for no file). A file in another field, or a
/// text value in the file's, is a field the page does not take.
pub(crate) fn split(parts: Vec<Part>) -> Result<Split, String> {
    let mut pairs = Vec::new();
    let mut upload = None;
    for p in parts {
        match (p.name.as_str(), p.filename) {
            (EVIDENCE_FIELD, Some(filename)) => {
                if !(filename.is_empty() && p.bytes.is_empty()) {
                    upload = Some(Upload {
                        filename,
                        bytes: p.bytes,
                    });
                }
            }
            (_, None) if p.name != EVIDENCE_FIELD => {
                // The multipart reader checked that text values are UTF-8.
                pairs.push((p.name, String::from_utf8_lossy(&p.bytes).into_owned()));
            }
            _ => {
                return Err(format!(
                    "The form has a field this page does not take: {}.",
                    p.name
                ))
            }
        }
    }
    Ok((pairs, upload))
}

impl ExpenseForm {
    pub(crate) fn csrf(&self) -> Option<&str> {
        self.csrf_token.as_deref()
    }

    /// The form as the saved expense fills it (the page's defaults).
    pub(crate) fn of(saved: Option<&ExpenseDetail>) -> ExpenseForm {
        let Some(d) = saved else {
            return ExpenseForm::default();
        };
        let f = &d.expense.fields;
        ExpenseForm {
            contact_id: d.contact.as_ref().map(|c| c.uid.to_string()),
            category: Some(f.category.clone()),
            description: Some(f.description.clone()),
            notes: f.notes.clone(),
            fiat_currency: f.fiat_currency.clone(),
            fiat_amount: f.fiat_amount.as_ref().map(|a| a.as_str().to_owned()),
            tax_amount: f.tax_amount.as_ref().map(|a| a.as_str().to_owned()),
            ..ExpenseForm::default()
        }
    }

    /// The save of activity `activity` with the evidence files `evidence` (the whole list).
    pub(crate) fn input(&self, activity: String, evidence: Vec<String>) -> SaveExpenseInput {
        let counterparty = match given(&self.contact_id).as_deref() {
            None => None,
            Some(NEW_VENDOR) => Some(CounterpartyInput::NewVendor {
                email: given(&self.vendor_email).unwrap_or_default(),
                name: given(&self.vendor_name),
                client_id: given(&self.vendor_client_id),
            }),
            Some(id) => Some(CounterpartyInput::Existing(id.to_owned())),
        };
        SaveExpenseInput {
            activity_id: Some(activity),
            activity_key: None,
            counterparty,
            category: self.category.clone().unwrap_or_default(),
            description: self.description.clone().unwrap_or_default(),
            notes: given(&self.notes),
            fiat_currency: given(&self.fiat_currency).map(|c| c.to_uppercase()),
            fiat_amount: given(&self.fiat_amount),
            tax_amount: given(&self.tax_amount),
            evidence_file_ids: evidence,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(name: &str, filename: Option<&str>, bytes: &[u8]) -> Part {
        Part {
            name: name.into(),
            filename: filename.map(str::to_owned),
            bytes: bytes.to_vec(),
        }
    }

    #[test]
    fn splits_text_fields_from_the_one_file() {
        let (pairs, up) = split(vec![
            part("csrf_token", None, b"t"),
            part("evidence", Some("r.pdf"), b"%PDF-"),
        ])
        .unwrap();
        assert_eq!(pairs, [("csrf_token".to_owned(), "t".to_owned())]);
        let up = up.unwrap();
        assert_eq!(
            (up.filename.as_str(), &up.bytes[..]),
            ("r.pdf", &b"%PDF-"[..])
        );
        // No file chosen.
        let (_, up) = split(vec![part("evidence", Some(""), b"")]).unwrap();
        assert!(up.is_none());
        // A file elsewhere, or text in the file's field.
        assert!(split(vec![part("notes", Some("x.pdf"), b"%PDF-")]).is_err());
        assert!(split(vec![part("evidence", None, b"x")]).is_err());
    }

    #[test]
    fn the_counterparty_is_a_contact_or_a_new_vendor() {
        let f = ExpenseForm {
            contact_id: Some("new".into()),
            vendor_email: Some(" billing@hoster.example ".into()),
            vendor_name: Some(String::new()),
            fiat_currency: Some("eur".into()),
            ..ExpenseForm::default()
        };
        let i = f.input("a".into(), vec![]);
        assert_eq!(
            i.counterparty,
            Some(CounterpartyInput::NewVendor {
                email: "billing@hoster.example".into(),
                name: None,
                client_id: None
            })
        );
        assert_eq!(i.fiat_currency.as_deref(), Some("EUR"));
        let f = ExpenseForm {
            contact_id: Some("cus_1".into()),
            ..ExpenseForm::default()
        };
        assert_eq!(
            f.input("a".into(), vec![]).counterparty,
            Some(CounterpartyInput::Existing("cus_1".into()))
        );
        assert_eq!(
            ExpenseForm::default()
                .input("a".into(), vec![])
                .counterparty,
            None
        );
    }
}
