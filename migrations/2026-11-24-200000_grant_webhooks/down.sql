DROP INDEX webhook_deliveries_grant_log;
ALTER TABLE webhook_deliveries DROP COLUMN grant_id;
DROP TABLE idempotency_keys;
DROP TABLE grant_webhook_subscriptions;
