import { z } from "zod";

/**
 * The one grammar of an image reference, for the API, the scheduler and the agent alike
 * (distribution/reference, narrowed): `[registry[:port]/]path[:tag][@sha256:<64 hex>]`.
 * Registry components start and end with a letter or digit (no `-k/…` or `.x.com/…` that
 * a command line could read as an option or a relative host); registries are named, not
 * IPv6 literals; path components are lowercase. Anything the agent would refuse is refused
 * by the API first, so a deployment cannot be accepted and then never start.
 */
export const IMAGE_REFERENCE =
  /^(?:((?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]{1,5})?)\/)?([a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)(?::([\w][\w.-]{0,127}))?(?:@(sha256:[a-f0-9]{64}))?$/;

/**
 * An image (or checkpoint image) reference in a request to an agent: the API's own grammar,
 * so nothing the control plane accepted is refused by an agent, and nothing that could be
 * read as an option or another host reaches a command line.
 */
export const ImageReference = z
  .string()
  .min(1)
  .max(512)
  .regex(
    IMAGE_REFERENCE,
    "expected an image reference such as registry.example.com/team/model:tag",
  );

/** A content digest as registries and containerd write it. */
export const Sha256Digest = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/, "expected sha256:<64 hex digits>");
