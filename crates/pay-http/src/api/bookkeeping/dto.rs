//! Request and response shapes of the bookkeeping routes (wallet activity, expenses). Names
//! carry `Bookkeeping`/`WalletActivity` so no utoipa schema shares a name with another.

use pay_domain::bookkeeping::{
    ActivityDetail, CounterpartyInput, EvidenceFile, ExpenseDetail, ExpenseVersion,
    OutgoingTransferInput, SaveExpenseInput, WalletActivity,
};
use pay_domain::customers::Contact;
use pay_domain::kernel::ids::{ContactId, ContactUid};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::FieldError;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `POST /api/partner/v1/pay/sandbox/wallet-activity/outgoing`: an outgoing transfer
/// from the company's settlement wallet, as a processor's wallet view reports it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxOutgoingTransferRequest {
    /// CAIP-2 chain id.
    #[schema(
        example = "eip155:8453",
        max_length = 128,
        pattern = "^[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$"
    )]
    pub chain: String,
    /// Letters and digits (an EVM `0x` hash is compared without case).
    #[schema(
        example = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
        max_length = 128,
        pattern = "^[A-Za-z0-9]+$"
    )]
    pub tx_hash: String,
    /// The log (EVM) or output (UTXO) index within the transaction (0 to 2^32 - 1).
    #[schema(format = Int64, minimum = 0, maximum = 4294967295_f64)]
    pub log_index: u32,
    /// Asset identifier of the catalogue, on `chain`.
    #[schema(example = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")]
    pub asset: String,
    /// Exact decimal, positive, at most the asset's decimals.
    #[schema(example = "125.5")]
    pub amount: String,
    /// Who was paid: letters and digits.
    #[schema(max_length = 128, pattern = "^[A-Za-z0-9]+$")]
    pub to_address: String,
    /// RFC 3339; default now (company clock).
    #[serde(default)]
    #[schema(format = DateTime)]
    pub occurred_at: Option<String>,
}

pub(crate) fn parse_instant(field: &str, s: &str) -> Result<Timestamp, FieldError> {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
        .map(Timestamp::from_datetime)
        .map_err(|_| FieldError::new(field, format!("{field} must be an RFC 3339 timestamp")))
}

impl SandboxOutgoingTransferRequest {
    pub fn try_into_domain(self) -> Result<OutgoingTransferInput, FieldError> {
        Ok(OutgoingTransferInput {
            chain: self.chain,
            tx_hash: self.tx_hash,
            log_index: self.log_index,
            asset: self.asset,
            amount: self.amount,
            to_address: self.to_address,
            occurred_at: self
                .occurred_at
                .as_deref()
                .map(|s| parse_instant("occurredAt", s))
                .transpose()?,
        })
    }
}

/// A new vendor made with the expense (upserted by e-mail: a customer with this e-mail
/// becomes customer and vendor).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BookkeepingNewVendor {
    pub email: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub client_id: Option<String>,
}

/// The expense's counterparty: exactly one of `contactId` (a contact's id or uid) and
/// `newVendor`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BookkeepingCounterparty {
    #[serde(default)]
    pub contact_id: Option<String>,
    #[serde(default)]
    pub new_vendor: Option<BookkeepingNewVendor>,
}

/// Body of `POST /api/partner/v1/pay/bookkeeping/expenses/from-activity`
/// (`createBookkeepingExpenseFromActivity`): exactly one of `walletActivityEventId` and
/// `walletActivityEventKey`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateBookkeepingExpenseRequest {
    #[serde(default)]
    #[schema(
        pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    )]
    pub wallet_activity_event_id: Option<String>,
    /// `<chain>:<txHash>:<index>`.
    #[serde(default)]
    pub wallet_activity_event_key: Option<String>,
    pub counterparty: BookkeepingCounterparty,
    #[schema(min_length = 1, max_length = 100)]
    pub category: String,
    #[schema(min_length = 1, max_length = 500)]
    pub description: String,
    #[serde(default)]
    #[schema(max_length = 5000)]
    pub notes: Option<String>,
    /// ISO 4217 code of `fiatAmount` and `taxAmount`.
    #[serde(default)]
    pub fiat_currency: Option<String>,
    #[serde(default)]
    pub fiat_amount: Option<String>,
    #[serde(default)]
    pub tax_amount: Option<String>,
    /// The company's uploaded evidence files the expense links: the whole list (a file left
    /// out of a re-save is unlinked, and deleted a day later unless linked again). An unknown
    /// id or another company's file is 404, a file another expense links 409 (the entry is
    /// named in `field`, e.g. `evidenceFileIds[1]`). An id given twice is linked once.
    #[serde(default)]
    #[schema(value_type = Vec<EvidenceFileRef>, max_items = 20)]
    pub evidence_file_ids: Vec<String>,
}

impl CreateBookkeepingExpenseRequest {
    pub fn try_into_domain(self) -> Result<SaveExpenseInput, FieldError> {
        let counterparty = match (self.counterparty.contact_id, self.counterparty.new_vendor) {
            (Some(id), None) => CounterpartyInput::Existing(id),
            (None, Some(v)) => CounterpartyInput::NewVendor {
                email: v.email,
                name: v.name,
                client_id: v.client_id,
            },
            _ => {
                return Err(FieldError::new(
                    "counterparty",
                    "give exactly one of counterparty.contactId and counterparty.newVendor",
                ))
            }
        };
        Ok(SaveExpenseInput {
            activity_id: self.wallet_activity_event_id,
            activity_key: self.wallet_activity_event_key,
            counterparty: Some(counterparty),
            category: self.category,
            description: self.description,
            notes: self.notes,
            fiat_currency: self.fiat_currency,
            fiat_amount: self.fiat_amount,
            tax_amount: self.tax_amount,
            evidence_file_ids: self.evidence_file_ids,
        })
    }
}

/// One movement of a settlement wallet.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WalletActivityDto {
    pub id: String,
    /// `<chain>:<txHash>:<index>`, stable and unique per company.
    pub key: String,
    pub chain: String,
    pub tx_hash: String,
    /// The log (EVM) or output (UTXO) index; `null` for an EVM transaction's own native coin
    /// value (the key then ends in `native`).
    pub log_index: Option<u32>,
    #[schema(example = "outgoing")]
    pub direction: String,
    pub asset: String,
    /// Exact decimal.
    pub amount: String,
    pub wallet_address: String,
    pub counterparty_address: String,
    #[schema(value_type = String)]
    pub occurred_at: Timestamp,
    /// Incoming from checkout: the settled payment session.
    pub payment_session_id: Option<String>,
    /// Outgoing: whether it has its expense.
    pub has_expense: bool,
    #[schema(value_type = String)]
    pub recorded_at: Timestamp,
}

impl WalletActivityDto {
    pub fn new(a: WalletActivity, has_expense: bool) -> Self {
        WalletActivityDto {
            id: a.id.to_string(),
            key: a.key.to_string(),
            chain: a.key.chain().to_owned(),
            tx_hash: a.key.tx_hash().to_owned(),
            log_index: a.key.index(),
            direction: a.direction.as_str().to_owned(),
            asset: a.asset,
            amount: a.amount.to_string(),
            wallet_address: a.wallet_address,
            counterparty_address: a.counterparty_address,
            occurred_at: a.occurred_at,
            payment_session_id: a.payment_session_id.map(|s| s.to_string()),
            has_expense,
            recorded_at: a.recorded_at,
        }
    }
}

data_list!(
    WalletActivityList,
    WalletActivityDto,
    "Up to 200 activities, newest `occurredAt` first: `{\"data\": [...]}`."
);

/// A contact as bookkeeping shows it (counterparty, suggestion).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BookkeepingContactDto {
    #[schema(value_type = String)]
    pub id: ContactId,
    #[schema(value_type = String)]
    pub uid: ContactUid,
    /// customer, vendor or both.
    pub role: String,
    pub email: String,
    pub name: Option<String>,
    pub client_id: Option<String>,
}

impl From<Contact> for BookkeepingContactDto {
    fn from(c: Contact) -> Self {
        BookkeepingContactDto {
            id: c.id,
            uid: c.uid,
            role: c.kind.as_str().to_owned(),
            email: c.email,
            name: c.name,
            client_id: c.client_id,
        }
    }
}

/// One field a save changed (`null`: absent).
#[derive(Debug, Serialize, ToSchema)]
pub struct BookkeepingFieldChange {
    pub field: String,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// One save of an expense.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BookkeepingExpenseVersionDto {
    pub version: i64,
    #[schema(value_type = String)]
    pub saved_at: Timestamp,
    /// `api_key:<partnerId>`, `user:<userId>` or `grant:<grantId>`.
    pub saved_by: String,
    pub changes: Vec<BookkeepingFieldChange>,
}

impl From<ExpenseVersion> for BookkeepingExpenseVersionDto {
    fn from(v: ExpenseVersion) -> Self {
        BookkeepingExpenseVersionDto {
            version: v.version,
            saved_at: v.saved_at,
            saved_by: v.saved_by,
            changes: v
                .changes
                .into_iter()
                .map(|c| BookkeepingFieldChange {
                    field: c.field.to_owned(),
                    from: c.from,
                    to: c.to,
                })
                .collect(),
        }
    }
}

/// The expense of an outgoing activity, with its counterparty and every version.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BookkeepingExpenseDto {
    pub id: String,
    pub wallet_activity_event_id: String,
    pub counterparty: Option<BookkeepingContactDto>,
    pub category: String,
    pub description: String,
    pub notes: Option<String>,
    pub fiat_currency: Option<String>,
    pub fiat_amount: Option<String>,
    pub tax_amount: Option<String>,
    /// The linked files' ids, in upload order.
    pub evidence_file_ids: Vec<String>,
    /// The linked files with their metadata and download path, in upload order.
    pub evidence_files: Vec<EvidenceFileDto>,
    pub version: i64,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = String)]
    pub updated_at: Timestamp,
    /// Oldest first.
    pub versions: Vec<BookkeepingExpenseVersionDto>,
}

impl From<ExpenseDetail> for BookkeepingExpenseDto {
    fn from(d: ExpenseDetail) -> Self {
        let e = d.expense;
        BookkeepingExpenseDto {
            id: e.id.to_string(),
            wallet_activity_event_id: e.activity_id.to_string(),
            counterparty: d.contact.map(Into::into),
            category: e.fields.category,
            description: e.fields.description,
            notes: e.fields.notes,
            fiat_currency: e.fields.fiat_currency,
            fiat_amount: e.fields.fiat_amount.map(|a| a.as_str().to_owned()),
            tax_amount: e.fields.tax_amount.map(|a| a.as_str().to_owned()),
            evidence_file_ids: d.evidence.iter().map(|f| f.id.to_string()).collect(),
            evidence_files: d.evidence.into_iter().map(Into::into).collect(),
            version: e.version,
            created_at: e.created_at,
            updated_at: e.updated_at,
            versions: d.versions.into_iter().map(Into::into).collect(),
        }
    }
}

/// An activity with its expense and, outgoing, the contacts whose known wallets include the
/// counterparty address.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WalletActivityDetailDto {
    #[serde(flatten)]
    pub activity: WalletActivityDto,
    pub expense: Option<BookkeepingExpenseDto>,
    pub suggested_counterparties: Vec<BookkeepingContactDto>,
}

impl From<ActivityDetail> for WalletActivityDetailDto {
    fn from(d: ActivityDetail) -> Self {
        WalletActivityDetailDto {
            activity: WalletActivityDto::new(d.activity, d.expense.is_some()),
            expense: d.expense.map(Into::into),
            suggested_counterparties: d.suggested_contacts.into_iter().map(Into::into).collect(),
        }
    }
}

/// A contact found by the search, with its roles and known wallet addresses.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContactSearchHit {
    #[serde(flatten)]
    pub contact: BookkeepingContactDto,
    pub wallet_addresses: Vec<String>,
}

data_list!(
    ContactSearchList,
    ContactSearchHit,
    "Up to 50 contacts, newest first: `{\"data\": [...]}`."
);

/// An evidence file's id, as `evidenceFileIds` takes it.
#[derive(Debug, ToSchema)]
#[schema(
    value_type = String,
    pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)]
pub struct EvidenceFileRef(pub String);

/// A private evidence file (invoice, receipt) of the company.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceFileDto {
    pub id: String,
    /// Sanitised: no path, no control characters, an extension of `contentType`.
    pub filename: String,
    /// Sniffed from the bytes.
    #[schema(value_type = EvidenceContentType)]
    pub content_type: String,
    /// Bytes.
    #[schema(format = Int64, minimum = 0)]
    pub size: u64,
    /// Lower-case hex SHA-256 of the bytes.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub sha256: String,
    /// The expense that links it (`null`: none; an unlinked file is deleted a day after it
    /// was uploaded or unlinked).
    pub expense_id: Option<String>,
    #[schema(value_type = String)]
    pub uploaded_at: Timestamp,
    /// `api_key:<partnerId>`, `user:<userId>` or `grant:<grantId>`.
    pub uploaded_by: String,
    /// The authenticated download route of its bytes (same credentials).
    pub download_path: String,
}

/// The types an evidence file may have.
#[derive(Debug, Clone, Copy, ToSchema)]
pub enum EvidenceContentType {
    #[schema(rename = "application/pdf")]
    Pdf,
    #[schema(rename = "image/png")]
    Png,
    #[schema(rename = "image/jpeg")]
    Jpeg,
    #[schema(rename = "image/webp")]
    Webp,
}

impl From<EvidenceFile> for EvidenceFileDto {
    fn from(f: EvidenceFile) -> Self {
        EvidenceFileDto {
            download_path: format!("/api/partner/v1/pay/bookkeeping/files/{}/content", f.id),
            id: f.id.to_string(),
            filename: f.filename,
            content_type: f.content_type.mime().to_owned(),
            size: f.size,
            sha256: f.sha256,
            expense_id: f.expense_id.map(|e| e.to_string()),
            uploaded_at: f.uploaded_at,
            uploaded_by: f.uploaded_by,
        }
    }
}
