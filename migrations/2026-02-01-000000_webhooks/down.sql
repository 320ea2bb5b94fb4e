DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_callbacks;
ALTER TABLE payment_links DROP COLUMN event_sequence;
