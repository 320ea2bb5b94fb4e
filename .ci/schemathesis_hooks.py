"""schemathesis hooks of .ci/openapi-check.sh: which refusals of schema-valid requests are
rules the OpenAPI document cannot state.

A JSON Schema describes one body alone. A few rules of this API depend on another field of the
same body (an amount's decimals on its currency or asset) or on stored state (which assets are
enabled, the link's pay assets, whether a callback is set, the session's chain). The document
states them in prose; schemathesis cannot know them, so for the operations listed in
`.ci/schemathesis.toml` its `positive_data_acceptance` check also admits 400, and the check
below then fails every 400 to schema-valid data that is not one of these named rules. Anything
else (a field rule the schema leaves out, a wrong code) still fails the run.
"""

import json
import re

import schemathesis

# Advanced settings in metadata (`settings::LINK_SETTING_KEYS`) follow the settings' rules.
METADATA_SETTINGS = ("validation_failed", "metadata.*", None)

LINK_CREATE = [
    # The amount's decimals are its unit's: the fiat currency's minor digits, else the asset's.
    ("validation_failed", "amount", "decimal places"),
    # `asset` or `currency` naming no enabled asset, a currency several assets share, no default.
    ("invalid_destination_asset", "asset", None),
    ("invalid_destination_asset", "currency", None),
    ("ambiguous_currency", "currency", None),
    ("missing_destination_asset", None, None),
    # `currency` must be the symbol of `asset` when both are given.
    ("validation_failed", "currency", "does not match asset symbol"),
    # 8 KB of metadata, as compact JSON: the schema caps its keys only.
    ("validation_failed", "metadata", "8 KB"),
    METADATA_SETTINGS,
]

ANONYMOUS_CREATE = [
    ("validation_failed", "amount", "decimal places"),
    # None of the priorities names an asset of this deployment's catalogue.
    ("invalid_destination_asset", "settlement.priorities", None),
    ("validation_failed", "metadata", "8 KB"),
    METADATA_SETTINGS,
]

SANDBOX_EVENT = [
    # `amount` and `hold` belong to `deposit` events, which need an amount.
    ("validation_failed", "amount", "deposit"),
    ("validation_failed", "hold", "deposit"),
    # The pay asset's decimals (stored on the session).
    ("validation_failed", "amount", "decimal places"),
]

CUSTOMER_UPSERT = [
    # The e-mail rule (`validate::email`): a domain not starting or ending with a dot, no
    # control characters, at most 254 characters once trimmed.
    ("validation_failed", "email", None),
    ("validation_failed", "metadata", "8 KB"),
    METADATA_SETTINGS,
]

SUBSCRIPTION_CREATE = [
    ("validation_failed", "customerEmail", None),
    # A count the cadence contradicts (`monthly` with 3), or none for `custom_months`.
    ("validation_failed", "billingIntervalCount", None),
    # A string that is no IANA zone of the bundled database.
    ("validation_failed", "timezone", None),
    # More than a day in the past or five years ahead of the company's clock.
    ("validation_failed", "startAt", None),
    ("invalid_destination_asset", "settlementAsset", None),
    # No `settlementAsset` and the company cleared its default asset.
    ("missing_destination_asset", None, None),
    ("validation_failed", "metadata", "8 KB"),
    METADATA_SETTINGS,
]

SANDBOX_OUTGOING = [
    # An integral float (`3.0`) is JSON Schema's integer, not an index (as billingIntervalCount).
    ("validation_failed", "logIndex", None),
    # The asset must be in the catalogue and on `chain`; the amount within its decimals.
    ("validation_failed", "asset", None),
    ("validation_failed", "amount", None),
    # The company has no settlement wallet for the asset.
    ("validation_failed", "asset", "settlement wallet"),
    # RFC 3339 as the time crate reads it (schemathesis' date-time is a little wider).
    ("validation_failed", "occurredAt", None),
]

EXPENSE_FROM_ACTIVITY = [
    # Exactly one of the activity's id and key, and of the counterparty's contactId and
    # newVendor (two fields of one body); the key's shape is `<chain>:<txHash>:<index>`.
    ("validation_failed", "walletActivityEventId", None),
    ("validation_failed", "walletActivityEventKey", None),
    ("validation_failed", "counterparty", None),
    ("validation_failed", "counterparty.newVendor.email", None),
    ("validation_failed", "counterparty.newVendor.name", None),
    ("validation_failed", "counterparty.newVendor.clientId", None),
    # Text fields must not be blank or hold control characters.
    ("validation_failed", "category", None),
    ("validation_failed", "description", None),
    ("validation_failed", "notes", None),
    # Fiat amounts need a known `fiatCurrency` and its minor digits (another field).
    ("validation_failed", "fiatCurrency", None),
    ("validation_failed", "fiatAmount", None),
    ("validation_failed", "taxAmount", None),
]

ALLOWED = {
    ("POST", "/api/partner/v1/pay/sandbox/wallet-activity/outgoing"): SANDBOX_OUTGOING,
    ("POST", "/api/partner/v1/pay/bookkeeping/expenses/from-activity"): EXPENSE_FROM_ACTIVITY,
    # `to` must be after `from` (two parameters); RFC 3339 as the time crate reads it.
    ("GET", "/api/partner/v1/pay/bookkeeping/wallet-activity"): [
        ("validation_failed", "to", None),
        ("validation_failed", "from", None),
    ],
    # The exports' period: the same two-parameter rule (`to` after `from`).
    ("GET", "/api/partner/v1/pay/bookkeeping/exports/expenses.csv"): [
        ("validation_failed", "to", None),
        ("validation_failed", "from", None),
    ],
    ("GET", "/api/partner/v1/pay/bookkeeping/exports/payments.csv"): [
        ("validation_failed", "to", None),
        ("validation_failed", "from", None),
    ],
    # `starting_after` must be an event the caller sees (stored state); `type` a comma list of
    # envelope types (the catalogue of event kinds, which a pattern would only restate); the
    # period's `created[lt]` after `created[gte]` (two parameters), RFC 3339 as the time crate
    # reads it.
    ("GET", "/api/partner/v1/pay/events"): [
        ("validation_failed", "type", "unknown event type"),
        ("validation_failed", "starting_after", "not one of your events"),
        ("validation_failed", "created[gte]", None),
        ("validation_failed", "created[lt]", None),
    ],
    # `q` must not be blank nor hold control characters.
    ("GET", "/api/partner/v1/pay/contacts/search"): [
        ("validation_failed", "q", None),
    ],
    ("POST", "/api/partner/v1/pay/customers"): CUSTOMER_UPSERT,
    ("POST", "/api/partner/v1/pay/subscriptions"): SUBSCRIPTION_CREATE,
    # The portal's forms answer HTML: a refused signed URL or token is its 403 page, a bad
    # name or status its 400 page.
    ("POST", "/portal/name"): "html",
    ("POST", "/portal/subscriptions/{uid}/status"): "html",
    ("POST", "/api/partner/v1/pay/payment-links"): LINK_CREATE,
    ("POST", "/api/public/anonymous-payment-links"): ANONYMOUS_CREATE,
    ("PUT", "/api/partner/v1/pay/settings"): [
        ("invalid_destination_asset", "defaultDestinationAsset", None),
    ],
    # A settlement wallet's key: base58check (a checksum over the bytes), known version bytes,
    # a point of secp256k1; an extended private key of the same shape is refused by name.
    ("PUT", "/api/partner/v1/pay/settlement-wallets/evm"): [
        ("validation_failed", "xpub", None),
        ("private_key_refused", "xpub", None),
    ],
    ("POST", "/api/partner/v1/pay/payment-links/{uid}/send-request-email"): [
        # No `email` and the link has no `customerEmail`, or has one the mail rule refuses.
        ("missing_email", "email", None),
        ("validation_failed", "email", "STORED"),
    ],
    ("POST", "/api/partner/v1/pay/sandbox/payment-links/{uid}/events"): SANDBOX_EVENT,
    ("POST", "/api/public/sandbox/payment-links/{uid}/events"): SANDBOX_EVENT,
    ("POST", "/api/public/checkout/{uid}/sessions"): [
        # Not one of this link's pay assets, or no price for it.
        ("validation_failed", "payAsset", None),
    ],
    ("POST", "/api/public/checkout/{uid}/sessions/{sessionId}/refund-address"): [
        # The address format is the session's chain's.
        ("validation_failed", "address", None),
    ],
    ("POST", "/api/partner/v1/pay/webhook-requests/test"): [
        # No callback receives this link's events yet.
        ("validation_failed", "paymentLinkUid", "set the company payment callback"),
    ],
    # The hosted page's forms answer HTML for people: the choice again with the message when the
    # link does not take the asset, the session page with it for an address of another chain.
    ("POST", "/pay/{uid}/start"): "html",
    ("POST", "/pay/{uid}/s/{sessionId}/refund-address"): "html",
    # OAuth (RFC 6749): whether `client_id` names a registered application with that exact
    # redirect URI, whether a code or refresh token is live, whether the user's e-mail and
    # password match, and whether a DPoP proof's signature verifies are stored state or
    # cryptography. The pages answer those refusals as HTML (an error page, never a redirect,
    # for an unknown client or redirect URI: RFC 6749 4.1.2.1); the token endpoint answers
    # RFC 6749 5.2 bodies, whose codes are listed here.
    # The dashboard's export form: a day the pattern lets through that is no date (2026-02-30),
    # and `to` before `from` (two parameters), are its 400 page.
    ("GET", "/dashboard/{companyId}/bookkeeping/export"): "html",
    ("GET", "/oauth/authorize"): "html",
    ("POST", "/oauth/authorize"): "html",
    ("POST", "/signin"): "html",
    ("POST", "/oauth/token"): ("oauth", {
        # The fields a grant needs depend on `grant_type` (another field of the body).
        "invalid_request",
        # Unknown, used or expired code or refresh token; wrong PKCE verifier.
        "invalid_grant",
        "invalid_scope",
        "unauthorized_client",
        # A DPoP header whose value is not a proof that verifies (RFC 9449 5).
        "invalid_dpop_proof",
    }),
    # Native registration: which platform templates exist is stored state; `siteUrl` must be a
    # public host (an address or a name the pattern cannot tell), `redirectUri` its origin's
    # callback (another field); the support texts refuse control and bidirectional characters.
    ("POST", "/oauth/native/installations"): [
        ("validation_failed", "platform", "unknown platform"),
        ("validation_failed", "siteUrl", None),
        ("validation_failed", "redirectUri", None),
        ("validation_failed", "platformVersion", None),
        ("validation_failed", "pluginVersion", None),
        ("validation_failed", "siteName", None),
    ],
    # Onboarding drafts: `oauth` is checked against its stored application (a registered
    # client, one of its redirect URIs, scopes it may ask for); names and the website follow
    # the text and URL rules (control characters, user info) the patterns cannot state.
    ("POST", "/api/partner/v1/onboarding/company"): [
        ("validation_failed", "oauth.clientId", None),
        ("validation_failed", "oauth.redirectUri", None),
        ("validation_failed", "oauth.scope", None),
        ("validation_failed", "company.name", None),
        ("validation_failed", "company.website", None),
        ("validation_failed", "idempotencyKey", None),
    ],
    ("POST", "/oauth/revoke"): ("oauth", {
        # RFC 7009 2.1: `token` is required; an unknown one is 200.
        "invalid_request",
    }),
}

SETTINGS_NUMBERS = {
    "merchantSurchargePercent",
    "underpaymentPercentThreshold",
    "underpaymentFixedThreshold",
}


def _body_email(case):
    body = case.body if isinstance(case.body, dict) else {}
    return body.get("email")


def _too_precise(value):
    """A JSON number with more than 18 decimal places (the settings' exact decimals)."""
    text = repr(value)
    if "e" in text or "E" in text:
        return True
    return len(text.split(".")[1]) > 18 if "." in text else False


def _allowed(case, response, rules):
    if rules == "html":
        return response.headers.get("content-type", [""])[0].startswith("text/html")
    if isinstance(rules, tuple) and rules[0] == "oauth":
        try:
            return json.loads(response.content).get("error") in rules[1]
        except (ValueError, AttributeError):
            return False
    try:
        err = json.loads(response.content)
    except ValueError:
        return False
    code, field, message = err.get("errorCode"), err.get("field"), err.get("error", "")
    if (case.method.upper(), case.path) == ("PUT", "/api/partner/v1/pay/settings"):
        body = case.body if isinstance(case.body, dict) else {}
        if code == "validation_failed" and field in SETTINGS_NUMBERS and _too_precise(body.get(field)):
            return True
    for want_code, want_field, want_text in rules:
        if code != want_code:
            continue
        if want_field == "metadata.*":
            if not (field or "").startswith("metadata."):
                continue
        elif field != want_field:
            continue
        if want_text == "STORED":
            # The mail rule refusing the link's stored address: the request named none.
            if _body_email(case) is None:
                return True
            continue
        if want_text is None or want_text in message:
            return True
    return False


@schemathesis.check
def refusals_of_valid_data_are_named_rules(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 400:
        return None
    rules = ALLOWED.get((case.method.upper(), case.path))
    if rules is not None and _allowed(case, response, rules):
        return None
    if rules is None:
        # Not an operation with such rules: positive_data_acceptance reports it already.
        return None
    raise AssertionError(
        f"A schema-valid request was refused by a rule not listed in .ci/schemathesis_hooks.py: "
        f"{response.content[:300]!r}"
    )
