DROP INDEX companies_payment_link_domain;
ALTER TABLE companies DROP COLUMN payment_link_domain;
