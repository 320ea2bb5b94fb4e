DROP INDEX payment_sessions_company_status;
CREATE INDEX payment_sessions_company_status
    ON payment_sessions (company_id, status, updated_at, id, invoice_asset, invoice_amount);
DROP TABLE collected_days;
