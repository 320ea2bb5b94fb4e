"""Test data for .ci/openapi-check.sh: a payment link with a customer e-mail and a session on it,
an anonymous link, the company callback, a subscription (with its customer) and a sandbox
outgoing transfer, made through the API itself. Prints the
schemathesis dictionaries that offer their identifiers for the path parameters (half of the
draws; the other half stays generated), so the run reaches the routes past their 404.

Usage: openapi_fixtures.py BASE_URL KEY_ID KEY_SECRET FORM_KEY EMAIL PASSWORD
"""

import json
import sys
import urllib.request

base, key_id, key_secret, form_key, email, password = sys.argv[1:7]
KEY = {"x-svc-key-id": key_id, "x-svc-key-secret": key_secret}


def call(method, path, body=None, headers=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("content-type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    with urllib.request.urlopen(req) as res:
        return json.loads(res.read() or b"null"), res.headers


link, _ = call(
    "POST",
    "/api/partner/v1/pay/payment-links",
    {"amount": "12.50", "title": "OpenAPI check", "customerEmail": "payer@example.com"},
    KEY,
)
uid = link["uid"]
view, _ = call("GET", f"/api/public/checkout/{uid}")
session, _ = call(
    "POST",
    f"/api/public/checkout/{uid}/sessions",
    {"payAsset": view["payAssets"][0]["assetIdentifier"]},
)
anonymous, _ = call(
    "POST",
    "/api/public/anonymous-payment-links",
    {
        "amount": "1",
        "settlement": {
            "priorities": [
                {
                    "asset": view["payAssets"][0]["assetIdentifier"],
                    "address": "0x52908400098527886E0F7030069857D2E4169EE7",
                }
            ]
        },
    },
)
signed_in, headers = call("POST", "/auth/login", {"email": email, "password": password})
cookie = headers["set-cookie"].split(";")[0]
company = call("GET", "/api/partner/v1/companies", headers={"cookie": cookie})[0]["data"][0]["id"]
call(
    "PUT",
    f"/api/partner/v1/companies/{company}/payment-callback",
    {"url": "https://hooks.example.com/pay"},
    {"cookie": cookie, "x-csrf-token": signed_in["csrfToken"]},
)
sent, _ = call("POST", "/api/partner/v1/pay/webhook-requests/test", {"paymentLinkUid": uid}, KEY)

subscription, _ = call(
    "POST",
    "/api/partner/v1/pay/subscriptions",
    {
        "customerEmail": "subscriber@example.com",
        "label": "OpenAPI check plan",
        "amountUsd": "9.99",
        "cadence": "monthly",
        "timezone": "Europe/Berlin",
    },
    KEY,
)
customers, _ = call("GET", "/api/partner/v1/pay/customers", headers=KEY)
outgoing, _ = call(
    "POST",
    "/api/partner/v1/pay/sandbox/wallet-activity/outgoing",
    {
        "chain": "eip155:8453",
        "txHash": "0x" + "5c" * 32,
        "logIndex": 0,
        "asset": "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        "amount": "12.5",
        "toAddress": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
    },
    KEY,
)

# An evidence file (raw body; `call` sends JSON, so a request of its own).
upload = urllib.request.Request(
    base + "/api/partner/v1/pay/bookkeeping/files?filename=openapi-check.pdf",
    data=b"%PDF-1.4\n% openapi check\n%%EOF\n",
    method="POST",
)
upload.add_header("content-type", "application/octet-stream")
for k, v in KEY.items():
    upload.add_header(k, v)
with urllib.request.urlopen(upload) as res:
    evidence = json.loads(res.read())

dictionaries = {
    "uids": [uid, anonymous["uid"], subscription["uid"]],
    "customers": [customers["data"][0]["id"], customers["data"][0]["uid"]],
    "activities": [outgoing["id"], outgoing["key"]],
    "files": [evidence["id"]],
    "sessions": [session["id"]],
    "deliveries": [d["id"] for d in sent["data"]],
    "form-keys": [form_key],
}
for name, values in dictionaries.items():
    print(f"[dictionaries.{name}]")
    print("values = " + json.dumps(values))
print("[parameters]")
for param, name in [
    ("path.uid", "uids"),
    ("path.sessionId", "sessions"),
    ("path.id", "deliveries"),
    ("path.payKeyId", "form-keys"),
    ("path.customerId", "customers"),
    ("path.activityId", "activities"),
    ("path.fileId", "files"),
]:
    print(f'"{param}" = {{ dictionary = "{name}", probability = 0.5 }}')
