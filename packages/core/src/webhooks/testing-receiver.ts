import http from "node:http";
import type { AddressInfo } from "node:net";

// A real HTTP receiver on 127.0.0.1 for webhook tests: records each request (headers as sent,
// body as bytes) and answers with the next status scripted, then 200s.

export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
}

export interface TestReceiver {
  url: string;
  /** `127.0.0.1:<port>`: what the operator's THAW_WEBHOOK_TRUSTED_HOSTS would name. */
  host: string;
  received: ReceivedWebhook[];
  /** Statuses to answer next, in order (then 200); a body for each is optional. */
  script: { status: number; body?: string; delayMs?: number }[];
  close: () => Promise<void>;
}

export async function startTestReceiver(): Promise<TestReceiver> {
  const received: ReceivedWebhook[] = [];
  const script: TestReceiver["script"] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(request.headers))
        if (typeof v === "string") headers[k] = v;
      received.push({ headers, body: Buffer.concat(chunks).toString("utf8") });
      const next = script.shift() ?? { status: 200, body: "ok" };
      setTimeout(() => {
        response.writeHead(next.status, { "content-type": "text/plain" });
        response.end(next.body ?? "");
      }, next.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/thaw`,
    host: `127.0.0.1:${port}`,
    received,
    script,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
