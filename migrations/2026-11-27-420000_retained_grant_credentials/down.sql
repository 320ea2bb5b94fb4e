ALTER TABLE grant_webhook_subscriptions DROP COLUMN retained_at;
ALTER TABLE grant_webhook_subscriptions DROP COLUMN retained_url;
ALTER TABLE grant_webhook_subscriptions DROP COLUMN retained_sealed;
ALTER TABLE grant_webhook_subscriptions DROP COLUMN retained_key_id;
