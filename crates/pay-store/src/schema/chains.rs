//! The chain processor's tables (mirrors `migrations/2026-11-27-000000_chain_processor/up.sql`
//! and `migrations/2026-11-27-440000_chain_key_counters/up.sql`).

diesel::table! {
    chain_wallet_keys (company_id, family, xpub) {
        company_id -> Text,
        family -> Text,
        xpub -> Text,
        fingerprint -> Text,
        next_index -> BigInt,
        created_at -> BigInt,
    }
}

diesel::table! {
    chain_key_counters (family, xpub) {
        family -> Text,
        xpub -> Text,
        next_index -> BigInt,
    }
}

diesel::table! {
    chain_wallets (company_id, family) {
        company_id -> Text,
        family -> Text,
        xpub -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    chain_deposit_addresses (session_id) {
        session_id -> Text,
        company_id -> Text,
        chain_code -> Text,
        asset_identifier -> Text,
        xpub -> Text,
        derivation_index -> BigInt,
        address -> Text,
        created_at -> BigInt,
        watch_until -> BigInt,
    }
}

diesel::table! {
    chain_watchers (chain_code) {
        chain_code -> Text,
        lease_holder -> Nullable<Text>,
        lease_until -> Nullable<BigInt>,
        head_number -> Nullable<BigInt>,
        head_seen_at -> Nullable<BigInt>,
        read_number -> Nullable<BigInt>,
        failing_since -> Nullable<BigInt>,
    }
}

diesel::table! {
    chain_blocks (chain_code, block_number) {
        chain_code -> Text,
        block_number -> BigInt,
        block_hash -> Text,
    }
}

diesel::table! {
    chain_transfers (chain_code, tx_hash, log_index, direction) {
        chain_code -> Text,
        tx_hash -> Text,
        log_index -> BigInt,
        direction -> Text,
        company_id -> Text,
        session_id -> Text,
        address -> Text,
        counterparty -> Text,
        asset_identifier -> Text,
        units -> Text,
        block_number -> BigInt,
        block_hash -> Text,
        status -> Text,
        seen_at -> BigInt,
    }
}

diesel::allow_tables_to_appear_in_same_query!(chain_wallet_keys, chain_wallets);
