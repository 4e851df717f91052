"""A small keep-alive HTTP client: the sandbox's control API, the servers' readiness and /metrics."""

import http.client
import json

from .common import BenchError


class Http:
    def __init__(self, host, port, timeout=30):
        self.host, self.port, self.timeout = host, port, timeout
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        hdrs = dict(headers or {})
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.conn.request(method, path, body=data, headers=hdrs)
                response = self.conn.getresponse()
                payload = response.read()
                return response.status, payload
            except (ConnectionError, http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
        raise BenchError("unreachable")

    def json(self, method, path, body=None, expect=(200, 201)):
        status, payload = self.request(method, path, body)
        if status not in expect:
            raise BenchError("%s %s -> %d %s" % (method, path, status, payload[:300]))
        return json.loads(payload) if payload else None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None
