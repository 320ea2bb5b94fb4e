//! Private evidence files (invoices, receipts) of expenses: the closed set of types, sniffed
//! from the bytes' magic numbers (never from the name or a `Content-Type`), the size limit, the
//! filename sanitiser, and the file-store port that keeps the bytes under an opaque key.

use sha2::{Digest, Sha256};

use crate::bookkeeping::Actor;
use crate::kernel::error::PortResult;
use crate::kernel::ids::{CompanyId, EvidenceFileId, ExpenseId};
use crate::kernel::timestamp::Timestamp;

/// Largest evidence file: 10 MiB (a scanned multi-page invoice fits; the edge reads no more).
pub const MAX_EVIDENCE_BYTES: usize = 10 * 1024 * 1024;
/// Most files one expense links.
pub const MAX_EVIDENCE_PER_EXPENSE: usize = 20;
/// Longest stored filename, in characters (the extension is kept).
pub const MAX_FILENAME_CHARS: usize = 150;
/// A file no expense links is deleted once it has been unlinked (or never linked) this long
/// (real time).
pub const ORPHAN_AFTER: time::Duration = time::Duration::days(1);
/// Most orphans one janitor pass deletes.
pub const ORPHAN_BATCH: usize = 200;

/// What an evidence file is, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EvidenceType {
    Pdf,
    Png,
    Jpeg,
    Webp,
}

impl EvidenceType {
    /// The type whose magic number `bytes` start with (`%PDF-`; the PNG signature; JPEG's
    /// SOI + marker `FF D8 FF`; `RIFF` size `WEBP`), `None` for anything else.
    pub fn sniff(bytes: &[u8]) -> Option<EvidenceType> {
        const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
        if bytes.starts_with(b"%PDF-") {
            Some(EvidenceType::Pdf)
        } else if bytes.starts_with(PNG) {
            Some(EvidenceType::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(EvidenceType::Jpeg)
        } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
            Some(EvidenceType::Webp)
        } else {
            None
        }
    }

    /// The media type the file is served as.
    pub fn mime(self) -> &'static str {
        match self {
            EvidenceType::Pdf => "application/pdf",
            EvidenceType::Png => "image/png",
            EvidenceType::Jpeg => "image/jpeg",
            EvidenceType::Webp => "image/webp",
        }
    }

    pub fn parse_mime(s: &str) -> Option<EvidenceType> {
        [
            EvidenceType::Pdf,
            EvidenceType::Png,
            EvidenceType::Jpeg,
            EvidenceType::Webp,
        ]
        .into_iter()
        .find(|t| t.mime() == s)
    }

    /// The extensions a name of this type may end with; the first is added when it has none.
    fn extensions(self) -> &'static [&'static str] {
        match self {
            EvidenceType::Pdf => &["pdf"],
            EvidenceType::Png => &["png"],
            EvidenceType::Jpeg => &["jpg", "jpeg"],
            EvidenceType::Webp => &["webp"],
        }
    }
}

/// Characters that reorder or hide text (bidi overrides, zero-width): a name shown to an
/// accountant must read as it is.
fn invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// The name a file is kept and downloaded under: the last path segment (`/` and `\` both
/// separate, so `../../etc/passwd` is `passwd`), without control or invisible characters and
/// the characters Windows refuses, without leading dots and spaces (no hidden files, no `..`),
/// at most `MAX_FILENAME_CHARS`, ending with an extension of `kind` (added when the name has
/// another: a PNG named `x.pdf` is kept as `x.pdf.png`). Empty becomes `evidence.<ext>`.
pub fn sanitize_filename(given: &str, kind: EvidenceType) -> String {
    let last = given.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = last
        .chars()
        .filter(|c| !c.is_control() && !invisible(*c) && !"<>:\"|?*".contains(*c))
        .collect();
    let cleaned = cleaned
        .trim_start_matches(['.', ' '])
        .trim_end_matches(['.', ' ']);
    let ext = kind.extensions()[0];
    let has_ext = cleaned.rsplit_once('.').is_some_and(|(stem, e)| {
        !stem.is_empty() && kind.extensions().iter().any(|x| x.eq_ignore_ascii_case(e))
    });
    let (stem, suffix) = if cleaned.is_empty() {
        ("evidence".to_owned(), format!(".{ext}"))
    } else if has_ext {
        let (stem, e) = cleaned.rsplit_once('.').unwrap_or((cleaned, ""));
        (stem.to_owned(), format!(".{e}"))
    } else {
        (cleaned.to_owned(), format!(".{ext}"))
    };
    let room = MAX_FILENAME_CHARS - suffix.chars().count();
    let stem: String = stem.chars().take(room).collect();
    let stem = stem.trim_end_matches(['.', ' ']);
    if stem.is_empty() {
        format!("evidence{suffix}")
    } else {
        format!("{stem}{suffix}")
    }
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::kernel::hex::encode(&Sha256::digest(bytes))
}

/// Where a file's row is in its life: the row is written `Pending` before the bytes, `Stored`
/// once they are, `Deleting` when the janitor has claimed an orphan (bytes go, then the row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceStatus {
    Pending,
    Stored,
    Deleting,
}

impl EvidenceStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceStatus::Pending => "pending",
            EvidenceStatus::Stored => "stored",
            EvidenceStatus::Deleting => "deleting",
        }
    }

    pub fn parse(s: &str) -> Option<EvidenceStatus> {
        match s {
            "pending" => Some(EvidenceStatus::Pending),
            "stored" => Some(EvidenceStatus::Stored),
            "deleting" => Some(EvidenceStatus::Deleting),
            _ => None,
        }
    }
}

/// A private evidence file of a company: its metadata (the bytes are in the file store under
/// `storage_key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceFile {
    pub id: EvidenceFileId,
    pub company_id: CompanyId,
    /// Sanitised (`sanitize_filename`).
    pub filename: String,
    /// Sniffed from the bytes.
    pub content_type: EvidenceType,
    pub size: u64,
    /// Lower-case hex SHA-256 of the bytes.
    pub sha256: String,
    pub status: EvidenceStatus,
    /// The expense that links it, if one does.
    pub expense_id: Option<ExpenseId>,
    /// Real time.
    pub uploaded_at: Timestamp,
    pub uploaded_by: Actor,
    /// Since when no expense links it (real time; `None` while linked): the janitor deletes it
    /// `ORPHAN_AFTER` later.
    pub orphan_since: Option<Timestamp>,
}

impl EvidenceFile {
    /// The file store key of its bytes (`evidence/<company>/<file id>`).
    pub fn storage_key(&self) -> String {
        format!("evidence/{}/{}", self.company_id, self.id)
    }
}

/// Whether `key` may name an object: 1 to 512 characters of `[A-Za-z0-9._-]` in `/`-separated
/// segments, none empty or starting with `.` (so no `.`, `..`, or hidden name an adapter may
/// use for itself), not starting with `/`. Every file store MUST refuse any other key (a key
/// never becomes a path outside the store's root).
pub fn file_key_is_safe(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 512
        && key.split('/').all(|seg| {
            !seg.is_empty()
                && !seg.starts_with('.')
                && seg
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        })
}

/// The bytes of private files, by an opaque key. Blocking (called on the blocking pool).
pub trait FileStore: Send + Sync {
    /// Stores `bytes` under `key`, replacing what was there. MUST be atomic: a reader sees the
    /// old bytes or the new ones, never a part (a crash leaves no half-written object under
    /// `key`). MUST refuse (`Fault`) a key that `file_key_is_safe` refuses.
    fn put(&self, key: &str, bytes: &[u8]) -> PortResult<()>;
    /// The bytes under `key`; `None` when there are none. Refuses unsafe keys.
    fn get(&self, key: &str) -> PortResult<Option<Vec<u8>>>;
    /// Removes `key`; removing a missing key succeeds (idempotent). Refuses unsafe keys.
    fn delete(&self, key: &str) -> PortResult<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    const PDF: EvidenceType = EvidenceType::Pdf;

    #[test]
    fn the_type_comes_from_the_magic_number() {
        assert_eq!(EvidenceType::sniff(b"%PDF-1.7\n"), Some(PDF));
        assert_eq!(
            EvidenceType::sniff(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Some(EvidenceType::Png)
        );
        assert_eq!(
            EvidenceType::sniff(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]),
            Some(EvidenceType::Jpeg)
        );
        assert_eq!(
            EvidenceType::sniff(b"RIFF\x24\0\0\0WEBPVP8 "),
            Some(EvidenceType::Webp)
        );
        // A PHP script is not a PDF, whatever it is called; near misses are nothing either.
        assert_eq!(EvidenceType::sniff(b"<?php system($_GET['c']); ?>"), None);
        assert_eq!(EvidenceType::sniff(b"%PDF"), None);
        assert_eq!(EvidenceType::sniff(b"\x89PNG\r\n"), None);
        assert_eq!(EvidenceType::sniff(&[0xFF, 0xD8]), None);
        assert_eq!(EvidenceType::sniff(b"RIFF\x24\0\0\0WAVEfmt "), None);
        assert_eq!(EvidenceType::sniff(b"RIFFWEBP"), None);
        assert_eq!(EvidenceType::sniff(b""), None);
        for t in [
            PDF,
            EvidenceType::Png,
            EvidenceType::Jpeg,
            EvidenceType::Webp,
        ] {
            assert_eq!(EvidenceType::parse_mime(t.mime()), Some(t));
        }
    }

    #[test]
    fn filenames_lose_paths_controls_and_leading_dots() {
        let s = |n: &str| sanitize_filename(n, PDF);
        assert_eq!(s("../../etc/passwd"), "passwd.pdf");
        assert_eq!(s("..\\a.pdf"), "a.pdf");
        assert_eq!(s("C:\\Users\\me\\invoice.PDF"), "invoice.PDF");
        assert_eq!(s("in\u{0}voi\r\nce\u{7f}.pdf"), "invoice.pdf");
        assert_eq!(s(".htaccess"), "htaccess.pdf");
        assert_eq!(s("..."), "evidence.pdf");
        assert_eq!(s(""), "evidence.pdf");
        assert_eq!(s("dir/"), "evidence.pdf");
        assert_eq!(s(".pdf"), "pdf.pdf");
        assert_eq!(s("a\"b<c>.pdf"), "abc.pdf");
        // Unicode letters stay; bidi overrides (`gpj.pdf` shown as `fdp.jpg`) do not.
        assert_eq!(s("Rechnung März 2026.pdf"), "Rechnung März 2026.pdf");
        assert_eq!(s("facture\u{202E}fdp.exe"), "facturefdp.exe.pdf");
        assert_eq!(s("請求書.pdf"), "請求書.pdf");
        // The extension follows the sniffed type.
        assert_eq!(sanitize_filename("x.pdf", EvidenceType::Png), "x.pdf.png");
        assert_eq!(sanitize_filename("x.JPEG", EvidenceType::Jpeg), "x.JPEG");
        assert_eq!(sanitize_filename("scan", EvidenceType::Webp), "scan.webp");
    }

    #[test]
    fn long_names_are_capped_keeping_the_extension() {
        let long = format!("{}.pdf", "é".repeat(400));
        let s = sanitize_filename(&long, PDF);
        assert_eq!(s.chars().count(), MAX_FILENAME_CHARS);
        assert!(s.ends_with("é.pdf"));
    }

    #[test]
    fn keys_stay_inside_the_store() {
        assert!(file_key_is_safe("evidence/abc/0192-ab.c_d"));
        for bad in [
            "",
            "../x",
            "a/../b",
            "/abs",
            "a//b",
            "a/",
            "./a",
            "a/.tmp/b",
            "a\\b",
            "a b",
            "ä",
            &"a".repeat(513),
        ] {
            assert!(!file_key_is_safe(bad), "{bad:?}");
        }
    }

    #[test]
    fn sha256_is_lower_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
