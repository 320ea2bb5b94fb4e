-- The OAuth revocation generation: one counter that every update or delete of an access
-- token, a token family or a grant moves on, in the same transaction (triggers, installed by
-- the store after the migrations, since their syntax differs between SQLite and PostgreSQL).
-- A server instance may serve a DPoP-bound token from its own copy only while the counter it
-- read with the copy is still the counter now (docs/security.md, "DPoP proofs").
CREATE TABLE oauth_generation (
    id BIGINT NOT NULL PRIMARY KEY,
    n BIGINT NOT NULL
);
INSERT INTO oauth_generation (id, n) VALUES (1, 0);
