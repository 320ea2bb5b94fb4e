-- Per-endpoint fairness and the circuit breaker of the webhook dispatcher.
--
-- An endpoint (a company's URL) whose attempts fail has a row here until its next success;
-- `paused_until` (real time, ms) in the future means its deliveries are not claimed. Same SQL
-- on SQLite and PostgreSQL.
CREATE TABLE webhook_endpoint_circuits (
    company_id TEXT NOT NULL REFERENCES companies(id),
    url TEXT NOT NULL,
    failing_since BIGINT NOT NULL,
    last_failure_at BIGINT NOT NULL,
    failures BIGINT NOT NULL,
    paused_until BIGINT NULL,
    pauses BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (company_id, url)
);

-- A claim counts what is leased now of a probing endpoint (one probe at a time over every
-- dispatcher); only claimed, unrecorded deliveries have a lease (recording clears it), so this
-- index holds the few in flight.
CREATE INDEX webhook_deliveries_leased
    ON webhook_deliveries (lease_until) WHERE lease_until IS NOT NULL;
