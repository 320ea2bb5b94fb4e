DROP TABLE evidence_files;
