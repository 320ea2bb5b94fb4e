-- wrk: GET with the key from KEY_ID / KEY_SECRET.
wrk.headers["x-svc-key-id"] = os.getenv("KEY_ID")
wrk.headers["x-svc-key-secret"] = os.getenv("KEY_SECRET")
