DROP TABLE native_platforms;
