"""A2S end to end: `hearth serve --registry` against local HTTPS services whose CA the test makes
(tests/integration/a2s_servers.py): search, execution with variables from the vault, the OAuth2
client-credentials and refresh flows (single flight), rate limits and Retry-After, errorPatterns,
injection attempts in every variable position, scrubbing of secrets a service echoes, trust grants
for global variables with their audit lines, reloads that keep requests in flight, a tampered vault
row, vault writes that survive kill -9, and a rolled-back vault file refused until accepted."""
import json
import os
import random
import re
import signal
import sqlite3
import string
import subprocess
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from a2s_servers import FakeApi, RegistryExamples, make_ca
from hearthtest import ROOT, Daemon, error, hearth_bin, result, wait_for

CLIENT_ID = "it-client"
CLIENT_SECRET = "it-secret-0123456789"
API_KEY = "it-api-key-abcdef123456"


def definition_yaml(domain, name="WeatherService", extra_caps="", rate="", description=None):
    description = description or "Global weather data and forecasts for any place on earth"
    return textwrap.dedent(f"""\
        serviceName: "{name}"
        serviceDescription: "{description}"
        domain: "{domain}"
        version: "1.0"
        checksum: "0000000000000000000000000000000000000000000000000000000000000000"
        authentications:
          - type: "oauth2_refresh"
            description: "OAuth2 refresh token grant"
            inputVariables:
              REFRESH_TOKEN:
                type: "string"
                description: "Refresh token from the last grant"
                storage: "service"
            outputVariables:
              AUTH_TOKEN:
                type: "string"
                description: "Bearer token for API access"
                storage: "service"
                expiry: 3600
              REFRESH_TOKEN:
                type: "string"
                description: "Refresh token (rotated)"
                storage: "service"
            request: |
              POST /oauth/token HTTP/1.1
              Host: {domain}
              Content-Type: application/x-www-form-urlencoded

              grant_type=refresh_token&refresh_token=${{REFRESH_TOKEN}}
            responseMapping:
              "$.access_token": "AUTH_TOKEN"
              "$.expires_in": "AUTH_TOKEN_EXPIRY"
              "$.refresh_token": "REFRESH_TOKEN"
          - type: "oauth2"
            description: "OAuth2 client credentials flow"
            inputVariables:
              CLIENT_ID:
                type: "string"
                description: "OAuth client ID"
                storage: "service"
              CLIENT_SECRET:
                type: "string"
                description: "OAuth client secret"
                storage: "service"
            outputVariables:
              AUTH_TOKEN:
                type: "string"
                description: "Bearer token for API access"
                storage: "service"
                expiry: 3600
              REFRESH_TOKEN:
                type: "string"
                description: "Refresh token"
                storage: "service"
            request: |
              POST /oauth/token HTTP/1.1
              Host: {domain}
              Content-Type: application/x-www-form-urlencoded

              grant_type=client_credentials&client_id=${{CLIENT_ID}}&client_secret=${{CLIENT_SECRET}}
            responseMapping:
              "$.access_token": "AUTH_TOKEN"
              "$.expires_in": "AUTH_TOKEN_EXPIRY"
              "$.refresh_token": "REFRESH_TOKEN"
        capabilities:
          - name: "Forecast Weather"
            description: "Get the weather forecast for a specific date and place"
            responseSchema: "#/responseSchemas/Forecast"
            inputVariables:
              AUTH_TOKEN:
                type: "string"
                description: "Bearer token"
                storage: "service"
            tempVariables:
              DATE:
                type: "string"
                description: "Forecast date"
                format: "date"
              LAT:
                type: "number"
                description: "Latitude"
                optional: true
                min: -90
                max: 90
              LON:
                type: "number"
                description: "Longitude"
                optional: true
            request: |
              GET /v1/forecast HTTP/1.1
              Host: {domain}
              Authorization: Bearer ${{AUTH_TOKEN}}

              ?date=${{DATE}}&lat=${{LAT}}&lon=${{LON}}
          - name: "Echo"
            description: "Echo the request back"
            inputVariables:
              USER_EMAIL:
                type: "string"
                description: "The user's email address"
                storage: "global"
                optional: true
            tempVariables:
              SEGMENT:
                type: "string"
                description: "A path segment"
              Q:
                type: "string"
                description: "A query value"
                optional: true
              NOTE:
                type: "string"
                description: "A header value"
                optional: true
              TEXT:
                type: "string"
                description: "A JSON string"
                optional: true
              COUNT:
                type: "integer"
                description: "A JSON number"
                optional: true
            request: |
              POST /v1/echo/${{SEGMENT}}?q=${{Q}}&email=${{USER_EMAIL}} HTTP/1.1
              Host: {domain}
              X-Note: ${{NOTE}}
              Content-Type: application/json

              {{"text": "${{TEXT}}", "count": ${{COUNT}}, "email": "${{USER_EMAIL}}"}}
          - name: "Echo Form"
            description: "Echo a form body back"
            tempVariables:
              FIELD:
                type: "string"
                description: "A form field"
            request: |
              POST /v1/echo/form HTTP/1.1
              Host: {domain}
              Content-Type: application/x-www-form-urlencoded

              field=${{FIELD}}&fixed=1
          - name: "Api Key Echo"
            description: "Call with an API key header; the service echoes it"
            responseSchema: "Strict"
            inputVariables:
              API_KEY:
                type: "string"
                description: "API key"
                storage: "service"
            request: |
              GET /v1/apikey HTTP/1.1
              Host: {domain}
              X-Api-Key: ${{API_KEY}}
          - name: "Limited"
            description: "A rate-limited endpoint"
            request: |
              GET /v1/limited HTTP/1.1
              Host: {domain}
          - name: "Fail"
            description: "An endpoint that fails in a chosen way"
            tempVariables:
              KIND:
                type: "string"
                description: "Which failure"
              SLEEP:
                type: "number"
                description: "Seconds the slow failure sleeps"
                optional: true
            request: |
              GET /v1/fail/${{KIND}}?sleep=${{SLEEP}} HTTP/1.1
              Host: {domain}
        errorPatterns:
          - statusCode: 400
            pattern: "Invalid input"
            resolution: "Check the date format (YYYY-MM-DD)"
          - statusCode: 401
            pattern: "token expired"
            resolution: "Authenticate again"
            retry: true
          - statusCode: 404
            pattern: "Not found"
            resolution: "The resource does not exist"
          - statusCode: 503
            pattern: "overloaded"
            resolution: "Wait and retry"
            retry: true
            retryAfter: 2
          - statusCode: 429
            pattern: "Quota exceeded"
            resolution: "The daily quota is used up"
        responseSchemas:
          Forecast:
            statusCodes: [200]
            format: "application/json"
            schema:
              type: "object"
              properties:
                high_c: {{type: "number"}}
            required: ["date", "summary"]
          Strict:
            statusCodes: [200]
            format: "application/json"
            schema: {{type: "object", properties: {{ok: {{type: "string"}}}}}}
            required: ["account"]
        security:
          transport:
            minTlsVersion: "1.2"
          variables:
            encryption: "AES-256-GCM"
            domainBinding: true
        """) + extra_caps + rate


def seal(path):
    r = subprocess.run([hearth_bin(), "registry", "seal", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def vault_set(state_dir, scope, name, value, env=None):
    r = subprocess.run([hearth_bin(), "vault", "set", "--state-dir", str(state_dir), scope, name],
                       input=value, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


class World:
    """A FakeApi over HTTPS, a registry folder with its definition, a daemon serving it."""

    def __init__(self, tmp_path, api_options=None, rate="", serve_args=()):
        self.tmp = tmp_path
        self.api = FakeApi(tmp_path / "tls", **(api_options or {}))
        self.api.__enter__()
        self.registry = tmp_path / "registry"
        self.registry.mkdir()
        self.file = self.registry / "weather.yaml"
        self.file.write_text(definition_yaml(self.api.domain, rate=rate))
        seal(self.file)
        self.state = tmp_path / "state"
        self.env = dict(os.environ, SSL_CERT_FILE=str(self.api.ca_file))
        self.daemon = None
        self.serve_args = list(serve_args)

    def start(self):
        self.daemon = Daemon([], copy=False, env=self.env,
                             extra_args=["--registry", str(self.registry), "--local-domain",
                                         "https://" + self.api.domain, *self.serve_args])
        return self.daemon

    def state_dir(self):
        return self.daemon.state_dir if self.daemon else self.state

    def execute(self, capability, variables=None, **extra):
        params = {"service": "WeatherService", "capability": capability,
                  "variables": variables or {}, **extra}
        return self.daemon.rpc("registry/execute", params)

    def close(self):
        if self.daemon:
            self.daemon.stop()
            self.daemon.cleanup()
        self.api.__exit__(None, None, None)


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path, api_options={"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                                     "api_key": API_KEY, "expires_in": 3600})
    w.start()
    yield w
    w.close()


def set_credentials(w):
    for name, value in (("CLIENT_ID", CLIENT_ID), ("CLIENT_SECRET", CLIENT_SECRET), ("API_KEY", API_KEY)):
        r = w.daemon.rpc("vault/set", {"scope": w.api.domain, "name": name, "value": value})
        result(r)


def audit_lines(w):
    path = Path(w.daemon.ready["auditLog"])
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


# -- search, get, list -------------------------------------------------------------------------

def test_search_returns_the_spec_shape(world):
    r = result(world.daemon.rpc("registry/search", {"query": "what's the weather forecast for thursday"}))
    services = r["services"]
    assert services and services[0]["name"] == "WeatherService"
    top = services[0]
    assert top["domain"] == world.api.domain
    assert 0 < top["relevance_score"] <= 1
    caps = top["relevant_capabilities"]
    assert caps[0]["name"] == "Forecast Weather"
    assert 0 < caps[0]["relevance_score"] <= 1
    assert caps[0]["tempVariables"]["DATE"]["format"] == "date"
    assert "GET /v1/forecast" in caps[0]["request"]


def test_get_and_list(world):
    got = result(world.daemon.rpc("registry/get", {"service": "weatherservice"}))
    assert got["definition"]["serviceName"] == "WeatherService"
    listing = result(world.daemon.rpc("registry/list"))
    assert [s["name"] for s in listing["services"]] == ["WeatherService"]
    assert listing["failures"] == []
    e = error(world.daemon.rpc("registry/get", {"service": "Nope"}))
    assert e["code"] == -32602


# -- execution, auth flows ---------------------------------------------------------------------

def test_needs_input_lists_what_to_ask(world):
    r = result(world.execute("Forecast Weather", {"DATE": "2026-11-26"}))
    assert r["status"] == "needs_input"
    names = {m["name"]: m for m in r["missing"]}
    assert set(names) == {"CLIENT_ID", "CLIENT_SECRET"}
    assert names["CLIENT_ID"]["storage"] == "service"
    assert names["CLIENT_ID"]["description"] == "OAuth client ID"
    assert names["CLIENT_ID"]["variable"] == world.api.domain + "::CLIENT_ID"
    # A missing temporary variable is listed too.
    set_credentials(world)
    r = result(world.execute("Forecast Weather", {}))
    assert r["status"] == "needs_input"
    assert [m["name"] for m in r["missing"]] == ["DATE"]


def test_client_credentials_then_cached_token_and_scrubbed_echo(world):
    set_credentials(world)
    r = result(world.execute("Forecast Weather", {"DATE": "2026-11-26", "LAT": 47.6, "LON": -122.3}))
    assert r["status"] == "ok", r
    assert r["httpStatus"] == 200
    assert r["validation"] == {"schema": "Forecast", "valid": True, "violations": []}
    assert world.api.token_requests == 1
    # The service echoed the Authorization header: the token never leaves the daemon.
    echoed = r["body"]["echo"]["authorization"]
    assert echoed == "Bearer [redacted:%s::AUTH_TOKEN]" % world.api.domain
    text = json.dumps(r)
    for token in world.api.issued_tokens():
        assert token not in text
    # The second call uses the stored token: no new grant.
    r = result(world.execute("Forecast Weather", {"DATE": "2026-11-27"}))
    assert r["status"] == "ok"
    assert world.api.token_requests == 1
    # The optional LAT/LON left out: their query parameters are dropped.
    last = world.api.requests[-1]
    assert "lat=" not in last["query"] and "date=2026-11-27" in last["query"]
    # The vault lists names only; the audit log has no secret.
    listing = result(world.daemon.rpc("vault/list", {"scope": world.api.domain}))
    names = {e["name"] for e in listing["entries"]}
    assert {"CLIENT_ID", "CLIENT_SECRET", "AUTH_TOKEN", "REFRESH_TOKEN"} <= names
    assert "value" not in json.dumps(listing)
    audit = Path(world.daemon.ready["auditLog"]).read_text()
    assert CLIENT_SECRET not in audit
    for token in world.api.issued_tokens():
        assert token not in audit
    lines = audit_lines(world)
    assert any(l["method"] == "registry/execute" and l["outcome"] == "ok" for l in lines)
    assert any(l["method"] == "a2s/auth" for l in lines)


def test_api_key_echo_is_scrubbed(world):
    set_credentials(world)
    r = result(world.execute("Api Key Echo"))
    assert r["status"] == "ok", r
    # The answer does not match the definition's response schema: said, not hidden.
    assert r["validation"]["valid"] is False
    assert {(v["field"], v["constraint"]) for v in r["validation"]["violations"]} == \
        {("ok", "type"), ("account", "required")}
    assert API_KEY not in json.dumps(r)
    assert "[redacted:%s::API_KEY]" % world.api.domain in json.dumps(r)


def test_expired_token_is_refreshed_once_for_many_concurrent_calls(tmp_path):
    # Tokens live 5 s: long enough that the refreshed one outlives the 20 calls below on a loaded
    # machine (with 2 s, a slow batch outlived it and a second refresh was right).
    w = World(tmp_path, api_options={"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                                     "expires_in": 5, "token_delay": 0.5})
    w.start()
    try:
        set_credentials(w)
        assert result(w.execute("Forecast Weather", {"DATE": "2026-11-26"}))["status"] == "ok"
        assert w.api.token_requests == 1 and w.api.refresh_requests == 0
        time.sleep(5.2)  # the token has expired
        with ThreadPoolExecutor(20) as pool:
            outs = list(pool.map(lambda i: w.execute("Forecast Weather", {"DATE": "2026-11-26"}),
                                 range(20)))
        assert all(result(o)["status"] == "ok" for o in outs), outs
        # Exactly one refresh, with the refresh token; the rotated one was stored and works again.
        assert w.api.refresh_requests == 1
        assert w.api.token_requests == 1
        time.sleep(5.2)
        assert result(w.execute("Forecast Weather", {"DATE": "2026-11-26"}))["status"] == "ok"
        assert w.api.refresh_requests == 2
        assert w.api.token_requests == 1
    finally:
        w.close()


def test_a_refused_refresh_token_falls_back_to_client_credentials(world):
    set_credentials(world)
    assert result(world.execute("Forecast Weather", {"DATE": "2026-11-26"}))["status"] == "ok"
    # The stored token and refresh token become worthless on the server's side.
    world.api.revoke_all()
    r = result(world.execute("Forecast Weather", {"DATE": "2026-11-26"}))
    assert r["status"] == "ok", r
    assert world.api.token_requests == 2


# -- rate limits and errors --------------------------------------------------------------------

def test_retry_after_pauses_the_domain(tmp_path):
    w = World(tmp_path, api_options={"limit": 2, "window": 1.5})
    w.start()
    try:
        statuses = [result(w.execute("Limited"))["httpStatus"] for _ in range(3)]
        assert statuses == [200, 200, 429]
        third = result(w.execute("Fail", {"KIND": "missing"}))
        # The 429's Retry-After: 1 held the next request for about a second.
        assert third["status"] == "failed"
        refused_at = w.api.refused_times[-1]
        next_at = w.api.request_times("/v1/fail/missing")[0]
        assert next_at - refused_at >= 0.9
    finally:
        w.close()


def test_definition_rate_limit_spaces_requests(tmp_path):
    w = World(tmp_path, rate="rateLimits:\n  requests: 2\n  period: 1\n")
    w.start()
    try:
        start = time.time()
        for _ in range(5):
            assert result(w.execute("Limited"))["httpStatus"] == 200
        # Bursts of 2, then one every 0.5 s: 3 more take at least 1.5 s.
        assert time.time() - start >= 1.4
    finally:
        w.close()


@pytest.mark.parametrize("kind,status,resolution", [
    ("bad-input", 400, "Check the date format (YYYY-MM-DD)"),
    ("auth", 401, "Authenticate again"),
    ("missing", 404, "The resource does not exist"),
    ("busy", 503, "Wait and retry"),
    ("quota", 429, "The daily quota is used up"),
])
def test_error_patterns_give_a_resolution(world, kind, status, resolution):
    r = result(world.execute("Fail", {"KIND": kind}))
    assert r["status"] == "failed"
    assert r["httpStatus"] == status
    assert r["error"]["resolution"] == resolution
    if kind == "busy":
        assert r["error"]["retry"] is True and r["error"]["retryAfter"] == 2


def test_response_size_and_time_limits(tmp_path):
    w = World(tmp_path, serve_args=["--registry-timeout", "1500"])
    w.start()
    try:
        e = error(w.execute("Fail", {"KIND": "huge"}))
        assert e["code"] == -32003 and "larger" in e["message"]
        start = time.time()
        e = error(w.execute("Fail", {"KIND": "slow", "SLEEP": 5}))
        assert e["code"] == -32002
        assert time.time() - start < 4
    finally:
        w.close()


# -- injection ---------------------------------------------------------------------------------

def echo(world, **variables):
    r = result(world.execute("Echo", variables))
    assert r["status"] == "ok", r
    return r["body"]


def test_path_and_query_values_are_encoded(world):
    body = echo(world, SEGMENT="../admin?x=1#frag", Q="a&admin=1=b c/d")
    assert body["path"] == "/v1/echo/..%2Fadmin%3Fx%3D1%23frag"
    assert dict(body["query_pairs"])["q"] == "a&admin=1=b c/d"
    assert [k for k, _ in body["query_pairs"]] == ["q"]  # no parameter was added
    body = echo(world, SEGMENT="@evil.example", Q="//evil.example/x")
    assert body["path"] == "/v1/echo/%40evil.example"
    assert world.api.requests[-1]["headers"]["host"] == world.api.domain


def test_dot_segments_and_header_line_injection_are_refused(world):
    for segment in ("..", "."):
        e = error(world.execute("Echo", {"SEGMENT": segment}))
        assert e["code"] == -32602 and "SEGMENT" in e["message"]
    for note in ("x\r\nX-Evil: 1", "x\nX-Evil: 1", "x\rY", "nul\x00"):
        e = error(world.execute("Echo", {"SEGMENT": "s", "NOTE": note}))
        assert e["code"] == -32602 and "NOTE" in e["message"]
        assert "Evil" not in e["message"]
    assert all("x-evil" not in r["headers"] for r in world.api.requests)


def test_json_and_form_bodies_are_escaped(world):
    body = echo(world, SEGMENT="s", TEXT='"}, "admin": true, "x": "', COUNT=3)
    sent = json.loads(body["body"])
    assert sent["text"] == '"}, "admin": true, "x": "'
    assert sent["count"] == 3
    assert "admin" not in sent
    e = error(world.execute("Echo", {"SEGMENT": "s", "COUNT": "3, \"admin\": true"}))
    assert e["code"] == -32602 and "COUNT" in e["message"]
    r = result(world.execute("Echo Form", {"FIELD": "v&admin=1"}))
    assert r["status"] == "ok"
    form = r["body"]["body"]
    assert form == "field=v%26admin%3D1&fixed=1"


def test_unknown_and_invalid_variables_are_refused(world):
    e = error(world.execute("Forecast Weather", {"DATE": "2026-13-45"}))
    assert e["code"] == -32602 and "DATE" in e["message"]
    e = error(world.execute("Forecast Weather", {"DATE": "2026-11-26", "LAT": 200}))
    assert e["code"] == -32602 and "LAT" in e["message"]
    e = error(world.execute("Forecast Weather", {"DATE": "2026-11-26", "HOST": "evil"}))
    assert e["code"] == -32602 and "HOST" in e["message"]


def test_dry_run_shows_the_request_without_sending(world):
    set_credentials(world)
    before = len(world.api.requests)
    r = result(world.execute("Api Key Echo", {}, dryRun=True))
    assert r["status"] == "dry_run"
    assert r["request"]["url"].startswith("https://" + world.api.domain + "/v1/apikey")
    assert API_KEY not in json.dumps(r)
    assert len(world.api.requests) == before


# -- domains -----------------------------------------------------------------------------------

def test_a_domain_resolving_here_needs_local_domain(tmp_path):
    w = World(tmp_path)
    w.daemon = Daemon([], copy=False, env=w.env, extra_args=["--registry", str(w.registry)])
    try:
        e = error(w.execute("Limited"))
        assert e["code"] == -32001 and "local" in e["message"]
        assert w.api.requests == []
    finally:
        w.close()


def test_a_template_for_another_host_is_refused_at_load(world):
    bad = definition_yaml("api.other.example", name="Other").replace(
        'domain: "api.other.example"', 'domain: "%s"' % world.api.domain)
    other = world.registry.parent / "other.yaml"
    other.write_text(bad)
    r = subprocess.run([hearth_bin(), "registry", "seal", str(other)], capture_output=True, text=True)
    assert r.returncode == 1 and "Host" in r.stderr
    r = subprocess.run([hearth_bin(), "registry", "check", str(other)], capture_output=True, text=True)
    assert r.returncode == 1
    assert "capabilities[0].request" in r.stderr and "Host" in r.stderr


# -- reload ------------------------------------------------------------------------------------

def test_reload_keeps_requests_in_flight_and_refuses_a_bad_checksum(world):
    out = {}

    def slow():
        out["r"] = world.execute("Fail", {"KIND": "slow", "SLEEP": 2})

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.3)
    # A second service appears; the first file is edited without resealing (refused).
    other = world.registry / "other.yaml"
    other.write_text(definition_yaml(world.api.domain, name="OtherService",
                                     description="Stock quotes and market data"))
    seal(other)
    world.file.write_text(world.file.read_text().replace("Global weather data", "Weather data"))
    # The two files change one after the other: a reload may see the first change alone, so
    # wait for the state after both.
    wait_for(lambda: [s["name"] for s in result(world.daemon.rpc("registry/list"))["services"]]
             == ["OtherService"], timeout=10)
    listing = result(world.daemon.rpc("registry/list"))
    assert [s["name"] for s in listing["services"]] == ["OtherService"]
    assert any("checksum" in p for f in listing["failures"] for p in f["problems"])
    t.join(10)
    r = result(out["r"])  # answered by the definition it started with
    assert r["service"] == "WeatherService" and r["status"] in ("ok", "failed")


# -- global variables and trust ----------------------------------------------------------------

def test_global_variables_need_a_trust_grant_and_reads_are_audited(world):
    result(world.daemon.rpc("vault/set", {"scope": "global", "name": "USER_EMAIL",
                                          "value": "person@example.org"}))
    body = echo(world, SEGMENT="s")
    assert "person@example.org" not in json.dumps(body)  # untrusted: optional, left out
    r = result(world.daemon.rpc("vault/trust", {"domain": world.api.domain, "names": ["USER_EMAIL"]}))
    assert r["granted"] == ["USER_EMAIL"]
    r = result(world.execute("Echo", {"SEGMENT": "s"}))
    assert world.api.requests[-1]["query"].endswith("email=person%40example.org")
    # The value reached the service but not the caller.
    assert "person@example.org" not in json.dumps(r)
    reads = [l for l in audit_lines(world) if l["method"] == "vault/read"]
    assert [l["outcome"] for l in reads][-2:] == ["refused", "ok"]
    assert all(l["endpoint"] == "global::USER_EMAIL" for l in reads)
    assert result(world.daemon.rpc("vault/revoke", {"domain": world.api.domain}))["revoked"] is True
    echo(world, SEGMENT="s")
    assert "email=person" not in world.api.requests[-1]["query"]


# -- the vault ---------------------------------------------------------------------------------

def test_a_tampered_vault_row_is_an_error_never_wrong_data(world):
    set_credentials(world)
    world.daemon.stop()
    db = world.daemon.state_dir / "vault.db"
    con = sqlite3.connect(db)
    rows = con.execute("SELECT rowid, name FROM variables WHERE scope = ?", (world.api.domain,)).fetchall()
    ids = {name: rowid for rowid, name in rows}
    # Move API_KEY's sealed value onto CLIENT_ID's row.
    cols = [c[1] for c in con.execute("PRAGMA table_info(variables)")]
    sealed = [c for c in cols if c not in ("scope", "name", "rowid", "id")]
    sets = ", ".join(f"{c} = (SELECT {c} FROM variables WHERE rowid = ?)" for c in sealed)
    con.execute(f"UPDATE variables SET {sets} WHERE rowid = ?",
                (*[ids["API_KEY"]] * len(sealed), ids["CLIENT_ID"]))
    con.commit()
    con.close()
    d = Daemon([], copy=False, env=world.env, state_dir=world.daemon.state_dir,
               extra_args=["--registry", str(world.registry), "--local-domain", "https://" + world.api.domain])
    try:
        params = {"service": "WeatherService", "capability": "Forecast Weather",
                  "variables": {"DATE": "2026-11-26"}}
        e = error(d.rpc("registry/execute", params))
        assert e["code"] == -32001 and "tampered" in e["message"]
        assert API_KEY not in json.dumps(e)
        r = subprocess.run([hearth_bin(), "vault", "get", "--state-dir", str(d.state_dir),
                            world.api.domain, "CLIENT_ID"], capture_output=True, text=True)
        assert r.returncode != 0 and "tampered" in r.stderr and API_KEY not in r.stdout
    finally:
        d.stop()
        d.cleanup()


def test_the_vault_key_is_checked_at_start_and_the_vault_opened_at_first_use(tmp_path):
    (tmp_path / "empty-registry").mkdir()
    registry = ["--registry", str(tmp_path / "empty-registry")]

    def serve(state, env=None):
        return subprocess.run([hearth_bin(), "serve", "--port", "0", "--state-dir", str(state), *registry],
                              capture_output=True, text=True, timeout=30, env=env)

    # A key file others may read, or a malformed key in the environment, stops the start.
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o700)
    (loose / "vault.key").write_text("ab" * 32 + "\n")
    (loose / "vault.key").chmod(0o644)
    r = serve(loose)
    assert r.returncode != 0 and "vault.key" in r.stderr, r.stderr
    r = serve(tmp_path / "env-state", env={**os.environ, "HEARTH_VAULT_KEY": "not a key"})
    assert r.returncode != 0 and "HEARTH_VAULT_KEY" in r.stderr, r.stderr

    # A daemon that never needs a variable makes its key but no vault database.
    d = Daemon([], copy=False, extra_args=registry)
    try:
        assert (d.state_dir / "vault.key").stat().st_mode & 0o077 == 0
        assert not (d.state_dir / "vault.db").exists()
        result(d.rpc("vault/set", {"scope": "api.example.com", "name": "API_KEY", "value": "s3cret"}))
        assert (d.state_dir / "vault.db").exists()
    finally:
        d.stop()
    # Another (well-formed) key: the daemon starts, and the first call that needs the vault is
    # told the key does not match, with nothing read.
    (d.state_dir / "vault.key").write_text("cd" * 32 + "\n")
    d2 = Daemon([], copy=False, state_dir=d.state_dir, extra_args=registry)
    try:
        e = error(d2.rpc("vault/list", {}))
        assert "does not match" in e["message"] and "s3cret" not in json.dumps(e)
        e = error(d2.rpc("vault/set", {"scope": "api.example.com", "name": "OTHER", "value": "x"}))
        assert "does not match" in e["message"]
    finally:
        d2.stop()
        d2.cleanup()
        d.cleanup()


def test_vault_writes_survive_kill_9(tmp_path):
    (tmp_path / "empty-registry").mkdir()
    d = Daemon([], copy=False, extra_args=["--registry", str(tmp_path / "empty-registry")])
    acknowledged = []
    stop = threading.Event()

    def writer():
        i = 0
        with d.http() as c:
            while not stop.is_set():
                try:
                    r = c.rpc("vault/set", {"scope": "api.example.com", "name": f"V{i}", "value": f"value-{i}"})
                except Exception:
                    return
                if "result" in r:
                    acknowledged.append(i)
                i += 1

    t = threading.Thread(target=writer)
    t.start()
    wait_for(lambda: len(acknowledged) >= 50, timeout=20)
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    stop.set()
    t.join(10)
    for i in acknowledged:
        r = subprocess.run([hearth_bin(), "vault", "get", "--state-dir", str(d.state_dir),
                            "api.example.com", f"V{i}"], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.strip() == f"value-{i}", (i, r.stderr)
    d.cleanup()


def test_a_rolled_back_vault_file_is_refused_until_accepted(tmp_path):
    state = tmp_path / "state"
    (tmp_path / "empty-registry").mkdir()
    registry = ["--registry", str(tmp_path / "empty-registry")]
    db = state / "vault.db"

    def get():
        return subprocess.run([hearth_bin(), "vault", "get", "--state-dir", str(state), "api.example.com",
                               "TOKEN"], capture_output=True, text=True)

    def restore(data):
        for extra in ("vault.db-wal", "vault.db-shm"):
            (state / extra).unlink(missing_ok=True)
        db.write_bytes(data)

    vault_set(state, "api.example.com", "TOKEN", "old-token")
    old_copy = db.read_bytes()  # no CLI runs: nothing waits in the WAL
    vault_set(state, "api.example.com", "TOKEN", "rotated-token")
    new_copy = db.read_bytes()
    restore(old_copy)
    # The CLI refuses it, says why and how to take it on purpose, and shows nothing of it.
    r = get()
    assert r.returncode == 1 and "old-token" not in r.stdout, r
    assert f"vault: {db} is older than the last one this key wrote (generation 3 < 4): it was rolled back " \
           "or replaced; restore the newest copy" in r.stderr, r.stderr
    assert f"hearth vault accept-rollback --state-dir {state}" in r.stderr, r.stderr
    # So does the daemon, at its first use of the vault and at every call after.
    d = Daemon([], copy=False, state_dir=state, extra_args=registry)
    try:
        for method, params in [("vault/list", {}),
                               ("vault/set", {"scope": "api.example.com", "name": "OTHER", "value": "x"})]:
            e = error(d.rpc(method, params))
            assert e["code"] == -32001 and "generation 3 < 4" in e["message"], e
            assert "old-token" not in json.dumps(e)
    finally:
        d.stop()
    # The newest copy back: as before.
    restore(new_copy)
    assert get().stdout.strip() == "rotated-token"
    # The operator takes the old copy on purpose; then the copy it replaced is the older one.
    restore(old_copy)
    r = subprocess.run([hearth_bin(), "vault", "accept-rollback", "--state-dir", str(state)],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "accepted" in r.stderr and "It is generation 5 now" in r.stderr, r.stderr
    assert get().stdout.strip() == "old-token"
    restore(new_copy)
    r = get()
    assert r.returncode == 1 and "generation 4 < 5" in r.stderr, r.stderr
    d.cleanup()


# -- LAVS endpoints backed by a capability -----------------------------------------------------

def test_an_a2s_endpoint_reaches_a_capability(tmp_path):
    w = World(tmp_path, api_options={"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})
    svc = tmp_path / "weather-view"
    svc.mkdir()
    (svc / "lavs.json").write_text(json.dumps({
        "lavs": "1.0", "name": "weather-view", "version": "1.0.0",
        "endpoints": [
            {"id": "forecast", "method": "query",
             "handler": {"type": "a2s", "service": "WeatherService", "capability": "Forecast Weather",
                         "variables": {"DATE": {"input": "date"}}},
             "schema": {"input": {"type": "object", "properties": {"date": {"type": "string"}},
                                  "required": ["date"]}},
             "permissions": {"networkAccess": [w.api.domain]}},
            {"id": "denied", "method": "query",
             "handler": {"type": "a2s", "service": "WeatherService", "capability": "Limited"}},
        ]}))
    w.daemon = Daemon([svc], copy=False, env=w.env,
                      extra_args=["--registry", str(w.registry), "--local-domain", "https://" + w.api.domain])
    try:
        set_credentials(w)
        r = result(w.daemon.call("forecast", {"date": "2026-11-26"}, service="weather-view"))
        assert r["date"] == "2026-11-26"
        assert "[redacted:" in json.dumps(r)
        e = error(w.daemon.call("denied", {}, service="weather-view"))
        assert e["code"] == -32001
        result(w.daemon.rpc("vault/delete", {"scope": w.api.domain, "name": "CLIENT_ID"}))
        result(w.daemon.rpc("vault/delete", {"scope": w.api.domain, "name": "AUTH_TOKEN"}))
        result(w.daemon.rpc("vault/delete", {"scope": w.api.domain, "name": "REFRESH_TOKEN"}))
        e = error(w.daemon.call("forecast", {"date": "2026-11-26"}, service="weather-view"))
        assert e["code"] == -32003 and e["data"]["status"] == "needs_input"
    finally:
        w.close()


def test_search_explains_on_request(world):
    plain = result(world.daemon.rpc("registry/search", {"query": "wheather forecast for thursday"}))
    assert plain["services"][0]["name"] == "WeatherService"  # the misspelling is corrected
    assert "explanation" not in plain
    assert "matches" not in plain["services"][0]["relevant_capabilities"][0]
    r = result(world.daemon.rpc("registry/search", {"query": "wheather forecast for thursday", "explain": True}))
    words = {w["word"]: w for w in r["explanation"]["words"]}
    assert words["wheather"]["terms"][0] == {"term": "weather", "via": "spelling", "weight": 1}
    assert words["forecast"]["terms"][0]["via"] == "word"
    cap = r["services"][0]["relevant_capabilities"][0]
    by_word = {m["word"]: m for m in cap["matches"]}
    assert by_word["wheather"]["term"] == "weather" and by_word["wheather"]["via"] == "spelling"
    forecast = by_word["forecast"]
    assert forecast["via"] == "word" and forecast["weight"] == 1
    assert abs(sum(forecast["fields"].values()) - forecast["score"]) < 0.01
    assert set(forecast["fields"]) <= {"capability.name", "capability.description", "service.name",
                                       "service.description", "variables", "examples"}
    e = world.daemon.rpc("registry/search", {"query": "weather", "explain": "yes"})["error"]
    assert e["code"] == -32602


# -- the CLI without a daemon ------------------------------------------------------------------

def test_cli_check_search_execute(tmp_path):
    w = World(tmp_path, api_options={"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})
    try:
        r = subprocess.run([hearth_bin(), "registry", "check", str(w.registry)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([hearth_bin(), "registry", "search", "--registry", str(w.registry), "--json",
                            "weather", "forecast"], capture_output=True, text=True)
        assert json.loads(r.stdout)["services"][0]["name"] == "WeatherService"
        r = subprocess.run([hearth_bin(), "registry", "search", "--registry", str(w.registry), "--explain",
                            "wheather", "forecast"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "wheather: weather (spelling 1.00)" in r.stdout
        assert "wheather -> weather (spelling" in r.stdout and "capability.name" in r.stdout
        r = subprocess.run([hearth_bin(), "registry", "search", "--registry", str(w.registry), "--json",
                            "--explain", "wheather", "forecast"], capture_output=True, text=True)
        explained = json.loads(r.stdout)
        assert explained["explanation"]["words"][0]["terms"][0]["via"] == "spelling"
        assert explained["services"][0]["relevant_capabilities"][0]["matches"]
        state = tmp_path / "cli-state"
        base = [hearth_bin(), "registry", "execute", "--registry", str(w.registry), "--state-dir", str(state),
                "--local-domain", "https://" + w.api.domain, "WeatherService", "Forecast Weather",
                '{"DATE": "2026-11-26"}']
        r = subprocess.run(base, capture_output=True, text=True, env=w.env)
        assert r.returncode == 3 and json.loads(r.stdout)["status"] == "needs_input"
        vault_set(state, w.api.domain, "CLIENT_ID", CLIENT_ID + "\n")  # one trailing newline is dropped
        vault_set(state, w.api.domain, "CLIENT_SECRET", CLIENT_SECRET)
        r = subprocess.run(base, capture_output=True, text=True, env=w.env)
        assert r.returncode == 0, r.stdout + r.stderr
        assert json.loads(r.stdout)["status"] == "ok"
        listing = subprocess.run([hearth_bin(), "vault", "list", "--state-dir", str(state), "--json"],
                                 capture_output=True, text=True)
        assert CLIENT_SECRET not in listing.stdout and "CLIENT_SECRET" in listing.stdout
        assert (state / "vault.key").stat().st_mode & 0o077 == 0
    finally:
        w.close()


def test_search_counts_a_service_of_another_place_less_and_says_so(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    for file, name, description in [
            ("global.yaml", "WeatherService", None),
            ("tokyo.yaml", "SakuraSky", "Weather forecasts for Tokyo and the rest of Japan")]:
        (registry / file).write_text(definition_yaml(f"api.{name.lower()}.example", name=name,
                                                     description=description))
        seal(registry / file)

    def search(query):
        r = subprocess.run([hearth_bin(), "registry", "search", "--registry", str(registry), "--json",
                            "--explain", query], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        return out, {s["name"]: s for s in out["services"]}

    _, plain = search("weather forecast")
    out, by_name = search("weather forecast in nairobi")
    assert by_name["SakuraSky"].get("elsewhere") is True
    assert "elsewhere" not in by_name["WeatherService"]
    assert by_name["SakuraSky"]["relevance_score"] == pytest.approx(
        0.6 * plain["SakuraSky"]["relevance_score"], abs=0.002)
    assert by_name["WeatherService"]["relevance_score"] == plain["WeatherService"]["relevance_score"]
    words = {w["word"]: w for w in out["explanation"]["words"]}
    assert words["nairobi"].get("place") is True and "place" not in words["weather"]
    # Kyoto is in Japan (whose name the service's texts have): that service comes first.
    out, by_name = search("weather forecast in kyoto")
    assert "elsewhere" not in by_name["SakuraSky"]
    assert out["services"][0]["name"] == "SakuraSky"
    assert "elsewhere" not in plain["SakuraSky"]
    r = subprocess.run([hearth_bin(), "registry", "search", "--registry", str(registry), "--explain",
                        "weather", "forecast", "in", "nairobi"], capture_output=True, text=True)
    assert "nairobi (a name" in r.stdout and "(a place:" in r.stdout
    assert "its texts name only places other than the request's" in r.stdout


def test_long_searches_leave_the_daemon_answering(tmp_path):
    """Searches run off the I/O thread: with one I/O thread, a batch of long searches (each a
    4,096-byte request of words never seen before) leaves other requests answered at once."""
    w = World(tmp_path, serve_args=["--threads", "1"])
    w.start()
    try:
        rnd = random.Random(7)

        def query():
            words, size = [], 0
            while True:
                word = "".join(rnd.choice(string.ascii_lowercase) for _ in range(rnd.randint(4, 9)))
                if size + len(word) + 1 > 4096:
                    return " ".join(words)
                words.append(word)
                size += len(word) + 1

        batch = [{"jsonrpc": "2.0", "id": i, "method": "registry/search", "params": {"query": query()}}
                 for i in range(100)]
        done = {}

        def send():
            started = time.monotonic()
            with w.daemon.http() as c:
                status, _, data = c.post(batch)
            done.update(status=status, answers=json.loads(data), seconds=time.monotonic() - started)

        sender = threading.Thread(target=send)
        sender.start()
        time.sleep(0.05)
        waits = []
        with w.daemon.http() as c:
            while sender.is_alive():
                started = time.monotonic()
                assert "result" in c.rpc("registry/list")
                waits.append(time.monotonic() - started)
        sender.join()
        assert done["status"] == 200 and len(done["answers"]) == 100
        assert all("services" in a["result"] for a in done["answers"])
        # On the I/O thread, a list waited for the whole batch (0.6-0.7 s of 0.7); off it, 5 ms.
        assert len(waits) >= 3 and max(waits) < done["seconds"] / 4, (done["seconds"], sorted(waits)[-5:])
    finally:
        w.close()


# -- the bundled examples ----------------------------------------------------------------------

def test_the_registry_examples_run_against_their_servers(tmp_path):
    from hearthtest import ROOT
    examples = RegistryExamples(ROOT, tmp_path, hearth_bin())
    try:
        registry, state, local = examples.registry, examples.state_dir, examples.local_args
        calls = [("WeatherService", "Forecast Weather", {"DATE": "2026-11-26", "LAT": 47.6, "LON": -122.3}),
                 ("WeatherService", "Extended Forecast", {"START": "2026-11-26", "DAYS": 2}),
                 ("FlightService", "Search Flights", {"FROM": "SEA", "TO": "SFO", "DATE_OUT": "2026-11-27",
                                                      "MAX_PRICE": 400}),
                 ("HotelService", "Search Hotels", {"CITY": "Seattle", "CHECK_IN": "2026-11-27", "MAX_RATE": 200})]
        for service, capability, variables in calls:
            r = subprocess.run([hearth_bin(), "registry", "execute", "--registry", str(registry), "--state-dir",
                                str(state), *local, service, capability, json.dumps(variables)],
                               capture_output=True, text=True)
            assert r.returncode == 0, (service, r.stdout, r.stderr)
            out = json.loads(r.stdout)
            assert out["status"] == "ok" and out["httpStatus"] == 200
        assert "demo-" not in r.stdout
        r = subprocess.run([hearth_bin(), "registry", "check", str(ROOT / "examples/registry")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    finally:
        examples.stop()


# -- definitions as the spec's example writes them --------------------------------------------

def spec_example():
    """The A2S specification's own service definition example (a2s-protocol.md, "YAML
    Structure"), read from ../shared/specs as CI has it beside the clone."""
    spec = (ROOT.parent / "shared" / "specs" / "a2s-protocol.md").read_text()
    block = re.search(r"```yaml\n(.*?)```", spec[spec.index("#### YAML Structure"):], re.S)
    assert block and block.group(1).startswith('serviceName: "ExampleService"')
    return block.group(1)


def test_a_definition_written_as_the_specs_example_loads_with_warnings(tmp_path):
    """The spec's example has no `security` object and a placeholder checksum: it loads with the
    defaults and says what to put right; a `security` that is there but malformed is refused."""
    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / "example.yaml").write_text(spec_example())
    r = subprocess.run([hearth_bin(), "registry", "check", str(registry)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "ok  ExampleService" in r.stdout
    assert "warning: security: absent: the defaults apply" in r.stderr
    assert "is not a SHA-256" in r.stderr and "hearth registry seal" in r.stderr
    r = subprocess.run([hearth_bin(), "registry", "check", "--json", str(registry)],
                       capture_output=True, text=True)
    report = json.loads(r.stdout)
    assert [w.split(":")[0] for w in report["services"][0]["warnings"]] == ["checksum", "security"]
    with Daemon([], copy=False, extra_args=["--registry", str(registry)]) as d:
        listed = result(d.rpc("registry/list"))
        assert [s["name"] for s in listed["services"]] == ["ExampleService"]
        assert listed["failures"] == []
        found = result(d.rpc("registry/search", {"query": "example capability"}))
        assert found["services"][0]["name"] == "ExampleService"
        assert found["services"][0]["relevant_capabilities"][0]["name"] == "ExampleCapability"
    (registry / "example.yaml").write_text(spec_example() + "security: 5\n")
    r = subprocess.run([hearth_bin(), "registry", "check", str(registry)], capture_output=True, text=True)
    assert r.returncode == 1 and "security: must be a mapping" in r.stderr
