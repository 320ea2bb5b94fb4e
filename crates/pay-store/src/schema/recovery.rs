//! Keyed token requests of native installations (mirrors
//! `migrations/2026-11-27-410000_native_token_requests/up.sql`).

use super::{oauth_access_tokens, oauth_families, oauth_grants, oauth_refresh_tokens};

diesel::table! {
    oauth_token_requests (application_id, key_digest) {
        application_id -> Text,
        key_digest -> Text,
        request_digest -> Text,
        token -> Text,
        lease_until -> BigInt,
        created_at -> BigInt,
        answered -> Bool,
        company_id -> Nullable<Text>,
        grant_id -> Nullable<Text>,
        family_id -> Nullable<Text>,
        access_digest -> Nullable<Text>,
        refresh_digest -> Nullable<Text>,
        answer_key_id -> Nullable<Text>,
        answer_sealed -> Nullable<Text>,
        answer_until -> Nullable<BigInt>,
    }
}

diesel::allow_tables_to_appear_in_same_query!(oauth_token_requests, oauth_access_tokens);
diesel::allow_tables_to_appear_in_same_query!(oauth_token_requests, oauth_refresh_tokens);
diesel::allow_tables_to_appear_in_same_query!(oauth_token_requests, oauth_families);
diesel::allow_tables_to_appear_in_same_query!(oauth_token_requests, oauth_grants);
