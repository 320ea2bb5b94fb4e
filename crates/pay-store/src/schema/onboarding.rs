//! The onboarding tables (mirror `migrations/2026-11-27-400000_onboarding/up.sql`).

diesel::table! {
    onboarding_partners (id) {
        id -> Text,
        name -> Text,
        secret_digest -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    onboarding_drafts (id) {
        id -> Text,
        partner_id -> Text,
        idempotency_key -> Text,
        company_name -> Text,
        company_website -> Nullable<Text>,
        oauth_client_id -> Nullable<Text>,
        oauth_redirect_uri -> Nullable<Text>,
        oauth_scope -> Nullable<Text>,
        oauth_state -> Nullable<Text>,
        oauth_code_challenge -> Nullable<Text>,
        claim_digest -> Text,
        claim_key_id -> Text,
        claim_sealed -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        claimed_at -> Nullable<BigInt>,
        company_id -> Nullable<Text>,
    }
}

diesel::joinable!(onboarding_drafts -> onboarding_partners (partner_id));
diesel::allow_tables_to_appear_in_same_query!(onboarding_drafts, onboarding_partners);
