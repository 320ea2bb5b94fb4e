ALTER TABLE payment_links DROP COLUMN grant_subscription_id;
