-- wrk: POST a payment link with the key from KEY_ID / KEY_SECRET.
wrk.method = "POST"
wrk.body = '{"amount":"12.50","title":"Bench order","orderId":"bench-1","metadata":{"cart":"mug"}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["x-svc-key-id"] = os.getenv("KEY_ID")
wrk.headers["x-svc-key-secret"] = os.getenv("KEY_SECRET")
