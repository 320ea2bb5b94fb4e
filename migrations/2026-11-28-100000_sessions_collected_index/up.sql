-- The dashboard overview adds up a company's completed sessions of the last 30 days by day and
-- invoice asset in the database (`company_collected`). With the invoice asset and amount in the
-- index beside (company_id, status, updated_at, id), that read is a range of the index alone,
-- never the table: with 100,000 sessions in a company, the table rows behind the range were
-- most of the overview's time (bench/dashboard.py). The underpaid list reads the same range
-- newest first as before. Same SQL on SQLite and PostgreSQL.
DROP INDEX payment_sessions_company_status;
CREATE INDEX payment_sessions_company_status
    ON payment_sessions (company_id, status, updated_at, id, invoice_asset, invoice_amount);
