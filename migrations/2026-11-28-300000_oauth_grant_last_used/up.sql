-- The dashboard's Developers screen shows when each of a company's grants was last used: the
-- newest refresh token issued for it (one comes with every code exchange and every refresh).
-- This index makes that one seek per grant instead of a scan of every company's tokens. Same
-- SQL on SQLite and PostgreSQL.
CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id, created_at);
