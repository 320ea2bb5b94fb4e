-- The e-mail outbox: one row per mail, written by the request that asks for it and moved by
-- the mailer (claim with a lease, then one compare-and-set per attempt). Same columns and
-- indexes on SQLite and PostgreSQL (ids TEXT, instants BIGINT unix milliseconds, bodies TEXT),
-- so one diesel schema serves both backends.
CREATE TABLE mail_outbox (
    id TEXT PRIMARY KEY NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    link_id TEXT NOT NULL REFERENCES payment_links(id),
    link_uid TEXT NOT NULL,
    -- payment_request
    kind TEXT NOT NULL,
    recipient TEXT NOT NULL,
    subject TEXT NOT NULL,
    text_body TEXT NOT NULL,
    html_body TEXT NOT NULL,
    -- pending, sent, failed
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    -- NULL once terminal.
    next_attempt_at BIGINT NULL,
    last_attempt_at BIGINT NULL,
    -- The last transport error, the recipient's address masked.
    last_error TEXT NULL,
    created_at BIGINT NOT NULL,
    sent_at BIGINT NULL
);

-- The mailer's claim (`next_attempt_at <= now AND status = 'pending' ORDER BY next_attempt_at,
-- id LIMIT n`) reads this in order; terminal mails have no next attempt, so it holds only live
-- ones (the same shape as `webhook_deliveries_due`).
CREATE INDEX mail_outbox_due
    ON mail_outbox (next_attempt_at, id) WHERE next_attempt_at IS NOT NULL;
-- The mails of one link, newest first.
CREATE INDEX mail_outbox_link
    ON mail_outbox (company_id, link_uid, created_at DESC, id DESC);
