-- Anonymous (one-time) links: the reserved company that owns them, their per-link callbacks,
-- and the rate-limit hits that throttle their creation. Same on SQLite and PostgreSQL.

-- The owner of every anonymous link (`ANONYMOUS_COMPANY`, the nil UUID). Nobody is a member,
-- so no session or key can act for it; its links are never listed.
INSERT INTO companies (id, name, picture_url, logo_url, theme, created_at)
VALUES ('00000000-0000-0000-0000-000000000000', 'Anonymous links', NULL, NULL, 'system', 0);

INSERT INTO pay_settings (
    company_id, status, default_destination_asset, fee_paid_by, skip_quote_acceptance,
    merchant_surcharge_percent, return_redirect_url, success_redirect_url, failure_redirect_url,
    underpayment_percent_enabled, underpayment_percent_threshold, underpayment_fixed_enabled,
    underpayment_fixed_threshold, updated_at
) VALUES (
    '00000000-0000-0000-0000-000000000000', 'active', NULL, 'merchant', FALSE,
    '0', NULL, NULL, NULL,
    FALSE, '0', FALSE,
    '0', 0
);

-- The `webhookUrl` of an anonymous link and its signing secret, sealed (AEAD, associated data
-- `link_webhooks:<uid>`).
CREATE TABLE link_webhooks (
    link_uid TEXT PRIMARY KEY NOT NULL REFERENCES payment_links(uid),
    url TEXT NOT NULL,
    secret_key_id TEXT NOT NULL,
    secret_sealed TEXT NOT NULL,
    secret_last4 TEXT NOT NULL,
    secret_created_at BIGINT NOT NULL
);

-- One row per counted request; `bucket` is a digest (never a raw client address).
CREATE TABLE rate_hits (
    id TEXT PRIMARY KEY NOT NULL,
    bucket TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX rate_hits_bucket_at ON rate_hits (bucket, at);
