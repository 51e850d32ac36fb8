"""contact-manager endpoints: search | add | delete.

Input arrives as JSON on stdin; the result goes to stdout as JSON. The database (data/contacts.db
in the service folder, with SQLite's journal beside it) is created and seeded on first use.
"""
import json
import sqlite3
import sys

SEED = [
    ("Ada Lovelace", "ada@example.org", "+44 20 7946 0001"),
    ("Alan Turing", "alan@example.org", None),
    ("Grace Hopper", "grace@example.org", "+1 202 555 0143"),
]


def connect():
    conn = sqlite3.connect("data/contacts.db", timeout=10)
    conn.row_factory = sqlite3.Row
    conn.execute(
        "CREATE TABLE IF NOT EXISTS contacts ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " name TEXT NOT NULL, email TEXT, phone TEXT)"
    )
    if conn.execute("SELECT COUNT(*) FROM contacts").fetchone()[0] == 0:
        conn.executemany("INSERT INTO contacts (name, email, phone) VALUES (?, ?, ?)", SEED)
        conn.commit()
    return conn


def main():
    action = sys.argv[1] if len(sys.argv) > 1 else ""
    text = sys.stdin.read()
    params = json.loads(text) if text.strip() else {}
    conn = connect()
    if action == "search":
        query = params.get("query", "")
        cursor = conn.execute(
            "SELECT * FROM contacts WHERE name LIKE ? ORDER BY name", (f"%{query}%",)
        )
        print(json.dumps([dict(row) for row in cursor.fetchall()]))
    elif action == "add":
        cursor = conn.execute(
            "INSERT INTO contacts (name, email, phone) VALUES (?, ?, ?)",
            (params["name"], params.get("email"), params.get("phone")),
        )
        conn.commit()
        row = conn.execute("SELECT * FROM contacts WHERE id = ?", (cursor.lastrowid,)).fetchone()
        print(json.dumps(dict(row)))
    elif action == "delete":
        cursor = conn.execute("DELETE FROM contacts WHERE id = ?", (params["id"],))
        conn.commit()
        if cursor.rowcount == 0:
            print(f"no contact with id {params['id']}", file=sys.stderr)
            sys.exit(1)
        print(json.dumps({"deleted": params["id"]}))
    else:
        print(f"unknown action '{action}' (search, add, delete)", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
