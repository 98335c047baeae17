import { IMAGE_REFERENCE } from "@thaw/protocol";

// An image reference read the way docker and containerd read it, to know which registry
// to ask and for what: the first component is a registry only when it looks like a host
// (has a '.' or ':' or is `localhost`); otherwise the image is on Docker Hub, whose API host
// is registry-1.docker.io and whose one-component names live under `library/`.

export interface ImageReference {
  /** The registry as written in references (`docker.io` for Docker Hub). */
  registry: string;
  /** Where its distribution API answers. */
  apiHost: string;
  repository: string;
  tag: string | null;
  digest: string | null;
}

const DOCKER_HUB = "docker.io";
const DOCKER_HUB_API = "registry-1.docker.io";

export function parseImageReference(ref: string): ImageReference | null {
  const match = IMAGE_REFERENCE.exec(ref);
  if (!match) return null;
  const [, first, rest = "", tag, digest] = match;
  const firstIsHost =
    first !== undefined && (first.includes(".") || first.includes(":") || first === "localhost");
  const registry = firstIsHost ? first.toLowerCase() : DOCKER_HUB;
  const path = firstIsHost || first === undefined ? rest : `${first}/${rest}`;
  const onHub = registry === DOCKER_HUB || registry === "index.docker.io";
  return {
    registry: onHub ? DOCKER_HUB : registry,
    apiHost: onHub ? DOCKER_HUB_API : registry,
    repository: onHub && !path.includes("/") ? `library/${path}` : path,
    tag: tag ?? (digest ? null : "latest"),
    digest: digest ?? null,
  };
}

/** The reference text for another tag of the same repository, as a user would write it. */
export function withTag(ref: ImageReference, tag: string): string {
  const repository =
    ref.registry === DOCKER_HUB ? ref.repository.replace(/^library\//, "") : ref.repository;
  return ref.registry === DOCKER_HUB
    ? `${repository}:${tag}`
    : `${ref.registry}/${repository}:${tag}`;
}
