import { z } from "zod";

// The Hugging Face Hub's answers, as huggingface_hub reads them (HfApi.model_info with
// files_metadata=True is GET /api/models/{repo}[/revision/{rev}]?blobs=true). Only what
// sizing needs is kept; the Hub adds fields freely, so unknown ones are ignored.

const HubSibling = z.object({
  rfilename: z.string().min(1),
  /** Sent with ?blobs=true: the file's bytes (an LFS file's real size, not its pointer's). */
  size: z.number().int().min(0).optional(),
  lfs: z.object({ size: z.number().int().min(0).optional() }).optional(),
});

export const HubModelInfo = z.object({
  id: z.string().optional(),
  /** The commit the answer describes: what a download of this revision gets. */
  sha: z.string().optional(),
  /** false, or how access is granted ("auto", "manual"): the files need a token that may. */
  gated: z.union([z.boolean(), z.string()]).optional(),
  private: z.boolean().optional(),
  siblings: z.array(HubSibling).default([]),
});
export type HubModelInfo = z.infer<typeof HubModelInfo>;

/** The repo's files and their bytes (undefined when the Hub did not say). */
export function filesOfModelInfo(info: HubModelInfo): Map<string, number | undefined> {
  return new Map(info.siblings.map((s) => [s.rfilename, s.size ?? s.lfs?.size]));
}

export function isGated(info: HubModelInfo): boolean {
  return info.gated !== undefined && info.gated !== false;
}

/**
 * The Hub's machine-readable reason for a refusal (X-Error-Code): "RepoNotFound" (sent as a
 * 401 without a token, so a private repo's existence does not leak), "GatedRepo",
 * "RevisionNotFound", "EntryNotFound".
 */
export type HubErrorCode = "RepoNotFound" | "GatedRepo" | "RevisionNotFound" | "EntryNotFound";

export function hubErrorCode(headers: Headers): HubErrorCode | null {
  const code = headers.get("x-error-code");
  return code === "RepoNotFound" ||
    code === "GatedRepo" ||
    code === "RevisionNotFound" ||
    code === "EntryNotFound"
    ? code
    : null;
}

/** `a/b c.json` → `a/b%20c.json`: each segment encoded, the slashes kept. */
export function encodeRepoPath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

export function modelInfoUrl(endpoint: string, repo: string, revision: string | undefined): string {
  const base = `${endpoint.replace(/\/+$/, "")}/api/models/${repo}`;
  return `${revision ? `${base}/revision/${encodeURIComponent(revision)}` : base}?blobs=true`;
}

export function resolveUrl(endpoint: string, repo: string, revision: string, path: string): string {
  return `${endpoint.replace(/\/+$/, "")}/${repo}/resolve/${encodeURIComponent(revision)}/${encodeRepoPath(path)}`;
}
