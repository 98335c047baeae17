import { modelSourceProblem } from "../deployments/source-policy.ts";
import { modelSourceError } from "./model-source-error.ts";

// A model source split into what its sizer needs, after the source policy has allowed it
// (the policy is the one grammar; this only takes apart what it accepted).

export type ParsedModelSource =
  /** `hf://owner/repo[/path]`: path is a file or a folder in the repo. */
  | { scheme: "hf"; repo: string; path: string | null }
  /** `s3://bucket/key`: key "" or ending in "/" is a prefix. */
  | { scheme: "s3"; bucket: string; key: string }
  | { scheme: "gs"; bucket: string; key: string }
  | { scheme: "https"; url: URL };

export function parseModelSource(source: string): ParsedModelSource {
  const problem = modelSourceProblem(source);
  if (problem) throw modelSourceError("invalid", problem);
  const at = source.indexOf("://");
  const scheme = source.slice(0, at).toLowerCase();
  const rest = source.slice(at + 3);
  const [first = "", ...others] = rest.split("/");
  switch (scheme) {
    case "hf": {
      const [repoName = "", ...path] = others;
      const file = path.join("/").replace(/\/+$/, "");
      return { scheme, repo: `${first}/${repoName}`, path: file === "" ? null : file };
    }
    case "s3":
    case "gs":
      return { scheme, bucket: first, key: others.join("/") };
    default:
      return { scheme: "https", url: new URL(source) };
  }
}
