-- Per-company sandbox test clocks, and outbox leases kept apart from due times.
--
-- A company's test clock is real time plus `test_clock_offset_ms` (0 until moved). What the
-- company owns and schedules (link, quote and session expiry, retries falling due) is compared
-- against its own clock; security windows and claim leases always use real time.
ALTER TABLE companies ADD COLUMN test_clock_offset_ms BIGINT NOT NULL DEFAULT 0;
-- The largest offset is read before each claim; only moved clocks are in this index.
CREATE INDEX companies_test_clock ON companies (test_clock_offset_ms) WHERE test_clock_offset_ms > 0;

-- A claim used to move `next_attempt_at` to the lease's end, so a company clock moved past it
-- released the lease. The lease (real time) now has its own column; `next_attempt_at` stays the
-- due time on the company's clock.
ALTER TABLE webhook_deliveries ADD COLUMN lease_until BIGINT NULL;
ALTER TABLE mail_outbox ADD COLUMN lease_until BIGINT NULL;

-- Login failures are counted as hits of a rate-limit bucket now (one atomic `hit` for every
-- limit); the old table goes. A failure recorded there before the upgrade is forgotten.
DROP TABLE login_failures;
