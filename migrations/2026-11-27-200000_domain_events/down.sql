DROP TABLE consumed_events;
DROP INDEX domain_events_done;
DROP INDEX domain_events_pending;
DROP TABLE domain_events;
