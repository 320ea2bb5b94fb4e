//! The event log's table (mirrors `migrations/2026-11-27-510000_webhook_events/up.sql`).

use super::webhook_deliveries;

diesel::table! {
    webhook_events (id) {
        id -> Text,
        company_id -> Text,
        grant_id -> Nullable<Text>,
        event -> Text,
        payment_link_uid -> Nullable<Text>,
        subscription_uid -> Nullable<Text>,
        body -> Text,
        created_at -> BigInt,
    }
}

diesel::allow_tables_to_appear_in_same_query!(webhook_events, webhook_deliveries);
