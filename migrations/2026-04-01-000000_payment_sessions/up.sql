-- Payment sessions: one payer's attempt to pay a link, the processor events already applied
-- (each once), and the link's timeline. Same columns and indexes on SQLite and PostgreSQL (ids
-- TEXT, instants BIGINT unix milliseconds, decimals their exact text, JSON TEXT), so one diesel
-- schema serves both backends.

-- The one completed payment of a one-time link: set, together with archiving the link, by the
-- write that completes it, and only while still NULL (compare-and-set), so two sessions can
-- never both pay the same link.
ALTER TABLE payment_links ADD COLUMN paid_session_id TEXT NULL;

CREATE TABLE payment_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    link_id TEXT NOT NULL REFERENCES payment_links(id),
    company_id TEXT NOT NULL REFERENCES companies(id),
    status TEXT NOT NULL,
    previous_status TEXT NULL,
    -- Compare-and-set: a write stores version n+1 only over version n.
    version BIGINT NOT NULL,
    invoice_asset TEXT NOT NULL,
    invoice_amount TEXT NOT NULL,
    selected_sell_asset TEXT NOT NULL,
    required_sell_amount TEXT NOT NULL,
    expected_buy_amount TEXT NOT NULL,
    destination_address TEXT NOT NULL,
    deposit_address TEXT NULL,
    channel_id TEXT NULL,
    composite_channel_id TEXT NULL,
    source_chain TEXT NULL,
    expires_at BIGINT NOT NULL,
    -- A JSON object: received amounts, shortfall, overpayment, late deposits, resolution.
    settlement TEXT NOT NULL,
    error_message TEXT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- A link's sessions by creation (the newest one, the unfinished ones oldest first).
CREATE INDEX payment_sessions_link ON payment_sessions (link_id, created_at, id);
-- The scheduler's due work: unfinished sessions by deadline.
CREATE INDEX payment_sessions_due ON payment_sessions (status, expires_at, id);

-- Processor events already applied: the primary key makes a second application of the same
-- event id fail (and be reported as a duplicate) in the transaction that would apply it. The
-- row is written before the session it names, hence the deferred reference.
CREATE TABLE processor_events (
    event_id TEXT PRIMARY KEY NOT NULL,
    session_id TEXT NULL REFERENCES payment_sessions(id) DEFERRABLE INITIALLY DEFERRED,
    applied_at BIGINT NOT NULL
);

-- A link's timeline (`{id, type, sessionId, createdAt, data}`); `data` is a JSON object.
CREATE TABLE timeline_events (
    id TEXT PRIMARY KEY NOT NULL,
    link_id TEXT NOT NULL REFERENCES payment_links(id),
    session_id TEXT NULL REFERENCES payment_sessions(id),
    type TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    data TEXT NOT NULL
);

-- The timeline of a link, oldest first.
CREATE INDEX timeline_events_link ON timeline_events (link_id, created_at, id);
