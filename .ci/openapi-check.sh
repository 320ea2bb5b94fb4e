#!/usr/bin/env bash
# The OpenAPI document against the server it describes: build and start the real `pay-server`
# on a fresh SQLite database (loopback only), bootstrap a company for an API key and a partner
# for an onboarding secret (sent to the onboarding route alone, .ci/schemathesis.toml), and run
# schemathesis (pinned) against the served document with that key: examples, coverage and
# fuzzing phases, 30 examples per operation, every check, bounded by --max-time. Test data made
# through the API (.ci/openapi_fixtures.py) feeds the path parameters half of the time. Any
# failed check or 5xx fails the script. The server is stopped and its files removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION="4.32.5"
MAX_TIME="${PAY_OPENAPI_CHECK_MAX_TIME:-150}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/pay-ci-target}"

if [ "$(schemathesis --version 2>/dev/null)" != "schemathesis, version $SCHEMATHESIS_VERSION" ]; then
  pip install --quiet "schemathesis==$SCHEMATHESIS_VERSION"
fi

cargo build --quiet -p pay-server
bin="$CARGO_TARGET_DIR/debug/pay-server"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
base="http://127.0.0.1:$port"
export PAY_DATABASE_URL="sqlite://$work/pay.db"
export PAY_LISTEN="127.0.0.1:$port"
export PAY_DEMO=false
export PAY_LOG="${PAY_LOG:-warn}"

email="openapi-check@example.com"
password="openapi check password 1"
creds="$("$bin" admin bootstrap --company "OpenAPI check" --email "$email" --password "$password")"
field() { printf '%s' "$creds" | python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }
key_id="$(field keyId)"
key_secret="$(field keySecret)"
form_key="$(field formKeyId)"
# A partner's onboarding secret, for the onboarding draft route (its own bearer credential).
PAY_ONBOARDING_SECRET="$("$bin" admin create-partner --name "OpenAPI check partner" \
  | python3 -c "import json, sys; print(json.load(sys.stdin)['onboardingSecret'])")"
export PAY_ONBOARDING_SECRET

"$bin" serve >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fsS "$base/readyz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; exit 1; }
  sleep 0.1
done

# Test data made through the API (a link with a session, an anonymous link, a callback and a
# delivery), offered to schemathesis for the path parameters beside generated values.
root="$(pwd)"
cp .ci/schemathesis.toml "$work/schemathesis.toml"
python3 .ci/openapi_fixtures.py "$base" "$key_id" "$key_secret" "$form_key" "$email" "$password" \
  >>"$work/schemathesis.toml"

status=0
# From the scratch directory: schemathesis keeps a `.schemathesis/` cache in the working one.
cd "$work"
SCHEMATHESIS_HOOKS="$root/.ci/schemathesis_hooks.py" schemathesis --config-file "$work/schemathesis.toml" run "$base/api/partner/v1/openapi.json" \
  --url "$base" \
  --header "x-svc-key-id: $key_id" \
  --header "x-svc-key-secret: $key_secret" \
  --phases examples,coverage,fuzzing \
  --max-examples 30 \
  --checks all \
  --max-time "$MAX_TIME" \
  --workers 1 \
  --seed "${PAY_OPENAPI_CHECK_SEED:-1}" \
  --report junit --report-dir "$work/report" || status=$?
if [ "$status" -ne 0 ]; then
  echo "schemathesis found failures (exit $status); server log tail:" >&2
  tail -n 50 "$work/server.log" >&2
fi
exit "$status"
