//! Evidence file use cases: upload (sniffed, sanitised, written crash-safe: the row `Pending`
//! first, then the bytes, then `Stored`), metadata and content reads of the company's own
//! files, the check a save runs on the files it links, and the janitor's orphan cleanup.

use crate::bookkeeping::service::actor;
use crate::bookkeeping::{
    sanitize_filename, sha256_hex, BookkeepingError, BookkeepingService, EvidenceFile,
    EvidenceRefusal, EvidenceStatus, EvidenceType, Expense, MAX_EVIDENCE_BYTES, ORPHAN_AFTER,
    ORPHAN_BATCH,
};
use crate::kernel::error::{Fault, NotFound, PortResult};
use crate::kernel::ids::{CompanyId, EvidenceFileId};
use crate::kernel::timestamp::Timestamp;
use crate::tenancy::{Principal, Scope};

/// An unknown evidence file, another company's, or an id that names none.
pub const FILE_NOT_FOUND: NotFound = NotFound {
    kind: "Evidence file",
};

impl BookkeepingService {
    /// Uploads a private evidence file of the caller's company: at most `MAX_EVIDENCE_BYTES`
    /// (else `TooLarge`), a PDF, PNG, JPEG or WebP by its magic number (else
    /// `UnsupportedType`; the name and the declared type are not trusted), named by
    /// `sanitize_filename`. Unlinked until an expense save lists it: an orphan a day later.
    ///
    /// Write order: the row (`Pending`) commits before the bytes are written, and the row
    /// becomes `Stored` after: a crash leaves a pending row (with or without bytes), which
    /// the orphan cleanup removes, and never bytes that no row names.
    pub fn upload_evidence(
        &self,
        p: &Principal,
        filename: &str,
        bytes: &[u8],
    ) -> Result<EvidenceFile, BookkeepingError> {
        p.authorize(Scope::BookkeepingWrite)?;
        if bytes.len() > MAX_EVIDENCE_BYTES {
            return Err(EvidenceRefusal::TooLarge {
                max_bytes: MAX_EVIDENCE_BYTES,
            }
            .into());
        }
        let kind = EvidenceType::sniff(bytes).ok_or(EvidenceRefusal::UnsupportedType)?;
        let now = self.k.now();
        let mut file = EvidenceFile {
            id: EvidenceFileId(self.k.crypto.new_uuid()),
            company_id: p.company_id,
            filename: sanitize_filename(filename, kind),
            content_type: kind,
            size: bytes.len() as u64,
            sha256: sha256_hex(bytes),
            status: EvidenceStatus::Pending,
            expense_id: None,
            uploaded_at: now,
            uploaded_by: actor(p),
            orphan_since: Some(now),
        };
        self.store.insert_evidence(&file)?;
        self.files.put(&file.storage_key(), bytes)?;
        if !self.store.mark_evidence_stored(file.company_id, file.id)? {
            return Err(Fault::new("an uploaded evidence file left the pending state").into());
        }
        file.status = EvidenceStatus::Stored;
        Ok(file)
    }

    /// The company's stored file with this id (`NotFound` for an unknown id, another
    /// company's file, or an upload that did not finish).
    pub fn evidence_file(
        &self,
        p: &Principal,
        id: EvidenceFileId,
    ) -> Result<EvidenceFile, BookkeepingError> {
        p.authorize(Scope::BookkeepingRead)?;
        Ok(self
            .store
            .evidence_file(p.company_id, id)?
            .filter(|f| f.status == EvidenceStatus::Stored)
            .ok_or(FILE_NOT_FOUND)?)
    }

    /// A stored file of the company and its bytes (checked against the recorded SHA-256: a
    /// store that lost or changed them is a fault, not a download).
    pub fn evidence_content(
        &self,
        p: &Principal,
        id: EvidenceFileId,
    ) -> Result<(EvidenceFile, Vec<u8>), BookkeepingError> {
        let file = self.evidence_file(p, id)?;
        let bytes = self
            .files
            .get(&file.storage_key())?
            .ok_or_else(|| Fault::new("a stored evidence file has no bytes"))?;
        if bytes.len() as u64 != file.size || sha256_hex(&bytes) != file.sha256 {
            return Err(Fault::new("an evidence file's bytes do not match their digest").into());
        }
        Ok((file, bytes))
    }

    /// What a save may link: each file a stored one of the company (else `NotFound` naming
    /// `evidenceFileIds[i]`), linked to no expense or to `current` (else `LinkedElsewhere`).
    /// The store checks again in the write's transaction; this names what is wrong. The
    /// files as read.
    pub(super) fn check_evidence(
        &self,
        company: CompanyId,
        files: &[EvidenceFileId],
        current: Option<&Expense>,
    ) -> Result<Vec<EvidenceFile>, BookkeepingError> {
        let mut found = Vec::with_capacity(files.len());
        for (i, id) in files.iter().enumerate() {
            let field = format!("evidenceFileIds[{i}]");
            let file = self
                .store
                .evidence_file(company, *id)?
                .filter(|f| f.status == EvidenceStatus::Stored)
                .ok_or_else(|| EvidenceRefusal::NotFound {
                    field: field.clone(),
                    file_id: id.to_string(),
                })?;
            if let Some(linked) = file.expense_id {
                if current.map(|e| e.id) != Some(linked) {
                    return Err(EvidenceRefusal::LinkedElsewhere {
                        field,
                        file_id: id.to_string(),
                    }
                    .into());
                }
            }
            found.push(file);
        }
        Ok(found)
    }

    /// The janitor's pass (real time `now`): deletes up to `ORPHAN_BATCH` files that no
    /// expense has linked for `ORPHAN_AFTER` (never linked, unlinked by a re-save, or an
    /// upload that never finished). Each is claimed first (a save that links it meanwhile
    /// wins), then its bytes go, then its row; a pass stopped half-way is finished by the
    /// next (deleting missing bytes succeeds). Returns how many files went.
    pub fn clean_orphan_evidence(&self, now: Timestamp) -> PortResult<u64> {
        let before = now.minus(ORPHAN_AFTER);
        let mut gone = 0;
        for file in self.store.orphan_evidence(before, ORPHAN_BATCH)? {
            if !self.store.claim_orphan_evidence(file.id, before)? {
                continue;
            }
            self.files.delete(&file.storage_key())?;
            self.store.delete_evidence(file.id)?;
            gone += 1;
        }
        Ok(gone)
    }
}
