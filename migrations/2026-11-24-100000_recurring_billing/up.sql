-- Recurring billing: contacts (customers and, later, vendors), subscriptions and their billing
-- cycles. Same columns and indexes on SQLite and PostgreSQL (ids TEXT, instants BIGINT unix
-- milliseconds, JSON and decimals TEXT), so one diesel schema serves both backends.

CREATE TABLE contacts (
    id TEXT PRIMARY KEY NOT NULL,
    -- The public id (`cus_...`), unique across companies.
    uid TEXT NOT NULL UNIQUE,
    company_id TEXT NOT NULL REFERENCES companies(id),
    -- customer, vendor
    kind TEXT NOT NULL,
    -- As first given, trimmed.
    email TEXT NOT NULL,
    -- The upsert key: the e-mail trimmed and lower-cased (`Contact::email_key`).
    email_key TEXT NOT NULL,
    name TEXT NULL,
    client_id TEXT NULL,
    -- JSON object.
    metadata TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
-- One contact per e-mail key within a company and kind: what makes concurrent upserts of one
-- e-mail make one contact.
CREATE UNIQUE INDEX contacts_email_key ON contacts (company_id, kind, email_key);
-- The newest contacts of a company and kind.
CREATE INDEX contacts_list ON contacts (company_id, kind, created_at DESC, id DESC);

CREATE TABLE subscriptions (
    id TEXT PRIMARY KEY NOT NULL,
    -- The public id (`sub_...`), unique across companies.
    uid TEXT NOT NULL UNIQUE,
    company_id TEXT NOT NULL REFERENCES companies(id),
    contact_id TEXT NOT NULL REFERENCES contacts(id),
    -- active, paused, overdue, cancelled
    status TEXT NOT NULL,
    customer_email TEXT NOT NULL,
    label TEXT NOT NULL,
    description TEXT NULL,
    amount_usd TEXT NOT NULL,
    settlement_asset TEXT NOT NULL,
    -- The interval: its cadence and its count of units between cycles (1..24).
    cadence TEXT NOT NULL,
    interval_count BIGINT NOT NULL,
    start_at BIGINT NOT NULL,
    -- IANA time zone name.
    zone TEXT NOT NULL,
    -- JSON object.
    metadata TEXT NOT NULL,
    -- api_key, user, grant, anonymous (as for payment links); the grant also in its own column.
    created_by_kind TEXT NOT NULL,
    created_by_id TEXT NULL,
    grant_id TEXT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    next_sequence BIGINT NOT NULL,
    -- When the scheduler has work on it next (company clock); NULL: nothing until a person acts.
    next_run_at BIGINT NULL,
    -- The scheduler's claim (real time); NULL when not leased.
    lease_until BIGINT NULL
);
-- The scheduler's claim (`next_run_at <= now ORDER BY next_run_at, id LIMIT n`) reads only due
-- rows, in order; paused and cancelled subscriptions (no next run) are not in it.
CREATE INDEX subscriptions_due
    ON subscriptions (next_run_at, id) WHERE next_run_at IS NOT NULL;
-- The newest subscriptions of a company, and of one OAuth grant.
CREATE INDEX subscriptions_list ON subscriptions (company_id, created_at DESC, id DESC);
CREATE INDEX subscriptions_grant
    ON subscriptions (company_id, grant_id, created_at DESC, id DESC) WHERE grant_id IS NOT NULL;
-- The subscriptions of one contact (the portal).
CREATE INDEX subscriptions_contact ON subscriptions (contact_id, created_at DESC, id DESC);

CREATE TABLE subscription_cycles (
    id TEXT PRIMARY KEY NOT NULL,
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    company_id TEXT NOT NULL REFERENCES companies(id),
    -- 0, 1, 2, ...
    sequence BIGINT NOT NULL,
    due_at BIGINT NOT NULL,
    amount_usd TEXT NOT NULL,
    -- scheduled, open, paid, overdue, cancelled
    status TEXT NOT NULL,
    payment_link_id TEXT NULL REFERENCES payment_links(id),
    payment_link_uid TEXT NULL,
    issued_at BIGINT NULL,
    paid_at BIGINT NULL,
    -- The last reminder stage handled (0: none yet).
    reminders BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
-- A cycle is never created twice; also the cycles of a subscription in order.
CREATE UNIQUE INDEX subscription_cycles_sequence
    ON subscription_cycles (subscription_id, sequence);
-- The cycle of a link (a completed session pays it, in the checkout write).
CREATE INDEX subscription_cycles_link
    ON subscription_cycles (payment_link_id) WHERE payment_link_id IS NOT NULL;
