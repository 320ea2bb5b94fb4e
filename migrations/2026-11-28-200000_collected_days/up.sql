-- The dashboard overview's collected figures, rolled up by day: per company, UTC day and
-- invoice asset, how many completed payment sessions and their invoice amounts added up.
-- A row is changed in the same transaction as the session write that completes a session (or
-- that moves or reverses a completed one): `CheckoutStore::write_link_event` on `DieselStore`,
-- the one write of `payment_sessions`. The overview reads at most 30 days times the company's
-- assets of these rows (a range of the primary key), however many sessions the company has.
--
-- The sum is exact and needs no decimal type: an amount (`[digits][.digits]`, at most 18
-- integer and 18 fractional digits) is cut into four groups of 9 digits, each added up as an
-- integer (a BIGINT holds 9,223,372,036 sums of 9-digit groups):
--   amount = units_high * 10^9 + units_low + fraction_high * 10^-9 + fraction_low * 10^-18
-- The store puts the groups together when it reads a row (and carries between them);
-- `fraction_digits` is the most fractional digits of any amount added (the shown scale).
-- A day is `updated_at` (unix milliseconds) divided by 86,400,000. Same SQL on SQLite and
-- PostgreSQL.
CREATE TABLE collected_days (
    company_id TEXT NOT NULL REFERENCES companies(id),
    day BIGINT NOT NULL,
    invoice_asset TEXT NOT NULL,
    payments BIGINT NOT NULL,
    units_high BIGINT NOT NULL,
    units_low BIGINT NOT NULL,
    fraction_high BIGINT NOT NULL,
    fraction_low BIGINT NOT NULL,
    fraction_digits BIGINT NOT NULL,
    PRIMARY KEY (company_id, day, invoice_asset)
);

-- The sessions completed before this step, added up the same way: the amount's integer part
-- left-padded and its fraction right-padded to 18 digits, then cut at the 9th.
INSERT INTO collected_days (company_id, day, invoice_asset, payments, units_high, units_low,
                            fraction_high, fraction_low, fraction_digits)
SELECT company_id, day, invoice_asset, COUNT(*),
       SUM(CAST(substr(units, 1, 9) AS BIGINT)), SUM(CAST(substr(units, 10, 9) AS BIGINT)),
       SUM(CAST(substr(fraction, 1, 9) AS BIGINT)), SUM(CAST(substr(fraction, 10, 9) AS BIGINT)),
       MAX(fraction_digits)
FROM (
    SELECT company_id, invoice_asset, day,
           substr('000000000000000000' || whole, length(whole) + 1, 18) AS units,
           substr(part || '000000000000000000', 1, 18) AS fraction,
           length(part) AS fraction_digits
    FROM (
        SELECT company_id, invoice_asset, updated_at / 86400000 AS day,
               CASE WHEN dot = 0 THEN invoice_amount ELSE substr(invoice_amount, 1, dot - 1) END AS whole,
               CASE WHEN dot = 0 THEN '' ELSE substr(invoice_amount, dot + 1) END AS part
        FROM (
            -- The dot's position: what is left once the trailing digits are cut (0: none).
            SELECT company_id, invoice_asset, updated_at, invoice_amount,
                   length(rtrim(invoice_amount, '0123456789')) AS dot
            FROM payment_sessions
            WHERE status = 'complete'
        ) amounts
    ) parts
) groups
GROUP BY company_id, day, invoice_asset;

-- The overview no longer reads amounts from the sessions: the index of the company's sessions
-- by status and last change goes back to its four columns (the underpaid list's read).
DROP INDEX payment_sessions_company_status;
CREATE INDEX payment_sessions_company_status
    ON payment_sessions (company_id, status, updated_at, id);
