-- wrk: GET with the cookie from COOKIE (the dashboard's session, `pay_session=...`).
wrk.headers["Cookie"] = os.getenv("COOKIE")
