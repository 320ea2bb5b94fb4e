//! OpenAPI schemas of request fields whose rules a plain type cannot say: enums taken from the
//! domain's own tables, lengths, patterns and ranges of the domain's field rules. Used with
//! `#[schema(schema_with = ...)]` on the request structs. Where a rule depends on another field
//! or on stored state (an asset's decimals, an enabled asset), the schema states the part of it
//! that holds alone and the description says the rest.

use pay_domain::links::{ExpirationTime, LinkStatus};
use pay_domain::tenancy::Theme;
use serde_json::Value;
use utoipa::openapi::schema::{Object, ObjectBuilder, SchemaType, Type};

/// Characters that free text refuses: `char::is_control` (C0 and C1, except tab, line feed
/// and carriage return) and the bidirectional controls (`kernel::html::is_bidi_control`).
const ALLOWED_IN_TEXT: &str = r"[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\u202A-\u202E\u2066-\u2069]";
/// A character that is neither control nor white space (what `str::trim` keeps), nor a
/// bidirectional control.
const VISIBLE: &str =
    r"[^\x00-\x20\x7F-\x9F\u00A0\u1680\u2000-\u200A\u2028-\u202F\u205F\u2066-\u2069\u3000]";

fn string(nullable: bool) -> ObjectBuilder {
    let t = if nullable {
        SchemaType::from_iter([Type::String, Type::Null])
    } else {
        SchemaType::Type(Type::String)
    };
    ObjectBuilder::new().schema_type(t)
}

fn one_of(values: impl IntoIterator<Item = &'static str>, nullable: bool) -> Object {
    let mut all: Vec<Value> = values.into_iter().map(Value::from).collect();
    if nullable {
        all.push(Value::Null);
    }
    string(nullable).enum_values(Some(all)).build()
}

/// Free text of 1 to `max` characters: not blank, no control or bidirectional control characters but tab and line
/// breaks (`validate::text`).
fn text(max: usize, nullable: bool, description: &str) -> Object {
    string(nullable)
        .min_length(Some(1))
        .max_length(Some(max))
        .pattern(Some(format!(
            "^{ALLOWED_IN_TEXT}*{VISIBLE}{ALLOWED_IN_TEXT}*$"
        )))
        .description(Some(description))
        .build()
}

/// An absolute http(s) URL without user info (`validate::http_url`). The pattern is the rule
/// for the common shape (a host name or IPv4 address, an optional port, a path without spaces);
/// the server also takes IPv6 literals.
fn http_url(nullable: bool, description: &str) -> Object {
    string(nullable)
        .max_length(Some(2048))
        .pattern(Some(
            r"^https?://[A-Za-z0-9._-]{1,253}(:[1-9][0-9]{0,3})?([/?#][!-~]*)?$",
        ))
        .description(Some(description))
        .build()
}

pub fn title() -> Object {
    text(
        200,
        true,
        "1 to 200 characters, not blank, no control or bidirectional control characters.",
    )
}

pub fn description() -> Object {
    text(
        2000,
        true,
        "1 to 2,000 characters, not blank, no control or bidirectional control characters.",
    )
}

pub fn order_id() -> Object {
    text(
        200,
        true,
        "1 to 200 characters, not blank, no control or bidirectional control characters.",
    )
}

pub fn client_id() -> Object {
    text(
        200,
        true,
        "1 to 200 characters, not blank, no control or bidirectional control characters.",
    )
}

pub fn currency() -> Object {
    let mut o = text(
        20,
        true,
        "Settlement symbol, 1 to 20 characters: the one enabled asset with it, or the default \
         asset when several have it and the default is one of them.",
    );
    o.examples = vec![Value::from("USDC")];
    o
}

/// An address to settle to: 1 to 128 characters, neither spaces nor control characters.
pub fn settlement_address() -> Object {
    string(false)
        .min_length(Some(1))
        .max_length(Some(128))
        .pattern(Some(format!("^{VISIBLE}+$")))
        .examples(["0x52908400098527886E0F7030069857D2E4169EE7"])
        .build()
}

pub fn branding_name() -> Object {
    text(
        100,
        true,
        "1 to 100 characters, not blank, no control or bidirectional control characters.",
    )
}

pub fn integration_name() -> Object {
    text(
        100,
        false,
        "1 to 100 characters, not blank, no control or bidirectional control characters.",
    )
}

pub fn link_url() -> Object {
    http_url(
        true,
        "Absolute http(s) URL, at most 2,048 characters, no user info.",
    )
}

pub fn settings_url() -> Object {
    http_url(
        true,
        "Absolute http(s) URL, at most 2,048 characters, no user info; `null` clears it.",
    )
}

/// A positive decimal string. The schema takes at most 12 integer digits and 2 decimals,
/// which every asset and every 2- or 3-decimal currency accepts; the server takes up to 18
/// integer digits and as many decimals as the amount's unit has (the fiat currency's minor
/// digits, else the asset's decimals: USDC 6, ETH 18, JPY 0).
pub fn amount() -> Object {
    string(false)
        .pattern(Some(
            r"^(?:[1-9][0-9]{0,11}(?:\.[0-9]{1,2})?|0\.(?:[1-9][0-9]?|0[1-9]))$",
        ))
        .description(Some(
            "Positive decimal string (`\"12.50\"`, no exponent), at most the decimals of its \
             unit: the fiat currency's minor digits, else the settlement asset's.",
        ))
        .examples(["12.50"])
        .build()
}

pub fn fiat_currency() -> Object {
    let mut o = one_of(pay_domain::kernel::assets::fiat_codes(), true);
    o.description = Some("ISO 4217 display currency; `amount` is then in it.".into());
    o
}

pub fn fee_paid_by() -> Object {
    one_of(["client", "merchant"], true)
}

pub fn fee_paid_by_setting() -> Object {
    one_of(["client", "merchant"], false)
}

pub fn product_status() -> Object {
    one_of(["active", "paused"], false)
}

pub fn expiration_time() -> Object {
    let mut o = one_of(ExpirationTime::ALL.map(ExpirationTime::as_str), true);
    o.description = Some("Default `24h`.".into());
    o
}

pub fn link_status() -> Object {
    one_of(LinkStatus::ALL.map(LinkStatus::as_str), false)
}

pub fn theme() -> Object {
    one_of(
        [Theme::Light, Theme::Dark, Theme::System].map(Theme::as_str),
        true,
    )
}

/// `customerEmail` (`validate::email`): one `@`, a dotted domain, no spaces.
pub fn customer_email() -> Object {
    string(true)
        .max_length(Some(254))
        .pattern(Some(r"^[!-?A-~]+@[!-\-/-?A-~]+(\.[!-\-/-?A-~]+)+$"))
        .description(Some(
            "An e-mail address: one `@`, a dotted domain, no spaces, at most 254 characters.",
        ))
        .build()
}

/// A callback URL (`validate_callback_url`): https on a public host. The pattern takes host
/// names ending in a 2- to 8-letter top-level label (so never `localhost` nor an IP literal,
/// which the server refuses when private).
fn callback_url(nullable: bool, description: &str) -> Object {
    string(nullable)
        .max_length(Some(2048))
        .pattern(Some(
            r"^https://(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.){1,4}[a-z]{2,8}(:[1-9][0-9]{0,3})?([/?#][!-~]*)?$",
        ))
        .description(Some(description))
        .build()
}

pub fn webhook_url() -> Object {
    callback_url(
        true,
        "https on a public address, at most 2,048 characters, no user info; its signing \
         secret is returned once as `webhookSecret`.",
    )
}

pub fn callback_target() -> Object {
    callback_url(
        false,
        "Absolute https URL on a public address, at most 2,048 characters, no user info.",
    )
}

/// The events of a grant's webhook subscription: 1 to 32 distinct names, each the wildcard
/// or a payment event of the spec's table.
pub fn subscription_events() -> utoipa::openapi::schema::Array {
    use pay_domain::webhooks::grant::{MAX_EVENTS, WILDCARD};
    let names = std::iter::once(WILDCARD.to_owned()).chain(
        pay_domain::webhooks::PaymentEvent::ALL
            .iter()
            .map(|e| format!("pay.payment.{}", e.as_str())),
    );
    let item = ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .enum_values(Some(names))
        .build();
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(item)
        .min_items(Some(1))
        .max_items(Some(MAX_EVENTS))
        .unique_items(true)
        .description(Some("Default `[\"pay.payment.*\"]`"))
        .build()
}

/// A grant subscription's description: at most 500 characters, no control or bidirectional control characters.
pub fn grant_subscription_description() -> Object {
    string(false)
        .max_length(Some(pay_domain::webhooks::grant::MAX_DESCRIPTION))
        .pattern(Some(format!("^{ALLOWED_IN_TEXT}*$")))
        .build()
}

pub fn logo_url() -> Object {
    http_url(
        true,
        "Absolute http(s) URL, at most 2,048 characters, no user info.",
    )
}

pub fn metadata() -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Object, Type::Null]))
        .max_properties(Some(pay_domain::kernel::validate::MAX_METADATA_KEYS))
        .description(Some(
            "JSON object of at most 50 keys and 8 KB (compact JSON).",
        ))
        .build()
}

pub fn sandbox_event_type() -> Object {
    one_of(["deposit", "settle", "expire", "fail", "refund"], false)
}

pub fn resolution_action() -> Object {
    one_of(["complete", "refund"], false)
}

/// A positive decimal string (no exponent, at most 18 decimals).
pub fn deposit_amount() -> Object {
    string(true)
        .pattern(Some(
            r"^(?:[1-9][0-9]{0,11}(?:\.[0-9]{1,6})?|0\.[0-9]{0,5}[1-9])$",
        ))
        .description(Some(
            "`deposit` only, and required there: the amount of the pay asset received, a \
             positive decimal string.",
        ))
        .examples(["0.005"])
        .build()
}

/// The recipient of a payment request (`mail::parse_recipient`): a dot-atom local part of at
/// most 64 characters and a domain of at least two labels. The pattern is the ASCII form of
/// the rule; the server also takes international letters in the domain.
pub fn recipient_email() -> Object {
    string(true)
        .max_length(Some(254))
        .pattern(Some(
            r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,20}(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,20}){0,2}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,20}[A-Za-z0-9])?\.){1,3}[A-Za-z]{2,10}$",
        ))
        .description(Some(
            "Where to send the link; default the link's `customerEmail` (also when `null`).",
        ))
        .examples(["payer@example.com"])
        .build()
}

/// A contact's e-mail (`validate::email`, after trimming): the customer upsert key.
pub fn contact_email() -> Object {
    string(false)
        .max_length(Some(254))
        .pattern(Some(r"^\s*[^\s@]+@[^\s@]+\.[^\s@]+\s*$"))
        .description(Some(
            "An e-mail address (trimmed; compared without case): one `@`, a dotted domain, no \
             spaces, at most 254 characters.",
        ))
        .examples(["ann@example.com"])
        .build()
}

pub fn contact_name() -> Object {
    text(
        200,
        true,
        "1 to 200 characters, not blank, no control or bidirectional control characters; absent or `null` keeps it.",
    )
}

pub fn subscription_label() -> Object {
    text(
        200,
        false,
        "Customer-facing label, 1 to 200 characters, not blank, no control or bidirectional control characters.",
    )
}

pub fn subscription_description() -> Object {
    string(true)
        .max_length(Some(2000))
        .pattern(Some(format!("^{ALLOWED_IN_TEXT}*$")))
        .description(Some(
            "At most 2,000 characters, no control or bidirectional control characters.",
        ))
        .build()
}

/// `amountUsd`: a positive decimal string with at most 2 decimals (the server takes up to 18
/// integer digits; the schema says 12).
pub fn amount_usd() -> Object {
    string(false)
        .pattern(Some(
            r"^(?:[1-9][0-9]{0,11}(?:\.[0-9]{1,2})?|0\.(?:[1-9][0-9]?|0[1-9]))$",
        ))
        .description(Some(
            "Positive USD decimal string (`\"19.99\"`, no exponent), at most 2 decimals.",
        ))
        .examples(["19.99"])
        .build()
}

pub fn cadence() -> Object {
    use pay_domain::subscriptions::calendar::Cadence;
    let mut o = one_of(Cadence::ALL.map(Cadence::as_str), false);
    o.description = Some(
        "`weekly` (1 week), `biweekly` (2 weeks), `monthly` (1 month), `yearly` (1 year), or \
         `custom_months` (`billingIntervalCount` months)."
            .into(),
    );
    o
}

pub fn timezone() -> Object {
    string(false)
        .min_length(Some(1))
        .max_length(Some(64))
        .description(Some(
            "An IANA zone name from `GET /api/partner/v1/timezones`.",
        ))
        .examples(["Europe/Berlin"])
        .build()
}

pub fn billing_interval_count() -> Object {
    use pay_domain::subscriptions::calendar::{MAX_INTERVAL_COUNT, MIN_INTERVAL_COUNT};
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Integer, Type::Null]))
        .minimum(Some(MIN_INTERVAL_COUNT))
        .maximum(Some(MAX_INTERVAL_COUNT))
        .description(Some(
            "Months between cycles: required with `custom_months`; with another cadence it \
             may only repeat what the cadence implies (1, or 2 for `biweekly`).",
        ))
        .build()
}

pub fn start_at() -> Object {
    string(true)
        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::DateTime,
        )))
        .description(Some(
            "RFC 3339 instant of cycle 0, at most a day in the past and five years ahead; \
             default now.",
        ))
        .build()
}

pub fn settlement_asset() -> Object {
    string(true)
        .description(Some(
            "One of the company's enabled destination assets; default the company's default.",
        ))
        .examples(["eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"])
        .build()
}

pub fn subscription_status() -> Object {
    use pay_domain::subscriptions::SubscriptionStatus;
    let mut o = one_of(
        SubscriptionStatus::ALL.map(SubscriptionStatus::as_str),
        false,
    );
    o.description = Some(
        "`paused` (from active or overdue), `active` (from paused), `cancelled` (from any but \
         cancelled); `overdue` is the scheduler's alone."
            .into(),
    );
    o
}
