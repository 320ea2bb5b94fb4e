CREATE TABLE login_failures (
    id TEXT PRIMARY KEY NOT NULL,
    throttle_key TEXT NOT NULL,
    failed_at BIGINT NOT NULL
);
CREATE INDEX login_failures_key_time ON login_failures (throttle_key, failed_at);
ALTER TABLE mail_outbox DROP COLUMN lease_until;
ALTER TABLE webhook_deliveries DROP COLUMN lease_until;
DROP INDEX companies_test_clock;
ALTER TABLE companies DROP COLUMN test_clock_offset_ms;
