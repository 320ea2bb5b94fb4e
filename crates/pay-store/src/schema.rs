//! The tables as diesel sees them; mirrors `migrations/*/…_init/up.sql` (only types that
//! diesel's `MultiBackend` shares between SQLite and PostgreSQL).

diesel::table! {
    users (id) {
        id -> Text,
        email -> Text,
        password_hash -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    companies (id) {
        id -> Text,
        name -> Text,
        picture_url -> Nullable<Text>,
        logo_url -> Nullable<Text>,
        theme -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    memberships (user_id, company_id) {
        user_id -> Text,
        company_id -> Text,
        role -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    pay_settings (company_id) {
        company_id -> Text,
        status -> Text,
        default_destination_asset -> Nullable<Text>,
        fee_paid_by -> Text,
        skip_quote_acceptance -> Bool,
        merchant_surcharge_percent -> Text,
        return_redirect_url -> Nullable<Text>,
        success_redirect_url -> Nullable<Text>,
        failure_redirect_url -> Nullable<Text>,
        underpayment_percent_enabled -> Bool,
        underpayment_percent_threshold -> Text,
        underpayment_fixed_enabled -> Bool,
        underpayment_fixed_threshold -> Text,
        updated_at -> BigInt,
    }
}

diesel::table! {
    integrations (partner_id) {
        partner_id -> Text,
        company_id -> Text,
        key_id -> Text,
        form_key_id -> Text,
        secret_digest -> Text,
        name -> Text,
        app_slug -> Text,
        allowed_origins -> Text,
        enabled -> Bool,
        created_at -> BigInt,
        last_used_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    browser_sessions (id) {
        id -> Text,
        token_digest -> Text,
        csrf_digest -> Text,
        user_id -> Text,
        company_id -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
    }
}

diesel::table! {
    login_failures (id) {
        id -> Text,
        throttle_key -> Text,
        failed_at -> BigInt,
    }
}

diesel::table! {
    payment_links (id) {
        id -> Text,
        uid -> Text,
        company_id -> Text,
        status -> Text,
        payload -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
        expires_at -> Nullable<BigInt>,
        created_by_kind -> Text,
        created_by_id -> Nullable<Text>,
        grant_id -> Nullable<Text>,
        anonymous -> Bool,
    }
}

diesel::joinable!(memberships -> companies (company_id));
diesel::joinable!(pay_settings -> companies (company_id));

diesel::allow_tables_to_appear_in_same_query!(companies, memberships, pay_settings);
