-- OAuth 2.0 for partner applications: applications, one grant per company and application,
-- token families, one-time codes, rotating refresh tokens, access tokens (all secrets as
-- SHA-256 digests), and the DPoP jti replay store. Same columns and indexes on SQLite and
-- PostgreSQL (ids TEXT, instants BIGINT unix milliseconds, lists TEXT).
CREATE TABLE oauth_applications (
    id TEXT PRIMARY KEY NOT NULL,
    client_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    -- JSON array of exact redirect URIs.
    redirect_uris TEXT NOT NULL,
    -- Space-separated scope names.
    scopes TEXT NOT NULL,
    -- confidential, public
    client_type TEXT NOT NULL,
    secret_digest TEXT NULL,
    dpop_bound BOOLEAN NOT NULL,
    refresh_ttl_ms BIGINT NOT NULL,
    -- Native installations (next issue): the platform template.
    template TEXT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE oauth_grants (
    id TEXT PRIMARY KEY NOT NULL,
    company_id TEXT NOT NULL REFERENCES companies(id),
    application_id TEXT NOT NULL REFERENCES oauth_applications(id),
    user_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    -- Native installations (next issue): the key thumbprint the grant is bound to.
    bound_jkt TEXT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    revoked_at BIGINT NULL
);
-- One grant per company and application.
CREATE UNIQUE INDEX oauth_grants_company_application
    ON oauth_grants (company_id, application_id);

CREATE TABLE oauth_families (
    id TEXT PRIMARY KEY NOT NULL,
    grant_id TEXT NOT NULL REFERENCES oauth_grants(id),
    created_at BIGINT NOT NULL,
    revoked_at BIGINT NULL
);

CREATE TABLE oauth_codes (
    digest TEXT PRIMARY KEY NOT NULL,
    family_id TEXT NOT NULL REFERENCES oauth_families(id),
    application_id TEXT NOT NULL REFERENCES oauth_applications(id),
    redirect_uri TEXT NOT NULL,
    scopes TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    dpop_jkt TEXT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT NULL
);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

CREATE TABLE oauth_refresh_tokens (
    digest TEXT PRIMARY KEY NOT NULL,
    family_id TEXT NOT NULL REFERENCES oauth_families(id),
    grant_id TEXT NOT NULL REFERENCES oauth_grants(id),
    application_id TEXT NOT NULL REFERENCES oauth_applications(id),
    scopes TEXT NOT NULL,
    jkt TEXT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    spent_at BIGINT NULL,
    revoked_at BIGINT NULL
);
CREATE INDEX oauth_refresh_tokens_expiry ON oauth_refresh_tokens (expires_at);

CREATE TABLE oauth_access_tokens (
    digest TEXT PRIMARY KEY NOT NULL,
    family_id TEXT NOT NULL REFERENCES oauth_families(id),
    grant_id TEXT NOT NULL REFERENCES oauth_grants(id),
    application_id TEXT NOT NULL REFERENCES oauth_applications(id),
    scopes TEXT NOT NULL,
    jkt TEXT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT NULL
);
CREATE INDEX oauth_access_tokens_expiry ON oauth_access_tokens (expires_at);

-- DPoP proofs seen: a replay of (htu, sha256(jti)) fails on the primary key, even two at once.
CREATE TABLE dpop_jtis (
    htu TEXT NOT NULL,
    jti_digest TEXT NOT NULL,
    keep_until BIGINT NOT NULL,
    PRIMARY KEY (htu, jti_digest)
);
CREATE INDEX dpop_jtis_keep_until ON dpop_jtis (keep_until);
