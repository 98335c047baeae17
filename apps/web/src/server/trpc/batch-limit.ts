/**
 * Most procedures one tRPC batch request may carry; the server refuses larger batches with
 * 400 and the client's batch link splits at the same size. A dashboard page batches a handful.
 * (Its own module: the browser bundle imports it.)
 */
export const MAX_TRPC_BATCH_SIZE = 50;
