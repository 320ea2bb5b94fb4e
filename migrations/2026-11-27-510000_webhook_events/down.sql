DROP INDEX webhook_deliveries_group;
DROP TABLE webhook_events;
