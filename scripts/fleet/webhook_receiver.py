"""The fleet test's alert receiver: an HTTP server on 127.0.0.1 that appends the JSON body of
each POST (an Alertmanager webhook notification) as one line to a file, with the time it
arrived added as `received_at` (seconds since the epoch).

    python3 webhook_receiver.py PORT FILE

Answers 200 to a POST whose body is JSON, 400 otherwise, and 200 to GET / (a readiness probe).
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver(BaseHTTPRequestHandler):
    out = None

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        try:
            doc = json.loads(body)
            if not isinstance(doc, dict):
                raise ValueError("not an object")
        except ValueError:
            self.send_response(400)
            self.end_headers()
            return
        doc["received_at"] = time.time()
        with open(self.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(doc, separators=(",", ":")) + "\n")
        self.send_response(200)
        self.end_headers()

    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok\n")

    def log_message(self, *_):
        pass


def main():
    port, Receiver.out = int(sys.argv[1]), sys.argv[2]
    open(Receiver.out, "a").close()
    ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()


if __name__ == "__main__":
    main()
