import http from "node:http";
import type { AddressInfo } from "node:net";

// A stand-in for the Hugging Face Hub's model-info endpoint (the Hub is unreachable from
// these machines): `GET /api/models/{owner}/{repo}?blobs=true` answers the repo's files with
// their sizes, as huggingface_hub's model_info(files_metadata=True) reads them.

export interface HubModel {
  sha: string;
  files: Record<string, number>;
}

export interface HubStandIn {
  endpoint: string;
  requests: string[];
  stop(): Promise<void>;
}

export async function startHubStandIn(models: Record<string, HubModel>): Promise<HubStandIn> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? "");
    const url = new URL(req.url ?? "/", "http://hub");
    const repo = /^\/api\/models\/([^/]+\/[^/]+)$/.exec(url.pathname)?.[1];
    const model = repo ? models[repo] : undefined;
    res.setHeader("content-type", "application/json");
    if (!repo || !model) {
      res.statusCode = 404;
      res.setHeader("x-error-code", "RepoNotFound");
      return res.end(JSON.stringify({ error: "Repository not found" }));
    }
    const withSizes = url.searchParams.get("blobs") === "true";
    res.end(
      JSON.stringify({
        id: repo,
        sha: model.sha,
        private: false,
        gated: false,
        siblings: Object.entries(model.files).map(([rfilename, size]) => ({
          rfilename,
          ...(withSizes && { size }),
        })),
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    stop: () => new Promise((r) => server.close(() => r()).closeAllConnections()),
  };
}
