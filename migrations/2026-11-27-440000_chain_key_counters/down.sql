DROP TABLE chain_key_counters;
