-- The reconciliation of settlements asks, per completed session, whether a wallet activity
-- names it (`BookkeepingStore::unrecorded_settlements`); without this index that is a scan of
-- every activity per session. Same SQL on SQLite and PostgreSQL.
CREATE INDEX wallet_activities_session ON wallet_activities (payment_session_id);
