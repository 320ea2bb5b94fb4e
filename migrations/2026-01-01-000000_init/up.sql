-- Shared by SQLite and PostgreSQL: ids are TEXT, instants BIGINT unix milliseconds, JSON TEXT,
-- decimals their exact text, so one diesel schema serves both backends.

CREATE TABLE users (
    id TEXT PRIMARY KEY NOT NULL,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE companies (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    picture_url TEXT NULL,
    logo_url TEXT NULL,
    theme TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE memberships (
    user_id TEXT NOT NULL REFERENCES users(id),
    company_id TEXT NOT NULL REFERENCES companies(id),
    role TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, company_id)
);

-- Members of a company (the primary key only serves lookups by user).
CREATE INDEX memberships_company ON memberships (company_id);

CREATE TABLE pay_settings (
    company_id TEXT PRIMARY KEY NOT NULL REFERENCES companies(id),
    status TEXT NOT NULL,
    default_destination_asset TEXT NULL,
    fee_paid_by TEXT NOT NULL,
    skip_quote_acceptance BOOLEAN NOT NULL,
    merchant_surcharge_percent TEXT NOT NULL,
    return_redirect_url TEXT NULL,
    success_redirect_url TEXT NULL,
    failure_redirect_url TEXT NULL,
    underpayment_percent_enabled BOOLEAN NOT NULL,
    underpayment_percent_threshold TEXT NOT NULL,
    underpayment_fixed_enabled BOOLEAN NOT NULL,
    underpayment_fixed_threshold TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE integrations (
    partner_id TEXT PRIMARY KEY NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    key_id TEXT NOT NULL UNIQUE,
    form_key_id TEXT NOT NULL UNIQUE,
    secret_digest TEXT NOT NULL,
    name TEXT NOT NULL,
    app_slug TEXT NOT NULL,
    allowed_origins TEXT NOT NULL,
    enabled BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT NULL
);

CREATE INDEX integrations_company_created ON integrations (company_id, created_at);

CREATE TABLE browser_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    token_digest TEXT NOT NULL UNIQUE,
    csrf_digest TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id),
    company_id TEXT NOT NULL REFERENCES companies(id),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE TABLE login_failures (
    id TEXT PRIMARY KEY NOT NULL,
    throttle_key TEXT NOT NULL,
    failed_at BIGINT NOT NULL
);

CREATE INDEX login_failures_key_time ON login_failures (throttle_key, failed_at);

CREATE TABLE payment_links (
    id TEXT PRIMARY KEY NOT NULL,
    uid TEXT NOT NULL UNIQUE,
    company_id TEXT NOT NULL REFERENCES companies(id),
    status TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    expires_at BIGINT NULL,
    created_by_kind TEXT NOT NULL,
    created_by_id TEXT NULL,
    grant_id TEXT NULL,
    anonymous BOOLEAN NOT NULL
);

-- The list reads these in index order and stops at the limit: no sort step.
CREATE INDEX payment_links_list
    ON payment_links (company_id, anonymous, created_at DESC, id DESC);
CREATE INDEX payment_links_grant_list
    ON payment_links (company_id, grant_id, created_at DESC, id DESC);
