DROP TABLE rate_hits;
DROP TABLE link_webhooks;
-- The reserved company goes with everything it owns (anonymous links and their deliveries).
DELETE FROM webhook_attempts WHERE delivery_id IN (
    SELECT id FROM webhook_deliveries WHERE company_id = '00000000-0000-0000-0000-000000000000'
);
DELETE FROM webhook_deliveries WHERE company_id = '00000000-0000-0000-0000-000000000000';
DELETE FROM webhook_callbacks WHERE company_id = '00000000-0000-0000-0000-000000000000';
DELETE FROM payment_links WHERE company_id = '00000000-0000-0000-0000-000000000000';
DELETE FROM pay_settings WHERE company_id = '00000000-0000-0000-0000-000000000000';
DELETE FROM companies WHERE id = '00000000-0000-0000-0000-000000000000';
