"""An OTLP/HTTP trace receiver for tests: decodes each POST /v1/traces body with the
OpenTelemetry project's own protobuf classes (the opentelemetry-proto package) and prints it
as one JSON line (protobuf's JSON mapping) on stdout. The first line is "listening <port>".
Run by packages/core/src/testing/otlp-receiver.ts with THAW_OTLP_PYTHON."""

import gzip
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class Handler(BaseHTTPRequestHandler):
    def read_body(self):
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()  # the blank line after the last chunk
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()  # CRLF after each chunk
        return self.rfile.read(int(self.headers.get("content-length", "0")))

    def do_POST(self):
        body = self.read_body()
        if self.headers.get("content-encoding", "identity") == "gzip":
            body = gzip.decompress(body)
        if self.path != "/v1/traces":
            self.send_error(404)
            return
        if self.headers.get("content-type") != "application/x-protobuf":
            self.send_error(415, "want application/x-protobuf")
            return
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except Exception as error:  # a body the official definitions cannot decode
            self.send_error(400, str(error))
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        line = {"headers": headers, "request": MessageToDict(request)}
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), Handler)
sys.stdout.write(f"listening {server.server_address[1]}\n")
sys.stdout.flush()
server.serve_forever()
