-- A link created with an OAuth token records its grant (grant_id) and the grant's webhook
-- subscription that was active then (NULL: none, or disabled). Native installations will
-- check late payment events against it.
ALTER TABLE payment_links ADD COLUMN grant_subscription_id TEXT NULL;
