//! Wallet activity, expense, expense-version and evidence file rows and their conversions.

use diesel::prelude::*;
use pay_domain::bookkeeping::{
    ActivityKey, Direction, EvidenceFile, EvidenceStatus, EvidenceType, Expense, ExpenseFields,
    ExpenseVersion, FieldChange, WalletActivity,
};
use pay_domain::kernel::amount::{Amount, Decimal};
use pay_domain::kernel::ids::{
    CompanyId, ContactId, EvidenceFileId, ExpenseId, PaymentSessionId, WalletActivityId,
};
use pay_domain::{Fault, PortResult};
use serde_json::{json, Value};

use super::{corrupt, id, instant, opt_instant};
use crate::conn::MultiBackend;
use crate::schema::{evidence_files, expense_versions, expenses, wallet_activities};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = wallet_activities, check_for_backend(MultiBackend))]
pub(crate) struct ActivityRow {
    pub(crate) id: String,
    pub(crate) company_id: String,
    pub(crate) activity_key: String,
    chain: String,
    tx_hash: String,
    log_index: i64,
    direction: String,
    asset: String,
    amount: String,
    wallet_address: String,
    counterparty_address: String,
    occurred_at: i64,
    pub(crate) payment_session_id: Option<String>,
    recorded_at: i64,
}

impl From<&WalletActivity> for ActivityRow {
    fn from(a: &WalletActivity) -> Self {
        ActivityRow {
            id: a.id.to_string(),
            company_id: a.company_id.to_string(),
            activity_key: a.key.to_string(),
            chain: a.key.chain().to_owned(),
            tx_hash: a.key.tx_hash().to_owned(),
            // -1: the transaction's native coin value (`native` in the key).
            log_index: a.key.index().map_or(-1, i64::from),
            direction: a.direction.as_str().to_owned(),
            asset: a.asset.clone(),
            amount: a.amount.to_string(),
            wallet_address: a.wallet_address.clone(),
            counterparty_address: a.counterparty_address.clone(),
            occurred_at: a.occurred_at.unix_millis(),
            payment_session_id: a.payment_session_id.map(|s| s.to_string()),
            recorded_at: a.recorded_at.unix_millis(),
        }
    }
}

impl TryFrom<ActivityRow> for WalletActivity {
    type Error = Fault;

    fn try_from(r: ActivityRow) -> PortResult<WalletActivity> {
        let index = match r.log_index {
            -1 => None,
            i => Some(u32::try_from(i).map_err(|_| corrupt("wallet_activities.log_index"))?),
        };
        Ok(WalletActivity {
            id: id(&r.id, WalletActivityId::parse, "wallet_activities.id")?,
            company_id: id(
                &r.company_id,
                CompanyId::parse,
                "wallet_activities.company_id",
            )?,
            key: ActivityKey::with_index(&r.chain, &r.tx_hash, index)
                .map_err(|_| corrupt("wallet_activities.activity_key"))?,
            direction: Direction::parse(&r.direction)
                .ok_or_else(|| corrupt("wallet_activities.direction"))?,
            asset: r.asset,
            amount: Decimal::parse_stored(&r.amount)
                .map_err(|_| corrupt("wallet_activities.amount"))?,
            wallet_address: r.wallet_address,
            counterparty_address: r.counterparty_address,
            occurred_at: instant(r.occurred_at, "wallet_activities.occurred_at")?,
            payment_session_id: r
                .payment_session_id
                .as_deref()
                .map(|s| {
                    id(
                        s,
                        PaymentSessionId::parse,
                        "wallet_activities.payment_session_id",
                    )
                })
                .transpose()?,
            recorded_at: instant(r.recorded_at, "wallet_activities.recorded_at")?,
        })
    }
}

#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = expenses, check_for_backend(MultiBackend))]
#[diesel(treat_none_as_null = true)]
pub(crate) struct ExpenseRow {
    pub(crate) id: String,
    pub(crate) company_id: String,
    pub(crate) activity_id: String,
    contact_id: String,
    category: String,
    description: String,
    notes: Option<String>,
    fiat_currency: Option<String>,
    fiat_amount: Option<String>,
    tax_amount: Option<String>,
    pub(crate) version: i64,
    created_at: i64,
    updated_at: i64,
}

impl From<&Expense> for ExpenseRow {
    fn from(e: &Expense) -> Self {
        let f = &e.fields;
        ExpenseRow {
            id: e.id.to_string(),
            company_id: e.company_id.to_string(),
            activity_id: e.activity_id.to_string(),
            contact_id: f.contact_id.to_string(),
            category: f.category.clone(),
            description: f.description.clone(),
            notes: f.notes.clone(),
            fiat_currency: f.fiat_currency.clone(),
            fiat_amount: f.fiat_amount.as_ref().map(|a| a.as_str().to_owned()),
            tax_amount: f.tax_amount.as_ref().map(|a| a.as_str().to_owned()),
            version: e.version,
            created_at: e.created_at.unix_millis(),
            updated_at: e.updated_at.unix_millis(),
        }
    }
}

fn fiat(text: Option<String>, column: &str) -> PortResult<Option<Amount>> {
    text.map(|t| Amount::parse_stored(&t, 18).map_err(|_| corrupt(column)))
        .transpose()
}

impl TryFrom<ExpenseRow> for Expense {
    type Error = Fault;

    fn try_from(r: ExpenseRow) -> PortResult<Expense> {
        Ok(Expense {
            id: id(&r.id, ExpenseId::parse, "expenses.id")?,
            company_id: id(&r.company_id, CompanyId::parse, "expenses.company_id")?,
            activity_id: id(
                &r.activity_id,
                WalletActivityId::parse,
                "expenses.activity_id",
            )?,
            fields: ExpenseFields {
                contact_id: id(&r.contact_id, ContactId::parse, "expenses.contact_id")?,
                category: r.category,
                description: r.description,
                notes: r.notes,
                fiat_currency: r.fiat_currency,
                fiat_amount: fiat(r.fiat_amount, "expenses.fiat_amount")?,
                tax_amount: fiat(r.tax_amount, "expenses.tax_amount")?,
                // The links live on the files' rows: the store reads them beside.
                evidence_file_ids: Vec::new(),
            },
            version: r.version,
            created_at: instant(r.created_at, "expenses.created_at")?,
            updated_at: instant(r.updated_at, "expenses.updated_at")?,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = expense_versions, check_for_backend(MultiBackend))]
pub(crate) struct ExpenseVersionRow {
    expense_id: String,
    version: i64,
    saved_at: i64,
    saved_by: String,
    changes: String,
}

impl TryFrom<&ExpenseVersion> for ExpenseVersionRow {
    type Error = Fault;

    fn try_from(v: &ExpenseVersion) -> PortResult<Self> {
        let changes: Vec<Value> = v
            .changes
            .iter()
            .map(|c| json!({"field": c.field, "from": c.from, "to": c.to}))
            .collect();
        Ok(ExpenseVersionRow {
            expense_id: v.expense_id.to_string(),
            version: v.version,
            saved_at: v.saved_at.unix_millis(),
            saved_by: v.saved_by.clone(),
            changes: serde_json::to_string(&changes)
                .map_err(|e| Fault::caused("encoding expense changes", e))?,
        })
    }
}

/// The field names a version may hold (the stored text is matched back to them).
const FIELDS: [&str; 8] = [
    "contactId",
    "category",
    "description",
    "notes",
    "fiatCurrency",
    "fiatAmount",
    "taxAmount",
    "evidenceFileIds",
];

impl TryFrom<ExpenseVersionRow> for ExpenseVersion {
    type Error = Fault;

    fn try_from(r: ExpenseVersionRow) -> PortResult<ExpenseVersion> {
        let bad = || corrupt("expense_versions.changes");
        let list: Vec<Value> = serde_json::from_str(&r.changes).map_err(|_| bad())?;
        let text = |v: &Value| -> PortResult<Option<String>> {
            match v {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(s.clone())),
                _ => Err(bad()),
            }
        };
        let changes = list
            .iter()
            .map(|c| {
                let name = c.get("field").and_then(Value::as_str).ok_or_else(bad)?;
                let field = FIELDS.into_iter().find(|f| *f == name).ok_or_else(bad)?;
                Ok(FieldChange {
                    field,
                    from: text(c.get("from").unwrap_or(&Value::Null))?,
                    to: text(c.get("to").unwrap_or(&Value::Null))?,
                })
            })
            .collect::<PortResult<Vec<_>>>()?;
        Ok(ExpenseVersion {
            expense_id: id(
                &r.expense_id,
                ExpenseId::parse,
                "expense_versions.expense_id",
            )?,
            version: r.version,
            saved_at: instant(r.saved_at, "expense_versions.saved_at")?,
            saved_by: r.saved_by,
            changes,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = evidence_files, check_for_backend(MultiBackend))]
pub(crate) struct EvidenceRow {
    id: String,
    company_id: String,
    filename: String,
    content_type: String,
    size: i64,
    sha256: String,
    status: String,
    expense_id: Option<String>,
    uploaded_at: i64,
    uploaded_by: String,
    orphan_since: Option<i64>,
}

impl TryFrom<&EvidenceFile> for EvidenceRow {
    type Error = Fault;

    fn try_from(f: &EvidenceFile) -> PortResult<Self> {
        Ok(EvidenceRow {
            id: f.id.to_string(),
            company_id: f.company_id.to_string(),
            filename: f.filename.clone(),
            content_type: f.content_type.mime().to_owned(),
            size: i64::try_from(f.size).map_err(|_| Fault::new("evidence file size"))?,
            sha256: f.sha256.clone(),
            status: f.status.as_str().to_owned(),
            expense_id: f.expense_id.map(|e| e.to_string()),
            uploaded_at: f.uploaded_at.unix_millis(),
            uploaded_by: f.uploaded_by.clone(),
            orphan_since: f.orphan_since.map(|t| t.unix_millis()),
        })
    }
}

impl TryFrom<EvidenceRow> for EvidenceFile {
    type Error = Fault;

    fn try_from(r: EvidenceRow) -> PortResult<EvidenceFile> {
        Ok(EvidenceFile {
            id: id(&r.id, EvidenceFileId::parse, "evidence_files.id")?,
            company_id: id(&r.company_id, CompanyId::parse, "evidence_files.company_id")?,
            filename: r.filename,
            content_type: EvidenceType::parse_mime(&r.content_type)
                .ok_or_else(|| corrupt("evidence_files.content_type"))?,
            size: u64::try_from(r.size).map_err(|_| corrupt("evidence_files.size"))?,
            sha256: r.sha256,
            status: EvidenceStatus::parse(&r.status)
                .ok_or_else(|| corrupt("evidence_files.status"))?,
            expense_id: r
                .expense_id
                .as_deref()
                .map(|e| id(e, ExpenseId::parse, "evidence_files.expense_id"))
                .transpose()?,
            uploaded_at: instant(r.uploaded_at, "evidence_files.uploaded_at")?,
            uploaded_by: r.uploaded_by,
            orphan_since: opt_instant(r.orphan_since, "evidence_files.orphan_since")?,
        })
    }
}
