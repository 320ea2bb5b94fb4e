//! Bookkeeping use cases: record wallet activity (a settled session's incoming transfer, a
//! processor-reported outgoing one), list and read it, and save the one expense of an outgoing
//! transfer (created or updated, every save a version, linking its evidence files). The
//! evidence files' own use cases are in `evidence_service`.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use crate::bookkeeping::ports::{BookkeepingStore, ExpenseWrite};
use crate::bookkeeping::{
    export, ActivityFilter, ActivityKey, ActivityRef, Actor, BookkeepingError, ChainMovement,
    CounterpartyInput, Direction, EvidenceFile, Expense, ExpenseFields, ExpenseVersion,
    ExportCursor, ExportKind, ExportPeriod, FileStore, OutgoingTransferInput, Recorded,
    SaveExpenseInput, WalletActivity, ACTIVITY_LIST_LIMIT, EXPORT_PAGE_SIZE,
};
use crate::checkout::machine::SessionStatus;
use crate::checkout::ports::Processor;
use crate::checkout::PaymentSession;
use crate::customers::{Contact, CustomerService, UpsertContactInput};
use crate::kernel::assets::fiat_decimals;
use crate::kernel::error::{Fault, FieldError, NotFound, PortResult};
use crate::kernel::events::{Consumed, Consumer, DomainEvent, EventConsumer, EventRecord};
use crate::kernel::ids::{CompanyId, ExpenseId, WalletActivityId};
use crate::kernel::keyed::{self, Answer, KeyedCall, Sealing};
use crate::kernel::service::Kernel;
use crate::links::PaymentLink;
use crate::tenancy::{Credential, Principal, Scope, TenancyService};

/// An unknown wallet activity, another company's, or a reference that names none.
pub const ACTIVITY_NOT_FOUND: NotFound = NotFound {
    kind: "Wallet activity",
};

/// Concurrent saves of one expense serialise on its version; each lost race reads and decides
/// again. Enough for far more writers of one activity than a team has.
const SAVE_ATTEMPTS: usize = 200;

/// An activity with what bookkeeping knows about it (the detail route).
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityDetail {
    pub activity: WalletActivity,
    pub expense: Option<ExpenseDetail>,
    /// Outgoing: the company's contacts that have the counterparty address among their known
    /// wallet addresses (a suggestion for the expense's counterparty).
    pub suggested_contacts: Vec<Contact>,
}

/// An expense, its counterparty, its evidence files and its whole history.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpenseDetail {
    pub expense: Expense,
    pub contact: Option<Contact>,
    pub versions: Vec<ExpenseVersion>,
    /// The linked files, in id order.
    pub evidence: Vec<EvidenceFile>,
}

/// What a save did: `created` is the API's 201, otherwise 200.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedExpense {
    pub created: bool,
    pub activity: WalletActivity,
    pub detail: ExpenseDetail,
}

/// One page of an export: its CSV records, and where the next page starts (`None`: done).
#[derive(Debug, Clone, PartialEq)]
pub struct ExportPage {
    pub csv: String,
    pub next: Option<ExportCursor>,
}

/// Wallet activity and expenses, over the bookkeeping store, the processor's reports and the
/// customers context (counterparties are contacts).
#[derive(Clone)]
pub struct BookkeepingService {
    pub(super) k: Kernel,
    tenancy: TenancyService,
    customers: CustomerService,
    pub(super) store: Arc<dyn BookkeepingStore + Send + Sync>,
    /// The evidence files' bytes.
    pub(super) files: Arc<dyn FileStore>,
    processor: Arc<dyn Processor>,
    sandbox: bool,
}

impl std::fmt::Debug for BookkeepingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BookkeepingService").finish_non_exhaustive()
    }
}

/// Who saved, as the versions record it.
pub(super) fn actor(p: &Principal) -> Actor {
    match &p.credential {
        Credential::ApiKey { partner_id } => format!("api_key:{partner_id}"),
        Credential::SignIn { user_id, .. } => format!("user:{user_id}"),
        Credential::OAuthGrant { grant_id, .. } => format!("grant:{grant_id}"),
    }
}

impl BookkeepingService {
    /// Wallet activity, expenses and their evidence over the bookkeeping store and the file
    /// store; `processor` names the chain transfers, `sandbox` marks test data.
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        customers: CustomerService,
        store: Arc<dyn BookkeepingStore + Send + Sync>,
        files: Arc<dyn FileStore>,
        processor: Arc<dyn Processor>,
        sandbox: bool,
    ) -> BookkeepingService {
        BookkeepingService {
            k,
            tenancy,
            customers,
            store,
            files,
            processor,
            sandbox,
        }
    }

    /// Records the incoming transfer that paid a completed session into the merchant's
    /// wallet, as the processor names it (chain, hash, index). Idempotent by key: reporting
    /// it again records nothing. A link settling to an address of its own (not the merchant's
    /// wallet) moves nothing of the merchant's.
    pub fn record_settlement(
        &self,
        link: &PaymentLink,
        session: &PaymentSession,
    ) -> PortResult<Option<Recorded>> {
        if session.status != SessionStatus::Complete || link.payload.settlement_address.is_some() {
            return Ok(None);
        }
        let Some(asset) = self.k.assets.get(&link.payload.asset) else {
            return Ok(None);
        };
        let Some(transfer) = self.processor.settlement_transfer(
            session.id.0,
            asset,
            session.expected_buy_amount,
            &session.destination_address,
        )?
        else {
            return Ok(None);
        };
        let key = ActivityKey::new(&transfer.chain, &transfer.tx_hash, transfer.index)
            .map_err(|e| Fault::caused("the processor's settlement transfer", e))?;
        let activity = WalletActivity {
            id: WalletActivityId(self.k.crypto.new_uuid()),
            company_id: session.company_id,
            key,
            direction: Direction::Incoming,
            asset: asset.asset_identifier.clone(),
            amount: session.expected_buy_amount,
            wallet_address: session.destination_address.clone(),
            counterparty_address: transfer.from_address,
            occurred_at: session.updated_at,
            payment_session_id: Some(session.id),
            recorded_at: self.k.now(),
        };
        self.store.record_activity(&activity).map(Some)
    }

    /// Records a final transfer into or out of a merchant's derived address, as the chain
    /// watcher reads it. Idempotent by key (`Existing` when read before: a restart, another
    /// instance, a block read again).
    pub fn record_chain_movement(&self, m: ChainMovement) -> PortResult<Recorded> {
        let activity = WalletActivity {
            id: WalletActivityId(self.k.crypto.new_uuid()),
            company_id: m.company_id,
            key: m.key,
            direction: m.direction,
            asset: m.asset,
            amount: m.amount,
            wallet_address: m.wallet_address,
            counterparty_address: m.counterparty_address,
            occurred_at: m.occurred_at,
            payment_session_id: m.payment_session_id,
            recorded_at: self.k.now(),
        };
        self.store.record_activity(&activity)
    }

    /// The sandbox's stand-in for the processor's wallet view: records an outgoing transfer
    /// of the caller's company as a real processor would report it (from the company's
    /// settlement wallet for that asset). Sandbox mode only (else `NotFound`); idempotent by
    /// key (`Existing` when reported before).
    pub fn report_outgoing(
        &self,
        p: &Principal,
        input: OutgoingTransferInput,
    ) -> Result<Recorded, BookkeepingError> {
        if !self.sandbox {
            return Err(NotFound {
                kind: "Sandbox route",
            }
            .into());
        }
        p.authorize(Scope::BookkeepingWrite)?;
        let t = input.check(&self.k.assets)?;
        let asset = self
            .k
            .assets
            .get(&t.asset)
            .ok_or_else(|| Fault::new("a checked asset left the catalogue"))?;
        let wallet = self
            .processor
            .merchant_wallet(p.company_id, asset)?
            .ok_or_else(|| {
                FieldError::new("asset", "the company has no settlement wallet for asset")
            })?;
        let now = self.tenancy.company_now(p.company_id)?;
        let activity = WalletActivity {
            id: WalletActivityId(self.k.crypto.new_uuid()),
            company_id: p.company_id,
            key: t.key,
            direction: Direction::Outgoing,
            asset: t.asset,
            amount: t.amount,
            wallet_address: wallet,
            counterparty_address: t.to_address,
            occurred_at: t.occurred_at.unwrap_or(now),
            payment_session_id: None,
            recorded_at: self.k.now(),
        };
        Ok(self.store.record_activity(&activity)?)
    }

    /// Up to 200 of the company's activities matching `filter`, newest first, each with
    /// whether it has an expense.
    pub fn list_activity(
        &self,
        p: &Principal,
        filter: ActivityFilter,
    ) -> Result<Vec<(WalletActivity, bool)>, BookkeepingError> {
        p.authorize(Scope::BookkeepingRead)?;
        let filter = filter.check()?;
        Ok(self
            .store
            .activities(p.company_id, &filter, ACTIVITY_LIST_LIMIT)?)
    }

    /// One page (500 rows) of the accountant's export of `kind` for `period`, as CSV records
    /// (the header is `export::header_record`), starting after `after`. Expenses name their
    /// contact; a payment names the contact that knows the payer's address, if one does.
    pub fn export_page(
        &self,
        p: &Principal,
        kind: ExportKind,
        period: &ExportPeriod,
        after: Option<&ExportCursor>,
    ) -> Result<ExportPage, BookkeepingError> {
        p.authorize(Scope::BookkeepingRead)?;
        let company = p.company_id;
        let direction = match kind {
            ExportKind::Expenses => Direction::Outgoing,
            ExportKind::Payments => Direction::Incoming,
        };
        let items = self
            .store
            .export_page(company, direction, period, after, EXPORT_PAGE_SIZE)?;
        let mut contacts: HashMap<String, Option<Contact>> = HashMap::new();
        let mut csv = String::new();
        for item in &items {
            let contact = match (&item.expense, kind) {
                (Some(e), ExportKind::Expenses) => {
                    let id = e.fields.contact_id;
                    match contacts.entry(id.to_string()) {
                        Entry::Occupied(o) => o.get().clone(),
                        Entry::Vacant(v) => {
                            v.insert(self.customers.contact_of(company, id)?).clone()
                        }
                    }
                }
                (_, ExportKind::Payments) => {
                    let address = &item.activity.counterparty_address;
                    match contacts.entry(format!("wallet:{address}")) {
                        Entry::Occupied(o) => o.get().clone(),
                        Entry::Vacant(v) => v
                            .insert(
                                self.customers
                                    .contacts_with_wallet(company, address)?
                                    .into_iter()
                                    .next(),
                            )
                            .clone(),
                    }
                }
                (None, ExportKind::Expenses) => None,
            };
            export::write_item(&mut csv, kind, item, contact.as_ref(), |c| {
                fiat_decimals(c).is_some()
            });
        }
        let next = (items.len() == EXPORT_PAGE_SIZE).then(|| {
            let last = &items[items.len() - 1].activity;
            ExportCursor {
                occurred_at: last.occurred_at,
                id: last.id,
            }
        });
        Ok(ExportPage { csv, next })
    }

    /// One activity of the company (by id or key), its expense with history, and for an
    /// outgoing one the contacts whose known wallets include the counterparty.
    pub fn activity_detail(
        &self,
        p: &Principal,
        by: &ActivityRef,
    ) -> Result<ActivityDetail, BookkeepingError> {
        p.authorize(Scope::BookkeepingRead)?;
        let activity = self.activity_of(p.company_id, by)?;
        let expense = self.expense_detail(p.company_id, activity.id)?;
        let suggested_contacts = match activity.direction {
            Direction::Outgoing => self
                .customers
                .contacts_with_wallet(p.company_id, &activity.counterparty_address)?,
            Direction::Incoming => Vec::new(),
        };
        Ok(ActivityDetail {
            activity,
            expense,
            suggested_contacts,
        })
    }

    fn activity_of(
        &self,
        company: CompanyId,
        by: &ActivityRef,
    ) -> Result<WalletActivity, BookkeepingError> {
        let found = match by {
            ActivityRef::Id(id) => self.store.activity(company, *id)?,
            ActivityRef::Key(key) => self.store.activity_by_key(company, key)?,
        };
        Ok(found.ok_or(ACTIVITY_NOT_FOUND)?)
    }

    fn expense_detail(
        &self,
        company: CompanyId,
        activity: WalletActivityId,
    ) -> PortResult<Option<ExpenseDetail>> {
        let Some(expense) = self.store.expense_of_activity(company, activity)? else {
            return Ok(None);
        };
        let contact = self
            .customers
            .contact_of(company, expense.fields.contact_id)?;
        let versions = self.store.expense_versions(company, expense.id)?;
        let evidence = self.store.evidence_of_expense(company, expense.id)?;
        Ok(Some(ExpenseDetail {
            expense,
            contact,
            versions,
            evidence,
        }))
    }

    /// `createBookkeepingExpenseFromActivity`: creates the expense of one of the company's
    /// outgoing activities, or updates the one it has (never a second: the store's unique
    /// key, and each lost race decides again on what won). Every save is a version (who,
    /// when, what changed; a save that changes nothing is recorded with no changes). The
    /// counterparty is a contact of the company, or a vendor made inline; the activity's
    /// counterparty address becomes one of that contact's known wallets. `evidenceFileIds` is
    /// the whole list of linked files: each a stored file of the company (else 404 naming
    /// it) not linked to another expense (else 409); files left out are unlinked (orphans,
    /// deleted a day later unless linked again).
    pub fn save_expense(
        &self,
        p: &Principal,
        input: SaveExpenseInput,
    ) -> Result<SavedExpense, BookkeepingError> {
        let answer = self.save_expense_keyed(p, input, None)?;
        answer
            .fresh()
            .ok_or_else(|| Fault::new("an unkeyed call replayed").into())
    }

    /// `save_expense` with an `Idempotency-Key` (`kernel::keyed`): the save (its version
    /// included) and its answer commit together; a byte-identical retry gets that answer and
    /// records no other version.
    pub fn save_expense_keyed(
        &self,
        p: &Principal,
        input: SaveExpenseInput,
        call: Option<KeyedCall<'_, SavedExpense>>,
    ) -> Result<Answer<SavedExpense>, BookkeepingError> {
        p.authorize(Scope::BookkeepingWrite)?;
        self.k.keyed(
            &p.idempotency_credential(),
            "bookkeeping/expenses/from-activity",
            call,
            |sealing| self.store_expense(p, input, sealing),
        )
    }

    fn store_expense(
        &self,
        p: &Principal,
        input: SaveExpenseInput,
        sealing: Option<&Sealing<'_, SavedExpense>>,
    ) -> Result<SavedExpense, BookkeepingError> {
        let save = input.check()?;
        let company = p.company_id;
        let activity = self.activity_of(company, &save.activity)?;
        if activity.direction != Direction::Outgoing {
            return Err(ACTIVITY_NOT_FOUND.into());
        }
        let now = self.tenancy.company_now(company)?;
        let contact = match save.counterparty {
            CounterpartyInput::Existing(id) => self
                .customers
                .contact_by_ref(company, &id)?
                .ok_or(NotFound { kind: "Contact" })?,
            CounterpartyInput::NewVendor {
                email,
                name,
                client_id,
            } => {
                let upsert = UpsertContactInput {
                    email,
                    name,
                    client_id,
                    metadata: None,
                }
                .check()
                .map_err(|e| {
                    FieldError::new(format!("counterparty.newVendor.{}", e.field), e.message)
                })?;
                self.customers.upsert_vendor_for(p, upsert, now)?
            }
        };
        let fields = ExpenseFields {
            contact_id: contact.id,
            category: save.category,
            description: save.description,
            notes: save.notes,
            fiat_currency: save.fiat_currency,
            fiat_amount: save.fiat_amount,
            tax_amount: save.tax_amount,
            evidence_file_ids: save.evidence_file_ids,
        };
        let saved_by = actor(p);
        let mut created = None;
        for _ in 0..SAVE_ATTEMPTS {
            let current = self.store.expense_of_activity(company, activity.id)?;
            let files =
                self.check_evidence(company, &fields.evidence_file_ids, current.as_ref())?;
            let (expense, version) = match &current {
                None => {
                    let expense = Expense {
                        id: ExpenseId(self.k.crypto.new_uuid()),
                        company_id: company,
                        activity_id: activity.id,
                        fields: fields.clone(),
                        version: 1,
                        created_at: now,
                        updated_at: now,
                    };
                    let version = ExpenseVersion {
                        expense_id: expense.id,
                        version: 1,
                        saved_at: now,
                        saved_by: saved_by.clone(),
                        changes: fields.changes_from(None),
                    };
                    (expense, version)
                }
                Some(current) => {
                    let expense = Expense {
                        fields: fields.clone(),
                        version: current.version + 1,
                        updated_at: now,
                        ..current.clone()
                    };
                    let version = ExpenseVersion {
                        expense_id: expense.id,
                        version: expense.version,
                        saved_at: now,
                        saved_by: saved_by.clone(),
                        changes: fields.changes_from(Some(&current.fields)),
                    };
                    (expense, version)
                }
            };
            let completion = match sealing {
                Some(s) => {
                    // The answer as it will read back once this write commits (the versions
                    // so far are those of the version this write compares and sets).
                    let mut versions = match &current {
                        Some(c) => self.store.expense_versions(company, c.id)?,
                        None => Vec::new(),
                    };
                    versions.push(version.clone());
                    let saved = saved_as(&activity, &contact, &expense, versions, files);
                    Some(s.completion(&SavedExpense {
                        created: current.is_none(),
                        ..saved
                    })?)
                }
                None => None,
            };
            let written = match &current {
                None => self
                    .store
                    .insert_expense(&expense, &version, completion.as_ref())?,
                Some(current) => self.store.update_expense(
                    &expense,
                    current.version,
                    &version,
                    self.k.now(),
                    completion.as_ref(),
                )?,
            };
            match written {
                ExpenseWrite::Applied => {
                    created = Some(current.is_none());
                    break;
                }
                ExpenseWrite::Unclaimed => return Err(keyed::claim_lost().into()),
                ExpenseWrite::Lost => {}
            }
        }
        let created = created.ok_or_else(|| Fault::new("expense kept changing under us"))?;
        self.customers
            .remember_wallet(company, contact.id, &activity.counterparty_address, now)?;
        let detail = self
            .expense_detail(company, activity.id)?
            .ok_or_else(|| Fault::new("a saved expense is gone"))?;
        Ok(SavedExpense {
            created,
            activity,
            detail,
        })
    }
}

/// A save's answer built before its write: the expense with its files in id order (as the
/// store reads them back), linked to it.
fn saved_as(
    activity: &WalletActivity,
    contact: &Contact,
    expense: &Expense,
    versions: Vec<ExpenseVersion>,
    files: Vec<EvidenceFile>,
) -> SavedExpense {
    let mut evidence: Vec<EvidenceFile> = files
        .into_iter()
        .map(|f| EvidenceFile {
            expense_id: Some(expense.id),
            orphan_since: None,
            ..f
        })
        .collect();
    evidence.sort_by_key(|f| f.id.to_string());
    let mut expense = expense.clone();
    expense.fields.evidence_file_ids = evidence.iter().map(|f| f.id).collect();
    SavedExpense {
        created: true,
        activity: activity.clone(),
        detail: ExpenseDetail {
            expense,
            contact: Some(contact.clone()),
            versions,
            evidence,
        },
    }
}

/// A session that completes records its incoming transfer (`DomainEvent::SessionCompleted`).
/// The recording is idempotent by the transfer's key and the consumption is recorded after it,
/// so telling the event again records nothing twice.
impl EventConsumer for BookkeepingService {
    fn consume(&self, e: &EventRecord) -> PortResult<()> {
        let DomainEvent::SessionCompleted { session, .. } = &e.event else {
            return Ok(());
        };
        let done = Consumed {
            event: e.id,
            consumer: Consumer::IncomingActivity,
        };
        if self.k.events.consumed(&done)? {
            return Ok(());
        }
        if let Some((link, session)) = self.store.completed_session(*session)? {
            self.record_settlement(&link, &session)?;
        }
        self.k.events.record_consumed(&done, self.k.now())
    }
}
