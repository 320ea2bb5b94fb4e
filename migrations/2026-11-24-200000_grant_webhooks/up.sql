-- Grant-owned webhook subscriptions (one per OAuth grant), the idempotency records of keyed
-- writes, and the grant of each delivery (the grant's token sees only its own). Same columns
-- and indexes on SQLite and PostgreSQL (ids TEXT, instants BIGINT unix milliseconds).

-- Active exactly while the secret columns are set; disabling erases them (the spec's state
-- table) and keeps the rest for connection status. `prev_*` is the secret before the last
-- rotation, all NULL or all set. Secrets are sealed (AEAD, associated data names the row).
CREATE TABLE grant_webhook_subscriptions (
    id TEXT PRIMARY KEY NOT NULL,
    -- The owning OAuth grant (grants are revoked, never deleted).
    grant_id TEXT NOT NULL UNIQUE,
    company_id TEXT NOT NULL REFERENCES companies(id),
    url TEXT NOT NULL,
    -- JSON array of event names.
    events TEXT NOT NULL,
    description TEXT NULL,
    -- JSON object.
    metadata TEXT NULL,
    secret_key_id TEXT NULL,
    secret_sealed TEXT NULL,
    secret_last4 TEXT NULL,
    secret_created_at BIGINT NULL,
    prev_key_id TEXT NULL,
    prev_sealed TEXT NULL,
    prev_last4 TEXT NULL,
    prev_created_at BIGINT NULL,
    prev_valid_until BIGINT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    -- Compare-and-set: a save writes version n+1 only over version n.
    version BIGINT NOT NULL
);

-- One record per (scope, key): scope is `<credential>:<METHOD>:<route>`. In flight while
-- `answer_sealed` is NULL (claimed by `token` until `lease_until`, real time); answered once
-- the effect committed with it. The answer is sealed (it may hold a signing secret).
CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    token TEXT NOT NULL,
    lease_until BIGINT NOT NULL,
    answer_key_id TEXT NULL,
    answer_sealed TEXT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (scope, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

ALTER TABLE webhook_deliveries ADD COLUMN grant_id TEXT NULL;
-- The delivery log of one grant, newest first.
-- Partial: a company's own deliveries (most of them) never enter it, so their claims and
-- attempt records do not pay for one more index.
CREATE INDEX webhook_deliveries_grant_log
    ON webhook_deliveries (company_id, grant_id, created_at DESC, id DESC)
    WHERE grant_id IS NOT NULL;
