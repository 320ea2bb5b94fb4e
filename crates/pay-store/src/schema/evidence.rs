//! Bookkeeping's evidence files (mirrors the `evidence_files` table of `migrations/`).

diesel::table! {
    evidence_files (id) {
        id -> Text,
        company_id -> Text,
        filename -> Text,
        content_type -> Text,
        size -> BigInt,
        sha256 -> Text,
        status -> Text,
        expense_id -> Nullable<Text>,
        uploaded_at -> BigInt,
        uploaded_by -> Text,
        orphan_since -> Nullable<BigInt>,
    }
}
