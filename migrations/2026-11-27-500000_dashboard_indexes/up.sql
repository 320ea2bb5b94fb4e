-- The dashboard's overview reads a company's sessions in one status changed since a time
-- (completed ones of the last 30 days, the underpaid ones), newest change first: a range of
-- this index read backwards, not a scan of the company's sessions. Same SQL on SQLite and
-- PostgreSQL.
CREATE INDEX payment_sessions_company_status
    ON payment_sessions (company_id, status, updated_at, id);
