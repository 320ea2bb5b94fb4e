DROP INDEX webhook_deliveries_leased;
DROP TABLE webhook_endpoint_circuits;
