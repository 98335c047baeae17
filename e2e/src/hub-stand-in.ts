import http from "node:http";
import type { AddressInfo } from "node:net";

// A stand-in for the Hugging Face Hub's model-info endpoint (the Hub is unreachable from
// these machines): `GET /api/models/{owner}/{repo}?blobs=true` answers the repo's files with
// their sizes, as huggingface_hub's model_info(files_metadata=True) reads them, and
// `HEAD /{owner}/{repo}/resolve/{rev}/{file}` says whether the token may read a gated model.

export interface HubModel {
  sha: string;
  files: Record<string, number>;
  /** A gated model: its files answer only this bearer token (the Hub's GatedRepo otherwise). */
  gatedToken?: string;
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
    res.setHeader("content-type", "application/json");
    const resolved = /^\/([^/]+\/[^/]+)\/resolve\/[^/]+\/(.+)$/.exec(url.pathname);
    if (resolved) {
      const model = models[resolved[1]!];
      const allowed =
        model && (!model.gatedToken || req.headers.authorization === `Bearer ${model.gatedToken}`);
      res.statusCode = !model ? 404 : allowed ? 200 : 403;
      if (model && !allowed) res.setHeader("x-error-code", "GatedRepo");
      return res.end();
    }
    const repo = /^\/api\/models\/([^/]+\/[^/]+)$/.exec(url.pathname)?.[1];
    const model = repo ? models[repo] : undefined;
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
        gated: model.gatedToken ? "manual" : false,
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
