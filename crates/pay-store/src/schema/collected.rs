//! The daily roll-up of completed payment sessions (mirrors the `collected_days` table of
//! `migrations/`; `ports::collected`).

diesel::table! {
    collected_days (company_id, day, invoice_asset) {
        company_id -> Text,
        day -> BigInt,
        invoice_asset -> Text,
        payments -> BigInt,
        units_high -> BigInt,
        units_low -> BigInt,
        fraction_high -> BigInt,
        fraction_low -> BigInt,
        fraction_digits -> BigInt,
    }
}
