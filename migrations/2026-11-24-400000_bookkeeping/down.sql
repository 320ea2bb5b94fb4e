DROP TABLE expense_versions;
DROP TABLE expenses;
DROP TABLE wallet_activities;
DROP TABLE contact_wallets;
DROP INDEX contacts_email_key;
CREATE UNIQUE INDEX contacts_email_key ON contacts (company_id, kind, email_key);
