#!/usr/bin/env python3
"""The three example A2S services of examples/registry, over plain HTTP on 127.0.0.1 (hearth
reaches them as local test domains): a weather API (Bearer API key), a flight search behind an
OAuth2 client-credentials token endpoint, and a hotel search (X-Api-Key). Canned, deterministic
data; the demo credentials are the ones scripts/run-examples.sh stores in the vault.

    python3 example_services.py [--bind 127.0.0.1] [--ports 8741,8742,8743]
"""
import argparse
import datetime
import hashlib
import json
import secrets
import signal
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WEATHER_KEY = "demo-weather-key"
CLIENT_ID, CLIENT_SECRET = "demo-client", "demo-secret"
HOTEL_KEY = "demo-hotel-key"

AIRPORTS = {"SEA": "Seattle", "SFO": "San Francisco", "JFK": "New York", "LAX": "Los Angeles",
            "ORD": "Chicago", "BOS": "Boston", "LHR": "London", "CDG": "Paris"}
HOTELS = {
    "seattle": [("Pike Place Inn", 189), ("Harbor View Hotel", 245), ("Capitol Hill Rooms", 129),
                ("Space Needle Suites", 310)],
    "san francisco": [("Golden Gate Lodge", 219), ("Mission Street Hotel", 159)],
    "new york": [("Midtown Tower", 329), ("Brooklyn Loft Hotel", 199), ("Harlem House", 149)],
    "paris": [("Hotel du Marais", 210), ("Montmartre Chambres", 135)],
}
SUMMARIES = ["Sunny", "Partly cloudy", "Overcast", "Light rain", "Showers", "Windy", "Fog"]


def seeded(*parts):
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest(), 16)


def forecast(date, lat, lon):
    n = seeded(date, round(lat, 1), round(lon, 1))
    high = 5 + n % 20
    return {"date": date, "lat": lat, "lon": lon, "summary": SUMMARIES[n % len(SUMMARIES)],
            "high_c": high, "low_c": high - 4 - n % 5, "precipitation_mm": (n >> 8) % 12}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    service = "weather"
    tokens = {}
    tokens_lock = threading.Lock()

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def params(self):
        return {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).items()}

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        getattr(self, "get_" + self.service)(path, self.params())

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        if self.service == "flights" and urllib.parse.urlsplit(self.path).path == "/oauth/token":
            form = {k: v[0] for k, v in urllib.parse.parse_qs(body).items()}
            if form.get("grant_type") != "client_credentials":
                return self.answer(400, {"error": "unsupported_grant_type"})
            if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
                return self.answer(401, {"error": "invalid_client"})
            token = "fl-" + secrets.token_hex(16)
            with self.tokens_lock:
                self.tokens[token] = time.time() + 3600
            return self.answer(200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600})
        self.answer(404, {"error": "Not found"})

    # -- weather (localhost:8741) -----------------------------------------------------------
    def get_weather(self, path, q):
        if self.headers.get("Authorization") != "Bearer " + WEATHER_KEY:
            return self.answer(401, {"error": "invalid API key"})
        try:
            lat = float(q.get("lat", 47.6))
            lon = float(q.get("lon", -122.3))
            if not (-90 <= lat <= 90 and -180 <= lon <= 180):
                raise ValueError
        except ValueError:
            return self.answer(400, {"error": "Invalid coordinates"})
        if path == "/v1/forecast":
            try:
                date = datetime.date.fromisoformat(q.get("date", ""))
            except ValueError:
                return self.answer(400, {"error": "Invalid date: use YYYY-MM-DD"})
            return self.answer(200, forecast(date.isoformat(), lat, lon))
        if path == "/v1/forecast/extended":
            try:
                start = datetime.date.fromisoformat(q.get("start", ""))
                days = int(q.get("days", 3))
            except ValueError:
                return self.answer(400, {"error": "Invalid date: use YYYY-MM-DD"})
            days = max(1, min(days, 10))
            return self.answer(200, {"days": [forecast((start + datetime.timedelta(days=i)).isoformat(), lat, lon)
                                              for i in range(days)]})
        self.answer(404, {"error": "Not found"})

    # -- flights (localhost:8742) -----------------------------------------------------------
    def get_flights(self, path, q):
        auth = self.headers.get("Authorization", "")
        with self.tokens_lock:
            valid = auth.startswith("Bearer ") and self.tokens.get(auth[7:], 0) > time.time()
        if not valid:
            return self.answer(401, {"error": "token expired or invalid"})
        if path != "/v1/flights":
            return self.answer(404, {"error": "Not found"})
        origin, dest = q.get("from", ""), q.get("to", "")
        if origin not in AIRPORTS or dest not in AIRPORTS:
            return self.answer(400, {"error": "Unknown airport: use one of " + ", ".join(sorted(AIRPORTS))})
        date = q.get("date", "")
        limit = float(q.get("max_price", 1e9))
        flights = []
        for i, carrier in enumerate(["Cascade Air", "Pacific Lines", "Northstar", "Bay Jet"]):
            n = seeded(origin, dest, date, carrier)
            price = 89 + n % 400
            if price <= limit:
                flights.append({"carrier": carrier, "flight": f"{carrier[:2].upper()}{100 + n % 900}",
                                "departs": f"{date}T{6 + 3 * i:02d}:{n % 60:02d}:00", "price_usd": price})
        flights.sort(key=lambda f: f["price_usd"])
        self.answer(200, {"route": f"{origin}-{dest}", "date": date, "flights": flights})

    # -- hotels (localhost:8743) ------------------------------------------------------------
    def get_hotels(self, path, q):
        if self.headers.get("X-Api-Key") != HOTEL_KEY:
            return self.answer(403, {"error": "missing or wrong API key"})
        if path != "/v1/hotels":
            return self.answer(404, {"error": "Not found"})
        city = q.get("city", "").strip().lower()
        rate = float(q.get("max_rate", 1e9))
        found = [{"name": n, "rate_usd": r, "check_in": q.get("check_in")} for n, r in HOTELS.get(city, []) if r <= rate]
        if not found:
            return self.answer(404, {"error": f"No hotels in {q.get('city', '')} under {rate:g}"})
        self.answer(200, {"city": q.get("city"), "hotels": sorted(found, key=lambda h: h["rate_usd"])})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--ports", default="8741,8742,8743")
    args = ap.parse_args()
    ports = [int(p) for p in args.ports.split(",")]
    if len(ports) != 3:
        ap.error("--ports takes three ports: weather,flights,hotels")
    servers = []
    for service, port in zip(["weather", "flights", "hotels"], ports):
        handler = type(service.title() + "Handler", (Handler,), {"service": service})
        try:
            server = ThreadingHTTPServer((args.bind, port), handler)
        except OSError as e:
            sys.exit(f"example services: cannot listen on {args.bind}:{port}: {e.strerror}")
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(f"example services on {args.bind}: weather {ports[0]}, flights {ports[1]}, hotels {ports[2]}",
          file=sys.stderr)
    stop.wait()
    for s in servers:
        s.shutdown()
        s.server_close()


if __name__ == "__main__":
    main()
