DROP TABLE timeline_events;
DROP TABLE processor_events;
DROP TABLE payment_sessions;
ALTER TABLE payment_links DROP COLUMN paid_session_id;
