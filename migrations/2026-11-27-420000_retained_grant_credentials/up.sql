-- An official native installation's disconnect keeps its grant subscription's endpoint and a
-- copy of its signing secret, sealed apart from the live one (associated data
-- `grant_webhook_subscriptions:retained:<id>`), for the late payment-status events of the
-- links issued before; `retained_at` is the disconnect on the company's clock.
ALTER TABLE grant_webhook_subscriptions ADD COLUMN retained_key_id TEXT NULL;
ALTER TABLE grant_webhook_subscriptions ADD COLUMN retained_sealed TEXT NULL;
ALTER TABLE grant_webhook_subscriptions ADD COLUMN retained_url TEXT NULL;
ALTER TABLE grant_webhook_subscriptions ADD COLUMN retained_at BIGINT NULL;
