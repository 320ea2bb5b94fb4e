-- Bookkeeping: contacts get roles (one contact per e-mail within a company: customer, vendor
-- or both, in `kind`), contacts' known wallet addresses, the merchant's wallet activity, and at
-- most one expense per activity with every save versioned. Same columns and indexes on SQLite
-- and PostgreSQL (ids TEXT, instants BIGINT unix milliseconds, JSON and decimals TEXT).

-- Until now the e-mail key was unique per company AND kind, and only customers were ever
-- written; from now on a vendor with a customer's e-mail is that contact, with both roles.
DROP INDEX contacts_email_key;
CREATE UNIQUE INDEX contacts_email_key ON contacts (company_id, email_key);

CREATE TABLE contact_wallets (
    contact_id TEXT NOT NULL REFERENCES contacts(id),
    company_id TEXT NOT NULL REFERENCES companies(id),
    -- As first given.
    address TEXT NOT NULL,
    -- `customers::wallet_key`: 0x hex lower-cased, other encodings as given.
    address_key TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (contact_id, address_key)
);
-- Which contacts know an address (the suggestion for an outgoing transfer, the search).
CREATE INDEX contact_wallets_key ON contact_wallets (company_id, address_key);

CREATE TABLE wallet_activities (
    id TEXT PRIMARY KEY NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    -- `<chain>:<tx hash>:<log or output index>` (`bookkeeping::ActivityKey`).
    activity_key TEXT NOT NULL,
    chain TEXT NOT NULL,
    tx_hash TEXT NOT NULL,
    log_index BIGINT NOT NULL,
    -- incoming, outgoing
    direction TEXT NOT NULL,
    asset TEXT NOT NULL,
    -- Exact decimal text.
    amount TEXT NOT NULL,
    wallet_address TEXT NOT NULL,
    counterparty_address TEXT NOT NULL,
    -- Company clock.
    occurred_at BIGINT NOT NULL,
    payment_session_id TEXT NULL REFERENCES payment_sessions(id),
    recorded_at BIGINT NOT NULL
);
-- One activity per movement: what makes a report of it again (or concurrently) record nothing.
CREATE UNIQUE INDEX wallet_activities_key ON wallet_activities (company_id, activity_key);
-- The newest activities of a company.
CREATE INDEX wallet_activities_list
    ON wallet_activities (company_id, occurred_at DESC, id DESC);

CREATE TABLE expenses (
    id TEXT PRIMARY KEY NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    -- UNIQUE: an activity has at most one expense, whatever concurrent saves do.
    activity_id TEXT NOT NULL UNIQUE REFERENCES wallet_activities(id),
    contact_id TEXT NOT NULL REFERENCES contacts(id),
    category TEXT NOT NULL,
    description TEXT NOT NULL,
    notes TEXT NULL,
    fiat_currency TEXT NULL,
    fiat_amount TEXT NULL,
    tax_amount TEXT NULL,
    -- Compare-and-set counter: 1 at creation, +1 per save.
    version BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE expense_versions (
    expense_id TEXT NOT NULL REFERENCES expenses(id),
    version BIGINT NOT NULL,
    saved_at BIGINT NOT NULL,
    -- api_key:<partner id>, user:<user id>, grant:<grant id>
    saved_by TEXT NOT NULL,
    -- JSON array of {field, from, to}.
    changes TEXT NOT NULL,
    PRIMARY KEY (expense_id, version)
);
