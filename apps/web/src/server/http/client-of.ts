/**
 * The header that carries the client's address to routes. The request edge
 * (request-edge.ts) sets it on every request, replacing whatever a client sent under that
 * name, so code behind it may trust it.
 */
export const CLIENT_ADDRESS_HEADER = "x-thaw-client-address";

/** The client's address as the request edge stamped it. */
export function clientAddressOf(from: Request | Pick<Headers, "get">): string {
  const headers = from instanceof Request ? from.headers : from;
  return headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown";
}
