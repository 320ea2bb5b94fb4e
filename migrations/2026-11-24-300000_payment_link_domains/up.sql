-- A company's verified payment-link domain (`pay-server admin verify-domain`): its hosted
-- checkout URLs (`publicUrl`) and customer portal URLs are on it when set. Lower-case host
-- name; one company per domain.
ALTER TABLE companies ADD COLUMN payment_link_domain TEXT NULL;
CREATE UNIQUE INDEX companies_payment_link_domain
    ON companies (payment_link_domain) WHERE payment_link_domain IS NOT NULL;
