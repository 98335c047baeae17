import { readFileSync } from "node:fs";
import { request } from "node:http";

// Instruments of the abuse suite: a process's resident memory, and a raw HTTP client that
// sends what fetch will not (any method, any header, a body streamed in pieces).

/** Resident set size of a process, in MiB (Linux /proc). */
export function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) / 1024;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request by node:http. `body` is sent in `chunks` pieces (without Content-Length unless
 * `headers` sets one); the answer may come before the body is sent whole, as a server that
 * refuses early answers, and the socket is then dropped (`headersFirst`: nothing of the body
 * is sent before the answer). Status 0: the server closed the
 * connection mid-upload before its answer could be read.
 */
export function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: { bytes: number; chunkBytes?: number; headersFirst?: boolean },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.once("end", () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
      });
    });
    req.once("error", (error: NodeJS.ErrnoException) => {
      // A server that refused and closed mid-body resets the rest of the upload, sometimes
      // before this client read the refusal: status 0, "closed by the server mid-upload".
      if (error.code === "EPIPE" || error.code === "ECONNRESET")
        return resolve({ status: 0, headers: {}, body: "" });
      reject(error);
    });
    if (!body) return req.end();
    // Announce a chunked body and send nothing of it until answered: a server that refuses on
    // the headers alone closes a connection with nothing unread, so its answer always arrives.
    if (body.headersFirst) return req.flushHeaders();
    const chunk = Buffer.alloc(body.chunkBytes ?? 1024 * 1024, 0x61);
    let sent = 0;
    const pump = () => {
      while (sent < body.bytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, body.bytes - sent));
        sent += piece.length;
        if (!req.write(piece)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}
