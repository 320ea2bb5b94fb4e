-- The event log: one row per event queued for a callback (the group of its deliveries, whose
-- `group_id` is the event's id), with the envelope its first delivery carried, so a receiver can
-- page through what it missed (GET /api/partner/v1/pay/events). Written in the transaction that
-- inserts the event's deliveries; kept PAY_EVENTS_RETENTION_DAYS (30 by default) by the pruning
-- job. Same SQL on SQLite and PostgreSQL (ids TEXT, instants BIGINT unix milliseconds).
CREATE TABLE webhook_events (
    id TEXT PRIMARY KEY NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    -- The grant whose subscription receives it (its link was made by that grant).
    grant_id TEXT NULL,
    -- Short event name, as webhook_deliveries.event.
    event TEXT NOT NULL,
    payment_link_uid TEXT NULL,
    subscription_uid TEXT NULL,
    body TEXT NOT NULL,
    -- The envelope's createdAt (the company's clock).
    created_at BIGINT NOT NULL
);

-- A company's log newest first, and a grant's (partial, as webhook_deliveries_grant_log).
CREATE INDEX webhook_events_log ON webhook_events (company_id, created_at DESC, id DESC);
CREATE INDEX webhook_events_grant_log
    ON webhook_events (company_id, grant_id, created_at DESC, id DESC)
    WHERE grant_id IS NOT NULL;
-- The pruning job's range.
CREATE INDEX webhook_events_created ON webhook_events (created_at);
-- The deliveries of an event (its ids and whether one succeeded).
CREATE INDEX webhook_deliveries_group ON webhook_deliveries (group_id);

-- The events of the deliveries already queued: each group's first delivery of origin `event`.
INSERT INTO webhook_events
    (id, company_id, grant_id, event, payment_link_uid, subscription_uid, body, created_at)
SELECT d.group_id, d.company_id, d.grant_id, d.event, d.payment_link_uid, d.subscription_uid,
       d.body, d.created_at
FROM webhook_deliveries d
WHERE d.origin = 'event'
  AND d.id = (SELECT MIN(x.id) FROM webhook_deliveries x
              WHERE x.group_id = d.group_id AND x.origin = 'event');
