#!/usr/bin/env python3
"""A small local book catalogue with a JSON HTTP API, for the bookshelf example's `http` endpoints.

    GET  /books?q=TEXT&limit=N   books whose title or author contains TEXT
    GET  /books/{id}             one book, 404 when there is none
    POST /books                  {"title", "author", "year"?} -> the new book (201)

Listens on 127.0.0.1 only. Usage: server.py [--port 8765]
"""
import argparse
import sys
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

BOOKS = [
    {"id": 1, "title": "The Left Hand of Darkness", "author": "Ursula K. Le Guin", "year": 1969},
    {"id": 2, "title": "A Wizard of Earthsea", "author": "Ursula K. Le Guin", "year": 1968},
    {"id": 3, "title": "Kindred", "author": "Octavia E. Butler", "year": 1979},
    {"id": 4, "title": "The Dispossessed", "author": "Ursula K. Le Guin", "year": 1974},
    {"id": 5, "title": "Parable of the Sower", "author": "Octavia E. Butler", "year": 1993},
]
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        if parts == ["books"]:
            query = parse_qs(url.query)
            text = query.get("q", [""])[0].lower()
            limit = int(query.get("limit", ["50"])[0])
            with lock:
                found = [b for b in BOOKS if text in b["title"].lower() or text in b["author"].lower()]
            return self.reply(200, found[:limit])
        if len(parts) == 2 and parts[0] == "books" and parts[1].isdigit():
            with lock:
                book = next((b for b in BOOKS if b["id"] == int(parts[1])), None)
            if book is None:
                return self.reply(404, {"error": f"no book {parts[1]}"})
            return self.reply(200, book)
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        if urlsplit(self.path).path != "/books":
            return self.reply(404, {"error": "not found"})
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            title, author = str(body["title"]), str(body["author"])
        except (ValueError, KeyError, TypeError):
            return self.reply(400, {"error": "a book needs a title and an author"})
        with lock:
            book = {"id": max(b["id"] for b in BOOKS) + 1, "title": title, "author": author,
                    "year": body.get("year")}
            BOOKS.append(book)
        self.reply(201, book)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    try:
        server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    except OSError as e:
        sys.exit(f"catalogue: cannot listen on 127.0.0.1:{args.port}: {e.strerror}")
    print(f"catalogue on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
