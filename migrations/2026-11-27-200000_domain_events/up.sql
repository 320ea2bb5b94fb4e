-- The outbox of domain events: what one context decided that others react to (a completed
-- session pays its subscription cycle and records its incoming transfer; a stopped link ends its
-- sessions). The deciding write inserts the row in its own transaction; each reacting write
-- records its consumption (`consumed_events`, one row per event and consumer), and the event is
-- then done (`done_at`). `due_at` and `lease_until` are real time (ms): a row not done is taken
-- by the drain once `due_at` has come, leased like the other outboxes. Same SQL on SQLite and
-- PostgreSQL.
CREATE TABLE domain_events (
    id TEXT PRIMARY KEY NOT NULL,
    company_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    due_at BIGINT NOT NULL,
    lease_until BIGINT NULL,
    done_at BIGINT NULL
);

-- The drain's claim reads only what is not done, oldest due first.
CREATE INDEX domain_events_pending ON domain_events (due_at, id) WHERE done_at IS NULL;
-- Housekeeping forgets what was done a day ago.
CREATE INDEX domain_events_done ON domain_events (done_at) WHERE done_at IS NOT NULL;

CREATE TABLE consumed_events (
    event_id TEXT NOT NULL,
    consumer TEXT NOT NULL,
    consumed_at BIGINT NOT NULL,
    PRIMARY KEY (event_id, consumer)
);
