//! The accountant's export: expenses (outgoing transfers with their expense) and incoming
//! payments of a period, as CSV records, read from the store page by page.

use crate::bookkeeping::csv::write_record;
use crate::bookkeeping::{Expense, WalletActivity};
use crate::customers::Contact;
use crate::kernel::error::FieldError;
use crate::kernel::ids::WalletActivityId;
use crate::kernel::timestamp::Timestamp;

/// Rows per store read (and per chunk of the streamed body).
pub const EXPORT_PAGE_SIZE: usize = 500;

/// Which export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// Outgoing transfers that have their expense.
    Expenses,
    /// Incoming transfers (settled payment sessions).
    Payments,
}

/// `from` inclusive, `to` exclusive, `to` after `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportPeriod {
    pub from: Timestamp,
    pub to: Timestamp,
}

impl ExportPeriod {
    /// Both ends are required; the period ends after it starts.
    pub fn new(from: Option<Timestamp>, to: Option<Timestamp>) -> Result<Self, FieldError> {
        let from = from.ok_or_else(|| FieldError::new("from", "from is required"))?;
        let to = to.ok_or_else(|| FieldError::new("to", "to is required"))?;
        if to <= from {
            return Err(FieldError::new("to", "to must be after from"));
        }
        Ok(ExportPeriod { from, to })
    }
}

/// Where the next page starts: after this activity in (`occurred_at`, `id`) order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportCursor {
    pub occurred_at: Timestamp,
    pub id: WalletActivityId,
}

/// The payment an incoming activity settled: its link's uid and the invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentRef {
    pub link_uid: String,
    /// The link's `fiatCurrency`, or its settlement asset identifier.
    pub invoice_asset: String,
    pub invoice_amount: String,
}

/// One activity of an export page, with its expense (expenses) or payment (payments).
#[derive(Debug, Clone, PartialEq)]
pub struct ExportItem {
    pub activity: WalletActivity,
    pub expense: Option<Expense>,
    pub payment: Option<PaymentRef>,
}

/// The header of each export.
pub fn header(kind: ExportKind) -> &'static [&'static str] {
    match kind {
        ExportKind::Expenses => &[
            "date",
            "counterparty",
            "counterparty_email",
            "counterparty_address",
            "asset",
            "amount",
            "fiat_currency",
            "fiat_amount",
            "tax",
            "category",
            "description",
            "notes",
            "tx_hash",
            "evidence_count",
            "expense_id",
            "activity_key",
        ],
        ExportKind::Payments => &[
            "date",
            "counterparty",
            "counterparty_email",
            "counterparty_address",
            "asset",
            "amount",
            "fiat_currency",
            "fiat_amount",
            "tax",
            "tx_hash",
            "evidence_count",
            "link_uid",
            "session_id",
            "activity_key",
        ],
    }
}

/// The counterparty cells: name (else e-mail, else the address), e-mail, address.
fn counterparty(contact: Option<&Contact>, address: &str) -> [String; 3] {
    let email = contact.map(|c| c.email.clone()).unwrap_or_default();
    let shown = contact
        .map(|c| c.name.clone().unwrap_or_else(|| c.email.clone()))
        .unwrap_or_else(|| address.to_owned());
    [shown, email, address.to_owned()]
}

/// Appends the record of one item. `contact` is the expense's counterparty (expenses) or the
/// contact that knows the payer's address (payments). `fiat` tells whether a code is a fiat
/// currency (an invoice in a crypto asset has no fiat value).
pub fn write_item(
    out: &mut String,
    kind: ExportKind,
    item: &ExportItem,
    contact: Option<&Contact>,
    fiat: impl Fn(&str) -> bool,
) {
    let a = &item.activity;
    let [shown, email, address] = counterparty(contact, &a.counterparty_address);
    let mut cells = vec![
        a.occurred_at.to_rfc3339(),
        shown,
        email,
        address,
        a.asset.clone(),
        a.amount.to_string(),
    ];
    match kind {
        ExportKind::Expenses => {
            let f = item.expense.as_ref().map(|e| &e.fields);
            let text = |v: Option<&crate::kernel::amount::Amount>| {
                v.map(|x| x.as_str().to_owned()).unwrap_or_default()
            };
            cells.extend([
                f.and_then(|f| f.fiat_currency.clone()).unwrap_or_default(),
                text(f.and_then(|f| f.fiat_amount.as_ref())),
                text(f.and_then(|f| f.tax_amount.as_ref())),
                f.map(|f| f.category.clone()).unwrap_or_default(),
                f.map(|f| f.description.clone()).unwrap_or_default(),
                f.and_then(|f| f.notes.clone()).unwrap_or_default(),
                a.key.tx_hash().to_owned(),
                f.map(|f| f.evidence_file_ids.len())
                    .unwrap_or(0)
                    .to_string(),
                item.expense
                    .as_ref()
                    .map(|e| e.id.to_string())
                    .unwrap_or_default(),
                a.key.to_string(),
            ]);
        }
        ExportKind::Payments => {
            let invoice = item.payment.as_ref().filter(|p| fiat(&p.invoice_asset));
            cells.extend([
                invoice.map(|p| p.invoice_asset.clone()).unwrap_or_default(),
                invoice
                    .map(|p| p.invoice_amount.clone())
                    .unwrap_or_default(),
                String::new(),
                a.key.tx_hash().to_owned(),
                "0".to_owned(),
                item.payment
                    .as_ref()
                    .map(|p| p.link_uid.clone())
                    .unwrap_or_default(),
                a.payment_session_id
                    .map(|s| s.to_string())
                    .unwrap_or_default(),
                a.key.to_string(),
            ]);
        }
    }
    write_record(out, &cells);
}

/// The header record of `kind`.
pub fn header_record(kind: ExportKind) -> String {
    let mut out = String::new();
    write_record(&mut out, header(kind));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_needs_both_ends_in_order() {
        let t = |ms| Timestamp::from_unix_millis(ms).unwrap();
        assert_eq!(
            ExportPeriod::new(None, Some(t(1))).unwrap_err().field,
            "from"
        );
        assert_eq!(ExportPeriod::new(Some(t(1)), None).unwrap_err().field, "to");
        assert_eq!(
            ExportPeriod::new(Some(t(2)), Some(t(2))).unwrap_err().field,
            "to"
        );
        assert!(ExportPeriod::new(Some(t(1)), Some(t(2))).is_ok());
    }

    #[test]
    fn headers_end_with_crlf() {
        assert!(header_record(ExportKind::Expenses).starts_with("date,counterparty,"));
        assert!(header_record(ExportKind::Payments).ends_with("session_id,activity_key\r\n"));
    }
}
