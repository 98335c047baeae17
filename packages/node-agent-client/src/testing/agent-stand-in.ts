import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { testTlsCertificate } from "./tls-certificate.ts";

/** What a stand-in noted of one start the scheduler dispatched to it. */
export interface StandInStart {
  replicaId: string;
  coldStartId: string;
  path: string;
  deploymentId: string;
}

export interface AgentStandIn {
  /** https://127.0.0.1:<port>; nodes' agentUrl is this plus a path of their own. */
  url: string;
  /** The pin of its certificate, for the nodes' agentCertSha256. */
  certSha256: string;
  close(): void;
}

/**
 * An agent stand-in for the benchmarks of the control plane: an HTTPS server on a self-signed,
 * pinned certificate that acknowledges every call as the sim agent acknowledges a start (202)
 * and reports each arrival with its time (performance.now()) to `onStart`. It does not check
 * signatures: the agent's own cost is measured by apps/agent's sim-fleet bench.
 */
export async function startAgentStandIn(
  onStart: (start: StandInStart, at: number) => void,
): Promise<AgentStandIn> {
  const tls = await testTlsCertificate();
  const server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString() || "{}") as {
        replicaId?: string;
        coldStartId?: string;
        path?: string;
        deployment?: { deploymentId?: string };
      };
      onStart(
        {
          replicaId: body.replicaId ?? "",
          coldStartId: body.coldStartId ?? "",
          path: body.path ?? "",
          deploymentId: body.deployment?.deploymentId ?? "",
        },
        at,
      );
      response.writeHead(202, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          replicaId: body.replicaId,
          coldStartId: body.coldStartId,
          path: body.path,
          acceptedAt: new Date().toISOString(),
        }),
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    certSha256: tls.certSha256,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
