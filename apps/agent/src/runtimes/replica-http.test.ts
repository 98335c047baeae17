import http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { engineCall, probeUntilReady } from "./replica-http.ts";

let server: http.Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(handler: http.RequestListener): Promise<number> {
  server = http.createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

describe("readiness probe", () => {
  it("retries non-200 answers until 200, recording the first answer", async () => {
    let calls = 0;
    const port = await serve((_req, res) => res.writeHead(++calls < 3 ? 503 : 200).end());
    const result = await probeUntilReady({ port, path: "/health", timeoutSeconds: 5 });
    expect(result).toMatchObject({ status: 200, attempts: 3 });
    expect(result.firstAnswerSeconds).toBeLessThanOrEqual(result.seconds);
  });

  it("gives up at the deadline with the last problem", async () => {
    const port = await serve((_req, res) => res.writeHead(404).end());
    await expect(probeUntilReady({ port, path: "/health", timeoutSeconds: 1 })).rejects.toThrow(
      /GET http:\/\/127\.0\.0\.1:\d+\/health did not answer 200 within 1 s \(\d+ attempts; last: answered 404\)/,
    );
  });

  it("stops early when the waiting check throws", async () => {
    const port = await serve((_req, res) => res.writeHead(503).end());
    const t0 = performance.now();
    await expect(
      probeUntilReady({
        port,
        path: "/health",
        timeoutSeconds: 30,
        onWaiting: () => Promise.reject(new Error("task exited")),
      }),
    ).rejects.toThrow("task exited");
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});

describe("engine calls", () => {
  it("POSTs the body and requires 2xx", async () => {
    const seen: string[] = [];
    const port = await serve((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        seen.push(`${req.method} ${req.url} ${req.headers["content-type"]} ${body}`);
        res.writeHead(req.url === "/wake_up" ? 200 : 400).end("bad level");
      });
    });
    await engineCall(port, { path: "/wake_up", body: "{}" }, { what: "wake", timeoutMs: 2_000 });
    await expect(
      engineCall(port, { path: "/sleep?level=3" }, { what: "sleep", timeoutMs: 2_000 }),
    ).rejects.toThrow(
      /sleep: POST http:\/\/127\.0\.0\.1:\d+\/sleep\?level=3 answered 400: bad level/,
    );
    expect(seen[0]).toBe("POST /wake_up application/json {}");
  });
});
