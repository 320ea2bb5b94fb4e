-- Partner onboarding: partners (server configuration, `admin create-partner`), their onboarding
-- secret stored as a digest only; drafts, each a company a merchant claims once through the
-- claim URL (its token as a digest to find it, and sealed so that a retry of the draft call
-- answers the same URL). `company_id` has no foreign key: the claim sets it before it inserts
-- the company, in the same transaction.
CREATE TABLE onboarding_partners (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    secret_digest TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);

CREATE TABLE onboarding_drafts (
    id TEXT PRIMARY KEY NOT NULL,
    partner_id TEXT NOT NULL REFERENCES onboarding_partners(id),
    idempotency_key TEXT NOT NULL,
    company_name TEXT NOT NULL,
    company_website TEXT NULL,
    oauth_client_id TEXT NULL,
    oauth_redirect_uri TEXT NULL,
    oauth_scope TEXT NULL,
    oauth_state TEXT NULL,
    oauth_code_challenge TEXT NULL,
    claim_digest TEXT NOT NULL UNIQUE,
    claim_key_id TEXT NOT NULL,
    claim_sealed TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    claimed_at BIGINT NULL,
    company_id TEXT NULL,
    UNIQUE (partner_id, idempotency_key)
);
