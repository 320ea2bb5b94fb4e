-- Keyed token requests of native installations (token-request recovery): one record per
-- client and `Idempotency-Key` (its SHA-256), claimed in flight by `token` until
-- `lease_until` (real time), answered by the issuance's transaction with the tokens it issued
-- and the token response sealed (`answer_sealed`, AEAD with the server's key, associated data
-- = client, key digest and request digest). The answer is erased (set NULL, the record kept
-- as the key's tombstone for a day) when its refresh token rotates, its family or access
-- token is revoked, the installation's key changes, or its access token expires.
CREATE TABLE oauth_token_requests (
    application_id TEXT NOT NULL REFERENCES oauth_applications(id),
    key_digest TEXT NOT NULL,
    request_digest TEXT NOT NULL,
    token TEXT NOT NULL,
    lease_until BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    answered BOOLEAN NOT NULL,
    company_id TEXT NULL,
    grant_id TEXT NULL,
    family_id TEXT NULL,
    access_digest TEXT NULL,
    refresh_digest TEXT NULL,
    answer_key_id TEXT NULL,
    answer_sealed TEXT NULL,
    answer_until BIGINT NULL,
    PRIMARY KEY (application_id, key_digest)
);
CREATE INDEX oauth_token_requests_created ON oauth_token_requests (created_at);
-- The erasures find the held answers only: partial indexes stay as small as they are.
CREATE INDEX oauth_token_requests_refresh ON oauth_token_requests (refresh_digest)
    WHERE answer_sealed IS NOT NULL;
CREATE INDEX oauth_token_requests_access ON oauth_token_requests (access_digest)
    WHERE answer_sealed IS NOT NULL;
CREATE INDEX oauth_token_requests_family ON oauth_token_requests (family_id)
    WHERE answer_sealed IS NOT NULL;
CREATE INDEX oauth_token_requests_until ON oauth_token_requests (answer_until)
    WHERE answer_sealed IS NOT NULL;
