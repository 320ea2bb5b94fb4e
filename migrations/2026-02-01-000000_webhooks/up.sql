-- Webhooks: callback configuration, the delivery outbox/log and its attempts, and the per-link
-- event sequence. Same columns and indexes on SQLite and PostgreSQL (ids TEXT, instants BIGINT
-- unix milliseconds, bodies TEXT), so one diesel schema serves both backends.

-- The next `sequence` of a link's events is this plus one (incremented in the transaction that
-- writes the event's deliveries).
ALTER TABLE payment_links ADD COLUMN event_sequence BIGINT NOT NULL DEFAULT 0;

-- Company-level callbacks (kind: company_payment, legacy_shared). Secrets are sealed (AEAD);
-- `prev_*` is the secret before the last rotation, all NULL or all set.
CREATE TABLE webhook_callbacks (
    company_id TEXT NOT NULL REFERENCES companies(id),
    kind TEXT NOT NULL,
    url TEXT NOT NULL,
    secret_key_id TEXT NOT NULL,
    secret_sealed TEXT NOT NULL,
    secret_last4 TEXT NOT NULL,
    secret_created_at BIGINT NOT NULL,
    prev_key_id TEXT NULL,
    prev_sealed TEXT NULL,
    prev_last4 TEXT NULL,
    prev_created_at BIGINT NULL,
    prev_valid_until BIGINT NULL,
    updated_at BIGINT NOT NULL,
    -- Compare-and-set: a save writes version n+1 only over version n.
    version BIGINT NOT NULL,
    PRIMARY KEY (company_id, kind)
);

-- The outbox and the delivery log in one table: a row is written with the state change that
-- emitted it and moved by the dispatcher.
CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY NOT NULL,
    group_id TEXT NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    origin TEXT NOT NULL,
    event TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    next_attempt_at BIGINT NULL,
    last_attempt_at BIGINT NULL,
    last_response_status INTEGER NULL,
    last_error TEXT NULL,
    payment_link_uid TEXT NULL,
    subscription_uid TEXT NULL,
    order_id TEXT NULL,
    target TEXT NOT NULL,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- The dispatcher's claim (`next_attempt_at <= now AND status IN ('pending', 'retrying')
-- ORDER BY next_attempt_at, id LIMIT n`) reads this in order and stops at the limit. Terminal
-- deliveries have no next attempt, so the index holds only live ones; its condition is implied
-- by the claim's `next_attempt_at <= ?` on both backends even with bound parameters and generic
-- plans, which a `status IN (...)` condition would not be.
CREATE INDEX webhook_deliveries_due
    ON webhook_deliveries (next_attempt_at, id) WHERE next_attempt_at IS NOT NULL;
-- The delivery log, newest first, and the log of one link.
CREATE INDEX webhook_deliveries_log
    ON webhook_deliveries (company_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_link
    ON webhook_deliveries (company_id, payment_link_uid, created_at DESC, id DESC);

-- One row per attempt; retry_after_ms is the receiver's `Retry-After`, in milliseconds.
CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id),
    number BIGINT NOT NULL,
    at BIGINT NOT NULL,
    status_code INTEGER NULL,
    duration_ms BIGINT NOT NULL,
    error TEXT NULL,
    response_excerpt TEXT NULL,
    retry_after_ms BIGINT NULL,
    PRIMARY KEY (delivery_id, number)
);
