//! The tables as diesel sees them; mirrors `migrations/*/up.sql` (only types that diesel's
//! `MultiBackend` shares between SQLite and PostgreSQL).

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
        test_clock_offset_ms -> BigInt,
        payment_link_domain -> Nullable<Text>,
        website -> Nullable<Text>,
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
        event_sequence -> BigInt,
        paid_session_id -> Nullable<Text>,
        grant_subscription_id -> Nullable<Text>,
        search_text -> Nullable<Text>,
    }
}

diesel::table! {
    webhook_callbacks (company_id, kind) {
        company_id -> Text,
        kind -> Text,
        url -> Text,
        secret_key_id -> Text,
        secret_sealed -> Text,
        secret_last4 -> Text,
        secret_created_at -> BigInt,
        prev_key_id -> Nullable<Text>,
        prev_sealed -> Nullable<Text>,
        prev_last4 -> Nullable<Text>,
        prev_created_at -> Nullable<BigInt>,
        prev_valid_until -> Nullable<BigInt>,
        updated_at -> BigInt,
        version -> BigInt,
    }
}

diesel::table! {
    webhook_deliveries (id) {
        id -> Text,
        group_id -> Text,
        company_id -> Text,
        origin -> Text,
        event -> Text,
        status -> Text,
        attempts -> BigInt,
        next_attempt_at -> Nullable<BigInt>,
        last_attempt_at -> Nullable<BigInt>,
        last_response_status -> Nullable<Integer>,
        last_error -> Nullable<Text>,
        payment_link_uid -> Nullable<Text>,
        subscription_uid -> Nullable<Text>,
        order_id -> Nullable<Text>,
        target -> Text,
        url -> Text,
        body -> Text,
        created_at -> BigInt,
        lease_until -> Nullable<BigInt>,
        grant_id -> Nullable<Text>,
    }
}

diesel::table! {
    grant_webhook_subscriptions (id) {
        id -> Text,
        grant_id -> Text,
        company_id -> Text,
        url -> Text,
        events -> Text,
        description -> Nullable<Text>,
        metadata -> Nullable<Text>,
        secret_key_id -> Nullable<Text>,
        secret_sealed -> Nullable<Text>,
        secret_last4 -> Nullable<Text>,
        secret_created_at -> Nullable<BigInt>,
        prev_key_id -> Nullable<Text>,
        prev_sealed -> Nullable<Text>,
        prev_last4 -> Nullable<Text>,
        prev_created_at -> Nullable<BigInt>,
        prev_valid_until -> Nullable<BigInt>,
        created_at -> BigInt,
        updated_at -> BigInt,
        version -> BigInt,
        retained_key_id -> Nullable<Text>,
        retained_sealed -> Nullable<Text>,
        retained_url -> Nullable<Text>,
        retained_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    idempotency_keys (scope, idem_key) {
        scope -> Text,
        idem_key -> Text,
        fingerprint -> Text,
        token -> Text,
        lease_until -> BigInt,
        answer_key_id -> Nullable<Text>,
        answer_sealed -> Nullable<Text>,
        created_at -> BigInt,
    }
}

diesel::table! {
    webhook_attempts (delivery_id, number) {
        delivery_id -> Text,
        number -> BigInt,
        at -> BigInt,
        status_code -> Nullable<Integer>,
        duration_ms -> BigInt,
        error -> Nullable<Text>,
        response_excerpt -> Nullable<Text>,
        retry_after_ms -> Nullable<BigInt>,
    }
}

diesel::table! {
    webhook_endpoint_circuits (company_id, url) {
        company_id -> Text,
        url -> Text,
        failing_since -> BigInt,
        last_failure_at -> BigInt,
        failures -> BigInt,
        paused_until -> Nullable<BigInt>,
        pauses -> BigInt,
    }
}

diesel::table! {
    domain_events (id) {
        id -> Text,
        company_id -> Text,
        kind -> Text,
        payload -> Text,
        created_at -> BigInt,
        due_at -> BigInt,
        lease_until -> Nullable<BigInt>,
        done_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    consumed_events (event_id, consumer) {
        event_id -> Text,
        consumer -> Text,
        consumed_at -> BigInt,
    }
}

diesel::table! {
    link_webhooks (link_uid) {
        link_uid -> Text,
        url -> Text,
        secret_key_id -> Text,
        secret_sealed -> Text,
        secret_last4 -> Text,
        secret_created_at -> BigInt,
    }
}

diesel::table! {
    rate_hits (id) {
        id -> Text,
        bucket -> Text,
        at -> BigInt,
    }
}

diesel::table! {
    payment_sessions (id) {
        id -> Text,
        link_id -> Text,
        company_id -> Text,
        status -> Text,
        previous_status -> Nullable<Text>,
        version -> BigInt,
        invoice_asset -> Text,
        invoice_amount -> Text,
        selected_sell_asset -> Text,
        required_sell_amount -> Text,
        expected_buy_amount -> Text,
        destination_address -> Text,
        deposit_address -> Nullable<Text>,
        channel_id -> Nullable<Text>,
        composite_channel_id -> Nullable<Text>,
        source_chain -> Nullable<Text>,
        expires_at -> BigInt,
        settlement -> Text,
        error_message -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    processor_events (event_id) {
        event_id -> Text,
        session_id -> Nullable<Text>,
        applied_at -> BigInt,
    }
}

diesel::table! {
    timeline_events (id) {
        id -> Text,
        link_id -> Text,
        session_id -> Nullable<Text>,
        #[sql_name = "type"]
        kind -> Text,
        created_at -> BigInt,
        data -> Text,
    }
}

diesel::table! {
    mail_outbox (id) {
        id -> Text,
        company_id -> Text,
        link_id -> Text,
        link_uid -> Text,
        kind -> Text,
        recipient -> Text,
        subject -> Text,
        text_body -> Text,
        html_body -> Text,
        status -> Text,
        attempts -> BigInt,
        next_attempt_at -> Nullable<BigInt>,
        last_attempt_at -> Nullable<BigInt>,
        last_error -> Nullable<Text>,
        created_at -> BigInt,
        sent_at -> Nullable<BigInt>,
        lease_until -> Nullable<BigInt>,
    }
}

diesel::table! {
    contacts (id) {
        id -> Text,
        uid -> Text,
        company_id -> Text,
        kind -> Text,
        email -> Text,
        email_key -> Text,
        name -> Nullable<Text>,
        client_id -> Nullable<Text>,
        metadata -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    subscriptions (id) {
        id -> Text,
        uid -> Text,
        company_id -> Text,
        contact_id -> Text,
        status -> Text,
        customer_email -> Text,
        label -> Text,
        description -> Nullable<Text>,
        amount_usd -> Text,
        settlement_asset -> Text,
        cadence -> Text,
        interval_count -> BigInt,
        start_at -> BigInt,
        zone -> Text,
        metadata -> Text,
        created_by_kind -> Text,
        created_by_id -> Nullable<Text>,
        grant_id -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
        next_sequence -> BigInt,
        next_run_at -> Nullable<BigInt>,
        lease_until -> Nullable<BigInt>,
    }
}

diesel::table! {
    subscription_cycles (id) {
        id -> Text,
        subscription_id -> Text,
        company_id -> Text,
        sequence -> BigInt,
        due_at -> BigInt,
        amount_usd -> Text,
        status -> Text,
        payment_link_id -> Nullable<Text>,
        payment_link_uid -> Nullable<Text>,
        issued_at -> Nullable<BigInt>,
        paid_at -> Nullable<BigInt>,
        reminders -> BigInt,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::joinable!(memberships -> companies (company_id));
diesel::joinable!(pay_settings -> companies (company_id));

diesel::joinable!(webhook_attempts -> webhook_deliveries (delivery_id));

diesel::allow_tables_to_appear_in_same_query!(companies, memberships, pay_settings);
diesel::allow_tables_to_appear_in_same_query!(webhook_attempts, webhook_deliveries);

diesel::joinable!(payment_sessions -> payment_links (link_id));
diesel::allow_tables_to_appear_in_same_query!(payment_links, payment_sessions);
diesel::allow_tables_to_appear_in_same_query!(domain_events, consumed_events);

diesel::joinable!(subscription_cycles -> subscriptions (subscription_id));
diesel::allow_tables_to_appear_in_same_query!(subscriptions, subscription_cycles);

diesel::table! {
    native_platforms (platform) {
        platform -> Text,
        name -> Text,
        icon_url -> Nullable<Text>,
        support_url -> Nullable<Text>,
        scopes -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    oauth_applications (id) {
        id -> Text,
        client_id -> Text,
        name -> Text,
        redirect_uris -> Text,
        scopes -> Text,
        client_type -> Text,
        secret_digest -> Nullable<Text>,
        dpop_bound -> Bool,
        refresh_ttl_ms -> BigInt,
        template -> Nullable<Text>,
        created_at -> BigInt,
        accepted_jkt -> Nullable<Text>,
        pending_jkt -> Nullable<Text>,
    }
}

diesel::table! {
    oauth_grants (id) {
        id -> Text,
        company_id -> Text,
        application_id -> Text,
        user_id -> Text,
        scopes -> Text,
        bound_jkt -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    oauth_families (id) {
        id -> Text,
        grant_id -> Text,
        created_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    oauth_codes (digest) {
        digest -> Text,
        family_id -> Text,
        application_id -> Text,
        redirect_uri -> Text,
        scopes -> Text,
        code_challenge -> Text,
        dpop_jkt -> Nullable<Text>,
        created_at -> BigInt,
        expires_at -> BigInt,
        used_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    oauth_refresh_tokens (digest) {
        digest -> Text,
        family_id -> Text,
        grant_id -> Text,
        application_id -> Text,
        scopes -> Text,
        jkt -> Nullable<Text>,
        created_at -> BigInt,
        expires_at -> BigInt,
        spent_at -> Nullable<BigInt>,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    oauth_access_tokens (digest) {
        digest -> Text,
        family_id -> Text,
        grant_id -> Text,
        application_id -> Text,
        scopes -> Text,
        jkt -> Nullable<Text>,
        created_at -> BigInt,
        expires_at -> BigInt,
        revoked_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    dpop_jtis (htu, jti_digest) {
        htu -> Text,
        jti_digest -> Text,
        keep_until -> BigInt,
    }
}

diesel::joinable!(oauth_families -> oauth_grants (grant_id));
diesel::allow_tables_to_appear_in_same_query!(
    oauth_grants,
    oauth_families,
    oauth_codes,
    oauth_refresh_tokens,
    oauth_access_tokens
);

diesel::table! {
    contact_wallets (contact_id, address_key) {
        contact_id -> Text,
        company_id -> Text,
        address -> Text,
        address_key -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    wallet_activities (id) {
        id -> Text,
        company_id -> Text,
        activity_key -> Text,
        chain -> Text,
        tx_hash -> Text,
        log_index -> BigInt,
        direction -> Text,
        asset -> Text,
        amount -> Text,
        wallet_address -> Text,
        counterparty_address -> Text,
        occurred_at -> BigInt,
        payment_session_id -> Nullable<Text>,
        recorded_at -> BigInt,
    }
}

diesel::table! {
    expenses (id) {
        id -> Text,
        company_id -> Text,
        activity_id -> Text,
        contact_id -> Text,
        category -> Text,
        description -> Text,
        notes -> Nullable<Text>,
        fiat_currency -> Nullable<Text>,
        fiat_amount -> Nullable<Text>,
        tax_amount -> Nullable<Text>,
        version -> BigInt,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    expense_versions (expense_id, version) {
        expense_id -> Text,
        version -> BigInt,
        saved_at -> BigInt,
        saved_by -> Text,
        changes -> Text,
    }
}

diesel::allow_tables_to_appear_in_same_query!(contacts, contact_wallets);
diesel::allow_tables_to_appear_in_same_query!(
    wallet_activities,
    expenses,
    expense_versions,
    evidence_files
);
// Completed sessions with their activities (the export, the activity's session).
diesel::allow_tables_to_appear_in_same_query!(wallet_activities, payment_sessions);
diesel::allow_tables_to_appear_in_same_query!(wallet_activities, payment_links);

// Tables kept in files of their own (the chain processor, evidence files, native
// installations, onboarding, token-request recovery).
mod chains;
mod collected;
mod event_log;
mod evidence;
mod installations;
mod onboarding;
mod recovery;
pub use chains::*;
pub use collected::*;
pub use event_log::*;
pub use evidence::*;
pub use installations::*;
pub use onboarding::*;
pub use recovery::*;
