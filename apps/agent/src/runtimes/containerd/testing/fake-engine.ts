import http from "node:http";

/** An HTTP server standing in for the engine inside a replica (fake tools start nothing). */
export interface FakeEngine {
  port: number;
  /** "METHOD /path body" per request, in order. */
  requests: string[];
  /** Answer `status` for requests to `path` (default 200 everywhere). */
  answer(path: string, status: number, body?: string): void;
  close(): Promise<void>;
}

export async function startFakeEngine(): Promise<FakeEngine> {
  const requests: string[] = [];
  const answers = new Map<string, { status: number; body: string }>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      requests.push(`${req.method ?? "?"} ${req.url ?? "?"}${body ? ` ${body}` : ""}`);
      const answer = answers.get(req.url ?? "") ?? { status: 200, body: "ok" };
      res.writeHead(answer.status).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("fake engine has no port");
  return {
    port: address.port,
    requests,
    answer: (path, status, body = "") => answers.set(path, { status, body }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
