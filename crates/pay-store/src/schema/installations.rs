//! The native installations' table (mirrors
//! `migrations/2026-11-27-300000_native_installations/up.sql`).

use super::oauth_applications;

diesel::table! {
    native_installations (registration_id) {
        registration_id -> Text,
        platform -> Text,
        application_id -> Text,
        site_url -> Text,
        redirect_uri -> Text,
        platform_version -> Nullable<Text>,
        plugin_version -> Nullable<Text>,
        site_name -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::joinable!(native_installations -> oauth_applications (application_id));
diesel::allow_tables_to_appear_in_same_query!(native_installations, oauth_applications);
